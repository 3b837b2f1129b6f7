//! Tests of the strict parser.

use super::*;
use serde_json::json;

fn err(input: &str) -> JsonError {
    match parse(input.as_bytes()) {
        Ok(v) => panic!("accepted {input:?} as {v}"),
        Err(e) => e,
    }
}

#[test]
fn accepts_ordinary_json() {
    let v = parse(br#" {"a":[1,-2,3.5,true,false,null,"x\n\u00e9\ud83d\ude00"],"b":{}} "#)
        .expect("valid");
    assert_eq!(v, json!({"a":[1,-2,3.5,true,false,null,"x\né😀"],"b":{}}));
}

#[test]
fn duplicate_members_are_found_after_unescaping_and_at_depth() {
    assert_eq!(
        err(r#"{"a":1,"\u0061":2}"#),
        JsonError::DuplicateMember {
            name: "a".into(),
            at: Pointer::default(),
            offset: 7
        }
    );
    let e = err(r#"{"skills":[{"id":"x"},{"id":"y","id":"z"}]}"#);
    assert_eq!(
        e.to_string(),
        r#"duplicate member "id" at /skills/1, byte 32"#
    );
    let e = err(r#"{"a/b":{"c~":{"k":1,"k":1}}}"#);
    assert_eq!(
        e.to_string(),
        r#"duplicate member "k" at /a~1b/c~0, byte 20"#
    );
}

#[test]
fn limits_are_enforced() {
    let limits = Limits {
        max_bytes: 4,
        ..Limits::default()
    };
    assert_eq!(
        parse_with(b"[1,2]", &limits),
        Err(JsonError::TooLarge { size: 5, limit: 4 })
    );
    let deep = format!("{}{}", "[".repeat(64), "]".repeat(64));
    assert!(parse(deep.as_bytes()).is_ok());
    let deeper = format!("{}{}", "[".repeat(65), "]".repeat(65));
    assert!(matches!(
        parse(deeper.as_bytes()),
        Err(JsonError::TooDeep { limit: 64, .. })
    ));
    // Far beyond the limit must fail cleanly, not overflow the stack.
    let huge = "[".repeat(200_000);
    let limits = Limits {
        max_bytes: usize::MAX,
        ..Limits::default()
    };
    assert!(matches!(
        parse_with(huge.as_bytes(), &limits),
        Err(JsonError::TooDeep { .. })
    ));
}

#[test]
fn integers_beyond_2_pow_53_are_refused_unless_allowed() {
    assert!(parse(b"9007199254740992").is_ok());
    assert!(parse(b"-9007199254740992").is_ok());
    assert_eq!(
        err("[9007199254740993]").to_string(),
        "integer 9007199254740993 at /0, byte 1 is beyond ±2^53"
    );
    assert!(matches!(
        err("-18446744073709551616"),
        JsonError::UnsafeInteger { .. }
    ));
    let lax = Limits {
        allow_unsafe_integers: true,
        ..Limits::default()
    };
    let v = parse_with(b"[18446744073709551615,-9223372036854775808,1e400]", &lax);
    assert!(matches!(v, Err(JsonError::NumberOutOfRange { .. })));
    let v = parse_with(
        b"[18446744073709551615,-9223372036854775808,99999999999999999999]",
        &lax,
    )
    .expect("lax");
    assert_eq!(v[0].as_u64(), Some(u64::MAX));
    assert_eq!(v[1].as_i64(), Some(i64::MIN));
    assert_eq!(v[2].as_f64(), Some(1e20));
}

#[test]
fn refuses_malformed_text() {
    for (input, want) in [
        (
            "\u{feff}{}",
            "unexpected '\\u{feff}' at the top level, byte 0: expected a JSON value",
        ),
        ("{} x", "trailing data after the JSON value at byte 3"),
        (
            "[1,]",
            "unexpected ']' at /1, byte 3: expected a JSON value",
        ),
        (
            "{\"a\" 1}",
            "unexpected '1' at the top level, byte 5: expected ':'",
        ),
        (
            "[01]",
            "unexpected '1' at the top level, byte 2: expected ',' or ']'",
        ),
        (
            "\"a\tb\"",
            "raw control character U+0009 in a string at the top level, byte 2",
        ),
        ("[\"\\ud800\"]", "lone surrogate escape at /0, byte 2"),
        (
            "\"\\udc00x\"",
            "lone surrogate escape at the top level, byte 1",
        ),
        (
            "\"\\ude00\\ud83d\"",
            "lone surrogate escape at the top level, byte 1",
        ),
        (
            "\"\\x\"",
            "invalid escape in a string at the top level, byte 1",
        ),
        (
            "\"\\u12g4\"",
            "invalid escape in a string at the top level, byte 1",
        ),
        (
            "{\"a\":1e400}",
            "number 1e400 at /a, byte 5 overflows a double",
        ),
        (
            "NaN",
            "unexpected 'N' at the top level, byte 0: expected a JSON value",
        ),
        ("[1.]", "unexpected ']' at /0, byte 3: expected a digit"),
        (
            "[tru]",
            "unexpected 't' at /0, byte 1: expected a JSON value",
        ),
        (
            "{\"a\":",
            "unexpected end of input at /a, byte 5: expected a JSON value",
        ),
        (
            "",
            "unexpected end of input at the top level, byte 0: expected a JSON value",
        ),
    ] {
        assert_eq!(err(input).to_string(), want, "input {input:?}");
    }
    assert_eq!(
        parse(b"[\"\xff\"]"),
        Err(JsonError::InvalidUtf8 { offset: 2 })
    );
}
