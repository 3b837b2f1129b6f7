//! The operation table: every operation of the A2A v1.0 service once, with what each binding
//! calls it (spec §2.2, §2.3; `a2a.proto` `service A2AService` and its HTTP annotations).
//!
//! The JSON-RPC and REST bindings of the server route through it, the metrics label by it,
//! and the client builds its calls from it; a binding adds no operation knowledge of its own.

use crate::{
    AgentCard, CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, SendMessageRequest, SendMessageResponse, StreamResponse,
    SubscribeToTaskRequest, Task, TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// One operation of the A2A service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// Send a message; answer with the task or a direct message.
    SendMessage,
    /// Send a message; answer with a stream of events.
    SendStreamingMessage,
    /// One task.
    GetTask,
    /// A page of tasks.
    ListTasks,
    /// Cancel a task.
    CancelTask,
    /// Follow a task's events.
    SubscribeToTask,
    /// Register a webhook for a task.
    CreateTaskPushNotificationConfig,
    /// One webhook of a task.
    GetTaskPushNotificationConfig,
    /// A task's webhooks.
    ListTaskPushNotificationConfigs,
    /// Remove a webhook.
    DeleteTaskPushNotificationConfig,
    /// The card for authenticated callers.
    GetExtendedAgentCard,
}

/// An HTTP method of the REST binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HttpVerb {
    /// `GET`.
    Get,
    /// `POST`.
    Post,
    /// `DELETE`.
    Delete,
}

impl HttpVerb {
    /// The method's name as HTTP writes it.
    pub const fn as_str(self) -> &'static str {
        match self {
            HttpVerb::Get => "GET",
            HttpVerb::Post => "POST",
            HttpVerb::Delete => "DELETE",
        }
    }

    /// The verb for an HTTP method name.
    pub fn from_name(name: &str) -> Option<HttpVerb> {
        match name {
            "GET" => Some(HttpVerb::Get),
            "POST" => Some(HttpVerb::Post),
            "DELETE" => Some(HttpVerb::Delete),
            _ => None,
        }
    }
}

/// Where the REST binding carries an operation's request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestCarrier {
    /// The body is the request message (path parameters fill the fields they name).
    Body,
    /// The query string holds the request's fields (path parameters fill the rest).
    Query,
}

/// How the REST binding serves an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestRoute {
    /// The verbs it answers; the first is the one a client sends. SubscribeToTask answers GET
    /// (the proto) and POST (spec §5.3).
    pub verbs: &'static [HttpVerb],
    /// The path under the interface URL (and under an optional `/{tenant}` prefix). A
    /// `{name}` segment matches one non-empty path segment; `{name}:action` one that ends in
    /// `:action`.
    pub path: &'static str,
    /// Where the request goes.
    pub carrier: RestCarrier,
}

/// The values a REST path bound: `{id}` and `{taskId}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathParams {
    /// `{id}`: a task id, or a push config id under a task.
    pub id: Option<String>,
    /// `{taskId}`: the task of a push config.
    pub task_id: Option<String>,
}

impl Operation {
    /// Every operation, in the order of the proto service.
    pub const ALL: [Operation; 11] = [
        Operation::SendMessage,
        Operation::SendStreamingMessage,
        Operation::GetTask,
        Operation::ListTasks,
        Operation::CancelTask,
        Operation::SubscribeToTask,
        Operation::CreateTaskPushNotificationConfig,
        Operation::GetTaskPushNotificationConfig,
        Operation::ListTaskPushNotificationConfigs,
        Operation::DeleteTaskPushNotificationConfig,
        Operation::GetExtendedAgentCard,
    ];

