//! Time, injected where TTLs, dedup windows and rate limits live: tests replace it (or run on
//! tokio's paused clock) instead of sleeping.

use std::fmt;
use tokio::time::Instant;

/// A monotonic clock.
pub trait Clock: Send + Sync + fmt::Debug + 'static {
    /// Now.
    fn now(&self) -> Instant;
}

/// The runtime's clock: `tokio::time::Instant::now()`, which a test runtime started paused
/// (`#[tokio::test(start_paused = true)]`) moves only when told to.
#[derive(Debug, Clone, Copy, Default)]
pub struct TokioClock;

impl Clock for TokioClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that moves only when told to ([`ManualClock::advance`]): for tests of TTLs and
/// rate limits that run on real sockets (where a paused runtime would also fast-forward the
/// network timeouts).
///
/// ```
/// use ferry_server::clock::{Clock, ManualClock};
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let clock = ManualClock::new();
/// let t0 = clock.now();
/// clock.advance(Duration::from_secs(5));
/// assert_eq!(clock.now() - t0, Duration::from_secs(5));
/// # }
/// ```
#[derive(Debug)]
pub struct ManualClock {
    start: Instant,
    offset: parking_lot::Mutex<std::time::Duration>,
}

impl ManualClock {
    /// A clock standing at the runtime's now.
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
            offset: parking_lot::Mutex::new(std::time::Duration::ZERO),
        }
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: std::time::Duration) {
        *self.offset.lock() += by;
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.start + *self.offset.lock()
    }
}
