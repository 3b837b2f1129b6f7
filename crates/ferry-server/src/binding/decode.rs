//! Request bodies, from bytes to types: the one place the server turns untrusted JSON into
//! values.
//!
//! Every body is first checked whole by ferry-trust's strict parser (no member name twice at
//! any depth, free-form `metadata` and `data` parts included; nesting bounded; malformed text
//! refused), then decoded by serde into its type. Two readers of one body can then never
//! disagree: serde keeps the last of two equal names, so `{"confirm": false, "confirm": true}`
//! would otherwise mean "submit" to one and not to another. Proto messages refuse arrays
//! themselves (ferry-proto's `ObjectOnly`). A refusal names the member by its JSON pointer.
//!
//! The functions are public so that the fuzz targets drive exactly what the bindings run.

use ferry_proto::{A2aError, ErrorKind, JsonRpcRequest, ObjectOnly};
use ferry_trust::strict::{self, DataError, JsonError, Limits, Pointer};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The limits a request body is checked under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLimits {
    /// The largest body in bytes (`ServerConfig::max_body_bytes`).
    pub max_bytes: usize,
    /// The deepest nesting of arrays and objects (`ServerConfig::max_json_depth`).
    pub max_depth: usize,
}

impl BodyLimits {
    /// The limits `config` sets.
    pub fn of(config: &crate::config::ServerConfig) -> Self {
        BodyLimits {
            max_bytes: config.max_body_bytes,
            max_depth: config.max_json_depth.max(1),
        }
    }

    fn strict(self) -> Limits {
        Limits {
            max_bytes: self.max_bytes,
            max_depth: self.max_depth,
            // Integers beyond 2^53 are valid JSON; serde keeps 64-bit ones exactly. Only card
            // signing needs them refused (two texts, one canonical form).
            allow_unsafe_integers: true,
        }
    }
}

/// A REST (or extension) body decoded into `T`: strict check, then the typed decode. Syntax
/// errors are [`ErrorKind::ParseError`], anything else [`ErrorKind::InvalidParams`] naming the
/// member.
///
/// ```
/// use ferry_proto::{ErrorKind, SendMessageRequest};
/// use ferry_server::decode::{self, BodyLimits};
///
/// let limits = BodyLimits { max_bytes: 1 << 20, max_depth: 64 };
/// let body = br#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"confirm":false,"confirm":true}}]}}"#;
/// let e = decode::body::<SendMessageRequest>(body, limits).unwrap_err();
/// assert_eq!(e.kind, ErrorKind::InvalidParams);
/// assert_eq!(e.message, r#"duplicate member "confirm" at /message/parts/0/data, byte 81"#);
/// ```
pub fn body<T: DeserializeOwned>(bytes: &[u8], limits: BodyLimits) -> Result<T, A2aError> {
    strict::check_with(bytes, &limits.strict())
        .map_err(|e| refusal(&e, ErrorKind::InvalidParams))?;
    decoded(bytes, &Pointer::default(), ErrorKind::InvalidParams)
}

/// Like [`body`] for a derived struct of the server's own (an extension's request), which
/// serde alone would also read from an array.
pub fn object<T: DeserializeOwned>(bytes: &[u8], limits: BodyLimits) -> Result<T, A2aError> {
    body::<ObjectOnly<T>>(bytes, limits).map(|ObjectOnly(t)| t)
}

/// A JSON-RPC request whose envelope is valid; `params` is still raw.
#[derive(Debug)]
pub struct RpcEnvelope<'a> {
    /// The id to echo (a string, a number or `null`).
    pub id: Value,
    /// The method name, not yet looked up.
    pub method: std::borrow::Cow<'a, str>,
    params: Option<&'a serde_json::value::RawValue>,
}

/// A JSON-RPC request refused before its method ran: the id to answer with (`null` when the
/// envelope could not be read) and the error.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcRefusal {
    /// The request's id, or `null`.
    pub id: Value,
    /// What was wrong.
    pub error: A2aError,
}

