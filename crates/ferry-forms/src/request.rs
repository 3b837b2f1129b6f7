//! What a caller asks of the forms agent, read from an A2A message.
//!
//! A data part carries the request (`{"url", "values", "submit", "confirm", "form", "auto",
//! "profile"}`) or manages saved profiles (`{"profile": {"set": …}}`, see
//! [`crate::profiles`]); a text part holding a bare `http(s)` URL asks to inspect that page;
//! any other text is chatter and gets the expected shape back. The decoder is strict about the request's own
//! keys (an unknown key is an error naming it, so a typo like `"sumbit"` is never ignored)
//! and tolerant of value types a person would send (a number for a text field).

use ferry_proto::{Message, PartContent};
use serde_json::Value;
use std::fmt;

/// Most keys in `values`.
pub const MAX_VALUES: usize = 200;
/// Longest accepted value (one field), in bytes.
pub const MAX_VALUE_BYTES: usize = 64 * 1024;
/// Longest accepted URL, in bytes.
pub const MAX_URL_BYTES: usize = 8 * 1024;

/// One form-filling request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FormRequest {
    /// The page to open; `None` continues on the conversation's open page.
    pub url: Option<url::Url>,
    /// Field key → value, in the order given.
    pub values: Vec<(String, RequestedValue)>,
    /// Submit once everything is filled (after confirmation, unless `--auto-submit`).
    /// `None` when the message does not say: a follow-up then continues the task's pending
    /// submit, if it has one.
    pub submit: Option<bool>,
    /// Approves the pending submit (or, together with `submit`, approves it up front).
    pub confirm: bool,
    /// Which form, when the page has several.
    pub form: Option<FormSelector>,
    /// Fill the empty fields from what this conversation learned and from the caller's saved
    /// profile (`"auto": true`); the explicit `values` always win.
    pub auto: bool,
    /// Which saved profile `auto` fills from; `None`: the one named `default`, else the
    /// caller's only one.
    pub profile: Option<String>,
}

impl FormRequest {
    /// True when the request only asks to look (no values, no auto, no submit, no confirm).
    pub fn is_inspect_only(&self) -> bool {
        self.values.is_empty() && !self.auto && self.submit != Some(true) && !self.confirm
    }
}

pub use crate::value::RequestedValue;

/// How the request names a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormSelector {
    /// The n-th form of the page (0-based, main frame first).
    Index(usize),
    /// A CSS selector matching the form (or an element inside it).
    Css(String),
}

/// What a message asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A form request (from a data part or a bare URL).
    Request(FormRequest),
    /// A command about the caller's saved profiles (`{"profile": {"set": …}}`).
    Profile(crate::profiles::ProfileCommand),
    /// Text that is not a request.
    Chatter(String),
}

/// Why a request could not be read. The message names the offending key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// The data part is not a JSON object.
    #[error("the request must be a JSON object, like {}", example())]
    NotAnObject,
    /// A key this agent does not know.
    #[error("unknown key {0:?} (known: url, values, submit, confirm, form, auto, profile)")]
    UnknownKey(String),
    /// A key with a value of the wrong type.
    #[error("{key}: {expected}")]
    BadType {
        /// The key.
        key: String,
        /// What was expected.
        expected: &'static str,
    },
    /// The URL is not an absolute http(s) URL.
    #[error("url: {0}")]
    BadUrl(String),
    /// A limit was exceeded.
    #[error("{0}")]
    TooLarge(String),
    /// The message holds more than one request.
    #[error("send one request per message (found {0} data parts)")]
    SeveralRequests(usize),
    /// A profile command that is not well formed.
    #[error("profile: {0}")]
    Profile(String),
}

/// The request shape, as shown to callers who sent something else.
pub fn example() -> &'static str {
    r#"{"url": "https://example.com/signup", "values": {"Email": "ada@example.com"}, "submit": true}"#
}

impl From<crate::profiles::CommandError> for RequestError {
    fn from(e: crate::profiles::CommandError) -> Self {
        RequestError::Profile(e.0)
    }
}

/// Reads the request out of a message: the JSON data part if there is one, else a text
/// part holding only a URL, else chatter.
pub fn parse(message: &Message) -> Result<Incoming, RequestError> {
    let data: Vec<&Value> = message
        .parts
        .iter()
        .filter_map(|p| match &p.content {
            PartContent::Data(v) => Some(v),
            _ => None,
        })
        .collect();
    match data.as_slice() {
        [one] => {
            if let Some(command) = crate::profiles::command_of(one)? {
                return Ok(Incoming::Profile(command));
            }
            return parse_data(one).map(Incoming::Request);
        }
        [] => {}
        several => return Err(RequestError::SeveralRequests(several.len())),
    }
    let text = message.text();
    let trimmed = text.trim();
    if !trimmed.is_empty()
        && !trimmed.contains(char::is_whitespace)
        && (trimmed.starts_with("http://") || trimmed.starts_with("https://"))
    {
        return Ok(Incoming::Request(FormRequest {
            url: Some(parse_url(trimmed)?),
            ..FormRequest::default()
        }));
    }
    Ok(Incoming::Chatter(text))
}

