//! The HTTP+JSON (REST) binding (spec §2.3): every route, also under a `/{tenant}` prefix.
//!
//! Routing is done by hand on path segments so that `/tasks/{id}:subscribe` and
//! `/tasks/{id}:cancel` can never fall into GetTask, and so that a tenant prefix is recognised
//! only when the path does not already match a route without one.

use crate::core::handler::{CallContext, JsonDoc};
use crate::core::stream::StreamItem;
use crate::http::app::AppState;
use crate::http::decode::{self, BodyLimits};
use crate::http::metrics::{self, CallLabel};
use crate::http::params;
use crate::http::request_id::{ClientAddr, RequestId};
use crate::http::response::{
    is_json_content_type, json, plain_error, read_body, rest_error, with_extensions,
};
use crate::http::sse::SseFraming;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{Method, StatusCode, header};
use axum::response::Response;
use bytes::{BufMut, Bytes, BytesMut};
use ferry_proto::{
    A2aError, CancelTaskRequest, ErrorKind, ErrorTable, GetTaskRequest, ListTasksRequest,
    SendMessageRequest, SubscribeToTaskRequest, TaskState, Timestamp,
};
use serde::Serialize;
use std::sync::Arc;

/// A REST operation with its path parameters.
#[derive(Debug, PartialEq, Eq)]
enum Route {
    Send,
    Stream,
    ListTasks,
    GetTask(String),
    Cancel(String),
    Subscribe(String),
    PushConfigs(String),
    PushConfig(String, String),
    ExtendedCard,
}

impl Route {
    /// Matches segments (already percent-decoded) without a tenant prefix.
    fn match_segments(segs: &[String]) -> Option<Self> {
        let s: Vec<&str> = segs.iter().map(String::as_str).collect();
        Some(match s.as_slice() {
            ["message:send"] => Self::Send,
            ["message:stream"] => Self::Stream,
            ["tasks"] => Self::ListTasks,
            ["extendedAgentCard"] => Self::ExtendedCard,
            ["tasks", id_action] => match id_action.rsplit_once(':') {
                Some((id, "cancel")) if !id.is_empty() => Self::Cancel(id.to_owned()),
                Some((id, "subscribe")) if !id.is_empty() => Self::Subscribe(id.to_owned()),
                _ if !id_action.is_empty() => Self::GetTask((*id_action).to_owned()),
                _ => return None,
            },
            ["tasks", id, "pushNotificationConfigs"] => Self::PushConfigs((*id).to_owned()),
            ["tasks", id, "pushNotificationConfigs", cid] => {
                Self::PushConfig((*id).to_owned(), (*cid).to_owned())
            }
            _ => return None,
        })
    }

    /// How the metrics name this route's operation.
    fn metric(&self) -> metrics::Method {
        match self {
            Self::Send => metrics::Method::SendMessage,
            Self::Stream => metrics::Method::SendStreamingMessage,
            Self::ListTasks => metrics::Method::ListTasks,
            Self::GetTask(_) => metrics::Method::GetTask,
            Self::Cancel(_) => metrics::Method::CancelTask,
            Self::Subscribe(_) => metrics::Method::SubscribeToTask,
            Self::PushConfigs(_) | Self::PushConfig(..) => metrics::Method::PushConfig,
            Self::ExtendedCard => metrics::Method::GetExtendedAgentCard,
        }
    }

    /// The methods this route answers.
    fn allows(&self, method: &Method) -> bool {
        match self {
            Self::Send | Self::Stream | Self::Cancel(_) => method == Method::POST,
            Self::Subscribe(_) => method == Method::POST || method == Method::GET,
            Self::ListTasks | Self::GetTask(_) | Self::ExtendedCard => method == Method::GET,
            Self::PushConfigs(_) => method == Method::GET || method == Method::POST,
            Self::PushConfig(..) => method == Method::GET || method == Method::DELETE,
        }
    }
}

