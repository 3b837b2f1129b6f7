//! Retries that neither hammer a struggling server nor hide real errors: exponential backoff
//! with jitter, `Retry-After` honoured, 4xx other than 429 surfaced at once.

use std::time::Duration;

/// How a client retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (2 by default).
    pub retries: u32,
    /// The first backoff (doubled each time, with ±50% jitter).
    pub base: Duration,
    /// The longest wait, also the cap on `Retry-After`.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            retries: 2,
            base: Duration::from_millis(200),
            max_wait: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `attempt` (0-based), or the server's `Retry-After`.
    pub fn wait(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(server) = retry_after {
            return server.min(self.max_wait);
        }
        let exp = self.base.saturating_mul(1u32 << attempt.min(16));
        // Jitter from the low bits of a fresh UUID: good enough to spread clients apart.
        let jitter = f64::from(uuid::Uuid::new_v4().as_bytes()[0]) / 255.0 + 0.5;
        exp.mul_f64(jitter).min(self.max_wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_retry_after_wins() {
        let p = RetryPolicy::default();
        assert!(p.wait(0, None) <= Duration::from_millis(300));
        assert!(p.wait(3, None) >= Duration::from_millis(800));
        assert_eq!(
            p.wait(0, Some(Duration::from_secs(1))),
            Duration::from_secs(1)
        );
        assert_eq!(p.wait(0, Some(Duration::from_secs(999))), p.max_wait);
    }
}
