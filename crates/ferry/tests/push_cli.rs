//! Push notifications from `ferry serve`, end to end between processes:
//!
//! - a signed delivery verifies in `ferry webhook listen --agent` **and** in a PyJWT receiver
//!   against the served key set, which also refuses the same signature over a tampered body,
//!   for another audience and once expired; a redelivered (replayed) id is dropped by both;
//! - `kill -9` of a server with undelivered rows, on SQLite and on PostgreSQL: after the
//!   restart every event is delivered, in order, none lost;
//! - two `ferry serve` processes on one PostgreSQL schema share the outbox: every row is
//!   delivered once (the two servers' delivered counters add up to the rows, and the receiver
//!   saw no duplicate), in order per task.
//!
//! Every wait is for a line a process prints (or its exit), never a timer.

mod support;

use serde_json::Value;
use std::net::TcpListener;
use std::sync::mpsc::Receiver;
use std::time::Duration;
use support::{
    PgSchema, Running, Server, ferry, output_with_timeout, python_or_skip, s, scratch_dir,
    spawn_lines, text,
};

const WAIT: Duration = Duration::from_secs(60);

/// A receiver process and its stdout lines.
struct Hook {
    _process: Running,
    url: String,
    lines: Receiver<String>,
}

impl Hook {
    /// Runs `cmd` (which prints `listening: URL` first) and waits for that line.
    fn spawn(cmd: &mut std::process::Command) -> Hook {
        let (process, lines) = spawn_lines(cmd);
        let first = lines.recv_timeout(WAIT).expect("the listening line");
        let base = first
            .strip_prefix("listening: ")
            .unwrap_or_else(|| panic!("not a listening line: {first}"));
        Hook {
            _process: process,
            url: format!("{base}hook"),
            lines,
        }
    }

    /// `ferry webhook listen -o json` on `bind`, checking signatures with `--agent` when
    /// given.
    fn listen(bind: &str, agent: Option<&str>) -> Hook {
        let mut cmd = ferry();
        cmd.args(["webhook", "listen", "--bind", bind, "-o", "json"]);
        if let Some(agent) = agent {
            cmd.args(["--agent", agent]);
        }
        Hook::spawn(&mut cmd)
    }

