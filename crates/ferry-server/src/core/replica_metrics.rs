//! What the replicas' work came to (leases, takeovers, refused writes, catch-ups, how late
//! notices are heard), for `/metrics`.

use crate::histogram::Histogram;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// What the replicas' work came to, for `/metrics`.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    leases: AtomicU64,
    takeovers: AtomicU64,
    catch_ups: AtomicU64,
    forwarded: AtomicU64,
    moved: AtomicU64,
    /// From a write's notice being sent to this replica hearing it.
    lag: Histogram,
}

impl Counters {
    /// A lease was taken for a follow-up or a cancel.
    pub(crate) fn leased(&self) {
        self.leases.fetch_add(1, Ordering::Relaxed);
    }

    /// A lease that ran out was taken over.
    pub(crate) fn took_over(&self) {
        self.takeovers.fetch_add(1, Ordering::Relaxed);
    }

    /// A notice of another replica's write was heard `late` after it was sent.
    pub(crate) fn heard(&self, late: Duration) {
        self.lag.observe(late);
    }

    /// A followed task was read again after another replica's write.
    pub(crate) fn caught_up(&self) {
        self.catch_ups.fetch_add(1, Ordering::Relaxed);
    }

    /// A request was forwarded to the replica that holds its conversation.
    pub(crate) fn forwarded(&self) {
        self.forwarded.fetch_add(1, Ordering::Relaxed);
    }

    /// A conversation held by a replica that is gone was taken over here (it starts afresh).
    pub(crate) fn moved(&self) {
        self.moved.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters as Prometheus text; `fenced`: writes the store refused because their
    /// lease was over.
    pub(crate) fn render(&self, out: &mut String, fenced: u64) {
        let rows = [
            (
                "ferry_replica_leases_taken_total",
                "Leases this replica took on tasks other replicas had written (follow-ups, cancels).",
                self.leases.load(Ordering::Relaxed),
            ),
            (
                "ferry_replica_takeovers_total",
                "Leases of other replicas (or this one) that ran out and were taken over, ending their tasks.",
                self.takeovers.load(Ordering::Relaxed),
            ),
            (
                "ferry_replica_fenced_writes_total",
                "Writes of this replica refused because another replica had taken their task over.",
                fenced,
            ),
            (
                "ferry_replica_catch_ups_total",
                "Followed tasks read again after another replica wrote them.",
                self.catch_ups.load(Ordering::Relaxed),
            ),
            (
                "ferry_replica_forwarded_total",
                "Requests forwarded to the replica that holds their conversation (forms agent, MCP).",
                self.forwarded.load(Ordering::Relaxed),
            ),
            (
                "ferry_replica_conversations_moved_total",
                "Conversations whose replica was gone, started afresh here.",
                self.moved.load(Ordering::Relaxed),
            ),
        ];
        for (name, help, value) in rows {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
            );
        }
        let name = "ferry_replica_notice_lag_seconds";
        let _ = writeln!(
            out,
            "# HELP {name} From another replica's write being notified to this replica hearing it (the database's clock, then this replica's).\n# TYPE {name} histogram"
        );
        self.lag.render(out, name, "");
    }
}
