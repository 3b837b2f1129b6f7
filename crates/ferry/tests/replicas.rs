//! Several `ferry serve` replicas on one PostgreSQL schema, end to end between processes.
//!
//! | test | what it shows |
//! |---|---|
//! | `a_subscriber_on_another_replica_sees_every_event_once_in_order` | a turn runs on A; subscribers on B, one from the start and one resuming with `Last-Event-ID`, get exactly A's events (same ids, same bodies, none missing, none twice); GetTask and ListTasks on B see the task |
//! | `a_cut_listener_connection_loses_nothing` | every backend of both replicas is terminated (`pg_terminate_backend`) mid-turn; the subscriber on B still gets every event, caught up from the log |
//! | `a_follow_up_runs_on_another_replica` | a conversation started on A (INPUT_REQUIRED) is answered on B, which runs the second turn from the stored task; A reads the result |
//! | `a_killed_replicas_task_fails_with_the_reason_on_the_other` | `kill -9` of A mid-turn: B takes its lease over once it runs out, the task becomes FAILED saying why, and B's subscriber gets that final event |
//! | `a_cancel_on_one_replica_ends_the_turn_on_the_other` | CancelTask on B of a turn running on A: A aborts the turn (its command is killed) and writes CANCELED; B answers with it; both read CANCELED |
//! | `the_python_sdk_talks_to_two_replicas_through_nginx` | nginx round-robin in front of two replicas (their public URL is nginx's): the official Python SDK runs its multi-turn streaming conversation and its tasks scenario (GetTask, ListTasks, a resubscription from a second client, cancels) over JSON-RPC and HTTP+JSON |
//! | `a_load_run_across_two_replicas_loses_and_repeats_nothing` | 2,000 tasks (half over JSON-RPC, half over HTTP+JSON) started on A, each writing 20 artifact chunks over some 100 ms; a subscriber on B follows each, and every fourth is canceled on B: every subscriber sees consecutive event ids after its snapshot up to COMPLETED or CANCELED; lost and repeated events are counted, and both counts are 0 |
//! | `a_retry_reaching_another_replica_gets_the_first_answer` | with `--dedup-ttl`, a SendMessage repeated on B (same messageId, same content) gets A's answer, and no second task is made; other content under that messageId is a request of its own |
//! | `readiness_follows_the_store` | `/readyz` is 503 while the database cannot be reached (the connection goes through a forwarder the test cuts) and 200 again once it can |
//! | `a_frozen_replicas_late_writes_are_refused` | A is stopped (`SIGSTOP`) past its lease, B takes the task over, A is continued: its late writes are refused (counted), the task's log has nothing of A after the takeover |
//!
//! The safety poll is set to an hour, so the events reach B through the database's
//! notifications (or the catch-up after a reconnection), not the poll. Every wait is for
//! an event a process prints or streams, never a timer.

mod support;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::Duration;
use support::{PgSchema, Server, http_request, s, scratch_dir, text, write};

/// The longest wait for one event.
const GUARD: Duration = Duration::from_secs(60);

/// A script for `--exec`: says `started`, waits for the file `gate` in its directory (at most
/// 60 s), then says two more lines and ends.
const GATED: &str = r#"read -r _
echo "started $$"
i=0
while [ ! -e "$1/gate" ]; do
  i=$((i + 1))
  if [ "$i" -gt 1200 ]; then echo "the gate never opened" >&2; exit 7; fi
  sleep 0.05
done
echo "second"
echo "third"
"#;

/// A script for `--exec`: a conversation of two turns, its state in a file named after the
/// task (in the directory both replicas share).
const CONVERSATION: &str = r#"state="$1/state-$FERRY_TASK_ID"
read -r answer
case "$FERRY_TURN" in
  1) printf '%s\n' "$answer" > "$state"
     echo "FERRY_INPUT_REQUIRED: Hello $answer, which city?" ;;
  2) echo "turn $FERRY_TURN: $(cat "$state") lives in $answer" ;;
  *) echo "unexpected turn $FERRY_TURN" >&2; exit 9 ;;
esac
"#;

/// Two replicas of an exec agent running [`GATED`] on one schema, the safety poll out of the
/// way; `app` names their connections (for `pg_terminate_backend`).
fn replicas(schema: &PgSchema, dir: &Path, app: &str) -> (Server, Server) {
    replicas_running(schema, dir, app, GATED, &[])
}

