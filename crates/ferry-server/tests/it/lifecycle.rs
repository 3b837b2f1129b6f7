//! The server's own lifecycle on both bindings: a bounded task store that evicts only terminal
//! tasks and refuses new ones when every task is still active, tasks that expire when left
//! waiting (so the store recovers by itself), per-task limits, tasks a restart orphaned, and
//! graceful shutdown that ends open streams cleanly and lets `run` return.

use crate::support::{
    Binding, SHUTTING_DOWN, ScriptedAgent, Step, TASK_NOT_FOUND, TASK_STORE_FULL, TestServer,
    UNSUPPORTED_OPERATION, message, send_params, state_of,
};
use ferry_server::clock::ManualClock;
use ferry_server::{MemoryStore, ServerConfig, TaskStore};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// A server whose store holds two tasks.
async fn tiny_store() -> (TestServer, crate::support::Remote) {
    TestServer::scripted_with(ServerConfig {
        task_capacity: 2,
        ..ServerConfig::default()
    })
    .await
}

async fn exists(srv: &TestServer, b: Binding, id: &Value) -> bool {
    match srv.call(b, "GetTask", json!({"id": id})).await {
        Ok(_) => true,
        Err(e) => {
            e.assert_is(TASK_NOT_FOUND);
            false
        }
    }
}

/// A full store makes room by evicting a terminal task, never an active one.
async fn full_store_evicts_only_terminal_tasks(b: Binding) {
    let (srv, _remote) = tiny_store().await;
    let active = json!(srv.start_waiting(b, Value::Null).await);
    let done = srv.send_task(b, send_params("one")).await["id"].clone();
    let newer = srv.send_task(b, send_params("two")).await["id"].clone();
    assert!(!exists(&srv, b, &done).await, "the terminal task made room");
    assert!(exists(&srv, b, &active).await, "the active task stays");
    assert!(exists(&srv, b, &newer).await);
    let newest = srv.send_task(b, send_params("three")).await["id"].clone();
    assert!(
        !exists(&srv, b, &newer).await
            && exists(&srv, b, &newest).await
            && exists(&srv, b, &active).await
    );
    assert_eq!(srv.ok(b, "ListTasks", json!({})).await["totalSize"], 2);
}

