//! Per-client request rate: a token bucket per client address, in sharded maps (no lock shared
//! by all requests). The maps are bounded: when a shard is full, buckets that have refilled
//! completely (idle clients) are dropped.

use crate::clock::Clock;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::net::IpAddr;
use std::sync::Arc;
use tokio::time::Instant;

const SHARDS: usize = 16;
const MAX_CLIENTS_PER_SHARD: usize = 4096;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

/// Token buckets by client address.
#[derive(Debug)]
pub(crate) struct RateLimiter {
    shards: Box<[Mutex<HashMap<IpAddr, Bucket>>]>,
    hasher: RandomState,
    rate: f64,
    burst: f64,
    clock: Arc<dyn Clock>,
}

impl RateLimiter {
    /// `rate` requests per second with bursts of `burst`, refilled as `clock` says.
    pub(crate) fn new(rate: u32, burst: u32, clock: Arc<dyn Clock>) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            hasher: RandomState::new(),
            rate: f64::from(rate.max(1)),
            burst: f64::from(burst.max(1)),
            clock,
        }
    }

    /// Takes one token for `client`, or says how many seconds to wait for one.
    pub(crate) fn check(&self, client: IpAddr) -> Result<(), u64> {
        let now = self.clock.now();
        let shard = &self.shards[(self.hasher.hash_one(client) as usize) % SHARDS];
        let mut map = shard.lock();
        if map.len() >= MAX_CLIENTS_PER_SHARD && !map.contains_key(&client) {
            let (rate, burst) = (self.rate, self.burst);
            map.retain(|_, b| b.tokens + now.duration_since(b.last).as_secs_f64() * rate < burst);
        }
        let bucket = map.entry(client).or_insert(Bucket {
            tokens: self.burst,
            last: now,
        });
        bucket.tokens = (bucket.tokens + now.duration_since(bucket.last).as_secs_f64() * self.rate)
            .min(self.burst);
        bucket.last = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - bucket.tokens) / self.rate).ceil().max(1.0) as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn bursts_then_refuses_with_a_wait_and_clients_are_apart() {
        let r = RateLimiter::new(1, 3, Arc::new(crate::clock::TokioClock));
        let a: IpAddr = "127.0.0.1".parse().expect("ip");
        let b: IpAddr = "127.0.0.2".parse().expect("ip");
        for _ in 0..3 {
            assert!(r.check(a).is_ok());
        }
        assert_eq!(r.check(a), Err(1));
        assert!(r.check(b).is_ok(), "another client has its own bucket");
        // The advertised wait is the wait: a second later there is a token again, not before.
        tokio::time::advance(std::time::Duration::from_millis(900)).await;
        assert_eq!(r.check(a), Err(1));
        tokio::time::advance(std::time::Duration::from_millis(200)).await;
        assert!(r.check(a).is_ok());
        assert_eq!(r.check(a), Err(1));
        // Idle, the bucket refills to the burst and no further.
        tokio::time::advance(std::time::Duration::from_secs(60)).await;
        for _ in 0..3 {
            assert!(r.check(a).is_ok());
        }
        assert_eq!(r.check(a), Err(1));
    }
}
