//! The `cdp-config/v1` extension (`urn:ferry:ext:cdp-config:v1`): orchestrators register the
//! browser (CDP) endpoints an agent must use, at `/ext/cdp-config`, behind the same auth as the
//! RPC endpoint. Each turn sees a detached snapshot of the registry.
//!
//! - `POST {name, http_url, ws_url, headers?, metadata?}` adds an endpoint (a known name is
//!   replaced);
//! - `GET` lists `{"cdp_endpoints": {name: {has_headers, metadata}}}` — never URLs or header
//!   values, which often carry a credential;
//! - `DELETE {name}` removes one; a name that is not there answers `absent`, not an error.
//!
//! It plugs into the server through the extension seam ([`ferry_server::ServerExtension`]): the
//! card entry, the route behind the front door, and the [`CdpEndpoints`] snapshot each turn
//! reads with `ctx.extension::<CdpEndpoints>()`. Neither the server nor the agent API knows
//! it by name.
//!
//! ```no_run
//! use ferry_cdp_config::CdpConfig;
//! use ferry_server::A2aServer;
//! use std::sync::Arc;
//!
//! # async fn run(agent: Arc<dyn ferry_agent::AgentExecutor>) -> Result<(), ferry_server::ServerError> {
//! let server = A2aServer::builder(agent)
//!     .extension(Arc::new(CdpConfig::new(false)))
//!     .bind()
//!     .await?;
//! # Ok(()) }
//! ```

use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode};
use axum::response::Response;
use ferry_agent::TurnData;
use ferry_browser::{CdpEndpoint, CdpEndpoints};
use ferry_proto::{A2aError, AgentExtension, ErrorKind, Struct};
use ferry_server::decode::{self, BodyLimits};
use ferry_server::extension::{RequestId, error_response, json_response as json, read_body};
use ferry_server::{ServerExtension, TurnDataSource};
use parking_lot::RwLock;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The extension's URI.
pub const CDP_CONFIG_URI: &str = "urn:ferry:ext:cdp-config:v1";
/// Where the extension is served.
pub const CDP_CONFIG_PATH: &str = "/ext/cdp-config";
/// Largest registration body.
const MAX_BODY: usize = 64 * 1024;

/// The registered endpoints. Reads clone an `Arc` (a running turn keeps its snapshot);
/// writes replace the map.
#[derive(Debug, Default)]
pub struct CdpRegistry {
    endpoints: RwLock<CdpEndpoints>,
}

impl CdpRegistry {
    /// The current endpoints, detached from later changes.
    pub fn snapshot(&self) -> CdpEndpoints {
        self.endpoints.read().clone()
    }

    /// Adds or replaces an endpoint; true when it replaced one.
    fn put(&self, endpoint: CdpEndpoint) -> bool {
        let mut guard = self.endpoints.write();
        let mut map = BTreeMap::clone(&guard.0);
        let replaced = map.insert(endpoint.name.clone(), endpoint).is_some();
        *guard = CdpEndpoints(Arc::new(map));
        replaced
    }

    /// Removes an endpoint; true when it was there.
    fn remove(&self, name: &str) -> bool {
        let mut guard = self.endpoints.write();
        if !guard.0.contains_key(name) {
            return false;
        }
        let mut map = BTreeMap::clone(&guard.0);
        map.remove(name);
        *guard = CdpEndpoints(Arc::new(map));
        true
    }
}

/// A registration as posted.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Registration {
    name: String,
    http_url: String,
    ws_url: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    metadata: Option<Struct>,
}

/// A removal as posted.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Removal {
    name: String,
}

/// Lower-case letters and digits in runs joined by single hyphens (the skill-name pattern).
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.split('-').all(|run| {
            !run.is_empty()
                && run
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// An absolute URL with one of `schemes`, a host, and (when given) a valid port.
///
/// Whitespace and control characters are refused rather than left to the URL parser, which
/// strips them (` ws://h/` and `ws://h\n/` parse as `ws://h/`): the URL stored is the URL
/// checked, for every later reader.
fn check_url(field: &str, value: &str, schemes: &[&str]) -> Result<(), String> {
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "{field} {value:?} contains whitespace or a control character"
        ));
    }
    let url = url::Url::parse(value)
        .map_err(|e| format!("{field} {value:?} is not an absolute URL: {e}"))?;
    if !schemes.contains(&url.scheme()) {
        return Err(format!(
            "{field} must use {}, not {:?}",
            schemes.join(" or "),
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("{field} {value:?} has no host"));
    }
    Ok(())
}

