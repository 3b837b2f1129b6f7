//! The calling half of the `ferry` CLI (`send`, `task get|list|cancel|subscribe`, `completion`)
//! driven the way a script drives it: every answer is read back with `-o json`, every exit code
//! class is provoked, and no output may ever contain the token.
//!
//! Two servers, each over both HTTP bindings (`--binding jsonrpc` and `--binding rest`):
//!
//! * `ferry serve --agent conformance` (behaviour by messageId prefix, echo otherwise);
//! * `interop/python/sdk_server.py`, a server built with the official Python SDK (a2a-sdk
//!   1.3.0): echo, and the same `ferry-turns-3` conversation. Its interpreter is
//!   `$FERRY_PYTHON` or `<workspace>/.venv/bin/python`; when it is missing these tests fail in CI
//!   (`CI=true`) and are skipped with a loud `SKIPPED:` notice elsewhere.
//!
//! The `sdk_grpc_*` tests run the same scenarios with `--binding grpc` against the SDK's own
//! gRPC server (`sdk_server.py --grpc-port 0`: the SDK's `GrpcHandler` on `grpc.aio`, plaintext
//! HTTP/2 on a second port, listed in the card as `GRPC 127.0.0.1:PORT`), and then ask the
//! fixture which gRPC calls it received (`GET /_test/grpc-calls`): exactly the scenario's
//! `A2AService` methods, each with `a2a-version: 1.0` metadata, so the answers provably came
//! over gRPC and not over the card's HTTP interfaces.
//!
//! | test                         | server       | what it proves                                                              |
//! |------------------------------|--------------|-----------------------------------------------------------------------------|
//! | `*_blocking_send`            | both         | `ferry send` waits: exit 0, `{"task":…}` COMPLETED with the echoed text     |
//! | `*_three_turns_streamed`     | both         | `send --stream --task --context --message-id ferry-turns-3-…`: JSON Lines, INPUT_REQUIRED ×2 then COMPLETED, one task and context, artifact `turn-N` each turn |
//! | `*_task_get_list_cancel`     | both         | `task get`, `task list --context --page-size 1 --all` (paging), `task cancel` → CANCELED; cancelling a finished task → exit 1 |
//! | `*_subscribe_follows_…`      | both         | `task subscribe` on an INPUT_REQUIRED task sees another process's `send` complete it and exits 0 |
//! | `exit_code_usage`            | none         | clap usage errors → 2                                                       |
//! | `exit_code_unreachable`      | none         | nothing listening → 3                                                       |
//! | `private_addresses_…`        | none         | `http://10.0.0.5:8765` (private) and `http://192.168.1.9` → 3 before any connection, naming the reason and `--insecure-allow-private` |
//! | `exit_code_timeout`          | silent TCP   | a listener that never answers, `--timeout 1` → 5, promptly                  |
//! | `token_*`                    | ferry `--token` | no or wrong token → 4, right token (flag or `FERRY_TOKEN`) → 0; the token never appears in stdout or stderr |
//! | `read_only_token_…`          | ferry `--read-only-token` | over all three bindings the reader's `task get` / `task list` → 0, its `send` / `task cancel` → 4 (403); never printed |
//! | `the_acts_auth_pass_…`       | ferry, `ITK_ACTS_AUTH=1` | no token or `itk-insufficient-token` → 4 on `send`, `itk-valid-token` → COMPLETED |
//! | `completion_bash`            | none         | `ferry completion bash` prints a bash completion script                    |

mod support;

use serde_json::Value;
use std::net::TcpListener;
use std::process::{Command, Output};
use std::sync::mpsc::RecvTimeoutError;
use std::thread;
use std::time::{Duration, Instant};
use support::{
    SDK_SERVER_IMPORTS, Server, clear_ferry_env, ferry, run_with_timeout, spawn_lines,
    spawn_sdk_server,
};

