//! What both v0.3 bindings (JSON-RPC and HTTP+JSON) share: which requests speak v0.3, the
//! handler's v1.0 answer read back as v0.3's, and v0.3's extensions header on the answer.
//! Each binding spells the request and the answer its own way.

use crate::core::doc::JsonDoc;
use crate::edge::params::stated_version;
use crate::edge::service::AppState;
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue};
use axum::response::Response;
use ferry_proto::v03::{self, Method, convert, wire};
use ferry_proto::{
    A2aError, AgentCard, ErrorKind, ListTaskPushNotificationConfigsResponse, SendMessageResponse,
    Task, TaskPushNotificationConfig,
};
use serde::de::DeserializeOwned;
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
pub(crate) enum Answer {
    /// `message/send`: a task or a message.
    Sent(wire::Event),
    /// `tasks/get`, `tasks/cancel`.
    Task(wire::Task),
    /// `…/set`, `…/get`.
    PushConfig(wire::TaskPushNotificationConfig),
    /// `…/list`, and the next page's token (empty: none).
    PushConfigs(Vec<wire::TaskPushNotificationConfig>, String),
    /// `…/delete`.
    Deleted,
    /// The extended card, with v0.3's members.
    Card(Map<String, Value>),
}

/// Reads back the handler's v1.0 answer (which it serialized itself).
fn read<T: DeserializeOwned>(doc: &JsonDoc) -> Result<T, A2aError> {
    serde_json::from_slice(&doc.0)
        .map_err(|e| A2aError::internal(format!("reading the answer for v0.3: {e}")))
}

/// The v0.3 answer of a unary `method`, from the handler's v1.0 answer.
pub(crate) fn answer(method: Method, doc: &JsonDoc, app: &AppState) -> Result<Answer, A2aError> {
    Ok(match method {
        Method::MessageSend => Answer::Sent(convert::send_result_from_v1(&read::<
            SendMessageResponse,
        >(doc)?)),
        Method::TasksGet | Method::TasksCancel => {
            Answer::Task(convert::task_from_v1(&read::<Task>(doc)?))
        }
        Method::PushConfigSet | Method::PushConfigGet => {
            Answer::PushConfig(convert::push_config_from_v1(&read::<
                TaskPushNotificationConfig,
            >(doc)?))
        }
        Method::PushConfigList => {
            let page = read::<ListTaskPushNotificationConfigsResponse>(doc)?;
            let configs = page
                .configs
                .iter()
                .map(convert::push_config_from_v1)
                .collect();
            Answer::PushConfigs(configs, page.next_page_token)
        }
        Method::PushConfigDelete => Answer::Deleted,
        Method::GetAuthenticatedExtendedCard => {
            let card = read::<AgentCard>(doc)?;
            let mut served = match serde_json::to_value(&card) {
                Ok(Value::Object(m)) => m,
                _ => return Err(A2aError::internal("the extended card is not an object")),
            };
            v03::add_card_members(&mut served, &card, app.card.v03_interfaces());
            Answer::Card(served)
        }
        Method::MessageStream | Method::TasksResubscribe => {
            return Err(A2aError::internal(format!(
                "{} answered with one document",
                method.name()
            )));
        }
    })
}

/// Serializes a v0.3 answer.
pub(crate) fn to_vec<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, A2aError> {
    serde_json::to_vec(value)
        .map_err(|e| A2aError::internal(format!("writing the v0.3 answer: {e}")))
}