fn validate(r: &Registration) -> Result<(), (String, String)> {
    let bad = |field: &str, message: String| (field.to_owned(), message);
    if !valid_name(&r.name) {
        return Err(bad(
            "name",
            format!(
                "name {:?} must be lower-case letters and digits joined by single hyphens",
                r.name
            ),
        ));
    }
    check_url("http_url", &r.http_url, &["http", "https"]).map_err(|m| bad("http_url", m))?;
    check_url("ws_url", &r.ws_url, &["ws", "wss"]).map_err(|m| bad("ws_url", m))?;
    for (k, v) in &r.headers {
        if HeaderName::from_bytes(k.as_bytes()).is_err() || HeaderValue::from_str(v).is_err() {
            return Err(bad(
                "headers",
                format!("header {k:?} is not a valid HTTP header"),
            ));
        }
    }
    Ok(())
}

/// Reads a registration body: strict JSON (no member twice, an object), then the rules of
/// [`validate`]. The error is the 400 the endpoint answers, naming the field.
pub fn parse_registration(bytes: &[u8], limits: BodyLimits) -> Result<CdpEndpoint, A2aError> {
    let r: Registration =
        decode::object(bytes, limits).map_err(|e| body_error("registration", e))?;
    validate(&r).map_err(|(field, message)| {
        A2aError::invalid_params(message).with_violation(field, "invalid")
    })?;
    Ok(CdpEndpoint {
        name: r.name,
        http_url: r.http_url,
        ws_url: r.ws_url,
        headers: r.headers,
        metadata: r.metadata,
    })
}

/// Reads a removal body (`{"name": …}`); returns the name.
pub fn parse_removal(bytes: &[u8], limits: BodyLimits) -> Result<String, A2aError> {
    let r: Removal = decode::object(bytes, limits).map_err(|e| body_error("removal", e))?;
    Ok(r.name)
}

/// The extension: its registry, and whether the card marks it required.
#[derive(Debug, Default)]
pub struct CdpConfig {
    registry: Arc<CdpRegistry>,
    required: bool,
}

impl CdpConfig {
    /// The extension with an empty registry; `required` marks it required in the card
    /// (requests must then activate it).
    pub fn new(required: bool) -> Self {
        Self {
            registry: Arc::default(),
            required,
        }
    }

    /// The registry (what a turn would see now, for tests and the CLI).
    pub fn registry(&self) -> &CdpRegistry {
        &self.registry
    }
}

impl ServerExtension for CdpConfig {
    fn card_entry(&self) -> AgentExtension {
        AgentExtension {
            uri: CDP_CONFIG_URI.into(),
            description:
                "Register the browser (CDP) endpoints this agent must use at /ext/cdp-config."
                    .into(),
            required: self.required,
            params: None,
        }
    }

    fn routes(self: Arc<Self>, limits: BodyLimits) -> axum::Router {
        let route = Route {
            registry: self.registry.clone(),
            limits: BodyLimits {
                max_bytes: MAX_BODY,
                ..limits
            },
        };
        axum::Router::new()
            .route(CDP_CONFIG_PATH, axum::routing::any(handle))
            .with_state(Arc::new(route))
    }

    fn turn_data(self: Arc<Self>) -> Option<Arc<dyn TurnDataSource>> {
        Some(self.registry.clone())
    }
}

impl TurnDataSource for CdpRegistry {
    fn fill(&self, data: &mut TurnData) {
        data.insert(self.snapshot());
    }
}

/// What the route needs.
#[derive(Debug)]
struct Route {
    registry: Arc<CdpRegistry>,
    limits: BodyLimits,
}

