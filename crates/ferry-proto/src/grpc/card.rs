//! The agent card and everything in it: interfaces, provider, capabilities, extensions,
//! skills, signatures, security requirements and the five kinds of security scheme with
//! their OAuth flows.
//!
//! ferry-proto has one [`OAuthFlow`] with the union of every flow's fields, where the proto
//! has one message per flow. Encoding keeps the fields the flow's message has and drops the
//! others (a `clientCredentials` flow has no `authorizationUrl` on the gRPC wire); decoding
//! leaves the fields the flow lacks empty.

use super::invalid::{Decode, Invalid, field, optional, repeated, required, try_from_pb};
use super::pb;
use super::value::struct_to_pb;
use crate::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, ApiKeySecurityScheme, HttpAuthSecurityScheme,
    MutualTlsSecurityScheme, OAuth2SecurityScheme, OAuthFlow, OAuthFlows,
    OpenIdConnectSecurityScheme, SecurityRequirement, SecurityScheme, StringList,
};
use std::collections::BTreeMap;

/// Decodes each value of map field `name`.
fn map<T: Decode>(
    pbs: BTreeMap<String, T::Pb>,
    name: &'static str,
) -> Result<BTreeMap<String, T>, Invalid> {
    pbs.into_iter()
        .map(|(k, pb)| match T::decode(pb) {
            Ok(v) => Ok((k, v)),
            Err(e) => Err(e.at_key(&k).at(name)),
        })
        .collect()
}

impl From<&AgentCard> for pb::AgentCard {
    fn from(c: &AgentCard) -> Self {
        pb::AgentCard {
            name: c.name.clone(),
            description: c.description.clone(),
            supported_interfaces: c
                .supported_interfaces
                .iter()
                .map(pb::AgentInterface::from)
                .collect(),
            provider: c.provider.as_ref().map(pb::AgentProvider::from),
            version: c.version.clone(),
            documentation_url: c.documentation_url.clone(),
            capabilities: Some(pb::AgentCapabilities::from(&c.capabilities)),
            security_schemes: c
                .security_schemes
                .iter()
                .map(|(k, v)| (k.clone(), pb::SecurityScheme::from(v)))
                .collect(),
            security_requirements: c
                .security_requirements
                .iter()
                .map(pb::SecurityRequirement::from)
                .collect(),
            default_input_modes: c.default_input_modes.clone(),
            default_output_modes: c.default_output_modes.clone(),
            skills: c.skills.iter().map(pb::AgentSkill::from).collect(),
            signatures: c
                .signatures
                .iter()
                .map(pb::AgentCardSignature::from)
                .collect(),
            icon_url: c.icon_url.clone(),
        }
    }
}

impl Decode for AgentCard {
    type Pb = pb::AgentCard;

    fn decode(pb: pb::AgentCard) -> Result<AgentCard, Invalid> {
        Ok(AgentCard {
            name: pb.name,
            description: pb.description,
            supported_interfaces: repeated::<AgentInterface, _>(
                pb.supported_interfaces,
                "supportedInterfaces",
            )?,
            provider: optional(pb.provider, "provider")?,
            version: pb.version,
            documentation_url: pb.documentation_url,
            capabilities: required(pb.capabilities, "capabilities")?,
            security_schemes: map(pb.security_schemes, "securitySchemes")?,
            security_requirements: repeated::<SecurityRequirement, _>(
                pb.security_requirements,
                "securityRequirements",
            )?,
            default_input_modes: pb.default_input_modes,
            default_output_modes: pb.default_output_modes,
            skills: repeated::<AgentSkill, _>(pb.skills, "skills")?,
            signatures: repeated::<AgentCardSignature, _>(pb.signatures, "signatures")?,
            icon_url: pb.icon_url,
        })
    }
}

impl From<&AgentInterface> for pb::AgentInterface {
    fn from(i: &AgentInterface) -> Self {
        pb::AgentInterface {
            url: i.url.clone(),
            protocol_binding: i.protocol_binding.clone(),
            tenant: i.tenant.clone(),
            protocol_version: i.protocol_version.clone(),
        }
    }
}

impl Decode for AgentInterface {
    type Pb = pb::AgentInterface;

    fn decode(pb: pb::AgentInterface) -> Result<AgentInterface, Invalid> {
        Ok(AgentInterface {
            url: pb.url,
            protocol_binding: pb.protocol_binding,
            tenant: pb.tenant,
            protocol_version: pb.protocol_version,
        })
    }
}