/// Reads a form request from its JSON object (what a data part, or an MCP tool's arguments,
/// hold).
pub fn parse_data(value: &Value) -> Result<FormRequest, RequestError> {
    let object = value.as_object().ok_or(RequestError::NotAnObject)?;
    let mut request = FormRequest::default();
    for (key, value) in object {
        match key.as_str() {
            "url" => {
                let text = value.as_str().ok_or_else(|| bad(key, "must be a string"))?;
                request.url = Some(parse_url(text)?);
            }
            "values" => request.values = parse_values(value)?,
            "submit" => request.submit = Some(parse_bool(key, value)?),
            "confirm" => request.confirm = parse_bool(key, value)?,
            "form" => {
                request.form = Some(match value {
                    Value::Number(n) => FormSelector::Index(
                        n.as_u64()
                            .and_then(|n| usize::try_from(n).ok())
                            .ok_or_else(|| {
                                bad(key, "must be a form index (0, 1, …) or a CSS selector")
                            })?,
                    ),
                    Value::String(s) if !s.trim().is_empty() => FormSelector::Css(s.clone()),
                    _ => return Err(bad(key, "must be a form index (0, 1, …) or a CSS selector")),
                });
            }
            "auto" => request.auto = parse_bool(key, value)?,
            "profile" => {
                let name = value.as_str().ok_or_else(|| {
                    bad(
                        key,
                        "must name the saved profile auto fills from (a profile command goes alone in its message)",
                    )
                })?;
                crate::profiles::check_name(name).map_err(RequestError::Profile)?;
                request.profile = Some(name.to_owned());
            }
            other => return Err(RequestError::UnknownKey(other.to_owned())),
        }
    }
    if request.profile.is_some() && !request.auto {
        return Err(bad(
            "profile",
            "names the profile of \"auto\": true; add it",
        ));
    }
    Ok(request)
}

