//! Prometheus metrics: requests by method and outcome, latency histograms, open streams, tasks
//! by state, refusals by reason. Counters are atomics (no lock on the request path); tasks by
//! state are counted when scraped.

use crate::histogram::Histogram;
use ferry_proto::{Operation, TaskState};
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// What a request was, for the metrics (set by the bindings on the response).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CallLabel {
    /// What it asked for.
    pub method: Method,
    /// True when it succeeded (an A2A error answer is not a success).
    pub ok: bool,
    /// True when it spoke A2A v0.3 (a v0.3 method name).
    pub v03: bool,
}

/// What the metrics label a request by: its operation (named as in the operation table),
/// the agent card, or anything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    /// An A2A operation.
    Operation(Operation),
    /// The agent card.
    AgentCard,
    /// Anything that did not name an operation (bad JSON, unknown method or path, refusals).
    Other,
}

/// Labels in the order they are rendered: the operations, the card, the rest.
const LABELS: usize = Operation::ALL.len() + 2;

impl Method {
    fn index(self) -> usize {
        match self {
            Method::Operation(op) => Operation::ALL
                .iter()
                .position(|o| *o == op)
                .unwrap_or(LABELS - 1),
            Method::AgentCard => LABELS - 2,
            Method::Other => LABELS - 1,
        }
    }

    fn at(index: usize) -> Method {
        match Operation::ALL.get(index) {
            Some(op) => Method::Operation(*op),
            None if index == LABELS - 2 => Method::AgentCard,
            None => Method::Other,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Method::Operation(op) => op.name(),
            Method::AgentCard => "AgentCard",
            Method::Other => "other",
        }
    }
}

/// Reasons a request is refused before or instead of being served.
pub(crate) const REFUSAL_REASONS: [&str; 9] = [
    "HOST_NOT_ALLOWED",
    "ORIGIN_NOT_ALLOWED",
    "UNAUTHENTICATED",
    "RATE_LIMITED",
    "TOO_MANY_REQUESTS_IN_FLIGHT",
    "TOO_MANY_STREAMS",
    "REQUEST_TIMEOUT",
    "SHUTTING_DOWN",
    "TASK_STORE_FULL",
];

/// The server's counters.
#[derive(Debug, Default)]
pub(crate) struct Metrics {
    requests: [[AtomicU64; 2]; LABELS],
    latency: [Histogram; LABELS],
    refusals: [AtomicU64; REFUSAL_REASONS.len()],
    /// Operation requests by protocol version: v1.0, v0.3.
    versions: [AtomicU64; 2],
}

impl Metrics {
    /// Counts one answered request.
    pub(crate) fn record(&self, label: CallLabel, elapsed: Duration) {
        let m = label.method.index();
        self.requests[m][usize::from(label.ok)].fetch_add(1, Ordering::Relaxed);
        if let Method::Operation(_) = label.method {
            self.versions[usize::from(label.v03)].fetch_add(1, Ordering::Relaxed);
        }
        self.latency[m].observe(elapsed);
    }

