//! The HTTP+JSON binding's routing and HTTP surface (§16 points 21–27): paths without `/v1`
//! and under a tenant prefix, both subscribe verbs, query parameters, AIP-193 error bodies with
//! the v1.0.1 statuses, and the HTTP-level refusals (415, 405, 404).

use crate::support::{Binding, SseReader, TestServer, assert_wire_format, keys, send_params};
use reqwest::Method;
use serde_json::{Value, json};

/// Sends a raw REST request (`A2A-Version: 1.0`); returns the status and the JSON body.
async fn raw(
    srv: &TestServer,
    method: Method,
    path: &str,
    content_type: Option<&str>,
    body: &str,
) -> (u16, Value) {
    let mut headers = vec![("A2A-Version", "1.0")];
    headers.extend(content_type.map(|ct| ("content-type", ct)));
    srv.request_json(method, path, &headers, body).await
}

/// Asserts an AIP-193 error body: `code` equal to the HTTP status, the status name, a message
/// and an a2a-protocol.org ErrorInfo with `reason`.
#[track_caller]
fn assert_aip193(status: u16, body: &Value, expected_status: u16, name: &str, reason: &str) {
    assert_eq!(status, expected_status, "{body}");
    let error = &body["error"];
    assert_eq!(
        error["code"], expected_status,
        "error.code is the HTTP status: {body}"
    );
    assert_eq!(error["status"], name, "{body}");
    assert!(
        error["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    let info = &error["details"][0];
    assert_eq!(
        info["@type"], "type.googleapis.com/google.rpc.ErrorInfo",
        "{body}"
    );
    assert_eq!(info["domain"], "a2a-protocol.org", "{body}");
    assert_eq!(info["reason"], reason, "{body}");
}

/// Point 21: `POST /message:send` answers 200 with a SendMessageResponse.
async fn send_answers_a_send_message_response() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let body = send_params("hello").to_string();
    for content_type in ["application/json", "application/a2a+json"] {
        let (status, answer) = raw(
            &srv,
            Method::POST,
            "/rest/message:send",
            Some(content_type),
            &body,
        )
        .await;
        assert_eq!(status, 200, "{answer}");
        assert_wire_format(&answer);
        assert_eq!(
            answer["task"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{answer}"
        );
    }
}

/// Point 22: an unknown task is 404 NOT_FOUND with an ErrorInfo TASK_NOT_FOUND naming it.
async fn unknown_task_is_404() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let (status, body) = raw(&srv, Method::GET, "/rest/tasks/no-such-task", None, "").await;
    assert_aip193(status, &body, 404, "NOT_FOUND", "TASK_NOT_FOUND");
    assert_eq!(
        body["error"]["details"][0]["metadata"]["taskId"], "no-such-task",
        "{body}"
    );
    assert_eq!(
        keys(&body),
        ["error", "requestId"],
        "the error and the request id: {body}"
    );
    assert_eq!(
        body["error"]["details"][0]["metadata"]["requestId"], body["requestId"],
        "{body}"
    );
}

/// Point 23: every route answers at the interface URL (no `/v1`) and under `/{tenant}`.
async fn routes_with_and_without_tenant() {
    let (srv, _remote) = TestServer::scripted().await;
    for prefix in ["/rest", "/rest/t9"] {
        let tenant = prefix
            .strip_prefix("/rest/")
            .map(|t| json!(t))
            .unwrap_or(Value::Null);
        let task = srv
            .send_task(
                Binding::Rest,
                json!({"message": crate::support::message("hi"), "tenant": tenant}),
            )
            .await;
        let id = task["id"].as_str().expect("a task id");
        let (status, got) = raw(&srv, Method::GET, &format!("{prefix}/tasks/{id}"), None, "").await;
        assert_eq!((status, &got["id"]), (200, &json!(id)), "{prefix}: {got}");
        let (status, listed) = raw(&srv, Method::GET, &format!("{prefix}/tasks"), None, "").await;
        assert_eq!(
            (status, &listed["totalSize"]),
            (200, &json!(1)),
            "{prefix}: {listed}"
        );

        let waiting = srv
            .start_waiting(Binding::Rest, json!({"tenant": tenant}))
            .await;
        for verb in [Method::GET, Method::POST] {
            let mut events =
                subscribe(&srv, verb, &format!("{prefix}/tasks/{waiting}:subscribe")).await;
            let first = events.next_event().await.expect("a first event");
            let first: Value = serde_json::from_str(&first.data).expect("JSON");
            assert_eq!(first["task"]["id"], waiting.as_str(), "{prefix}: {first}");
        }
        let (status, canceled) = raw(
            &srv,
            Method::POST,
            &format!("{prefix}/tasks/{waiting}:cancel"),
            None,
            "",
        )
        .await;
        assert_eq!(
            (status, &canceled["status"]["state"]),
            (200, &json!("TASK_STATE_CANCELED")),
            "{prefix}: {canceled}"
        );

        let path = format!("{prefix}/message:stream");
        let headers = [("content-type", "application/json")];
        let response = srv
            .request(
                Method::POST,
                &path,
                &headers,
                &send_params("hi").to_string(),
            )
            .await;
        assert_eq!(
            response.headers()["content-type"],
            "text/event-stream",
            "{prefix}"
        );
        let events = SseReader::new(response).all_events().await;
        assert_eq!(
            events.len(),
            4,
            "task, working, artifact, completed: {events:?}"
        );
    }
}

/// Opens `path` with `verb` and checks that it streams.
async fn subscribe(srv: &TestServer, verb: Method, path: &str) -> SseReader {
    let response = srv
        .request(verb.clone(), path, &[("A2A-Version", "1.0")], "")
        .await;
    assert_eq!(response.status(), 200, "{verb} {path}");
    assert_eq!(
        response.headers()["content-type"],
        "text/event-stream",
        "{verb} {path}"
    );
    SseReader::new(response)
}

/// Point 24: `GET` and `POST /tasks/{id}:subscribe` never fall into GetTask: an unknown id is
/// reported without its `:subscribe` suffix, percent-decoded.
async fn subscribe_is_never_get_task() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    for verb in [Method::GET, Method::POST] {
        for (path, id) in [
            ("/rest/tasks/nope:subscribe", "nope"),
            ("/rest/tasks/a%2Fb%3Ac:subscribe", "a/b:c"),
        ] {
            let (status, body) = raw(&srv, verb.clone(), path, None, "").await;
            assert_aip193(status, &body, 404, "NOT_FOUND", "TASK_NOT_FOUND");
            assert_eq!(
                body["error"]["details"][0]["metadata"]["taskId"], id,
                "{verb} {path}: {body}"
            );
        }
    }
}

