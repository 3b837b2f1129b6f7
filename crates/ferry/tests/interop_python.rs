//! Interop with the official A2A Python SDK: `a2a-sdk` 1.3.0 drives a real `ferry serve`.
//!
//! Each test starts the `ferry` binary built by cargo (`serve --agent … --bind 127.0.0.1:0`),
//! waits for the line `agent card: http://127.0.0.1:PORT/.well-known/agent-card.json` on its
//! stdout, then runs `interop/python/interop_client.py` against that server. The script uses
//! the SDK's own card resolver and client factory, restricted to one protocol binding, and
//! asserts on every response (see its module docstring for the checks). Three scenarios run
//! over both bindings the card declares:
//!
//! | scenario | agent         | what it proves                                                        |
//! |----------|---------------|-----------------------------------------------------------------------|
//! | `echo`   | `echo`        | blocking SendMessage with text + data parts → COMPLETED, echoed artifact |
//! | `turns`  | `conformance` | three streaming turns on one task: INPUT_REQUIRED ×2, then COMPLETED  |
//! | `tasks`  | `conformance` | GetTask, ListTasks, SubscribeToTask from a second client, CancelTask, typed errors |
//!
//! The Python interpreter is `$FERRY_PYTHON` if set, else `<workspace>/.venv/bin/python`
//! (`scripts/test.sh` creates that venv from `interop/python/requirements.txt`). If it is
//! missing or cannot `import a2a`, the tests fail when `CI=true` and are skipped with a loud
//! `SKIPPED:` message on stderr otherwise.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdout, Command, Output, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// Prefix of the stdout line `ferry serve` prints once it is listening.
const CARD_LINE_PREFIX: &str = "agent card: ";
/// Suffix of that line: the well-known agent card path.
const CARD_PATH: &str = "/.well-known/agent-card.json";
/// How long the server may take to print its card line.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// Hard limit for one run of the Python script (which has its own 20 s limit).
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(90);

/// The agent `ferry serve --agent` runs for a scenario.
#[derive(Debug, Clone, Copy)]
enum Agent {
    /// Echoes the received parts back as an artifact and completes.
    Echo,
    /// Implements the TCK messageId-prefix contract (`tck-input-required`, …).
    Conformance,
}

impl Agent {
    /// The value of `--agent`.
    fn flag(self) -> &'static str {
        match self {
            Agent::Echo => "echo",
            Agent::Conformance => "conformance",
        }
    }
}

/// The protocol binding the SDK client must use.
#[derive(Debug, Clone, Copy)]
enum Binding {
    /// JSON-RPC 2.0 over HTTP.
    JsonRpc,
    /// HTTP+JSON (the REST binding).
    Rest,
}

impl Binding {
    /// The card's `protocolBinding` value, passed to the script as `--binding`.
    fn name(self) -> &'static str {
        match self {
            Binding::JsonRpc => "JSONRPC",
            Binding::Rest => "HTTP+JSON",
        }
    }
}

/// The workspace root (`crates/ferry/../../`).
fn workspace_root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../"))
}

/// True when running in CI (`CI=true`), where a missing prerequisite is a failure.
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true"))
}

/// The Python interpreter to use, if it exists and can `import a2a`; otherwise the reason why not.
///
/// Checked once per test binary and shared by all tests.
fn python() -> &'static Result<PathBuf, String> {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let (python, source) = match std::env::var_os("FERRY_PYTHON") {
            Some(p) if !p.is_empty() => (PathBuf::from(p), "$FERRY_PYTHON"),
            _ => (
                workspace_root().join(".venv/bin/python"),
                "the workspace venv",
            ),
        };
        let probe = Command::new(&python)
            .args(["-c", "import a2a.client, a2a.types.a2a_pb2"])
            .stdin(Stdio::null())
            .output();
        match probe {
            Ok(out) if out.status.success() => Ok(python),
            Ok(out) => Err(format!(
                "{} ({source}) cannot import the a2a SDK: {}",
                python.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            )),
            Err(e) => Err(format!(
                "{} ({source}) cannot be run: {e}",
                python.display()
            )),
        }
    })
}

