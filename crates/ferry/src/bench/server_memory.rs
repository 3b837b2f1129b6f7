//! The resident memory of the server under test, read from `/proc/PID/status` (Linux), for
//! the modes that measure what open connections cost.

use std::time::Duration;
use tokio::sync::oneshot;

/// The process's resident memory now (`VmRSS`), in KiB; `None` when it cannot be read.
pub(crate) fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Samples a process's resident memory at intervals and keeps the highest.
pub(crate) struct Sampler {
    stop: oneshot::Sender<()>,
    peak: tokio::task::JoinHandle<Option<u64>>,
}

impl Sampler {
    /// Samples `pid` every `every`, from `after` on.
    pub(crate) fn start(pid: u32, after: Duration, every: Duration) -> Self {
        let (stop, mut stopped) = oneshot::channel();
        let peak = tokio::spawn(async move {
            let mut peak = None;
            tokio::select! {
                _ = &mut stopped => return peak,
                () = tokio::time::sleep(after) => {}
            }
            let mut tick = tokio::time::interval(every);
            loop {
                tokio::select! {
                    _ = &mut stopped => return peak,
                    _ = tick.tick() => peak = peak.max(rss_kib(pid)),
                }
            }
        });
        Self { stop, peak }
    }

    /// Stops sampling; the highest resident memory seen, in KiB.
    pub(crate) async fn finish(self) -> Option<u64> {
        let _ = self.stop.send(());
        self.peak.await.ok().flatten()
    }
}

/// The server's resident memory before the connections opened and at its peak while they
/// were all open, in KiB (`None` without `--pid`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Growth {
    pub(crate) before: Option<u64>,
    pub(crate) peak: Option<u64>,
}

impl Growth {
    /// KiB per each of `count` things (streams, connections) opened in between.
    pub(crate) fn per(&self, count: usize) -> Option<f64> {
        match (self.before, self.peak) {
            (Some(before), Some(peak)) if count > 0 => {
                Some(peak.saturating_sub(before) as f64 / count as f64)
            }
            _ => None,
        }
    }

    /// Prints the line that says so, each of `count` things being `a_thing` ("a stream").
    pub(crate) fn print(&self, count: usize, a_thing: &str) {
        match (self.before, self.peak, self.per(count)) {
            (Some(before), Some(peak), Some(per)) => println!(
                "server RSS: {:.1} MiB before, {:.1} MiB peak with all open ({per:.1} KiB {a_thing})",
                before as f64 / 1024.0,
                peak as f64 / 1024.0
            ),
            _ => println!("server RSS: pass --pid to sample it"),
        }
    }
}