    /// The proto method name, which is also the JSON-RPC `method`.
    pub const fn name(self) -> &'static str {
        match self {
            Operation::SendMessage => "SendMessage",
            Operation::SendStreamingMessage => "SendStreamingMessage",
            Operation::GetTask => "GetTask",
            Operation::ListTasks => "ListTasks",
            Operation::CancelTask => "CancelTask",
            Operation::SubscribeToTask => "SubscribeToTask",
            Operation::CreateTaskPushNotificationConfig => "CreateTaskPushNotificationConfig",
            Operation::GetTaskPushNotificationConfig => "GetTaskPushNotificationConfig",
            Operation::ListTaskPushNotificationConfigs => "ListTaskPushNotificationConfigs",
            Operation::DeleteTaskPushNotificationConfig => "DeleteTaskPushNotificationConfig",
            Operation::GetExtendedAgentCard => "GetExtendedAgentCard",
        }
    }

    /// The operation a JSON-RPC `method` names (exact, case-sensitive).
    pub fn from_name(name: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|op| op.name() == name)
    }

    /// The gRPC method path, `/lf.a2a.v1.A2AService/{name}` (the HTTP/2 `:path` of a call).
    ///
    /// ```
    /// use ferry_proto::Operation;
    ///
    /// assert_eq!(Operation::GetTask.grpc_path(), "/lf.a2a.v1.A2AService/GetTask");
    /// ```
    pub const fn grpc_path(self) -> &'static str {
        match self {
            Operation::SendMessage => "/lf.a2a.v1.A2AService/SendMessage",
            Operation::SendStreamingMessage => "/lf.a2a.v1.A2AService/SendStreamingMessage",
            Operation::GetTask => "/lf.a2a.v1.A2AService/GetTask",
            Operation::ListTasks => "/lf.a2a.v1.A2AService/ListTasks",
            Operation::CancelTask => "/lf.a2a.v1.A2AService/CancelTask",
            Operation::SubscribeToTask => "/lf.a2a.v1.A2AService/SubscribeToTask",
            Operation::CreateTaskPushNotificationConfig => {
                "/lf.a2a.v1.A2AService/CreateTaskPushNotificationConfig"
            }
            Operation::GetTaskPushNotificationConfig => {
                "/lf.a2a.v1.A2AService/GetTaskPushNotificationConfig"
            }
            Operation::ListTaskPushNotificationConfigs => {
                "/lf.a2a.v1.A2AService/ListTaskPushNotificationConfigs"
            }
            Operation::DeleteTaskPushNotificationConfig => {
                "/lf.a2a.v1.A2AService/DeleteTaskPushNotificationConfig"
            }
            Operation::GetExtendedAgentCard => "/lf.a2a.v1.A2AService/GetExtendedAgentCard",
        }
    }

    /// The operation a gRPC method path names (exact, case-sensitive).
    pub fn from_grpc_path(path: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|op| op.grpc_path() == path)
    }

    /// True when the answer is a stream of [`StreamResponse`] events.
    pub const fn is_streaming(self) -> bool {
        matches!(
            self,
            Operation::SendStreamingMessage | Operation::SubscribeToTask
        )
    }

    /// True when the operation only reads what is there: a task, a page of tasks, a task's
    /// events, a webhook config. Everything else starts, changes or removes something, or
    /// (`GetExtendedAgentCard`) reveals what only trusted callers are shown.
    pub const fn reads_tasks_only(self) -> bool {
        matches!(
            self,
            Operation::GetTask
                | Operation::ListTasks
                | Operation::SubscribeToTask
                | Operation::GetTaskPushNotificationConfig
                | Operation::ListTaskPushNotificationConfigs
        )
    }

    /// True for the four push-notification config operations.
    pub const fn is_push_config(self) -> bool {
        matches!(
            self,
            Operation::CreateTaskPushNotificationConfig
                | Operation::GetTaskPushNotificationConfig
                | Operation::ListTaskPushNotificationConfigs
                | Operation::DeleteTaskPushNotificationConfig
        )
    }

    /// How the REST binding serves it.
    pub const fn rest(self) -> RestRoute {
        use HttpVerb::{Delete, Get, Post};
        use RestCarrier::{Body, Query};
        let (verbs, path, carrier): (&'static [HttpVerb], &'static str, RestCarrier) = match self {
            Operation::SendMessage => (&[Post], "/message:send", Body),
            Operation::SendStreamingMessage => (&[Post], "/message:stream", Body),
            Operation::GetTask => (&[Get], "/tasks/{id}", Query),
            Operation::ListTasks => (&[Get], "/tasks", Query),
            Operation::CancelTask => (&[Post], "/tasks/{id}:cancel", Body),
            Operation::SubscribeToTask => (&[Post, Get], "/tasks/{id}:subscribe", Query),
            Operation::CreateTaskPushNotificationConfig => {
                (&[Post], "/tasks/{taskId}/pushNotificationConfigs", Body)
            }
            Operation::GetTaskPushNotificationConfig => (
                &[Get],
                "/tasks/{taskId}/pushNotificationConfigs/{id}",
                Query,
            ),
            Operation::ListTaskPushNotificationConfigs => {
                (&[Get], "/tasks/{taskId}/pushNotificationConfigs", Query)
            }
            Operation::DeleteTaskPushNotificationConfig => (
                &[Delete],
                "/tasks/{taskId}/pushNotificationConfigs/{id}",
                Query,
            ),
            Operation::GetExtendedAgentCard => (&[Get], "/extendedAgentCard", Query),
        };
        RestRoute {
            verbs,
            path,
            carrier,
        }
    }

    /// The REST path of this operation with `params` filled in and percent-encoded (no
    /// tenant prefix), or `None` when a parameter the path names is missing.
    pub fn rest_path(self, params: &PathParams) -> Option<String> {
        let mut out = String::new();
        for segment in self.rest().path.split('/').skip(1) {
            out.push('/');
            match Placeholder::parse(segment) {
                None => out.push_str(segment),
                Some(p) => {
                    let value = p.value_of(params)?;
                    if value.is_empty() {
                        return None;
                    }
                    push_encoded(&mut out, value);
                    if let Some(action) = p.action {
                        out.push(':');
                        out.push_str(action);
                    }
                }
            }
        }
        Some(out)
    }

    /// The operation a REST request names: its verb and its path (segments already
    /// percent-decoded, without the interface base; a `/{tenant}` prefix is the caller's to
    /// strip), with the parameters the path binds. Routes with an `:action` are tried before
    /// the bare `{id}` of GetTask, so `/tasks/abc:cancel` is never a GetTask of `abc:cancel`;
    /// the id of an action is what precedes the last `:`.
    pub fn match_rest(
        verb: HttpVerb,
        segments: &[&str],
    ) -> Result<(Operation, PathParams), RestMiss> {
        // Two passes: a path that an action or literal template claims is never the bare
        // `{id}` of GetTask (`GET /tasks/abc:cancel` is 405, not a GetTask of `abc:cancel`).
        for bare in [false, true] {
            let mut path_matched = false;
            for op in Operation::ALL {
                if op.rest().path.ends_with("{id}") != bare {
                    continue;
                }
                let Some(params) = match_template(op.rest().path, segments) else {
                    continue;
                };
                if op.rest().verbs.contains(&verb) {
                    return Ok((op, params));
                }
                path_matched = true;
            }
            if path_matched {
                return Err(RestMiss::VerbNotAllowed);
            }
        }
        Err(RestMiss::NoRoute)
    }
}