/// Point 26: query parameters are parsed; a bad value is 400 INVALID_ARGUMENT.
async fn query_parameters() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let task = srv.send_task(Binding::Rest, send_params("hello")).await;
    let (id, context) = (
        task["id"].as_str().expect("id"),
        task["contextId"].as_str().expect("contextId"),
    );
    let query = format!(
        "contextId={context}&status=TASK_STATE_COMPLETED&pageSize=5&historyLength=0&includeArtifacts=true\
         &statusTimestampAfter=2020-01-01T00%3A00%3A00Z"
    );
    let (status, listed) = raw(&srv, Method::GET, &format!("/rest/tasks?{query}"), None, "").await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["pageSize"], 5, "{listed}");
    assert_eq!(listed["tasks"][0]["id"], id, "{listed}");
    assert!(
        listed["tasks"][0].get("history").is_none(),
        "historyLength=0: {listed}"
    );
    assert!(
        listed["tasks"][0]["artifacts"].is_array(),
        "includeArtifacts=true: {listed}"
    );
    let (status, listed) = raw(
        &srv,
        Method::GET,
        "/rest/tasks?status=3&context_id=other",
        None,
        "",
    )
    .await;
    assert_eq!(
        (status, &listed["totalSize"]),
        (200, &json!(0)),
        "enum numbers and snake_case names: {listed}"
    );

    let bad = [
        "/rest/tasks?pageSize=ten",
        "/rest/tasks?historyLength=x",
        "/rest/tasks?status=working",
        "/rest/tasks?statusTimestampAfter=yesterday",
        "/rest/tasks?includeArtifacts=yes",
        "/rest/tasks?pageToken=not-a-token",
    ];
    for path in bad
        .into_iter()
        .map(str::to_owned)
        .chain([format!("/rest/tasks/{id}?historyLength=abc")])
    {
        let (status, body) = raw(&srv, Method::GET, &path, None, "").await;
        assert_aip193(status, &body, 400, "INVALID_ARGUMENT", "INVALID_PARAMS");
    }
}

