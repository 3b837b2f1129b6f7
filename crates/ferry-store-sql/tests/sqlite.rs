//! The SQLite store: the conformance suite, restarts, group commit, failures and opening.
//! Each test works in a temporary directory of its own, removed at its end.

mod scenarios;

use ferry_store::{TaskStore, conformance};
use ferry_store_sql::{OpenError, SqliteStore, StoreOptions, open};
use sqlx::{ConnectOptions, Connection, Executor, SqliteConnection};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A fresh directory and the path of a database file in it (not created yet).
fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    (dir, path)
}

async fn open_store(path: &Path) -> SqliteStore {
    SqliteStore::open(path, &StoreOptions::default())
        .await
        .expect("open the sqlite store")
}

/// A connection of the test's own to the store's file (to look at it, or to break it).
async fn side_connection(path: &Path) -> SqliteConnection {
    sqlx::sqlite::SqliteConnectOptions::new()
        .filename(path)
        .connect()
        .await
        .expect("side connection")
}

#[tokio::test]
async fn the_sqlite_store_passes_the_conformance_suite() {
    let (_dir, path) = temp_db();
    conformance::run_all(&open_store(&path).await).await;
}

#[tokio::test]
async fn an_event_is_serialized_once_and_read_back_as_kept() {
    let (_dir, path) = temp_db();
    scenarios::an_event_is_serialized_once_and_read_back_as_kept(&open_store(&path).await).await;
}

#[tokio::test]
async fn sqlite_push_configs_pass_the_push_checks_and_survive_a_reopen() {
    let (_dir, path) = temp_db();
    conformance::run_push_checks(&open_store(&path).await).await;
    let again = open_store(&path).await;
    let key = ferry_store::TaskKey::new("c-push", "t-1");
    let kept = ferry_store::push::PushConfigStore::list_push_configs(&again, &key)
        .await
        .expect("list");
    assert_eq!(kept.len(), 2, "{kept:?}");
}

#[tokio::test]
async fn the_sqlite_outbox_passes_the_outbox_checks_and_survives_a_reopen() {
    let (_dir, path) = temp_db();
    conformance::run_outbox_checks(&open_store(&path).await).await;
    let again = open_store(&path).await;
    let key = ferry_store::TaskKey::new("o-order", "t-1");
    let kept = ferry_store::push::PushStore::list_deliveries(&again, &key)
        .await
        .expect("list");
    assert_eq!(kept.len(), 6, "{kept:?}");
}

#[tokio::test]
async fn sqlite_profiles_pass_the_profile_checks_and_survive_a_reopen() {
    let (_dir, path) = temp_db();
    conformance::run_profile_checks(&open_store(&path).await).await;
    let again = open_store(&path).await;
    let owner = ferry_store::profiles::ProfileOwner::new("p-read", "alice");
    let kept = ferry_store::profiles::ProfileStore::get_profile(&again, &owner, "home")
        .await
        .expect("get");
    assert_eq!(
        kept.map(|p| p.version),
        Some(2),
        "saved profiles are durable"
    );
}

#[tokio::test]
async fn tasks_and_events_survive_a_reopen_of_the_file() {
    let (_dir, path) = temp_db();
    let store = open_store(&path).await;
    conformance::run_restart_checks(&store, || async {
        Box::new(open_store(&path).await) as Box<dyn TaskStore>
    })
    .await;
}

