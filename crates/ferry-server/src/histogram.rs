//! A Prometheus histogram of durations, lock-free: what the request latencies, the push
//! deliveries and the replicas' notification lag are counted in.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the buckets, in seconds: half a millisecond to ten seconds.
const BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Durations, counted into [`BUCKETS`].
#[derive(Debug, Default)]
pub(crate) struct Histogram {
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_micros: AtomicU64,
}

impl Histogram {
    /// Counts one duration.
    pub(crate) fn observe(&self, took: Duration) {
        let secs = took.as_secs_f64();
        if let Some(b) = BUCKETS.iter().position(|le| secs <= *le) {
            self.buckets[b].fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_micros.fetch_add(
            u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    /// How many durations were counted.
    pub(crate) fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// The samples of the histogram `name` (its `_bucket`, `_sum` and `_count` lines), each
    /// with `labels` (`method="x"`, or empty) before `le`. The family's HELP and TYPE lines
    /// are the caller's.
    pub(crate) fn render(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        let mut cumulative = 0;
        for (le, n) in BUCKETS.iter().zip(&self.buckets) {
            cumulative += n.load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "{name}_bucket{{{labels}{sep}le=\"{le}\"}} {cumulative}"
            );
        }
        let count = self.count();
        let sum = self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {count}");
        let braces = |l: &str| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{{{l}}}")
            }
        };
        let _ = writeln!(out, "{name}_sum{} {sum}", braces(labels));
        let _ = writeln!(out, "{name}_count{} {count}", braces(labels));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative_and_labelled() {
        let h = Histogram::default();
        h.observe(Duration::from_micros(300));
        h.observe(Duration::from_millis(30));
        h.observe(Duration::from_secs(60));
        let mut out = String::new();
        h.render(&mut out, "x_seconds", "method=\"m\"");
        assert!(
            out.contains("x_seconds_bucket{method=\"m\",le=\"0.0005\"} 1\n"),
            "{out}"
        );
        assert!(
            out.contains("x_seconds_bucket{method=\"m\",le=\"0.05\"} 2\n"),
            "{out}"
        );
        assert!(
            out.contains("x_seconds_bucket{method=\"m\",le=\"10\"} 2\n"),
            "{out}"
        );
        assert!(
            out.contains("x_seconds_bucket{method=\"m\",le=\"+Inf\"} 3\n"),
            "{out}"
        );
        assert!(out.contains("x_seconds_count{method=\"m\"} 3\n"), "{out}");
        let mut bare = String::new();
        h.render(&mut bare, "y", "");
        assert!(
            bare.contains("y_bucket{le=\"+Inf\"} 3\ny_sum 60.0303\ny_count 3\n"),
            "{bare}"
        );
    }
}
