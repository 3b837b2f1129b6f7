//! Durable task stores: [`ferry_store::TaskStore`] on SQLite (embedded, one process) and on
//! PostgreSQL (shared, several processes), on `sqlx`. This crate knows SQL and the store
//! boundary; it knows nothing of HTTP or agents.
//!
//! [`open`] takes a URL and gives the store it names:
//!
//! | URL | store |
//! |---|---|
//! | `sqlite:/var/lib/ferry/tasks.db`, `sqlite://relative/tasks.db` | [`SqliteStore`]: the rest of the URL is the file path, verbatim (no query parameters); the file is created if missing, its directory must exist |
//! | `postgres://user:password@host:5432/db`, `postgresql://…` | [`PostgresStore`]: libpq's URL form (`sslmode`, `options`, … as sqlx reads them); a schema is chosen with `?options=-csearch_path%3Dname` |
//!
//! Both keep the same schema (migrations embedded and applied at open): a `tasks` table with
//! the latest snapshot of each task and the columns listing, expiry and restart recovery
//! filter on, an `events` table with every event of a task, kept until the task expires
//! (no per-task trimming: a resume point is never lost while its task exists), and a
//! `profiles` table of saved form values per caller ([`ferry_store::profiles::ProfileStore`]; both
//! faces of one database come from [`open_stores`]).
//!
//! # Writes are committed in groups
//!
//! Creates and appends go through one writer task per store, which applies every write queued
//! meanwhile in one transaction (in a handful of statements, whatever the batch's size) and
//! answers the callers only after the commit. A write is durable when it is acknowledged —
//! SQLite runs in WAL mode with `synchronous=FULL` — and the cost of that sync is shared by a
//! whole batch; on PostgreSQL a second batch is applied while the first one's commit is
//! flushed. Reads use a pool of their own and never wait behind the writer.
//!
//! # Nothing hangs
//!
//! Opening waits at most [`StoreOptions::timeout`] for the database to answer (and
//! [`StoreOptions::statement_timeout`] for the migrations). Afterwards each operation waits at
//! most `timeout` for a connection and `statement_timeout` for its statements, and answers
//! [`StoreError::Unavailable`](ferry_store::StoreError::Unavailable) past either. One caveat
//! every networked store shares: an append or create answered `Unavailable` because the
//! commit's acknowledgement was lost may still have been committed; retried, it then gets a
//! `Conflict` (or `Exists`).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let url = format!("sqlite:{}", dir.path().join("tasks.db").display());
//! let store = ferry_store_sql::open(&url).await?;
//! assert_eq!(store.get(&ferry_store::TaskKey::new("", "t-1")).await?, None);
//! # Ok(())
//! # }
//! ```

mod checkpoint;
mod dialect;
mod error;
mod leases;
mod notices;
mod outbox;
mod plan;
mod postgres;
mod profiles;
mod push;
mod registry;
mod requests;
mod sqlite;
mod store;
mod turn;
mod writer;

pub use error::OpenError;
pub use postgres::PostgresStore;
pub use sqlite::SqliteStore;

use ferry_store::TaskStore;
use ferry_store::profiles::ProfileStore;
use std::sync::Arc;
use std::time::Duration;

/// How a store connects and batches. The defaults suit a server on a few cores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreOptions {
    /// Connections for reads (`get`, `list`, `events_after`, `unfinished`). Writes have their
    /// own (one for SQLite; for PostgreSQL one for the writer and one for expiry). Default 4.
    pub read_connections: u32,
    /// How long to wait for the database: to connect at open, for a free connection later,
    /// and (SQLite) for another process's write lock. Default 5 s.
    pub timeout: Duration,
    /// How long one operation's statements (a whole write batch, a listing, the migrations)
    /// may take; PostgreSQL also enforces it on the server (`statement_timeout`). Default 10 s.
    pub statement_timeout: Duration,
    /// Writes committed in one transaction at most. Default 256.
    pub max_batch: usize,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            read_connections: 4,
            timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(10),
            max_batch: 256,
        }
    }
}

/// Opens the store `url` names (see the crate docs for the forms), with default options.
///
/// Must be called within a tokio runtime: the store's writer task is spawned on it.
pub async fn open(url: &str) -> Result<Arc<dyn TaskStore>, OpenError> {
    open_with(url, &StoreOptions::default()).await
}

