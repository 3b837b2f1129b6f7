//! One trace across processes: `ferry send`, `ferry serve` and a `ferry serve --proxy` in
//! between export their spans over OTLP/HTTP (JSON) to a receiver in the test
//! (`support::otlp`), each under its own `OTEL_SERVICE_NAME`, and the spans must form one
//! trace: the client's call is the parent of the server's request span, the request span
//! of its operation span, and so on down to the agent's turn and the calls the agent makes.
//!
//! The servers are stopped with SIGTERM, which makes them export their last spans before
//! they exit; the test then waits on the receiver's channel until the spans of every process
//! have arrived.
//!
//! | test | hops | what it proves |
//! |---|---|---|
//! | `client_and_server_share_one_trace_over_every_binding` | client → upstream | over JSON-RPC, REST and gRPC the client's `a2a.client` span (under the `ferry.send` root) is the parent of the upstream's `request` span; `a2a.operation` and `a2a.turn` hang below it |
//! | `a_proxy_passes_the_trace_on` | client → proxy → upstream | one trace id for the client's call, the proxy's request, the proxy's own call and the upstream's request, parents chaining in that order |
//! | `ferry_mcp_exports_one_span_per_tool_call` | MCP client → `ferry mcp` (stdio) | each `tools/call` is one exported `mcp.tool` span carrying the tool's name |

mod support;

use std::collections::HashSet;
use std::process::Command;
use std::time::Duration;
use support::otlp::{ExportedSpan, OtlpReceiver, describe, stop_gracefully};
use support::{Server, ferry, run_with_timeout, text};

/// Hard limit for one `ferry send`.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the spans may take to arrive once every process has exited.
const SPANS_TIMEOUT: Duration = Duration::from_secs(30);

/// `ferry` with only the OpenTelemetry settings this test gives it: the developer's OTEL_*
/// variables are removed, the service is named `service`.
fn traced_ferry(service: &str) -> Command {
    let mut cmd = ferry();
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("OTEL_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("OTEL_SERVICE_NAME", service);
    cmd
}

/// `ferry serve <args> --otlp-endpoint <receiver>` as `service`.
fn serve(service: &str, receiver: &OtlpReceiver, args: &[&str]) -> Server {
    let mut cmd = traced_ferry(service);
    cmd.arg("serve")
        .args(args)
        .args(["--bind", "127.0.0.1:0", "--otlp-endpoint", &receiver.url]);
    Server::spawn(cmd)
}

/// `ferry send <url> hello --otlp-endpoint <receiver> [extra]` as `client`; must succeed.
fn send(receiver: &OtlpReceiver, url: &str, extra: &[&str]) {
    let mut cmd = traced_ferry("client");
    cmd.args(["send", url, "hello", "-o", "json", "--timeout", "30"])
        .args(["--otlp-endpoint", &receiver.url])
        .args(extra);
    let out = run_with_timeout(&mut cmd, None, RUN_TIMEOUT);
    assert!(
        out.status.success(),
        "ferry send {extra:?}: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(text(&out.stdout).contains("hello"), "{}", text(&out.stdout));
}

/// Stops `server` with SIGTERM; it must exit 0.
fn stop(server: &mut Server) {
    let status = stop_gracefully(server);
    assert!(status.success(), "{status}; output:\n{}", server.output());
}

/// The spans of `service` named `name`.
fn named<'s>(
    spans: &'s [ExportedSpan],
    service: &'s str,
    name: &'s str,
) -> impl Iterator<Item = &'s ExportedSpan> {
    spans
        .iter()
        .filter(move |s| s.service == service && s.name == name)
}

/// The span of `service` whose parent is `parent`: the one span the next hop made for the
/// request `parent` sent. Panics unless there is exactly one, in the same trace.
fn child_in<'s>(
    spans: &'s [ExportedSpan],
    service: &str,
    name: &str,
    parent: &ExportedSpan,
) -> &'s ExportedSpan {
    let children: Vec<&ExportedSpan> = spans
        .iter()
        .filter(|s| s.service == service && s.name == name)
        .filter(|s| s.parent_span_id == parent.span_id)
        .collect();
    assert_eq!(
        children.len(),
        1,
        "one {service} {name} span under {} {} ({}); spans:\n{}",
        parent.service,
        parent.name,
        parent.span_id,
        describe(spans)
    );
    let child = children[0];
    assert_eq!(child.trace_id, parent.trace_id, "{child:?} / {parent:?}");
    child
}

