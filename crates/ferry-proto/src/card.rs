//! The agent card and its parts (spec §5), and security schemes (spec §10).

use crate::de;
use crate::message::{ProtoMessage, proto_messages};
use crate::task::Struct;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{Error, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The interface name of the JSON-RPC 2.0 binding.
pub const BINDING_JSONRPC: &str = "JSONRPC";
/// The interface name of the HTTP+JSON (REST) binding.
pub const BINDING_HTTP_JSON: &str = "HTTP+JSON";
/// The interface name of the gRPC binding.
pub const BINDING_GRPC: &str = "GRPC";

/// An agent's self-description, served at `/.well-known/agent-card.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct AgentCard {
    /// Human-readable name.
    pub name: String,
    /// What the agent does (read as empty when absent, as ProtoJSON omits an empty string).
    #[serde(default)]
    pub description: String,
    /// Where and how to call it; the first entry is preferred.
    #[serde(deserialize_with = "de::vec_or_null")]
    pub supported_interfaces: Vec<AgentInterface>,
    /// Who provides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// The agent's own version.
    pub version: String,
    /// Documentation URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
    /// What the agent supports.
    pub capabilities: AgentCapabilities,
    /// Authentication schemes by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    /// Alternatives (OR) of scheme sets (AND).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "de::vec_or_null"
    )]
    pub security_requirements: Vec<SecurityRequirement>,
    /// Input media types.
    #[serde(default, deserialize_with = "de::vec_or_null")]
    pub default_input_modes: Vec<String>,
    /// Output media types.
    #[serde(default, deserialize_with = "de::vec_or_null")]
    pub default_output_modes: Vec<String>,
    /// What the agent is good at.
    #[serde(default, deserialize_with = "de::vec_or_null")]
    pub skills: Vec<AgentSkill>,
    /// JWS signatures over the card.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "de::vec_or_null"
    )]
    pub signatures: Vec<AgentCardSignature>,
    /// Icon URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon_url: Option<String>,
}

/// One way to reach the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct AgentInterface {
    /// Endpoint URL.
    pub url: String,
    /// `JSONRPC`, `HTTP+JSON`, `GRPC` or a URI.
    pub protocol_binding: String,
    /// Tenant value clients must send.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub tenant: String,
    /// `Major.Minor`.
    pub protocol_version: String,
}

/// The organisation behind the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct AgentProvider {
    /// Website.
    pub url: String,
    /// Name.
    pub organization: String,
}

/// Optional protocol features.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// SendStreamingMessage and SubscribeToTask work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Push notification configs work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
    /// Extensions supported.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "de::vec_or_null"
    )]
    pub extensions: Vec<AgentExtension>,
    /// GetExtendedAgentCard works for authenticated callers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_agent_card: Option<bool>,
}

/// A protocol extension the agent supports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct AgentExtension {
    /// Identifying URI.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub uri: String,
    /// How the agent uses it.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub description: String,
    /// Clients must activate it.
    #[serde(default, skip_serializing_if = "de::is_false")]
    pub required: bool,
    /// Extension parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Struct>,
}

/// A focused ability of the agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct AgentSkill {
    /// Identifier.
    pub id: String,
    /// Name.
    pub name: String,
    /// Description (empty when absent).
    #[serde(default)]
    pub description: String,
    /// Keywords (empty when absent).
    #[serde(default, deserialize_with = "de::vec_or_null")]
    pub tags: Vec<String>,
    /// Example prompts.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "de::vec_or_null"
    )]
    pub examples: Vec<String>,
    /// Input media types (override the card's defaults).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "de::vec_or_null"
    )]
    pub input_modes: Vec<String>,
    /// Output media types (override the card's defaults).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "de::vec_or_null"
    )]
    pub output_modes: Vec<String>,
    /// Security needed for this skill.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "de::vec_or_null"
    )]
    pub security_requirements: Vec<SecurityRequirement>,
}

/// A JWS signature of the card (detached payload).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct AgentCardSignature {
    /// base64url protected header.
    pub protected: String,
    /// base64url signature.
    pub signature: String,
    /// Unprotected header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<Struct>,
}

/// A set of schemes that must all be satisfied, each with its scopes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct SecurityRequirement {
    /// Scheme name → required scopes.
    #[serde(default)]
    pub schemes: BTreeMap<String, StringList>,
}

/// A list of strings; emitted as `{"list":[…]}`, accepted also as a bare array (a2a-go).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StringList {
    /// The strings.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub list: Vec<String>,
}

