//! The HTTP+JSON (REST) binding (spec §2.3): the operation table's routes, also under a
//! `/{tenant}` prefix. A thin translator: the path, the query string and the body become the
//! operation's request message, the request handler answers.
//!
//! A2A v0.3's routes (`/v1/message:send`, …) are served beside them by v0.3's codec when a
//! request states no `A2A-Version` or `0.3`; under a `1.x` version `v1` is a tenant.
//!
//! Routes with an action (`/tasks/{id}:cancel`) are matched before the bare `/tasks/{id}`,
//! so they can never fall into GetTask, and a tenant prefix is recognised only when the path
//! does not already match a route without one.

use crate::binding::decode::{self, BodyLimits};
use crate::binding::rest_query::{bad_query, is_key, page_query, parse_int, query_pairs, segments};
use crate::binding::sse::{self, SseFraming};
use crate::binding::{Codec, Decoded, Refused, json_answer, refuse, run};
use crate::core::answer::Answer;
use crate::core::stream::{StreamItem, TaskStream};
use crate::edge::front_door::StreamPermit;
use crate::edge::params;
use crate::edge::request_id::RequestId;
use crate::edge::response::{is_json_content_type, json, read_body, rest_error};
use crate::edge::service::AgentService;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::Response;
use bytes::{BufMut, Bytes, BytesMut};
use ferry_proto::{
    A2aError, A2aRequest, CancelTaskRequest, ErrorKind, ErrorTable, GetExtendedAgentCardRequest,
    GetTaskRequest, HttpVerb, ListTaskPushNotificationConfigsRequest, ListTasksRequest, Operation,
    PathParams, RestMiss, SendMessageRequest, SubscribeToTaskRequest, TaskPushNotificationConfig,
    TaskPushNotificationConfigRef, TaskState, Timestamp,
};
use std::sync::Arc;

/// Handles every request under the REST base path: v0.3's routes when the request speaks
/// v0.3, this binding's otherwise.
pub(crate) async fn handle(State(service): State<Arc<AgentService>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let codec = Rest(service.config.error_table);
    let body = match read_body(body, service.config.max_body_bytes).await {
        Ok(b) => b,
        Err(e) => return refuse(&codec, &parts, &e),
    };
    let full_path = parts.uri.path();
    let rest_path = full_path
        .strip_prefix(service.config.rest_path.as_str())
        .unwrap_or(full_path);
    #[cfg(feature = "v03")]
    if service.config.serves_v03()
        && let Some(route) = crate::binding::v03::rest::route_of(&parts, rest_path)
    {
        return crate::binding::v03::rest::handle(&service, &parts, route, body).await;
    }
    run(&codec, &service, &parts, (rest_path, body)).await
}

/// The REST codec: errors are AIP-193 bodies with the statuses of the configured table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rest(pub(crate) ErrorTable);

impl Codec for Rest {
    type Input<'a> = (&'a str, Bytes);
    type Call = ();

    fn decode(
        &self,
        service: &AgentService,
        parts: &Parts,
        (path, body): (&str, Bytes),
    ) -> Result<Decoded<()>, Refused<()>> {
        let (op, tenant, path_params) = route(&parts.method, path).map_err(Refused::early)?;
        let refused = |error| Refused {
            call: Some(()),
            operation: Some(op),
            error,
        };
        let headers = &parts.headers;
        // The version first, before the body's type and content (as on JSON-RPC).
        params::check_version(headers, parts.uri.query(), &service.config).map_err(refused)?;
        if parts.method == axum::http::Method::POST
            && !is_json_content_type(headers.get(header::CONTENT_TYPE))
        {
            return Err(refused(A2aError::new(
                ErrorKind::UnsupportedMediaType,
                "the request content type must be application/json",
            )));
        }
        let query = parts.uri.query().unwrap_or_default();
        let limits = BodyLimits::of(&service.config);
        let mut request =
            request(op, &tenant, path_params, query, &body, limits).map_err(refused)?;
        // The path's tenant is the call's, whatever the body says.
        *request.tenant_mut() = tenant;
        Ok(Decoded { call: (), request })
    }

    fn encode(
        &self,
        _service: &AgentService,
        _call: &(),
        answer: Answer,
    ) -> Result<Response, A2aError> {
        let mut out = Vec::with_capacity(1024);
        json_answer(&answer, &mut out)?;
        Ok(json(StatusCode::OK, out))
    }

    fn stream(
        &self,
        service: &AgentService,
        _call: (),
        stream: TaskStream,
        permit: StreamPermit,
    ) -> Response {
        sse::respond(service, stream, Framing(self.0), permit)
    }

    fn error(&self, _call: Option<&()>, error: &A2aError, rid: Option<&RequestId>) -> Response {
        rest_error(error, self.0, rid)
    }
}