/// True when `span` is `ancestor` or below it (parents followed within the trace).
fn descends_from(spans: &[ExportedSpan], span: &ExportedSpan, ancestor: &ExportedSpan) -> bool {
    let mut seen = HashSet::new();
    let mut current = span;
    loop {
        if current.span_id == ancestor.span_id && current.trace_id == ancestor.trace_id {
            return true;
        }
        if !seen.insert(current.span_id.clone()) {
            return false;
        }
        let parent = spans
            .iter()
            .find(|s| s.trace_id == current.trace_id && s.span_id == current.parent_span_id);
        match parent {
            Some(p) => current = p,
            None => return false,
        }
    }
}

/// The agent's side of one request, below its `request` span: one `a2a.operation` span of
/// `operation` and, below it, the turn of `agent`.
fn assert_served(spans: &[ExportedSpan], request: &ExportedSpan, operation: &str, agent: &str) {
    let op = child_in(spans, &request.service, "a2a.operation", request);
    assert_eq!(op.attr("operation"), Some(operation), "{op:?}");
    let turn = named(spans, &request.service, "a2a.turn")
        .find(|t| descends_from(spans, t, op))
        .unwrap_or_else(|| panic!("no a2a.turn below {op:?}; spans:\n{}", describe(spans)));
    assert_eq!(turn.attr("agent"), Some(agent), "{turn:?}");
    assert!(turn.attr("task").is_some_and(|t| !t.is_empty()), "{turn:?}");
    assert!(
        turn.attr("context").is_some_and(|c| !c.is_empty()),
        "{turn:?}"
    );
}

#[cfg(unix)]
#[test]
fn client_and_server_share_one_trace_over_every_binding() {
    let mut receiver = OtlpReceiver::start();
    let mut upstream = serve("upstream", &receiver, &["--agent", "echo"]);
    let bindings = ["jsonrpc", "rest", "grpc"];
    for binding in bindings {
        send(&receiver, &upstream.base_url, &["--binding", binding]);
    }
    stop(&mut upstream);

    let calls = |spans: &[ExportedSpan]| {
        named(spans, "client", "a2a.client")
            .filter(|s| s.attr("operation") == Some("SendMessage"))
            .count()
    };
    let posts = |spans: &[ExportedSpan]| {
        named(spans, "upstream", "request")
            .filter(|s| s.attr("method") == Some("POST"))
            .count()
    };
    let spans = receiver.spans_until(SPANS_TIMEOUT, |s| calls(s) >= 3 && posts(s) >= 3);

    let mut traces = HashSet::new();
    for root in named(spans, "client", "ferry.send") {
        assert_eq!(
            root.parent_span_id, "",
            "the command's span is a root: {root:?}"
        );
        let call = child_in(spans, "client", "a2a.client", root);
        assert_eq!(call.attr("operation"), Some("SendMessage"), "{call:?}");
        assert_eq!(call.attr("server.address"), Some("127.0.0.1"), "{call:?}");
        let request = child_in(spans, "upstream", "request", call);
        assert_eq!(request.attr("method"), Some("POST"), "{request:?}");
        assert_served(spans, request, "SendMessage", "echo");
        traces.insert((
            call.attr("binding").map(str::to_owned),
            root.trace_id.clone(),
        ));
    }
    let bindings_seen: HashSet<_> = traces.iter().map(|(b, _)| b.clone()).collect();
    assert_eq!(
        bindings_seen.len(),
        bindings.len(),
        "one traced call per binding: {traces:?}; spans:\n{}",
        describe(spans)
    );
    let trace_ids: HashSet<_> = traces.iter().map(|(_, t)| t).collect();
    assert_eq!(
        trace_ids.len(),
        bindings.len(),
        "each command its own trace"
    );
}

