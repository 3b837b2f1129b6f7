//! The card members of v0.3, next to v1.0's on a card that serves both, and a v0.3-only card
//! read as v1.0.

use super::CARD_PROTOCOL_VERSION;
use crate::{AgentCard, BINDING_HTTP_JSON, BINDING_JSONRPC, SecurityScheme};
use serde_json::{Map, Value, json};

/// The top-level members v0.3 clients read and v1.0 has not (besides those inside
/// `securitySchemes`).
pub const CARD_MEMBERS: [&str; 6] = [
    "url",
    "protocolVersion",
    "preferredTransport",
    "additionalInterfaces",
    "supportsAuthenticatedExtendedCard",
    "security",
];

/// The oneof members of a v1.0 security scheme.
const SCHEME_WRAPPERS: [&str; 5] = [
    "apiKeySecurityScheme",
    "httpAuthSecurityScheme",
    "oauth2SecurityScheme",
    "openIdConnectSecurityScheme",
    "mtlsSecurityScheme",
];

/// Where a server serves v0.3: its JSON-RPC endpoint and, when it serves v0.3 over HTTP+JSON,
/// that binding's base URL (the routes are below it: `{rest}/v1/message:send`, …).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Interfaces {
    /// The JSON-RPC endpoint (the card's top-level `url`).
    pub jsonrpc: String,
    /// The HTTP+JSON base URL, if served.
    pub rest: Option<String>,
}

impl Interfaces {
    /// Where `card` serves v0.3, read off its v1.0 interfaces: the first JSON-RPC one and the
    /// first HTTP+JSON one (v0.3 answers beside v1.0 at both). `None` without a JSON-RPC
    /// interface: v0.3's card needs one for its `url`.
    pub fn of(card: &AgentCard) -> Option<Interfaces> {
        let first = |binding: &str| {
            card.supported_interfaces
                .iter()
                .find(|i| i.protocol_binding == binding)
                .map(|i| i.url.clone())
        };
        Some(Interfaces {
            jsonrpc: first(BINDING_JSONRPC)?,
            rest: first(BINDING_HTTP_JSON),
        })
    }
}

/// Adds the v0.3 top-level members to a served v1.0 card (`card` is its JSON, `typed` the
/// same card), for a server that serves v0.3 at `at`: `url`, `protocolVersion`,
/// `preferredTransport`, `additionalInterfaces`, `supportsAuthenticatedExtendedCard` and
/// `security`, and in each security scheme its v0.3 `type` and members. A member the card
/// already has is left as it is. v1.0 parsers ignore them (spec §14, the official SDKs serve
/// the same), and card signatures never cover them: a verifier canonicalizes the typed card.
pub fn add_card_members(card: &mut Map<String, Value>, typed: &AgentCard, at: &Interfaces) {
    let mut add = |name: &str, value: Value| {
        card.entry(name.to_owned()).or_insert(value);
    };
    add("url", json!(at.jsonrpc));
    add("protocolVersion", json!(CARD_PROTOCOL_VERSION));
    add("preferredTransport", json!(BINDING_JSONRPC));
    let mut additional = vec![json!({"url": at.jsonrpc, "transport": BINDING_JSONRPC})];
    if let Some(rest) = &at.rest {
        additional.push(json!({"url": rest, "transport": BINDING_HTTP_JSON}));
    }
    add("additionalInterfaces", Value::Array(additional));
    if typed.capabilities.extended_agent_card == Some(true) {
        add("supportsAuthenticatedExtendedCard", json!(true));
    }
    if !typed.security_requirements.is_empty() {
        let security: Vec<Value> = typed
            .security_requirements
            .iter()
            .map(|r| {
                Value::Object(
                    r.schemes
                        .iter()
                        .map(|(name, scopes)| (name.clone(), json!(scopes.list)))
                        .collect(),
                )
            })
            .collect();
        add("security", Value::Array(security));
    }
    let Some(Value::Object(schemes)) = card.get_mut("securitySchemes") else {
        return;
    };
    for (name, scheme) in &typed.security_schemes {
        if let Some(Value::Object(served)) = schemes.get_mut(name) {
            for (k, v) in security_scheme(scheme) {
                served.entry(k).or_insert(v);
            }
        }
    }
}

