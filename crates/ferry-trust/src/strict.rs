//! Strict JSON: the only way bytes from the network become a [`serde_json::Value`] in
//! ferry-trust.
//!
//! `serde_json::from_slice::<Value>` silently keeps the *last* of two members with the same
//! name, so `{"alg":"ES256","alg":"none"}` means one thing to a policy check that reads the
//! raw text and another to the code that verifies. This parser refuses such input, and more:
//!
//! - duplicate member names at any depth, compared **after unescaping** (`{"a":1,"\u0061":2}`);
//! - input larger than [`Limits::max_bytes`] (checked before any parsing) and nesting deeper
//!   than [`Limits::max_depth`] (which also bounds the parser's recursion);
//! - integer literals beyond ±2^53 (I-JSON, RFC 7493 §2.2), unless
//!   [`Limits::allow_unsafe_integers`] is set: JCS maps `9007199254740993` and
//!   `9007199254740992` to the same bytes, so two different texts could share one signature;
//! - numbers that overflow a double (`1e400`), `NaN`, `Infinity`;
//! - invalid UTF-8, a byte order mark, raw control characters in strings, lone surrogate
//!   escapes (`"\ud800"`), unknown escapes;
//! - anything but exactly one JSON value surrounded by optional whitespace.
//!
//! Numbers are parsed with Rust's correctly rounded `str::parse::<f64>`, so the value that JCS
//! later prints is the value the text denotes (the same guarantee as serde_json's
//! `float_roundtrip`). Every error says what was wrong and where: a JSON pointer
//! (RFC 6901) to the offending member and the byte offset in the input.

use serde_json::{Map, Number, Value};
use std::fmt;

/// The largest integer magnitude a double represents exactly (2^53).
const MAX_SAFE_INTEGER: u64 = 1 << 53;

/// Resource limits and policy switches for [`parse_with`].
///
/// `Limits::default()` is the agent-card policy: 256 KiB, depth 64, integers beyond ±2^53
/// rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest accepted input in bytes (default 256 KiB, the card limit of the design).
    pub max_bytes: usize,
    /// The deepest accepted nesting of arrays and objects (default 64). The top-level
    /// container is depth 1.
    pub max_depth: usize,
    /// Accept integer literals beyond ±2^53 (default `false`). Only the JCS test suites need
    /// this; such values are rounded to the nearest double.
    pub allow_unsafe_integers: bool,
}

impl Limits {
    /// The default card limit: 256 KiB.
    pub const CARD_MAX_BYTES: usize = 256 * 1024;
    /// The default nesting limit.
    pub const DEFAULT_MAX_DEPTH: usize = 64;
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: Self::CARD_MAX_BYTES,
            max_depth: Self::DEFAULT_MAX_DEPTH,
            allow_unsafe_integers: false,
        }
    }
}

/// A JSON pointer (RFC 6901) to where an error happened, e.g. `/skills/0/tags`.
///
/// The empty pointer denotes the whole document; it displays as `the top level`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pointer(String);

impl Pointer {
    /// The pointer text (`""` for the whole document).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Pointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            f.write_str("the top level")
        } else {
            f.write_str(&self.0)
        }
    }
}

/// Why strict parsing refused the input. `at` is the JSON pointer of the value being parsed
/// (for a duplicate member: of the object holding it) and `offset` the byte offset of the
/// problem in the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JsonError {
    /// The input is larger than [`Limits::max_bytes`].
    #[error("input is {size} bytes, limit is {limit} bytes")]
    TooLarge {
        /// Input size in bytes.
        size: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// The input is not UTF-8.
    #[error("invalid UTF-8 at byte {offset}")]
    InvalidUtf8 {
        /// Offset of the first invalid byte.
        offset: usize,
    },
    /// A byte that cannot start or continue the expected token (a BOM included).
    #[error("unexpected {found} at {at}, byte {offset}: expected {expected}")]
    Unexpected {
        /// What was found (a quoted character).
        found: String,
        /// What the grammar allows here.
        expected: &'static str,
        /// Where.
        at: Pointer,
        /// Byte offset.
        offset: usize,
    },
    /// The input ended inside a value.
    #[error("unexpected end of input at {at}, byte {offset}: expected {expected}")]
    UnexpectedEnd {
        /// What the grammar needed.
        expected: &'static str,
        /// Where.
        at: Pointer,
        /// Byte offset (the input length).
        offset: usize,
    },
    /// Something other than whitespace follows the one JSON value.
    #[error("trailing data after the JSON value at byte {offset}")]
    TrailingData {
        /// Offset of the first extra byte.
        offset: usize,
    },
    /// An object has two members with the same name (after unescaping).
    #[error("duplicate member {name:?} at {at}, byte {offset}")]
    DuplicateMember {
        /// The repeated name, unescaped.
        name: String,
        /// The object that holds it.
        at: Pointer,
        /// Byte offset of the second occurrence.
        offset: usize,
    },
    /// Nesting deeper than [`Limits::max_depth`].
    #[error("nesting deeper than {limit} at {at}, byte {offset}")]
    TooDeep {
        /// The depth limit.
        limit: usize,
        /// Where.
        at: Pointer,
        /// Byte offset of the container that is one level too deep.
        offset: usize,
    },
    /// An integer literal beyond ±2^53, which a double cannot hold exactly.
    #[error("integer {literal} at {at}, byte {offset} is beyond ±2^53")]
    UnsafeInteger {
        /// The literal as written.
        literal: String,
        /// Where.
        at: Pointer,
        /// Byte offset.
        offset: usize,
    },
    /// A number too large for a double (`1e400`).
    #[error("number {literal} at {at}, byte {offset} overflows a double")]
    NumberOutOfRange {
        /// The literal as written.
        literal: String,
        /// Where.
        at: Pointer,
        /// Byte offset.
        offset: usize,
    },
    /// A `\uD800`–`\uDFFF` escape that is not half of a well-formed surrogate pair.
    #[error("lone surrogate escape at {at}, byte {offset}")]
    LoneSurrogate {
        /// Where.
        at: Pointer,
        /// Byte offset of the escape.
        offset: usize,
    },
    /// A raw control character (U+0000–U+001F) inside a string.
    #[error("raw control character U+{code:04X} in a string at {at}, byte {offset}")]
    ControlCharacter {
        /// The character's code.
        code: u32,
        /// Where.
        at: Pointer,
        /// Byte offset.
        offset: usize,
    },
    /// A backslash escape JSON does not define, or a malformed `\u` escape.
    #[error("invalid escape in a string at {at}, byte {offset}")]
    InvalidEscape {
        /// Where.
        at: Pointer,
        /// Byte offset of the backslash.
        offset: usize,
    },
}