/// Two replicas of an exec agent running `script` on one schema, with `extra` flags.
fn replicas_running(
    schema: &PgSchema,
    dir: &Path,
    app: &str,
    script: &str,
    extra: &[&str],
) -> (Server, Server) {
    let script = write(dir, "script.sh", script);
    let line = format!("/bin/sh '{}' '{}'", s(&script), s(dir));
    let store = format!("{}&application_name={app}", schema.store_url());
    let mut args = vec![
        "--exec",
        &line,
        "--bind",
        "127.0.0.1:0",
        "--store",
        &store,
        "--replica-safety-poll",
        "3600",
    ];
    args.extend_from_slice(extra);
    (Server::start(&args), Server::start(&args))
}

/// Short leases, so that a replica that stopped is taken over within seconds.
const SHORT_LEASES: [&str; 4] = ["--replica-lease", "3", "--replica-heartbeat", "1"];

/// One event of an SSE stream: its `id:` and its data.
#[derive(Debug, Clone, PartialEq)]
struct SseEvent {
    id: Option<u64>,
    data: Value,
}

/// An SSE stream read on a thread, event by event; the receiver disconnects when the server
/// closes it.
struct Sse {
    events: Receiver<SseEvent>,
    seen: Vec<SseEvent>,
}

impl Sse {
    /// `method path` on `base` with `headers` and `body`, answered with an event stream.
    fn open(base: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Sse {
        let authority = base.trim_start_matches("http://").to_owned();
        let mut stream = TcpStream::connect(&authority).expect("connect");
        stream.set_read_timeout(Some(GUARD)).expect("timeout");
        let mut head = format!(
            "{method} {path} HTTP/1.0\r\nHost: {authority}\r\nAccept: text/event-stream\r\n"
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if !body.is_empty() {
            head.push_str(&format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n",
                body.len()
            ));
        }
        write!(stream, "{head}\r\n{body}").expect("send");
        let (tx, events) = mpsc::channel();
        thread::spawn(move || {
            let mut reader = BufReader::new(stream);
            let mut status = String::new();
            let _ = reader.read_line(&mut status);
            assert!(status.contains(" 200 "), "not a stream: {status}");
            let mut id = None;
            for line in reader.lines().map_while(Result::ok) {
                if let Some(v) = line.strip_prefix("id:") {
                    id = v.trim().parse().ok();
                } else if let Some(data) = line.strip_prefix("data:") {
                    let data: Value =
                        serde_json::from_str(data.trim()).unwrap_or_else(|e| panic!("{e}: {data}"));
                    if tx
                        .send(SseEvent {
                            id: id.take(),
                            data,
                        })
                        .is_err()
                    {
                        return;
                    }
                }
            }
        });
        Sse {
            events,
            seen: Vec::new(),
        }
    }

    /// `SendStreamingMessage` of `text` on `base` (REST).
    fn send(base: &str, message: &str) -> Sse {
        let body = json!({"message": {"messageId": uuid(), "role": "ROLE_USER",
            "parts": [{"text": message}]}});
        Sse::open(base, "POST", "/rest/message:stream", &[], &body.to_string())
    }

    /// A [`GATED`] turn streamed from `base`, read until its command said `started`: the
    /// stream, the task's id and the `started` event.
    fn started_on(base: &str) -> (Sse, String, SseEvent) {
        let mut sent = Sse::send(base, "go");
        let started = sent.until(|e| says(e, "started"));
        let task = sent.seen[0].data["task"]["id"]
            .as_str()
            .expect("the first event is the task")
            .to_owned();
        (sent, task, started)
    }

    /// `SubscribeToTask` of `task` on `base`, resuming after `after` when given.
    fn subscribe(base: &str, task: &str, after: Option<u64>) -> Sse {
        let after = after.map(|a| a.to_string());
        let headers: Vec<(&str, &str)> = after
            .as_deref()
            .map(|a| ("Last-Event-ID", a))
            .into_iter()
            .collect();
        Sse::open(
            base,
            "GET",
            &format!("/rest/tasks/{task}:subscribe"),
            &headers,
            "",
        )
    }

    /// The next event; `None` once the stream closed.
    fn next(&mut self) -> Option<SseEvent> {
        match self.events.recv_timeout(GUARD) {
            Ok(event) => {
                self.seen.push(event.clone());
                Some(event)
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => None,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("no event within {GUARD:?}; so far: {:#?}", self.seen)
            }
        }
    }

    /// Reads until an event satisfies `done`; panics if the stream ends first.
    fn until(&mut self, done: impl Fn(&SseEvent) -> bool) -> SseEvent {
        loop {
            match self.next() {
                Some(e) if done(&e) => return e,
                Some(_) => {}
                None => panic!("the stream ended first: {:#?}", self.seen),
            }
        }
    }

    /// Every event, once the stream closed.
    fn rest(mut self) -> Vec<SseEvent> {
        while self.next().is_some() {}
        self.seen
    }
}

fn uuid() -> String {
    format!("m-{}-{}", std::process::id(), unique())
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// The event is an artifact chunk saying `line`.
fn says(e: &SseEvent, line: &str) -> bool {
    e.data.to_string().contains(line)
}

/// `SendMessage` of `text` on `base` (REST), continuing `task` when given: the task.
fn send(base: &str, message: &str, task: Option<&str>) -> Value {
    let mut message = json!({"messageId": uuid(), "role": "ROLE_USER",
        "parts": [{"text": message}]});
    if let Some(task) = task {
        message["taskId"] = json!(task);
    }
    let body = json!({"message": message}).to_string();
    let (status, got) = http_request("POST", &format!("{base}/rest/message:send"), &[], &body);
    assert_eq!(status, 200, "{}", text(&got));
    let got: Value = serde_json::from_slice(&got).expect("JSON");
    got["task"].clone()
}

/// Sends `signal` (`STOP`, `CONT`) to process `pid`.
fn signal(pid: u32, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .expect("kill");
    assert!(sent.success(), "kill -{signal} {pid}");
}

/// The event ends the task FAILED.
fn failed(e: &SseEvent) -> bool {
    says(e, "TASK_STATE_FAILED")
}

/// `GET path` on `base` as JSON (status 200).
fn get_json(base: &str, path: &str) -> Value {
    let (status, body) = http_request("GET", &format!("{base}{path}"), &[], "");
    assert_eq!(status, 200, "GET {path}: {}", text(&body));
    serde_json::from_slice(&body).expect("JSON")
}

/// Checks that `events` are exactly A's events from id `first` on, in order.
fn same_as(events: &[SseEvent], on_a: &[SseEvent], first: u64, what: &str) {
    let want: Vec<&SseEvent> = on_a.iter().filter(|e| e.id >= Some(first)).collect();
    let got: Vec<&SseEvent> = events.iter().collect();
    assert_eq!(got, want, "{what}");
}

#[test]
fn a_subscriber_on_another_replica_sees_every_event_once_in_order() {
    let Some(schema) =
        PgSchema::create_or_skip("a_subscriber_on_another_replica_sees_every_event_once_in_order")
    else {
        return;
    };
    let dir = scratch_dir("replicas-follow");
    let (a, b) = replicas(&schema, &dir, "ferry-replicas-follow");

    let (sent, task, started) = Sse::started_on(&a.base_url);

    // From the start on B: a snapshot first (at the event A had reached, or later).
    let mut live = Sse::subscribe(&b.base_url, &task, None);
    let snapshot = live.next().expect("the snapshot");
    assert_eq!(snapshot.data["task"]["id"], task.as_str(), "{snapshot:?}");
    let from = snapshot.id.expect("the snapshot's id");
    // Resuming on B after A's first event.
    let resumed = Sse::subscribe(&b.base_url, &task, Some(1));

    std::fs::write(dir.join("gate"), "").expect("open the gate");
    let on_a = sent.rest();
    assert!(on_a.iter().any(|e| says(e, "third")), "{on_a:#?}");
    let ids: Vec<Option<u64>> = on_a.iter().map(|e| e.id).collect();
    let want: Vec<Option<u64>> = (1..=on_a.len() as u64).map(Some).collect();
    assert_eq!(ids, want, "A's own stream");
    assert!(started.id.is_some());

    let live = live.rest();
    same_as(&live[1..], &on_a, from + 1, "B from the start");
    assert!(says(live.last().expect("an end"), "TASK_STATE_COMPLETED"));
    same_as(&resumed.rest(), &on_a, 2, "B resuming after 1");

    let got = get_json(&b.base_url, &format!("/rest/tasks/{task}"));
    assert_eq!(got["status"]["state"], "TASK_STATE_COMPLETED", "{got}");
    let listed = get_json(&b.base_url, "/rest/tasks");
    assert!(
        listed["tasks"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["id"] == task.as_str())),
        "{listed}"
    );
}

#[test]
fn a_cut_listener_connection_loses_nothing() {
    let Some(schema) = PgSchema::create_or_skip("a_cut_listener_connection_loses_nothing") else {
        return;
    };
    let dir = scratch_dir("replicas-cut");
    let app = format!("ferry-replicas-cut-{}", std::process::id());
    let (a, b) = replicas(&schema, &dir, &app);

    let (sent, task, _) = Sse::started_on(&a.base_url);
    let mut live = Sse::subscribe(&b.base_url, &task, None);
    let from = live.next().and_then(|e| e.id).expect("the snapshot");

    assert!(
        schema.run(&format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = '{app}' AND pid <> pg_backend_pid()"
        )),
        "terminate the replicas' connections"
    );
    std::fs::write(dir.join("gate"), "").expect("open the gate");
    let on_a = sent.rest();
    assert!(
        on_a.iter().any(|e| says(e, "TASK_STATE_COMPLETED")),
        "A recovers its own connections: {on_a:#?}\n{}",
        a.output()
    );
    let live = live.rest();
    same_as(&live[1..], &on_a, from + 1, "B after the cut");
    drop(b);
}

