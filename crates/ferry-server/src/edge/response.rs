//! Response builders shared by the bindings, the front door and extensions. Statuses come
//! from the error's [`ErrorKind`]; there is no status table here.

use crate::edge::params::EXTENSIONS;
use crate::edge::request_id::RequestId;
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use ferry_proto::{A2aError, ErrorKind, ErrorTable};

/// A JSON response with `status` and `body`.
pub fn json(status: StatusCode, body: impl Into<Body>) -> Response {
    let mut r = Response::new(body.into());
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// Echoes the activated extension URIs in `A2A-Extensions` (spec §11, SHOULD).
pub(crate) fn with_extensions(mut r: Response, activated: &[String]) -> Response {
    if !activated.is_empty()
        && let Ok(v) = HeaderValue::from_str(&activated.join(", "))
    {
        r.headers_mut().insert(EXTENSIONS, v);
    }
    r
}

/// True when a request content type is one we read as JSON (`application/json`,
/// `application/a2a+json`, any `+json`), or absent.
pub(crate) fn is_json_content_type(value: Option<&HeaderValue>) -> bool {
    let Some(v) = value.and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let essence = v
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// A copy of `e` that carries the request id in its `ErrorInfo.metadata`.
fn with_request_id(e: &A2aError, rid: Option<&RequestId>) -> A2aError {
    match rid {
        Some(rid) => e.clone().with_meta("requestId", rid.as_str()),
        None => e.clone(),
    }
}

/// The `ErrorInfo.metadata` key of an RFC 6750 error code (`invalid_token`,
/// `insufficient_scope`), which the bearer challenge repeats.
pub(crate) const BEARER_ERROR: &str = "bearerError";
/// The key of its description.
pub(crate) const BEARER_ERROR_DESCRIPTION: &str = "bearerErrorDescription";

/// Adds `Retry-After` when the error says how long to wait and the bearer challenge to a 401
/// (RFC 9110 §11.6.1 requires one) or to a refusal with an RFC 6750 error code, and marks
/// refusals for the metrics.
fn with_error_headers(mut r: Response, e: &A2aError) -> Response {
    if let Some(secs) = e.retry_after_secs() {
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    if let Some(challenge) = bearer_challenge(e) {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
    }
    // Errors with a server-specific reason are refusals: mark them for the metrics.
    if let Some(reason) = e.reason {
        r.extensions_mut().insert(RefusalReason(reason));
    }
    r
}

/// `Bearer realm="ferry"`, with `error` and `error_description` when the error carries an
/// RFC 6750 code (a description loses the characters a quoted string cannot hold).
fn bearer_challenge(e: &A2aError) -> Option<HeaderValue> {
    let code = e.metadata.get(BEARER_ERROR).map(String::as_str);
    if code.is_none() && e.kind != ErrorKind::Unauthenticated {
        return None;
    }
    let mut challenge = String::from("Bearer realm=\"ferry\"");
    if let Some(code) = code {
        challenge.push_str(&format!(", error=\"{}\"", quotable(code)));
        if let Some(description) = e.metadata.get(BEARER_ERROR_DESCRIPTION) {
            challenge.push_str(&format!(
                ", error_description=\"{}\"",
                quotable(description)
            ));
        }
    }
    HeaderValue::from_str(&challenge)
        .ok()
        .or_else(|| Some(HeaderValue::from_static("Bearer realm=\"ferry\"")))
}

/// `text` with only what an RFC 6750 quoted string may hold (printable ASCII without `"` and
/// `\`).
fn quotable(text: &str) -> String {
    text.chars()
        .filter(|c| (' '..='~').contains(c) && *c != '"' && *c != '\\')
        .collect()
}

/// Why a request was refused, put on the response for the metrics.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RefusalReason(pub &'static str);

fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// A JSON-RPC error response, with the HTTP status the error's kind gives the JSON-RPC
/// binding (200, except the server's and the transport's own conditions).
pub(crate) fn jsonrpc_error(
    id: &serde_json::Value,
    e: &A2aError,
    rid: Option<&RequestId>,
) -> Response {
    jsonrpc_error_as(id, e, rid, ferry_proto::jsonrpc_error_body)
}

/// [`jsonrpc_error`] with the body written by `body` (v0.3 writes its own `error` object).
pub(crate) fn jsonrpc_error_as(
    id: &serde_json::Value,
    e: &A2aError,
    rid: Option<&RequestId>,
    body: fn(&serde_json::Value, &A2aError) -> Vec<u8>,
) -> Response {
    let e = with_request_id(e, rid);
    with_error_headers(json(status(e.kind.jsonrpc_http_status()), body(id, &e)), &e)
}

/// An AIP-193 error response with the status of `table`, the request id in `ErrorInfo` and as
/// a top-level `requestId`. Also what the front door and extensions answer with (their kinds'
/// statuses are the same in every table).
pub(crate) fn rest_error(e: &A2aError, table: ErrorTable, rid: Option<&RequestId>) -> Response {
    let e = with_request_id(e, rid);
    let mut body = e.to_rest_body(table);
    if let (Some(rid), Some(obj)) = (rid, body.as_object_mut()) {
        obj.insert("requestId".into(), rid.as_str().into());
    }
    with_error_headers(
        json(
            status(e.kind.http_status(table)),
            serde_json::to_vec(&body).unwrap_or_default(),
        ),
        &e,
    )
}

/// Reads a request body within `limit` bytes; the error is a 413 ([`ErrorKind::PayloadTooLarge`]).
///
/// A body that declares a larger `Content-Length` is refused before any of it is read, so the
/// answer comes at once (not when the client has sent a megabyte, or at the request timeout)
/// and a client that sent `Expect: 100-continue` gets the 413 instead of `100 Continue`
/// (hyper sends that only when the body is first polled). Chunked bodies are cut off at the
/// limit as they arrive.
pub async fn read_body(body: Body, limit: usize) -> Result<bytes::Bytes, A2aError> {
    use axum::body::HttpBody as _;
    let too_large = |declared: Option<u64>| {
        let message = match declared {
            Some(n) => format!("the request body of {n} bytes is over the limit of {limit} bytes"),
            None => format!("the request body could not be read within the limit of {limit} bytes"),
        };
        A2aError::new(ErrorKind::PayloadTooLarge, message)
            .with_meta("maxBodyBytes", limit.to_string())
    };
    let declared = body.size_hint().lower();
    if declared > limit as u64 {
        return Err(too_large(Some(declared)));
    }
    axum::body::to_bytes(body, limit)
        .await
        .map_err(|_| too_large(None))
}
