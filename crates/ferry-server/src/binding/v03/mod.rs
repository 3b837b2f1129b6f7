//! What both v0.3 bindings (JSON-RPC and HTTP+JSON) share: the version rule, the handler's
//! v1.0 answer in v0.3's terms, and v0.3's extensions header on the answer.
//! Each binding spells the request and the answer its own way.

use crate::core::answer::Answer;
use crate::edge::params::stated_version;
use crate::edge::service::AgentService;
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue};
use axum::response::Response;
use ferry_proto::v03::{self, Method, convert, wire};
use ferry_proto::{A2aError, ErrorKind};
use serde_json::{Map, Value};

pub(crate) mod jsonrpc;
pub(crate) mod rest;

/// v0.3's extensions header, echoed next to v1.0's.
const X_EXTENSIONS: HeaderName = HeaderName::from_static(v03::EXTENSIONS_HEADER);

/// A v0.3 method under a `1.x` header belongs to v1.0: VersionNotSupported, naming the v1.0
/// operation.
pub(crate) fn check_version(parts: &Parts, method: Method) -> Result<(), A2aError> {
    match stated_version(&parts.headers)? {
        None => Ok(()),
        Some(v) if v03::is_v03(v) => Ok(()),
        Some(v) => Err(A2aError::new(
            ErrorKind::VersionNotSupported,
            format!(
                "{} is a v0.3 method, A2A-Version {v} asks for another version; \
                 v1.0 calls it {}",
                method.name(),
                method.operation().name()
            ),
        )
        .with_meta("requestedVersion", v)
        .with_meta("supportedVersions", v03::VERSION)),
    }
}

/// Echoes the activated extensions in v0.3's header as well (v1.0's is set by the caller).
pub(crate) fn with_x_extensions(mut response: Response, activated: &[String]) -> Response {
    if !activated.is_empty()
        && let Ok(v) = HeaderValue::from_str(&activated.join(", "))
    {
        response.headers_mut().insert(X_EXTENSIONS, v);
    }
    response
}

/// A unary method's answer in v0.3's terms.
#[derive(Debug)]
pub(crate) enum V03Answer {
    /// `message/send`: a task or a message.
    Sent(wire::Event),
    /// `tasks/get`, `tasks/cancel`.
    Task(wire::Task),
    /// The extended card, with v0.3's members.
    Card(Map<String, Value>),
    /// `tasks/pushNotificationConfig/set` and `get`.
    PushConfig(wire::TaskPushNotificationConfig),
    /// `tasks/pushNotificationConfig/list`.
    PushConfigs(Vec<wire::TaskPushNotificationConfig>),
    /// `tasks/pushNotificationConfig/delete`: nothing.
    Deleted,
}

/// The v0.3 answer of a unary `method`, from the handler's typed answer.
pub(crate) fn answer(
    method: Method,
    answer: Answer,
    service: &AgentService,
) -> Result<V03Answer, A2aError> {
    Ok(match (method, answer) {
        (Method::MessageSend, Answer::Sent(sent)) => {
            V03Answer::Sent(convert::send_result_from_v1(&sent.to_response()))
        }
        (Method::TasksGet | Method::TasksCancel, Answer::Task(task)) => {
            V03Answer::Task(convert::task_from_v1(&task.to_task()))
        }
        (Method::PushConfigSet | Method::PushConfigGet, Answer::PushConfig(config)) => {
            V03Answer::PushConfig(convert::push_config_from_v1(&config))
        }
        (Method::PushConfigList, Answer::PushConfigs(page)) => V03Answer::PushConfigs(
            page.configs
                .iter()
                .map(convert::push_config_from_v1)
                .collect(),
        ),
        (Method::PushConfigDelete, Answer::Deleted) => V03Answer::Deleted,
        (Method::GetAuthenticatedExtendedCard, Answer::Card(card)) => {
            let mut served = match serde_json::to_value(&*card) {
                Ok(Value::Object(m)) => m,
                _ => return Err(A2aError::internal("the extended card is not an object")),
            };
            v03::add_card_members(&mut served, &card, service.card.v03_interfaces());
            V03Answer::Card(served)
        }
        (method, _) => {
            return Err(A2aError::internal(format!(
                "{} answered with another operation's answer",
                method.name()
            )));
        }
    })
}

/// A v0.3 event's JSON (`null` in the impossible case that it does not serialize).
pub(crate) fn json_bytes<T: serde::Serialize>(value: &T) -> bytes::Bytes {
    serde_json::to_vec(value)
        .map_or_else(|_| bytes::Bytes::from_static(b"null"), bytes::Bytes::from)
}

/// Serializes a v0.3 answer.
pub(crate) fn to_vec<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, A2aError> {
    serde_json::to_vec(value)
        .map_err(|e| A2aError::internal(format!("writing the v0.3 answer: {e}")))
}
