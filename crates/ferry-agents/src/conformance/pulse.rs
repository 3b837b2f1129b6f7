//! `ferry-pulse`: a task that keeps its subscribers receiving, for `ferry bench --mode
//! fan-out`. The message's text is `DELAY_MS INTERVAL_MS COUNT`: WORKING, then after
//! `DELAY_MS` one chunk of the artifact `pulse` every `INTERVAL_MS`, `COUNT` of them, then
//! COMPLETED. Chunk `n` (from 1) reads `pulse n MICROS`, `MICROS` being when it was emitted
//! (microseconds since the Unix epoch), so a subscriber on the same machine can tell how long
//! the event took to reach it.

use ferry_agent::{AgentError, EventSink, RequestContext};
use ferry_proto::{Artifact, Part};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The artifact's id (and name).
pub const ARTIFACT: &str = "pulse";

/// Bounds of the parameters: a pulse stays within the server's default of 1,024 events per
/// task and a day of waiting.
const MAX_COUNT: u32 = 1000;
const MAX_MS: u64 = 86_400_000;

/// How a pulse goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pulse {
    delay: Duration,
    interval: Duration,
    count: u32,
}

impl Pulse {
    /// Reads `DELAY_MS INTERVAL_MS COUNT`, or says what is wrong with it.
    fn parse(text: &str) -> Result<Self, String> {
        let usage = || {
            format!(
                "ferry-pulse takes \"DELAY_MS INTERVAL_MS COUNT\" (milliseconds up to {MAX_MS}, \
                 COUNT from 1 to {MAX_COUNT}), got {text:?}"
            )
        };
        let words: Vec<&str> = text.split_whitespace().collect();
        let [delay, interval, count] = words.as_slice() else {
            return Err(usage());
        };
        let ms = |w: &str| {
            w.parse::<u64>()
                .ok()
                .filter(|ms| *ms <= MAX_MS)
                .map(Duration::from_millis)
        };
        let count = count
            .parse::<u32>()
            .ok()
            .filter(|c| (1..=MAX_COUNT).contains(c));
        match (ms(delay), ms(interval), count) {
            (Some(delay), Some(interval), Some(count)) => Ok(Self {
                delay,
                interval,
                count,
            }),
            _ => Err(usage()),
        }
    }
}

/// Plays the pulse `ctx.message` asks for (a malformed request is rejected, saying why).
pub(crate) async fn play(ctx: &RequestContext, events: &EventSink) -> Result<(), AgentError> {
    let pulse = match Pulse::parse(&ctx.message.text()) {
        Ok(pulse) => pulse,
        Err(why) => return Ok(events.reject(events.text_message(why)).await?),
    };
    events.working(None).await?;
    tokio::time::sleep(pulse.delay).await;
    let mut next = tokio::time::Instant::now();
    for n in 1..=pulse.count {
        let chunk = vec![Part::text(format!("pulse {n} {}", micros_now()))];
        let artifact = Artifact::new(ARTIFACT, ARTIFACT, chunk);
        events.artifact(artifact, n > 1, n == pulse.count).await?;
        // On a schedule, not a pause after each: a slow emit does not stretch the pulse.
        next += pulse.interval;
        tokio::time::sleep_until(next).await;
    }
    events.complete(None).await?;
    Ok(())
}

/// Microseconds since the Unix epoch (0 on a clock set before it).
fn micros_now() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_delay_interval_and_count() {
        assert_eq!(
            Pulse::parse(" 2000 1000\t30 "),
            Ok(Pulse {
                delay: Duration::from_secs(2),
                interval: Duration::from_secs(1),
                count: 30
            })
        );
    }

    #[test]
    fn refuses_what_it_cannot_play() {
        for bad in [
            "",
            "1 2",
            "1 2 3 4",
            "1 2 0",
            "1 2 1001",
            "x 2 3",
            "1 -2 3",
            "1 86400001 3",
        ] {
            let err = Pulse::parse(bad).expect_err(bad);
            assert!(err.contains("DELAY_MS INTERVAL_MS COUNT"), "{err}");
        }
    }
}