/// When every stored task is active, a new task is refused (503, reason `TASK_STORE_FULL`,
/// with a retry hint) on sends and streams alike; once one finishes, there is room again.
async fn full_store_of_active_tasks_refuses(b: Binding) {
    let (srv, remote) = tiny_store().await;
    let first = json!(srv.start_waiting(b, Value::Null).await);
    let second = json!(srv.start_waiting(b, Value::Null).await);
    let e = srv.fails(b, "SendMessage", send_params("three")).await;
    e.assert_is(TASK_STORE_FULL);
    assert!(e.message().contains("full"), "{}", e.body);
    srv.stream_fails(b, "SendStreamingMessage", send_params("three"))
        .await
        .assert_is(TASK_STORE_FULL);
    assert_eq!(
        srv.ok(b, "ListTasks", json!({})).await["totalSize"],
        2,
        "nothing was evicted"
    );

    remote.step(Step::Complete);
    let finished = json!(remote.finished().await);
    let third = srv.send_task(b, send_params("three")).await;
    assert_eq!(third["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(
        !exists(&srv, b, &finished).await,
        "the finished task made room"
    );
    let still_active = if finished == first { &second } else { &first };
    assert!(exists(&srv, b, still_active).await);
}

/// Shutdown ends open streams cleanly (no terminal event, no transport error), `run` returns
/// well before the drain timeout, and the port stops answering.
async fn shutdown_closes_streams(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let id = srv.start_waiting(b, Value::Null).await;
    let mut subscribed = srv.open(b, "SubscribeToTask", json!({"id": id})).await;
    subscribed.next_ok().await;
    let mut sending = srv
        .open(b, "SendStreamingMessage", send_params("wait"))
        .await;
    sending.next_ok().await;
    let (http, card) = (srv.http().clone(), srv.url("/.well-known/agent-card.json"));
    let ((), from_subscribe, from_send) = tokio::join!(
        srv.shutdown(),
        until_shutdown(b, &mut subscribed),
        until_shutdown(b, &mut sending)
    );
    assert_eq!(
        from_subscribe,
        Vec::<Value>::new(),
        "nothing happened to the subscribed task"
    );
    assert!(
        from_send
            .iter()
            .all(|e| state_of(e) == Some("TASK_STATE_WORKING")),
        "at most WORKING: {from_send:?}"
    );
    assert!(
        http.get(card).send().await.is_err(),
        "the listener is closed"
    );
}

/// The events a stream still gets until the server's shutdown ends it: SSE streams end
/// cleanly, gRPC streams with UNAVAILABLE (`SHUTTING_DOWN`), the code gRPC clients retry on.
async fn until_shutdown(b: Binding, stream: &mut crate::support::A2aStream) -> Vec<Value> {
    if b != Binding::Grpc {
        return stream.remaining().await;
    }
    let mut events = Vec::new();
    loop {
        match stream.next().await {
            Some(Ok(event)) => events.push(event),
            Some(Err(e)) => {
                e.assert_is(SHUTTING_DOWN);
                return events;
            }
            None => panic!("a gRPC stream ends at shutdown with UNAVAILABLE, not OK"),
        }
    }
}

/// The status text of a task.
fn status_text(task: &Value) -> String {
    task["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A task left INPUT_REQUIRED is forgotten once it went `idle_ttl_secs` without an event
/// (measured on an injected clock): a full store of such tasks takes new ones again, the
/// expired task is TaskNotFound, and a stream that followed it ends with that error.
async fn waiting_tasks_expire_and_make_room(b: Binding) {
    let clock = Arc::new(ManualClock::new());
    let config = ServerConfig {
        task_capacity: 2,
        idle_ttl_secs: 60,
        ..ServerConfig::default()
    };
    let (agent, _remote) = ScriptedAgent::new();
    let srv = TestServer::with_parts(agent, config, clock.clone(), None).await;
    let first = srv.send_task(b, send_params("ask")).await;
    assert_eq!(first["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let second = srv.send_task(b, send_params("ask")).await;
    assert_eq!(second["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    srv.fails(b, "SendMessage", send_params("ask"))
        .await
        .assert_is(TASK_STORE_FULL);
    let mut follower = srv
        .open(b, "SubscribeToTask", json!({"id": first["id"]}))
        .await;
    let snapshot = follower.next_ok().await;
    assert_eq!(snapshot["task"]["id"], first["id"]);

    clock.advance(Duration::from_secs(59));
    srv.fails(b, "SendMessage", send_params("ask"))
        .await
        .assert_is(TASK_STORE_FULL);
    clock.advance(Duration::from_secs(1));
    let third = srv.send_task(b, send_params("ask")).await;
    assert_eq!(
        third["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "room again without a restart"
    );
    assert!(!exists(&srv, b, &first["id"]).await, "expired");
    assert!(!exists(&srv, b, &second["id"]).await, "expired");
    match follower.next().await {
        Some(Err(e)) => e.assert_is(TASK_NOT_FOUND),
        other => panic!("the follower learns the task expired: {other:?}"),
    }
    let mut answer = message("done");
    answer["taskId"] = first["id"].clone();
    srv.fails(b, "SendMessage", json!({"message": answer}))
        .await
        .assert_is(TASK_NOT_FOUND);
}

/// A follow-up past `max_history_messages` is refused before the agent sees it; an agent
/// whose reply would pass it fails the task, saying so (and the failure itself is kept).
async fn history_is_bounded(b: Binding) {
    let (srv, _remote) = TestServer::scripted_with(ServerConfig {
        max_history_messages: 2,
        ..ServerConfig::default()
    })
    .await;
    let task = srv.send_task(b, send_params("ask")).await;
    assert_eq!(task["history"].as_array().map(Vec::len), Some(2));
    let mut more = message("more");
    more["taskId"] = task["id"].clone();
    let e = srv.fails(b, "SendMessage", json!({"message": more})).await;
    e.assert_is(UNSUPPORTED_OPERATION);
    assert!(e.message().contains("limit of 2"), "{}", e.body);

    let (srv, _remote) = TestServer::scripted_with(ServerConfig {
        max_history_messages: 3,
        ..ServerConfig::default()
    })
    .await;
    let task = srv.send_task(b, send_params("ask")).await;
    let mut more = message("more");
    more["taskId"] = task["id"].clone();
    let after = srv.send_task(b, json!({"message": more})).await;
    assert_eq!(after["status"]["state"], "TASK_STATE_FAILED", "{after}");
    assert!(
        status_text(&after).contains("over the limit of 3"),
        "{after}"
    );
}

/// Artifacts past `max_artifact_bytes` fail the task with the reason.
async fn artifacts_are_bounded(b: Binding) {
    let (srv, _remote) = TestServer::scripted_with(ServerConfig {
        max_artifact_bytes: 1024,
        ..ServerConfig::default()
    })
    .await;
    let small = srv.send_task(b, send_params("short")).await;
    assert_eq!(small["status"]["state"], "TASK_STATE_COMPLETED");
    let big = srv.send_task(b, send_params(&"x".repeat(2000))).await;
    assert_eq!(big["status"]["state"], "TASK_STATE_FAILED", "{big}");
    assert!(status_text(&big).contains("bytes of artifacts"), "{big}");
}

/// The memory store's byte budget refuses a new task it cannot hold, like the task count.
async fn the_byte_budget_refuses_like_the_count(b: Binding) {
    let (srv, _remote) = TestServer::scripted_with(ServerConfig {
        max_store_bytes: 200_000,
        ..ServerConfig::default()
    })
    .await;
    let text = format!("ask {}", "x".repeat(40_000));
    let mut kept = 0;
    let refusal = loop {
        match srv.call(b, "SendMessage", send_params(&text)).await {
            Ok(_) => kept += 1,
            Err(e) => break e,
        }
        assert!(kept < 10, "200 kB cannot hold ten 40 kB tasks");
    };
    refusal.assert_is(TASK_STORE_FULL);
    assert!(refusal.message().contains("bytes"), "{}", refusal.body);
    assert!(kept >= 1, "at least one fits");
}

/// A server that starts over a store where a previous process left a task WORKING fails it,
/// saying why, since its turn died with that process.
async fn orphaned_working_tasks_fail_on_start(b: Binding) {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryStore::default());
    let clock = Arc::new(ferry_server::clock::TokioClock);
    let (agent, _remote) = ScriptedAgent::new();
    let before = TestServer::with_parts(
        agent,
        ServerConfig::default(),
        clock.clone(),
        Some(store.clone()),
    )
    .await;
    let id = before.start_waiting(b, Value::Null).await;
    let done = before.send_task(b, send_params("finished")).await;
    // The restart: a new server over the same store (the old one's turn is as good as dead).
    let (agent, _remote) = ScriptedAgent::new();
    let after = TestServer::with_parts(agent, ServerConfig::default(), clock, Some(store)).await;
    let task = after.ok(b, "GetTask", json!({"id": id})).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_FAILED", "{task}");
    assert!(status_text(&task).contains("restart"), "{task}");
    let kept = after.ok(b, "GetTask", json!({"id": done["id"]})).await;
    assert_eq!(
        kept["status"], done["status"],
        "a finished task is left as it was"
    );
    drop(before);
}

scenarios!(per_binding:
    full_store_evicts_only_terminal_tasks,
    full_store_of_active_tasks_refuses,
    waiting_tasks_expire_and_make_room,
    history_is_bounded,
    artifacts_are_bounded,
    the_byte_budget_refuses_like_the_count,
    orphaned_working_tasks_fail_on_start,
    shutdown_closes_streams,
);
