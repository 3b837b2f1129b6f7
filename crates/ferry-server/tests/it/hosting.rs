//! A server of several agents (`A2aServer::hosting`): each agent under `/agents/{id}` with its
//! own card, interfaces and task namespace; the default agent also at the root; `GET /agents`;
//! tokens scoped to agents; each agent's own limits.

use crate::support::{
    Auth, Binding, Remote, ScriptedAgent, ServiceParams, Step, TASK_NOT_FOUND,
    TOO_MANY_REQUESTS_IN_FLIGHT, TestServer, send_params,
};
use ferry_agent::AgentExecutor;
use ferry_agents::{ConformanceAgent, EchoAgent};
use ferry_server::{A2aServer, AgentMount, ScopedToken, ServerConfig, ServerError};
use reqwest::Method;
use serde_json::{Value, json};
use std::sync::Arc;

const TOKEN: &str = "full-token-0123456789";
const PARTNER: &str = "partner-token-0123456789";

fn loopback() -> ServerConfig {
    ServerConfig {
        bind: "127.0.0.1:0".parse().expect("a socket address"),
        ..ServerConfig::default()
    }
}

/// `echo` (EchoAgent) and `tck` (the conformance agent), `default` also at the root.
async fn two_agents(config: ServerConfig, default: Option<&str>) -> TestServer {
    let token = config.token.clone();
    let mut builder = A2aServer::hosting()
        .config(config)
        .agent(AgentMount::new("echo", Arc::new(EchoAgent)))
        .agent(AgentMount::new(
            "tck",
            Arc::new(ConformanceAgent::default()),
        ));
    if let Some(id) = default {
        builder = builder.default_agent(id);
    }
    TestServer::from_builder(builder, token).await
}

async fn card(srv: &TestServer, path: &str) -> (u16, Value) {
    srv.request_json(Method::GET, path, &[], "").await
}

