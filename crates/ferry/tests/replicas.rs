//! Several `ferry serve` replicas on one PostgreSQL schema, end to end between processes.
//!
//! | test | what it shows |
//! |---|---|
//! | `a_subscriber_on_another_replica_sees_every_event_once_in_order` | a turn runs on A; subscribers on B, one from the start and one resuming with `Last-Event-ID`, get exactly A's events (same ids, same bodies, none missing, none twice); GetTask and ListTasks on B see the task |
//! | `a_cut_listener_connection_loses_nothing` | every backend of both replicas is terminated (`pg_terminate_backend`) mid-turn; the subscriber on B still gets every event, caught up from the log |
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
echo "started"
i=0
while [ ! -e "$1/gate" ]; do
  i=$((i + 1))
  if [ "$i" -gt 1200 ]; then echo "the gate never opened" >&2; exit 7; fi
  sleep 0.05
done
echo "second"
echo "third"
"#;

/// Two replicas of an exec agent running [`GATED`] on one schema, the safety poll out of the
/// way; `app` names their connections (for `pg_terminate_backend`).
fn replicas(schema: &PgSchema, dir: &Path, app: &str) -> (Server, Server) {
    let script = write(dir, "script.sh", GATED);
    let line = format!("/bin/sh '{}' '{}'", s(&script), s(dir));
    let store = format!("{}&application_name={app}", schema.store_url());
    let args = [
        "--exec",
        &line,
        "--bind",
        "127.0.0.1:0",
        "--store",
        &store,
        "--replica-safety-poll",
        "3600",
    ];
    (Server::start(args), Server::start(args))
}

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

    let mut sent = Sse::send(&a.base_url, "go");
    let started = sent.until(|e| says(e, "started"));
    let task = sent.seen[0].data["task"]["id"]
        .as_str()
        .expect("the first event is the task")
        .to_owned();

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

    let mut sent = Sse::send(&a.base_url, "go");
    sent.until(|e| says(e, "started"));
    let task = sent.seen[0].data["task"]["id"]
        .as_str()
        .expect("the task")
        .to_owned();
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