/// Why [`Operation::match_rest`] found no operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestMiss {
    /// No operation has this path (404).
    NoRoute,
    /// Operations have this path, none with this verb (405).
    VerbNotAllowed,
}

/// A `{name}` or `{name}:action` template segment.
struct Placeholder<'a> {
    name: &'a str,
    action: Option<&'a str>,
}

impl<'a> Placeholder<'a> {
    fn parse(segment: &'a str) -> Option<Self> {
        let rest = segment.strip_prefix('{')?;
        let (name, after) = rest.split_once('}')?;
        let action = match after {
            "" => None,
            a => Some(a.strip_prefix(':')?),
        };
        Some(Placeholder { name, action })
    }

    fn value_of<'p>(&self, params: &'p PathParams) -> Option<&'p str> {
        match self.name {
            "id" => params.id.as_deref(),
            "taskId" => params.task_id.as_deref(),
            _ => None,
        }
    }
}

fn match_template(template: &str, segments: &[&str]) -> Option<PathParams> {
    // Counted without collecting: routing runs on every REST request.
    if template.matches('/').count() != segments.len() {
        return None;
    }
    let mut params = PathParams::default();
    for (part, segment) in template.split('/').skip(1).zip(segments) {
        match Placeholder::parse(part) {
            None if part == *segment => {}
            None => return None,
            Some(p) => {
                let value = match p.action {
                    None => *segment,
                    Some(action) => match segment.rsplit_once(':') {
                        Some((value, a)) if a == action => value,
                        _ => return None,
                    },
                };
                if value.is_empty() {
                    return None;
                }
                let slot = match p.name {
                    "id" => &mut params.id,
                    "taskId" => &mut params.task_id,
                    _ => return None,
                };
                *slot = Some(value.to_owned());
            }
        }
    }
    Some(params)
}

