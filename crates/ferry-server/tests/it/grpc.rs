//! What only the gRPC binding has: its front door (the token in metadata, the limits as
//! statuses with `RetryInfo`, request ids, the `:authority` check), protobuf that does not
//! decode, the message size limit, unknown methods, serving it off the card, and turning the
//! binding off. Everything the three bindings share runs over gRPC in the scenario modules.

use crate::support::{
    Auth, Binding, ServiceParams, Step, TOO_MANY_REQUESTS_IN_FLIGHT, TOO_MANY_STREAMS, TestServer,
    WireError, send_params,
};
use ferry_server::ServerConfig;
use serde_json::{Value, json};

const G: Binding = Binding::Grpc;

/// The wait a refusal's `RetryInfo` asks for, in seconds (at least one).
fn retry_info_secs(e: &WireError) -> u64 {
    let retry = e
        .details()
        .iter()
        .find(|d| d["@type"] == "type.googleapis.com/google.rpc.RetryInfo")
        .unwrap_or_else(|| panic!("no RetryInfo in {}", e.body));
    let delay = retry["retryDelay"].as_str().expect("a delay");
    let secs: u64 = delay.trim_end_matches('s').parse().expect("whole seconds");
    assert!(secs >= 1, "{}", e.body);
    assert_eq!(
        e.meta("retryAfterSeconds"),
        Some(secs.to_string().as_str()),
        "RetryInfo and retryAfterSeconds agree: {}",
        e.body
    );
    secs
}

/// With a token, every call and stream needs `authorization: Bearer <token>` in its
/// metadata: none or a wrong one is UNAUTHENTICATED with the A2A ErrorInfo.
async fn token_guards_calls_and_streams() {
    let (srv, _remote) = TestServer::scripted_with(ServerConfig {
        token: Some("s3cret-token".into()),
        ..ServerConfig::default()
    })
    .await;
    for auth in [
        Auth::Anonymous,
        Auth::Header("Bearer wrong"),
        Auth::Header("s3cret-token"),
    ] {
        let sp = ServiceParams {
            auth,
            ..ServiceParams::default()
        };
        let answer = srv.call_with(G, "ListTasks", json!({}), sp).await;
        let e = answer.result.expect_err("refused");
        assert_eq!(e.body["status"], "UNAUTHENTICATED", "{}", e.body);
        assert_eq!(e.reason(), "UNAUTHENTICATED");
        let (_, stream) = srv
            .stream_with(G, "SendStreamingMessage", send_params("hello"), sp)
            .await;
        let e = stream.expect_err("the stream is refused");
        assert_eq!(e.body["status"], "UNAUTHENTICATED", "{}", e.body);
    }
    let page = srv.ok(G, "ListTasks", json!({})).await;
    assert_eq!(
        page["tasks"],
        json!([]),
        "the right token is served: {page}"
    );
}

/// A message over `max_body_bytes` is refused before it is decoded, as the A2A error the
/// other bindings answer with 413 (INVALID_ARGUMENT over gRPC); a smaller one is served.
async fn oversized_message_is_refused() {
    let (srv, _remote) = TestServer::scripted_with(ServerConfig {
        max_body_bytes: 2048,
        ..ServerConfig::default()
    })
    .await;
    let e = srv
        .fails(G, "SendMessage", send_params(&"x".repeat(4096)))
        .await;
    assert_eq!(e.body["status"], "INVALID_ARGUMENT", "{}", e.body);
    assert_eq!(e.reason(), "INVALID_REQUEST");
    assert!(e.message().contains("2048"), "{}", e.body);
    let page = srv.ok(G, "ListTasks", json!({})).await;
    assert_eq!(page["totalSize"], 0, "nothing ran: {page}");
    let echo = TestServer::with_config(
        ferry_agents::EchoAgent,
        ServerConfig {
            max_body_bytes: 2048,
            ..ServerConfig::default()
        },
    )
    .await;
    let task = echo.send_task(G, send_params(&"x".repeat(1000))).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
}

/// Bytes that are not the method's message are the client's fault: INVALID_ARGUMENT with
/// reason PARSE_ERROR (what invalid JSON is on the other bindings), not INTERNAL.
async fn undecodable_message_is_a_parse_error() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let e = srv
        .grpc_raw("SendMessage", b"\xff\xff\xff\xff", Some("1.0"))
        .await
        .expect_err("refused");
    assert_eq!(e.body["status"], "INVALID_ARGUMENT", "{}", e.body);
    assert_eq!(e.reason(), "PARSE_ERROR");
    // A valid message with a required part missing names the field.
    let e = srv
        .fails(
            G,
            "SendMessage",
            json!({"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": []}}),
        )
        .await;
    assert_eq!(e.body["status"], "INVALID_ARGUMENT", "{}", e.body);
}

/// A path of the service that names no method is UNIMPLEMENTED.
async fn unknown_method_is_unimplemented() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let e = srv
        .grpc_raw_at("/lf.a2a.v1.A2AService/SendMessages", b"", Some("1.0"))
        .await
        .expect_err("refused");
    assert_eq!(e.body["status"], "UNIMPLEMENTED", "{}", e.body);
}

