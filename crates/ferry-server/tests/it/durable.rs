//! Streams over a store that commits queued events together (SQLite, a fresh file per test):
//! an agent's events are queued back to back and committed in batches, yet every subscriber
//! sees each event once, in order, with consecutive ids, and the task holds all of them.

use crate::support::{Binding, ScriptedAgent, Step, TASK_STORE_UNAVAILABLE, TestServer};
use ferry_server::ServerConfig;
use serde_json::{Value, json};
use std::sync::Arc;

/// A fresh SQLite store in its own directory (removed by the returned guard).
async fn sqlite() -> (Arc<dyn ferry_server::TaskStore>, TempDir) {
    let dir = TempDir::new();
    let store = ferry_store_sql::open(&dir.url())
        .await
        .expect("open sqlite");
    (store, dir)
}

/// Runs `sql` on the store's file through a connection of its own.
async fn run_sql(dir: &TempDir, sql: &str) {
    use sqlx::{Connection, Executor};
    let mut conn = sqlx::SqliteConnection::connect(&dir.url())
        .await
        .expect("a second connection to the store's file");
    conn.execute(sql).await.expect("the statement runs");
    let _ = conn.close().await;
}

/// A scratch directory removed on drop.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new() -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("ferry-durable-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a scratch directory");
        Self(dir)
    }

    /// The store URL of the database file in it.
    fn url(&self) -> String {
        format!("sqlite:{}", self.0.join("tasks.db").display())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// 200 chunks emitted without pause, two subscribers: each sees the snapshot, then every
/// chunk once, in order, with consecutive ids, then COMPLETED; the stored task has them all.
async fn a_flood_arrives_whole_and_in_order(b: Binding) {
    let (store, _dir) = sqlite().await;
    let (agent, remote) = ScriptedAgent::new();
    let clock = Arc::new(ferry_server::clock::TokioClock);
    let srv = TestServer::with_parts(agent, ServerConfig::default(), clock, Some(store)).await;
    let id = srv.start_waiting(b, Value::Null).await;
    let mut first = srv.open(b, "SubscribeToTask", json!({"id": id})).await;
    let mut second = srv.open(b, "SubscribeToTask", json!({"id": id})).await;
    for s in [&mut first, &mut second] {
        let snapshot = s.next_ok().await;
        assert_eq!(snapshot["task"]["id"], id.as_str(), "{snapshot}");
    }
    remote.step(Step::Flood(200));
    remote.step(Step::Complete);
    // SSE events carry their sequence numbers; gRPC messages none (their order is checked by
    // the chunks alone).
    let ids = b != Binding::Grpc;
    for stream in [&mut first, &mut second] {
        let mut last = stream.last_seq().unwrap_or_default();
        assert!(!ids || last > 0, "the snapshot has an id");
        let mut chunks = Vec::new();
        while let Some(event) = stream.next().await {
            let event = event.unwrap_or_else(|e| panic!("no error: {}", e.body));
            if ids {
                let seq = stream.last_seq().expect("an id");
                assert_eq!(seq, last + 1, "consecutive ids: {event}");
                last = seq;
            }
            if let Some(text) = event["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str() {
                chunks.push(text.to_owned());
            }
        }
        let expected: Vec<String> = (0..200).map(|i| i.to_string()).collect();
        assert_eq!(chunks, expected, "every chunk once, in order");
    }
    remote.finished().await;
    let task = srv.ok(b, "GetTask", json!({"id": id})).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        task["artifacts"][0]["parts"].as_array().map(Vec::len),
        Some(200)
    );
}

/// A blocking send over the durable store answers with the finished task (its events
/// committed), and a follow-up conversation continues it.
async fn a_conversation_over_the_durable_store(b: Binding) {
    let (store, _dir) = sqlite().await;
    let (agent, _remote) = ScriptedAgent::new();
    let clock = Arc::new(ferry_server::clock::TokioClock);
    let srv = TestServer::with_parts(agent, ServerConfig::default(), clock, Some(store)).await;
    let task = srv.send_task(b, crate::support::send_params("ask")).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let mut done = crate::support::message("done");
    done["taskId"] = task["id"].clone();
    let finished = srv.send_task(b, json!({"message": done})).await;
    assert_eq!(
        finished["status"]["state"], "TASK_STATE_COMPLETED",
        "{finished}"
    );
    let stored = srv.ok(b, "GetTask", json!({"id": task["id"]})).await;
    assert_eq!(stored["status"], finished["status"]);
    assert_eq!(
        stored["history"].as_array().map(Vec::len),
        Some(4),
        "ask, question, done, finished: {stored}"
    );
}

/// A new task is queued with its first events and committed with them: when that commit
/// fails, the request that started the task is answered 503 `TASK_STORE_UNAVAILABLE` — a
/// send and a stream alike, not a stream that ends as "task not found" — and once the store
/// takes writes again, so does the server.
async fn a_refused_creation_is_the_requests_503(b: Binding) {
    let (store, dir) = sqlite().await;
    let (agent, _remote) = ScriptedAgent::new();
    let clock = Arc::new(ferry_server::clock::TokioClock);
    let srv = TestServer::with_parts(agent, ServerConfig::default(), clock, Some(store)).await;
    run_sql(
        &dir,
        "CREATE TRIGGER refuse BEFORE INSERT ON tasks BEGIN SELECT RAISE(ABORT, 'refused'); END",
    )
    .await;
    let params = crate::support::send_params("ask");
    srv.fails(b, "SendMessage", params.clone())
        .await
        .assert_is(TASK_STORE_UNAVAILABLE);
    srv.stream_fails(b, "SendStreamingMessage", params.clone())
        .await
        .assert_is(TASK_STORE_UNAVAILABLE);
    assert_eq!(srv.ok(b, "ListTasks", json!({})).await["totalSize"], 0);
    run_sql(&dir, "DROP TRIGGER refuse").await;
    let task = srv.send_task(b, params).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
}

scenarios!(per_binding:
    a_refused_creation_is_the_requests_503,
    a_flood_arrives_whole_and_in_order,
    a_conversation_over_the_durable_store,
);