#[tokio::test]
async fn a_burst_of_appends_lands_with_consecutive_numbers() {
    let (_dir, path) = temp_db();
    scenarios::a_burst_of_appends_lands_with_consecutive_numbers(&open_store(&path).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_writers_on_several_threads_all_land() {
    let (_dir, path) = temp_db();
    scenarios::racing_writers_all_land(Arc::new(open_store(&path).await)).await;
}

#[tokio::test]
async fn a_failed_batch_writes_nothing_and_the_writer_goes_on() {
    let (_dir, path) = temp_db();
    let store = open_store(&path).await;
    let rename = |from: &'static str, to: &'static str| {
        let path = path.clone();
        async move {
            side_connection(&path)
                .await
                .execute(format!("ALTER TABLE {from} RENAME TO {to}").as_str())
                .await
                .expect("rename");
        }
    };
    scenarios::a_failed_batch_writes_nothing_and_the_writer_goes_on(
        &store,
        rename("events", "events_away"),
        rename("events_away", "events"),
    )
    .await;
}

#[tokio::test]
async fn the_file_is_created_in_wal_mode_and_opens_by_url() {
    let (_dir, path) = temp_db();
    let url = format!("sqlite:{}", path.display());
    let store = open(&url).await.expect("open by url");
    let t = conformance::task("", "t-1", "ctx", ferry_proto::TaskState::Working, 10);
    store.create(t.clone()).await.expect("create");
    drop(store);
    assert!(path.exists(), "the file was created");
    let mut side = side_connection(&path).await;
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&mut side)
        .await
        .expect("journal mode");
    assert_eq!(
        mode, "wal",
        "WAL: readers beside the writer, one sync per commit"
    );
    side.close().await.expect("close");
    let again = open(&format!("sqlite://{}", path.display()))
        .await
        .expect("reopen by url");
    assert_eq!(again.get(&t.key()).await, Ok(Some(t)), "the task was kept");
}

#[tokio::test]
async fn a_file_in_a_missing_directory_is_a_clear_error() {
    let (dir, _) = temp_db();
    let path = dir.path().join("no-such-dir").join("tasks.db");
    let refused = SqliteStore::open(&path, &StoreOptions::default()).await;
    let Err(error @ OpenError::Sqlite { .. }) = &refused else {
        panic!("expected OpenError::Sqlite, got {refused:?}");
    };
    let message = error.to_string();
    eprintln!("{message}");
    assert!(
        message.starts_with("cannot open the sqlite task store ")
            && message.contains(&path.display().to_string())
            && message.ends_with("does not exist"),
        "names the file and the reason: {message}"
    );
}

#[tokio::test]
async fn unknown_schemes_and_in_memory_databases_are_refused() {
    for (url, scheme) in [
        ("mysql://root:hunter22@localhost/tasks", "mysql"),
        ("tasks.db", ""),
    ] {
        match open(url).await {
            Err(OpenError::UnknownScheme { scheme: got }) => assert_eq!(got, scheme),
            other => panic!("{url}: expected UnknownScheme, got {other:?}"),
        }
    }
    let refused = open("mysql://root:hunter22@localhost/tasks").await.err();
    let message = refused.map(|e| e.to_string()).unwrap_or_default();
    assert!(!message.contains("hunter22"), "{message}");
    assert!(
        matches!(open("sqlite::memory:").await, Err(OpenError::Sqlite { .. })),
        "an in-memory database would be one database per connection"
    );
    assert!(matches!(
        open("sqlite:").await,
        Err(OpenError::InvalidUrl { .. })
    ));
}

/// A file made by the first schema (events by rowid, with a foreign key) is upgraded when a
/// store opens it: its events are all there, in order, new ones land after them, and expiry
/// still takes a task's events with it (a trigger now, no longer the foreign key's cascade).
#[tokio::test]
async fn a_file_of_the_first_schema_keeps_its_events_after_the_upgrade() {
    let (dir, path) = temp_db();
    // The first migration alone, recorded as sqlx records it (the store's migrator then
    // applies only what follows).
    let first = dir.path().join("first-schema");
    std::fs::create_dir(&first).expect("dir");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/sqlite/0001_tasks.sql"),
        first.join("0001_tasks.sql"),
    )
    .expect("copy the first migration");
    let mut side = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true)
        .connect()
        .await
        .expect("create the file");
    sqlx::migrate::Migrator::new(first.as_path())
        .await
        .expect("read the first migration")
        .run(&mut side)
        .await
        .expect("apply the first schema");
    let mut t = conformance::task("", "old", "ctx", ferry_proto::TaskState::Working, 10);
    t.expires_ms = Some(1_000);
    let snapshot = serde_json::to_string(&*t.task).expect("snapshot");
    let event = serde_json::to_string(&**conformance::event(&t).value()).expect("event");
    sqlx::query(
        "INSERT INTO tasks (tenant, id, context_id, state, seq, status_ms, expires_ms, snapshot) \
         VALUES ('', 'old', 'ctx', 'TASK_STATE_WORKING', 2, 10, 1000, $1)",
    )
    .bind(&snapshot)
    .execute(&mut side)
    .await
    .expect("a task of the old schema");
    for seq in [1, 2] {
        sqlx::query("INSERT INTO events (tenant, task_id, seq, event) VALUES ('', 'old', $1, $2)")
            .bind(seq)
            .bind(&event)
            .execute(&mut side)
            .await
            .expect("an event of the old schema");
    }
    side.close().await.expect("close");

    let store = open_store(&path).await;
    let key = t.key();
    let seqs = |events: Vec<ferry_store::StoredEvent>| -> Vec<u64> {
        events.iter().map(|e| e.seq).collect()
    };
    let kept = store.events_after(&key, 0, 10).await.expect("events");
    assert_eq!(seqs(kept), vec![1, 2], "the old events are kept, in order");
    let mut next = t.clone();
    next.seq = 2;
    assert_eq!(
        store.append(&key, 2, conformance::event(&t), next).await,
        Ok(3),
        "a new event follows them"
    );
    let all = store.events_after(&key, 1, 10).await.expect("events");
    assert_eq!(seqs(all), vec![2, 3]);
    assert_eq!(store.expire(1_000).await, Ok(vec![key.clone()]));
    assert_eq!(
        store.events_after(&key, 0, 10).await,
        Ok(vec![]),
        "gone with their task"
    );
    drop(store);
    let mut side = side_connection(&path).await;
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM events")
        .fetch_one(&mut side)
        .await
        .expect("count");
    assert_eq!(left, 0, "no event row is left behind");
}