/// Checks a JSON-RPC body strictly and reads its envelope (JSON-RPC 2.0 §4): a JSON object
/// (batches are not supported), `jsonrpc` `"2.0"`, an id that is a string, number or null, and
/// a method. A malformed text is -32700; a duplicate member or too deep a nesting is -32602
/// inside `params` and -32600 elsewhere; so is a wrong envelope.
pub fn jsonrpc(bytes: &[u8], limits: BodyLimits) -> Result<RpcEnvelope<'_>, Box<RpcRefusal>> {
    let null = |error| {
        Box::new(RpcRefusal {
            id: Value::Null,
            error,
        })
    };
    if let Err(e) = strict::check_with(bytes, &limits.strict()) {
        if e.is_syntax() {
            return Err(null(A2aError::new(
                ErrorKind::ParseError,
                format!("invalid JSON: {e}"),
            )));
        }
        let in_params = e.at().is_some_and(|at| is_under(at, "/params"));
        let kind = if in_params {
            ErrorKind::InvalidParams
        } else {
            ErrorKind::InvalidRequest
        };
        // The id is still worth echoing when the envelope around the refusal is readable.
        let id = envelope_id(bytes);
        return Err(Box::new(RpcRefusal {
            id,
            error: refusal(&e, kind),
        }));
    }
    if bytes.trim_ascii_start().first() == Some(&b'[') {
        return Err(null(A2aError::new(
            ErrorKind::InvalidRequest,
            "a JSON-RPC request is a JSON object (batches are not supported)",
        )));
    }
    let req: JsonRpcRequest<'_> = strict::decode_checked(bytes).map_err(|e| {
        null(A2aError::new(
            ErrorKind::InvalidRequest,
            format!("not a JSON-RPC 2.0 request object: {e}"),
        ))
    })?;
    let id = req.id.unwrap_or(Value::Null);
    if !(id.is_string() || id.is_number() || id.is_null()) {
        return Err(null(A2aError::new(
            ErrorKind::InvalidRequest,
            "id must be a string, a number or null",
        )));
    }
    let refuse = |message: &str| {
        Box::new(RpcRefusal {
            id: id.clone(),
            error: A2aError::new(ErrorKind::InvalidRequest, message),
        })
    };
    if req.jsonrpc != Some("2.0") {
        return Err(refuse("jsonrpc must be \"2.0\""));
    }
    let Some(method) = req.method else {
        return Err(refuse("method is required"));
    };
    Ok(RpcEnvelope {
        id,
        method,
        params: req.params,
    })
}

impl RpcEnvelope<'_> {
    /// The params decoded into the method's request type; absent or `null` params are `{}`.
    /// A refusal is -32602 naming the member (`/params/message/role`).
    pub fn params<T: DeserializeOwned>(&self) -> Result<T, A2aError> {
        let raw = self.params.map_or("{}", |p| p.get());
        let raw = if raw == "null" { "{}" } else { raw };
        decoded(
            raw.as_bytes(),
            &Pointer::from_member("params"),
            ErrorKind::InvalidParams,
        )
    }
}

/// Params read for whichever operation the method names (see `A2aRequest::decode`).
impl ferry_proto::RequestDecoder for &RpcEnvelope<'_> {
    type Error = A2aError;

    fn decode<T: DeserializeOwned>(&mut self) -> Result<T, A2aError> {
        self.params()
    }
}

/// The id of an envelope that is readable despite a strict refusal elsewhere in the body.
fn envelope_id(bytes: &[u8]) -> Value {
    #[derive(Deserialize)]
    struct IdOnly {
        #[serde(default)]
        id: Value,
    }
    match serde_json::from_slice::<ObjectOnly<IdOnly>>(bytes) {
        Ok(ObjectOnly(IdOnly { id })) if id.is_string() || id.is_number() => id,
        _ => Value::Null,
    }
}