/// HTTP-level refusals: 415 for a non-JSON body, 405 for a wrong verb, 404 for no route.
async fn http_refusals() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let body = send_params("hi").to_string();
    for path in [
        "/rest/message:send",
        "/rest/message:stream",
        "/rest/tasks/x:cancel",
    ] {
        let (status, answer) = raw(&srv, Method::POST, path, Some("text/plain"), &body).await;
        assert_eq!(status, 415, "{path}: {answer}");
        assert_eq!(
            answer["error"]["code"], 415,
            "error.code is the HTTP status: {answer}"
        );
        assert_eq!(
            answer["error"]["details"][0]["reason"], "CONTENT_TYPE_NOT_SUPPORTED",
            "{answer}"
        );
    }
    for (verb, path) in [
        (Method::GET, "/rest/message:send"),
        (Method::DELETE, "/rest/tasks/x"),
        (Method::PUT, "/rest/tasks"),
    ] {
        let (status, answer) = raw(&srv, verb.clone(), path, Some("application/json"), "{}").await;
        assert_eq!(status, 405, "{verb} {path}: {answer}");
        assert_eq!(
            answer["error"]["code"], 405,
            "error.code is the HTTP status: {answer}"
        );
        assert_eq!(answer["error"]["status"], "UNIMPLEMENTED", "{answer}");
    }
    for path in [
        "/rest/nope",
        "/rest/a/b/c/d/e",
        "/rest/t1/tasks/x/y/z/w",
        "/rest/v1/message:sendit",
    ] {
        let (status, answer) = raw(&srv, Method::GET, path, None, "").await;
        assert_eq!(status, 404, "{path}: {answer}");
        assert_eq!(answer["error"]["code"], 404, "{answer}");
        assert_eq!(answer["error"]["status"], "NOT_FOUND", "{answer}");
    }
}

/// `:cancel` accepts an empty body, `null` and `{}`.
async fn cancel_bodies() {
    let (srv, _remote) = TestServer::scripted().await;
    for (content_type, body) in [
        (None, ""),
        (Some("application/json"), "null"),
        (Some("application/json"), "{}"),
    ] {
        let id = srv.start_waiting(Binding::Rest, Value::Null).await;
        let (status, task) = raw(
            &srv,
            Method::POST,
            &format!("/rest/tasks/{id}:cancel"),
            content_type,
            body,
        )
        .await;
        assert_eq!(status, 200, "body {body:?}: {task}");
        assert_eq!(task["status"]["state"], "TASK_STATE_CANCELED", "{task}");
    }
}

/// The tenant of the path wins over a `tenant` in the body.
async fn path_tenant_wins() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let body = json!({"message": crate::support::message("hi"), "tenant": "t2"}).to_string();
    let (status, answer) = raw(&srv, Method::POST, "/rest/t1/message:send", None, &body).await;
    assert_eq!(status, 200, "{answer}");
    let id = answer["task"]["id"].as_str().expect("a task id");
    assert_eq!(
        raw(&srv, Method::GET, &format!("/rest/t1/tasks/{id}"), None, "")
            .await
            .0,
        200
    );
    assert_eq!(
        raw(&srv, Method::GET, &format!("/rest/t2/tasks/{id}"), None, "")
            .await
            .0,
        404
    );
}

scenarios!(once:
    send_answers_a_send_message_response,
    unknown_task_is_404,
    routes_with_and_without_tenant,
    subscribe_is_never_get_task,
    query_parameters,
    http_refusals,
    cancel_bodies,
    path_tenant_wins,
);
