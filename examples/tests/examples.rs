//! Every example runs as its index (`examples/README.md`) says: each agent is served on a
//! free port, the clients call it, and what they print is what the index shows.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long an example may take to start, or a client to finish.
const LIMIT: Duration = Duration::from_secs(60);

/// A served example, stopped when dropped.
struct Served {
    child: Child,
    /// The server's base URL (`http://127.0.0.1:PORT`).
    base: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the example `bin` on a free port; returns once it printed its card line.
fn serve(bin: &str) -> Served {
    let mut child = Command::new(bin)
        .arg("127.0.0.1:0")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("start {bin}: {e}"));
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(LIMIT)
        .expect("the example prints its card line");
    let card = line
        .trim()
        .strip_prefix("agent card: ")
        .unwrap_or_else(|| panic!("not a card line: {line:?}"));
    let base = card
        .strip_suffix("/.well-known/agent-card.json")
        .expect("the card's well-known URL")
        .to_owned();
    Served { child, base }
}

/// Runs the client example `bin` with `args`; its standard output, which must say it
/// succeeded.
fn run(bin: &str, args: &[&str]) -> String {
    let child = Command::new(bin)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {bin}: {e}"));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let Output {
        status,
        stdout,
        stderr,
    } = rx
        .recv_timeout(LIMIT)
        .expect("the client finishes")
        .expect("its output");
    let stdout = String::from_utf8_lossy(&stdout).into_owned();
    assert!(
        status.success(),
        "{bin} {args:?} failed: {stdout}{}",
        String::from_utf8_lossy(&stderr)
    );
    stdout
}

/// A plain GET of `path` on the server at `base`; the body.
fn get(base: &str, path: &str) -> String {
    let host = base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(host).expect("connect");
    stream.set_read_timeout(Some(LIMIT)).expect("timeout");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .expect("request");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("response");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default()
}

const CLIENT: &str = env!("CARGO_BIN_EXE_client");
const STREAM: &str = env!("CARGO_BIN_EXE_stream");

#[test]
fn the_agent_answers_the_client() {
    let agent = serve(env!("CARGO_BIN_EXE_agent"));
    let out = run(CLIENT, &[&agent.base, "hello there"]);
    assert!(out.starts_with("shout answered: task "), "{out}");
    assert!(out.contains(" COMPLETED\n"), "{out}");
    assert!(out.contains("  answer: HELLO THERE\n"), "{out}");
}

#[test]
fn the_streaming_agent_is_followed_event_by_event() {
    let agent = serve(env!("CARGO_BIN_EXE_streaming"));
    let out = run(STREAM, &[&agent.base, "one two"]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("task ") && lines[0].ends_with(" SUBMITTED"),
        "{out}"
    );
    assert_eq!(
        lines[1..],
        [
            "status WORKING: word 1 of 2",
            "artifact words: one",
            "status WORKING: word 2 of 2",
            "artifact words: two",
            "status COMPLETED: 2 words",
        ],
        "{out}"
    );
}

#[test]
fn the_multi_turn_agent_asks_then_answers_on_the_same_task() {
    let agent = serve(env!("CARGO_BIN_EXE_input_required"));
    let asked = run(CLIENT, &[&agent.base, "hello"]);
    assert!(asked.contains(" INPUT_REQUIRED\n"), "{asked}");
    assert!(asked.contains("  says: What is your name?\n"), "{asked}");
    let task = asked
        .split_whitespace()
        .skip_while(|w| *w != "task")
        .nth(1)
        .expect("a task id");
    let answered = run(CLIENT, &[&agent.base, "Ada", task]);
    assert!(
        answered.contains(&format!("task {task} COMPLETED\n")),
        "{answered}"
    );
    assert!(answered.contains("  says: Hello, Ada!\n"), "{answered}");
}

#[test]
fn the_extension_is_on_the_card_on_its_route_and_in_every_turn() {
    let agent = serve(env!("CARGO_BIN_EXE_extension"));
    let card = get(&agent.base, "/.well-known/agent-card.json");
    assert!(card.contains("urn:example:motto:v1"), "{card}");
    assert_eq!(get(&agent.base, "/ext/motto"), "ferry: across, intact");
    let out = run(CLIENT, &[&agent.base, "hello"]);
    assert!(
        out.contains("  says: hello — ferry: across, intact\n"),
        "{out}"
    );
}