impl From<&AgentProvider> for pb::AgentProvider {
    fn from(p: &AgentProvider) -> Self {
        pb::AgentProvider {
            url: p.url.clone(),
            organization: p.organization.clone(),
        }
    }
}

impl Decode for AgentProvider {
    type Pb = pb::AgentProvider;

    fn decode(pb: pb::AgentProvider) -> Result<AgentProvider, Invalid> {
        Ok(AgentProvider {
            url: pb.url,
            organization: pb.organization,
        })
    }
}

impl From<&AgentCapabilities> for pb::AgentCapabilities {
    fn from(c: &AgentCapabilities) -> Self {
        pb::AgentCapabilities {
            streaming: c.streaming,
            push_notifications: c.push_notifications,
            extensions: c.extensions.iter().map(pb::AgentExtension::from).collect(),
            extended_agent_card: c.extended_agent_card,
        }
    }
}

impl Decode for AgentCapabilities {
    type Pb = pb::AgentCapabilities;

    fn decode(pb: pb::AgentCapabilities) -> Result<AgentCapabilities, Invalid> {
        Ok(AgentCapabilities {
            streaming: pb.streaming,
            push_notifications: pb.push_notifications,
            extensions: repeated::<AgentExtension, _>(pb.extensions, "extensions")?,
            extended_agent_card: pb.extended_agent_card,
        })
    }
}

impl From<&AgentExtension> for pb::AgentExtension {
    fn from(e: &AgentExtension) -> Self {
        pb::AgentExtension {
            uri: e.uri.clone(),
            description: e.description.clone(),
            required: e.required,
            params: e.params.as_ref().map(struct_to_pb),
        }
    }
}

impl Decode for AgentExtension {
    type Pb = pb::AgentExtension;

    fn decode(pb: pb::AgentExtension) -> Result<AgentExtension, Invalid> {
        Ok(AgentExtension {
            uri: pb.uri,
            description: pb.description,
            required: pb.required,
            params: optional(pb.params, "params")?,
        })
    }
}

impl From<&AgentSkill> for pb::AgentSkill {
    fn from(s: &AgentSkill) -> Self {
        pb::AgentSkill {
            id: s.id.clone(),
            name: s.name.clone(),
            description: s.description.clone(),
            tags: s.tags.clone(),
            examples: s.examples.clone(),
            input_modes: s.input_modes.clone(),
            output_modes: s.output_modes.clone(),
            security_requirements: s
                .security_requirements
                .iter()
                .map(pb::SecurityRequirement::from)
                .collect(),
        }
    }
}

impl Decode for AgentSkill {
    type Pb = pb::AgentSkill;

    fn decode(pb: pb::AgentSkill) -> Result<AgentSkill, Invalid> {
        Ok(AgentSkill {
            id: pb.id,
            name: pb.name,
            description: pb.description,
            tags: pb.tags,
            examples: pb.examples,
            input_modes: pb.input_modes,
            output_modes: pb.output_modes,
            security_requirements: repeated::<SecurityRequirement, _>(
                pb.security_requirements,
                "securityRequirements",
            )?,
        })
    }
}

impl From<&AgentCardSignature> for pb::AgentCardSignature {
    fn from(s: &AgentCardSignature) -> Self {
        pb::AgentCardSignature {
            protected: s.protected.clone(),
            signature: s.signature.clone(),
            header: s.header.as_ref().map(struct_to_pb),
        }
    }
}

impl Decode for AgentCardSignature {
    type Pb = pb::AgentCardSignature;

    fn decode(pb: pb::AgentCardSignature) -> Result<AgentCardSignature, Invalid> {
        Ok(AgentCardSignature {
            protected: pb.protected,
            signature: pb.signature,
            header: optional(pb.header, "header")?,
        })
    }
}

impl From<&SecurityRequirement> for pb::SecurityRequirement {
    fn from(r: &SecurityRequirement) -> Self {
        pb::SecurityRequirement {
            schemes: r
                .schemes
                .iter()
                .map(|(k, v)| (k.clone(), pb::StringList::from(v)))
                .collect(),
        }
    }
}

impl Decode for SecurityRequirement {
    type Pb = pb::SecurityRequirement;

