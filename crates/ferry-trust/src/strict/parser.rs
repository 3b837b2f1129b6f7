//! The one strict JSON parser. It walks the text once, refuses everything the module docs
//! list, and hands each value to an [`Output`]: [`BuildValue`] makes a `serde_json::Value`,
//! [`CheckOnly`] makes nothing (so checking a request body allocates only for member names
//! that contain escapes and for very large objects).

use super::{JsonError, Limits, MAX_SAFE_INTEGER, Pointer, push_segment};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::collections::HashSet;

/// Objects with more members than this get a hash set for the duplicate check; below it a
/// linear scan of the names is faster than hashing.
const LINEAR_SCAN_MEMBERS: usize = 16;

/// A value that holds no other value.
pub(super) enum Scalar<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
}

/// What the parser makes of the values it has checked.
pub(super) trait Output<'a> {
    /// One parsed value.
    type Value;
    /// An array being filled.
    type Array: Default;
    /// An object being filled.
    type Object: Default;
    fn scalar(scalar: Scalar<'a>) -> Self::Value;
    fn push(array: &mut Self::Array, value: Self::Value);
    fn insert(object: &mut Self::Object, name: &str, value: Self::Value);
    fn array(array: Self::Array) -> Self::Value;
    fn object(object: Self::Object) -> Self::Value;
}

/// Builds a `serde_json::Value`.
pub(super) struct BuildValue;

impl<'a> Output<'a> for BuildValue {
    type Value = Value;
    type Array = Vec<Value>;
    type Object = Map<String, Value>;

    fn scalar(scalar: Scalar<'a>) -> Value {
        match scalar {
            Scalar::Null => Value::Null,
            Scalar::Bool(b) => Value::Bool(b),
            Scalar::Number(n) => Value::Number(n),
            Scalar::String(s) => Value::String(s.into_owned()),
        }
    }

    fn push(array: &mut Vec<Value>, value: Value) {
        array.push(value);
    }

    fn insert(object: &mut Map<String, Value>, name: &str, value: Value) {
        object.insert(name.to_owned(), value);
    }

    fn array(array: Vec<Value>) -> Value {
        Value::Array(array)
    }

    fn object(object: Map<String, Value>) -> Value {
        Value::Object(object)
    }
}

/// Builds nothing: the input is only checked.
pub(super) struct CheckOnly;

impl<'a> Output<'a> for CheckOnly {
    type Value = ();
    type Array = ();
    type Object = ();

    fn scalar(_: Scalar<'a>) {}
    fn push(_: &mut (), _: ()) {}
    fn insert(_: &mut (), _: &str, _: ()) {}
    fn array(_: ()) {}
    fn object(_: ()) {}
}

/// One step of the JSON pointer being built while parsing.
enum Segment {
    /// A member: an index into [`Parser::names`].
    Member(usize),
    /// An array element.
    Index(usize),
}

pub(super) struct Parser<'a, O> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    path: Vec<Segment>,
    /// The member names of every object being parsed, outermost first: the duplicate check
    /// of an object looks at its own suffix of this stack.
    names: Vec<Cow<'a, str>>,
    limits: Limits,
    /// For [`super::pointer_at`]: the byte offset to locate, and the pointer found for it.
    locate: Option<usize>,
    located: Option<Pointer>,
    output: std::marker::PhantomData<O>,
}

