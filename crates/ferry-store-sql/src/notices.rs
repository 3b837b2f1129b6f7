//! Notices between the replicas of one PostgreSQL database: every write batch that stores
//! events says so with `NOTIFY` (one notice per task: its last event), and each replica
//! `LISTEN`s on a connection of its own.
//!
//! PostgreSQL delivers a notice only once its transaction commits (a rolled-back batch says
//! nothing), to the listeners connected then: notices sent while a listener reconnects are
//! gone. So a notice is only a wake-up, and after every (re)connection the stream says
//! [`Notice::Missed`] and the server reads again every task it follows.
//!
//! The channel is named after the schema, so replicas of different schemas in one database
//! (tests do that) never hear each other. A payload is `replica\nseq\ntask id\ntenant`
//! (the tenant last: it is the only part that may hold a newline), or `replica\ncancel\n…`
//! for a cancel request, after a first line the database adds: the time it sent the notice
//! (ms since the Unix epoch), so that a listener measures how late it hears it; one that would pass PostgreSQL's 8000-byte limit names no task and
//! is heard as [`Notice::Missed`].

use ferry_store::TaskKey;
use ferry_store::replicas::{Notice, Notices};
use sqlx::PgPool;
use sqlx::postgres::PgListener;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// How the writer of one replica announces its writes.
#[derive(Debug, Clone)]
pub(crate) struct Announcer {
    /// The channel of the store's schema.
    pub(crate) channel: Arc<str>,
    /// This replica's id (listeners skip their own notices).
    pub(crate) replica: Arc<str>,
    /// Writes refused so far because their lease was over.
    pub(crate) fenced: Arc<std::sync::atomic::AtomicU64>,
}

/// What the second line of a cancel request's payload says.
pub(crate) const CANCEL: &str = "cancel";

/// PostgreSQL refuses a payload of 8000 bytes or more; the database adds up to 21 bytes
/// (the time and a newline).
const MAX_PAYLOAD: usize = 7999 - 21;

/// What a payload is sent with, before it in SQL (`sent_at!() "p"`): the database's time
/// and a newline. A macro, so that statements written as one literal can `concat!` it.
macro_rules! sent_at {
    () => {
        "(extract(epoch FROM clock_timestamp()) * 1000)::bigint || chr(10) || "
    };
}
pub(crate) use sent_at;

impl Announcer {
    /// The payload that says task `tenant`/`id` is at event `seq` now.
    pub(crate) fn payload(&self, tenant: &str, id: &str, seq: i64) -> String {
        self.saying(&seq.to_string(), tenant, id)
    }

    /// The payload that asks the holder of task `tenant`/`id` to cancel its turn.
    pub(crate) fn cancel_payload(&self, tenant: &str, id: &str) -> String {
        self.saying(CANCEL, tenant, id)
    }

    fn saying(&self, what: &str, tenant: &str, id: &str) -> String {
        let payload = format!("{}\n{what}\n{id}\n{tenant}", self.replica);
        if payload.len() > MAX_PAYLOAD {
            return format!("{}\n{what}\n\n", self.replica);
        }
        payload
    }
}

/// The channel of the schema `schema`: `ferry_` and a hash of its name (a channel name is
/// an identifier of at most 63 bytes; a schema's name may be that long already). FNV-1a, so
/// that every replica, whatever its build, names it alike.
pub(crate) fn channel(schema: &str) -> String {
    let hash = schema.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("ferry_{hash:016x}")
}

/// What a payload says, heard by replica `me`: `None` for its own notices.
fn heard(payload: &str, me: &str) -> Option<Notice> {
    let mut parts = payload.splitn(5, '\n');
    let sent_ms = parts.next().and_then(|t| t.parse::<u64>().ok());
    let replica = parts.next()?;
    if replica == me {
        return None;
    }
    let what = parts.next();
    let id = parts.next().filter(|id| !id.is_empty());
    let tenant = parts.next();
    let (Some(sent_ms), Some(what), Some(id), Some(tenant)) = (sent_ms, what, id, tenant) else {
        return Some(Notice::Missed);
    };
    let key = TaskKey::new(tenant, id);
    Some(match what {
        CANCEL => Notice::CancelRequested { key },
        seq => match seq.parse::<u64>() {
            Ok(seq) => Notice::Wrote { key, seq, sent_ms },
            Err(_) => Notice::Missed,
        },
    })
}

