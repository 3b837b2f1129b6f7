//! Issue 11: strict decoding everywhere, refusals before reading. Arrays where a message
//! belongs, duplicate member names at any depth, a declared body over the limit, an
//! absolute-form target with a foreign authority, and repeated single-valued headers are all
//! refused, on both bindings, and nothing runs.

use crate::support::{
    Binding, INVALID_PARAMS, RawConn, ServiceParams, TestServer, WireError, send_params,
};
use ferry_server::ServerConfig;
use serde_json::{Value, json};

/// The number of tasks the server holds.
async fn task_count(srv: &TestServer, b: Binding) -> i64 {
    srv.ok(b, "ListTasks", json!({})).await["totalSize"]
        .as_i64()
        .expect("totalSize is a number")
}

/// POSTs SendMessage params written as raw `params` text (so that it may hold what a JSON
/// serializer never writes: two equal member names) over `b`; returns the error, which it
/// must be (HTTP 200 with a JSON-RPC error, or HTTP 400), and the pointer prefix under which
/// the binding names members of the params.
async fn refused_send(srv: &TestServer, b: Binding, params: &str) -> (WireError, &'static str) {
    let (path, body, prefix) = match b {
        Binding::JsonRpc => (
            "/jsonrpc",
            format!(r#"{{"jsonrpc":"2.0","id":"s-1","method":"SendMessage","params":{params}}}"#),
            "/params",
        ),
        Binding::Rest => ("/rest/message:send", params.to_owned(), ""),
        Binding::Grpc => unreachable!("JSON text is not a gRPC request"),
    };
    let headers = [("content-type", "application/json"), ("A2A-Version", "1.0")];
    let (status, body) = srv
        .request_json(reqwest::Method::POST, path, &headers, &body)
        .await;
    let want = if b == Binding::JsonRpc { 200 } else { 400 };
    assert_eq!(status, want, "{body}");
    if b == Binding::JsonRpc {
        assert_eq!(body["id"], "s-1", "the id is echoed: {body}");
    }
    let error = WireError {
        binding: b,
        http_status: status,
        in_stream: false,
        body: body["error"].clone(),
    };
    (error, prefix)
}

const MESSAGE: &str = r#"{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"x"}]}"#;

/// Point 1: a message, a part or a configuration written as a JSON array (which serde's
/// derive reads positionally) is a type mismatch naming the member; no task is created.
async fn arrays_where_messages_belong_are_refused(b: Binding) {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    for (params, member, expected) in [
        (
            r#"{"message": ["m-1", "", "", "ROLE_USER", [{"text": "x"}], null, [], []]}"#
                .to_owned(),
            "/message",
            "struct Message",
        ),
        (
            r#"{"message": {"messageId":"m-2","role":"ROLE_USER","parts":[["hello"]]}}"#.to_owned(),
            "/message/parts/0",
            "",
        ),
        (
            format!(r#"{{"message": {MESSAGE}, "configuration": []}}"#),
            "/configuration",
            "struct SendMessageConfiguration",
        ),
        (
            r#"["tn", {"messageId":"m-3","role":"ROLE_USER","parts":[{"text":"x"}]}]"#.to_owned(),
            "",
            "struct SendMessageRequest",
        ),
    ] {
        let (e, prefix) = refused_send(&srv, b, &params).await;
        e.assert_is(INVALID_PARAMS);
        let at = if member.is_empty() && prefix.is_empty() {
            "the top level".to_owned()
        } else {
            format!("{prefix}{member}")
        };
        let message = e.message();
        assert!(
            message.starts_with("invalid type: sequence, expected")
                && message.contains(expected)
                && message.ends_with(&format!(" at {at}")),
            "{params}: {message}"
        );
    }
    assert_eq!(task_count(&srv, b).await, 0, "nothing ran");
}

/// Point 2: two members with one name, anywhere in the body — free-form `metadata`, a data
/// part (where `confirm` is an instruction), part metadata, a typed field — are refused with
/// the JSON pointer of the object that holds them; no task is created.
async fn duplicate_members_are_refused_at_any_depth(b: Binding) {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    for (params, at, name) in [
        (
            format!(r#"{{"message": {MESSAGE}, "metadata": {{"k": 1, "k": 2}}}}"#),
            "/metadata",
            "k",
        ),
        (
            r#"{"message": {"messageId":"m-1","role":"ROLE_USER","parts":[{"data":{"confirm": false, "confirm": true}}]}}"#.to_owned(),
            "/message/parts/0/data",
            "confirm",
        ),
        (
            r#"{"message": {"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"x","metadata":{"a":{"b":[{"c":1,"\u0063":2}]}}}]}}"#.to_owned(),
            "/message/parts/0/metadata/a/b/0",
            "c",
        ),
        (
            r#"{"message": {"messageId":"m-1","messageId":"m-2","role":"ROLE_USER","parts":[]}}"#.to_owned(),
            "/message",
            "messageId",
        ),
        (
            format!(r#"{{"message": {MESSAGE}, "x-unknown": 1, "x-unknown": 2}}"#),
            "",
            "x-unknown",
        ),
    ] {
        let (e, prefix) = refused_send(&srv, b, &params).await;
        e.assert_is(INVALID_PARAMS);
        let at = match format!("{prefix}{at}") {
            p if p.is_empty() => "the top level".to_owned(),
            p => p,
        };
        let want = format!("duplicate member {name:?} at {at}, byte ");
        assert!(e.message().starts_with(&want), "{params}: {}", e.message());
    }
    assert_eq!(task_count(&srv, b).await, 0, "nothing ran");
}

/// The JSON-RPC envelope: a duplicate outside `params` is an invalid request (-32600), and so
/// is a duplicate id (which of the two would we echo? neither: the answer's id is null).
async fn duplicates_in_the_envelope_are_invalid_requests() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let headers = [("content-type", "application/json"), ("A2A-Version", "1.0")];
    for (body, id) in [
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"ListTasks","method":"SendMessage","params":{}}"#,
            json!(1),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ListTasks","params":{}}"#,
            Value::Null,
        ),
    ] {
        let (status, envelope) = srv
            .request_json(reqwest::Method::POST, "/jsonrpc", &headers, body)
            .await;
        assert_eq!(status, 200);
        assert_eq!(envelope["error"]["code"], -32600, "{envelope}");
        assert_eq!(envelope["id"], id, "{envelope}");
        let message = envelope["error"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("duplicate member"), "{envelope}");
    }
}

/// Point 3: a `Content-Length` over the limit is answered 413 at once, with only one byte of
/// the body sent (before, the server waited for the rest until the request timeout).
async fn declared_oversized_body_is_413_before_reading() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    for path in ["/jsonrpc", "/rest/message:send"] {
        let mut conn = RawConn::connect(srv.addr()).await;
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Content-Length: 8388608\r\nConnection: close\r\n\r\n{{"
        );
        conn.write(head.as_bytes()).await;
        let response = conn.response().await;
        assert_eq!(response.status, 413, "{path}");
        let body = response.json();
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("8388608") && message.contains("1048576"),
            "{path}: {body}"
        );
    }
}