fn parse_url(text: &str) -> Result<url::Url, RequestError> {
    if text.len() > MAX_URL_BYTES {
        return Err(RequestError::TooLarge(format!(
            "url: longer than {MAX_URL_BYTES} bytes"
        )));
    }
    let url = url::Url::parse(text).map_err(|e| RequestError::BadUrl(format!("{text:?}: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(RequestError::BadUrl(format!(
            "{text:?}: only http and https pages can be opened"
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(RequestError::BadUrl(format!("{text:?}: no host")));
    }
    Ok(url)
}

fn parse_bool(key: &str, value: &Value) -> Result<bool, RequestError> {
    value
        .as_bool()
        .ok_or_else(|| bad(key, "must be true or false"))
}

fn parse_values(value: &Value) -> Result<Vec<(String, RequestedValue)>, RequestError> {
    let object = value
        .as_object()
        .ok_or_else(|| bad("values", "must be an object of field → value"))?;
    if object.len() > MAX_VALUES {
        return Err(RequestError::TooLarge(format!(
            "values: more than {MAX_VALUES} keys"
        )));
    }
    let mut out = Vec::with_capacity(object.len());
    for (key, value) in object {
        if key.trim().is_empty() {
            return Err(bad("values", "keys must name a field (empty key)"));
        }
        let at = || format!("values.{key}");
        let parsed = match value {
            Value::String(s) => RequestedValue::Text(s.clone()),
            Value::Bool(b) => RequestedValue::Bool(*b),
            // A person writes 42 for an age: take its text.
            Value::Number(n) => RequestedValue::Text(n.to_string()),
            Value::Array(items) => RequestedValue::List(
                items
                    .iter()
                    .map(|item| match item {
                        Value::String(s) => Ok(s.clone()),
                        Value::Number(n) => Ok(n.to_string()),
                        _ => Err(bad(&at(), "a list must hold strings")),
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Value::Null | Value::Object(_) => {
                return Err(bad(
                    &at(),
                    "must be a string, a boolean or a list of strings",
                ));
            }
        };
        let size = match &parsed {
            RequestedValue::Text(s) => s.len(),
            RequestedValue::Bool(_) => 0,
            RequestedValue::List(items) => items.iter().map(String::len).sum(),
        };
        if size > MAX_VALUE_BYTES {
            return Err(RequestError::TooLarge(format!(
                "{}: longer than {MAX_VALUE_BYTES} bytes",
                at()
            )));
        }
        out.push((key.clone(), parsed));
    }
    Ok(out)
}

fn bad(key: &str, expected: &'static str) -> RequestError {
    RequestError::BadType {
        key: key.to_owned(),
        expected,
    }
}

impl fmt::Display for RequestedValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestedValue::Text(s) => write!(f, "{s:?}"),
            RequestedValue::Bool(b) => write!(f, "{b}"),
            RequestedValue::List(items) => write!(f, "{items:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_proto::Part;
    use serde_json::json;

    fn message(parts: Vec<Part>) -> Message {
        Message::user("m1", parts)
    }

    fn request(value: Value) -> Result<Incoming, RequestError> {
        parse(&message(vec![
            Part::data(value).with_media_type("application/json"),
        ]))
    }

    #[test]
    fn a_full_request_is_read_with_every_value_type() {
        let Ok(Incoming::Request(r)) = request(json!({
            "url": "https://example.com/signup",
            "values": {"Email": "ada@example.com", "Terms": true, "Toppings": ["ham", "egg"], "Age": 42},
            "submit": true,
            "form": 1
        })) else {
            panic!("request");
        };
        assert_eq!(
            r.url.as_ref().map(url::Url::as_str),
            Some("https://example.com/signup")
        );
        assert!(r.submit == Some(true) && !r.confirm);
        assert_eq!(r.form, Some(FormSelector::Index(1)));
        let values: std::collections::HashMap<_, _> = r.values.into_iter().collect();
        assert_eq!(
            values["Email"],
            RequestedValue::Text("ada@example.com".into())
        );
        assert_eq!(values["Terms"], RequestedValue::Bool(true));
        assert_eq!(
            values["Toppings"],
            RequestedValue::List(vec!["ham".into(), "egg".into()])
        );
        assert_eq!(values["Age"], RequestedValue::Text("42".into()));
    }

    #[test]
    fn a_bare_url_inspects_and_other_text_is_chatter() {
        let Ok(Incoming::Request(r)) =
            parse(&message(vec![Part::text("  https://example.com/x \n")]))
        else {
            panic!("url");
        };
        assert!(r.is_inspect_only());
        assert_eq!(
            r.url.map(String::from).as_deref(),
            Some("https://example.com/x")
        );
        assert!(matches!(
            parse(&message(vec![Part::text(
                "please fill https://example.com"
            )])),
            Ok(Incoming::Chatter(_))
        ));
        assert!(matches!(
            parse(&message(vec![Part::text("hi")])),
            Ok(Incoming::Chatter(_))
        ));
    }

    #[test]
    fn mistakes_are_named() {
        assert_eq!(
            request(json!({"url": "https://e.com", "sumbit": true})),
            Err(RequestError::UnknownKey("sumbit".into()))
        );
        assert!(matches!(
            request(json!({"url": "ftp://e.com"})),
            Err(RequestError::BadUrl(_))
        ));
        assert!(matches!(
            request(json!({"url": "example.com"})),
            Err(RequestError::BadUrl(_))
        ));
        assert!(matches!(
            request(json!({"submit": "yes"})),
            Err(RequestError::BadType { .. })
        ));
        assert!(matches!(
            request(json!({"values": {"A": null}})),
            Err(RequestError::BadType { key, .. }) if key == "values.A"
        ));
        assert!(matches!(
            request(json!({"values": {"A": [1, {}]}})),
            Err(RequestError::BadType { .. })
        ));
        assert!(matches!(
            request(json!({"form": -1})),
            Err(RequestError::BadType { .. })
        ));
        assert_eq!(request(json!([1])), Err(RequestError::NotAnObject));
        let two = parse(&message(vec![Part::data(json!({})), Part::data(json!({}))]));
        assert_eq!(two, Err(RequestError::SeveralRequests(2)));
    }

    #[test]
    fn limits_hold() {
        let many: serde_json::Map<String, Value> = (0..=MAX_VALUES)
            .map(|i| (format!("k{i}"), json!("v")))
            .collect();
        assert!(matches!(
            request(json!({"values": many})),
            Err(RequestError::TooLarge(_))
        ));
        let long = "x".repeat(MAX_VALUE_BYTES + 1);
        assert!(matches!(
            request(json!({"values": {"A": long}})),
            Err(RequestError::TooLarge(_))
        ));
        let url = format!("https://e.com/{}", "a".repeat(MAX_URL_BYTES));
        assert!(matches!(
            request(json!({"url": url})),
            Err(RequestError::TooLarge(_))
        ));
    }

    #[test]
    fn auto_and_its_profile_are_read() {
        let Ok(Incoming::Request(r)) =
            request(json!({"url": "https://e.com", "auto": true, "profile": "work"}))
        else {
            panic!("request");
        };
        assert!(r.auto && !r.is_inspect_only());
        assert_eq!(r.profile.as_deref(), Some("work"));
        assert!(matches!(
            request(json!({"url": "https://e.com", "profile": "work"})),
            Err(RequestError::BadType { key, .. }) if key == "profile"
        ));
        assert!(matches!(
            request(json!({"url": "https://e.com", "auto": true, "profile": "no spaces"})),
            Err(RequestError::Profile(_))
        ));
        assert!(matches!(
            request(json!({"auto": "yes"})),
            Err(RequestError::BadType { .. })
        ));
    }

    #[test]
    fn css_form_selectors_are_kept() {
        let Ok(Incoming::Request(r)) = request(json!({"form": "#newsletter", "confirm": true}))
        else {
            panic!("request");
        };
        assert_eq!(r.form, Some(FormSelector::Css("#newsletter".into())));
        assert!(r.confirm && !r.is_inspect_only());
    }
}
