//! Graded access: read-only tokens, anonymous callers next to a token, and the extended card
//! an agent shows only to holders of the token. The front door decides who the caller is; the
//! core refuses per operation, so the verdicts are the same on every binding.

use crate::support::{Auth, Binding, ServiceParams, TestServer, WireError, send_params};
use ferry_agents::ConformanceAgent;
use ferry_server::{A2aServer, ServerConfig, ServerError};
use reqwest::Method;
use serde_json::{Value, json};
use std::sync::Arc;

const TOKEN: &str = "full-token-0123456789";
const READER: &str = "reader-token-0123456789";

fn graded(allow_anonymous: bool) -> ServerConfig {
    ServerConfig {
        token: Some(TOKEN.into()),
        read_only_tokens: vec![READER.into()],
        allow_anonymous,
        ..ServerConfig::default()
    }
}

fn with(auth: Auth<'_>) -> ServiceParams<'_> {
    ServiceParams {
        auth,
        ..ServiceParams::default()
    }
}

/// Calls `method` as `auth` and expects an error.
async fn refused(
    srv: &TestServer,
    b: Binding,
    method: &str,
    params: Value,
    auth: Auth<'_>,
) -> WireError {
    match srv.call_with(b, method, params, with(auth)).await.result {
        Ok(v) => panic!("{method} over {b:?} as {auth:?} succeeded: {v}"),
        Err(e) => e,
    }
}

/// 403 PERMISSION_DENIED over HTTP, PERMISSION_DENIED over gRPC.
#[track_caller]
fn assert_denied(e: &WireError, what: &str) {
    assert_eq!(e.reason(), "PERMISSION_DENIED", "{what}: {}", e.body);
    if e.binding != Binding::Grpc {
        assert_eq!(e.http_status, 403, "{what}: {}", e.body);
    }
}

/// A read-only token reads tasks and their events, and is refused (403) everything that
/// starts or changes work, and the extended card; what it was refused ran nothing.
async fn read_only_token_only_reads(b: Binding) {
    let srv = TestServer::with_config(ConformanceAgent::default(), graded(false)).await;
    let task = srv.send_task(b, send_params("by the full token")).await;
    let id = task["id"].as_str().expect("a task id").to_owned();
    let reader = format!("Bearer {READER}");
    let as_reader = || Auth::Header(&reader);

    let got = srv
        .call_with(b, "GetTask", json!({"id": id}), with(as_reader()))
        .await
        .result
        .expect("a read-only token reads a task");
    assert_eq!(got["id"], id.as_str());
    let listed = srv
        .call_with(b, "ListTasks", json!({}), with(as_reader()))
        .await
        .result
        .expect("a read-only token lists tasks");
    assert_eq!(listed["totalSize"], 1);

    for (method, params) in [
        ("SendMessage", send_params("by the reader")),
        ("CancelTask", json!({"id": id})),
        ("GetExtendedAgentCard", json!({})),
    ] {
        let e = refused(&srv, b, method, params, as_reader()).await;
        assert_denied(&e, method);
        assert!(e.message().contains("read"), "{method}: {}", e.message());
    }
    let (_, opened) = srv
        .stream_with(
            b,
            "SendStreamingMessage",
            send_params("streamed"),
            with(as_reader()),
        )
        .await;
    let Err(e) = opened else {
        panic!("a read-only token opened a send stream over {b:?}");
    };
    assert_denied(&e, "SendStreamingMessage");
    let after = srv.ok(b, "ListTasks", json!({})).await;
    assert_eq!(after["totalSize"], 1, "nothing the reader was refused ran");
}

/// With anonymous callers let in: no token works for everything but the extended card (401
/// with a challenge); the token gets the extended card with the agent's extended skill; a
/// wrong token is refused, never taken as anonymous.
async fn anonymous_callers_next_to_a_token(b: Binding) {
    let srv = TestServer::with_config(ConformanceAgent::default(), graded(true)).await;
    let sent = srv
        .call_with(
            b,
            "SendMessage",
            send_params("anonymous"),
            with(Auth::Anonymous),
        )
        .await
        .result
        .expect("an anonymous caller sends");
    let id = sent["task"]["id"].as_str().expect("a task").to_owned();
    srv.call_with(b, "GetTask", json!({"id": id}), with(Auth::Anonymous))
        .await
        .result
        .expect("an anonymous caller reads");

    let e = refused(&srv, b, "GetExtendedAgentCard", json!({}), Auth::Anonymous).await;
    assert_eq!(e.reason(), "UNAUTHENTICATED", "{}", e.body);
    if b != Binding::Grpc {
        assert_eq!(e.http_status, 401, "{}", e.body);
    }
    let extended = srv.ok(b, "GetExtendedAgentCard", json!({})).await;
    let skills = |card: &Value| -> Vec<String> {
        card["skills"]
            .as_array()
            .expect("skills")
            .iter()
            .map(|s| s["id"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert!(
        skills(&extended).contains(&"conformance-extended".to_owned()),
        "{extended}"
    );
    let (_, public) = srv
        .request_json(Method::GET, "/.well-known/agent-card.json", &[], "")
        .await;
    assert!(
        !skills(&public).contains(&"conformance-extended".to_owned()),
        "the public card does not show the extended skill: {public}"
    );

    // Refused at the front door (an AIP-193 body on the HTTP bindings, JSON-RPC's included).
    let wrong = format!("Bearer {TOKEN}x");
    let params = json!({"id": id});
    let e = match b {
        Binding::Grpc => refused(&srv, b, "GetTask", params, Auth::Header(&wrong)).await,
        _ => {
            srv.refused(b, "GetTask", params, with(Auth::Header(&wrong)))
                .await
                .error
        }
    };
    assert_eq!(
        e.reason(),
        "UNAUTHENTICATED",
        "a wrong token is not anonymous: {}",
        e.body
    );
}

/// The card of a server that lets anonymous callers in declares the bearer scheme (for the
/// extended card) without requiring it; the challenge of a 401 names the scheme.
async fn the_card_declares_without_requiring() {
    let srv = TestServer::with_config(ConformanceAgent::default(), graded(true)).await;
    let (status, card) = srv
        .request_json(Method::GET, "/.well-known/agent-card.json", &[], "")
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
        "Bearer"
    );
    assert!(card.get("securityRequirements").is_none(), "{card}");
    assert_eq!(card["capabilities"]["extendedAgentCard"], true);
    let response = srv
        .request(Method::GET, "/rest/extendedAgentCard", &[], "")
        .await;
    assert_eq!(response.status(), 401);
    let challenge = response
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert!(challenge.starts_with("Bearer"), "{challenge:?}");
}

/// Read-only tokens and anonymous access mean nothing without the token of full access, so
/// the server refuses to start with them alone; an agent's extended skills without a token
/// make no extended card (nobody could be shown it).
async fn graded_access_needs_a_token() {
    for (config, setting) in [
        (
            ServerConfig {
                read_only_tokens: vec![READER.into()],
                ..ServerConfig::default()
            },
            "read_only_tokens",
        ),
        (
            ServerConfig {
                allow_anonymous: true,
                ..ServerConfig::default()
            },
            "allow_anonymous",
        ),
    ] {
        let e = A2aServer::bind(Arc::new(ConformanceAgent::default()), config)
            .await
            .expect_err("refused without a token");
        assert!(
            matches!(e, ServerError::NeedsToken { setting: s } if s == setting),
            "{e}"
        );
    }
    let open = TestServer::start(ConformanceAgent::default()).await;
    let (_, card) = open
        .request_json(Method::GET, "/.well-known/agent-card.json", &[], "")
        .await;
    assert!(
        card["capabilities"].get("extendedAgentCard").is_none(),
        "{card}"
    );
    let e = open
        .fails(Binding::JsonRpc, "GetExtendedAgentCard", json!({}))
        .await;
    assert_eq!(e.reason(), "UNSUPPORTED_OPERATION", "{}", e.body);
}

scenarios!(per_binding: read_only_token_only_reads, anonymous_callers_next_to_a_token);

scenarios!(once: the_card_declares_without_requiring, graded_access_needs_a_token);