/// Splits a path into percent-decoded segments.
fn segments(path: &str) -> Result<Vec<String>, A2aError> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            percent_decode(s).ok_or_else(|| {
                A2aError::invalid_params(format!(
                    "path segment {s:?} is not valid percent-encoded UTF-8"
                ))
            })
        })
        .collect()
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Handles every request under the REST base path.
pub async fn handle(State(app): State<Arc<AppState>>, request: Request) -> Response {
    let table = app.config.error_table;
    let (parts, body) = request.into_parts();
    let rid = parts.extensions.get::<RequestId>().cloned();
    let rid = rid.as_ref();
    let body = match read_body(body, app.config.max_body_bytes).await {
        Ok(b) => b,
        Err(e) => return plain_error(StatusCode::PAYLOAD_TOO_LARGE, &e, rid),
    };
    let full_path = parts.uri.path();
    let rest_path = full_path
        .strip_prefix(app.config.rest_path.as_str())
        .unwrap_or(full_path);
    let mut label = metrics::Method::Other;
    let (mut response, ok) = match serve(&app, &parts, rest_path, body, &mut label).await {
        Ok(r) => (r, true),
        Err(Failure::A2a(e)) => (rest_error(&e, table, rid), false),
        Err(Failure::Http(status, e)) => (plain_error(status, &e, rid), false),
    };
    response
        .extensions_mut()
        .insert(CallLabel { method: label, ok });
    response
}

/// Errors whose HTTP status is not the A2A table's (routing, media type).
enum Failure {
    A2a(A2aError),
    Http(StatusCode, A2aError),
}

impl From<A2aError> for Failure {
    fn from(e: A2aError) -> Self {
        Self::A2a(e)
    }
}

async fn serve(
    app: &AppState,
    parts: &Parts,
    path: &str,
    body: Bytes,
    label: &mut metrics::Method,
) -> Result<Response, Failure> {
    let (method, uri, headers) = (&parts.method, &parts.uri, &parts.headers);
    let segs = segments(path)?;
    let (tenant, route) = match Route::match_segments(&segs) {
        Some(r) => (String::new(), r),
        None => match segs.split_first() {
            Some((tenant, rest)) => match Route::match_segments(rest) {
                Some(r) => (tenant.clone(), r),
                None => return Err(not_found(path)),
            },
            None => return Err(not_found(path)),
        },
    };
    *label = route.metric();
    if !route.allows(method) {
        let e = A2aError::new(
            ErrorKind::MethodNotFound,
            format!("{method} is not allowed on {path}"),
        );
        return Err(Failure::Http(StatusCode::METHOD_NOT_ALLOWED, e));
    }
    if *method == Method::POST && !is_json_content_type(headers.get(header::CONTENT_TYPE)) {
        let e = A2aError::new(
            ErrorKind::ContentTypeNotSupported,
            "the request content type must be application/json",
        );
        return Err(Failure::Http(StatusCode::UNSUPPORTED_MEDIA_TYPE, e));
    }
    params::check_version(headers, uri.query(), &app.config)?;
    let extensions =
        params::activate_extensions(headers, &app.declared_extensions, &app.required_extensions)?;
    let call = CallContext {
        tenant,
        extensions,
        caller: None,
        client: parts.extensions.get::<ClientAddr>().map(|c| c.0.ip()),
    };
    let query = uri.query().unwrap_or_default();
    let limits = app.config.body_limits();
    let h = &app.handler;
    let framing = RestFraming(app.config.error_table);
    let response = match route {
        Route::Send => ok_doc(
            h.send_message(&call, send_body(&body, &call, limits)?)
                .await?,
        ),
        Route::Stream => {
            let permit = app.stream_permit()?;
            let stream = h
                .send_streaming(&call, send_body(&body, &call, limits)?)
                .await?;
            app.sse(stream, framing, permit)
        }
        Route::ListTasks => ok(h.list_tasks(&call, &list_query(query)?)?),
        Route::GetTask(id) => {
            let history_length = query_pairs(query)
                .find(|(k, _)| is_key(k, "historyLength"))
                .map(|(_, v)| parse_int("historyLength", &v))
                .transpose()?;
            ok_doc(h.get_task(
                &call,
                &GetTaskRequest {
                    tenant: call.tenant.clone(),
                    id,
                    history_length,
                },
            )?)
        }
        Route::Cancel(id) => {
            let req = cancel_body(&body, id, limits)?;
            ok_doc(h.cancel_task(&call, &req).await?)
        }
        Route::Subscribe(id) => {
            let req = SubscribeToTaskRequest {
                tenant: call.tenant.clone(),
                id,
            };
            let permit = app.stream_permit()?;
            app.sse(
                h.subscribe(&call, &req, params::last_event_id(headers))?,
                framing,
                permit,
            )
        }
        Route::PushConfigs(_) | Route::PushConfig(..) => {
            return Err(h.push_config_unsupported().into());
        }
        Route::ExtendedCard => ok(h.extended_card()?),
    };
    Ok(with_extensions(response, &call.extensions))
}

