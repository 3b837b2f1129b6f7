//! The wire-format rules every successful answer must follow (spec §16 points 7–12), checked
//! on every result, stream event and card the tests receive: camelCase names only, no `kind`
//! or `final`, `ROLE_*`/`TASK_STATE_*` enums, one content member per part with padded base64
//! `raw`, RFC 3339 UTC timestamps with `Z`, no empty `taskId`/`contextId`, and a `contextId`
//! on every agent message.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

/// Members whose contents are free-form JSON (`Struct`/`Value`): not checked.
const OPAQUE: &[&str] = &["metadata", "data", "params"];
/// Maps keyed by user-chosen names: the keys are not field names.
const NAMED_MAPS: &[&str] = &["securitySchemes", "scopes", "schemes"];
const STATES: &[&str] = &[
    "TASK_STATE_SUBMITTED",
    "TASK_STATE_WORKING",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_REJECTED",
    "TASK_STATE_AUTH_REQUIRED",
];

/// Panics, naming the path, if `value` breaks a wire-format rule.
#[track_caller]
pub(crate) fn assert_wire_format(value: &Value) {
    if let Err(problem) = check(value, "$") {
        panic!("wire format: {problem}\nin {value}");
    }
}

fn check(value: &Value, path: &str) -> Result<(), String> {
    match value {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| check(v, &format!("{path}[{i}]"))),
        Value::Object(map) => check_object(map, path),
        _ => Ok(()),
    }
}

fn check_object(map: &Map<String, Value>, path: &str) -> Result<(), String> {
    for (key, v) in map {
        let here = format!("{path}.{key}");
        if key.contains('_') {
            return Err(format!("{here}: snake_case field name"));
        }
        if key == "kind" || key == "final" {
            return Err(format!("{here}: v0.3 field"));
        }
        match key.as_str() {
            "role" if !matches!(v.as_str(), Some("ROLE_USER" | "ROLE_AGENT")) => {
                return Err(format!("{here}: role {v}"));
            }
            "state" if !v.as_str().is_some_and(|s| STATES.contains(&s)) => {
                return Err(format!("{here}: state {v}"));
            }
            "timestamp" if !v.as_str().is_some_and(is_rfc3339_utc) => {
                return Err(format!("{here}: timestamp {v}"));
            }
            "taskId" | "contextId" if v.as_str().is_none_or(str::is_empty) => {
                return Err(format!("{here}: empty or not a string"));
            }
            "parts" => check_parts(v, &here)?,
            _ => {}
        }
        if OPAQUE.contains(&key.as_str()) {
            continue;
        }
        if NAMED_MAPS.contains(&key.as_str()) {
            if let Some(m) = v.as_object() {
                m.iter()
                    .try_for_each(|(name, inner)| check(inner, &format!("{here}.{name}")))?;
            }
            continue;
        }
        check(v, &here)?;
    }
    let is_agent_message = map.contains_key("messageId")
        && map.get("role").and_then(Value::as_str) == Some("ROLE_AGENT");
    if is_agent_message && !map.contains_key("contextId") {
        return Err(format!("{path}: an agent message without contextId"));
    }
    Ok(())
}

fn check_parts(parts: &Value, path: &str) -> Result<(), String> {
    let parts = parts
        .as_array()
        .ok_or_else(|| format!("{path}: parts is not an array"))?;
    for (i, part) in parts.iter().enumerate() {
        let members: Vec<&str> = ["text", "raw", "url", "data"]
            .into_iter()
            .filter(|m| part.get(m).is_some())
            .collect();
        if members.len() != 1 {
            return Err(format!(
                "{path}[{i}]: a part has exactly one of text|raw|url|data, not {members:?}"
            ));
        }
        if let Some(raw) = part.get("raw") {
            let raw = raw
                .as_str()
                .ok_or_else(|| format!("{path}[{i}].raw is not a string"))?;
            if raw.len() % 4 != 0 || STANDARD.decode(raw).is_err() {
                return Err(format!(
                    "{path}[{i}].raw is not padded standard base64: {raw:?}"
                ));
            }
        }
    }
    Ok(())
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction]Z`: RFC 3339 in UTC, as A2A timestamps must be.
pub(crate) fn is_rfc3339_utc(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        b.get(range)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    let date_time = b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    if !date_time {
        return false;
    }
    // The first 19 bytes are ASCII, so this slice is on a character boundary.
    match s[19..].strip_prefix('.') {
        Some(f) => {
            f.len() >= 2
                && f.strip_suffix('Z')
                    .is_some_and(|d| d.bytes().all(|c| c.is_ascii_digit()))
        }
        None => &s[19..] == "Z",
    }
}