/// Hard limit for one CLI run (each run also gets `--timeout` [`CLI_TIMEOUT_SECS`]).
const RUN_TIMEOUT: Duration = Duration::from_secs(60);
/// The CLI's own per-call `--timeout`.
const CLI_TIMEOUT_SECS: &str = "30";
/// How long a subscriber may take to print an event or to exit.
const EVENT_TIMEOUT: Duration = Duration::from_secs(30);
/// The token of the `--token` server; must never show up in any output.
const SECRET: &str = "s3cret-ferry-token-6b1f0c";
/// A wrong token; must not show up either.
const WRONG: &str = "wrong-ferry-token-93d2aa";
/// What it must import as well to serve gRPC (`--grpc-port`; the SDK's `grpc` extra).
const SDK_GRPC_IMPORTS: &str = "grpc.aio, a2a.server.request_handlers.grpc_handler";
/// Where `sdk_server.py --grpc-port` lists the gRPC calls it received.
const SDK_GRPC_CALLS_PATH: &str = "/_test/grpc-calls";
/// The gRPC service every A2A method is called on.
const GRPC_SERVICE: &str = "/lf.a2a.v1.A2AService/";

const COMPLETED: &str = "TASK_STATE_COMPLETED";
const INPUT_REQUIRED: &str = "TASK_STATE_INPUT_REQUIRED";
const CANCELED: &str = "TASK_STATE_CANCELED";

/// The `--binding` values.
#[derive(Debug, Clone, Copy)]
enum Binding {
    JsonRpc,
    Rest,
    Grpc,
}

impl Binding {
    /// The HTTP bindings, which every server here has.
    const ALL: [Binding; 2] = [Binding::JsonRpc, Binding::Rest];

    fn flag(self) -> &'static str {
        match self {
            Binding::JsonRpc => "jsonrpc",
            Binding::Rest => "rest",
            Binding::Grpc => "grpc",
        }
    }
}

/// One finished CLI run.
struct Run {
    /// The command line, for failure messages.
    shown: String,
    output: Output,
}

impl Run {
    fn code(&self) -> Option<i32> {
        self.output.status.code()
    }

    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Panics unless the exit code is `code`.
    fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code(),
            Some(code),
            "{}: expected exit {code}\nstdout:\n{}\nstderr:\n{}",
            self.shown,
            self.stdout(),
            self.stderr()
        );
        self
    }

    /// Exit 0 and one JSON document on stdout.
    fn json(&self) -> Value {
        self.expect_code(0);
        serde_json::from_str(self.stdout().trim()).unwrap_or_else(|e| {
            panic!(
                "{}: stdout is not JSON ({e}):\n{}",
                self.shown,
                self.stdout()
            )
        })
    }

    /// Exit 0 and JSON Lines on stdout (at least one line).
    fn json_lines(&self) -> Vec<Value> {
        self.expect_code(0);
        let lines: Vec<Value> = self
            .stdout()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("{}: line is not JSON ({e}): {l}", self.shown))
            })
            .collect();
        assert!(!lines.is_empty(), "{}: no output", self.shown);
        lines
    }

    /// Panics if `secret` appears in stdout or stderr.
    fn assert_not_leaked(&self, secret: &str) {
        for (name, text) in [("stdout", self.stdout()), ("stderr", self.stderr())] {
            assert!(
                !text.contains(secret),
                "{}: the token appears in {name}:\n{text}",
                self.shown
            );
        }
    }
}

/// Runs `ferry <args>` (no `FERRY_*` variables inherited) under [`RUN_TIMEOUT`].
fn run_ferry<S: AsRef<str>>(args: &[S], env: &[(&str, &str)]) -> Run {
    let args: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
    let mut cmd = ferry();
    cmd.args(&args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let shown = format!("ferry {}", args.join(" "));
    let output = run_with_timeout(&mut cmd, None, RUN_TIMEOUT);
    Run { shown, output }
}

/// `ferry ARGS` in an empty network namespace (`unshare -n`: no interface is up, not even
/// loopback), so a refusal the test expects cannot have been preceded by a packet, nor by a
/// DNS query: had ferry resolved or dialed, the error would be a network one. Where the
/// namespace cannot be made (no privilege), it runs as usual and says so: the refusal is then
/// still decided from the parsed address, only not proven packet-free.
fn run_ferry_offline(args: &[&str]) -> Run {
    let isolated = Command::new("unshare")
        .args(["-n", "true"])
        .status()
        .is_ok_and(|status| status.success());
    if !isolated {
        eprintln!(
            "NOTE: unshare -n is not permitted here; running `ferry {args:?}` on the host network"
        );
        return run_ferry(args, &[]);
    }
    let mut cmd = Command::new("unshare");
    cmd.arg("-n").arg(env!("CARGO_BIN_EXE_ferry")).args(args);
    clear_ferry_env(&mut cmd);
    let shown = format!("unshare -n ferry {}", args.join(" "));
    let output = run_with_timeout(&mut cmd, None, RUN_TIMEOUT);
    Run { shown, output }
}

/// The CLI pointed at one server over one binding.
struct Cli<'a> {
    server: &'a Server,
    binding: Binding,
}