#[test]
fn a_follow_up_runs_on_another_replica() {
    let Some(schema) = PgSchema::create_or_skip("a_follow_up_runs_on_another_replica") else {
        return;
    };
    let dir = scratch_dir("replicas-follow-up");
    let (a, b) = replicas_running(&schema, &dir, "ferry-replicas-turns", CONVERSATION, &[]);

    let first = send(&a.base_url, "Ada", None);
    assert_eq!(
        first["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{first}"
    );
    let task = first["id"].as_str().expect("an id");

    let second = send(&b.base_url, "Paris", Some(task));
    assert_eq!(
        second["status"]["state"], "TASK_STATE_COMPLETED",
        "{second}"
    );
    assert!(
        second.to_string().contains("turn 2: Ada lives in Paris"),
        "{second}"
    );
    let on_a = get_json(&a.base_url, &format!("/rest/tasks/{task}"));
    assert_eq!(on_a["status"]["state"], "TASK_STATE_COMPLETED", "{on_a}");
    assert_eq!(b.metric("ferry_replica_leases_taken_total"), 1);
}

#[test]
fn a_killed_replicas_task_fails_with_the_reason_on_the_other() {
    let Some(schema) =
        PgSchema::create_or_skip("a_killed_replicas_task_fails_with_the_reason_on_the_other")
    else {
        return;
    };
    let dir = scratch_dir("replicas-kill");
    let (a, b) = replicas_running(&schema, &dir, "ferry-replicas-kill", GATED, &SHORT_LEASES);
    let (_stream, task, _) = Sse::started_on(&a.base_url);
    let mut live = Sse::subscribe(&b.base_url, &task, None);
    live.next().expect("the snapshot");

    drop(a); // SIGKILL, and reaped
    let end = live.until(failed);
    assert!(says(&end, "stopped answering"), "{end:?}");
    let got = get_json(&b.base_url, &format!("/rest/tasks/{task}"));
    assert_eq!(got["status"]["state"], "TASK_STATE_FAILED", "{got}");
    assert!(
        got.to_string().contains("its lease on the task ran out"),
        "{got}"
    );
    assert_eq!(b.metric("ferry_replica_takeovers_total"), 1);
    // The orphaned script ends too.
    std::fs::write(dir.join("gate"), "").expect("open the gate");
}

#[test]
fn a_frozen_replicas_late_writes_are_refused() {
    let Some(schema) = PgSchema::create_or_skip("a_frozen_replicas_late_writes_are_refused") else {
        return;
    };
    let dir = scratch_dir("replicas-freeze");
    let (a, b) = replicas_running(&schema, &dir, "ferry-replicas-freeze", GATED, &SHORT_LEASES);
    let (_stream, task, _) = Sse::started_on(&a.base_url);
    let mut live = Sse::subscribe(&b.base_url, &task, None);
    live.next().expect("the snapshot");

    signal(a.pid(), "STOP");
    let end = live.until(failed);
    // While A is stopped its command finishes: A finds its output when it is continued.
    std::fs::write(dir.join("gate"), "").expect("open the gate");
    signal(a.pid(), "CONT");
    support::wait_for_log(&a.log, "agent event refused", GUARD);
    assert!(a.metric("ferry_replica_fenced_writes_total") >= 1);

    // The task's whole log, read on B: nothing of A after the takeover.
    let all = Sse::subscribe(&b.base_url, &task, Some(0)).rest();
    assert_eq!(all.last(), Some(&end), "{all:#?}");
    assert!(!all.iter().any(|e| says(e, "second")), "{all:#?}");
    let got = get_json(&b.base_url, &format!("/rest/tasks/{task}"));
    assert_eq!(got["status"]["state"], "TASK_STATE_FAILED", "{got}");
    assert!(!got.to_string().contains("second"), "{got}");
}

#[test]
fn a_cancel_on_one_replica_ends_the_turn_on_the_other() {
    let Some(schema) =
        PgSchema::create_or_skip("a_cancel_on_one_replica_ends_the_turn_on_the_other")
    else {
        return;
    };
    let dir = scratch_dir("replicas-cancel");
    let (a, b) = replicas(&schema, &dir, "ferry-replicas-cancel");
    let (sent, task, started) = Sse::started_on(&a.base_url);
    let pid: u32 = started
        .data
        .to_string()
        .split("started ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {started:?}"));

    let (status, body) = http_request(
        "POST",
        &format!("{}/rest/tasks/{task}:cancel", b.base_url),
        &[],
        "{}",
    );
    assert_eq!(status, 200, "{}", text(&body));
    let canceled: Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(
        canceled["status"]["state"], "TASK_STATE_CANCELED",
        "{canceled}"
    );
    assert!(
        ferry_testkit::process::wait_for_exit(pid, GUARD),
        "the command of the turn on A (pid {pid}) still runs"
    );
    let end = sent.rest();
    assert!(
        end.last().is_some_and(|e| says(e, "TASK_STATE_CANCELED")),
        "A's stream ends CANCELED: {end:#?}"
    );
    for server in [&a, &b] {
        let got = get_json(&server.base_url, &format!("/rest/tasks/{task}"));
        assert_eq!(got["status"]["state"], "TASK_STATE_CANCELED", "{got}");
    }
}