/// Returns the interpreter, or `None` after printing a `SKIPPED:` notice (panics instead in CI).
fn python_or_skip(test: &str) -> Option<PathBuf> {
    match python() {
        Ok(p) => Some(p.clone()),
        Err(why) if in_ci() => panic!(
            "{test}: Python interop prerequisite missing in CI: {why}. \
             Run scripts/test.sh (creates .venv from interop/python/requirements.txt) or set FERRY_PYTHON."
        ),
        Err(why) => {
            // Written to the real stderr handle, not with `eprintln!`, so that libtest's output
            // capture does not hide the notice of a "passing" test.
            let notice = format!(
                "\n==================== SKIPPED: {test} ====================\n\
                 SKIPPED: Python interop test not run: {why}.\n\
                 SKIPPED: create the venv with scripts/test.sh, or set FERRY_PYTHON to a python with a2a-sdk 1.3.0.\n\
                 ==========================================================\n"
            );
            // Nothing sensible to do if stderr itself is broken.
            let _ = std::io::stderr().lock().write_all(notice.as_bytes());
            None
        }
    }
}

/// Shared, growing copy of a child's output, for failure messages.
type Log = Arc<Mutex<String>>;

/// Appends a line to a log, tolerating a poisoned lock (a panicking reader thread).
fn push_line(log: &Log, line: &str) {
    let mut buf = log.lock().unwrap_or_else(|p| p.into_inner());
    buf.push_str(line);
    buf.push('\n');
}

/// Snapshot of a log.
fn read_log(log: &Log) -> String {
    log.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// A running `ferry serve`; killed (and reaped) on drop.
struct Server {
    /// The server process.
    child: Child,
    /// `http://127.0.0.1:PORT`, derived from the card line.
    base_url: String,
    /// Everything the server wrote to stdout and stderr so far.
    log: Log,
}

impl Drop for Server {
    fn drop(&mut self) {
        // Errors are irrelevant here: the process may already have exited.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Extracts the base URL from a `agent card: http://127.0.0.1:PORT/.well-known/agent-card.json` line.
fn base_url_from_card_line(line: &str) -> Option<String> {
    let url = line.trim().strip_prefix(CARD_LINE_PREFIX)?.trim();
    let base = url.strip_suffix(CARD_PATH)?;
    base.starts_with("http://").then(|| base.to_owned())
}

/// Starts `ferry serve --agent <agent> --bind 127.0.0.1:0` and waits for its card line.
fn start_server(agent: Agent) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--agent", agent.flag(), "--bind", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the ferry binary");
    let log: Log = Arc::default();
    let stdout = child.stdout.take().expect("server stdout is piped");
    let stderr = child.stderr.take().expect("server stderr is piped");
    let lines = forward_stdout(stdout, Arc::clone(&log));
    drain_stderr(stderr, Arc::clone(&log));

    // Wrap the child now so it is killed even if we panic below.
    let mut server = Server {
        child,
        base_url: String::new(),
        log,
    };
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => {
                if let Some(base) = base_url_from_card_line(&line) {
                    server.base_url = base;
                    return server;
                }
            }
            Err(RecvTimeoutError::Timeout) => panic!(
                "ferry serve --agent {} printed no `{CARD_LINE_PREFIX}…{CARD_PATH}` line within {STARTUP_TIMEOUT:?}; output:\n{}",
                agent.flag(),
                read_log(&server.log)
            ),
            Err(RecvTimeoutError::Disconnected) => {
                let status = server.child.wait().expect("wait for the exited server");
                // Give the stderr reader a moment to collect the last lines.
                thread::sleep(Duration::from_millis(200));
                panic!(
                    "ferry serve --agent {} exited ({status}) before printing its card line; output:\n{}",
                    agent.flag(),
                    read_log(&server.log)
                );
            }
        }
    }
}

/// Calls `f` with every line of `pipe` (lossily decoded, without the line ending) until EOF.
fn for_each_line(pipe: impl Read, mut f: impl FnMut(String)) {
    let mut reader = BufReader::new(pipe);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf);
                f(line.trim_end_matches(['\r', '\n']).to_owned());
            }
        }
    }
}

