//! Interop with the official A2A Python SDK: `a2a-sdk` 1.3.0 drives a real `ferry serve`.
//!
//! Each test starts the `ferry` binary built by cargo (`serve --agent … --bind 127.0.0.1:0`),
//! waits for the line `agent card: http://127.0.0.1:PORT/.well-known/agent-card.json` on its
//! stdout, then runs `interop/python/interop_client.py` against that server. The script uses
//! the SDK's own card resolver and client factory, restricted to one protocol binding, and
//! asserts on every response (see its module docstring for the checks). Three scenarios run
//! over each of the three bindings the card declares: JSON-RPC, HTTP+JSON and gRPC (the SDK's
//! `grpc.aio` transport over a plaintext HTTP/2 channel to the card's `GRPC` interface,
//! `127.0.0.1:PORT`, the same port as HTTP):
//!
//! | scenario | agent         | what it proves                                                        |
//! |----------|---------------|-----------------------------------------------------------------------|
//! | `echo`   | `echo`        | blocking SendMessage with text + data parts → COMPLETED, echoed artifact |
//! | `turns`  | `conformance` | three streaming turns on one task: INPUT_REQUIRED ×2, then COMPLETED  |
//! | `tasks`  | `conformance` | GetTask, ListTasks, SubscribeToTask from a second client, CancelTask, typed errors |
//! | `push`   | `echo`        | a push config inline with a send; Create, Get, List (no secrets shown), Delete ×2 |
//!
//! `turns_over_grpc` is the official Python SDK's gRPC client streaming a multi-turn
//! conversation from ferry. Over gRPC the script observes the calls with a channel
//! interceptor instead of the httpx hook (only the card may come over HTTP), and checks the
//! status code under each typed error as well.
//!
//! Every scenario also runs with the server's tasks in SQLite (`--store sqlite:…`, a fresh
//! file) and in PostgreSQL (a fresh schema of the machine's server, dropped afterwards; the
//! same skip-or-fail rule when it is not there).
//!
//! The Python interpreter is `$FERRY_PYTHON` if set, else `<workspace>/.venv/bin/python`
//! (`scripts/test.sh` creates that venv from `interop/python/requirements.txt`). If it is
//! missing or cannot `import a2a`, the tests fail when `CI=true` and are skipped with a loud
//! `SKIPPED:` message on stderr otherwise.

mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;
use support::{PgSchema, Server, output_with_timeout, python_or_skip, scratch_dir, workspace_root};

/// What the interpreter must be able to import for these tests.
const PYTHON_IMPORTS: &str = "a2a.client, a2a.types.a2a_pb2";
/// What it must import as well for the gRPC binding (the SDK's `grpc` extra).
const GRPC_IMPORTS: &str = "grpc.aio, a2a.client.transports.grpc";
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
    /// gRPC over cleartext HTTP/2, on the HTTP port.
    Grpc,
}

impl Binding {
    /// The card's `protocolBinding` value, passed to the script as `--binding`.
    fn name(self) -> &'static str {
        match self {
            Binding::JsonRpc => "JSONRPC",
            Binding::Rest => "HTTP+JSON",
            Binding::Grpc => "GRPC",
        }
    }

    /// What the interpreter must import to run a scenario over this binding.
    fn python_imports(self) -> String {
        match self {
            Binding::JsonRpc | Binding::Rest => PYTHON_IMPORTS.to_owned(),
            Binding::Grpc => format!("{PYTHON_IMPORTS}, {GRPC_IMPORTS}"),
        }
    }
}

/// Starts the server for `agent`, runs `scenario` over `binding` with the Python SDK, and
/// asserts the script exits 0 (printing its output and the server's on failure).
fn run_scenario(scenario: &str, agent: Agent, binding: Binding) {
    run_scenario_on(scenario, agent, binding, Store::Memory);
}

