//! Operating features over real HTTP: idempotent retries (`dedup_ttl_secs`), `/metrics`, signed
//! cards with their JWKS, and the extended agent card for authenticated callers.

use crate::support::TestServer;
use ferry_agents::EchoAgent;
use ferry_server::{ServerConfig, SigningKeyConfig};
use reqwest::Method;
use serde_json::{Value, json};

fn config() -> ServerConfig {
    ServerConfig {
        bind: "127.0.0.1:0".parse().expect("addr"),
        ..ServerConfig::default()
    }
}

/// A JSON-RPC SendMessage with a fixed messageId; returns the task id.
async fn send(srv: &TestServer, message_id: &str, text: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
        {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}}});
    let headers = [("content-type", "application/json"), ("a2a-version", "1.0")];
    let (status, answer) = srv
        .request_json(Method::POST, "/jsonrpc", &headers, &body.to_string())
        .await;
    assert_eq!(status, 200, "{answer}");
    answer["result"]["task"]["id"]
        .as_str()
        .expect("a task id")
        .to_owned()
}

#[tokio::test]
async fn repeated_sends_get_the_first_answer_when_dedup_is_on() {
    let srv = TestServer::with_config(
        EchoAgent,
        ServerConfig {
            dedup_ttl_secs: 60,
            ..config()
        },
    )
    .await;
    let first = send(&srv, "same-id", "hello").await;
    assert_eq!(
        send(&srv, "same-id", "hello").await,
        first,
        "a retry gets the first answer"
    );
    assert_ne!(
        send(&srv, "same-id", "other").await,
        first,
        "other content runs again"
    );
    let off = TestServer::with_config(EchoAgent, config()).await;
    let a = send(&off, "same-id", "hello").await;
    assert_ne!(
        send(&off, "same-id", "hello").await,
        a,
        "off by default: each send runs"
    );
}