fn not_found(path: &str) -> Failure {
    Failure::Http(
        StatusCode::NOT_FOUND,
        A2aError::new(
            ErrorKind::MethodNotFound,
            format!("no A2A operation at {path:?}"),
        ),
    )
}

/// Parses a SendMessageRequest body; the tenant of the path wins over the body's.
fn send_body(
    body: &[u8],
    call: &CallContext,
    limits: BodyLimits,
) -> Result<SendMessageRequest, A2aError> {
    let mut req: SendMessageRequest = decode::body(body, limits)?;
    if !call.tenant.is_empty() {
        req.tenant.clone_from(&call.tenant);
    }
    Ok(req)
}

/// A CancelTask body: it may be empty or `null`; the task id comes from the path (and wins
/// over one in the body).
fn cancel_body(body: &[u8], id: String, limits: BodyLimits) -> Result<CancelTaskRequest, A2aError> {
    let text = body.trim_ascii();
    let mut req = if text.is_empty() || text == b"null" {
        CancelTaskRequest {
            tenant: String::new(),
            id: String::new(),
            metadata: None,
        }
    } else {
        decode::body::<CancelBody>(body, limits)?.0
    };
    req.id = id;
    Ok(req)
}

/// A CancelTaskRequest whose `id` may be missing (REST carries it in the path).
struct CancelBody(CancelTaskRequest);

impl<'de> serde::Deserialize<'de> for CancelBody {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        struct WithoutId {
            #[serde(default)]
            tenant: Option<String>,
            #[serde(default)]
            metadata: Option<ferry_proto::Struct>,
        }
        let ferry_proto::ObjectOnly(w) = ferry_proto::ObjectOnly::<WithoutId>::deserialize(d)?;
        Ok(CancelBody(CancelTaskRequest {
            tenant: w.tenant.unwrap_or_default(),
            id: String::new(),
            metadata: w.metadata,
        }))
    }
}

fn query_pairs(query: &str) -> impl Iterator<Item = (String, String)> + '_ {
    query.split('&').filter(|kv| !kv.is_empty()).map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        let decode = |s: &str| percent_decode(&s.replace('+', " ")).unwrap_or_else(|| s.to_owned());
        (decode(k), decode(v))
    })
}

/// Matches a query key in camelCase or its snake_case proto name.
fn is_key(key: &str, camel: &str) -> bool {
    if key == camel {
        return true;
    }
    let mut snake = String::with_capacity(camel.len() + 4);
    for c in camel.chars() {
        if c.is_ascii_uppercase() {
            snake.push('_');
            snake.push(c.to_ascii_lowercase());
        } else {
            snake.push(c);
        }
    }
    key == snake
}

fn bad_query(name: &str, value: &str, why: &str) -> A2aError {
    A2aError::invalid_params(format!(
        "query parameter {name}={value:?} is invalid: {why}"
    ))
    .with_violation(name, why)
}