/// Where the server of a scenario keeps its tasks.
#[derive(Debug, Clone, Copy)]
enum Store {
    /// The default.
    Memory,
    /// A fresh SQLite file.
    Sqlite,
    /// A fresh schema in the machine's PostgreSQL.
    Postgres,
}

/// [`run_scenario`] with the server keeping its tasks in `store`.
fn run_scenario_on(scenario: &str, agent: Agent, binding: Binding, store: Store) {
    let test = format!("interop_python {scenario}/{}/{store:?}", binding.name());
    let Some(python) = python_or_skip(&test, &binding.python_imports()) else {
        return;
    };
    let mut args = vec![
        "--agent".to_owned(),
        agent.flag().to_owned(),
        "--bind".to_owned(),
        "127.0.0.1:0".to_owned(),
    ];
    // Kept until the server is gone.
    let mut _schema = None;
    let mut _dir = None;
    match store {
        Store::Memory => {}
        Store::Sqlite => {
            let dir = scratch_dir("interop-sqlite");
            args.extend([
                "--store".to_owned(),
                format!("sqlite:{}", dir.join("tasks.db").display()),
            ]);
            _dir = Some(dir);
        }
        Store::Postgres => {
            let Some(schema) = PgSchema::create_or_skip(&test) else {
                return;
            };
            args.extend(["--store".to_owned(), schema.store_url()]);
            _schema = Some(schema);
        }
    }
    let root = workspace_root();
    let script: &Path = Path::new("interop/python/interop_client.py");
    assert!(
        root.join(script).is_file(),
        "{test}: missing {}",
        root.join(script).display()
    );

    let server = Server::start(&args);
    let (out, timed_out) = output_with_timeout(
        Command::new(&python)
            .arg(script)
            .args(["--base-url", &server.base_url])
            .args(["--binding", binding.name()])
            .args(["--scenario", scenario])
            .env("PYTHONUNBUFFERED", "1")
            .current_dir(&root),
        None,
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
            server.output(),
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

#[test]
fn echo_over_grpc() {
    run_scenario("echo", Agent::Echo, Binding::Grpc);
}

#[test]
fn turns_over_grpc() {
    run_scenario("turns", Agent::Conformance, Binding::Grpc);
}

#[test]
fn tasks_over_grpc() {
    run_scenario("tasks", Agent::Conformance, Binding::Grpc);
}

#[test]
fn push_over_jsonrpc() {
    run_scenario("push", Agent::Echo, Binding::JsonRpc);
}

#[test]
fn push_over_rest() {
    run_scenario("push", Agent::Echo, Binding::Rest);
}

#[test]
fn push_over_grpc() {
    run_scenario("push", Agent::Echo, Binding::Grpc);
}

/// The scenarios again with each durable store.
macro_rules! on_durable_stores {
    ($($name:ident: $scenario:literal, $agent:ident, $binding:ident;)+) => {$(
        mod $name {
            use super::{Agent, Binding, Store, run_scenario_on};

            #[test]
            fn sqlite() {
                run_scenario_on($scenario, Agent::$agent, Binding::$binding, Store::Sqlite);
            }

            #[test]
            fn postgres() {
                run_scenario_on($scenario, Agent::$agent, Binding::$binding, Store::Postgres);
            }
        }
    )+};
}

on_durable_stores! {
    echo_over_jsonrpc_stored: "echo", Echo, JsonRpc;
    echo_over_rest_stored: "echo", Echo, Rest;
    echo_over_grpc_stored: "echo", Echo, Grpc;
    turns_over_jsonrpc_stored: "turns", Conformance, JsonRpc;
    turns_over_rest_stored: "turns", Conformance, Rest;
    turns_over_grpc_stored: "turns", Conformance, Grpc;
    tasks_over_jsonrpc_stored: "tasks", Conformance, JsonRpc;
    tasks_over_rest_stored: "tasks", Conformance, Rest;
    tasks_over_grpc_stored: "tasks", Conformance, Grpc;
    push_over_rest_stored: "push", Echo, Rest;
}