/// Parses `input` under the default card [`Limits`].
///
/// ```
/// let v = ferry_trust::strict::parse(br#"{"name":"Echo","skills":[]}"#)?;
/// assert_eq!(v["name"], "Echo");
///
/// let err = ferry_trust::strict::parse(br#"{"skills":[{"a":1,"\u0061":2}]}"#).unwrap_err();
/// assert_eq!(err.to_string(), r#"duplicate member "a" at /skills/0, byte 18"#);
/// # Ok::<(), ferry_trust::strict::JsonError>(())
/// ```
pub fn parse(input: &[u8]) -> Result<Value, JsonError> {
    parse_with(input, &Limits::default())
}

/// Parses `input` under explicit `limits`; see the module docs for everything it rejects.
pub fn parse_with(input: &[u8], limits: &Limits) -> Result<Value, JsonError> {
    if input.len() > limits.max_bytes {
        return Err(JsonError::TooLarge {
            size: input.len(),
            limit: limits.max_bytes,
        });
    }
    let text = std::str::from_utf8(input).map_err(|e| JsonError::InvalidUtf8 {
        offset: e.valid_up_to(),
    })?;
    let mut p = Parser {
        text,
        bytes: input,
        pos: 0,
        path: Vec::new(),
        limits: *limits,
    };
    p.skip_ws();
    let value = p.value(0)?;
    p.skip_ws();
    if p.pos < p.bytes.len() {
        return Err(JsonError::TrailingData { offset: p.pos });
    }
    Ok(value)
}

/// One step of the JSON pointer being built while parsing.
enum Segment {
    Key(String),
    Index(usize),
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    path: Vec<Segment>,
    limits: Limits,
}

