//! Strict JSON: the only way bytes from the network become a [`serde_json::Value`] in
//! ferry-trust, and the check ferry-server runs over every request body before serde reads it
//! ([`check_with`], which builds nothing; [`decode`] for both steps at once).
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

mod decode;
mod parser;

pub use decode::{DataError, DecodeError, decode, decode_checked};

use parser::{BuildValue, CheckOnly, Parser};
use serde_json::Value;
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
pub struct Pointer(pub(crate) String);

impl Pointer {
    /// The pointer text (`""` for the whole document).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The pointer to member `name` of the document (`"a/b"` → `/a~1b`).
    pub fn from_member(name: &str) -> Pointer {
        let mut s = String::with_capacity(name.len() + 1);
        push_segment(&mut s, name);
        Pointer(s)
    }

    /// `rest`, taken relative to the value this pointer points at.
    ///
    /// ```
    /// use ferry_trust::strict::Pointer;
    /// let at = Pointer::from_member("params").join(&Pointer::from_member("message"));
    /// assert_eq!(at.as_str(), "/params/message");
    /// ```
    pub fn join(&self, rest: &Pointer) -> Pointer {
        Pointer(format!("{}{}", self.0, rest.0))
    }

    /// The reference tokens, unescaped (`/a~1b/0` → `a/b`, `0`).
    pub fn segments(&self) -> impl Iterator<Item = String> + '_ {
        self.0
            .split('/')
            .skip(1)
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
    }
}

/// Appends `/name` to a pointer text, escaping `~` and `/` (RFC 6901 §3).
pub(crate) fn push_segment(pointer: &mut String, name: &str) {
    pointer.push('/');
    for c in name.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
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

impl JsonError {
    /// True when the text is not JSON at all (RFC 8259 grammar, UTF-8, escapes, numbers a
    /// double holds), as opposed to JSON this parser refuses by policy: duplicate member
    /// names, nesting, size, unsafe integers. JSON-RPC answers the first with a parse error
    /// and the second with an invalid request.
    pub fn is_syntax(&self) -> bool {
        match self {
            JsonError::InvalidUtf8 { .. }
            | JsonError::Unexpected { .. }
            | JsonError::UnexpectedEnd { .. }
            | JsonError::TrailingData { .. }
            | JsonError::NumberOutOfRange { .. }
            | JsonError::LoneSurrogate { .. }
            | JsonError::ControlCharacter { .. }
            | JsonError::InvalidEscape { .. } => true,
            JsonError::TooLarge { .. }
            | JsonError::DuplicateMember { .. }
            | JsonError::TooDeep { .. }
            | JsonError::UnsafeInteger { .. } => false,
        }
    }

    /// Where in the document the problem is, when the error knows.
    pub fn at(&self) -> Option<&Pointer> {
        match self {
            JsonError::Unexpected { at, .. }
            | JsonError::UnexpectedEnd { at, .. }
            | JsonError::DuplicateMember { at, .. }
            | JsonError::TooDeep { at, .. }
            | JsonError::UnsafeInteger { at, .. }
            | JsonError::NumberOutOfRange { at, .. }
            | JsonError::LoneSurrogate { at, .. }
            | JsonError::ControlCharacter { at, .. }
            | JsonError::InvalidEscape { at, .. } => Some(at),
            JsonError::TooLarge { .. }
            | JsonError::InvalidUtf8 { .. }
            | JsonError::TrailingData { .. } => None,
        }
    }
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
    Parser::<BuildValue>::run(input, limits)
}

/// Checks `input` as [`parse_with`] would, without building anything: the same refusals, a
/// fraction of the cost. This is what a server runs over every request body before a typed
/// decoder (which keeps the last of two equal member names) reads it.
///
/// ```
/// use ferry_trust::strict::{self, JsonError, Limits};
///
/// strict::check_with(br#"{"parts":[{"data":{"confirm":true}}]}"#, &Limits::default())?;
/// let err = strict::check_with(
///     br#"{"parts":[{"data":{"confirm":false,"confirm":true}}]}"#,
///     &Limits::default(),
/// )
/// .unwrap_err();
/// assert_eq!(err.to_string(), r#"duplicate member "confirm" at /parts/0/data, byte 35"#);
/// # Ok::<(), JsonError>(())
/// ```
pub fn check_with(input: &[u8], limits: &Limits) -> Result<(), JsonError> {
    Parser::<CheckOnly>::run(input, limits)
}

/// The JSON pointer of the innermost value of `input` that starts before byte `offset` and
/// ends at or after it, e.g. the member a typed decoder was reading when it stopped there.
/// `None` when `input` is not strict JSON.
///
/// ```
/// let doc = br#"{"message":{"parts":[{"text":5}]}}"#;
/// let at = ferry_trust::strict::pointer_at(doc, 30).expect("valid JSON");
/// assert_eq!(at.as_str(), "/message/parts/0/text");
/// ```
pub fn pointer_at(input: &[u8], offset: usize) -> Option<Pointer> {
    let limits = Limits {
        max_bytes: usize::MAX,
        max_depth: Limits::DEFAULT_MAX_DEPTH * 4,
        allow_unsafe_integers: true,
    };
    Parser::locate(input, &limits, offset)
}

#[cfg(test)]
mod tests;
