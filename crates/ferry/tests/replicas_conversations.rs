//! The forms agent on several `ferry serve` replicas sharing one PostgreSQL schema: a
//! conversation's browser lives on one replica, so every other replica forwards that
//! conversation's messages (and its MCP session's requests) there.
//!
//! | test | what it shows |
//! |---|---|
//! | `a_conversation_is_forwarded_to_its_replica_and_starts_afresh_once_that_one_is_gone` | a conversation begun on A and continued on B runs on A (B forwards it: B's `ferry_replica_forwarded_total` is 1, A's is 0); once A is killed, B answers 503 with a retry hint while A's announcement is fresh, then takes the conversation over: the status message says it starts afresh, and `ferry_replica_conversations_moved_total` is 1 |
//! | `an_mcp_session_is_served_by_its_replica_and_ends_with_it` | an MCP session opened on A is used on B: B passes its requests on to A (the tools list comes back); once A is killed, B answers 404 saying the session's process is gone (an MCP client opens a new session on 404) |
//! | `the_python_sdk_fills_a_form_through_nginx_across_two_replicas` | nginx round-robin in front of two replicas: the official A2A Python SDK fills a sign-up form in three streaming turns on one task (consecutive turns reach different replicas, so at least one is forwarded, counted), and the site receives every field once |
//! | `the_python_mcp_client_fills_a_form_through_nginx_across_two_replicas` | the same with the official MCP Python client over Streamable HTTP, with scoped tokens (each caller's grant travels with a forwarded request) |
//!
//! No test waits on a clock: the two tests that kill a replica see B answer 503 while A's
//! announcement is fresh (a 60 s lease), then make the announcement old in the database, as
//! the passing of a lease would, and see B take over at once.

mod support;

use serde_json::{Value, json};
use std::ffi::OsString;
use std::process::Command;
use std::time::Duration;
use support::browser::{ServerTmp, chromium_or_skip, shop_flags, summary};
use support::{
    PgSchema, Sdk, Server, ferry, http_request_with_headers, output_with_timeout, python_or_skip,
    scratch_dir, sdk_python_or_skip, text, workspace_root,
};

/// Two forms-agent replicas on `schema`, with `extra` flags.
fn forms_replicas(schema: &PgSchema, tmp: &ServerTmp, extra: &[OsString]) -> (Server, Server) {
    let start = || {
        let mut cmd = ferry();
        cmd.args([
            "serve",
            "--agent",
            "forms",
            "--bind",
            "127.0.0.1:0",
            "--store",
        ])
        .arg(schema.store_url())
        .args(extra)
        .env("TMPDIR", &tmp.0);
        Server::spawn(cmd)
    };
    (start(), start())
}