#[cfg(unix)]
#[test]
fn a_proxy_passes_the_trace_on() {
    let mut receiver = OtlpReceiver::start();
    let mut upstream = serve("upstream", &receiver, &["--agent", "echo"]);
    let mut proxy = serve("proxy", &receiver, &["--proxy", &upstream.base_url]);
    send(&receiver, &proxy.base_url, &[]);
    stop(&mut proxy);
    stop(&mut upstream);

    let client_call = |spans: &[ExportedSpan]| {
        named(spans, "client", "a2a.client")
            .find(|s| s.attr("operation") == Some("SendMessage"))
            .cloned()
    };
    let spans = receiver.spans_until(SPANS_TIMEOUT, |s| {
        // Every process has exported the spans of the call by the time it has exited; wait
        // for the last of them, the upstream's request made under the proxy's call.
        let Some(call) = client_call(s) else {
            return false;
        };
        named(s, "upstream", "request").any(|r| r.trace_id == call.trace_id)
    });
    let call = client_call(spans).expect("the client's call");
    let root = named(spans, "client", "ferry.send")
        .next()
        .expect("the command's span");
    assert_eq!(call.parent_span_id, root.span_id, "{call:?} under {root:?}");

    // client → proxy server
    let proxied = child_in(spans, "proxy", "request", &call);
    assert_eq!(proxied.attr("method"), Some("POST"), "{proxied:?}");
    // proxy server → proxy client: the call the proxy makes in the turn of that request
    let onward: Vec<&ExportedSpan> = named(spans, "proxy", "a2a.client")
        .filter(|c| descends_from(spans, c, proxied))
        .collect();
    assert!(
        !onward.is_empty(),
        "the proxy's call to the upstream is below its request span; spans:\n{}",
        describe(spans)
    );
    // proxy client → upstream server
    let upstream_requests: Vec<&ExportedSpan> = onward
        .iter()
        .flat_map(|c| {
            named(spans, "upstream", "request").filter(move |r| r.parent_span_id == c.span_id)
        })
        .collect();
    assert!(
        !upstream_requests.is_empty(),
        "the upstream's request span is a child of the proxy's call; spans:\n{}",
        describe(spans)
    );
    for request in &upstream_requests {
        assert_eq!(request.attr("method"), Some("POST"), "{request:?}");
    }
    // One trace for the four spans.
    let trace: HashSet<&str> = [&call, proxied, onward[0], upstream_requests[0]]
        .iter()
        .map(|s| s.trace_id.as_str())
        .collect();
    assert_eq!(trace.len(), 1, "one trace id: {trace:?}");
    // The proxy's own request is served like any other: an operation span and a turn.
    let operation = child_in(spans, "proxy", "a2a.operation", proxied);
    assert_eq!(
        operation.attr("operation"),
        Some("SendMessage"),
        "{operation:?}"
    );
}

/// `ferry mcp` over stdio, driven line by line as a coding agent does: each `tools/call`
/// becomes one `mcp.tool` span naming the tool, exported when the client closes stdin.
#[test]
fn ferry_mcp_exports_one_span_per_tool_call() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;

    let mut receiver = OtlpReceiver::start();
    let mut cmd = traced_ferry("mcp");
    cmd.args(["mcp", "--otlp-endpoint", &receiver.url])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = support::Running(cmd.spawn().expect("spawn ferry mcp"));
    let mut stdin = child.0.stdin.take().expect("stdin is piped");
    let mut stdout = BufReader::new(child.0.stdout.take().expect("stdout is piped"));
    // Sends one message and, for a request, reads lines until its answer arrives.
    let mut exchange = |message: serde_json::Value| -> Option<serde_json::Value> {
        writeln!(stdin, "{message}").expect("write to ferry mcp");
        stdin.flush().expect("flush");
        let id = message.get("id")?.clone();
        loop {
            let mut line = String::new();
            let read = stdout.read_line(&mut line).expect("read from ferry mcp");
            assert!(
                read > 0,
                "ferry mcp closed stdout before answering {message}"
            );
            let answer: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
            if answer.get("id") == Some(&id) {
                return Some(answer);
            }
        }
    };
    let init = exchange(serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "trace_cli", "version": "1"}}
    }))
    .expect("an answer");
    assert!(init.get("result").is_some(), "{init}");
    exchange(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let status = exchange(serde_json::json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "forms_status", "arguments": {}}
    }))
    .expect("an answer");
    assert!(status.get("result").is_some(), "{status}");
    drop(stdin);
    let exit = child.0.wait().expect("wait for ferry mcp");
    assert!(exit.success(), "ferry mcp exited with {exit}");

    let spans = receiver.spans_until(SPANS_TIMEOUT, |s| named(s, "mcp", "mcp.tool").count() > 0);
    let tools: Vec<&ExportedSpan> = named(spans, "mcp", "mcp.tool").collect();
    assert_eq!(
        tools.len(),
        1,
        "one call, one span; spans:\n{}",
        describe(spans)
    );
    assert_eq!(
        tools[0].attr("tool"),
        Some("forms_status"),
        "{:?}",
        tools[0]
    );
}
