//! The agent card: built once from the configuration and the agent's description, served with
//! caching headers (`Cache-Control: max-age`, `ETag`, `Last-Modified`, 304 on `If-None-Match`).

use crate::config::ServerConfig;
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use ferry_agent::AgentDescription;
use ferry_proto::{
    AgentCapabilities, AgentCard, AgentExtension, AgentInterface, BINDING_GRPC, BINDING_HTTP_JSON,
    BINDING_JSONRPC, HttpAuthSecurityScheme, MutualTlsSecurityScheme, OpenIdConnectSecurityScheme,
    PROTOCOL_VERSION, SecurityRequirement, SecurityScheme, StringList, v03,
};

pub use ferry_proto::WELL_KNOWN_CARD_PATH;

/// A card ready to serve: the bytes and their validators, in two forms when v0.3 is served
/// (see [`ServedCard::respond`]).
#[derive(Debug, Clone)]
pub(crate) struct ServedCard {
    /// Where v0.3 clients call (the card's v0.3 `url`); empty when v0.3 is not served.
    #[cfg(feature = "v03")]
    v03_interfaces: v03::Interfaces,
    v1: CardForm,
    /// The card with v0.3's members, when v0.3 is served.
    dual: Option<CardForm>,
    last_modified: HeaderValue,
    cache_control: HeaderValue,
}

/// One form of the card: its bytes and their ETag.
#[derive(Debug, Clone)]
struct CardForm {
    bytes: Bytes,
    etag: HeaderValue,
}

impl CardForm {
    fn new(bytes: Vec<u8>) -> Self {
        let etag = HeaderValue::from_str(&format!("\"{:016x}\"", fnv1a(&bytes)))
            .unwrap_or_else(|_| HeaderValue::from_static("\"0\""));
        Self {
            bytes: Bytes::from(bytes),
            etag,
        }
    }
}

/// Whether there is an extended card to serve: a card file configured (which needs a token),
/// or extended skills of the agent on a server with a token (without one nobody could be
/// shown them).
pub(crate) fn serves_extended_card(description: &AgentDescription, config: &ServerConfig) -> bool {
    config.extended_card.is_some()
        || (config.has_token() && !description.extended_skills.is_empty())
}

/// The extended card of `card`: the configured file's members over the public card's, or the
/// public card with the agent's extended skills after its skills; `None` when
/// [`serves_extended_card`] says there is none.
pub(crate) fn extended_card(
    card: &AgentCard,
    description: &AgentDescription,
    config: &ServerConfig,
) -> Result<Option<AgentCard>, crate::signing::SigningError> {
    if let Some(path) = &config.extended_card {
        return crate::signing::extended_card(card, path).map(Some);
    }
    if !serves_extended_card(description, config) {
        return Ok(None);
    }
    let mut extended = card.clone();
    extended
        .skills
        .extend(description.extended_skills.iter().cloned());
    Ok(Some(extended))
}

/// Builds the public card: the interfaces (JSON-RPC first) under `base_url`, the agent's
/// description, the extensions the server's extensions declare (`extension_entries`, after
/// the agent's own), and the capabilities this server implements.
pub(crate) fn build_card(
    description: &AgentDescription,
    config: &ServerConfig,
    base_url: &str,
    extension_entries: &[AgentExtension],
) -> AgentCard {
    let base = base_url.trim_end_matches('/');
    let mut extensions: Vec<AgentExtension> = description.extensions.clone();
    for entry in extension_entries {
        if !extensions.iter().any(|e| e.uri == entry.uri) {
            extensions.push(entry.clone());
        }
    }
    for uri in &config.required_extensions {
        match extensions.iter_mut().find(|e| e.uri == *uri) {
            Some(e) => e.required = true,
            None => extensions.push(AgentExtension {
                uri: uri.clone(),
                description: "required by this server's configuration".into(),
                required: true,
                params: None,
            }),
        }
    }
    let (security_schemes, security_requirements) = security(config);
    AgentCard {
        name: description.name.clone(),
        description: description.description.clone(),
        supported_interfaces: interfaces(config, base),
        provider: None,
        version: description.version.clone(),
        documentation_url: None,
        capabilities: AgentCapabilities {
            streaming: Some(description.streaming),
            push_notifications: Some(false),
            extensions,
            extended_agent_card: serves_extended_card(description, config).then_some(true),
        },
        security_schemes,
        security_requirements,
        default_input_modes: description.input_modes.clone(),
        default_output_modes: description.output_modes.clone(),
        skills: description.skills.clone(),
        signatures: Vec::new(),
        icon_url: None,
    }
}

