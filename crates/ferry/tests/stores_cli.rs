//! Durable stores as a user runs them: `ferry serve --store sqlite:…` (and `postgres://…`)
//! killed with SIGKILL in the middle of a streamed task, then started again on the same port
//! and store. The `ferry send --stream` that was following the task resumes by itself and
//! shows every event exactly once — the task, WORKING, the artifact, then the FAILED status the
//! restarted server gives a task whose turn died — and a later `ferry task subscribe --after`
//! replays exactly what follows the event it names.
//!
//! On PostgreSQL, a cancel sent the moment SendMessage answers INPUT_REQUIRED cancels the
//! task, however the turn that answered ends meanwhile.
//!
//! The PostgreSQL case needs the server the machine runs (127.0.0.1:5432, trust auth,
//! database `test`; `FERRY_TEST_POSTGRES` overrides the URL): it skips loudly without it, and
//! fails in CI.

mod support;

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;
use support::{PgSchema, Server, ferry, http_request, scratch_dir};

/// How long any one step may take on a loaded machine before the test fails.
const STEP_DEADLINE: Duration = Duration::from_secs(60);

/// A client process whose stdout lines arrive on a channel; killed on drop.
struct Client {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Client {
    fn spawn(cmd: &mut Command) -> Client {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn ferry");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Client { child, lines }
    }