impl<'de> Deserialize<'de> for StringList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// The wrapped form, `{"list": […]}`.
        #[derive(Deserialize)]
        struct Wrapped {
            #[serde(default, deserialize_with = "de::vec_or_null")]
            list: Vec<String>,
        }
        /// Reads `null`, a bare array of strings, or the wrapped form (never positionally).
        struct Forms;
        impl<'de> Visitor<'de> for Forms {
            type Value = StringList;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a StringList object or an array of strings")
            }
            fn visit_unit<E: Error>(self) -> Result<StringList, E> {
                Ok(StringList::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<StringList, A::Error> {
                let list = Vec::deserialize(SeqAccessDeserializer::new(seq))?;
                Ok(StringList { list })
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<StringList, A::Error> {
                let Wrapped { list } =
                    Wrapped::deserialize(ProtoMessage(MapAccessDeserializer::new(map)))?;
                Ok(StringList { list })
            }
        }
        d.deserialize_any(Forms)
    }
}

/// An authentication scheme (a oneof: exactly one member).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SecurityScheme {
    /// API key in a header, query parameter or cookie.
    ApiKeySecurityScheme(ApiKeySecurityScheme),
    /// HTTP authentication (Bearer, Basic, …).
    HttpAuthSecurityScheme(HttpAuthSecurityScheme),
    /// OAuth 2.0.
    Oauth2SecurityScheme(OAuth2SecurityScheme),
    /// OpenID Connect.
    OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme),
    /// Mutual TLS.
    MtlsSecurityScheme(MutualTlsSecurityScheme),
}

impl<'de> Deserialize<'de> for SecurityScheme {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire {
            #[serde(default)]
            api_key_security_scheme: Option<ApiKeySecurityScheme>,
            #[serde(default)]
            http_auth_security_scheme: Option<HttpAuthSecurityScheme>,
            #[serde(default)]
            oauth2_security_scheme: Option<OAuth2SecurityScheme>,
            #[serde(default)]
            open_id_connect_security_scheme: Option<OpenIdConnectSecurityScheme>,
            #[serde(default)]
            mtls_security_scheme: Option<MutualTlsSecurityScheme>,
        }
        let w = Wire::deserialize(ProtoMessage(d))?;
        let mut found = Vec::with_capacity(1);
        if let Some(s) = w.api_key_security_scheme {
            found.push(SecurityScheme::ApiKeySecurityScheme(s));
        }
        if let Some(s) = w.http_auth_security_scheme {
            found.push(SecurityScheme::HttpAuthSecurityScheme(s));
        }
        if let Some(s) = w.oauth2_security_scheme {
            found.push(SecurityScheme::Oauth2SecurityScheme(s));
        }
        if let Some(s) = w.open_id_connect_security_scheme {
            found.push(SecurityScheme::OpenIdConnectSecurityScheme(s));
        }
        if let Some(s) = w.mtls_security_scheme {
            found.push(SecurityScheme::MtlsSecurityScheme(s));
        }
        match (found.pop(), found.is_empty()) {
            (Some(s), true) => Ok(s),
            _ => Err(D::Error::custom(
                "a security scheme needs exactly one scheme member",
            )),
        }
    }
}

/// API key authentication.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct ApiKeySecurityScheme {
    /// Description.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub description: String,
    /// `query`, `header` or `cookie`.
    pub location: String,
    /// Parameter name.
    pub name: String,
}

/// HTTP authentication.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct HttpAuthSecurityScheme {
    /// Description.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub description: String,
    /// RFC 7235 scheme name, e.g. `Bearer`.
    pub scheme: String,
    /// Token format hint.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub bearer_format: String,
}

/// OAuth 2.0 authentication.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct OAuth2SecurityScheme {
    /// Description.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub description: String,
    /// The flow.
    pub flows: OAuthFlows,
    /// RFC 8414 metadata URL.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub oauth2_metadata_url: String,
}

/// OpenID Connect authentication.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct OpenIdConnectSecurityScheme {
    /// Description.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub description: String,
    /// Discovery URL.
    pub open_id_connect_url: String,
}

/// Mutual TLS authentication.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct MutualTlsSecurityScheme {
    /// Description.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub description: String,
}

/// One OAuth 2.0 flow (a oneof; `implicit` and `password` are parsed but deprecated).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub enum OAuthFlows {
    /// Authorization code (with PKCE).
    AuthorizationCode(OAuthFlow),
    /// Client credentials.
    ClientCredentials(OAuthFlow),
    /// Deprecated implicit flow.
    Implicit(OAuthFlow),
    /// Deprecated password flow.
    Password(OAuthFlow),
    /// Device code (RFC 8628).
    DeviceCode(OAuthFlow),
}