/// Point 3: with `Expect: 100-continue` and a declared length over the limit the answer is
/// 413, not `100 Continue`; under the limit the client is told to continue and is served.
async fn expect_continue_over_the_limit_is_413() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let mut conn = RawConn::connect(srv.addr()).await;
    conn.write(
        b"POST /rest/message:send HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
          Content-Length: 2000000\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
    )
    .await;
    let response = conn.response().await;
    assert_eq!(response.status, 413, "413, not 100 Continue");

    let body =
        json!({"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}})
            .to_string();
    let mut conn = RawConn::connect(srv.addr()).await;
    conn.write(
        format!(
            "POST /rest/message:send HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    )
    .await;
    let interim = conn.interim_head().await;
    assert!(interim.contains(" 100 "), "told to continue: {interim:?}");
    conn.write(body.as_bytes()).await;
    let response = conn.response().await;
    assert_eq!(response.status, 200);
    assert_eq!(
        response.json()["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
}

/// Point 4: the authority of an absolute-form target passes the Host rule too:
/// `POST http://evil.example/jsonrpc` with `Host: 127.0.0.1` is refused; with a loopback
/// authority it is served.
async fn absolute_form_targets_are_host_checked() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}"#;
    let request = |authority: &str| {
        format!(
            "POST http://{authority}/jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    let mut conn = RawConn::connect(srv.addr()).await;
    conn.write(request("evil.example").as_bytes()).await;
    let refused = conn.response().await;
    assert_eq!(refused.status, 403);
    let error = refused.json();
    assert_eq!(
        error["error"]["details"][0]["reason"], "HOST_NOT_ALLOWED",
        "{error}"
    );

    let mut conn = RawConn::connect(srv.addr()).await;
    conn.write(request(&srv.addr().to_string()).as_bytes())
        .await;
    let served = conn.response().await;
    assert_eq!(served.status, 200);
    assert!(served.json()["result"]["tasks"].is_array());
}

/// Point 5: two `Authorization` lines (even two copies of the right token) are 400, not half
/// read; so are two `Host`, `Content-Type` or `A2A-Version` lines. One of each is served.
async fn repeated_single_headers_are_400(b: Binding) {
    let config = ServerConfig {
        token: Some("s3cret-token-0123456789".into()),
        ..ServerConfig::default()
    };
    let srv = TestServer::with_config(ferry_agents::EchoAgent, config).await;
    let bearer = format!("Bearer {}", srv.token().expect("a token"));
    let twice: [(&str, [&str; 2]); 4] = [
        ("Authorization", [bearer.as_str(), bearer.as_str()]),
        ("Authorization", [bearer.as_str(), "Bearer wrong"]),
        ("A2A-Version", ["1.0", "0.3"]),
        ("Content-Type", ["application/json", "text/plain"]),
    ];
    for (name, values) in twice {
        let headers = [(name, values[0]), (name, values[1])];
        let sp = ServiceParams {
            headers: &headers,
            ..ServiceParams::default()
        };
        let r = srv.refused(b, "ListTasks", json!({}), sp).await;
        assert_eq!(r.status, 400, "two {name} lines: {}", r.body);
        assert_eq!(r.error.reason(), "DUPLICATE_HEADER", "{}", r.body);
        assert!(
            r.error.message().contains(&name.to_ascii_lowercase()),
            "{}",
            r.body
        );
    }
    srv.ok(b, "ListTasks", json!({})).await;
    let task = srv.send_task(b, send_params("one of each")).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
}

/// Two `Host` lines (RFC 9112 §3.2: 400), by hand since HTTP clients never send them.
async fn two_host_lines_are_400() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let mut conn = RawConn::connect(srv.addr()).await;
    conn.write(
        b"GET /rest/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
    )
    .await;
    let response = conn.response().await;
    assert_eq!(response.status, 400);
    assert_eq!(
        response.json()["error"]["details"][0]["reason"],
        "DUPLICATE_HEADER"
    );
}

// JSON text and HTTP headers: the gRPC binding reads protobuf (grpc.rs).
scenarios!(per_http_binding:
    arrays_where_messages_belong_are_refused,
    duplicate_members_are_refused_at_any_depth,
    repeated_single_headers_are_400,
);

scenarios!(once:
    duplicates_in_the_envelope_are_invalid_requests,
    declared_oversized_body_is_413_before_reading,
    expect_continue_over_the_limit_is_413,
    absolute_form_targets_are_host_checked,
    two_host_lines_are_400,
);
