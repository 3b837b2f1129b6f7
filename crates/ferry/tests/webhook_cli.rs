//! `ferry webhook listen`: deliveries signed as ferry signs them (ferry_trust::push_signature)
//! are accepted and printed; a wrong token, a swapped body, another audience and an expired
//! signature are refused with 401; a delivery id seen before is acknowledged and dropped;
//! `--strict` ends the receiver at the first refusal.

mod support;

use support::unix_now;

use ferry_trust::keys::{Algorithm, KeySet, SigningKey};
use ferry_trust::push_signature::{DEFAULT_LIFETIME, Delivery, sign};
use serde_json::Value;
use std::sync::mpsc::Receiver;
use std::time::Duration;
use support::{Running, ferry, http_request_with_headers, scratch_dir, spawn_lines, write};

const CARD: &str = "http://127.0.0.1:8765/.well-known/agent-card.json";
const BODY: &str = r#"{"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED"}}}"#;
const WAIT: Duration = Duration::from_secs(30);

/// A running receiver, its base URL and its stdout lines.
struct Listener {
    process: Running,
    base: String,
    lines: Receiver<String>,
}

/// `ferry webhook listen --bind 127.0.0.1:0 --token tok --jwks FILE --issuer CARD -o json
/// [extra]`, with `key`'s set in FILE.
fn listen(key: &SigningKey, extra: &[&str]) -> Listener {
    let dir = scratch_dir("webhook");
    let jwks = KeySet::new(vec![key.public_key()])
        .expect("a set")
        .to_jwks();
    let file = write(&dir, "jwks.json", &jwks.to_string());
    let mut args = vec![
        "--token",
        "tok",
        "--jwks",
        support::s(&file),
        "--issuer",
        CARD,
    ];
    args.extend_from_slice(extra);
    Listener::spawn(&args)
}

impl Listener {
    /// Runs `ferry webhook listen --bind 127.0.0.1:0 -o json ARGS` and waits for its
    /// listening line.
    fn spawn(args: &[&str]) -> Listener {
        let mut cmd = ferry();
        cmd.args(["webhook", "listen", "--bind", "127.0.0.1:0", "-o", "json"])
            .args(args);
        let (process, lines) = spawn_lines(&mut cmd);
        let first = lines.recv_timeout(WAIT).expect("the listening line");
        let base = first
            .strip_prefix("listening: ")
            .unwrap_or_else(|| panic!("not a listening line: {first}"))
            .trim_end_matches('/')
            .to_owned();
        Listener {
            process,
            base,
            lines,
        }
    }

    /// POSTs `body` to `/hook` with the token `token` and the signature `signature`; the
    /// status, and the line the receiver printed.
    fn post(&self, body: &str, token: &str, signature: &str) -> (u16, Value) {
        let url = format!("{}/hook", self.base);
        let headers = [
            ("Content-Type", "application/a2a+json"),
            ("X-A2A-Notification-Token", token),
            ("A2A-Delivery-Id", "d-1"),
            ("A2A-Push-Signature", signature),
        ];
        let (status, _, _) = http_request_with_headers("POST", &url, &headers, body);
        let line = self.lines.recv_timeout(WAIT).expect("a printed line");
        (status, serde_json::from_str(&line).expect("a JSON line"))
    }
}

fn signed(key: &SigningKey, hook: &str, id: &str, at: i64) -> String {
    let delivery = Delivery {
        issuer: CARD,
        webhook: hook,
        delivery_id: id,
        task_id: "t-1",
        body: BODY.as_bytes(),
    };
    sign(key, &delivery, at, DEFAULT_LIFETIME).expect("signed")
}