impl<'a, O: Output<'a>> Parser<'a, O> {
    /// Parses the whole input: exactly one value between optional whitespace.
    pub(super) fn run(input: &'a [u8], limits: &Limits) -> Result<O::Value, JsonError> {
        Self::new(input, limits, None)?.document()
    }

    fn new(input: &'a [u8], limits: &Limits, locate: Option<usize>) -> Result<Self, JsonError> {
        if input.len() > limits.max_bytes {
            return Err(JsonError::TooLarge {
                size: input.len(),
                limit: limits.max_bytes,
            });
        }
        let text = std::str::from_utf8(input).map_err(|e| JsonError::InvalidUtf8 {
            offset: e.valid_up_to(),
        })?;
        Ok(Self {
            text,
            bytes: input,
            pos: 0,
            // Enough for an A2A request without growing: one allocation each.
            path: Vec::with_capacity(16),
            names: Vec::with_capacity(32),
            limits: *limits,
            locate,
            located: None,
            output: std::marker::PhantomData,
        })
    }

    fn document(&mut self) -> Result<O::Value, JsonError> {
        self.skip_ws();
        let value = self.value(0)?;
        self.skip_ws();
        if self.pos < self.bytes.len() {
            return Err(JsonError::TrailingData { offset: self.pos });
        }
        Ok(value)
    }

    fn pointer(&self) -> Pointer {
        let mut s = String::new();
        for seg in &self.path {
            match seg {
                Segment::Member(i) => push_segment(&mut s, &self.names[*i]),
                Segment::Index(i) => push_segment(&mut s, &i.to_string()),
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

    fn literal(&mut self, word: &'static str, value: Scalar<'a>) -> Result<O::Value, JsonError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(O::scalar(value))
        } else {
            Err(self.unexpected("a JSON value"))
        }
    }

    /// Parses one value; `depth` is the number of containers around it.
    fn value(&mut self, depth: usize) -> Result<O::Value, JsonError> {
        let start = self.pos;
        let value = match self.peek() {
            Some(b'{') => self.object(depth + 1)?,
            Some(b'[') => self.array(depth + 1)?,
            Some(b'"') => O::scalar(Scalar::String(self.string()?)),
            Some(b't') => self.literal("true", Scalar::Bool(true))?,
            Some(b'f') => self.literal("false", Scalar::Bool(false))?,
            Some(b'n') => self.literal("null", Scalar::Null)?,
            Some(b'-' | b'0'..=b'9') => O::scalar(Scalar::Number(self.number()?)),
            _ => return Err(self.unexpected("a JSON value")),
        };
        // Values end innermost first, so the first one to contain the offset is the deepest.
        if let Some(offset) = self.locate
            && self.located.is_none()
            && start < offset
            && offset <= self.pos
        {
            self.located = Some(self.pointer());
        }
        Ok(value)
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

    fn object(&mut self, depth: usize) -> Result<O::Value, JsonError> {
        self.check_depth(depth)?;
        self.pos += 1; // '{'
        let mut object = O::Object::default();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(O::object(object));
        }
        let first = self.names.len();
        let mut index: Option<HashSet<Cow<'a, str>>> = None;
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.unexpected("a member name"));
            }
            let name_offset = self.pos;
            let name = self.string()?;
            let duplicate = match &index {
                Some(set) => set.contains(name.as_ref()),
                None => self.names[first..].contains(&name),
            };
            if duplicate {
                return Err(JsonError::DuplicateMember {
                    name: name.into_owned(),
                    at: self.pointer(),
                    offset: name_offset,
                });
            }
            match &mut index {
                Some(set) => {
                    set.insert(name.clone());
                }
                None if self.names.len() - first >= LINEAR_SCAN_MEMBERS => {
                    let mut set: HashSet<_> = self.names[first..].iter().cloned().collect();
                    set.insert(name.clone());
                    index = Some(set);
                }
                None => {}
            }
            self.names.push(name);
            self.skip_ws();
            self.expect_byte(b':', "':'")?;
            self.skip_ws();
            let slot = self.names.len() - 1;
            self.path.push(Segment::Member(slot));
            let value = self.value(depth)?;
            self.path.pop();
            O::insert(&mut object, &self.names[slot], value);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    self.names.truncate(first);
                    return Ok(O::object(object));
                }
                _ => return Err(self.unexpected("',' or '}'")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<O::Value, JsonError> {
        self.check_depth(depth)?;
        self.pos += 1; // '['
        let mut array = O::Array::default();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(O::array(array));
        }
        let mut len = 0;
        loop {
            self.skip_ws();
            self.path.push(Segment::Index(len));
            let value = self.value(depth)?;
            self.path.pop();
            O::push(&mut array, value);
            len += 1;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(O::array(array));
                }
                _ => return Err(self.unexpected("',' or ']'")),
            }
        }
    }

    /// Parses a string starting at the opening quote; returns it unescaped, borrowed from the
    /// input when it has no escapes.
    fn string(&mut self) -> Result<Cow<'a, str>, JsonError> {
        self.pos += 1; // '"'
        let mut out: Option<String> = None;
        loop {
            let start = self.pos;
            // Skip the run of plain characters in one go. The input is valid UTF-8 and '"',
            // '\\' and control characters are ASCII, so `start..pos` is a char boundary.
            self.pos += plain_run(&self.bytes[self.pos..]);
            let run = &self.text[start..self.pos];
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(match out {
                        None => Cow::Borrowed(run),
                        Some(mut s) => {
                            s.push_str(run);
                            Cow::Owned(s)
                        }
                    });
                }
                Some(b'\\') => {
                    let s = out.get_or_insert_with(String::new);
                    s.push_str(run);
                    self.escape(s)?;
                }
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

    fn number(&mut self) -> Result<Number, JsonError> {
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
                    return Ok(if negative {
                        // m <= 2^53, so the cast and the negation are exact.
                        Number::from(-(m as i64))
                    } else {
                        Number::from(m)
                    });
                }
                _ if !self.limits.allow_unsafe_integers => {
                    return Err(JsonError::UnsafeInteger {
                        literal: literal.to_owned(),
                        at: self.pointer(),
                        offset: start,
                    });
                }
                Some(m) if !negative => return Ok(Number::from(m)),
                Some(m) if m <= 1 << 63 => {
                    // -(2^63) still fits i64.
                    return Ok(Number::from((m as i128).wrapping_neg() as i64));
                }
                _ => {} // beyond 64 bits: fall through to the double below
            }
        }
        let f: f64 = literal.parse().map_err(|_| self.unexpected("a number"))?;
        Number::from_f64(f).ok_or_else(|| JsonError::NumberOutOfRange {
            literal: literal.to_owned(),
            at: self.pointer(),
            offset: start,
        })
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }
}