impl Cli<'_> {
    /// `ferry <sub…> URL <rest…>` plus the flags every call here needs.
    fn args(&self, sub: &[&str], rest: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = sub.iter().map(|s| (*s).to_owned()).collect();
        args.push(self.server.base_url.clone());
        args.extend(rest.iter().map(|s| (*s).to_owned()));
        args.extend(
            [
                // No --insecure-allow-private: the servers are on this machine (loopback),
                // which plain http may reach without a flag.
                "--binding",
                self.binding.flag(),
                "--timeout",
                CLI_TIMEOUT_SECS,
            ]
            .map(str::to_owned),
        );
        args
    }

    fn run(&self, sub: &[&str], rest: &[&str]) -> Run {
        let run = run_ferry(&self.args(sub, rest), &[]);
        if run.code() != Some(0) {
            // Server output explains most failures.
            eprintln!(
                "{} exited {:?}; server output so far:\n{}",
                run.shown,
                run.code(),
                self.server.output()
            );
        }
        run
    }

    /// `ferry send URL TEXT --message-id ID -o json [extra…]`: the answer's task.
    fn send_task(&self, text: &str, message_id: &str, extra: &[&str]) -> Value {
        let mut rest = vec![text, "--message-id", message_id, "-o", "json"];
        rest.extend_from_slice(extra);
        let answer = self.run(&["send"], &rest).json();
        let task = answer
            .get("task")
            .unwrap_or_else(|| panic!("send answered no task: {answer}"));
        task.clone()
    }
}

/// `task.status.state`.
fn state(task: &Value) -> &str {
    task["status"]["state"]
        .as_str()
        .unwrap_or_else(|| panic!("no status.state in {task}"))
}

/// A string member.
fn str_of<'v>(v: &'v Value, key: &str) -> &'v str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("no string {key:?} in {v}"))
}