    /// The next printed line, as JSON.
    fn next(&self) -> Value {
        let line = self.lines.recv_timeout(WAIT).expect("a delivery line");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    /// The lines of deliveries up to the one that completes a task (`n` tasks' worth).
    fn until_completed(&self, tasks: usize) -> Vec<Value> {
        let mut got = Vec::new();
        let mut done = 0;
        while done < tasks {
            let line = self.next();
            if line.to_string().contains("TASK_STATE_COMPLETED") {
                done += 1;
            }
            got.push(line);
        }
        got
    }
}

/// Runs `ferry ARGS`, expecting success; its stdout.
fn run(args: &[&str]) -> String {
    let (out, timed_out) = output_with_timeout(ferry().args(args), None, WAIT);
    assert!(
        !timed_out && out.status.success(),
        "ferry {args:?}: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Sends "hello" to the agent at `base` with `hook` registered inline; the task's id.
fn send_with_hook(base: &str, hook: &str) -> String {
    let sent: Value = serde_json::from_str(&run(&[
        "send",
        base,
        "hello",
        "--webhook",
        hook,
        "--webhook-token",
        "hook-token",
        "-o",
        "json",
    ]))
    .expect("JSON");
    sent["task"]["id"].as_str().expect("a task").to_owned()
}

/// The deliveries of `task` at `base`, by sequence number.
fn deliveries(base: &str, task: &str) -> Vec<Value> {
    let listed: Value = serde_json::from_str(&run(&[
        "push-config",
        "deliveries",
        base,
        task,
        "-o",
        "json",
    ]))
    .expect("JSON");
    listed["deliveries"].as_array().expect("deliveries").clone()
}

/// A loopback port nothing listens on now (a receiver that is down, started later there).
fn free_port() -> String {
    let probe = TcpListener::bind("127.0.0.1:0").expect("bind");
    probe.local_addr().expect("addr").to_string()
}

fn ids(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l["deliveryId"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn signed_deliveries_verify_in_the_listener_and_in_pyjwt() {
    let test = "signed_deliveries_verify_in_the_listener_and_in_pyjwt";
    let Some(python) = python_or_skip(test, "jwt, cryptography") else {
        return;
    };
    let dir = scratch_dir("push-signed");
    let prefix = dir.join("agent");
    run(&["keygen", "--alg", "ES256", "--out", s(&prefix)]);
    let server = Server::start([
        "--agent",
        "echo",
        "--bind",
        "127.0.0.1:0",
        "--push-allow-private",
        "--sign-key",
        s(&dir.join("agent.pem")),
        "--sign-kid",
        "agent",
    ]);
    let base = server.base_url.clone();

    let listener = Hook::listen("127.0.0.1:0", Some(&base));
    let task = send_with_hook(&base, &listener.url);
    let lines = listener.until_completed(1);
    assert_eq!(lines.len(), 5, "the echo agent's five events: {lines:?}");
    for line in &lines {
        assert_eq!(line["signatureVerified"], true, "{line}");
    }
    assert!(
        lines[0]["event"]["task"].is_object(),
        "the task first: {lines:?}"
    );
    assert_eq!(ids(&lines), ids_of(&deliveries(&base, &task)), "in order");

    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../interop/python/push_receiver.py"
    );
    let pyjwt = Hook::spawn(std::process::Command::new(&python).args([script, &base]));
    let task = send_with_hook(&base, &pyjwt.url);
    let lines = pyjwt.until_completed(1);
    for line in &lines {
        assert_eq!(line["verified"], true, "PyJWT verifies: {line}");
        assert_eq!(line["replay"], false, "{line}");
        assert_eq!(line["token"], "hook-token");
        assert_eq!(line["contentType"], "application/a2a+json");
        assert_eq!(
            line["tamperedBody"], "refused: body_sha256 differs",
            "{line}"
        );
        assert_eq!(
            line["otherAudience"], "refused: InvalidAudienceError",
            "{line}"
        );
        assert_eq!(line["expired"], "refused: ExpiredSignatureError", "{line}");
        assert_eq!(line["jti"], line["deliveryId"]);
    }
    // A redelivery carries the same id: a replay to the receiver.
    let first = ids(&lines).remove(0);
    run(&["push-config", "redeliver", &base, &task, &first]);
    let again = pyjwt.next();
    assert_eq!(
        (&again["jti"], &again["replay"]),
        (&Value::from(first), &Value::from(true))
    );
}

fn ids_of(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .map(|r| r["id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Deliveries pending when the server is killed (its receiver down) are delivered, in
/// order, by the server started again on the same store.
fn undelivered_rows_survive_kill_9(store: &str) {
    let port = free_port();
    let args = [
        "--agent",
        "echo",
        "--bind",
        "127.0.0.1:0",
        "--store",
        store,
        "--push-allow-private",
        "--push-timeout",
        "2",
    ];
    let first = Server::start(args);
    let hook = format!("http://{port}/hook");
    let tasks: Vec<String> = (0..3)
        .map(|_| send_with_hook(&first.base_url, &hook))
        .collect();
    // The events and their deliveries are committed once the sends are answered.
    let pending = deliveries(&first.base_url, &tasks[0]);
    assert_eq!(pending.len(), 5, "{pending:?}");
    drop(first); // SIGKILL, and reaped
    let listener = Hook::listen(&port, None);
    let again = Server::start(args);
    let lines = listener.until_completed(tasks.len());
    assert_eq!(lines.len(), 15, "every event of the three tasks: {lines:?}");
    assert!(
        !lines.iter().any(|l| l.get("duplicate").is_some()),
        "{lines:?}"
    );
    for task in &tasks {
        let mine: Vec<Value> = lines
            .iter()
            .filter(|l| l.to_string().contains(task.as_str()))
            .cloned()
            .collect();
        let rows = deliveries(&again.base_url, task);
        assert_eq!(ids(&mine), ids_of(&rows), "task {task} in order");
        assert!(rows.iter().all(|r| r["status"] == "delivered"), "{rows:?}");
    }
}

#[test]
fn undelivered_rows_survive_kill_9_on_sqlite() {
    let dir = scratch_dir("push-kill-sqlite");
    let store = format!("sqlite:{}", s(&dir.join("tasks.db")));
    undelivered_rows_survive_kill_9(&store);
}

#[test]
fn undelivered_rows_survive_kill_9_on_postgresql() {
    let Some(schema) = PgSchema::create_or_skip("undelivered_rows_survive_kill_9_on_postgresql")
    else {
        return;
    };
    undelivered_rows_survive_kill_9(&schema.store_url());
}

#[test]
fn two_servers_on_one_postgresql_share_the_outbox() {
    let Some(schema) = PgSchema::create_or_skip("two_servers_on_one_postgresql_share_the_outbox")
    else {
        return;
    };
    let store = schema.store_url();
    let args = [
        "--agent",
        "echo",
        "--bind",
        "127.0.0.1:0",
        "--store",
        &store,
        "--push-allow-private",
    ];
    let (one, two) = (Server::start(args), Server::start(args));
    let port = free_port();
    let hook = format!("http://{port}/hook");
    let tasks: Vec<String> = (0..10)
        .map(|n| {
            let server = if n % 2 == 0 { &one } else { &two };
            send_with_hook(&server.base_url, &hook)
        })
        .collect();
    // The receiver comes up with 50 rows waiting in the shared outbox.
    let listener = Hook::listen(&port, None);
    let lines = listener.until_completed(tasks.len());
    assert_eq!(lines.len(), 50, "{lines:?}");
    for task in &tasks {
        let mine: Vec<Value> = lines
            .iter()
            .filter(|l| l.to_string().contains(task.as_str()))
            .cloned()
            .collect();
        assert_eq!(
            ids(&mine),
            ids_of(&deliveries(&one.base_url, task)),
            "{task}"
        );
    }
    let sent = one.metric("ferry_push_delivered_total") + two.metric("ferry_push_delivered_total");
    assert_eq!(sent, 50, "no row was sent twice");
    assert_eq!(one.metric("ferry_push_deliveries_pending"), 0);
}