/// `SendMessage` over JSON-RPC to `base` with `data` as the message's data part, in the
/// conversation and task given: (HTTP status, the JSON-RPC answer).
fn send(base: &str, data: Value, context: Option<&str>, task: Option<&str>) -> (u16, Value) {
    let mut message = json!({
        "messageId": format!("m-{}", uuid_like()),
        "role": "ROLE_USER",
        "parts": [{"data": data, "mediaType": "application/json"}],
    });
    if let Some(context) = context {
        message["contextId"] = json!(context);
    }
    if let Some(task) = task {
        message["taskId"] = json!(task);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": message}})
    .to_string();
    let (status, _, answer) = http_request_with_headers(
        "POST",
        base,
        &[("Content-Type", "application/json"), ("A2A-Version", "1.0")],
        &body,
    );
    (
        status,
        serde_json::from_slice(&answer).unwrap_or(Value::Null),
    )
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// The status message's text of a JSON-RPC answer's task.
fn status_text(answer: &Value) -> String {
    answer["result"]["task"]["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A lease long enough that a killed replica still counts as alive while the test asks the
/// other one (a 503), and a heartbeat that announces often.
const LONG_LEASE: [&str; 4] = ["--replica-lease", "60", "--replica-heartbeat", "1"];

/// Makes every replica's announcement older than any lease, as the time after a replica
/// died would: the next claim takes over what the dead one held. (The liveness window itself
/// is tested on the store, with explicit times.)
fn age_announcements(schema: &PgSchema) {
    assert!(
        schema.run("UPDATE {schema}.replicas SET seen_ms = 0"),
        "could not age the announcements"
    );
}

#[test]
fn a_conversation_is_forwarded_to_its_replica_and_starts_afresh_once_that_one_is_gone() {
    let test = "a_conversation_is_forwarded_to_its_replica_and_starts_afresh_once_that_one_is_gone";
    let Some(schema) = PgSchema::create_or_skip(test) else {
        return;
    };
    let tmp = ServerTmp(scratch_dir("replicas-forms-tmp"));
    let extra: Vec<OsString> = LONG_LEASE.iter().map(OsString::from).collect();
    let (a, b) = forms_replicas(&schema, &tmp, &extra);
    let (at_a, at_b) = (a.bound_url(), b.bound_url());

    // No page yet: the agent asks for one, without starting a browser.
    let values = json!({"values": {"Email": "ada@example.com"}});
    let (status, first) = send(&at_a, values.clone(), None, None);
    assert_eq!(status, 200, "{first}");
    let task = first["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_owned();
    let context = first["result"]["task"]["contextId"]
        .as_str()
        .expect("a context")
        .to_owned();
    assert!(status_text(&first).contains("No page is open"), "{first}");

    let (status, second) = send(&at_b, values.clone(), Some(&context), Some(&task));
    assert_eq!(status, 200, "{second}");
    assert_eq!(second["result"]["task"]["id"], task.as_str(), "{second}");
    assert_eq!(
        second["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{second}"
    );
    assert_eq!(b.metric("ferry_replica_forwarded_total"), 1);
    assert_eq!(a.metric("ferry_replica_forwarded_total"), 0);
    let a_log = a.output();

    drop(a); // SIGKILL, and reaped
    let (status, refused) = send(&at_b, values.clone(), Some(&context), Some(&task));
    assert_eq!(status, 503, "A's announcement is fresh: {refused}");
    assert!(refused.to_string().contains("did not answer"), "{refused}");
    age_announcements(&schema);
    let (status, third) = send(&at_b, values.clone(), Some(&context), Some(&task));
    assert_eq!(
        status,
        200,
        "{third}\n---- A ----\n{a_log}\n---- B ----\n{}",
        b.output()
    );
    let said = status_text(&third);
    assert!(said.contains("starts afresh here"), "{third}");
    assert!(said.contains("No page is open"), "{third}");
    assert_eq!(b.metric("ferry_replica_conversations_moved_total"), 1);
}

/// The MCP endpoint's answer to `body` (with the session's id, when given): (status, the
/// session id the answer names, its body).
fn mcp(url: &str, session: Option<&str>, body: &str) -> (u16, Option<String>, String) {
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    if let Some(session) = session {
        headers.push(("Mcp-Session-Id", session));
    }
    let (status, head, answer) = http_request_with_headers("POST", url, &headers, body);
    let session = head.lines().find_map(|l| {
        l.to_ascii_lowercase()
            .strip_prefix("mcp-session-id:")
            .map(|v| v.trim().to_owned())
    });
    (status, session, text(&answer))
}

#[test]
fn an_mcp_session_is_served_by_its_replica_and_ends_with_it() {
    let test = "an_mcp_session_is_served_by_its_replica_and_ends_with_it";
    let Some(schema) = PgSchema::create_or_skip(test) else {
        return;
    };
    let tmp = ServerTmp(scratch_dir("replicas-mcp-tmp"));
    let extra: Vec<OsString> = LONG_LEASE.iter().map(OsString::from).collect();
    let (a, b) = forms_replicas(&schema, &tmp, &extra);
    let (on_a, on_b) = (
        format!("{}/mcp", a.bound_url()),
        format!("{}/mcp", b.bound_url()),
    );

    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"replica-test","version":"1"}}}"#;
    let (status, session, answer) = mcp(&on_a, None, init);
    assert_eq!(status, 200, "{answer}");
    let session = session.expect("a session id");
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (status, _, answer) = mcp(&on_b, Some(&session), initialized);
    assert!(status == 202 || status == 200, "{status}: {answer}");
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (status, _, answer) = mcp(&on_b, Some(&session), list);
    assert_eq!(status, 200, "{answer}\n---- B ----\n{}", b.output());
    assert!(answer.contains("forms_inspect"), "{answer}");
    assert_eq!(b.metric("ferry_replica_forwarded_total"), 2);

    drop(a);
    let (status, _, answer) = mcp(&on_b, Some(&session), list);
    assert_eq!(status, 503, "A's announcement is fresh: {answer}");
    age_announcements(&schema);
    let (status, _, answer) = mcp(&on_b, Some(&session), list);
    assert_eq!(status, 404, "{answer}");
    assert!(answer.contains("is gone"), "{answer}");
    assert_eq!(b.metric("ferry_replica_conversations_moved_total"), 1);
    // Its id names no session here either: a new one must be opened.
    let (status, _, answer) = mcp(&on_b, Some(&session), list);
    assert_eq!(status, 404, "{answer}");
}

/// Runs the Python driver `script` with `args` (in `tmp`), its time bounded by `limit`: its
/// JSON summary, which must say `ok`, or a panic with everything it and the replicas printed.
fn run_driver(
    python: &std::path::Path,
    script: &str,
    args: &[&str],
    tmp: &ServerTmp,
    replicas: [&Server; 2],
) -> Value {
    let (out, timed_out) = output_with_timeout(
        Command::new(python)
            .arg(script)
            .args(args)
            .env("PYTHONUNBUFFERED", "1")
            .env("TMPDIR", &tmp.0)
            .current_dir(workspace_root()),
        None,
        Duration::from_secs(100),
    );
    let stdout = text(&out.stdout);
    let context = || {
        format!(
            "{script} {args:?}\n{stdout}\n{}\n---- A ----\n{}\n---- B ----\n{}",
            text(&out.stderr),
            replicas[0].output(),
            replicas[1].output()
        )
    };
    assert!(!timed_out && out.status.success(), "{}", context());
    let summary = summary(&stdout).unwrap_or_else(|| panic!("no summary: {}", context()));
    assert_eq!(summary["ok"], true, "{}", context());
    summary
}

/// The sum of counter `name` over the replicas at `bound` (asked directly, not through the
/// balancer), with `token` when the server has one.
fn total(bound: &[&str], token: Option<&str>, name: &str) -> u64 {
    let auth = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", a.as_str())).collect();
    bound
        .iter()
        .map(|at| {
            let (status, _, body) =
                http_request_with_headers("GET", &format!("{at}/metrics"), &headers, "");
            let body = text(&body);
            assert_eq!(status, 200, "{body}");
            body.lines()
                .find_map(|l| l.strip_prefix(&format!("{name} ")))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or_else(|| panic!("no {name} in {body}"))
        })
        .sum()
}

/// What a test through nginx needs besides its Python: Chromium, nginx and a schema; `None`
/// after a loud skip (a failure in CI).
fn browser_balancer_and_schema(test: &str) -> Option<(std::path::PathBuf, PgSchema)> {
    let chromium = chromium_or_skip(test)?;
    if !support::balancer::Balancer::available(test) {
        return None;
    }
    Some((chromium, PgSchema::create_or_skip(test)?))
}

#[test]
fn the_python_sdk_fills_a_form_through_nginx_across_two_replicas() {
    let test = "the_python_sdk_fills_a_form_through_nginx_across_two_replicas";
    let Some(python) = python_or_skip(test, "a2a.client, a2a.types.a2a_pb2") else {
        return;
    };
    let Some((chromium, schema)) = browser_balancer_and_schema(test) else {
        return;
    };
    let port = support::balancer::Balancer::free_port();
    let public = format!("http://127.0.0.1:{port}");
    let mut extra: Vec<OsString> = vec!["--public-url".into(), public.into()];
    extra.extend(shop_flags(&chromium));
    let tmp = ServerTmp(scratch_dir("replicas-forms-nginx-tmp"));
    let (a, b) = forms_replicas(&schema, &tmp, &extra);
    let (at_a, at_b) = (a.bound_url(), b.bound_url());
    let balancer = support::balancer::Balancer::start(test, port, &[&at_a, &at_b]).expect("nginx");
    for binding in ["JSONRPC", "HTTP+JSON"] {
        let args = [balancer.base_url.as_str(), binding];
        let summary = run_driver(
            &python,
            "interop/python/forms_conversation.py",
            &args,
            &tmp,
            [&a, &b],
        );
        assert_eq!(summary["outcomeTitle"], "Welcome", "{summary}");
    }
    // Consecutive turns reached different replicas: the second of each run was forwarded.
    let both = [at_a.as_str(), at_b.as_str()];
    assert!(total(&both, None, "ferry_replica_forwarded_total") >= 2);
    assert_eq!(
        total(&both, None, "ferry_replica_conversations_moved_total"),
        0
    );
}

#[test]
fn the_python_mcp_client_fills_a_form_through_nginx_across_two_replicas() {
    let test = "the_python_mcp_client_fills_a_form_through_nginx_across_two_replicas";
    let Some(python) = sdk_python_or_skip(Sdk::Mcp, test, "mcp, mcp_types, httpx2") else {
        return;
    };
    let Some((chromium, schema)) = browser_balancer_and_schema(test) else {
        return;
    };
    let dir = scratch_dir("replicas-mcp-nginx");
    // Two callers with scoped tokens, and the server's own token, which replicas forward with.
    let callers = format!("token = \"replica-secret-token\"\n{}", support::TWO_CALLERS);
    let config = support::write(&dir, "ferry.toml", &callers);
    let port = support::balancer::Balancer::free_port();
    let mut extra: Vec<OsString> = vec![
        "--config".into(),
        config.into_os_string(),
        "--public-url".into(),
        format!("http://127.0.0.1:{port}").into(),
    ];
    extra.extend(shop_flags(&chromium));
    let tmp = ServerTmp(scratch_dir("replicas-mcp-nginx-tmp"));
    let start = || {
        let mut cmd = ferry();
        cmd.args(["serve", "--bind", "127.0.0.1:0", "--store"])
            .arg(schema.store_url())
            .args(&extra)
            .env("TMPDIR", &tmp.0);
        Server::spawn(cmd)
    };
    let (a, b) = (start(), start());
    let (at_a, at_b) = (a.bound_url(), b.bound_url());
    let balancer = support::balancer::Balancer::start(test, port, &[&at_a, &at_b]).expect("nginx");
    let url = format!("{}/mcp/forms", balancer.base_url);
    let args = [
        "http",
        &url,
        "alice-secret-token",
        "--other-token",
        "bob-secret-token",
    ];
    let summary = run_driver(
        &python,
        "interop/python/mcp_forms.py",
        &args,
        &tmp,
        [&a, &b],
    );
    assert_eq!(
        summary["posted"],
        json!(["email", "first", "last", "password", "terms"]),
        "{summary}"
    );
    let both = [at_a.as_str(), at_b.as_str()];
    let token = Some("replica-secret-token");
    assert!(total(&both, token, "ferry_replica_forwarded_total") >= 1);
    for server in [&a, &b] {
        let log = server.output();
        assert!(
            !log.contains("secret-token"),
            "a token reached the log:\n{log}"
        );
    }
}