/// Notices heard on `channel` (all but replica `me`'s), over connections of `pool`.
pub(crate) fn listen(pool: PgPool, channel: Arc<str>, me: Arc<str>) -> Notices {
    let (tx, rx) = mpsc::channel(NOTICES_QUEUED);
    tokio::spawn(listener(pool, channel, me, tx));
    Box::pin(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|notice| (notice, rx))
    }))
}

/// Notices heard and not yet taken by the server; beyond it the listener waits (PostgreSQL
/// keeps what it sends meanwhile).
const NOTICES_QUEUED: usize = 1024;

/// The first wait before connecting again; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Listens until nobody takes the notices any more; a lost connection is made again (after
/// a pause that grows while the database stays away), then [`Notice::Missed`] is said.
async fn listener(pool: PgPool, channel: Arc<str>, me: Arc<str>, tx: mpsc::Sender<Notice>) {
    let mut backoff = FIRST_BACKOFF;
    loop {
        let mut listener = match connect(&pool, &channel).await {
            Ok(listener) => listener,
            Err(e) => {
                tracing::warn!(error = %e, retry_in_ms = backoff.as_millis(), "cannot listen for other replicas' writes");
                tokio::select! {
                    () = tx.closed() => return,
                    () = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        backoff = FIRST_BACKOFF;
        if tx.send(Notice::Missed).await.is_err() {
            return;
        }
        loop {
            let heard_now = tokio::select! {
                () = tx.closed() => return,
                heard_now = listener.try_recv() => heard_now,
            };
            match heard_now {
                Ok(Some(notification)) => {
                    if let Some(notice) = heard(notification.payload(), &me)
                        && tx.send(notice).await.is_err()
                    {
                        return;
                    }
                }
                Ok(None) => {
                    tracing::warn!(
                        "the connection that listens for other replicas' writes was lost; connecting again"
                    );
                    break;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "listening for other replicas' writes failed; connecting again");
                    break;
                }
            }
        }
    }
}

async fn connect(pool: &PgPool, channel: &str) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    // Reconnecting is done here, explicitly, so that `Missed` follows it.
    listener.eager_reconnect(false);
    listener.listen(channel).await?;
    Ok(listener)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn announcer() -> Announcer {
        Announcer {
            channel: channel("public").into(),
            replica: "r1".into(),
            fenced: Default::default(),
        }
    }

    /// A payload as the database sends it: its time first.
    fn sent(payload: &str) -> String {
        format!("1700000000123\n{payload}")
    }

    #[test]
    fn a_payload_is_heard_as_it_was_said() {
        let said = sent(&announcer().payload("acme\nlabs", "t-1", 7));
        assert_eq!(heard(&said, "r1"), None, "its own");
        assert_eq!(
            heard(&said, "r2"),
            Some(Notice::Wrote {
                key: TaskKey::new("acme\nlabs", "t-1"),
                seq: 7,
                sent_ms: 1_700_000_000_123,
            })
        );
    }

    #[test]
    fn a_payload_that_cannot_name_its_task_is_a_miss() {
        let long = "x".repeat(8000);
        let said = sent(&announcer().payload(&long, "t-1", 7));
        assert!(said.len() < 8000);
        assert_eq!(heard(&said, "r2"), Some(Notice::Missed));
        assert_eq!(
            heard(&sent("r1\nnot a number\nt\n"), "r2"),
            Some(Notice::Missed)
        );
        assert_eq!(heard("r1\n7\nt\n", "r2"), Some(Notice::Missed), "no time");
    }

    #[test]
    fn a_cancel_request_is_heard_by_the_others() {
        let said = sent(&announcer().cancel_payload("", "t-1"));
        assert_eq!(
            heard(&said, "r2"),
            Some(Notice::CancelRequested {
                key: TaskKey::new("", "t-1")
            })
        );
        assert_eq!(heard(&said, "r1"), None);
    }

    #[test]
    fn channels_are_identifiers_apart_per_schema() {
        let (a, b) = (channel("public"), channel("ferry_test_1"));
        assert_ne!(a, b);
        assert!(a.len() <= 63 && a.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_'));
        assert_eq!(channel("public"), a, "stable");
    }
}