/// The text of every text part of every artifact of a task.
fn artifact_texts(task: &Value) -> Vec<String> {
    let artifacts = task["artifacts"].as_array().cloned().unwrap_or_default();
    artifacts
        .iter()
        .flat_map(|a| a["parts"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p["text"].as_str().map(str::to_owned))
        .collect()
}

/// `(taskId, contextId)` of a stream event (`task`, `statusUpdate` or `artifactUpdate`).
fn event_ids(event: &Value) -> (String, String) {
    if let Some(task) = event.get("task") {
        return (str_of(task, "id").into(), str_of(task, "contextId").into());
    }
    let update = event
        .get("statusUpdate")
        .or_else(|| event.get("artifactUpdate"))
        .unwrap_or_else(|| panic!("unexpected stream event {event}"));
    (
        str_of(update, "taskId").into(),
        str_of(update, "contextId").into(),
    )
}

/// The task state an event reports, if it reports one.
fn event_state(event: &Value) -> Option<&str> {
    event
        .get("task")
        .or_else(|| event.get("statusUpdate"))
        .map(state)
}

/// Runs a scenario against `server` over each binding.
fn each_binding(server: &Server, scenario: fn(&Cli)) {
    for binding in Binding::ALL {
        scenario(&Cli { server, binding });
    }
}

/// A fresh id for messageIds.
fn session() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

// ---------------------------------------------------------------------------------------------
// Scenarios shared by both servers.
// ---------------------------------------------------------------------------------------------

/// Blocking `ferry send`: exit 0, a COMPLETED task whose artifact echoes the text.
fn blocking_send(cli: &Cli) {
    let text = format!("hello over {}", cli.binding.flag());
    let task = cli.send_task(&text, &format!("echo-{}", session()), &[]);
    assert_eq!(state(&task), COMPLETED, "{task}");
    assert!(
        artifact_texts(&task).contains(&text),
        "the artifact echoes {text:?}: {task}"
    );
}

/// The `ferry-turns-3` conversation, streamed, the follow-ups naming the task and context.
fn three_turns_streamed(cli: &Cli) {
    let session = session();
    let mut ids: Option<(String, String)> = None;
    for turn in 1..=3 {
        let message_id = format!("ferry-turns-3-{session}-{turn}");
        let text = format!("answer {turn}");
        let mut rest = vec![
            text.as_str(),
            "--stream",
            "--message-id",
            &message_id,
            "-o",
            "json",
        ];
        if let Some((task, context)) = &ids {
            rest.extend(["--task", task, "--context", context]);
        }
        let events = cli.run(&["send"], &rest).json_lines();
        let (task, context) = ids.get_or_insert_with(|| event_ids(&events[0])).clone();
        for e in &events {
            assert_eq!(
                event_ids(e),
                (task.clone(), context.clone()),
                "turn {turn}: every event is on the conversation's task and context: {e}"
            );
        }
        let artifact = format!("turn-{turn}");
        assert!(
            events
                .iter()
                .any(|e| e["artifactUpdate"]["artifact"]["artifactId"] == artifact.as_str()),
            "turn {turn}: artifact {artifact} streamed: {events:?}"
        );
        let expected = if turn < 3 { INPUT_REQUIRED } else { COMPLETED };
        let last = events.last().expect("json_lines is never empty");
        assert_eq!(
            event_state(last),
            Some(expected),
            "turn {turn}: the stream ends with {expected}: {events:?}"
        );
    }
    let (task_id, context) = ids.expect("three turns ran");
    let task = cli.run(&["task", "get"], &[&task_id, "-o", "json"]).json();
    assert_eq!(state(&task), COMPLETED, "{task}");
    assert_eq!(str_of(&task, "contextId"), context, "{task}");
    let artifact_ids: Vec<&str> = task["artifacts"]
        .as_array()
        .unwrap_or_else(|| panic!("no artifacts: {task}"))
        .iter()
        .map(|a| str_of(a, "artifactId"))
        .collect();
    for turn in ["turn-1", "turn-2", "turn-3"] {
        assert!(artifact_ids.contains(&turn), "{turn} kept: {task}");
    }
}

/// `task get`, `task list --all` (one task per page), `task cancel`, and exit 1 for
/// cancelling a task that has already ended.
fn task_get_list_cancel(cli: &Cli) {
    let session = session();
    let open = cli.send_task("first", &format!("ferry-turns-3-{session}-1"), &[]);
    assert_eq!(state(&open), INPUT_REQUIRED, "{open}");
    let open_id = str_of(&open, "id").to_owned();
    let context = str_of(&open, "contextId").to_owned();

    let got = cli.run(&["task", "get"], &[&open_id, "-o", "json"]).json();
    assert_eq!(str_of(&got, "id"), open_id, "{got}");
    assert_eq!(str_of(&got, "contextId"), context, "{got}");
    assert_eq!(state(&got), INPUT_REQUIRED, "{got}");

    let done = cli.send_task(
        "second",
        &format!("echo-{session}"),
        &["--context", &context],
    );
    assert_eq!(state(&done), COMPLETED, "{done}");
    assert_eq!(str_of(&done, "contextId"), context, "same context: {done}");
    let done_id = str_of(&done, "id").to_owned();
    assert_ne!(done_id, open_id, "a new task");

    let listed = cli
        .run(
            &["task", "list"],
            &[
                "--context",
                &context,
                "--page-size",
                "1",
                "--all",
                "-o",
                "json",
            ],
        )
        .json();
    let mut listed_ids: Vec<&str> = listed
        .as_array()
        .unwrap_or_else(|| panic!("task list -o json is an array: {listed}"))
        .iter()
        .map(|t| str_of(t, "id"))
        .collect();
    listed_ids.sort_unstable();
    let mut expected = vec![open_id.as_str(), done_id.as_str()];
    expected.sort_unstable();
    assert_eq!(
        listed_ids, expected,
        "--all follows the pages to both tasks"
    );

    let canceled = cli
        .run(&["task", "cancel"], &[&open_id, "-o", "json"])
        .json();
    assert_eq!(str_of(&canceled, "id"), open_id, "{canceled}");
    assert_eq!(state(&canceled), CANCELED, "{canceled}");

    for ended in [&open_id, &done_id] {
        let run = cli.run(&["task", "cancel"], &[ended, "-o", "json"]);
        run.expect_code(1);
        assert!(
            run.stdout().trim().is_empty(),
            "nothing on stdout when the command failed: {}",
            run.stdout()
        );
        assert!(
            run.stderr().to_ascii_lowercase().contains("cancel"),
            "stderr says why: {}",
            run.stderr()
        );
    }
}

/// `task subscribe` on an INPUT_REQUIRED task (two `ferry-turns-3` turns done) while another
/// process sends the third turn: the subscriber sees the task, then the turn's events, and exits
/// 0 after COMPLETED.
fn subscribe_until_done(cli: &Cli) {
    let session = session();
    let open = cli.send_task("one", &format!("ferry-turns-3-{session}-1"), &[]);
    let task_id = str_of(&open, "id").to_owned();
    let open = cli.send_task(
        "two",
        &format!("ferry-turns-3-{session}-2"),
        &["--task", &task_id],
    );
    assert_eq!(state(&open), INPUT_REQUIRED, "{open}");

    let (mut child, lines) =
        spawn_lines(ferry().args(cli.args(&["task", "subscribe"], &[&task_id, "-o", "json"])));
    let parse = |line: String| -> Value {
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    };

    // The first event (the task as it is) proves the subscription is live.
    let first = parse(
        lines
            .recv_timeout(EVENT_TIMEOUT)
            .expect("the subscriber prints the task within the time limit"),
    );
    assert_eq!(event_state(&first), Some(INPUT_REQUIRED), "{first}");

    // Another process sends the last turn; the agent completes the task.
    let done = cli.send_task(
        "three",
        &format!("ferry-turns-3-{session}-3"),
        &["--task", &task_id],
    );
    assert_eq!(state(&done), COMPLETED, "{done}");

    let deadline = Instant::now() + EVENT_TIMEOUT;
    let mut events = vec![first];
    loop {
        match lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => events.push(parse(line)),
            Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {
                panic!("the subscriber did not end after COMPLETED: {events:?}")
            }
        }
    }
    let status = loop {
        if let Some(status) = child.0.try_wait().expect("poll the subscriber") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the subscriber closed stdout but did not exit"
        );
        thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "subscriber exit: {events:?}");
    for e in &events {
        assert_eq!(event_ids(e).0, task_id, "{e}");
    }
    assert_eq!(
        events.last().and_then(event_state),
        Some(COMPLETED),
        "the last event is the terminal one: {events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| e["artifactUpdate"]["artifact"]["artifactId"] == "turn-3"),
        "the subscriber saw the third turn's artifact: {events:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Against `ferry serve`.
// ---------------------------------------------------------------------------------------------

/// `ferry serve --agent conformance` on a free loopback port.
fn ferry_server() -> Server {
    Server::start(["--agent", "conformance", "--bind", "127.0.0.1:0"])
}

#[test]
fn ferry_blocking_send() {
    let server = ferry_server();
    each_binding(&server, blocking_send);
}

#[test]
fn ferry_three_turns_streamed() {
    let server = ferry_server();
    each_binding(&server, three_turns_streamed);
}

#[test]
fn ferry_task_get_list_cancel() {
    let server = ferry_server();
    each_binding(&server, task_get_list_cancel);
}

#[test]
fn ferry_subscribe_follows_a_task_to_its_end() {
    each_binding(&ferry_server(), subscribe_until_done);
}

// ---------------------------------------------------------------------------------------------
// Exit codes, tokens, completion.
// ---------------------------------------------------------------------------------------------

#[test]
fn exit_code_usage() {
    for args in [
        &["send"][..],
        &["send", "http://127.0.0.1:9"],
        &["send", "http://127.0.0.1:9", "hi", "--binding", "soap"],
        &["task", "frobnicate", "http://127.0.0.1:9"],
        &["send", "http://127.0.0.1:9", "hi", "--timeout", "soon"],
    ] {
        let run = run_ferry(args, &[]);
        run.expect_code(2);
        assert!(
            run.stderr().contains("Usage") || run.stderr().contains("error:"),
            "{}: says what is wrong: {}",
            run.shown,
            run.stderr()
        );
    }
}

/// A loopback port with nothing listening on it.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
    // Dropped here: the port is free again (and, on loopback, refuses connections).
}

