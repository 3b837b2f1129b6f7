//! ferry-trust's strict parser against itself and against serde_json: building and checking
//! agree; whatever it accepts, serde_json accepts as the same value (the same canonical form);
//! the canonical (RFC 8785) form of what it accepts is a fixed point; locating a member never
//! panics.

#![no_main]

use ferry_trust::{jcs, strict};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let limits = strict::Limits::default();
    let built = strict::parse_with(input, &limits);
    let checked = strict::check_with(input, &limits);
    assert_eq!(
        built.as_ref().err(),
        checked.as_ref().err(),
        "parse and check disagree"
    );
    for offset in [0, input.len() / 2, input.len()] {
        let _ = strict::pointer_at(input, offset);
    }
    let Ok(value) = built else {
        return;
    };
    let lenient: serde_json::Value =
        serde_json::from_slice(input).expect("serde_json accepts what the strict parser does");
    let canonical = jcs::canonicalize(&value);
    // Compared in canonical form: serde_json reads `-0` as the double -0.0, the strict parser
    // as the integer 0, and JCS writes both as `0`.
    assert_eq!(
        jcs::canonicalize(&lenient),
        canonical,
        "the two parsers read different values"
    );
    // The canonical form reads back with the same canonical form. Numbers may change type:
    // 3.5e10 is written 35000000000, and 900719925474903e1 as 9007199254749030, an integer
    // literal beyond 2^53 that the default limits would refuse.
    let lax = strict::Limits {
        allow_unsafe_integers: true,
        ..limits
    };
    let again = strict::parse_with(&canonical, &lax).expect("the canonical form is JSON");
    assert_eq!(
        jcs::canonicalize(&again),
        canonical,
        "canonical form is a fixed point"
    );
});
