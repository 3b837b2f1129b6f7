//! Small response builders shared by the bindings.

use crate::params::EXTENSIONS_HEADER;
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

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
pub fn with_extensions(mut r: Response, activated: &[String]) -> Response {
    if !activated.is_empty()
        && let Ok(v) = HeaderValue::from_str(&activated.join(", "))
    {
        r.headers_mut().insert(EXTENSIONS_HEADER, v);
    }
    r
}

/// True when a request content type is one we read as JSON (`application/json`,
/// `application/a2a+json`, any `+json`), or absent.
pub fn is_json_content_type(value: Option<&HeaderValue>) -> bool {
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