/// A database made before task owners (migrations 1–3, with a task in it) opens with the
/// owner column added: the old task has no owner, every caller of its tenant lists and reads
/// it, and new tasks keep theirs.
#[tokio::test]
async fn a_store_from_before_owners_migrates_and_keeps_its_tasks_readable() {
    let (dir, path) = temp_db();
    let earlier = dir.path().join("earlier-migrations");
    std::fs::create_dir(&earlier).expect("a directory for the earlier migrations");
    let all = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/sqlite");
    for name in [
        "0001_tasks.sql",
        "0002_events_without_rowid.sql",
        "0003_profiles.sql",
    ] {
        std::fs::copy(all.join(name), earlier.join(name)).expect("copy a migration");
    }
    let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true)
        .connect()
        .await
        .expect("a connection");
    sqlx::migrate::Migrator::new(earlier.as_path())
        .await
        .expect("the earlier migrations")
        .run(&mut conn)
        .await
        .expect("they run");
    let old = conformance::task("", "old", "ctx", ferry_proto::TaskState::Completed, 10);
    let snapshot = serde_json::to_string(&*old.task).expect("snapshot");
    sqlx::query(
        "INSERT INTO tasks (tenant, id, context_id, state, seq, status_ms, expires_ms, snapshot) \
         VALUES ('', 'old', 'ctx', 'TASK_STATE_COMPLETED', 0, 10, NULL, ?)",
    )
    .bind(snapshot)
    .execute(&mut conn)
    .await
    .expect("a task stored before owners");
    let _ = conn.close().await;

    let store = open_store(&path).await;
    let got = store
        .get(&ferry_store::TaskKey::new("", "old"))
        .await
        .expect("get")
        .expect("the old task is there");
    assert_eq!(got.owner, None, "it has no owner");
    let new = conformance::owned_by(
        "ada",
        conformance::task("", "new", "ctx", ferry_proto::TaskState::Working, 20),
    );
    store.create(new).await.expect("create");
    let for_bob = ferry_store::ListQuery {
        owner: Some("bob".into()),
        ..ferry_store::ListQuery::all("", 10)
    };
    let page = store.list(&for_bob).await.expect("list");
    let ids: Vec<&str> = page.tasks.iter().map(|t| &*t.task.id).collect();
    assert_eq!(ids, ["old"], "another caller lists the old task, not Ada's");
}