impl Parser<'_> {
    fn pointer(&self) -> Pointer {
        let mut s = String::new();
        for seg in &self.path {
            s.push('/');
            match seg {
                Segment::Key(k) => {
                    for c in k.chars() {
                        match c {
                            '~' => s.push_str("~0"),
                            '/' => s.push_str("~1"),
                            c => s.push(c),
                        }
                    }
                }
                Segment::Index(i) => s.push_str(&i.to_string()),
            }
        }
        Pointer(s)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// The error for the current position: unexpected character or end of input.
    fn unexpected(&self, expected: &'static str) -> JsonError {
        match self.text.get(self.pos..).and_then(|s| s.chars().next()) {
            Some(c) => JsonError::Unexpected {
                found: format!("{c:?}"),
                expected,
                at: self.pointer(),
                offset: self.pos,
            },
            None => JsonError::UnexpectedEnd {
                expected,
                at: self.pointer(),
                offset: self.pos,
            },
        }
    }

    fn expect_byte(&mut self, b: u8, expected: &'static str) -> Result<(), JsonError> {
        if self.peek() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    fn literal(&mut self, word: &'static str, value: Value) -> Result<Value, JsonError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.unexpected("a JSON value"))
        }
    }

    /// Parses one value; `depth` is the number of containers around it.
    fn value(&mut self, depth: usize) -> Result<Value, JsonError> {
        match self.peek() {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.unexpected("a JSON value")),
        }
    }

    fn check_depth(&self, depth: usize) -> Result<(), JsonError> {
        if depth > self.limits.max_depth {
            Err(JsonError::TooDeep {
                limit: self.limits.max_depth,
                at: self.pointer(),
                offset: self.pos,
            })
        } else {
            Ok(())
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, JsonError> {
        self.check_depth(depth)?;
        self.pos += 1; // '{'
        let mut map = Map::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(map));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.unexpected("a member name"));
            }
            let key_offset = self.pos;
            let key = self.string()?;
            if map.contains_key(&key) {
                return Err(JsonError::DuplicateMember {
                    name: key,
                    at: self.pointer(),
                    offset: key_offset,
                });
            }
            self.skip_ws();
            self.expect_byte(b':', "':'")?;
            self.skip_ws();
            self.path.push(Segment::Key(key));
            let v = self.value(depth)?;
            if let Some(Segment::Key(key)) = self.path.pop() {
                map.insert(key, v);
            }
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(map));
                }
                _ => return Err(self.unexpected("',' or '}'")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, JsonError> {
        self.check_depth(depth)?;
        self.pos += 1; // '['
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_ws();
            self.path.push(Segment::Index(items.len()));
            let v = self.value(depth)?;
            self.path.pop();
            items.push(v);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.unexpected("',' or ']'")),
            }
        }
    }

    /// Parses a string starting at the opening quote; returns it unescaped.
    fn string(&mut self) -> Result<String, JsonError> {
        self.pos += 1; // '"'
        let mut out = String::new();
        loop {
            let start = self.pos;
            // Copy the run of plain characters in one go. The input is valid UTF-8 and
            // '"', '\\' and control characters are ASCII, so `start..pos` is a char boundary.
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            out.push_str(&self.text[start..self.pos]);
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => self.escape(&mut out)?,
                Some(b) => {
                    return Err(JsonError::ControlCharacter {
                        code: u32::from(b),
                        at: self.pointer(),
                        offset: self.pos,
                    });
                }
                None => return Err(self.unexpected("'\"'")),
            }
        }
    }

    /// Decodes one escape sequence at the backslash into `out`.
    fn escape(&mut self, out: &mut String) -> Result<(), JsonError> {
        let at = self.pos;
        let invalid = |p: &Self| JsonError::InvalidEscape {
            at: p.pointer(),
            offset: at,
        };
        let c = match self.bytes.get(at + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let hi = self.hex4(at + 2).ok_or_else(|| invalid(self))?;
                self.pos = at + 6;
                let lone = |p: &Self| JsonError::LoneSurrogate {
                    at: p.pointer(),
                    offset: at,
                };
                let code = match hi {
                    0xD800..=0xDBFF => {
                        let lo = if self.bytes.get(at + 6..at + 8) == Some(b"\\u") {
                            self.hex4(at + 8)
                        } else {
                            None
                        };
                        match lo {
                            Some(lo @ 0xDC00..=0xDFFF) => {
                                self.pos = at + 12;
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            }
                            _ => return Err(lone(self)),
                        }
                    }
                    0xDC00..=0xDFFF => return Err(lone(self)),
                    c => c,
                };
                out.push(char::from_u32(code).ok_or_else(|| lone(self))?);
                return Ok(());
            }
            _ => return Err(invalid(self)),
        };
        out.push(c);
        self.pos = at + 2;
        Ok(())
    }

    /// Reads four hex digits at `at`.
    fn hex4(&self, at: usize) -> Option<u32> {
        let digits = self.bytes.get(at..at + 4)?;
        let mut v = 0u32;
        for &d in digits {
            v = v * 16 + char::from(d).to_digit(16)?;
        }
        Some(v)
    }

    fn number(&mut self) -> Result<Value, JsonError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.unexpected("a digit")),
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            integer = false;
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.unexpected("a digit"));
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            integer = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.unexpected("a digit"));
            }
            self.digits();
        }
        let literal = &self.text[start..self.pos];
        if integer {
            let (negative, digits) = match literal.strip_prefix('-') {
                Some(d) => (true, d),
                None => (false, literal),
            };
            // Anything that does not fit u64 is certainly beyond 2^53.
            let magnitude = digits.parse::<u64>().ok();
            match magnitude {
                Some(m) if m <= MAX_SAFE_INTEGER => {
                    let n = if negative {
                        // m <= 2^53, so the cast and the negation are exact.
                        Number::from(-(m as i64))
                    } else {
                        Number::from(m)
                    };
                    return Ok(Value::Number(n));
                }
                _ if !self.limits.allow_unsafe_integers => {
                    return Err(JsonError::UnsafeInteger {
                        literal: literal.to_owned(),
                        at: self.pointer(),
                        offset: start,
                    });
                }
                Some(m) if !negative => return Ok(Value::Number(Number::from(m))),
                Some(m) if m <= 1 << 63 => {
                    // -(2^63) still fits i64.
                    let n = (m as i128).wrapping_neg() as i64;
                    return Ok(Value::Number(Number::from(n)));
                }
                _ => {} // beyond 64 bits: fall through to the double below
            }
        }
        let f: f64 = literal.parse().map_err(|_| self.unexpected("a number"))?;
        match Number::from_f64(f) {
            Some(n) => Ok(Value::Number(n)),
            None => Err(JsonError::NumberOutOfRange {
                literal: literal.to_owned(),
                at: self.pointer(),
                offset: start,
            }),
        }
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
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
}