/// `at` is `prefix` or inside it.
fn is_under(at: &Pointer, prefix: &str) -> bool {
    at.as_str()
        .strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Decodes an already checked document (or member, found at `base`) into `T`.
fn decoded<'a, T: Deserialize<'a>>(
    bytes: &'a [u8],
    base: &Pointer,
    kind: ErrorKind,
) -> Result<T, A2aError> {
    strict::decode_checked(bytes).map_err(|e: DataError| {
        let at = base.join(&e.at);
        let message = format!("{} at {at}", e.message);
        A2aError::new(kind, message).with_violation(field_path(&at), e.message)
    })
}

/// The wire error for a strict refusal: a parse error for malformed text, `kind` otherwise.
fn refusal(e: &JsonError, kind: ErrorKind) -> A2aError {
    if e.is_syntax() {
        return A2aError::new(ErrorKind::ParseError, format!("invalid JSON: {e}"));
    }
    let error = A2aError::new(kind, e.to_string());
    match e.at() {
        Some(at) => error.with_violation(field_path(at), e.to_string()),
        None => error,
    }
}

/// A JSON pointer as an AIP-193 field path: `/message/parts/0/text` → `message.parts[0].text`.
fn field_path(at: &Pointer) -> String {
    let mut path = String::new();
    for segment in at.segments() {
        if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
            path.push('[');
            path.push_str(&segment);
            path.push(']');
        } else {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&segment);
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: BodyLimits = BodyLimits {
        max_bytes: 1 << 20,
        max_depth: 64,
    };

    fn rpc_refusal(body: &str) -> RpcRefusal {
        *jsonrpc(body.as_bytes(), LIMITS).expect_err(body)
    }

    #[test]
    fn duplicates_are_refused_where_they_are() {
        let r = rpc_refusal(
            r#"{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"metadata":{"k":1,"k":2}}}"#,
        );
        assert_eq!(r.id, 7);
        assert_eq!(r.error.kind, ErrorKind::InvalidParams);
        assert_eq!(
            r.error.message,
            r#"duplicate member "k" at /params/metadata, byte 75"#
        );
        assert_eq!(r.error.field_violations[0].0, "params.metadata");
        let r = rpc_refusal(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"GetTask"}"#);
        assert_eq!(r.error.kind, ErrorKind::InvalidRequest);
        assert_eq!(r.id, Value::Null, "which id? neither");
        let r = rpc_refusal(r#"{"jsonrpc":"2.0","id":1,"x":{"a":1,"a":1},"method":"GetTask"}"#);
        assert_eq!((r.error.kind, r.id), (ErrorKind::InvalidRequest, 1.into()));
    }

    #[test]
    fn malformed_text_is_a_parse_error() {
        for body in ["{", r#"{"a":"\ud800"}"#, "{} {}", "\u{feff}{}"] {
            let r = rpc_refusal(body);
            assert_eq!(r.error.kind, ErrorKind::ParseError, "{body}");
            assert_eq!(r.id, Value::Null);
        }
    }

    #[test]
    fn params_errors_name_the_member() {
        let env = jsonrpc(
            br#"{"jsonrpc":"2.0","id":"a","method":"SendMessage","params":{"message":["m-1","","","ROLE_USER",[{"text":"x"}]]}}"#,
            LIMITS,
        )
        .expect("envelope");
        let e = env
            .params::<ferry_proto::SendMessageRequest>()
            .expect_err("array");
        assert_eq!(e.kind, ErrorKind::InvalidParams);
        assert_eq!(
            e.message,
            "invalid type: sequence, expected struct Message at /params/message"
        );
        assert_eq!(e.field_violations[0].0, "params.message");
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!(
            r#"{{"message":{{"messageId":"m","role":"ROLE_USER","parts":[{{"data":{}1{}}}]}}}}"#,
            "[".repeat(70),
            "]".repeat(70)
        );
        let e = body::<ferry_proto::SendMessageRequest>(deep.as_bytes(), LIMITS).expect_err("deep");
        assert_eq!(e.kind, ErrorKind::InvalidParams);
        assert!(
            e.message
                .starts_with("nesting deeper than 64 at /message/parts/0/data/"),
            "{}",
            e.message
        );
    }

    #[test]
    fn field_paths() {
        let at = ["message", "parts", "0", "text"]
            .iter()
            .fold(Pointer::default(), |p, m| p.join(&Pointer::from_member(m)));
        assert_eq!(field_path(&at), "message.parts[0].text");
        assert_eq!(field_path(&Pointer::from_member("a/b")), "a/b");
        assert_eq!(field_path(&Pointer::default()), "");
    }
}