/// Appends `value` percent-encoded as one path segment (everything but RFC 3986 unreserved).
fn push_encoded(out: &mut String, value: &str) {
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(char::from(b));
            }
            _ => {
                const HEX: &[u8; 16] = b"0123456789ABCDEF";
                out.push('%');
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 15)]));
            }
        }
    }
}

/// `google.protobuf.Empty`: what DeleteTaskPushNotificationConfig answers (`{}`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct Empty {}

crate::message::proto_messages!(Empty);

/// An operation's types, for code that is generic over operations (the client's calls). Each
/// operation has a marker type in [`ops`].
pub trait OperationType {
    /// The operation.
    const OPERATION: Operation;
    /// Its request message.
    type Request: Serialize + DeserializeOwned;
    /// Its response message; for a streaming operation, each event of the stream.
    type Response: Serialize + DeserializeOwned;
}

/// Marker types of the operations, one per row of the table.
pub mod ops {
    use super::*;

    macro_rules! operations {
        ($($name:ident: $req:ty => $resp:ty;)+) => {$(
            #[doc = concat!("The `", stringify!($name), "` operation.")]
            #[derive(Debug, Clone, Copy, PartialEq, Eq)]
            pub struct $name;

            impl OperationType for $name {
                const OPERATION: Operation = Operation::$name;
                type Request = $req;
                type Response = $resp;
            }
        )+};
    }

    operations! {
        SendMessage: SendMessageRequest => SendMessageResponse;
        SendStreamingMessage: SendMessageRequest => StreamResponse;
        GetTask: GetTaskRequest => Task;
        ListTasks: ListTasksRequest => ListTasksResponse;
        CancelTask: CancelTaskRequest => Task;
        SubscribeToTask: SubscribeToTaskRequest => StreamResponse;
        CreateTaskPushNotificationConfig: TaskPushNotificationConfig => TaskPushNotificationConfig;
        GetTaskPushNotificationConfig: TaskPushNotificationConfigRef => TaskPushNotificationConfig;
        ListTaskPushNotificationConfigs:
            ListTaskPushNotificationConfigsRequest => ListTaskPushNotificationConfigsResponse;
        DeleteTaskPushNotificationConfig: TaskPushNotificationConfigRef => Empty;
        GetExtendedAgentCard: GetExtendedAgentCardRequest => AgentCard;
    }
}

/// Reads one request message of whatever type an operation needs; see [`A2aRequest::decode`].
pub trait RequestDecoder {
    /// Why a message could not be read.
    type Error;
    /// Reads the message as a `T`.
    fn decode<T: DeserializeOwned>(&mut self) -> Result<T, Self::Error>;
}

/// A request of any operation, decoded: what a binding hands the request handler.
#[derive(Debug, Clone, PartialEq)]
pub enum A2aRequest {
    /// SendMessage.
    SendMessage(SendMessageRequest),
    /// SendStreamingMessage.
    SendStreamingMessage(SendMessageRequest),
    /// GetTask.
    GetTask(GetTaskRequest),
    /// ListTasks.
    ListTasks(ListTasksRequest),
    /// CancelTask.
    CancelTask(CancelTaskRequest),
    /// SubscribeToTask.
    SubscribeToTask(SubscribeToTaskRequest),
    /// CreateTaskPushNotificationConfig.
    CreateTaskPushNotificationConfig(TaskPushNotificationConfig),
    /// GetTaskPushNotificationConfig.
    GetTaskPushNotificationConfig(TaskPushNotificationConfigRef),
    /// ListTaskPushNotificationConfigs.
    ListTaskPushNotificationConfigs(ListTaskPushNotificationConfigsRequest),
    /// DeleteTaskPushNotificationConfig.
    DeleteTaskPushNotificationConfig(TaskPushNotificationConfigRef),
    /// GetExtendedAgentCard.
    GetExtendedAgentCard(GetExtendedAgentCardRequest),
}