/// The card's security: with a static token, every call needs `Authorization: Bearer …`
/// (never the token itself on the card); with a provider, its access tokens
/// (`openIdConnect`, naming its discovery document). Either suffices, so each is its own
/// requirement. Where anonymous callers are let in, the schemes are declared (for the
/// extended card) and none is required.
fn security(
    config: &ServerConfig,
) -> (
    std::collections::BTreeMap<String, SecurityScheme>,
    Vec<SecurityRequirement>,
) {
    let mut schemes = std::collections::BTreeMap::new();
    if config.has_static_token() {
        let scheme = SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
            description: "A bearer token given to you by the operator of this agent.".into(),
            scheme: "Bearer".into(),
            bearer_format: String::new(),
        });
        schemes.insert("bearer".to_owned(), scheme);
    }
    if let Some(oidc) = &config.auth.oidc {
        let scheme = SecurityScheme::OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme {
            description: format!(
                "An access token of this provider for the audience {:?}, sent as a bearer token.",
                oidc.audience
            ),
            open_id_connect_url: ferry_trust::oidc::discovery_url(&oidc.issuer),
        });
        schemes.insert("oidc".to_owned(), scheme);
    }
    if config.accepts_client_certs() {
        let scheme = SecurityScheme::MtlsSecurityScheme(MutualTlsSecurityScheme {
            description: "A client certificate of the CA this agent's operator names; its \
                          subject's common name is the caller."
                .into(),
        });
        schemes.insert("mtls".to_owned(), scheme);
    }
    let requirements = if config.allow_anonymous {
        Vec::new()
    } else {
        schemes
            .keys()
            .map(|name| SecurityRequirement {
                schemes: [(name.clone(), StringList::default())].into(),
            })
            .collect()
    };
    (schemes, requirements)
}

/// The interfaces, JSON-RPC first (the one a client picks when it speaks every binding),
/// then REST, then gRPC at the `host:port` of the base URL (gRPC has no path).
fn interfaces(config: &ServerConfig, base: &str) -> Vec<AgentInterface> {
    let mut interfaces = vec![
        AgentInterface {
            url: format!("{base}{}", config.jsonrpc_path),
            protocol_binding: BINDING_JSONRPC.into(),
            tenant: String::new(),
            protocol_version: PROTOCOL_VERSION.into(),
        },
        AgentInterface {
            url: format!("{base}{}", config.rest_path),
            protocol_binding: BINDING_HTTP_JSON.into(),
            tenant: String::new(),
            protocol_version: PROTOCOL_VERSION.into(),
        },
    ];
    if config.lists_grpc() {
        interfaces.push(AgentInterface {
            url: grpc_target(base),
            protocol_binding: BINDING_GRPC.into(),
            tenant: String::new(),
            protocol_version: PROTOCOL_VERSION.into(),
        });
    }
    interfaces
}

/// `http://h:p/x` → `h:p`; without a port, the scheme's (`https://h` → `h:443`), since a
/// gRPC target always names one.
fn grpc_target(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let host_end = authority.rfind(']').unwrap_or(0);
    if authority[host_end..].contains(':') {
        authority.to_owned()
    } else {
        let port = if scheme.eq_ignore_ascii_case("https") {
            443
        } else {
            80
        };
        format!("{authority}:{port}")
    }
}