#[tokio::test]
async fn metrics_count_requests_and_refusals() {
    let srv = TestServer::with_config(EchoAgent, config()).await;
    send(&srv, "m-1", "x").await;
    let refused = srv
        .request(
            Method::GET,
            "/rest/tasks",
            &[("origin", "http://evil.example")],
            "",
        )
        .await;
    assert_eq!(refused.status(), 403);
    let response = srv.request(Method::GET, "/metrics", &[], "").await;
    assert_eq!(response.status(), 200);
    let text = response.text().await.expect("text");
    assert!(
        text.contains("ferry_requests_total{method=\"SendMessage\",outcome=\"ok\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("ferry_refusals_total{reason=\"ORIGIN_NOT_ALLOWED\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("ferry_request_duration_seconds_count{method=\"SendMessage\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("ferry_tasks{state=\"TASK_STATE_COMPLETED\"} 1"),
        "{text}"
    );
    assert!(text.contains("ferry_open_streams 0"), "{text}");
}

#[tokio::test]
async fn metrics_need_the_token_when_one_is_set() {
    let cfg = ServerConfig {
        token: Some("s3cret".into()),
        ..config()
    };
    let srv = TestServer::with_config(EchoAgent, cfg).await;
    assert_eq!(
        srv.request(Method::GET, "/metrics", &[], "").await.status(),
        401
    );
    let ok = srv
        .request(
            Method::GET,
            "/metrics",
            &[("authorization", "Bearer s3cret")],
            "",
        )
        .await;
    assert_eq!(ok.status(), 200);
}

/// Writes a fresh signing key (PKCS#8 PEM) for `alg` and returns its config.
fn signing_key(alg: ferry_trust::keys::Algorithm, kid: &str) -> SigningKeyConfig {
    let key = ferry_trust::keys::SigningKey::generate(alg, kid).expect("generate");
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(format!("{kid}-{}.pem", uuid::Uuid::new_v4()));
    std::fs::write(&path, key.to_pkcs8_pem().expect("pem")).expect("write the key");
    SigningKeyConfig {
        key: path,
        kid: kid.into(),
        alg: None,
    }
}

#[tokio::test]
async fn signed_cards_verify_against_the_published_jwks() {
    use ferry_trust::keys::Algorithm;
    let keys = vec![
        signing_key(Algorithm::Es256, "current"),
        signing_key(Algorithm::EdDsa, "next"),
    ];
    let srv = TestServer::with_config(
        EchoAgent,
        ServerConfig {
            signing_keys: keys,
            ..config()
        },
    )
    .await;
    let card = srv
        .request(Method::GET, "/.well-known/agent-card.json", &[], "")
        .await
        .bytes()
        .await
        .expect("card");
    let jwks = srv
        .request(Method::GET, "/.well-known/jwks.json", &[], "")
        .await
        .bytes()
        .await
        .expect("jwks");
    let card = ferry_trust::strict::parse(&card).expect("strict card");
    assert_eq!(
        card["signatures"].as_array().map(Vec::len),
        Some(2),
        "one signature per key"
    );
    let set = ferry_trust::keys::KeySet::from_jwks(&jwks).expect("a JWKS");
    assert_eq!(set.keys().len(), 2);
    let verified =
        ferry_trust::jws::verify_card(&card, &set, &[ferry_trust::card::Profile::Strict])
            .expect("verifies");
    assert!(["current", "next"].contains(&verified.key_id()));
    let mut tampered = card.clone();
    tampered["name"] = json!("someone else");
    assert!(
        ferry_trust::jws::verify_card(&tampered, &set, &[ferry_trust::card::Profile::Strict])
            .is_err()
    );
    let unsigned = TestServer::with_config(EchoAgent, config()).await;
    assert_eq!(
        unsigned
            .request(Method::GET, "/.well-known/jwks.json", &[], "")
            .await
            .status(),
        404
    );
}

#[tokio::test]
async fn extended_card_only_for_authenticated_callers() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(format!("extended-{}.json", uuid::Uuid::new_v4()));
    let extra = json!({"skills": [{"id": "secret-skill", "name": "Secret", "description": "For members", "tags": ["x"]}]});
    std::fs::write(&path, extra.to_string()).expect("write");
    let no_token = ServerConfig {
        extended_card: Some(path.clone()),
        ..config()
    };
    let refused = ferry_server::A2aServer::bind(std::sync::Arc::new(EchoAgent), no_token).await;
    assert!(refused.is_err(), "an extended card needs a token");

    let cfg = ServerConfig {
        extended_card: Some(path),
        token: Some("s3cret".into()),
        ..config()
    };
    let srv = TestServer::with_config(EchoAgent, cfg).await;
    let (_, public) = srv
        .request_json(Method::GET, "/.well-known/agent-card.json", &[], "")
        .await;
    assert_eq!(public["capabilities"]["extendedAgentCard"], true);
    assert!(!public.to_string().contains("secret-skill"));
    let anonymous = srv
        .request(
            Method::GET,
            "/rest/extendedAgentCard",
            &[("a2a-version", "1.0")],
            "",
        )
        .await;
    assert_eq!(anonymous.status(), 401);
    let auth = [("a2a-version", "1.0"), ("authorization", "Bearer s3cret")];
    let (status, card) = srv
        .request_json(Method::GET, "/rest/extendedAgentCard", &auth, "")
        .await;
    assert_eq!(status, 200, "{card}");
    assert_eq!(card["skills"][0]["id"], "secret-skill");
    let rpc = json!({"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard"}).to_string();
    let headers = [
        ("content-type", "application/json"),
        ("a2a-version", "1.0"),
        ("authorization", "Bearer s3cret"),
    ];
    let (_, answer): (u16, Value) = srv
        .request_json(Method::POST, "/jsonrpc", &headers, &rpc)
        .await;
    assert_eq!(
        answer["result"]["skills"][0]["id"], "secret-skill",
        "{answer}"
    );
}