impl A2aRequest {
    /// Decodes the request of `op` with `decoder`, which reads one message of any type: the
    /// per-operation `match` lives here, the reading (strict, with located errors, from a
    /// JSON-RPC `params` member or a REST body) with the caller.
    pub fn decode<D: RequestDecoder>(op: Operation, decoder: D) -> Result<A2aRequest, D::Error> {
        let mut d = decoder;
        Ok(match op {
            Operation::SendMessage => A2aRequest::SendMessage(d.decode()?),
            Operation::SendStreamingMessage => A2aRequest::SendStreamingMessage(d.decode()?),
            Operation::GetTask => A2aRequest::GetTask(d.decode()?),
            Operation::ListTasks => A2aRequest::ListTasks(d.decode()?),
            Operation::CancelTask => A2aRequest::CancelTask(d.decode()?),
            Operation::SubscribeToTask => A2aRequest::SubscribeToTask(d.decode()?),
            Operation::CreateTaskPushNotificationConfig => {
                A2aRequest::CreateTaskPushNotificationConfig(d.decode()?)
            }
            Operation::GetTaskPushNotificationConfig => {
                A2aRequest::GetTaskPushNotificationConfig(d.decode()?)
            }
            Operation::ListTaskPushNotificationConfigs => {
                A2aRequest::ListTaskPushNotificationConfigs(d.decode()?)
            }
            Operation::DeleteTaskPushNotificationConfig => {
                A2aRequest::DeleteTaskPushNotificationConfig(d.decode()?)
            }
            Operation::GetExtendedAgentCard => A2aRequest::GetExtendedAgentCard(d.decode()?),
        })
    }