impl ServedCard {
    /// Serializes `card` once and derives its validators. With `v03`, the card is also kept
    /// with v0.3's top-level members (see [`v03::add_card_members`]), for v0.3 clients; v1.0
    /// clients and signature verifiers ignore them.
    pub(crate) fn new(card: AgentCard, max_age_secs: u64, v03: bool) -> Self {
        let v03_interfaces = if v03 {
            v03::Interfaces::of(&card).unwrap_or_default()
        } else {
            v03::Interfaces::default()
        };
        let v1 = CardForm::new(serde_json::to_vec(&card).unwrap_or_default());
        let dual = match serde_json::to_value(&card) {
            Ok(serde_json::Value::Object(mut served)) if !v03_interfaces.jsonrpc.is_empty() => {
                v03::add_card_members(&mut served, &card, &v03_interfaces);
                serde_json::to_vec(&served).ok().map(CardForm::new)
            }
            _ => None,
        };
        let now = jiff::Timestamp::now();
        let last_modified =
            HeaderValue::from_str(&now.strftime("%a, %d %b %Y %H:%M:%S GMT").to_string())
                .unwrap_or_else(|_| HeaderValue::from_static("Thu, 01 Jan 1970 00:00:00 GMT"));
        let cache_control = HeaderValue::from_str(&format!("public, max-age={max_age_secs}"))
            .unwrap_or_else(|_| HeaderValue::from_static("public, max-age=300"));
        Self {
            #[cfg(feature = "v03")]
            v03_interfaces,
            v1,
            dual,
            last_modified,
            cache_control,
        }
    }

    /// Where v0.3 clients call; empty when v0.3 is not served.
    #[cfg(feature = "v03")]
    pub(crate) fn v03_interfaces(&self) -> &v03::Interfaces {
        &self.v03_interfaces
    }

    /// The response to a GET of the card, honouring `If-None-Match`. A request that speaks
    /// v0.3 (`speaks_v03`: it states no `A2A-Version`, which the spec reads as v0.3, or `0.3`)
    /// gets the card with v0.3's members when v0.3 is served (v0.3 clients never send the
    /// header and need them); any other gets the v1.0 card alone. `Vary: A2A-Version` says so
    /// to caches.
    pub(crate) fn respond(&self, speaks_v03: bool, request_headers: &HeaderMap) -> Response {
        let form = match &self.dual {
            Some(dual) if speaks_v03 => dual,
            _ => &self.v1,
        };
        let not_modified = request_headers
            .get_all(header::IF_NONE_MATCH)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|t| t.trim().trim_start_matches("W/"))
            .any(|t| t == "*" || form.etag.to_str().is_ok_and(|e| e == t));
        let mut builder = Response::builder()
            .header(header::CACHE_CONTROL, self.cache_control.clone())
            .header(header::ETAG, form.etag.clone())
            .header(header::LAST_MODIFIED, self.last_modified.clone());
        if self.dual.is_some() {
            builder = builder.header(header::VARY, "A2A-Version");
        }
        let body = if not_modified {
            builder = builder.status(StatusCode::NOT_MODIFIED);
            Body::empty()
        } else {
            builder = builder
                .status(StatusCode::OK)
                .header(header::CONTENT_TYPE, "application/json");
            Body::from(form.bytes.clone())
        };
        builder.body(body).unwrap_or_default()
    }
}

/// FNV-1a 64: a stable content hash for the ETag (not a security boundary).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::grpc_target;

    #[test]
    fn the_grpc_target_is_host_and_port() {
        assert_eq!(grpc_target("http://127.0.0.1:8765"), "127.0.0.1:8765");
        assert_eq!(
            grpc_target("https://agent.example/a2a/v1"),
            "agent.example:443"
        );
        assert_eq!(grpc_target("http://agent.example"), "agent.example:80");
        assert_eq!(grpc_target("http://[::1]:9000/x"), "[::1]:9000");
        assert_eq!(grpc_target("https://[::1]/x"), "[::1]:443");
    }
}