/// The interface URLs a card lists, with their binding.
fn interfaces(card: &Value) -> Vec<(String, String)> {
    card["supportedInterfaces"]
        .as_array()
        .expect("supportedInterfaces")
        .iter()
        .map(|i| {
            (
                i["protocolBinding"].as_str().unwrap_or_default().to_owned(),
                i["url"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// Each agent's card is under its own path, names the agent, and lists interfaces under that
/// path (no gRPC: it routes by method alone, so only the agent at the root has it); without a
/// default nothing is served at the root; an agent that is not hosted is a plain 404.
async fn each_agent_has_its_own_card_and_interfaces() {
    let srv = two_agents(loopback(), None).await;
    let names = [
        ("echo", EchoAgent.describe().name),
        ("tck", ConformanceAgent::default().describe().name),
    ];
    for (id, name) in names {
        for path in [
            format!("/agents/{id}/.well-known/agent-card.json"),
            format!("/agents/{id}/jsonrpc/.well-known/agent-card.json"),
            format!("/agents/{id}/rest/.well-known/agent-card.json"),
        ] {
            let (status, card) = card(&srv, &path).await;
            assert_eq!(status, 200, "{path}: {card}");
            assert_eq!(card["name"], name, "{path}");
            assert_eq!(
                interfaces(&card),
                vec![
                    (
                        "JSONRPC".to_owned(),
                        srv.url(&format!("/agents/{id}/jsonrpc"))
                    ),
                    (
                        "HTTP+JSON".to_owned(),
                        srv.url(&format!("/agents/{id}/rest"))
                    ),
                ],
                "{path}"
            );
        }
    }
    for path in [
        "/.well-known/agent-card.json",
        "/jsonrpc",
        "/agents/nobody/.well-known/agent-card.json",
        "/agents/nobody/jsonrpc",
    ] {
        let response = srv.request(Method::GET, path, &[], "").await;
        assert_eq!(response.status(), 404, "{path}");
    }
    let response = srv
        .request(
            Method::POST,
            "/agents/nobody/jsonrpc",
            &[("content-type", "application/json")],
            r#"{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}"#,
        )
        .await;
    assert_eq!(response.status(), 404, "an agent that is not hosted");
}

/// A task of one agent is found through that agent only, on every HTTP binding; ListTasks of
/// the other agent does not list it.
async fn a_task_of_one_agent_is_not_found_at_another(b: Binding) {
    let srv = two_agents(loopback(), None).await;
    let task = srv
        .at("/agents/echo")
        .send_task(b, send_params("hello"))
        .await;
    let id = task["id"].as_str().expect("a task id").to_owned();
    let found = srv
        .at("/agents/echo")
        .ok(b, "GetTask", json!({"id": id}))
        .await;
    assert_eq!(found["id"], id.as_str());
    let e = srv
        .at("/agents/tck")
        .fails(b, "GetTask", json!({"id": id}))
        .await;
    e.assert_is(TASK_NOT_FOUND);
    let e = srv
        .at("/agents/tck")
        .fails(b, "CancelTask", json!({"id": id}))
        .await;
    e.assert_is(TASK_NOT_FOUND);
    let listed = srv.at("/agents/tck").ok(b, "ListTasks", json!({})).await;
    assert_eq!(listed["tasks"], json!([]), "tck lists none of echo's tasks");
    let listed = srv.at("/agents/echo").ok(b, "ListTasks", json!({})).await;
    assert_eq!(listed["tasks"][0]["id"], id.as_str());
}

/// The default agent answers at the root too, over every binding (gRPC included), in one task
/// namespace with its own path: a task sent at the root is found under `/agents/echo`.
async fn the_default_agent_is_also_at_the_root(b: Binding) {
    let srv = two_agents(loopback(), Some("echo")).await;
    let (status, root_card) = card(&srv, "/.well-known/agent-card.json").await;
    assert_eq!(status, 200);
    let (_, echo_card) = card(&srv, "/agents/echo/.well-known/agent-card.json").await;
    assert_eq!(
        root_card, echo_card,
        "the root serves the default agent's card"
    );
    assert!(
        !cfg!(feature = "grpc")
            || interfaces(&echo_card)
                .iter()
                .any(|(binding, _)| binding == "GRPC"),
        "the default agent has the gRPC interface: {echo_card}"
    );
    let task = srv.at("").send_task(b, send_params("at the root")).await;
    let id = task["id"].as_str().expect("a task id").to_owned();
    if b != Binding::Grpc {
        let found = srv
            .at("/agents/echo")
            .ok(b, "GetTask", json!({"id": id}))
            .await;
        assert_eq!(found["id"], id.as_str());
        let e = srv
            .at("/agents/tck")
            .fails(b, "GetTask", json!({"id": id}))
            .await;
        e.assert_is(TASK_NOT_FOUND);
    }
}

fn scoped() -> ServerConfig {
    ServerConfig {
        token: Some(TOKEN.into()),
        scoped_tokens: vec![ScopedToken {
            token: PARTNER.into(),
            agents: vec!["echo".into()],
            read_only: false,
            caller: None,
            admin: false,
        }],
        ..loopback()
    }
}

/// A scoped token calls its agent and is refused at another with 403 `AGENT_NOT_ALLOWED`
/// naming the agent; `GET /agents` lists only its agents, `/metrics` (the whole server's) is
/// refused to it; the token of full access reaches everything; the cards stay public.
async fn a_scoped_token_reaches_only_its_agents(b: Binding) {
    let srv = two_agents(scoped(), None).await;
    let partner = format!("Bearer {PARTNER}");
    let as_partner = || ServiceParams {
        auth: Auth::Header(&partner),
        ..ServiceParams::default()
    };
    let ok = srv
        .at("/agents/echo")
        .call_with(b, "SendMessage", send_params("hi"), as_partner())
        .await;
    let ok = ok.result.expect("the partner calls its agent");
    assert_eq!(ok["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let refused = srv
        .at("/agents/tck")
        .refused(b, "SendMessage", send_params("hi"), as_partner())
        .await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(
        refused.error.reason(),
        "AGENT_NOT_ALLOWED",
        "{}",
        refused.body
    );
    assert!(
        refused.error.message().contains("'tck'"),
        "the refusal names the agent: {}",
        refused.body
    );
    let full = srv
        .at("/agents/tck")
        .call_with(b, "ListTasks", json!({}), ServiceParams::default())
        .await;
    full.result.expect("the full token reaches every agent");

    let headers = [("authorization", partner.as_str())];
    let (status, listed) = srv.request_json(Method::GET, "/agents", &headers, "").await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(
        listed,
        json!({"agents": [{
            "id": "echo",
            "name": "echo",
            "description": EchoAgent.describe().description,
            "default": false,
            "cardUrl": srv.url("/agents/echo/.well-known/agent-card.json"),
        }]})
    );
    let (status, body) = srv
        .request_json(Method::GET, "/metrics", &headers, "")
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["details"][0]["reason"], "AGENT_NOT_ALLOWED");

    let full = format!("Bearer {TOKEN}");
    let (status, listed) = srv
        .request_json(Method::GET, "/agents", &[("authorization", &full)], "")
        .await;
    assert_eq!(status, 200);
    let ids: Vec<&Value> = listed["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .map(|a| &a["id"])
        .collect();
    assert_eq!(ids, [&json!("echo"), &json!("tck")]);
    let (status, _) = srv.request_json(Method::GET, "/agents", &[], "").await;
    assert_eq!(status, 401, "the list of agents needs a token");
    let (status, _) = card(&srv, "/agents/tck/.well-known/agent-card.json").await;
    assert_eq!(status, 200, "a card is public, whichever agent");
}

/// An agent's own in-flight limit refuses its next request with 503 and `Retry-After` while
/// another agent of the same server still answers.
async fn an_agents_own_limit_leaves_the_others_alone(b: Binding) {
    let (scripted, remote): (ScriptedAgent, Remote) = ScriptedAgent::new();
    let builder = A2aServer::hosting()
        .config(loopback())
        .agent(AgentMount::new("slow", Arc::new(scripted)).max_in_flight(1))
        .agent(AgentMount::new("echo", Arc::new(EchoAgent)));
    let srv = TestServer::from_builder(builder, None).await;
    let blocking = async {
        srv.at("/agents/slow");
        srv.call(b, "SendMessage", send_params("wait")).await
    };
    let meanwhile = async {
        remote.started().await;
        let refused = srv
            .at("/agents/slow")
            .refused(b, "ListTasks", json!({}), ServiceParams::default())
            .await;
        let other = srv.at("/agents/echo").ok(b, "ListTasks", json!({})).await;
        srv.at("/agents/slow");
        remote.step(Step::Complete);
        (refused, other)
    };
    let (done, (refused, other)) = tokio::join!(blocking, meanwhile);
    refused.error.assert_is(TOO_MANY_REQUESTS_IN_FLIGHT);
    assert!(
        refused.error.message().contains("'slow'"),
        "{}",
        refused.body
    );
    refused.retry_after();
    assert_eq!(other["tasks"], json!([]));
    let done = done.expect("the blocking request completes");
    assert_eq!(done["task"]["status"]["state"], "TASK_STATE_COMPLETED");
}

/// Ids are checked when the server binds: invalid, repeated, a default that is not hosted,
/// no agent at all, and an agent added to a server of one agent.
async fn agent_ids_are_checked_at_bind() {
    let echo = || Arc::new(EchoAgent);
    let cases: Vec<(ferry_server::A2aServerBuilder, &str)> = vec![
        (
            A2aServer::hosting().agent(AgentMount::new("Echo", echo())),
            "is not valid",
        ),
        (
            A2aServer::hosting()
                .agent(AgentMount::new("echo", echo()))
                .agent(AgentMount::new("echo", echo())),
            "used twice",
        ),
        (
            A2aServer::hosting()
                .agent(AgentMount::new("echo", echo()))
                .default_agent("forms"),
            "not one of the hosted agents",
        ),
        (A2aServer::hosting(), "no agent"),
        (
            A2aServer::builder(echo()).agent(AgentMount::new("more", echo())),
            "exactly one",
        ),
    ];
    for (builder, expected) in cases {
        match builder.config(loopback()).bind().await {
            Err(ServerError::Agents(why)) => assert!(why.contains(expected), "{why}"),
            Err(other) => panic!("expected an agents error ({expected}), got {other}"),
            Ok(_) => panic!("bound, but expected an agents error ({expected})"),
        }
    }
}

scenarios!(once: each_agent_has_its_own_card_and_interfaces, agent_ids_are_checked_at_bind);
scenarios!(per_http_binding: a_task_of_one_agent_is_not_found_at_another, a_scoped_token_reaches_only_its_agents, an_agents_own_limit_leaves_the_others_alone);
scenarios!(per_binding: the_default_agent_is_also_at_the_root);
