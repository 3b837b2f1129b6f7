//! A2A v0.3 next to v1.0: the v0.3 JSON-RPC methods, shapes, errors and card members, and
//! their translation to and from the one v1.0 model of this crate.
//!
//! Reading cards is always here (a card in the wild may carry v0.3's members, which no v1.0
//! signature covers, or be a v0.3-only card): [`is_v03`], [`strip_card_members`],
//! [`card_to_v1`] and what serves a card to both. Speaking v0.3 (the methods, [`wire`]
//! shapes, [`convert`], [`rest`]) needs the `v03` feature.
//!
//! ferry has one model and one request handler; v0.3 is a spelling of it. The server's v0.3
//! binding decodes [`wire`] params, converts them ([`convert`]) into the v1.0 request of the
//! [`Method`]'s [`Operation`], and converts the answer back; the client does the reverse.
//!
//! Which version a request speaks: the method name (`message/send` is v0.3, `SendMessage`
//! v1.0) and the `A2A-Version` header (absent means 0.3, spec §3.6). A v0.3 method under a
//! `1.x` header, or a v1.0 method under `0.3`, is VersionNotSupported.

mod card;
#[cfg(feature = "v03")]
pub mod convert;
#[cfg(feature = "v03")]
pub mod rest;
#[cfg(feature = "v03")]
pub mod wire;

pub use card::{
    CARD_MEMBERS, Interfaces, add_card_members, card_to_v1, security_scheme, strip_card_members,
};

#[cfg(feature = "v03")]
use crate::{A2aError, Operation};
#[cfg(feature = "v03")]
use serde_json::{Value, json};

/// The version this module speaks, as `A2A-Version` and `AgentInterface.protocolVersion` say it.
pub const VERSION: &str = "0.3";
/// What a v0.3 card's top-level `protocolVersion` says (v0.3 cards carried a patch level).
pub const CARD_PROTOCOL_VERSION: &str = "0.3.0";
/// The v0.3 extensions header (v1.0's is `A2A-Extensions`).
pub const EXTENSIONS_HEADER: &str = "x-a2a-extensions";

/// A v0.3 JSON-RPC method.
#[cfg(feature = "v03")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `message/send`.
    MessageSend,
    /// `message/stream`.
    MessageStream,
    /// `tasks/get`.
    TasksGet,
    /// `tasks/cancel`.
    TasksCancel,
    /// `tasks/resubscribe`.
    TasksResubscribe,
    /// `tasks/pushNotificationConfig/set`.
    PushConfigSet,
    /// `tasks/pushNotificationConfig/get`.
    PushConfigGet,
    /// `tasks/pushNotificationConfig/list`.
    PushConfigList,
    /// `tasks/pushNotificationConfig/delete`.
    PushConfigDelete,
    /// `agent/getAuthenticatedExtendedCard`.
    GetAuthenticatedExtendedCard,
}

#[cfg(feature = "v03")]
impl Method {
    /// Every v0.3 method (v0.3 has no `tasks/list` in JSON-RPC).
    pub const ALL: [Method; 10] = [
        Method::MessageSend,
        Method::MessageStream,
        Method::TasksGet,
        Method::TasksCancel,
        Method::TasksResubscribe,
        Method::PushConfigSet,
        Method::PushConfigGet,
        Method::PushConfigList,
        Method::PushConfigDelete,
        Method::GetAuthenticatedExtendedCard,
    ];

    /// The method's JSON-RPC name.
    pub const fn name(self) -> &'static str {
        match self {
            Method::MessageSend => "message/send",
            Method::MessageStream => "message/stream",
            Method::TasksGet => "tasks/get",
            Method::TasksCancel => "tasks/cancel",
            Method::TasksResubscribe => "tasks/resubscribe",
            Method::PushConfigSet => "tasks/pushNotificationConfig/set",
            Method::PushConfigGet => "tasks/pushNotificationConfig/get",
            Method::PushConfigList => "tasks/pushNotificationConfig/list",
            Method::PushConfigDelete => "tasks/pushNotificationConfig/delete",
            Method::GetAuthenticatedExtendedCard => "agent/getAuthenticatedExtendedCard",
        }
    }

    /// The method of a JSON-RPC name.
    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The v1.0 operation it is.
    pub const fn operation(self) -> Operation {
        match self {
            Method::MessageSend => Operation::SendMessage,
            Method::MessageStream => Operation::SendStreamingMessage,
            Method::TasksGet => Operation::GetTask,
            Method::TasksCancel => Operation::CancelTask,
            Method::TasksResubscribe => Operation::SubscribeToTask,
            Method::PushConfigSet => Operation::CreateTaskPushNotificationConfig,
            Method::PushConfigGet => Operation::GetTaskPushNotificationConfig,
            Method::PushConfigList => Operation::ListTaskPushNotificationConfigs,
            Method::PushConfigDelete => Operation::DeleteTaskPushNotificationConfig,
            Method::GetAuthenticatedExtendedCard => Operation::GetExtendedAgentCard,
        }
    }

    /// The v0.3 method of a v1.0 operation (`ListTasks` has none).
    pub fn of(op: Operation) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.operation() == op)
    }
}

/// True for a version string of v0.3 (`0.3`, `0.3.0`, …).
pub fn is_v03(version: &str) -> bool {
    let mut parts = version.trim().split('.');
    parts.next() == Some("0") && parts.next() == Some("3")
}

#[cfg(feature = "v03")]
/// An error as a v0.3 JSON-RPC `error` object: the same code and message; `data` is one
/// object (v0.3's form), the `ErrorInfo` that v1.0 puts first in its `data` array.
pub fn error_object(e: &A2aError) -> Value {
    let mut error = json!({"code": e.kind.code(), "message": e.message});
    if let Value::Array(details) = e.details()
        && let Some(info) = details.into_iter().next()
    {
        error["data"] = info;
    }
    error
}

/// A complete v0.3 JSON-RPC error response.
#[cfg(feature = "v03")]
pub fn error_body(id: &Value, e: &A2aError) -> Vec<u8> {
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "error": error_object(e)}))
        .unwrap_or_default()
}