#[test]
fn exit_code_unreachable() {
    let url = format!("http://127.0.0.1:{}", closed_port());
    for args in [
        &["send", &url, "hi"][..],
        &["task", "get", &url, "some-task"],
    ] {
        let mut all = args.to_vec();
        all.extend(["--insecure-allow-private", "--retries", "0"]);
        run_ferry(&all, &[]).expect_code(3);
    }
}

/// A private (non-loopback) address is refused from the parsed URL, before any packet leaves:
/// the policy check of an IP literal runs before the request is built. Nothing here dials a
/// non-loopback address.
#[test]
fn private_addresses_are_refused_before_any_connection() {
    for url in [
        "http://10.0.0.5:8765",
        "https://192.168.1.9/a2a",
        "http://[fd00::1]:80",
    ] {
        let run = run_ferry_offline(&["send", url, "hi", "--retries", "0"]);
        run.expect_code(3);
        let said = run.stderr();
        assert!(
            said.contains("--insecure-allow-private"),
            "{url}: names the flag: {said}"
        );
        assert!(
            said.contains("private") || said.contains("unique-local"),
            "{url}: says why: {said}"
        );
    }
    // Plain http to a public name is refused the same way (https only off this machine).
    let run = run_ferry_offline(&["send", "http://agents.example.com", "hi", "--retries", "0"]);
    run.expect_code(3);
    assert!(
        run.stderr().contains("--insecure-allow-private"),
        "{}",
        run.stderr()
    );
}