/// Reads the server's stdout on a thread: every line goes to the log and to the returned channel.
///
/// The thread keeps draining after the card line is found (the receiver may be gone), so the
/// server never blocks on a full pipe.
fn forward_stdout(stdout: ChildStdout, log: Log) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for_each_line(stdout, |line| {
            push_line(&log, &line);
            // The receiver is dropped once the card line is seen; keep draining anyway.
            let _ = tx.send(line);
        });
    });
    rx
}

/// Reads the server's stderr into the log on a thread, so the pipe never fills up.
fn drain_stderr(stderr: ChildStderr, log: Log) {
    thread::spawn(move || for_each_line(stderr, |line| push_line(&log, &line)));
}

/// Runs `cmd` to completion, killing it after `timeout`; returns its output and whether it timed out.
fn output_with_timeout(cmd: &mut Command, timeout: Duration) -> (Output, bool) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the python interop script");
    let stdout = read_to_end_on_thread(child.stdout.take().expect("script stdout is piped"));
    let stderr = read_to_end_on_thread(child.stderr.take().expect("script stderr is piped"));
    let deadline = Instant::now() + timeout;
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("poll the python interop script") {
            break status;
        }
        if Instant::now() >= deadline {
            timed_out = true;
            // It may have exited in between; either way wait() reaps it.
            let _ = child.kill();
            break child
                .wait()
                .expect("wait for the killed python interop script");
        }
        thread::sleep(Duration::from_millis(50));
    };
    let output = Output {
        status,
        stdout: stdout.join().expect("script stdout reader thread panicked"),
        stderr: stderr.join().expect("script stderr reader thread panicked"),
    };
    (output, timed_out)
}

/// Reads a pipe to its end on a thread.
fn read_to_end_on_thread(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        // A read error just truncates the diagnostic output.
        let _ = pipe.read_to_end(&mut buf);
        buf
    })
}

/// Starts the server for `agent`, runs `scenario` over `binding` with the Python SDK, and
/// asserts the script exits 0 (printing its output and the server's on failure).
fn run_scenario(scenario: &str, agent: Agent, binding: Binding) {
    let test = format!("interop_python {scenario}/{}", binding.name());
    let Some(python) = python_or_skip(&test) else {
        return;
    };
    let root = workspace_root();
    let script: &Path = Path::new("interop/python/interop_client.py");
    assert!(
        root.join(script).is_file(),
        "{test}: missing {}",
        root.join(script).display()
    );

    let server = start_server(agent);
    let (out, timed_out) = output_with_timeout(
        Command::new(&python)
            .arg(script)
            .args(["--base-url", &server.base_url])
            .args(["--binding", binding.name()])
            .args(["--scenario", scenario])
            .env("PYTHONUNBUFFERED", "1")
            .current_dir(&root),
        SCRIPT_TIMEOUT,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if timed_out || !out.status.success() {
        panic!(
            "{test} failed ({}) against {}\n\
             ---- python stdout ----\n{stdout}\n\
             ---- python stderr ----\n{stderr}\n\
             ---- ferry serve --agent {} output ----\n{}",
            if timed_out {
                format!("killed after {SCRIPT_TIMEOUT:?}")
            } else {
                out.status.to_string()
            },
            server.base_url,
            agent.flag(),
            read_log(&server.log),
        );
    }
    // Visible with `cargo test -- --nocapture`.
    println!("{stdout}");
}

#[test]
fn echo_over_jsonrpc() {
    run_scenario("echo", Agent::Echo, Binding::JsonRpc);
}

#[test]
fn echo_over_rest() {
    run_scenario("echo", Agent::Echo, Binding::Rest);
}

#[test]
fn turns_over_jsonrpc() {
    run_scenario("turns", Agent::Conformance, Binding::JsonRpc);
}

#[test]
fn turns_over_rest() {
    run_scenario("turns", Agent::Conformance, Binding::Rest);
}

#[test]
fn tasks_over_jsonrpc() {
    run_scenario("tasks", Agent::Conformance, Binding::JsonRpc);
}

#[test]
fn tasks_over_rest() {
    run_scenario("tasks", Agent::Conformance, Binding::Rest);
}
