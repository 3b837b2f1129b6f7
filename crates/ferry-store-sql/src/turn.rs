//! The turn of writers that share one database write lock.
//!
//! SQLite lets one writer in at a time and its busy handler sleeps between tries; writers that
//! take turns here instead wait only for those ahead of them.

use std::sync::Arc;
use std::time::Duration;

use crate::error::seconds;

/// The turn of writers that share one database write lock (see `SqlStore::write_turn`):
/// a fair queue, so each waits only for those ahead of it.
#[derive(Debug, Clone, Default)]
pub(crate) struct WriteTurn(Arc<tokio::sync::Mutex<()>>);

impl WriteTurn {
    /// Waits for the turn (at most `within`); the turn ends when the guard is dropped.
    pub(crate) async fn take(
        &self,
        within: Duration,
    ) -> Result<tokio::sync::MutexGuard<'_, ()>, String> {
        tokio::time::timeout(within, self.0.lock())
            .await
            .map_err(|_| format!("no turn to write within {}", seconds(within)))
    }
}