/// A v1.0 security scheme in v0.3's OpenAPI-like form: `type` and the scheme's members (an
/// API key's `location` is v0.3's `in`).
pub fn security_scheme(scheme: &SecurityScheme) -> Map<String, Value> {
    let (kind, inner) = match scheme {
        SecurityScheme::ApiKeySecurityScheme(s) => ("apiKey", serde_json::to_value(s)),
        SecurityScheme::HttpAuthSecurityScheme(s) => ("http", serde_json::to_value(s)),
        SecurityScheme::Oauth2SecurityScheme(s) => ("oauth2", serde_json::to_value(s)),
        SecurityScheme::OpenIdConnectSecurityScheme(s) => {
            ("openIdConnect", serde_json::to_value(s))
        }
        SecurityScheme::MtlsSecurityScheme(s) => ("mutualTLS", serde_json::to_value(s)),
    };
    let mut out = match inner {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    if let Some(location) = out.remove("location") {
        out.insert("in".into(), location);
    }
    out.insert("type".into(), json!(kind));
    out
}

/// Removes what [`add_card_members`] adds from a card that serves v1.0 (it has
/// `supportedInterfaces`): the v0.3 members are not part of the v1.0 card, so no signature
/// covers them and no digest counts them (spec §14; the official SDKs' verifiers drop them
/// the same way). A v0.3-only card is left whole: there they are the card. True when the
/// card serves v1.0.
pub fn strip_card_members(card: &mut Map<String, Value>) -> bool {
    if !card.contains_key("supportedInterfaces") {
        return false;
    }
    for member in CARD_MEMBERS {
        card.remove(member);
    }
    if let Some(Value::Object(schemes)) = card.get_mut("securitySchemes") {
        for scheme in schemes.values_mut() {
            let Value::Object(scheme) = scheme else {
                continue;
            };
            if SCHEME_WRAPPERS.iter().any(|w| scheme.contains_key(*w)) {
                scheme.retain(|k, _| SCHEME_WRAPPERS.contains(&k.as_str()));
            }
        }
    }
    true
}

/// A v0.3-only card (a top-level `url`, no `supportedInterfaces`) written as the v1.0 card it
/// stands for: its interfaces (`url` with `preferredTransport`, then `additionalInterfaces`)
/// at protocol version 0.3, its security schemes in their oneof form, `security` as
/// `securityRequirements`, `supportsAuthenticatedExtendedCard` as
/// `capabilities.extendedAgentCard`. `None` for any other card.
pub fn card_to_v1(card: &Value) -> Option<Value> {
    let Value::Object(card) = card else {
        return None;
    };
    if card.contains_key("supportedInterfaces") {
        return None;
    }
    let url = card.get("url")?.as_str()?.to_owned();
    let mut v1 = card.clone();
    for member in CARD_MEMBERS {
        v1.remove(member);
    }
    let transport = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .unwrap_or(BINDING_JSONRPC)
            .to_owned()
    };
    let interface = |url: &str, binding: String| json!({"url": url, "protocolBinding": binding, "protocolVersion": super::VERSION});
    let mut interfaces = vec![interface(&url, transport(card.get("preferredTransport")))];
    for extra in card
        .get("additionalInterfaces")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(u) = extra.get("url").and_then(Value::as_str) {
            let candidate = interface(u, transport(extra.get("transport")));
            if !interfaces.contains(&candidate) {
                interfaces.push(candidate);
            }
        }
    }
    v1.insert("supportedInterfaces".into(), Value::Array(interfaces));
    if let Some(Value::Object(caps)) = v1.get_mut("capabilities") {
        caps.remove("stateTransitionHistory");
        if card.get("supportsAuthenticatedExtendedCard") == Some(&Value::Bool(true)) {
            caps.insert("extendedAgentCard".into(), Value::Bool(true));
        }
    }
    if let Some(Value::Object(schemes)) = v1.get_mut("securitySchemes") {
        for scheme in schemes.values_mut() {
            *scheme = scheme_to_v1(scheme);
        }
    }
    if let Some(Value::Array(security)) = card.get("security") {
        let requirements: Vec<Value> = security
            .iter()
            .filter_map(Value::as_object)
            .map(|r| {
                let schemes: Map<String, Value> = r
                    .iter()
                    .map(|(name, scopes)| (name.clone(), json!({"list": scopes})))
                    .collect();
                json!({"schemes": schemes})
            })
            .collect();
        v1.insert("securityRequirements".into(), Value::Array(requirements));
    }
    Some(Value::Object(v1))
}

/// One v0.3 security scheme (`{"type": "http", …}`) in its v1.0 oneof form; anything else
/// is kept as it is (and refused, if wrong, by the typed card).
fn scheme_to_v1(scheme: &Value) -> Value {
    let Some(mut inner) = scheme.as_object().cloned() else {
        return scheme.clone();
    };
    let wrapper = match inner.remove("type").as_ref().and_then(Value::as_str) {
        Some("apiKey") => "apiKeySecurityScheme",
        Some("http") => "httpAuthSecurityScheme",
        Some("oauth2") => "oauth2SecurityScheme",
        Some("openIdConnect") => "openIdConnectSecurityScheme",
        Some("mutualTLS") => "mtlsSecurityScheme",
        _ => return scheme.clone(),
    };
    if let Some(location) = inner.remove("in") {
        inner.insert("location".into(), location);
    }
    json!({ wrapper: inner })
}
