//! Idempotent retries: a repeated `SendMessage` with the same `messageId` and identical content,
//! from the same caller within the TTL, gets the first answer instead of running twice.
//!
//! Off unless `dedup_ttl_secs` is set. Entries live in sharded maps bounded in size (the oldest
//! entry of a full shard goes first) and in time (the TTL). A second request that arrives while
//! the first is still running waits for the first's answer. Only successful answers are kept:
//! a retry after an error runs again. Different content under a reused `messageId` is processed
//! normally and not remembered.

use crate::clock::Clock;
use crate::core::answer::Sent;
use ferry_proto::A2aError;
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::OnceCell;
use tokio::time::Instant;

const SHARDS: usize = 16;

/// Where the first answer to a request lands, shared by its duplicates.
pub(crate) type AnswerCell = Arc<OnceCell<Sent>>;

#[derive(Debug)]
struct Entry {
    content: u64,
    inserted: Instant,
    answer: AnswerCell,
}

#[derive(Debug, Default)]
struct Shard {
    map: HashMap<(String, String), Entry>,
    order: VecDeque<(String, String)>,
}

/// Remembered answers by (caller, messageId).
#[derive(Debug)]
pub(crate) struct Dedup {
    shards: Box<[Mutex<Shard>]>,
    hasher: RandomState,
    ttl: Duration,
    per_shard: usize,
    clock: Arc<dyn Clock>,
}

impl Dedup {
    /// Remembers up to `capacity` answers for `ttl` each.
    pub(crate) fn new(ttl: Duration, capacity: usize, clock: Arc<dyn Clock>) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            hasher: RandomState::new(),
            ttl,
            per_shard: capacity.div_ceil(SHARDS).max(1),
            clock,
        }
    }

    /// How long an answer is remembered.
    pub(crate) fn ttl(&self) -> Duration {
        self.ttl
    }

    /// A hash of a request's content (its canonical serialization).
    pub(crate) fn content_hash(&self, content: &[u8]) -> u64 {
        self.hasher.hash_one(content)
    }

    /// The answer cell for this request: the first request's cell when this one repeats it
    /// (same caller, messageId and content, within the TTL), a new cell for a first request, or
    /// `None` when the messageId was used with other content (process it normally).
    pub(crate) fn slot(&self, caller: &str, message_id: &str, content: u64) -> Option<AnswerCell> {
        let key = (caller.to_owned(), message_id.to_owned());
        let shard = &self.shards[(self.hasher.hash_one(&key) as usize) % SHARDS];
        let mut shard = shard.lock();
        let now = self.clock.now();
        // Drop what expired (oldest first) and what exceeds the bound.
        while let Some(front) = shard.order.front() {
            let expired = shard
                .map
                .get(front)
                .is_none_or(|e| now.duration_since(e.inserted) >= self.ttl);
            if !expired && shard.map.len() < self.per_shard {
                break;
            }
            if let Some(k) = shard.order.pop_front() {
                shard.map.remove(&k);
            }
        }
        if let Some(e) = shard.map.get(&key) {
            return (e.content == content).then(|| e.answer.clone());
        }
        let answer = AnswerCell::default();
        shard.map.insert(
            key.clone(),
            Entry {
                content,
                inserted: now,
                answer: answer.clone(),
            },
        );
        shard.order.push_back(key);
        Some(answer)
    }

    /// Runs `first` once per remembered request and shares its successful answer.
    pub(crate) async fn answer<F>(cell: &AnswerCell, first: F) -> Result<Sent, A2aError>
    where
        F: std::future::Future<Output = Result<Sent, A2aError>>,
    {
        // Boxed: the cell's initialization would otherwise hold the request's whole future
        // inline (several times over), and every request's future is as big as its biggest
        // branch — this one made SendMessage's 13 KB, copied at each layer.
        let first = Box::pin(first);
        cell.get_or_try_init(|| first).await.cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::TokioClock;

    fn dedup(ttl: Duration, capacity: usize) -> Dedup {
        Dedup::new(ttl, capacity, Arc::new(TokioClock))
    }

    #[tokio::test(start_paused = true)]
    async fn same_content_shares_a_cell_other_content_does_not() {
        let d = dedup(Duration::from_secs(60), 100);
        let a = d.slot("c1", "m1", 7).expect("first");
        let b = d.slot("c1", "m1", 7).expect("repeat");
        assert!(Arc::ptr_eq(&a, &b));
        assert!(
            d.slot("c1", "m1", 8).is_none(),
            "other content is processed normally"
        );
        let c = d.slot("c2", "m1", 7).expect("another caller");
        assert!(!Arc::ptr_eq(&a, &c));
    }

    #[tokio::test(start_paused = true)]
    async fn ttl_and_capacity_bound_it() {
        let d = dedup(Duration::from_secs(60), 100);
        let a = d.slot("c", "m", 1).expect("first");
        tokio::time::advance(Duration::from_secs(59)).await;
        let b = d.slot("c", "m", 1).expect("within the ttl");
        assert!(Arc::ptr_eq(&a, &b), "remembered for the whole ttl");
        tokio::time::advance(Duration::from_secs(1)).await;
        let c = d.slot("c", "m", 1).expect("after the ttl");
        assert!(!Arc::ptr_eq(&a, &c), "expired entries are forgotten");
        let d = dedup(Duration::from_secs(60), SHARDS);
        for i in 0..1000 {
            d.slot("c", &format!("m{i}"), 1);
        }
        let total: usize = d.shards.iter().map(|s| s.lock().map.len()).sum();
        assert!(total <= SHARDS, "bounded: {total}");
    }
}