/// A TCP forwarder to PostgreSQL that the test can cut (every connection closed, new ones
/// refused) and restore.
struct Forwarder {
    addr: String,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
    open: std::sync::Arc<std::sync::Mutex<Vec<TcpStream>>>,
}

impl Forwarder {
    fn to(upstream: &str) -> Forwarder {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr").to_string();
        let forwarder = Forwarder {
            addr,
            cut: Default::default(),
            open: Default::default(),
        };
        let (cut, open, upstream) = (
            forwarder.cut.clone(),
            forwarder.open.clone(),
            upstream.to_owned(),
        );
        thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                if cut.load(Ordering::SeqCst) {
                    continue; // dropped: the connection closes at once
                }
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                let pipe = |mut from: TcpStream, mut to: TcpStream| {
                    thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                };
                let mut kept = open.lock().unwrap_or_else(|p| p.into_inner());
                for stream in [&client, &server] {
                    if let Ok(s) = stream.try_clone() {
                        kept.push(s);
                    }
                }
                if let (Ok(c), Ok(s)) = (client.try_clone(), server.try_clone()) {
                    pipe(c, s);
                    pipe(server, client);
                }
            }
        });
        forwarder
    }

    /// Closes every connection and refuses new ones until [`Forwarder::restore`].
    fn cut(&self) {
        self.cut.store(true, std::sync::atomic::Ordering::SeqCst);
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        for stream in open.drain(..) {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }

    fn restore(&self) {
        self.cut.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn readiness_follows_the_store() {
    let Some(schema) = PgSchema::create_or_skip("readiness_follows_the_store") else {
        return;
    };
    let direct = schema.store_url();
    let upstream = "127.0.0.1:5432";
    assert!(
        direct.contains(upstream),
        "the forwarder goes to {upstream}: {direct}"
    );
    let forwarder = Forwarder::to(upstream);
    let store = direct.replace(upstream, &forwarder.addr);
    let server = Server::start([
        "--agent",
        "echo",
        "--bind",
        "127.0.0.1:0",
        "--store",
        &store,
    ]);
    let ready = || http_request("GET", &format!("{}/readyz", server.base_url), &[], "");

    assert_eq!(ready().0, 200);
    forwarder.cut();
    let (status, body) = ready();
    assert_eq!(status, 503, "{}", text(&body));
    assert!(text(&body).contains("task store"), "{}", text(&body));
    forwarder.restore();
    let (status, body) = ready();
    assert_eq!(status, 200, "{}", text(&body));
}

#[test]
fn the_python_sdk_talks_to_two_replicas_through_nginx() {
    let test = "the_python_sdk_talks_to_two_replicas_through_nginx";
    let Some(python) = support::python_or_skip(test, "a2a.client, a2a.types.a2a_pb2") else {
        return;
    };
    if !support::balancer::Balancer::available(test) {
        return;
    }
    let Some(schema) = PgSchema::create_or_skip(test) else {
        return;
    };
    let port = support::balancer::Balancer::free_port();
    let public = format!("http://127.0.0.1:{port}");
    let store = schema.store_url();
    let args = [
        "--agent",
        "conformance",
        "--bind",
        "127.0.0.1:0",
        "--store",
        &store,
        "--public-url",
        &public,
    ];
    let (a, b) = (Server::start(args), Server::start(args));
    let (at_a, at_b) = (a.bound_url(), b.bound_url());
    let balancer = support::balancer::Balancer::start(test, port, &[&at_a, &at_b]).expect("nginx");
    for binding in ["JSONRPC", "HTTP+JSON"] {
        for scenario in ["turns", "tasks"] {
            let (out, timed_out) = support::output_with_timeout(
                std::process::Command::new(&python)
                    .arg("interop/python/interop_client.py")
                    .args(["--base-url", &balancer.base_url])
                    .args(["--binding", binding, "--scenario", scenario])
                    .env("PYTHONUNBUFFERED", "1")
                    .current_dir(support::workspace_root()),
                None,
                Duration::from_secs(90),
            );
            assert!(
                !timed_out && out.status.success(),
                "{scenario} over {binding} through nginx:\n{}\n{}\n---- A ----\n{}\n---- B ----\n{}",
                text(&out.stdout),
                text(&out.stderr),
                a.output(),
                b.output()
            );
        }
    }
    // Both replicas answered: round-robin spread the calls.
    for (server, at) in [(&a, &at_a), (&b, &at_b)] {
        let (status, metrics) = http_request("GET", &format!("{at}/metrics"), &[], "");
        assert_eq!(status, 200);
        let served = text(&metrics)
            .lines()
            .filter(|l| l.starts_with("ferry_requests_total{"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .sum::<u64>();
        assert!(served > 0, "{at} served nothing:\n{}", server.output());
    }
}

/// The last lines of a server's log.
fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// One task of the load run: started on `a` (its events keep coming for a while), followed
/// from `b`, and canceled on `b` when `cancel`; returns (events after the snapshot, lost,
/// repeated).
fn task_followed_elsewhere(
    a: &str,
    b: &str,
    n: usize,
    rest: bool,
    cancel: bool,
) -> (u64, u64, u64) {
    let message = json!({"messageId": format!("ferry-ticks-{n}"), "role": "ROLE_USER",
        "parts": [{"text": "tick"}]});
    let send = json!({"message": message, "configuration": {"returnImmediately": true}});
    let rpc = |method: &str, params: Value| {
        json!({"jsonrpc": "2.0", "id": n, "method": method, "params": params}).to_string()
    };
    let (status, body) = if rest {
        http_request(
            "POST",
            &format!("{a}/rest/message:send"),
            &[],
            &send.to_string(),
        )
    } else {
        http_request("POST", &format!("{a}/"), &[], &rpc("SendMessage", send))
    };
    assert_eq!(status, 200, "{}", text(&body));
    let answer: Value = serde_json::from_slice(&body).expect("JSON");
    let answer = if rest {
        answer
    } else {
        answer["result"].clone()
    };
    let task = answer["task"]["id"].as_str().expect("a task").to_owned();

    // From the first event on (`Last-Event-ID: 0`): the log, then live, also if the task
    // ended before the subscription.
    let mut followed = if rest {
        Sse::subscribe(b, &task, Some(0))
    } else {
        let subscribe = rpc("SubscribeToTask", json!({"id": task}));
        Sse::open(b, "POST", "/", &[("Last-Event-ID", "0")], &subscribe)
    };
    let first = followed.next().expect("the first event");
    let from = 0;
    if cancel {
        let (status, body) = if rest {
            http_request("POST", &format!("{b}/rest/tasks/{task}:cancel"), &[], "{}")
        } else {
            http_request(
                "POST",
                &format!("{b}/"),
                &[],
                &rpc("CancelTask", json!({"id": task})),
            )
        };
        // It may have completed first (then it cannot be canceled any more).
        assert!(
            status == 200 || text(&body).contains("TASK_STATE_COMPLETED") || status == 400,
            "{}",
            text(&body)
        );
    }
    let events = followed.rest();
    let ended = events
        .last()
        .or(Some(&first))
        .is_some_and(|e| says(e, "TASK_STATE_CANCELED") || says(e, "TASK_STATE_COMPLETED"));
    assert!(ended, "{task}: {events:#?}");
    let ids: Vec<u64> = events.iter().filter_map(|e| e.id).collect();
    let end = ids.iter().copied().max().unwrap_or(from);
    let mut seen = std::collections::BTreeSet::new();
    let repeated = ids.iter().filter(|id| !seen.insert(**id)).count() as u64;
    let lost = (from + 1..=end).filter(|id| !seen.contains(id)).count() as u64;
    (ids.len() as u64, lost, repeated)
}

#[test]
fn a_load_run_across_two_replicas_loses_and_repeats_nothing() {
    const TASKS: usize = 2_000;
    const WORKERS: usize = 16;
    let Some(schema) =
        PgSchema::create_or_skip("a_load_run_across_two_replicas_loses_and_repeats_nothing")
    else {
        return;
    };
    let store = schema.store_url();
    let args = [
        "--agent",
        "conformance",
        "--bind",
        "127.0.0.1:0",
        "--store",
        &store,
    ];
    let (a, b) = (Server::start(args), Server::start(args));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let totals: Vec<(u64, u64, u64)> = thread::scope(|scope| {
        let workers: Vec<_> = (0..WORKERS)
            .map(|_| {
                scope.spawn(|| {
                    let mut sum = (0, 0, 0);
                    loop {
                        let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if n >= TASKS {
                            return sum;
                        }
                        let (events, lost, repeated) = task_followed_elsewhere(
                            &a.base_url,
                            &b.base_url,
                            n,
                            n.is_multiple_of(2),
                            n % 4 == 1,
                        );
                        sum = (sum.0 + events, sum.1 + lost, sum.2 + repeated);
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join().unwrap_or_else(|_| {
                    panic!(
                        "a worker failed\n---- A ----\n{}\n---- B ----\n{}",
                        tail(&a.output()),
                        tail(&b.output())
                    )
                })
            })
            .collect()
    });
    let (events, lost, repeated) = totals
        .iter()
        .fold((0, 0, 0), |s, t| (s.0 + t.0, s.1 + t.1, s.2 + t.2));
    println!(
        "load run: {TASKS} tasks, {events} events on the other replica, {lost} lost, {repeated} repeated"
    );
    assert!(
        events >= TASKS as u64 * 5,
        "the subscribers followed live tasks: {events}"
    );
    assert_eq!((lost, repeated), (0, 0), "{events} events");
    assert_eq!(a.metric("ferry_replica_leases_held"), 0, "A holds nothing");
}

#[test]
fn a_retry_reaching_another_replica_gets_the_first_answer() {
    let Some(schema) =
        PgSchema::create_or_skip("a_retry_reaching_another_replica_gets_the_first_answer")
    else {
        return;
    };
    let store = schema.store_url();
    let args = [
        "--agent",
        "conformance",
        "--bind",
        "127.0.0.1:0",
        "--store",
        &store,
        "--dedup-ttl",
        "600",
    ];
    let (a, b) = (Server::start(args), Server::start(args));
    let send = |base: &str, said: &str| {
        let body = json!({"message": {"messageId": "retried-1", "role": "ROLE_USER",
            "parts": [{"text": said}]}})
        .to_string();
        let (status, got) = http_request("POST", &format!("{base}/rest/message:send"), &[], &body);
        assert_eq!(status, 200, "{}", text(&got));
        serde_json::from_slice::<Value>(&got).expect("JSON")
    };
    let first = send(&a.base_url, "once");
    let again = send(&b.base_url, "once");
    assert_eq!(again, first, "the first answer, from the other replica");
    let listed = get_json(&b.base_url, "/rest/tasks");
    assert_eq!(listed["totalSize"], 1, "no second task: {listed}");
    let other = send(&b.base_url, "other content");
    assert_ne!(other["task"]["id"], first["task"]["id"], "{other}");
}
