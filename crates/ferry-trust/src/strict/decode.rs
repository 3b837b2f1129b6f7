//! Typed decoding of strict JSON: check the text with the strict parser, then let serde read
//! it into the target type, and when serde refuses, name the member it refused by its JSON
//! pointer rather than by line and column.

use super::{JsonError, Limits, Pointer, check_with, pointer_at};
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// A document that is strict JSON but not of the expected shape: a missing member, a wrong
/// type, an unknown enum value, an array where an object belongs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at {at}")]
pub struct DataError {
    /// The member being read when the decoder stopped.
    pub at: Pointer,
    /// What the decoder says was wrong, without its line and column.
    pub message: String,
}

/// Why [`decode`] refused a document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The text is not strict JSON.
    #[error(transparent)]
    Json(#[from] JsonError),
    /// The JSON is not of the expected shape.
    #[error(transparent)]
    Data(#[from] DataError),
}

/// Checks `input` under `limits` (see [`check_with`]), then decodes it into `T`.
///
/// ```
/// use ferry_trust::strict::{self, DecodeError, Limits};
///
/// #[derive(Debug, serde::Deserialize)]
/// struct Turn { confirm: bool }
///
/// let turn: Turn = strict::decode(br#"{"confirm":true}"#, &Limits::default())?;
/// assert!(turn.confirm);
/// let err = strict::decode::<Turn>(br#"{"confirm":"yes"}"#, &Limits::default()).unwrap_err();
/// assert_eq!(err.to_string(), r#"invalid type: string "yes", expected a boolean at /confirm"#);
/// # Ok::<(), DecodeError>(())
/// ```
pub fn decode<T: DeserializeOwned>(input: &[u8], limits: &Limits) -> Result<T, DecodeError> {
    check_with(input, limits)?;
    Ok(decode_checked(input)?)
}

/// Decodes `input` into `T` without checking it first: for a document [`check_with`] has
/// already accepted, or a part of one (a JSON-RPC `params` member of a checked body). The
/// type may borrow from the input.
pub fn decode_checked<'a, T: Deserialize<'a>>(input: &'a [u8]) -> Result<T, DataError> {
    serde_json::from_slice(input).map_err(|e| located(input, &e))
}

/// Turns serde_json's line and column into the JSON pointer of the member it was reading.
fn located(input: &[u8], e: &serde_json::Error) -> DataError {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = full.strip_suffix(&suffix).unwrap_or(&full).to_owned();
    let at = byte_offset(input, e.line(), e.column())
        .and_then(|offset| pointer_at(input, offset))
        .unwrap_or_default();
    DataError { at, message }
}

/// The byte offset just after the character serde_json reports at 1-based `line` and
/// `column` (its columns count bytes).
fn byte_offset(input: &[u8], line: usize, column: usize) -> Option<usize> {
    if line == 0 {
        return None;
    }
    let line_start = if line == 1 {
        0
    } else {
        input
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .nth(line - 2)
            .map(|(i, _)| i + 1)?
    };
    Some(line_start + column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Message {
        message_id: String,
        #[serde(default)]
        parts: Vec<Part>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Part {
        text: String,
    }

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Request {
        message: Message,
        #[serde(default)]
        n: Option<i32>,
    }

    fn refused(input: &str) -> String {
        match decode::<Request>(input.as_bytes(), &Limits::default()) {
            Ok(r) => panic!("accepted {input:?} as {r:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn data_errors_name_the_member() {
        for (input, want) in [
            (
                r#"{"message": 5}"#,
                "invalid type: integer `5`, expected struct Message at /message",
            ),
            (
                r#"{"message": {"parts": []}}"#,
                "missing field `messageId` at /message",
            ),
            (
                r#"{"message": {"messageId": "m"}, "n": "ten"}"#,
                r#"invalid type: string "ten", expected i32 at /n"#,
            ),
            (
                "{\n \"message\": {\"messageId\": \"m\",\n  \"parts\": [{\"text\": \"a\"}, {}]}}",
                "missing field `text` at /message/parts/1",
            ),
            (
                "true",
                "invalid type: boolean `true`, expected struct Request at the top level",
            ),
        ] {
            assert_eq!(refused(input), want, "{input}");
        }
    }

    #[test]
    fn strict_refusals_come_first() {
        assert_eq!(
            refused(r#"{"message": {"messageId": "m", "messageId": "n"}}"#),
            r#"duplicate member "messageId" at /message, byte 31"#
        );
        assert!(matches!(
            decode::<Request>(b"{", &Limits::default()),
            Err(DecodeError::Json(JsonError::UnexpectedEnd { .. }))
        ));
    }

    #[test]
    fn offsets_follow_lines() {
        assert_eq!(byte_offset(b"abc", 1, 2), Some(2));
        assert_eq!(byte_offset(b"a\nbc\nd", 3, 1), Some(6));
        assert_eq!(byte_offset(b"a", 0, 0), None);
        assert_eq!(byte_offset(b"a", 3, 1), None);
    }
}