    /// Decodes `json` as the request of `op` with plain serde (no strict check).
    pub fn from_json(op: Operation, json: &str) -> Result<A2aRequest, serde_json::Error> {
        struct Serde<'a>(&'a str);
        impl RequestDecoder for Serde<'_> {
            type Error = serde_json::Error;
            fn decode<T: DeserializeOwned>(&mut self) -> Result<T, serde_json::Error> {
                serde_json::from_str(self.0)
            }
        }
        A2aRequest::decode(op, Serde(json))
    }

    /// The operation this is a request of.
    pub const fn operation(&self) -> Operation {
        match self {
            A2aRequest::SendMessage(_) => Operation::SendMessage,
            A2aRequest::SendStreamingMessage(_) => Operation::SendStreamingMessage,
            A2aRequest::GetTask(_) => Operation::GetTask,
            A2aRequest::ListTasks(_) => Operation::ListTasks,
            A2aRequest::CancelTask(_) => Operation::CancelTask,
            A2aRequest::SubscribeToTask(_) => Operation::SubscribeToTask,
            A2aRequest::CreateTaskPushNotificationConfig(_) => {
                Operation::CreateTaskPushNotificationConfig
            }
            A2aRequest::GetTaskPushNotificationConfig(_) => {
                Operation::GetTaskPushNotificationConfig
            }
            A2aRequest::ListTaskPushNotificationConfigs(_) => {
                Operation::ListTaskPushNotificationConfigs
            }
            A2aRequest::DeleteTaskPushNotificationConfig(_) => {
                Operation::DeleteTaskPushNotificationConfig
            }
            A2aRequest::GetExtendedAgentCard(_) => Operation::GetExtendedAgentCard,
        }
    }

    /// The request's `tenant` field.
    pub fn tenant(&self) -> &str {
        match self {
            A2aRequest::SendMessage(r) | A2aRequest::SendStreamingMessage(r) => &r.tenant,
            A2aRequest::GetTask(r) => &r.tenant,
            A2aRequest::ListTasks(r) => &r.tenant,
            A2aRequest::CancelTask(r) => &r.tenant,
            A2aRequest::SubscribeToTask(r) => &r.tenant,
            A2aRequest::CreateTaskPushNotificationConfig(r) => &r.tenant,
            A2aRequest::GetTaskPushNotificationConfig(r)
            | A2aRequest::DeleteTaskPushNotificationConfig(r) => &r.tenant,
            A2aRequest::ListTaskPushNotificationConfigs(r) => &r.tenant,
            A2aRequest::GetExtendedAgentCard(r) => &r.tenant,
        }
    }

    /// The request's `tenant` field, to set (a REST path's tenant wins over the body's).
    pub fn tenant_mut(&mut self) -> &mut String {
        match self {
            A2aRequest::SendMessage(r) | A2aRequest::SendStreamingMessage(r) => &mut r.tenant,
            A2aRequest::GetTask(r) => &mut r.tenant,
            A2aRequest::ListTasks(r) => &mut r.tenant,
            A2aRequest::CancelTask(r) => &mut r.tenant,
            A2aRequest::SubscribeToTask(r) => &mut r.tenant,
            A2aRequest::CreateTaskPushNotificationConfig(r) => &mut r.tenant,
            A2aRequest::GetTaskPushNotificationConfig(r)
            | A2aRequest::DeleteTaskPushNotificationConfig(r) => &mut r.tenant,
            A2aRequest::ListTaskPushNotificationConfigs(r) => &mut r.tenant,
            A2aRequest::GetExtendedAgentCard(r) => &mut r.tenant,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_exact() {
        for op in Operation::ALL {
            assert_eq!(Operation::from_name(op.name()), Some(op));
        }
        assert_eq!(Operation::from_name("sendMessage"), None);
        assert_eq!(Operation::from_name("message/send"), None);
    }

    #[test]
    fn grpc_paths_are_the_service_and_method_names() {
        for op in Operation::ALL {
            assert_eq!(
                op.grpc_path(),
                format!("/lf.a2a.v1.A2AService/{}", op.name())
            );
            assert_eq!(Operation::from_grpc_path(op.grpc_path()), Some(op));
        }
        assert_eq!(Operation::from_grpc_path("SendMessage"), None);
        assert_eq!(
            Operation::from_grpc_path("/lf.a2a.v1.A2AService/sendMessage"),
            None
        );
        assert_eq!(
            Operation::from_grpc_path("/a2a.v1.A2AService/SendMessage"),
            None
        );
        assert_eq!(
            Operation::from_grpc_path("/lf.a2a.v1.A2AService/SendMessage/"),
            None
        );
    }

    fn route_as(verb: HttpVerb, path: &str) -> Result<(Operation, PathParams), RestMiss> {
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        Operation::match_rest(verb, &segments)
    }

    /// The route with the verb the operation expects (POST for actions, GET otherwise).
    fn route(path: &str) -> Option<(Operation, PathParams)> {
        let verb = if path.contains(':') {
            HttpVerb::Post
        } else {
            HttpVerb::Get
        };
        route_as(verb, path).ok()
    }

    fn id(s: &str) -> PathParams {
        PathParams {
            id: Some(s.into()),
            task_id: None,
        }
    }

    #[test]
    fn actions_never_fall_into_get_task() {
        assert_eq!(
            route("/tasks/abc:subscribe"),
            Some((Operation::SubscribeToTask, id("abc")))
        );
        assert_eq!(
            route("/tasks/abc:cancel"),
            Some((Operation::CancelTask, id("abc")))
        );
        assert_eq!(
            route("/tasks/a:b:cancel"),
            Some((Operation::CancelTask, id("a:b")))
        );
        assert_eq!(route("/tasks/abc"), Some((Operation::GetTask, id("abc"))));
        let get = |path| route_as(HttpVerb::Get, path).ok();
        assert_eq!(get("/tasks/a:b"), Some((Operation::GetTask, id("a:b"))));
        assert_eq!(
            get("/tasks/:cancel"),
            Some((Operation::GetTask, id(":cancel")))
        );
        assert_eq!(
            route_as(HttpVerb::Get, "/tasks/abc:cancel"),
            Err(RestMiss::VerbNotAllowed),
            "an action path with the wrong verb is 405, never a GetTask"
        );
        assert_eq!(
            route("/tasks"),
            Some((Operation::ListTasks, PathParams::default()))
        );
        assert_eq!(
            route("/message:send"),
            Some((Operation::SendMessage, PathParams::default()))
        );
        assert_eq!(
            route("/t1/message:send"),
            None,
            "tenant prefixes are the caller's"
        );
        assert_eq!(
            route("/tasks/t/pushNotificationConfigs/c"),
            Some((
                Operation::GetTaskPushNotificationConfig,
                PathParams {
                    id: Some("c".into()),
                    task_id: Some("t".into())
                },
            ))
        );
        assert_eq!(
            route("/extendedAgentCard").map(|r| r.0),
            Some(Operation::GetExtendedAgentCard)
        );
        assert_eq!(route("/nope"), None);
        assert_eq!(route_as(HttpVerb::Delete, "/nope"), Err(RestMiss::NoRoute));
        assert_eq!(
            route_as(HttpVerb::Delete, "/tasks"),
            Err(RestMiss::VerbNotAllowed)
        );
        assert_eq!(
            route_as(HttpVerb::Get, "/message:send"),
            Err(RestMiss::VerbNotAllowed)
        );
        assert_eq!(
            route_as(HttpVerb::Delete, "/tasks/t/pushNotificationConfigs/c").map(|r| r.0),
            Ok(Operation::DeleteTaskPushNotificationConfig)
        );
    }

    #[test]
    fn every_path_is_built_and_matched_back() {
        let params = PathParams {
            id: Some("a/b c".into()),
            task_id: Some("t:1".into()),
        };
        for op in Operation::ALL {
            let path = op.rest_path(&params).expect("every parameter given");
            let decoded: Vec<String> = path
                .split('/')
                .skip(1)
                .map(|s| {
                    let bytes: Vec<u8> = (0..s.len())
                        .scan(0, |skip, i| {
                            if *skip > 0 {
                                *skip -= 1;
                                return Some(None);
                            }
                            if s.as_bytes()[i] == b'%' {
                                *skip = 2;
                                return Some(u8::from_str_radix(&s[i + 1..i + 3], 16).ok());
                            }
                            Some(Some(s.as_bytes()[i]))
                        })
                        .flatten()
                        .collect();
                    String::from_utf8(bytes).expect("utf-8")
                })
                .collect();
            let segments: Vec<&str> = decoded.iter().map(String::as_str).collect();
            for &verb in op.rest().verbs {
                let (matched, _) = Operation::match_rest(verb, &segments).expect("matches");
                assert_eq!(matched, op, "{} {path}", verb.as_str());
            }
            let (_, bound) = Operation::match_rest(op.rest().verbs[0], &segments).expect("matches");
            let template = op.rest().path;
            if template.contains("{id}") {
                assert_eq!(bound.id.as_deref(), Some("a/b c"), "{path}");
            }
            if template.contains("{taskId}") {
                assert_eq!(bound.task_id.as_deref(), Some("t:1"), "{path}");
            }
        }
        assert_eq!(Operation::GetTask.rest_path(&PathParams::default()), None);
    }

    #[test]
    fn streaming_and_push_rows() {
        let streaming: Vec<_> = Operation::ALL
            .into_iter()
            .filter(|o| o.is_streaming())
            .collect();
        assert_eq!(
            streaming,
            [Operation::SendStreamingMessage, Operation::SubscribeToTask]
        );
        assert_eq!(
            Operation::ALL
                .into_iter()
                .filter(|o| o.is_push_config())
                .count(),
            4
        );
        assert_eq!(
            Operation::SubscribeToTask.rest().verbs,
            [HttpVerb::Post, HttpVerb::Get]
        );
    }

    #[test]
    fn requests_decode_per_operation() {
        let r =
            A2aRequest::from_json(Operation::GetTask, r#"{"id":"t","tenant":"x"}"#).expect("get");
        assert_eq!(r.operation(), Operation::GetTask);
        assert_eq!(r.tenant(), "x");
        assert!(
            A2aRequest::from_json(Operation::GetTask, "{}").is_err(),
            "id is required"
        );
        for op in Operation::ALL {
            if let Ok(r) = A2aRequest::from_json(
                op,
                r#"{"id":"t","taskId":"t","url":"https://h","message":{"messageId":"m","role":"ROLE_USER","parts":[]}}"#,
            ) {
                assert_eq!(r.operation(), op);
            }
        }
    }
}
