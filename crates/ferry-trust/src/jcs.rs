//! RFC 8785 JSON Canonicalization Scheme (JCS) and `sha256:` digests of the canonical form.
//!
//! Two parties that hold the same JSON data must produce the same bytes, or a signature or a
//! pinned digest breaks. JCS fixes every choice a serializer could make:
//!
//! - **Member order**: object members sorted by their names as **UTF-16 code units**, the
//!   order of ECMAScript's `Array.prototype.sort`. This is *not* the UTF-8/code-point order
//!   of a `BTreeMap<String, _>`: `"\u{ff01}"` sorts after `"😀"` (`0xD83D`) in UTF-16.
//! - **Numbers**: ECMAScript `Number.prototype.toString` of the IEEE 754 double, via the
//!   `ryu-js` crate (shortest round-trip digits, exponent form from 1e21 and below 1e-6,
//!   `-0` printed as `0`). Integers are converted to the nearest double first, exactly as a
//!   JavaScript `JSON.parse` would.
//! - **Strings**: only `"`, `\` and U+0000–U+001F are escaped (`\b \f \n \r \t`, the rest as
//!   `\u00xx` in lower-case hex); everything else, U+007F and U+2028 included, is raw UTF-8.
//!   No Unicode normalization.
//! - No whitespace.
//!
//! The input is a `serde_json::Value`, which cannot hold NaN or infinities, so
//! canonicalization cannot fail. Parse untrusted bytes with [`crate::strict`] first, so
//! duplicate member names never reach this point.

use aws_lc_rs::digest;
use serde_json::{Number, Value};

/// Returns the RFC 8785 canonical UTF-8 bytes of `value`.
///
/// ```
/// let v = ferry_trust::strict::parse(br#"{"b":[1.0, 1e21, -0], "a":"\u00e9"}"#)?;
/// assert_eq!(ferry_trust::jcs::canonicalize(&v), r#"{"a":"é","b":[1,1e+21,0]}"#.as_bytes());
/// # Ok::<(), ferry_trust::strict::JsonError>(())
/// ```
pub fn canonicalize(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write_value(&mut out, value);
    out
}

/// Returns `sha256:<64 lower-case hex digits>` of the canonical form of `value`: the digest
/// a security team pins for an agent card.
///
/// ```
/// let v = serde_json::json!({});
/// assert_eq!(
///     ferry_trust::jcs::digest(&v),
///     "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
/// );
/// ```
pub fn digest(value: &Value) -> String {
    digest_bytes(&canonicalize(value))
}

/// Returns `sha256:<lower-case hex>` of bytes that are already canonical.
pub fn digest_bytes(canonical: &[u8]) -> String {
    let d = digest::digest(&digest::SHA256, canonical);
    let mut s = String::with_capacity(7 + 64);
    s.push_str("sha256:");
    push_hex(&mut s, d.as_ref());
    s
}

/// Appends `bytes` as lower-case hex.
pub(crate) fn push_hex(s: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 0xf)]));
    }
}

/// Formats one double the ECMAScript way; `f` must be finite.
///
/// Exposed so the ES6 number test suite can check the number path on its own.
pub fn format_number(f: f64, buf: &mut ryu_js::Buffer) -> &str {
    buf.format_finite(f)
}

fn write_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            // RFC 8785 §3.2.3: compare names as arrays of UTF-16 code units.
            members.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
            out.push(b'{');
            for (i, (k, v)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(out, k);
                out.push(b':');
                write_value(out, v);
            }
            out.push(b'}');
        }
    }
}

fn write_number(out: &mut Vec<u8>, n: &Number) {
    // u64/i64 → f64 with `as` rounds to nearest, ties to even: the double a JavaScript
    // parser would produce for the same decimal text.
    let f = if let Some(u) = n.as_u64() {
        u as f64
    } else if let Some(i) = n.as_i64() {
        i as f64
    } else {
        n.as_f64().unwrap_or(0.0)
    };
    // serde_json::Number is always finite, so `format_finite` is sound here.
    let mut buf = ryu_js::Buffer::new();
    out.extend_from_slice(format_number(f, &mut buf).as_bytes());
}

fn write_string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x0c => b"\\f",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x00..=0x1f => &[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xf)],
            ],
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(escape);
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sorts_by_utf16_not_code_points() {
        let v = json!({"\u{ff01}": 1, "😀": 2, "\u{e000}": 3, "𐀀": 4, "€": 5});
        assert_eq!(
            String::from_utf8(canonicalize(&v)).expect("utf-8"),
            "{\"€\":5,\"𐀀\":4,\"😀\":2,\"\u{e000}\":3,\"\u{ff01}\":1}"
        );
    }

    #[test]
    fn escapes_only_what_rfc_8785_says() {
        let v = json!("\"\\/\u{0}\u{8}\u{c}\n\r\t\u{b}\u{1f}\u{7f}\u{2028}é");
        assert_eq!(
            String::from_utf8(canonicalize(&v)).expect("utf-8"),
            "\"\\\"\\\\/\\u0000\\b\\f\\n\\r\\t\\u000b\\u001f\u{7f}\u{2028}é\""
        );
    }

    #[test]
    fn numbers_follow_ecmascript() {
        let v = json!([
            0,
            -0.0,
            1.0,
            1e21,
            1e20,
            1e-7,
            0.000001,
            5e-324,
            u64::MAX,
            i64::MIN
        ]);
        assert_eq!(
            String::from_utf8(canonicalize(&v)).expect("utf-8"),
            "[0,0,1,1e+21,100000000000000000000,1e-7,0.000001,5e-324,18446744073709552000,-9223372036854776000]"
        );
    }

    #[test]
    fn digest_is_sha256_of_the_canonical_bytes() {
        // sha256("{\"a\":1}") computed independently with coreutils' sha256sum.
        assert_eq!(
            digest(&json!({ "a": 1.0 })),
            "sha256:015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"
        );
    }
}
