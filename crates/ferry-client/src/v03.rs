//! Calling a v0.3 agent: the v1.0 calls of [`crate::A2aClient`] spelled as v0.3 JSON-RPC, and
//! the agent's v0.3 answers read back as v1.0 (all translation is `ferry_proto::v03`'s). The
//! client picks this when the card offers no v1.0 interface but a v0.3 JSON-RPC one; the
//! retries, stream resumption and limits are the same as for v1.0.

use crate::error::ClientError;
use ferry_proto::v03::{Method, convert, wire};
use ferry_proto::{
    A2aError, ErrorKind, GetTaskRequest, Operation, SendMessageRequest, StreamResponse,
    TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The v0.3 method of `op`; `ListTasks` has none over v0.3 JSON-RPC.
pub(crate) fn method(op: Operation) -> Result<Method, ClientError> {
    Method::of(op).ok_or_else(|| {
        ClientError::Protocol(A2aError::new(
            ErrorKind::UnsupportedOperation,
            format!("{} does not exist in A2A v0.3 JSON-RPC", op.name()),
        ))
    })
}

fn decode_err(what: &str, e: impl std::fmt::Display) -> ClientError {
    ClientError::Decode(format!("{what}: {e}"))
}

fn typed<T: DeserializeOwned>(what: &str, v: Value) -> Result<T, ClientError> {
    serde_json::from_value(v).map_err(|e| decode_err(what, e))
}

fn value<T: Serialize>(t: &T) -> Result<Value, ClientError> {
    serde_json::to_value(t).map_err(|e| decode_err("writing a v0.3 request", e))
}

fn convert_err(what: &str) -> impl Fn(convert::ConvertError) -> ClientError + '_ {
    move |e| decode_err(what, e)
}

/// The v0.3 params of `op` for its v1.0 request `params` (as JSON).
pub(crate) fn params(op: Operation, params: Value) -> Result<Value, ClientError> {
    let id = |key: &str| json!({"id": params.get(key).cloned().unwrap_or(Value::Null)});
    match method(op)? {
        Method::MessageSend | Method::MessageStream => value(&convert::send_params_from_v1(
            &typed::<SendMessageRequest>("the request", params)?,
        )),
        Method::TasksGet => value(&convert::get_task_from_v1(&typed::<GetTaskRequest>(
            "the request",
            params,
        )?)),
        Method::TasksCancel | Method::TasksResubscribe => Ok(id("id")),
        Method::PushConfigList => Ok(id("taskId")),
        Method::PushConfigSet => value(&convert::push_config_from_v1(&typed::<
            TaskPushNotificationConfig,
        >(
            "the request", params
        )?)),
        Method::PushConfigGet | Method::PushConfigDelete => {
            let r = typed::<TaskPushNotificationConfigRef>("the request", params)?;
            Ok(json!({"id": r.task_id, "pushNotificationConfigId": r.id}))
        }
        Method::GetAuthenticatedExtendedCard => Ok(json!({})),
    }
}

/// The v1.0 result (as JSON) of a v0.3 agent's `result` for `op`.
pub(crate) fn result(op: Operation, result: Value) -> Result<Value, ClientError> {
    let what = "the v0.3 answer";
    match method(op)? {
        Method::MessageSend => value(
            &convert::send_result_to_v1(typed::<wire::Event>(what, result)?)
                .map_err(convert_err(what))?,
        ),
        Method::TasksGet | Method::TasksCancel => value(
            &convert::task_to_v1(typed::<wire::Task>(what, result)?).map_err(convert_err(what))?,
        ),
        Method::PushConfigSet | Method::PushConfigGet => value(&convert::set_push_config_to_v1(
            "",
            typed::<wire::TaskPushNotificationConfig>(what, result)?,
        )),
        Method::PushConfigList => {
            let configs = typed::<Vec<wire::TaskPushNotificationConfig>>(what, result)?;
            let configs: Vec<TaskPushNotificationConfig> = configs
                .into_iter()
                .map(|c| convert::set_push_config_to_v1("", c))
                .collect();
            Ok(json!({"configs": value(&configs)?}))
        }
        Method::PushConfigDelete => Ok(Value::Null),
        Method::GetAuthenticatedExtendedCard => {
            Ok(ferry_proto::v03::card_to_v1(&result).unwrap_or(result))
        }
        Method::MessageStream | Method::TasksResubscribe => Err(ClientError::Decode(format!(
            "{} answered with one document",
            op.name()
        ))),
    }
}

/// One v0.3 stream event's `result` as the v1.0 event it is.
pub(crate) fn event(result: Value) -> Result<StreamResponse, ClientError> {
    let what = "v0.3 stream event";
    convert::event_to_v1(typed::<wire::Event>(what, result)?).map_err(convert_err(what))
}
