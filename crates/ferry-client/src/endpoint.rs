//! Which interface of a card a client calls: the bindings it speaks and the choice among a
//! card's interfaces.

use crate::error::ClientError;
use ferry_proto::{AgentCard, BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC};

/// The binding a client speaks to an interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// JSON-RPC 2.0.
    JsonRpc,
    /// HTTP+JSON (REST).
    HttpJson,
    /// gRPC (HTTP/2, protobuf).
    Grpc,
}

impl Binding {
    /// The card's name for it.
    pub fn card_name(self) -> &'static str {
        match self {
            Binding::JsonRpc => BINDING_JSONRPC,
            Binding::HttpJson => BINDING_HTTP_JSON,
            Binding::Grpc => BINDING_GRPC,
        }
    }
}

/// One interface of a card, chosen to call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The binding.
    pub binding: Binding,
    /// The interface URL (`host:port` for gRPC).
    pub url: String,
    /// The tenant the interface names ("" for none).
    pub tenant: String,
}

impl Endpoint {
    /// The first interface of `card` that speaks a 1.x version over a binding this client
    /// knows, or the first of `prefer` when given.
    pub fn select(card: &AgentCard, prefer: Option<Binding>) -> Result<Self, ClientError> {
        let usable = card.supported_interfaces.iter().filter_map(|i| {
            let binding = match i.protocol_binding.as_str() {
                BINDING_JSONRPC => Binding::JsonRpc,
                BINDING_HTTP_JSON => Binding::HttpJson,
                BINDING_GRPC if cfg!(feature = "grpc") => Binding::Grpc,
                _ => return None,
            };
            let v1 = i.protocol_version.split('.').next() == Some("1");
            v1.then(|| Endpoint {
                binding,
                url: i.url.trim_end_matches('/').to_owned(),
                tenant: i.tenant.clone(),
            })
        });
        let mut usable: Vec<Endpoint> = usable.collect();
        if let Some(p) = prefer {
            usable.retain(|e| e.binding == p);
        }
        usable.into_iter().next().ok_or_else(|| no_interface(card))
    }

    /// The first JSON-RPC interface of `card` that speaks v0.3 (what a client takes when the
    /// card offers no v1.0 interface it can use).
    #[cfg(feature = "v03")]
    pub fn select_v03(card: &AgentCard) -> Option<Self> {
        card.supported_interfaces
            .iter()
            .find(|i| {
                i.protocol_binding == BINDING_JSONRPC
                    && ferry_proto::v03::is_v03(&i.protocol_version)
            })
            .map(|i| Endpoint {
                binding: Binding::JsonRpc,
                url: i.url.trim_end_matches('/').to_owned(),
                tenant: String::new(),
            })
    }
}

/// The error for a card with no interface this client speaks, naming what it offers.
fn no_interface(card: &AgentCard) -> ClientError {
    let offered: Vec<String> = card
        .supported_interfaces
        .iter()
        .map(|i| format!("{} {}", i.protocol_binding, i.protocol_version))
        .collect();
    ClientError::NoInterface(offered.join(", "))
}