fn parse_int(name: &str, value: &str) -> Result<i32, A2aError> {
    value
        .trim()
        .parse()
        .map_err(|_| bad_query(name, value, "not an integer"))
}

/// Parses the ListTasks query string (spec §11.5).
fn list_query(query: &str) -> Result<ListTasksRequest, A2aError> {
    let mut req = ListTasksRequest::default();
    for (k, v) in query_pairs(query) {
        if is_key(&k, "contextId") {
            req.context_id = v;
        } else if is_key(&k, "status") {
            req.status = TaskState::from_name(&v)
                .or_else(|| v.parse().ok().and_then(TaskState::from_number))
                .ok_or_else(|| bad_query("status", &v, "not a TASK_STATE_* value"))?;
        } else if is_key(&k, "pageSize") {
            req.page_size = Some(parse_int("pageSize", &v)?);
        } else if is_key(&k, "pageToken") {
            req.page_token = v;
        } else if is_key(&k, "historyLength") {
            req.history_length = Some(parse_int("historyLength", &v)?);
        } else if is_key(&k, "statusTimestampAfter") {
            let t: Timestamp = v
                .parse()
                .map_err(|_| bad_query("statusTimestampAfter", &v, "not an RFC 3339 timestamp"))?;
            req.status_timestamp_after = Some(t);
        } else if is_key(&k, "includeArtifacts") {
            req.include_artifacts = Some(match v.as_str() {
                "true" => true,
                "false" => false,
                _ => return Err(bad_query("includeArtifacts", &v, "must be true or false")),
            });
        }
    }
    Ok(req)
}

fn ok_doc(doc: JsonDoc) -> Response {
    json(StatusCode::OK, doc.0)
}

fn ok<T: Serialize>(result: T) -> Response {
    json(
        StatusCode::OK,
        serde_json::to_vec(&result).unwrap_or_default(),
    )
}

/// REST stream events are the bare `StreamResponse`; errors the AIP-193 body.
struct RestFraming(ErrorTable);

impl SseFraming for RestFraming {
    fn event(&self, item: &StreamItem, out: &mut BytesMut) {
        out.put_slice(&item.json);
    }

    fn error(&self, error: &A2aError, out: &mut BytesMut) {
        out.put_slice(&ferry_proto::rest_error_body(error, self.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(path: &str) -> Option<Route> {
        Route::match_segments(&segments(path).expect("segments"))
    }

    #[test]
    fn actions_never_fall_into_get_task() {
        assert_eq!(
            route("/tasks/abc:subscribe"),
            Some(Route::Subscribe("abc".into()))
        );
        assert_eq!(
            route("/tasks/abc:cancel"),
            Some(Route::Cancel("abc".into()))
        );
        assert_eq!(route("/tasks/abc"), Some(Route::GetTask("abc".into())));
        assert_eq!(route("/tasks/a%2Fb"), Some(Route::GetTask("a/b".into())));
        assert_eq!(route("/message:send"), Some(Route::Send));
        assert_eq!(
            route("/t1/message:send"),
            None,
            "tenant prefixes are tried by the caller"
        );
    }

    #[test]
    fn list_query_parses_and_rejects() {
        let q = list_query("contextId=c&status=TASK_STATE_WORKING&pageSize=20&includeArtifacts=true&statusTimestampAfter=2025-11-09T10:30:00Z&page_token=x")
            .expect("parse");
        assert_eq!(q.context_id, "c");
        assert_eq!(q.status, TaskState::Working);
        assert_eq!(q.page_size, Some(20));
        assert_eq!(q.include_artifacts, Some(true));
        assert_eq!(q.page_token, "x");
        assert!(q.status_timestamp_after.is_some());
        for bad in [
            "status=working",
            "pageSize=ten",
            "includeArtifacts=yes",
            "statusTimestampAfter=yesterday",
        ] {
            assert!(list_query(bad).is_err(), "{bad}");
        }
    }
}