#[test]
fn webhook_listen_checks_token_signature_and_replays() {
    let key = SigningKey::generate(Algorithm::Es256, "push-1").expect("a key");
    let listener = listen(&key, &[]);
    let hook = format!("{}/hook", listener.base);

    let good = signed(&key, &hook, "d-1", unix_now());
    let (status, line) = listener.post(BODY, "tok", &good);
    assert_eq!(status, 200, "{line}");
    assert_eq!(line["deliveryId"], "d-1", "{line}");
    assert_eq!(line["signatureVerified"], true, "{line}");
    assert_eq!(
        line["event"]["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );

    let (status, line) = listener.post(BODY, "tok", &good);
    assert_eq!(
        (status, &line["duplicate"]),
        (200, &Value::from("d-1")),
        "a retry is dropped: {line}"
    );

    let fresh = signed(&key, &hook, "d-2", unix_now());
    let refusals = [
        ("wrong token", BODY, "nope", fresh.clone(), "token"),
        ("swapped body", "{}", "tok", fresh.clone(), "body_sha256"),
        (
            "another audience",
            BODY,
            "tok",
            signed(&key, "http://127.0.0.1:1/elsewhere", "d-3", unix_now()),
            "audience",
        ),
        (
            "expired",
            BODY,
            "tok",
            signed(&key, &hook, "d-4", unix_now() - 3600),
            "expired",
        ),
    ];
    for (what, body, token, signature, why) in refusals {
        let (status, line) = listener.post(body, token, &signature);
        assert_eq!(status, 401, "{what}: {line}");
        let said = line["refused"].as_str().unwrap_or_default();
        assert!(said.contains(why), "{what}: {said}");
    }
    drop(listener.process);
}

#[test]
fn webhook_listen_strict_exits_at_the_first_refusal() {
    let key = SigningKey::generate(Algorithm::EdDsa, "push-1").expect("a key");
    let mut listener = listen(&key, &["--strict"]);
    let hook = format!("{}/hook", listener.base);
    let (status, _) = listener.post(BODY, "tok", &signed(&key, &hook, "d-1", unix_now()));
    assert_eq!(status, 200);
    let (status, _) = listener.post("{}", "tok", &signed(&key, &hook, "d-2", unix_now()));
    assert_eq!(status, 401);
    let exit = listener.process.0.wait().expect("the receiver ends");
    assert!(!exit.success(), "--strict exits non-zero");
}

/// `--agent URL`: the key set is the one the agent serves beside its card, and the issuer
/// its card URL.
#[test]
fn webhook_listen_takes_the_agents_published_keys() {
    let key = SigningKey::generate(Algorithm::Es256, "push-1").expect("a key");
    let dir = scratch_dir("webhook-agent");
    let pem = write(&dir, "key.pem", &key.to_pkcs8_pem().expect("PEM"));
    let agent = support::Server::start([
        "--agent",
        "echo",
        "--bind",
        "127.0.0.1:0",
        "--sign-key",
        support::s(&pem),
        "--sign-kid",
        "push-1",
    ]);
    let listener = Listener::spawn(&["--agent", &agent.base_url]);
    let hook = format!("{}/hook", listener.base);
    let card = format!("{}/.well-known/agent-card.json", agent.base_url);
    let delivery = Delivery {
        issuer: &card,
        webhook: &hook,
        delivery_id: "d-1",
        task_id: "t-1",
        body: BODY.as_bytes(),
    };
    let token = sign(&key, &delivery, unix_now(), DEFAULT_LIFETIME).expect("signed");
    let (status, line) = listener.post(BODY, "", &token);
    assert_eq!(status, 200, "{line}");
    assert_eq!(line["signatureVerified"], true, "{line}");
    // A signature naming another issuer (a card elsewhere) is refused.
    let elsewhere = Delivery {
        issuer: CARD,
        delivery_id: "d-2",
        ..delivery
    };
    let token = sign(&key, &elsewhere, unix_now(), DEFAULT_LIFETIME).expect("signed");
    let (status, line) = listener.post(BODY, "", &token);
    assert_eq!(status, 401, "{line}");
}

/// The other way round: the official Python SDK's server sends its push notifications (its
/// own sender, registered with `ferry push-config create`) to `ferry webhook listen`, which
/// checks their token and prints them.
#[test]
fn the_python_sdk_server_pushes_to_ferry_webhook_listen() {
    let test = "the_python_sdk_server_pushes_to_ferry_webhook_listen";
    let Some(sdk) = support::spawn_sdk_server(test, support::SDK_SERVER_IMPORTS, &["--push"])
    else {
        return;
    };
    let listener = Listener::spawn(&["--token", "sdk-token"]);
    let hook = format!("{}/hook", listener.base);
    let run = |args: &[&str]| {
        let out = support::run_with_timeout(ferry().args(args), None, WAIT);
        assert!(
            out.status.success(),
            "ferry {args:?}: {}\n{}",
            support::text(&out.stderr),
            sdk.output()
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap_or(Value::Null)
    };
    let url = sdk.base_url.as_str();
    let first_turn = run(&[
        "send",
        url,
        "one",
        "--message-id",
        "ferry-turns-3-1",
        "-o",
        "json",
    ]);
    let task = first_turn["task"]["id"]
        .as_str()
        .expect("a task")
        .to_owned();
    run(&[
        "push-config",
        "create",
        url,
        &task,
        "--webhook",
        &hook,
        "--token",
        "sdk-token",
        "-o",
        "json",
    ]);
    for (n, text) in [(2, "two"), (3, "three")] {
        let id = format!("ferry-turns-3-{n}");
        run(&[
            "send",
            url,
            text,
            "--message-id",
            &id,
            "--task",
            &task,
            "-o",
            "json",
        ]);
    }
    // Every event of turns 2 and 3 is delivered; the last one says the task completed.
    let mut delivered = Vec::new();
    while !delivered
        .iter()
        .any(|d: &Value| d.to_string().contains("TASK_STATE_COMPLETED"))
    {
        let line = listener.lines.recv_timeout(WAIT).expect("a delivery");
        let delivery: Value = serde_json::from_str(&line).expect("a JSON line");
        assert!(delivery.get("refused").is_none(), "{delivery}");
        delivered.push(delivery);
    }
    assert!(delivered.len() >= 2, "{delivered:?}");
    for d in &delivered {
        let event = d["event"].to_string();
        assert!(
            event.contains(&task),
            "each delivery is about the task: {event}"
        );
    }
}