/// Opens the store `url` names with `options`.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use ferry_store_sql::{OpenError, StoreOptions, open_with};
///
/// let refused = open_with("mysql://root@localhost/tasks", &StoreOptions::default()).await;
/// assert!(matches!(refused, Err(OpenError::UnknownScheme { scheme }) if scheme == "mysql"));
/// # }
/// ```
pub async fn open_with(url: &str, options: &StoreOptions) -> Result<Arc<dyn TaskStore>, OpenError> {
    Ok(open_stores(url, options).await?.tasks)
}

/// Both faces of one database: its tasks and its saved profiles (one set of pools).
#[derive(Debug, Clone)]
pub struct Stores {
    /// The task store.
    pub tasks: Arc<dyn TaskStore>,
    /// The saved profiles (the forms agent's `"auto": true`), in the same database.
    pub profiles: Arc<dyn ProfileStore>,
}

/// Opens the store `url` names with `options`, as its task store and its profile store.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use ferry_store::profiles::ProfileOwner;
///
/// let dir = tempfile::tempdir()?;
/// let url = format!("sqlite:{}", dir.path().join("ferry.db").display());
/// let stores = ferry_store_sql::open_stores(&url, &Default::default()).await?;
/// let owner = ProfileOwner::new("", "alice");
/// assert!(stores.profiles.list_profiles(&owner).await?.is_empty());
/// # Ok(())
/// # }
/// ```
pub async fn open_stores(url: &str, options: &StoreOptions) -> Result<Stores, OpenError> {
    let scheme = scheme(url);
    match scheme.to_ascii_lowercase().as_str() {
        "sqlite" => {
            let path = sqlite_path(url)?;
            let store = Arc::new(SqliteStore::open(path, options).await?);
            Ok(Stores {
                tasks: store.clone(),
                profiles: store,
            })
        }
        "postgres" | "postgresql" => {
            let store = Arc::new(PostgresStore::open(url, options).await?);
            Ok(Stores {
                tasks: store.clone(),
                profiles: store,
            })
        }
        _ => Err(OpenError::UnknownScheme {
            scheme: scheme.to_owned(),
        }),
    }
}

/// What stands before the first `:`, if it is a URL scheme (letters, digits, `+ - .`);
/// otherwise empty, so that a mistyped URL's secrets never reach a message.
fn scheme(url: &str) -> &str {
    let Some((scheme, _)) = url.split_once(':') else {
        return "";
    };
    let plausible = scheme.len() <= 32
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if plausible { scheme } else { "" }
}

/// The file of a `sqlite:` URL: everything after `sqlite:` (or `sqlite://`), verbatim.
fn sqlite_path(url: &str) -> Result<&str, OpenError> {
    // The scheme is ASCII (checked by `scheme`), so byte 7 is a character boundary.
    let rest = &url["sqlite:".len()..];
    let path = rest.strip_prefix("//").unwrap_or(rest);
    let invalid = |reason: &str| OpenError::InvalidUrl {
        url: url.to_owned(),
        reason: reason.to_owned(),
    };
    if path.is_empty() {
        return Err(invalid("no file path after sqlite:"));
    }
    if path.contains('?') {
        return Err(invalid(
            "query parameters are not taken (the store sets its own connection options)",
        ));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_urls_name_a_file() {
        assert_eq!(
            sqlite_path("sqlite:/var/lib/ferry/tasks.db"),
            Ok("/var/lib/ferry/tasks.db")
        );
        assert_eq!(
            sqlite_path("sqlite:///var/lib/ferry/tasks.db"),
            Ok("/var/lib/ferry/tasks.db")
        );
        assert_eq!(sqlite_path("sqlite://tasks.db"), Ok("tasks.db"));
        assert_eq!(sqlite_path("sqlite:tasks.db"), Ok("tasks.db"));
        assert!(matches!(
            sqlite_path("sqlite:"),
            Err(OpenError::InvalidUrl { .. })
        ));
        assert!(matches!(
            sqlite_path("sqlite:tasks.db?mode=ro"),
            Err(OpenError::InvalidUrl { .. })
        ));
    }

    #[test]
    fn only_a_plausible_scheme_is_shown() {
        assert_eq!(scheme("mysql://root:pw@host/db"), "mysql");
        assert_eq!(scheme("tasks.db"), "");
        assert_eq!(scheme("pw@host:5432"), "", "not a scheme: shown as nothing");
    }
}