/// The operation a request names, with the tenant prefix (if any) and the path parameters.
fn route(
    verb: &axum::http::Method,
    path: &str,
) -> Result<(Operation, String, PathParams), A2aError> {
    let segs = segments(path)?;
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let not_found = || {
        A2aError::new(
            ErrorKind::MethodNotFound,
            format!("no A2A operation at {path:?}"),
        )
    };
    let not_allowed = || {
        A2aError::new(
            ErrorKind::MethodNotAllowed,
            format!("{verb} is not allowed on {path}"),
        )
    };
    // A verb the binding never uses (PUT, PATCH) still tells a known path from an unknown one.
    let verbs: Vec<HttpVerb> = match HttpVerb::from_name(verb.as_str()) {
        Some(v) => vec![v],
        None => Vec::new(),
    };
    let try_match = |segs: &[&str]| -> Result<(Operation, PathParams), RestMiss> {
        match verbs.first() {
            Some(v) => Operation::match_rest(*v, segs),
            None => {
                let known = [HttpVerb::Get, HttpVerb::Post, HttpVerb::Delete]
                    .into_iter()
                    .any(|v| Operation::match_rest(v, segs).is_ok());
                Err(if known {
                    RestMiss::VerbNotAllowed
                } else {
                    RestMiss::NoRoute
                })
            }
        }
    };
    match try_match(&segs) {
        Ok((op, params)) => return Ok((op, String::new(), params)),
        Err(RestMiss::VerbNotAllowed) => return Err(not_allowed()),
        Err(RestMiss::NoRoute) => {}
    }
    let Some((tenant, rest)) = segs.split_first() else {
        return Err(not_found());
    };
    match try_match(rest) {
        Ok((op, params)) => Ok((op, (*tenant).to_owned(), params)),
        Err(RestMiss::VerbNotAllowed) => Err(not_allowed()),
        Err(RestMiss::NoRoute) => Err(not_found()),
    }
}

/// The request message of `op`: from the body (`Body` routes) or the query string, with the
/// path parameters and the path's tenant filled in (the path wins over the body).
fn request(
    op: Operation,
    tenant: &str,
    path: PathParams,
    query: &str,
    body: &[u8],
    limits: BodyLimits,
) -> Result<A2aRequest, A2aError> {
    let id = path.id.unwrap_or_default();
    let task_id = path.task_id.unwrap_or_default();
    let tenant = tenant.to_owned();
    let send = |body: &[u8]| -> Result<SendMessageRequest, A2aError> {
        let mut req: SendMessageRequest = decode::body(body, limits)?;
        if !tenant.is_empty() {
            req.tenant.clone_from(&tenant);
        }
        Ok(req)
    };
    Ok(match op {
        Operation::SendMessage => A2aRequest::SendMessage(send(body)?),
        Operation::SendStreamingMessage => A2aRequest::SendStreamingMessage(send(body)?),
        Operation::GetTask => {
            let history_length = query_pairs(query)
                .find(|(k, _)| is_key(k, "historyLength"))
                .map(|(_, v)| parse_int("historyLength", &v))
                .transpose()?;
            A2aRequest::GetTask(GetTaskRequest {
                tenant,
                id,
                history_length,
            })
        }
        Operation::ListTasks => A2aRequest::ListTasks(ListTasksRequest {
            tenant,
            ..list_query(query)?
        }),
        Operation::CancelTask => A2aRequest::CancelTask(cancel_body(body, id, limits)?),
        Operation::SubscribeToTask => {
            A2aRequest::SubscribeToTask(SubscribeToTaskRequest { tenant, id })
        }
        Operation::CreateTaskPushNotificationConfig => {
            let mut config: TaskPushNotificationConfig = decode::body(body, limits)?;
            config.task_id = task_id;
            config.tenant = tenant;
            A2aRequest::CreateTaskPushNotificationConfig(config)
        }
        Operation::GetTaskPushNotificationConfig | Operation::DeleteTaskPushNotificationConfig => {
            let reference = TaskPushNotificationConfigRef {
                tenant,
                task_id,
                id,
            };
            if op == Operation::GetTaskPushNotificationConfig {
                A2aRequest::GetTaskPushNotificationConfig(reference)
            } else {
                A2aRequest::DeleteTaskPushNotificationConfig(reference)
            }
        }
        Operation::ListTaskPushNotificationConfigs => {
            let mut req = ListTaskPushNotificationConfigsRequest {
                tenant,
                task_id,
                page_size: 0,
                page_token: String::new(),
            };
            page_query(query, &mut req)?;
            A2aRequest::ListTaskPushNotificationConfigs(req)
        }
        Operation::GetExtendedAgentCard => {
            A2aRequest::GetExtendedAgentCard(GetExtendedAgentCardRequest { tenant })
        }
    })
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

/// REST stream events are the bare `StreamResponse`; errors the AIP-193 body.
struct Framing(ErrorTable);

impl SseFraming for Framing {
    fn event(&self, item: &StreamItem, out: &mut BytesMut) {
        out.put_slice(&item.json());
    }

    fn error(&self, error: &A2aError, out: &mut BytesMut) {
        out.put_slice(&ferry_proto::rest_error_body(error, self.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenants_are_a_prefix_only_when_the_path_alone_is_no_route() {
        let post = axum::http::Method::POST;
        let get = axum::http::Method::GET;
        let (op, tenant, _) = route(&post, "/t1/message:send").expect("tenant prefix");
        assert_eq!((op, tenant.as_str()), (Operation::SendMessage, "t1"));
        let (op, tenant, p) = route(&get, "/tasks/a%2Fb").expect("no tenant");
        assert_eq!(
            (op, tenant.as_str(), p.id.as_deref()),
            (Operation::GetTask, "", Some("a/b"))
        );
        let e = route(&post, "/tasks/message:send").expect_err("GetTask's path, not a tenant");
        assert_eq!(e.kind, ErrorKind::MethodNotAllowed);
        let e = route(&axum::http::Method::PUT, "/tasks").expect_err("PUT");
        assert_eq!(e.kind, ErrorKind::MethodNotAllowed);
        let e = route(&get, "/nope").expect_err("no route");
        assert_eq!(e.kind, ErrorKind::MethodNotFound);
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