#[test]
fn exit_code_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a silent listener");
    let url = format!(
        "http://127.0.0.1:{}",
        listener.local_addr().expect("local address").port()
    );
    // Accepts connections and never answers; the thread ends with the test binary.
    thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().map_while(Result::ok) {
            held.push(conn);
        }
    });
    let started = Instant::now();
    let run = run_ferry(
        &[
            "send",
            &url,
            "hi",
            "--insecure-allow-private",
            "--timeout",
            "1",
            "--retries",
            "0",
        ],
        &[],
    );
    run.expect_code(5);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "--timeout 1 gives up promptly, took {:?}",
        started.elapsed()
    );
}

#[test]
fn token_refused_accepted_and_never_printed() {
    let server = Server::start([
        "--agent",
        "conformance",
        "--bind",
        "127.0.0.1:0",
        "--token",
        SECRET,
    ]);
    for binding in Binding::ALL {
        let cli = Cli {
            server: &server,
            binding,
        };
        let send = |extra: &[&str]| cli.args(&["send"], &[&["hi", "-o", "json"], extra].concat());

        // Refused: no token, or a wrong one (flag or environment).
        for run in [
            run_ferry(&send(&[]), &[]),
            run_ferry(&send(&["--token", WRONG]), &[]),
            run_ferry(&send(&[]), &[("FERRY_TOKEN", WRONG)]),
        ] {
            run.expect_code(4);
            run.assert_not_leaked(SECRET);
            run.assert_not_leaked(WRONG);
        }

        // Accepted: the right token as a flag or in FERRY_TOKEN, JSON or text output.
        for run in [
            run_ferry(&send(&["--token", SECRET]), &[]),
            run_ferry(&send(&[]), &[("FERRY_TOKEN", SECRET)]),
        ] {
            let answer = run.json();
            assert_eq!(state(&answer["task"]), COMPLETED, "{answer}");
            run.assert_not_leaked(SECRET);
        }
        let text = run_ferry(
            &cli.args(&["send"], &["hi", "-o", "text", "--token", SECRET]),
            &[],
        );
        text.expect_code(0);
        assert!(text.stdout().contains("COMPLETED"), "{}", text.stdout());
        text.assert_not_leaked(SECRET);

        // Failures with the right token do not print it either.
        let run = run_ferry(
            &cli.args(
                &["task", "get"],
                &["no-such-task", "-o", "json", "--token", SECRET],
            ),
            &[],
        );
        run.expect_code(1);
        run.assert_not_leaked(SECRET);
    }
    let url = format!("http://127.0.0.1:{}", closed_port());
    let run = run_ferry(
        &[
            "send",
            &url,
            "hi",
            "--insecure-allow-private",
            "--retries",
            "0",
        ],
        &[("FERRY_TOKEN", SECRET)],
    );
    run.expect_code(3);
    run.assert_not_leaked(SECRET);
}

