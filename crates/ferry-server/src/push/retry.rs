//! When a failed delivery is attempted again: an exponential backoff with jitter, or later
//! when the receiver asks (`Retry-After`, seconds or an HTTP date).

use std::time::Duration;

/// The first wait; each further failure doubles it, up to the configured most.
const FIRST_WAIT: Duration = Duration::from_secs(1);
/// The longest `Retry-After` honoured: a receiver cannot park a delivery for days.
pub(crate) const MAX_RETRY_AFTER: Duration = Duration::from_secs(3600);

/// The wait after the `attempts`-th failed attempt: `1 s × 2^(attempts − 1)`, at most `max`,
/// then scaled into its upper half by `jitter` (0 to 1), so that receivers that failed at once
/// are not all retried at once.
pub(crate) fn backoff(attempts: u32, max: Duration, jitter: f64) -> Duration {
    let doublings = attempts.saturating_sub(1).min(31);
    let full = FIRST_WAIT.saturating_mul(1u32 << doublings).min(max);
    full.mul_f64(0.5 + jitter.clamp(0.0, 1.0) / 2.0)
}

/// The wait before the next attempt: the backoff, or longer when the receiver asked for it.
pub(crate) fn next_wait(
    attempts: u32,
    max: Duration,
    jitter: f64,
    retry_after: Option<Duration>,
) -> Duration {
    let asked = retry_after.unwrap_or_default().min(MAX_RETRY_AFTER);
    backoff(attempts, max, jitter).max(asked)
}

/// A `Retry-After` value: delay-seconds, or an HTTP date (a wait from `now_secs`, seconds
/// since the epoch; a date past is no wait).
pub(crate) fn retry_after(value: &str, now_secs: i64) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let date = jiff::fmt::rfc2822::parse(value).ok()?;
    let wait = date.timestamp().as_second().saturating_sub(now_secs);
    Some(Duration::from_secs(u64::try_from(wait).unwrap_or(0)))
}

/// A number from 0 to 1, different every time (the jitter).
pub(crate) fn jitter() -> f64 {
    let random = uuid::Uuid::new_v4().as_u128() as u64 >> 11;
    random as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_up_to_its_limit_within_its_jitter() {
        let max = Duration::from_secs(300);
        assert_eq!(backoff(1, max, 1.0), Duration::from_secs(1));
        assert_eq!(backoff(1, max, 0.0), Duration::from_millis(500));
        assert_eq!(backoff(4, max, 1.0), Duration::from_secs(8));
        assert_eq!(backoff(30, max, 1.0), max);
        assert_eq!(backoff(u32::MAX, max, 0.0), max / 2);
        for _ in 0..100 {
            let j = jitter();
            assert!((0.0..=1.0).contains(&j), "{j}");
        }
    }

    #[test]
    fn retry_after_is_seconds_or_a_date_and_bounded() {
        let now = 1_700_000_000;
        assert_eq!(retry_after("7", now), Some(Duration::from_secs(7)));
        let date = jiff::Timestamp::from_second(now + 90).expect("ts");
        let text = jiff::fmt::rfc2822::DateTimePrinter::new()
            .timestamp_to_rfc9110_string(&date)
            .expect("date");
        assert_eq!(retry_after(&text, now), Some(Duration::from_secs(90)));
        assert_eq!(retry_after("soon", now), None);
        let max = Duration::from_secs(300);
        assert_eq!(
            next_wait(1, max, 1.0, Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
        assert_eq!(
            next_wait(1, max, 1.0, Some(Duration::from_secs(86_400))),
            MAX_RETRY_AFTER
        );
    }
}