    fn decode(pb: pb::SecurityRequirement) -> Result<SecurityRequirement, Invalid> {
        Ok(SecurityRequirement {
            schemes: map(pb.schemes, "schemes")?,
        })
    }
}

impl From<&StringList> for pb::StringList {
    fn from(l: &StringList) -> Self {
        pb::StringList {
            list: l.list.clone(),
        }
    }
}

impl Decode for StringList {
    type Pb = pb::StringList;

    fn decode(pb: pb::StringList) -> Result<StringList, Invalid> {
        Ok(StringList { list: pb.list })
    }
}

impl From<&SecurityScheme> for pb::SecurityScheme {
    fn from(s: &SecurityScheme) -> Self {
        use pb::security_scheme::Scheme;
        let scheme = match s {
            SecurityScheme::ApiKeySecurityScheme(s) => {
                Scheme::ApiKeySecurityScheme(pb::ApiKeySecurityScheme::from(s))
            }
            SecurityScheme::HttpAuthSecurityScheme(s) => {
                Scheme::HttpAuthSecurityScheme(pb::HttpAuthSecurityScheme::from(s))
            }
            SecurityScheme::Oauth2SecurityScheme(s) => {
                Scheme::Oauth2SecurityScheme(pb::OAuth2SecurityScheme::from(s))
            }
            SecurityScheme::OpenIdConnectSecurityScheme(s) => {
                Scheme::OpenIdConnectSecurityScheme(pb::OpenIdConnectSecurityScheme::from(s))
            }
            SecurityScheme::MtlsSecurityScheme(s) => {
                Scheme::MtlsSecurityScheme(pb::MutualTlsSecurityScheme::from(s))
            }
        };
        pb::SecurityScheme {
            scheme: Some(scheme),
        }
    }
}

impl Decode for SecurityScheme {
    type Pb = pb::SecurityScheme;

    fn decode(pb: pb::SecurityScheme) -> Result<SecurityScheme, Invalid> {
        use pb::security_scheme::Scheme;
        Ok(match pb.scheme {
            Some(Scheme::ApiKeySecurityScheme(s)) => {
                SecurityScheme::ApiKeySecurityScheme(field(s, "apiKeySecurityScheme")?)
            }
            Some(Scheme::HttpAuthSecurityScheme(s)) => {
                SecurityScheme::HttpAuthSecurityScheme(field(s, "httpAuthSecurityScheme")?)
            }
            Some(Scheme::Oauth2SecurityScheme(s)) => {
                SecurityScheme::Oauth2SecurityScheme(field(s, "oauth2SecurityScheme")?)
            }
            Some(Scheme::OpenIdConnectSecurityScheme(s)) => {
                SecurityScheme::OpenIdConnectSecurityScheme(field(
                    s,
                    "openIdConnectSecurityScheme",
                )?)
            }
            Some(Scheme::MtlsSecurityScheme(s)) => {
                SecurityScheme::MtlsSecurityScheme(field(s, "mtlsSecurityScheme")?)
            }
            None => {
                return Err(Invalid::new(
                    "a security scheme needs exactly one scheme member",
                ));
            }
        })
    }
}

impl From<&ApiKeySecurityScheme> for pb::ApiKeySecurityScheme {
    fn from(s: &ApiKeySecurityScheme) -> Self {
        pb::ApiKeySecurityScheme {
            description: s.description.clone(),
            location: s.location.clone(),
            name: s.name.clone(),
        }
    }
}

impl Decode for ApiKeySecurityScheme {
    type Pb = pb::ApiKeySecurityScheme;

    fn decode(pb: pb::ApiKeySecurityScheme) -> Result<ApiKeySecurityScheme, Invalid> {
        Ok(ApiKeySecurityScheme {
            description: pb.description,
            location: pb.location,
            name: pb.name,
        })
    }
}

impl From<&HttpAuthSecurityScheme> for pb::HttpAuthSecurityScheme {
    fn from(s: &HttpAuthSecurityScheme) -> Self {
        pb::HttpAuthSecurityScheme {
            description: s.description.clone(),
            scheme: s.scheme.clone(),
            bearer_format: s.bearer_format.clone(),
        }
    }
}

impl Decode for HttpAuthSecurityScheme {
    type Pb = pb::HttpAuthSecurityScheme;