/// `--read-only-token`: over every binding the reader's `task get` and `task list` succeed,
/// its `send` and `task cancel` exit 4 (refused credentials, 403), and it never shows up in
/// output; the full token still does everything.
#[test]
fn read_only_token_reads_and_is_refused_the_rest() {
    const READER: &str = "reader-ferry-token-5e0a41";
    let server = Server::start([
        "--agent",
        "conformance",
        "--bind",
        "127.0.0.1:0",
        "--token",
        SECRET,
        "--read-only-token",
        READER,
    ]);
    for binding in [Binding::JsonRpc, Binding::Rest, Binding::Grpc] {
        let cli = Cli {
            server: &server,
            binding,
        };
        let full = &["--token", SECRET];
        let reader = &["--token", READER];
        let sent = run_ferry(
            &cli.args(&["send"], &[&["hi", "-o", "json"], &full[..]].concat()),
            &[],
        );
        let id = str_of(&sent.json()["task"], "id").to_owned();
        let got = run_ferry(
            &cli.args(
                &["task", "get"],
                &[&[id.as_str(), "-o", "json"], &reader[..]].concat(),
            ),
            &[],
        );
        assert_eq!(str_of(&got.json(), "id"), id, "{binding:?}");
        got.assert_not_leaked(READER);
        let listed = run_ferry(
            &cli.args(&["task", "list"], &[&["-o", "json"], &reader[..]].concat()),
            &[],
        );
        listed.expect_code(0);
        for refused in [
            cli.args(&["send"], &[&["hi", "-o", "json"], &reader[..]].concat()),
            cli.args(
                &["task", "cancel"],
                &[&[id.as_str(), "-o", "json"], &reader[..]].concat(),
            ),
        ] {
            let run = run_ferry(&refused, &[]);
            run.expect_code(4);
            run.assert_not_leaked(READER);
            assert!(
                run.stderr().contains("403"),
                "{binding:?}: {}",
                run.stderr()
            );
        }
    }
}

/// a2a-itk starts the auth pass with `ITK_ACTS_AUTH=1`: the conformance agent then requires
/// the ITK's token `itk-valid-token` on every call, and its read-only token
/// `itk-insufficient-token` may read but not send.
#[test]
fn the_acts_auth_pass_by_the_itk_variable() {
    let mut cmd = ferry();
    cmd.args(["serve", "--agent", "conformance", "--bind", "127.0.0.1:0"])
        .env("ITK_ACTS_AUTH", "1");
    let server = Server::spawn(cmd);
    let cli = Cli {
        server: &server,
        binding: Binding::JsonRpc,
    };
    let send = |extra: &[&str]| {
        run_ferry(
            &cli.args(
                &["send"],
                &[&["tck-complete-task", "-o", "json"], extra].concat(),
            ),
            &[],
        )
    };
    send(&[]).expect_code(4);
    send(&["--token", "itk-insufficient-token"]).expect_code(4);
    let answer = send(&["--token", "itk-valid-token"]).json();
    assert_eq!(state(&answer["task"]), COMPLETED, "{answer}");
}

#[test]
fn completion_bash() {
    let run = run_ferry(&["completion", "bash"], &[]);
    run.expect_code(0);
    let script = run.stdout();
    assert!(script.contains("_ferry()"), "a bash function: {script}");
    assert!(
        script.contains("complete -F _ferry"),
        "registered with `complete`: {script}"
    );
    for sub in ["send", "task", "push-config"] {
        assert!(script.contains(sub), "completes {sub}");
    }
}

// ---------------------------------------------------------------------------------------------
// Against the official Python SDK's server.
// ---------------------------------------------------------------------------------------------

/// Starts `interop/python/sdk_server.py --port 0`, or returns `None` after a skip notice.
fn sdk_server(test: &str) -> Option<Server> {
    spawn_sdk_server(test, SDK_SERVER_IMPORTS, &[])
}