/// Handles `/ext/cdp-config`.
async fn handle(State(route): State<Arc<Route>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let rid = parts.extensions.get::<RequestId>().cloned();
    let rid = rid.as_ref();
    let registry = &route.registry;
    let answer = |status: &str, name: &str| {
        json(
            StatusCode::OK,
            serde_json::to_vec(&json!({"status": status, "name": name})).unwrap_or_default(),
        )
    };
    match parts.method {
        Method::GET => {
            let listed: serde_json::Map<String, Value> = registry
                .snapshot()
                .0
                .values()
                .map(|e| {
                    (
                        e.name.clone(),
                        json!({"has_headers": !e.headers.is_empty(), "metadata": e.metadata}),
                    )
                })
                .collect();
            json(
                StatusCode::OK,
                serde_json::to_vec(&json!({"cdp_endpoints": listed})).unwrap_or_default(),
            )
        }
        Method::POST | Method::DELETE => {
            let limits = route.limits;
            let bytes = match read_body(body, MAX_BODY).await {
                Ok(b) => b,
                Err(e) => return error_response(&e, rid),
            };
            let refused = |e: A2aError| error_response(&e, rid);
            if parts.method == Method::POST {
                let endpoint = match parse_registration(&bytes, limits) {
                    Ok(endpoint) => endpoint,
                    Err(e) => return refused(e),
                };
                let name = endpoint.name.clone();
                let status = if registry.put(endpoint) {
                    "replaced"
                } else {
                    "added"
                };
                answer(status, &name)
            } else {
                let name = match parse_removal(&bytes, limits) {
                    Ok(name) => name,
                    Err(e) => return refused(e),
                };
                let status = if registry.remove(&name) {
                    "removed"
                } else {
                    "absent"
                };
                answer(status, &name)
            }
        }
        _ => error_response(
            &A2aError::new(ErrorKind::MethodNotAllowed, "use GET, POST or DELETE"),
            rid,
        ),
    }
}

/// A body that did not decode, with the decoder's words; a refusal of the whole body names
/// the field serde names (`unknown field `x``, `missing field `y``).
fn body_error(what: &str, mut e: A2aError) -> A2aError {
    e.message = format!("invalid {what}: {}", e.message);
    match e.field_violations.first_mut() {
        Some((field, _)) if field.is_empty() => {
            *field = e.message.split('`').nth(1).unwrap_or("body").to_owned();
        }
        Some(_) => {}
        None => e = e.with_violation("body", "invalid"),
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_urls() {
        for ok in ["chromium", "chromium-buyer", "a1-b2-c3"] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in ["", "Chromium", "a--b", "-a", "a-", "a_b", "a b"] {
            assert!(!valid_name(bad), "{bad}");
        }
        assert!(check_url("http_url", "http://127.0.0.1:9222", &["http", "https"]).is_ok());
        assert!(check_url("http_url", "http://:8080/", &["http", "https"]).is_err());
        assert!(check_url("http_url", "http://h:port/", &["http", "https"]).is_err());
        assert!(check_url("http_url", "http://h:99999/", &["http", "https"]).is_err());
        assert!(check_url("ws_url", "http://h:9222/", &["ws", "wss"]).is_err());
        assert!(check_url("ws_url", "ws://h:9222/devtools/browser/x", &["ws", "wss"]).is_ok());
        assert!(
            check_url("ws_url", "wS://h:9222/", &["ws", "wss"]).is_ok(),
            "any case"
        );
        // Found by the cdp_config fuzz target: the URL parser strips these, the registry did not.
        for bad in [
            " ws://h:9222/",
            "ws://h:9222/ ",
            "ws://h:92\n22/",
            "ws://h:9222/\t",
        ] {
            assert!(check_url("ws_url", bad, &["ws", "wss"]).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn snapshots_are_detached() {
        let r = CdpRegistry::default();
        let e = |name: &str| CdpEndpoint {
            name: name.into(),
            http_url: "http://h:1".into(),
            ws_url: "ws://h:1".into(),
            headers: BTreeMap::new(),
            metadata: None,
        };
        assert!(!r.put(e("a")));
        let before = r.snapshot();
        assert!(r.put(e("a")));
        r.put(e("b"));
        assert_eq!(before.len(), 1, "a running turn keeps what it saw");
        assert_eq!(r.snapshot().len(), 2);
        assert!(r.remove("a"));
        assert!(!r.remove("a"), "removing again is absent, not an error");
    }
}
