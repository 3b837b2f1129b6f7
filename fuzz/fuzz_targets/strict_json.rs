//! ferry-trust's strict parser against itself and against serde_json: building and checking
//! agree; whatever it accepts, serde_json accepts as the same value; the canonical (RFC 8785)
//! form of what it accepts parses back to the same value; locating a member never panics.

#![no_main]

use ferry_trust::{jcs, strict};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let limits = strict::Limits::default();
    let built = strict::parse_with(input, &limits);
    let checked = strict::check_with(input, &limits);
    assert_eq!(built.as_ref().err(), checked.as_ref().err(), "parse and check disagree");
    for offset in [0, input.len() / 2, input.len()] {
        let _ = strict::pointer_at(input, offset);
    }
    let Ok(value) = built else {
        return;
    };
    let lenient: serde_json::Value =
        serde_json::from_slice(input).expect("serde_json accepts what the strict parser does");
    assert_eq!(lenient, value, "the two parsers read different values");
    let canonical = jcs::canonicalize(&value);
    let again = strict::parse(&canonical).expect("the canonical form is strict JSON");
    assert_eq!(again, value, "canonicalization changed the value");
    assert_eq!(jcs::canonicalize(&again), canonical, "canonical form is a fixed point");
});