    /// Counts one refusal.
    pub(crate) fn refused(&self, reason: &str) {
        if let Some(i) = REFUSAL_REASONS.iter().position(|r| *r == reason) {
            self.refusals[i].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The Prometheus text exposition.
    pub(crate) fn render(
        &self,
        open_streams: usize,
        tasks_by_state: &[(TaskState, u64)],
        live_tasks: usize,
    ) -> String {
        let mut out = String::with_capacity(4096);
        self.render_requests(&mut out);
        self.render_versions(&mut out);
        self.render_latency(&mut out);
        render_gauges(&mut out, open_streams, tasks_by_state, live_tasks);
        self.render_refusals(&mut out);
        out
    }

    fn render_requests(&self, out: &mut String) {
        family(
            out,
            "ferry_requests_total",
            "counter",
            "A2A requests answered, by operation and outcome.",
        );
        for i in 0..LABELS {
            let m = Method::at(i);
            for (ok, outcome) in [(1, "ok"), (0, "error")] {
                let n = self.requests[i][ok].load(Ordering::Relaxed);
                let _ = writeln!(
                    out,
                    "ferry_requests_total{{method=\"{}\",outcome=\"{outcome}\"}} {n}",
                    m.name()
                );
            }
        }
    }

    fn render_versions(&self, out: &mut String) {
        family(
            out,
            "ferry_requests_by_version_total",
            "counter",
            "A2A operation requests answered, by the protocol version they spoke.",
        );
        for (i, version) in [ferry_proto::PROTOCOL_VERSION, ferry_proto::v03::VERSION]
            .iter()
            .enumerate()
        {
            let n = self.versions[i].load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "ferry_requests_by_version_total{{version=\"{version}\"}} {n}"
            );
        }
    }

    fn render_latency(&self, out: &mut String) {
        family(
            out,
            "ferry_request_duration_seconds",
            "histogram",
            "Time to answer (for streams: to the first event).",
        );
        for i in 0..LABELS {
            let labels = format!("method=\"{}\"", Method::at(i).name());
            self.latency[i].render(out, "ferry_request_duration_seconds", &labels);
        }
    }

    fn render_refusals(&self, out: &mut String) {
        family(
            out,
            "ferry_refusals_total",
            "counter",
            "Requests refused, by reason.",
        );
        for (i, reason) in REFUSAL_REASONS.iter().enumerate() {
            let _ = writeln!(
                out,
                "ferry_refusals_total{{reason=\"{reason}\"}} {}",
                self.refusals[i].load(Ordering::Relaxed)
            );
        }
    }
}

/// The gauges: open streams, tasks by state, live tasks.
fn render_gauges(
    out: &mut String,
    open_streams: usize,
    tasks_by_state: &[(TaskState, u64)],
    live_tasks: usize,
) {
    family(out, "ferry_open_streams", "gauge", "SSE streams open now.");
    let _ = writeln!(out, "ferry_open_streams {open_streams}");
    family(out, "ferry_tasks", "gauge", "Tasks in the store, by state.");
    for state in TaskState::ALL.iter().skip(1) {
        let n = tasks_by_state
            .iter()
            .find(|(s, _)| s == state)
            .map_or(0, |(_, n)| *n);
        let _ = writeln!(out, "ferry_tasks{{state=\"{}\"}} {n}", state.as_str());
    }
    family(
        out,
        "ferry_live_tasks",
        "gauge",
        "Tasks followed in this process now (a running turn, a subscriber or a waiting sender).",
    );
    let _ = writeln!(out, "ferry_live_tasks {live_tasks}");
}

/// The `# HELP` and `# TYPE` lines that open a metric family.
fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counts_and_cumulative_buckets() {
        let m = Metrics::default();
        m.record(
            CallLabel {
                method: Method::Operation(Operation::SendMessage),
                ok: true,
                v03: false,
            },
            Duration::from_micros(300),
        );
        m.record(
            CallLabel {
                method: Method::Operation(Operation::SendMessage),
                ok: true,
                v03: false,
            },
            Duration::from_millis(3),
        );
        m.record(
            CallLabel {
                method: Method::Operation(Operation::GetTask),
                ok: false,
                v03: false,
            },
            Duration::from_millis(20),
        );
        m.refused("RATE_LIMITED");
        let text = m.render(2, &[(TaskState::Completed, 3)], 1);
        assert!(
            text.contains("ferry_requests_total{method=\"SendMessage\",outcome=\"ok\"} 2"),
            "{text}"
        );
        assert!(
            text.contains("ferry_requests_total{method=\"GetTask\",outcome=\"error\"} 1"),
            "{text}"
        );
        assert!(
            text.contains(
                "ferry_request_duration_seconds_bucket{method=\"SendMessage\",le=\"0.0005\"} 1"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "ferry_request_duration_seconds_bucket{method=\"SendMessage\",le=\"0.005\"} 2"
            ),
            "{text}"
        );
        assert!(
            text.contains("ferry_request_duration_seconds_count{method=\"SendMessage\"} 2"),
            "{text}"
        );
        assert!(text.contains("ferry_open_streams 2"), "{text}");
        assert!(
            text.contains("ferry_refusals_total{reason=\"RATE_LIMITED\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("ferry_tasks{state=\"TASK_STATE_WORKING\"} 0"),
            "{text}"
        );
        assert!(
            text.contains("ferry_tasks{state=\"TASK_STATE_COMPLETED\"} 3"),
            "{text}"
        );
        assert!(text.contains("ferry_live_tasks 1"), "{text}");
    }
}