/// The length of the leading run of `bytes` that needs no attention inside a string: no
/// `"`, no `\\`, no control character. Eight bytes at a time (SWAR, as serde_json does): a
/// word is plain when none of its bytes is one of those, found with the classic "has a zero
/// byte" test on the word XORed with each delimiter.
fn plain_run(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let needs_attention = |word: u64| {
        let quote = word ^ (ONES * u64::from(b'"'));
        let backslash = word ^ (ONES * u64::from(b'\\'));
        let has_zero = |x: u64| x.wrapping_sub(ONES) & !x;
        // Bytes below 0x20: subtracting 0x20 borrows into their high bit.
        let control = word.wrapping_sub(ONES * 0x20) & !word;
        (has_zero(quote) | has_zero(backslash) | control) & HIGH != 0
    };
    let mut n = 0;
    for chunk in bytes.chunks_exact(8) {
        let word = u64::from_le_bytes([
            chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7],
        ]);
        if needs_attention(word) {
            break;
        }
        n += 8;
    }
    n + bytes[n..]
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .unwrap_or(bytes.len() - n)
}

impl<'a> Parser<'a, CheckOnly> {
    /// The pointer of the innermost value that starts before `offset` and ends at or after
    /// it; `None` when the input is not one the parser accepts under `limits`.
    pub(super) fn locate(input: &'a [u8], limits: &Limits, offset: usize) -> Option<Pointer> {
        let mut p = Self::new(input, limits, Some(offset)).ok()?;
        p.document().ok()?;
        p.located
    }
}

#[cfg(test)]
mod tests {
    use super::plain_run;

    #[test]
    fn plain_runs_stop_at_every_delimiter_in_every_position() {
        for len in 0..24 {
            let plain = "é".repeat(len / 2) + &"a".repeat(len % 2);
            assert_eq!(plain_run(plain.as_bytes()), plain.len(), "{plain:?}");
            for stop in ["\"", "\\", "\n", "\u{0}", "\u{1f}"] {
                for at in 0..=plain.len() {
                    if !plain.is_char_boundary(at) {
                        continue;
                    }
                    let text = format!("{}{stop}{}", &plain[..at], &plain[at..]);
                    assert_eq!(plain_run(text.as_bytes()), at, "{text:?}");
                }
            }
        }
        // Bytes at and just above the delimiters are plain.
        assert_eq!(plain_run(b" !#[]^~\x7f\xff"), 9);
    }
}