    /// The next JSON line, or `None` at the end of the output.
    fn next_event(&self) -> Option<Value> {
        match self.lines.recv_timeout(STEP_DEADLINE) {
            Ok(line) => Some(
                serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}")),
            ),
            Err(mpsc::RecvTimeoutError::Disconnected) => None,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("no output within {STEP_DEADLINE:?}")
            }
        }
    }

    /// Every remaining event, then the exit status.
    fn finish(mut self) -> (Vec<Value>, std::process::ExitStatus) {
        let mut events = Vec::new();
        while let Some(event) = self.next_event() {
            events.push(event);
        }
        let status = self.child.wait().expect("wait for ferry");
        (events, status)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `ferry serve --agent conformance --store STORE --bind 127.0.0.1:PORT`.
fn serve(store: &str, port: u16) -> Server {
    Server::start([
        "--agent",
        "conformance",
        "--bind",
        &format!("127.0.0.1:{port}"),
        "--store",
        store,
    ])
}

fn port_of(base_url: &str) -> u16 {
    base_url
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("a port in the base URL")
}

/// What one streamed event is: its member name and state (or artifact id).
fn shape(event: &Value) -> String {
    let (kind, body) = event
        .as_object()
        .and_then(|o| o.iter().next())
        .expect("a one-member object");
    let detail = body["status"]["state"]
        .as_str()
        .or_else(|| body["artifact"]["artifactId"].as_str())
        .unwrap_or_default();
    format!("{kind} {detail}")
}

/// The whole scenario over one store.
fn kill_mid_stream_then_resume(store: &str) {
    let first = serve(store, 0);
    let port = port_of(&first.base_url);
    let url = first.base_url.clone();
    let message_id = format!("ferry-hold-{}", std::process::id());
    let client = Client::spawn(ferry().args([
        "send",
        &url,
        "hold on",
        "--stream",
        "--message-id",
        &message_id,
        "-o",
        "json",
    ]));
    let mut seen = Vec::new();
    while !seen
        .last()
        .is_some_and(|e: &Value| shape(e).ends_with(" held"))
    {
        let event = client.next_event().expect("events until the artifact");
        seen.push(event);
    }
    let task_id = seen[0]["task"]["id"]
        .as_str()
        .expect("the stream starts with the task")
        .to_owned();

    // SIGKILL, mid-turn: the agent is still holding the task WORKING.
    drop(first);
    let second = serve(store, port);
    let (rest, status) = client.finish();
    assert!(status.success(), "the client resumed and ended cleanly");
    let shapes: Vec<String> = seen.iter().chain(&rest).map(shape).collect();
    assert_eq!(
        shapes,
        [
            "task TASK_STATE_SUBMITTED",
            "statusUpdate TASK_STATE_WORKING",
            "artifactUpdate held",
            "statusUpdate TASK_STATE_FAILED",
        ],
        "every event exactly once, across the restart\nserver output:\n{}",
        second.output()
    );
    let failure = &rest[rest.len() - 1]["statusUpdate"]["status"]["message"]["parts"][0]["text"];
    // SQLite: the restart fails it; PostgreSQL: the restarted server takes the dead one's
    // lease over once it runs out (replicas).
    assert!(
        failure
            .as_str()
            .is_some_and(|t| t.contains("restart") && t.contains("stopped")),
        "the failure says why: {failure}"
    );

    // A resubscription after event 2 (WORKING) replays exactly what followed it.
    let replay = Client::spawn(ferry().args([
        "task",
        "subscribe",
        &second.base_url,
        &task_id,
        "--after",
        "2",
        "-o",
        "json",
    ]));
    let (replayed, status) = replay.finish();
    assert!(status.success());
    let shapes: Vec<String> = replayed.iter().map(shape).collect();
    assert_eq!(
        shapes,
        ["artifactUpdate held", "statusUpdate TASK_STATE_FAILED"]
    );
}

#[test]
fn sqlite_survives_kill_9_mid_stream() {
    let dir = scratch_dir("sqlite-kill");
    let store = format!("sqlite:{}", dir.join("tasks.db").display());
    kill_mid_stream_then_resume(&store);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn postgres_survives_kill_9_mid_stream() {
    let Some(schema) = PgSchema::create_or_skip("stores_cli postgres") else {
        return;
    };
    kill_mid_stream_then_resume(&schema.store_url());
}

/// A store that fails after start-up fails the request with 503 and a retry hint (the CLI
/// says why), instead of hanging or answering with a task that stopped changing.
#[test]
fn a_store_that_fails_later_answers_503() {
    let Some(schema) = PgSchema::create_or_skip("stores_cli postgres failure") else {
        return;
    };
    let server = Server::start([
        "--agent",
        "echo",
        "--bind",
        "127.0.0.1:0",
        "--store",
        &schema.store_url(),
    ]);
    let send = |text: &str| {
        ferry()
            .args(["send", &server.base_url, text, "-o", "json"])
            .output()
            .expect("ferry send runs")
    };
    let ok = send("before");
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(schema.run("ALTER TABLE {schema}.events RENAME TO events_gone"));
    let failed = send("after");
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(!failed.status.success());
    assert!(
        stderr.contains("the task store is unavailable"),
        "says why: {stderr}"
    );
}

/// How many times the cancel races the end of the turn that answered.
const CANCEL_ROUNDS: usize = 300;

/// One JSON-RPC call to `server`; its `result`, or a panic that shows the answer.
fn call(server: &Server, method: &str, params: Value, what: &str) -> Value {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let (status, answer) = http_request(
        "POST",
        &format!("{}/", server.base_url),
        &[("A2A-Version", "1.0")],
        &body.to_string(),
    );
    let answer: Value = serde_json::from_slice(&answer).unwrap_or(Value::Null);
    match answer.get("result") {
        Some(result) if status == 200 => result.clone(),
        _ => panic!(
            "{what}: HTTP {status}, {answer}\n--- the server's log ---\n{}",
            server.output()
        ),
    }
}

/// A cancel that arrived while the turn that answered INPUT_REQUIRED was still ending took no
/// lease (a turn ran here), but that turn's last write had given the lease back: the cancel's
/// write was refused as if another replica held the task, and it answered 503 within a few
/// rounds in one run of this test out of three (the official Python SDK's interop run met it
/// once). Now the cancel takes the lease whenever this replica holds none, and the ending
/// turn leaves it to the cancel.
#[test]
fn a_cancel_right_after_input_required_cancels() {
    let Some(schema) = PgSchema::create_or_skip("stores_cli cancel after input required") else {
        return;
    };
    let server = serve(&schema.store_url(), 0);
    let run = std::process::id();
    for round in 0..CANCEL_ROUNDS {
        let message = serde_json::json!({"message": {
            "messageId": format!("tck-input-required-{run}-{round}"),
            "role": "ROLE_USER",
            "parts": [{"text": "hi"}],
        }});
        let sent = call(&server, "SendMessage", message, "SendMessage");
        let task = &sent["task"];
        assert_eq!(
            task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
            "{sent}"
        );
        let id = task["id"].as_str().expect("the task has an id");
        let canceled = call(
            &server,
            "CancelTask",
            serde_json::json!({"id": id}),
            &format!("CancelTask in round {round}"),
        );
        assert_eq!(
            canceled["status"]["state"], "TASK_STATE_CANCELED",
            "round {round}: {canceled}"
        );
    }
}