/// The URLs and scopes of an OAuth 2.0 flow (the union of every flow's fields; which are
/// required depends on the flow).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct OAuthFlow {
    /// Authorization endpoint.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub authorization_url: String,
    /// Device authorization endpoint.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub device_authorization_url: String,
    /// Token endpoint.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub token_url: String,
    /// Refresh endpoint.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub refresh_url: String,
    /// Scope name → description.
    #[serde(default)]
    pub scopes: BTreeMap<String, String>,
    /// PKCE required.
    #[serde(default, skip_serializing_if = "de::is_false")]
    pub pkce_required: bool,
}

proto_messages!(
    OAuthFlows,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentCapabilities,
    AgentExtension,
    AgentSkill,
    AgentCardSignature,
    SecurityRequirement,
    ApiKeySecurityScheme,
    HttpAuthSecurityScheme,
    OAuth2SecurityScheme,
    OpenIdConnectSecurityScheme,
    MutualTlsSecurityScheme,
    OAuthFlow,
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spec_sample_card_round_trips() {
        // shared/spec/a2a-v1.md §5 sample (description shortened there too).
        let wire = json!({
          "name":"GeoSpatial Route Planner Agent","description":"Route planning","version":"1.2.0",
          "supportedInterfaces":[
            {"url":"https://georoute-agent.example.com/a2a/v1","protocolBinding":"JSONRPC","protocolVersion":"1.0"},
            {"url":"https://georoute-agent.example.com/a2a/json","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],
          "provider":{"organization":"Example Geo Services Inc.","url":"https://www.examplegeoservices.com"},
          "iconUrl":"https://georoute-agent.example.com/icon.png",
          "documentationUrl":"https://docs.examplegeoservices.com/georoute-agent/api",
          "capabilities":{"streaming":true,"pushNotifications":true,"extendedAgentCard":true},
          "securitySchemes":{"google":{"openIdConnectSecurityScheme":{"openIdConnectUrl":"https://accounts.google.com/.well-known/openid-configuration"}}},
          "securityRequirements":[{"schemes":{"google":{"list":["openid","profile","email"]}}}],
          "defaultInputModes":["application/json","text/plain"],"defaultOutputModes":["application/json","image/png"],
          "skills":[{"id":"route-optimizer-traffic","name":"Traffic-Aware Route Optimizer","description":"d",
                     "tags":["maps","routing"],"examples":["Plan a route from A to B"],"inputModes":["application/json","text/plain"],"outputModes":["application/json"]}],
          "signatures":[{"protected":"eyJhbGciOiJFUzI1NiJ9","signature":"QFdk"}]
        });
        let card: AgentCard = serde_json::from_value(wire.clone()).expect("parse");
        assert_eq!(serde_json::to_value(&card).expect("ser"), wire);
    }

    #[test]
    fn empty_members_other_writers_omit_are_read_as_empty() {
        let minimal = json!({"name":"A","version":"1","capabilities":{},
            "supportedInterfaces":[{"url":"https://a.example/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]});
        let card: AgentCard = serde_json::from_value(minimal.clone()).expect("parse");
        assert_eq!(card.description, "");
        assert!(card.skills.is_empty() && card.default_input_modes.is_empty());
        let skill: AgentSkill =
            serde_json::from_value(json!({"id":"s","name":"S"})).expect("a skill of id and name");
        assert!(skill.description.is_empty() && skill.tags.is_empty());
        assert!(serde_json::from_value::<AgentSkill>(json!({"name":"S"})).is_err());
        // Written back with every REQUIRED member present.
        let out = serde_json::to_value(&card).expect("ser");
        assert_eq!(out["description"], "");
        assert_eq!(out["skills"], json!([]));
        for required in ["name", "version", "capabilities", "supportedInterfaces"] {
            let mut without = minimal.clone();
            without.as_object_mut().expect("object").remove(required);
            assert!(
                serde_json::from_value::<AgentCard>(without).is_err(),
                "{required} is required"
            );
        }
    }

    #[test]
    fn security_forms() {
        let schemes: BTreeMap<String, SecurityScheme> = serde_json::from_value(json!({
          "apiKey":{"apiKeySecurityScheme":{"location":"header","name":"X-API-Key"}},
          "bearer":{"httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"JWT"}},
          "cc":{"oauth2SecurityScheme":{"flows":{"clientCredentials":{"tokenUrl":"https://a/t","scopes":{}}}}},
          "mtls":{"mtlsSecurityScheme":{}}
        }))
        .expect("parse");
        assert_eq!(schemes.len(), 4);
        assert!(serde_json::from_value::<SecurityScheme>(json!({})).is_err());
        let req: SecurityRequirement =
            serde_json::from_value(json!({"schemes":{"g":["openid"],"h":{"list":["a"]},"i":{}}}))
                .expect("both forms");
        assert_eq!(
            serde_json::to_value(&req).expect("ser"),
            json!({"schemes":{"g":{"list":["openid"]},"h":{"list":["a"]},"i":{}}})
        );
    }
}