/// [`sdk_server`] serving the SDK's gRPC server as well (`--grpc-port 0`).
fn sdk_grpc_server(test: &str) -> Option<Server> {
    let imports = format!("{SDK_SERVER_IMPORTS}, {SDK_GRPC_IMPORTS}");
    spawn_sdk_server(test, &imports, &["--grpc-port", "0"])
}

/// The `A2AService` methods the SDK's gRPC server has received so far (deduplicated, sorted);
/// panics unless every call carried `a2a-version: 1.0` metadata.
fn sdk_grpc_methods(server: &Server) -> Vec<String> {
    let body = server.get_ok(SDK_GRPC_CALLS_PATH);
    let calls: Value = serde_json::from_slice(&body).unwrap_or_else(|e| {
        panic!(
            "{SDK_GRPC_CALLS_PATH} is not JSON ({e}): {}",
            String::from_utf8_lossy(&body)
        )
    });
    let calls = calls
        .as_array()
        .unwrap_or_else(|| panic!("{SDK_GRPC_CALLS_PATH} is an array: {calls}"));
    let mut methods: Vec<String> = calls
        .iter()
        .map(|call| {
            assert_eq!(
                call["a2aVersion"], "1.0",
                "ferry sends a2a-version: 1.0 metadata on every gRPC call: {call}"
            );
            let method = str_of(call, "method");
            method
                .strip_prefix(GRPC_SERVICE)
                .unwrap_or_else(|| panic!("a {GRPC_SERVICE} method: {call}"))
                .to_owned()
        })
        .collect();
    methods.sort_unstable();
    methods.dedup();
    methods
}

/// Runs `scenario` with `--binding grpc` against the SDK's gRPC server, then asserts that the
/// server received exactly the gRPC calls `methods` (each at least once): every answer the
/// scenario checked came over gRPC.
fn over_sdk_grpc(test: &str, scenario: fn(&Cli), methods: &[&str]) {
    let Some(server) = sdk_grpc_server(test) else {
        return;
    };
    scenario(&Cli {
        server: &server,
        binding: Binding::Grpc,
    });
    let mut expected: Vec<&str> = methods.to_vec();
    expected.sort_unstable();
    assert_eq!(
        sdk_grpc_methods(&server),
        expected,
        "{test}: the gRPC calls the SDK's server received"
    );
}

#[test]
fn sdk_blocking_send() {
    let Some(server) = sdk_server("call_cli sdk_blocking_send") else {
        return;
    };
    each_binding(&server, blocking_send);
}

#[test]
fn sdk_three_turns_streamed() {
    let Some(server) = sdk_server("call_cli sdk_three_turns_streamed") else {
        return;
    };
    each_binding(&server, three_turns_streamed);
}

#[test]
fn sdk_subscribe_follows_a_task_to_its_end() {
    let Some(server) = sdk_server("call_cli sdk_subscribe_follows_a_task_to_its_end") else {
        return;
    };
    each_binding(&server, subscribe_until_done);
}

#[test]
fn sdk_task_get_list_cancel() {
    let Some(server) = sdk_server("call_cli sdk_task_get_list_cancel") else {
        return;
    };
    each_binding(&server, task_get_list_cancel);
}

#[test]
fn sdk_grpc_blocking_send() {
    over_sdk_grpc(
        "call_cli sdk_grpc_blocking_send",
        blocking_send,
        &["SendMessage"],
    );
}

#[test]
fn sdk_grpc_three_turns_streamed() {
    over_sdk_grpc(
        "call_cli sdk_grpc_three_turns_streamed",
        three_turns_streamed,
        &["SendStreamingMessage", "GetTask"],
    );
}

#[test]
fn sdk_grpc_subscribe_follows_a_task_to_its_end() {
    over_sdk_grpc(
        "call_cli sdk_grpc_subscribe_follows_a_task_to_its_end",
        subscribe_until_done,
        &["SendMessage", "SubscribeToTask"],
    );
}

#[test]
fn sdk_grpc_task_get_list_cancel() {
    over_sdk_grpc(
        "call_cli sdk_grpc_task_get_list_cancel",
        task_get_list_cancel,
        &["SendMessage", "GetTask", "ListTasks", "CancelTask"],
    );
}