    fn decode(pb: pb::HttpAuthSecurityScheme) -> Result<HttpAuthSecurityScheme, Invalid> {
        Ok(HttpAuthSecurityScheme {
            description: pb.description,
            scheme: pb.scheme,
            bearer_format: pb.bearer_format,
        })
    }
}

impl From<&OAuth2SecurityScheme> for pb::OAuth2SecurityScheme {
    fn from(s: &OAuth2SecurityScheme) -> Self {
        pb::OAuth2SecurityScheme {
            description: s.description.clone(),
            flows: Some(pb::OAuthFlows::from(&s.flows)),
            oauth2_metadata_url: s.oauth2_metadata_url.clone(),
        }
    }
}

impl Decode for OAuth2SecurityScheme {
    type Pb = pb::OAuth2SecurityScheme;

    fn decode(pb: pb::OAuth2SecurityScheme) -> Result<OAuth2SecurityScheme, Invalid> {
        Ok(OAuth2SecurityScheme {
            description: pb.description,
            flows: required(pb.flows, "flows")?,
            oauth2_metadata_url: pb.oauth2_metadata_url,
        })
    }
}

impl From<&OpenIdConnectSecurityScheme> for pb::OpenIdConnectSecurityScheme {
    fn from(s: &OpenIdConnectSecurityScheme) -> Self {
        pb::OpenIdConnectSecurityScheme {
            description: s.description.clone(),
            open_id_connect_url: s.open_id_connect_url.clone(),
        }
    }
}

impl Decode for OpenIdConnectSecurityScheme {
    type Pb = pb::OpenIdConnectSecurityScheme;

    fn decode(pb: pb::OpenIdConnectSecurityScheme) -> Result<OpenIdConnectSecurityScheme, Invalid> {
        Ok(OpenIdConnectSecurityScheme {
            description: pb.description,
            open_id_connect_url: pb.open_id_connect_url,
        })
    }
}

impl From<&MutualTlsSecurityScheme> for pb::MutualTlsSecurityScheme {
    fn from(s: &MutualTlsSecurityScheme) -> Self {
        pb::MutualTlsSecurityScheme {
            description: s.description.clone(),
        }
    }
}

impl Decode for MutualTlsSecurityScheme {
    type Pb = pb::MutualTlsSecurityScheme;

    fn decode(pb: pb::MutualTlsSecurityScheme) -> Result<MutualTlsSecurityScheme, Invalid> {
        Ok(MutualTlsSecurityScheme {
            description: pb.description,
        })
    }
}

// `implicit` and `password` are deprecated in the proto, and still part of the protocol.
#[allow(deprecated)]
impl From<&OAuthFlows> for pb::OAuthFlows {
    fn from(f: &OAuthFlows) -> Self {
        use pb::o_auth_flows::Flow;
        let flow = match f {
            OAuthFlows::AuthorizationCode(f) => {
                Flow::AuthorizationCode(pb::AuthorizationCodeOAuthFlow::from(f))
            }
            OAuthFlows::ClientCredentials(f) => {
                Flow::ClientCredentials(pb::ClientCredentialsOAuthFlow::from(f))
            }
            OAuthFlows::Implicit(f) => Flow::Implicit(pb::ImplicitOAuthFlow::from(f)),
            OAuthFlows::Password(f) => Flow::Password(pb::PasswordOAuthFlow::from(f)),
            OAuthFlows::DeviceCode(f) => Flow::DeviceCode(pb::DeviceCodeOAuthFlow::from(f)),
        };
        pb::OAuthFlows { flow: Some(flow) }
    }
}

#[allow(deprecated)]
impl Decode for OAuthFlows {
    type Pb = pb::OAuthFlows;

    fn decode(pb: pb::OAuthFlows) -> Result<OAuthFlows, Invalid> {
        use pb::o_auth_flows::Flow;
        Ok(match pb.flow {
            Some(Flow::AuthorizationCode(f)) => OAuthFlows::AuthorizationCode(f.into_flow()),
            Some(Flow::ClientCredentials(f)) => OAuthFlows::ClientCredentials(f.into_flow()),
            Some(Flow::Implicit(f)) => OAuthFlows::Implicit(f.into_flow()),
            Some(Flow::Password(f)) => OAuthFlows::Password(f.into_flow()),
            Some(Flow::DeviceCode(f)) => OAuthFlows::DeviceCode(f.into_flow()),
            None => {
                return Err(Invalid::new(
                    "OAuth flows need exactly one of authorizationCode, clientCredentials, \
                     implicit, password or deviceCode",
                ));
            }
        })
    }
}