/// At `max_in_flight`, a call is UNAVAILABLE (`TOO_MANY_REQUESTS_IN_FLIGHT`) with a
/// `RetryInfo`; at `max_streams`, a stream is UNAVAILABLE (`TOO_MANY_STREAMS`).
async fn limits_are_unavailable_with_retry_info() {
    let (srv, remote) = TestServer::scripted_with(ServerConfig {
        max_in_flight: 1,
        ..ServerConfig::default()
    })
    .await;
    let blocking = srv.call(G, "SendMessage", send_params("wait"));
    let meanwhile = async {
        remote.started().await;
        let e = srv.fails(G, "ListTasks", json!({})).await;
        remote.step(Step::Complete);
        e
    };
    let (done, e) = tokio::join!(blocking, meanwhile);
    e.assert_is(TOO_MANY_REQUESTS_IN_FLIGHT);
    retry_info_secs(&e);
    let done = done.expect("the blocking call completes");
    assert_eq!(done["task"]["status"]["state"], "TASK_STATE_COMPLETED");

    let (srv, remote) = TestServer::scripted_with(ServerConfig {
        max_streams: 1,
        ..ServerConfig::default()
    })
    .await;
    let mut open = srv
        .open(G, "SendStreamingMessage", send_params("wait"))
        .await;
    let first = open.next_ok().await;
    let e = srv
        .stream_fails(G, "SubscribeToTask", json!({"id": first["task"]["id"]}))
        .await;
    e.assert_is(TOO_MANY_STREAMS);
    retry_info_secs(&e);
    remote.step(Step::Complete);
    let events = open.remaining().await;
    assert!(!events.is_empty(), "the open stream goes on to its end");
}

/// `x-request-id` comes back in the response metadata, on answers and refusals alike.
async fn request_ids_come_back() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    for (method, params) in [
        ("ListTasks", json!({})),
        ("GetTask", json!({"id": "no-such-task"})),
    ] {
        let sp = ServiceParams {
            headers: &[("x-request-id", "rid-grpc-1")],
            ..ServiceParams::default()
        };
        let answer = srv.call_with(G, method, params, sp).await;
        assert_eq!(
            answer
                .headers
                .get("x-request-id")
                .and_then(|v| v.to_str().ok()),
            Some("rid-grpc-1"),
            "{method}: {:?}",
            answer.result
        );
    }
}

/// A call whose `:authority` is not one of the server's names is PERMISSION_DENIED (DNS
/// rebinding: the same check as the `Host` header of HTTP/1.1).
async fn foreign_authority_is_refused() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let channel = tonic::transport::Endpoint::from_shared(srv.url(""))
        .expect("an endpoint")
        .origin("http://evil.example:80".parse().expect("a URI"))
        .connect_lazy();
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.expect("connects");
    let request = tonic::Request::new(ferry_proto::grpc::pb::ListTasksRequest::default());
    let path = tonic::codegen::http::uri::PathAndQuery::from_static(
        ferry_proto::Operation::ListTasks.grpc_path(),
    );
    let codec = tonic_prost::ProstCodec::<
        ferry_proto::grpc::pb::ListTasksRequest,
        ferry_proto::grpc::pb::ListTasksResponse,
    >::default();
    let status = grpc
        .unary(request, path, codec)
        .await
        .expect_err("a foreign authority is refused");
    let e = crate::support::grpc_wire_error(&status);
    assert_eq!(e.body["status"], "PERMISSION_DENIED", "{}", e.body);
    assert_eq!(e.reason(), "HOST_NOT_ALLOWED");
}

/// The bindings the card at `srv`'s well-known path lists, in order.
async fn card_bindings(srv: &TestServer) -> Vec<String> {
    let card: Value = srv
        .http()
        .get(srv.url("/.well-known/agent-card.json"))
        .send()
        .await
        .expect("the card")
        .json()
        .await
        .expect("JSON");
    card["supportedInterfaces"]
        .as_array()
        .expect("interfaces")
        .iter()
        .filter_map(|i| i["protocolBinding"].as_str().map(str::to_owned))
        .collect()
}

/// `grpc_on_card = false`: the card lists JSON-RPC and REST only (what a caller that wants
/// every interface URL http(s) on the card's origin accepts), and gRPC is served all the same
/// to a client that knows the address.
async fn grpc_can_be_served_off_the_card() {
    let srv = TestServer::with_config(
        ferry_agents::EchoAgent,
        ServerConfig {
            grpc_on_card: false,
            ..ServerConfig::default()
        },
    )
    .await;
    assert_eq!(card_bindings(&srv).await, ["JSONRPC", "HTTP+JSON"]);
    let sent = srv
        .call(G, "SendMessage", send_params("off the card"))
        .await
        .expect("gRPC is served");
    assert_eq!(
        sent["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{sent}"
    );
}

/// `grpc = false`: no GRPC interface on the card, and the gRPC path is not served.
async fn grpc_can_be_turned_off() {
    let srv = TestServer::with_config(
        ferry_agents::EchoAgent,
        ServerConfig {
            grpc: false,
            ..ServerConfig::default()
        },
    )
    .await;
    assert_eq!(card_bindings(&srv).await, ["JSONRPC", "HTTP+JSON"]);
    let e = srv
        .grpc_raw("ListTasks", b"", Some("1.0"))
        .await
        .expect_err("not served");
    assert_ne!(e.body["status"], "OK", "{}", e.body);
}

scenarios!(once:
    token_guards_calls_and_streams,
    oversized_message_is_refused,
    undecodable_message_is_a_parse_error,
    unknown_method_is_unimplemented,
    limits_are_unavailable_with_retry_info,
    request_ids_come_back,
    foreign_authority_is_refused,
    grpc_can_be_served_off_the_card,
    grpc_can_be_turned_off,
);
