//! `ferry bench`'s connection modes against a real `ferry serve`: `fan-out` holds streams
//! over pulse tasks (a connection each, or sharing HTTP/2 connections) and sees every chunk
//! arrive in order, `idle` holds keep-alive connections the server keeps serving; both read
//! the server's memory from its process id.
//!
//! The bench runs for its `--duration` in real time (it measures a server over real time);
//! the test waits for it to exit, and asserts nothing that depends on how fast it ran.

mod support;

use serde_json::Value;
use std::time::Duration;
use support::{Server, ferry, run_with_timeout, text};

const LIMIT: Duration = Duration::from_secs(120);

fn bench_json(server: &Server, args: &[&str]) -> Value {
    let url = format!("{}/jsonrpc", server.bound_url());
    let pid = server.pid().to_string();
    let mut cmd = ferry();
    cmd.args(["bench", "--url", &url, "--pid", &pid, "--json"])
        .args(args);
    let out = run_with_timeout(&mut cmd, None, LIMIT);
    assert!(
        out.status.success(),
        "ferry bench {args:?} failed:\n{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {}", text(&out.stdout)))
}

/// Runs `fan-out` (40 streams over 4 tasks) with `transport`'s flags and checks that every
/// stream got every chunk emitted after it joined; the bench's report.
fn fan_out_delivers_every_chunk(transport: &[&str]) -> Value {
    let server = Server::start(["--agent", "conformance", "--bind", "127.0.0.1:0"]);
    let mut args = vec![
        "--mode",
        "fan-out",
        "--streams",
        "40",
        "--tasks",
        "4",
        "--interval-ms",
        "100",
        // Six seconds from the first subscription to the task's end (a second of ramp,
        // fifty chunks): room for 36 subscriptions on a busy machine.
        "--duration",
        "5",
    ];
    args.extend_from_slice(transport);
    let got = bench_json(&server, &args);
    assert_eq!(got["streams"], 40, "{got}");
    assert_eq!(got["chunksPerTask"], 50, "{got}");
    assert_eq!(got["failedStreams"], 0, "{got}");
    // Every stream got every chunk emitted after it joined. How many joined before the first
    // chunk depends on how fast 40 streams open, so only this much is fixed: the 4 streams
    // that started the tasks joined before any chunk and expect all 50.
    let expected = got["expected"].as_u64().unwrap_or(0);
    assert!((200..=2000).contains(&expected), "{got}");
    assert_eq!(got["delivered"], expected, "{got}");
    assert!(
        got["fanOutP99Ms"].as_f64().is_some_and(|ms| ms > 0.0),
        "{got}"
    );
    assert!(
        got["serverRssPeakKiB"].as_u64().is_some_and(|kib| kib > 0),
        "{got}"
    );
    got
}

#[test]
fn fan_out_delivers_every_chunk_to_every_stream() {
    let got = fan_out_delivers_every_chunk(&[]);
    assert_eq!(got["http"], "HTTP/1.1", "{got}");
    assert_eq!(got["connections"], 40, "{got}");
}

#[test]
fn fan_out_over_shared_http2_connections_delivers_every_chunk() {
    let got = fan_out_delivers_every_chunk(&["--http2", "--connections", "3"]);
    assert_eq!(got["http"], "HTTP/2", "{got}");
    assert_eq!(got["connections"], 3, "{got}");
}

#[test]
fn a_malformed_pulse_is_rejected_saying_why() {
    let server = Server::start(["--agent", "conformance", "--bind", "127.0.0.1:0"]);
    let out = run_with_timeout(
        ferry().args([
            "send",
            &server.bound_url(),
            "every second",
            "--message-id",
            "ferry-pulse-x",
            "-o",
            "json",
        ]),
        None,
        LIMIT,
    );
    let shown = text(&out.stdout);
    assert!(
        shown.contains("TASK_STATE_REJECTED"),
        "{shown}\n{}",
        text(&out.stderr)
    );
    assert!(shown.contains("DELAY_MS INTERVAL_MS COUNT"), "{shown}");
}

#[test]
fn idle_connections_stay_served() {
    // The server closes connections idle past its header timeout: far beyond this run.
    let server = Server::start([
        "--agent",
        "echo",
        "--bind",
        "127.0.0.1:0",
        "--header-timeout",
        "3600",
    ]);
    let got = bench_json(
        &server,
        &["--mode", "idle", "--connections", "200", "--duration", "1"],
    );
    assert_eq!(got["opened"], 200, "{got}");
    assert_eq!(got["aliveAfterHold"], 200, "{got}");
    assert!(
        got["serverRssPeakKiB"].as_u64().is_some_and(|kib| kib > 0),
        "{got}"
    );
}