impl From<&OAuthFlow> for pb::AuthorizationCodeOAuthFlow {
    fn from(f: &OAuthFlow) -> Self {
        pb::AuthorizationCodeOAuthFlow {
            authorization_url: f.authorization_url.clone(),
            token_url: f.token_url.clone(),
            refresh_url: f.refresh_url.clone(),
            scopes: f.scopes.clone(),
            pkce_required: f.pkce_required,
        }
    }
}

impl From<&OAuthFlow> for pb::ClientCredentialsOAuthFlow {
    fn from(f: &OAuthFlow) -> Self {
        pb::ClientCredentialsOAuthFlow {
            token_url: f.token_url.clone(),
            refresh_url: f.refresh_url.clone(),
            scopes: f.scopes.clone(),
        }
    }
}

impl From<&OAuthFlow> for pb::ImplicitOAuthFlow {
    fn from(f: &OAuthFlow) -> Self {
        pb::ImplicitOAuthFlow {
            authorization_url: f.authorization_url.clone(),
            refresh_url: f.refresh_url.clone(),
            scopes: f.scopes.clone(),
        }
    }
}

impl From<&OAuthFlow> for pb::PasswordOAuthFlow {
    fn from(f: &OAuthFlow) -> Self {
        pb::PasswordOAuthFlow {
            token_url: f.token_url.clone(),
            refresh_url: f.refresh_url.clone(),
            scopes: f.scopes.clone(),
        }
    }
}

impl From<&OAuthFlow> for pb::DeviceCodeOAuthFlow {
    fn from(f: &OAuthFlow) -> Self {
        pb::DeviceCodeOAuthFlow {
            device_authorization_url: f.device_authorization_url.clone(),
            token_url: f.token_url.clone(),
            refresh_url: f.refresh_url.clone(),
            scopes: f.scopes.clone(),
        }
    }
}

/// One flow's message, read into ferry-proto's union of the flows' fields.
trait IntoFlow {
    /// The flow, with the fields this flow's message lacks left empty.
    fn into_flow(self) -> OAuthFlow;
}

/// Implements [`IntoFlow`] and the public `TryFrom` (which cannot fail, and has the
/// [`A2aError`](crate::A2aError) of every other pb type) for each flow's message.
macro_rules! flows {
    ($($pb:ident { $($field:ident),+ }),+ $(,)?) => {$(
        impl IntoFlow for pb::$pb {
            fn into_flow(self) -> OAuthFlow {
                OAuthFlow {
                    $($field: self.$field,)+
                    ..OAuthFlow::default()
                }
            }
        }

        impl TryFrom<pb::$pb> for OAuthFlow {
            type Error = crate::A2aError;

            fn try_from(pb: pb::$pb) -> Result<Self, crate::A2aError> {
                Ok(pb.into_flow())
            }
        }
    )+};
}

flows! {
    AuthorizationCodeOAuthFlow { authorization_url, token_url, refresh_url, scopes, pkce_required },
    ClientCredentialsOAuthFlow { token_url, refresh_url, scopes },
    ImplicitOAuthFlow { authorization_url, refresh_url, scopes },
    PasswordOAuthFlow { token_url, refresh_url, scopes },
    DeviceCodeOAuthFlow { device_authorization_url, token_url, refresh_url, scopes },
}

try_from_pb! {
    pb::AgentCard => AgentCard,
    pb::AgentInterface => AgentInterface,
    pb::AgentProvider => AgentProvider,
    pb::AgentCapabilities => AgentCapabilities,
    pb::AgentExtension => AgentExtension,
    pb::AgentSkill => AgentSkill,
    pb::AgentCardSignature => AgentCardSignature,
    pb::SecurityRequirement => SecurityRequirement,
    pb::StringList => StringList,
    pb::SecurityScheme => SecurityScheme,
    pb::ApiKeySecurityScheme => ApiKeySecurityScheme,
    pb::HttpAuthSecurityScheme => HttpAuthSecurityScheme,
    pb::OAuth2SecurityScheme => OAuth2SecurityScheme,
    pb::OpenIdConnectSecurityScheme => OpenIdConnectSecurityScheme,
    pb::MutualTlsSecurityScheme => MutualTlsSecurityScheme,
    pb::OAuthFlows => OAuthFlows,
}
