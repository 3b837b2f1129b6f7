//! v0.3 over HTTP+JSON: the routes (`/v1/message:send`, `/v1/tasks/{id}`, …) and the
//! ProtoJSON of v0.3's `a2a.v1` proto, written to and read from the [`wire`] shapes of the
//! JSON-RPC binding (which [`super::convert`] turns into v1.0).
//!
//! v0.3's REST bodies are not its JSON-RPC bodies: no `kind` members, a message's parts are
//! `content`, roles and states are enum names (`ROLE_USER`, `TASK_STATE_CANCELLED`), a file
//! part is `{"file":{"fileWithUri"|"fileWithBytes",…}}`, a data part `{"data":{"data":{…}}}`,
//! a push config `{"name":"tasks/{id}/pushNotificationConfigs/{configId}",
//! "pushNotificationConfig":{…}}`. Answers carry only the proto's fields, because v0.3
//! clients parse them strictly (an unknown member fails their `ParseDict`); requests are
//! read tolerantly (either spelling of a member, the JSON-RPC names too), as ProtoJSON
//! parsers do.
//!
//! Proto3 semantics apply where they differ from JSON-RPC's: an absent `blocking` is
//! `false`, as the official v0.3 server reads it.

use super::convert::ConvertError;
use super::{Method, wire};
use serde_json::{Map, Value, json};

/// The path prefix of every v0.3 REST route (under the server's REST base path).
pub const PREFIX: &str = "v1";

/// A v0.3 REST route, matched: the method it stands for and its path parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The v0.3 method.
    pub method: Method,
    /// `{id}`: the task.
    pub task_id: String,
    /// `{push_id}`: the webhook.
    pub config_id: String,
}

/// The v0.3 route of `verb` (`GET`, `POST`, `DELETE`) on `segments` (the path below the REST
/// base, percent-decoded, starting with `v1`). `None`: no v0.3 route.
pub fn route(verb: &str, segments: &[&str]) -> Option<Route> {
    let (&first, rest) = segments.split_first()?;
    if first != PREFIX {
        return None;
    }
    let found = |method, task_id: &str, config_id: &str| {
        Some(Route {
            method,
            task_id: task_id.to_owned(),
            config_id: config_id.to_owned(),
        })
    };
    match (verb, rest) {
        ("POST", ["message:send"]) => found(Method::MessageSend, "", ""),
        ("POST", ["message:stream"]) => found(Method::MessageStream, "", ""),
        ("GET", ["card"]) => found(Method::GetAuthenticatedExtendedCard, "", ""),
        ("GET", ["tasks", id]) if !id.contains(':') => found(Method::TasksGet, id, ""),
        ("POST", ["tasks", action]) => match action.rsplit_once(':') {
            Some((id, "cancel")) => found(Method::TasksCancel, id, ""),
            Some((id, "subscribe")) => found(Method::TasksResubscribe, id, ""),
            _ => None,
        },
        ("GET", ["tasks", action]) => match action.rsplit_once(':') {
            Some((id, "subscribe")) => found(Method::TasksResubscribe, id, ""),
            _ => None,
        },
        ("POST", ["tasks", id, "pushNotificationConfigs"]) => found(Method::PushConfigSet, id, ""),
        ("GET", ["tasks", id, "pushNotificationConfigs"]) => found(Method::PushConfigList, id, ""),
        ("GET", ["tasks", id, "pushNotificationConfigs", config]) => {
            found(Method::PushConfigGet, id, config)
        }
        ("DELETE", ["tasks", id, "pushNotificationConfigs", config]) => {
            found(Method::PushConfigDelete, id, config)
        }
        _ => None,
    }
}

fn bad(why: impl Into<String>) -> ConvertError {
    ConvertError(why.into())
}

fn typed<T: serde::de::DeserializeOwned>(what: &str, value: Value) -> Result<T, ConvertError> {
    serde_json::from_value(value).map_err(|e| bad(format!("{what}: {e}")))
}

fn object(what: &str, value: Value) -> Result<Map<String, Value>, ConvertError> {
    match value {
        Value::Object(m) => Ok(m),
        other => Err(bad(format!("{what} must be an object, not {other}"))),
    }
}

/// Takes a member by its camelCase or snake_case name.
fn take(m: &mut Map<String, Value>, camel: &str, snake: &str) -> Option<Value> {
    m.remove(camel).or_else(|| m.remove(snake))
}

/// v0.3 proto's state names, by the JSON-RPC names of [`super::convert::state_name`].
const STATES: [(&str, &str); 9] = [
    ("unknown", "TASK_STATE_UNSPECIFIED"),
    ("submitted", "TASK_STATE_SUBMITTED"),
    ("working", "TASK_STATE_WORKING"),
    ("completed", "TASK_STATE_COMPLETED"),
    ("failed", "TASK_STATE_FAILED"),
    ("canceled", "TASK_STATE_CANCELLED"),
    ("input-required", "TASK_STATE_INPUT_REQUIRED"),
    ("rejected", "TASK_STATE_REJECTED"),
    ("auth-required", "TASK_STATE_AUTH_REQUIRED"),
];

const ROLES: [(&str, &str); 2] = [("user", "ROLE_USER"), ("agent", "ROLE_AGENT")];

/// The proto name of a JSON-RPC name (`table` is (JSON-RPC, proto) pairs).
fn to_proto(table: &[(&str, &'static str)], name: &str) -> Value {
    table
        .iter()
        .find(|(j, _)| *j == name)
        .map_or_else(|| json!(name), |(_, p)| json!(p))
}

/// The JSON-RPC name of a proto name; a JSON-RPC name is taken as it is.
fn from_proto(
    table: &[(&'static str, &str)],
    what: &str,
    value: Value,
) -> Result<Value, ConvertError> {
    let name = value
        .as_str()
        .ok_or_else(|| bad(format!("{what} must be a string, not {value}")))?;
    table
        .iter()
        .find(|(j, p)| *p == name || *j == name)
        .map(|(j, _)| json!(j))
        .ok_or_else(|| bad(format!("unknown v0.3 {what} {name:?}")))
}

// ---- reading requests (ProtoJSON → wire) ----

/// A ProtoJSON part as a JSON-RPC part.
fn part_from_rest(part: Value) -> Result<Value, ConvertError> {
    let mut p = object("a part", part)?;
    let mut out = Map::new();
    if let Some(md) = p.remove("metadata") {
        out.insert("metadata".into(), md);
    }
    if let Some(text) = p.remove("text") {
        out.insert("kind".into(), json!("text"));
        out.insert("text".into(), text);
    } else if let Some(file) = p.remove("file") {
        let mut f = object("a file part's file", file)?;
        let mut file = Map::new();
        if let Some(uri) = take(&mut f, "fileWithUri", "file_with_uri") {
            file.insert("uri".into(), uri);
        }
        if let Some(bytes) = take(&mut f, "fileWithBytes", "file_with_bytes") {
            file.insert("bytes".into(), bytes);
        }
        for (camel, snake) in [("mimeType", "mime_type"), ("name", "name")] {
            if let Some(v) = take(&mut f, camel, snake) {
                file.insert(camel.into(), v);
            }
        }
        out.insert("kind".into(), json!("file"));
        out.insert("file".into(), Value::Object(file));
    } else if let Some(data) = p.remove("data") {
        // DataPart { Struct data = 1; }: the object is one level down.
        let data = match object("a data part's data", data)?.remove("data") {
            Some(inner) => inner,
            None => json!({}),
        };
        out.insert("kind".into(), json!("data"));
        out.insert("data".into(), data);
    } else {
        return Err(bad("a part needs text, file or data"));
    }
    Ok(Value::Object(out))
}

fn parts_from_rest(parts: Option<Value>) -> Result<Value, ConvertError> {
    match parts {
        None | Some(Value::Null) => Ok(json!([])),
        Some(Value::Array(parts)) => parts
            .into_iter()
            .map(part_from_rest)
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Some(other) => Err(bad(format!("parts must be an array, not {other}"))),
    }
}

/// A ProtoJSON message as a JSON-RPC message value.
fn message_from_rest(message: Value) -> Result<Value, ConvertError> {
    let mut m = object("the message", message)?;
    let parts = take(&mut m, "content", "content").or_else(|| m.remove("parts"));
    m.insert("parts".into(), parts_from_rest(parts)?);
    let role = m.remove("role").unwrap_or(Value::Null);
    m.insert("role".into(), from_proto(&ROLES, "role", role)?);
    m.insert("kind".into(), json!("message"));
    Ok(Value::Object(m))
}

/// A ProtoJSON webhook as a JSON-RPC one.
fn webhook_from_rest(config: Value) -> Result<wire::PushNotificationConfig, ConvertError> {
    typed("the push notification config", config)
}

/// The body of `POST /v1/message:send` and `…:stream` (v0.3's `SendMessageRequest`:
/// `message` — or its proto name `request` — `configuration`, `metadata`).
pub fn send_request_from_rest(body: Value) -> Result<wire::MessageSendParams, ConvertError> {
    let mut b = object("the request body", body)?;
    let message = b
        .remove("message")
        .or_else(|| b.remove("request"))
        .ok_or_else(|| bad("the request needs a message"))?;
    let mut configuration = wire::MessageSendConfiguration::default();
    if let Some(c) = b.remove("configuration").filter(|c| !c.is_null()) {
        let mut c = object("configuration", c)?;
        if let Some(modes) = take(&mut c, "acceptedOutputModes", "accepted_output_modes") {
            configuration.accepted_output_modes = Some(typed("acceptedOutputModes", modes)?);
        }
        if let Some(n) = take(&mut c, "historyLength", "history_length") {
            configuration.history_length = Some(typed("historyLength", n)?);
        }
        if let Some(b) = c.remove("blocking") {
            configuration.blocking = Some(typed("blocking", b)?);
        }
        if let Some(push) = take(&mut c, "pushNotification", "push_notification")
            .or_else(|| take(&mut c, "pushNotificationConfig", "push_notification_config"))
        {
            configuration.push_notification_config = Some(webhook_from_rest(push)?);
        }
    }
    // Proto3: an absent bool is false.
    configuration.blocking = Some(configuration.blocking.unwrap_or(false));
    Ok(wire::MessageSendParams {
        message: typed("the message", message_from_rest(message)?)?,
        configuration: Some(configuration),
        metadata: b
            .remove("metadata")
            .filter(|m| !m.is_null())
            .map(|m| object("metadata", m))
            .transpose()?,
    })
}

/// The body of `POST /v1/tasks/{id}/pushNotificationConfigs` for task `task_id`: v0.3's
/// `CreateTaskPushNotificationConfigRequest` (`parent`, `configId`, `config`), as the official
/// client sends it, or the `TaskPushNotificationConfig` alone (the proto's `body: "config"`).
/// The path names the task; `configId` names the webhook when its config does not.
pub fn push_config_from_rest(
    task_id: &str,
    body: Value,
) -> Result<wire::TaskPushNotificationConfig, ConvertError> {
    let mut b = object("the request body", body)?;
    let config_id = take(&mut b, "configId", "config_id");
    let mut config = match b.remove("config") {
        Some(config) => object("config", config)?,
        None => b,
    };
    let webhook = take(
        &mut config,
        "pushNotificationConfig",
        "push_notification_config",
    )
    .ok_or_else(|| bad("the config needs a pushNotificationConfig"))?;
    let mut webhook = webhook_from_rest(webhook)?;
    if webhook.id.as_deref().is_none_or(str::is_empty)
        && let Some(Value::String(id)) = config_id
        && !id.is_empty()
    {
        webhook.id = Some(id);
    }
    Ok(wire::TaskPushNotificationConfig {
        task_id: task_id.to_owned(),
        push_notification_config: webhook,
    })
}

// ---- writing answers (wire → ProtoJSON) ----

/// Keeps the members of `m` a proto message has, in ProtoJSON's order of the list.
fn only(mut m: Map<String, Value>, fields: &[&str]) -> Map<String, Value> {
    let mut out = Map::new();
    for f in fields {
        if let Some(v) = m.remove(*f).filter(|v| !v.is_null()) {
            out.insert((*f).to_owned(), v);
        }
    }
    out
}

fn as_object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn part_to_rest(part: &wire::Part) -> Value {
    let (mut out, metadata) = match part {
        wire::Part::Text { text, metadata } => (json!({"text": text}), metadata),
        wire::Part::File { file, metadata } => {
            let mut f = Map::new();
            if let Some(uri) = &file.uri {
                f.insert("fileWithUri".into(), json!(uri));
            }
            if let Some(bytes) = &file.bytes {
                f.insert("fileWithBytes".into(), json!(bytes));
            }
            if let Some(mime) = &file.mime_type {
                f.insert("mimeType".into(), json!(mime));
            }
            if let Some(name) = &file.name {
                f.insert("name".into(), json!(name));
            }
            (json!({"file": f}), metadata)
        }
        wire::Part::Data { data, metadata } => (json!({"data": {"data": data}}), metadata),
    };
    if let Some(md) = metadata {
        out["metadata"] = Value::Object(md.clone());
    }
    out
}

fn parts_to_rest(parts: &[wire::Part]) -> Value {
    Value::Array(parts.iter().map(part_to_rest).collect())
}

/// A message in v0.3's ProtoJSON.
pub fn message_to_rest(m: &wire::Message) -> Value {
    let mut out = Map::new();
    out.insert("messageId".into(), json!(m.message_id));
    if let Some(c) = &m.context_id {
        out.insert("contextId".into(), json!(c));
    }
    if let Some(t) = &m.task_id {
        out.insert("taskId".into(), json!(t));
    }
    out.insert("role".into(), to_proto(&ROLES, &m.role));
    out.insert("content".into(), parts_to_rest(&m.parts));
    if let Some(md) = &m.metadata {
        out.insert("metadata".into(), Value::Object(md.clone()));
    }
    if let Some(x) = &m.extensions {
        out.insert("extensions".into(), json!(x));
    }
    Value::Object(out)
}

fn status_to_rest(s: &wire::TaskStatus) -> Value {
    let mut out = Map::new();
    out.insert("state".into(), to_proto(&STATES, &s.state));
    if let Some(m) = &s.message {
        out.insert("message".into(), message_to_rest(m));
    }
    if let Some(t) = &s.timestamp {
        out.insert("timestamp".into(), json!(t));
    }
    Value::Object(out)
}

fn artifact_to_rest(a: &wire::Artifact) -> Value {
    let mut out = Map::new();
    out.insert("artifactId".into(), json!(a.artifact_id));
    if let Some(n) = &a.name {
        out.insert("name".into(), json!(n));
    }
    if let Some(d) = &a.description {
        out.insert("description".into(), json!(d));
    }
    out.insert("parts".into(), parts_to_rest(&a.parts));
    if let Some(md) = &a.metadata {
        out.insert("metadata".into(), Value::Object(md.clone()));
    }
    if let Some(x) = &a.extensions {
        out.insert("extensions".into(), json!(x));
    }
    Value::Object(out)
}

/// A task in v0.3's ProtoJSON.
pub fn task_to_rest(t: &wire::Task) -> Value {
    let mut out = Map::new();
    out.insert("id".into(), json!(t.id));
    out.insert("contextId".into(), json!(t.context_id));
    out.insert("status".into(), status_to_rest(&t.status));
    if let Some(a) = &t.artifacts {
        out.insert(
            "artifacts".into(),
            Value::Array(a.iter().map(artifact_to_rest).collect()),
        );
    }
    if let Some(h) = &t.history {
        out.insert(
            "history".into(),
            Value::Array(h.iter().map(message_to_rest).collect()),
        );
    }
    if let Some(md) = &t.metadata {
        out.insert("metadata".into(), Value::Object(md.clone()));
    }
    Value::Object(out)
}

/// A `message:send` answer or a stream event in v0.3's ProtoJSON: `{"task"|"message"|
/// "statusUpdate"|"artifactUpdate": …}` (a send answer is only ever one of the first two).
pub fn event_to_rest(e: &wire::Event) -> Value {
    match e {
        wire::Event::Task(t) => json!({"task": task_to_rest(t)}),
        wire::Event::Message(m) => json!({"message": message_to_rest(m)}),
        wire::Event::StatusUpdate(u) => {
            let mut out = Map::new();
            out.insert("taskId".into(), json!(u.task_id));
            out.insert("contextId".into(), json!(u.context_id));
            out.insert("status".into(), status_to_rest(&u.status));
            out.insert("final".into(), json!(u.is_final));
            if let Some(md) = &u.metadata {
                out.insert("metadata".into(), Value::Object(md.clone()));
            }
            json!({"statusUpdate": out})
        }
        wire::Event::ArtifactUpdate(u) => {
            let mut out = Map::new();
            out.insert("taskId".into(), json!(u.task_id));
            out.insert("contextId".into(), json!(u.context_id));
            out.insert("artifact".into(), artifact_to_rest(&u.artifact));
            if let Some(a) = u.append {
                out.insert("append".into(), json!(a));
            }
            if let Some(l) = u.last_chunk {
                out.insert("lastChunk".into(), json!(l));
            }
            if let Some(md) = &u.metadata {
                out.insert("metadata".into(), Value::Object(md.clone()));
            }
            json!({"artifactUpdate": out})
        }
    }
}

/// A task's webhook in v0.3's ProtoJSON: its resource `name` and the config.
pub fn push_config_to_rest(c: &wire::TaskPushNotificationConfig) -> Value {
    let webhook = &c.push_notification_config;
    let id = webhook.id.as_deref().unwrap_or_default();
    let config = as_object(serde_json::to_value(webhook).unwrap_or_default());
    json!({
        "name": format!("tasks/{}/pushNotificationConfigs/{id}", c.task_id),
        "pushNotificationConfig": only(config, &["id", "url", "token", "authentication"]),
    })
}

/// `GET /v1/tasks/{id}/pushNotificationConfigs`' answer.
pub fn push_configs_to_rest(configs: &[wire::TaskPushNotificationConfig], next: &str) -> Value {
    let mut out = json!({"configs": configs.iter().map(push_config_to_rest).collect::<Vec<_>>()});
    if !next.is_empty() {
        out["nextPageToken"] = json!(next);
    }
    out
}
