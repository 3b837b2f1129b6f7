//! The server's own lifecycle on both bindings: a bounded task store that evicts only terminal
//! tasks and refuses new ones when every task is still active, and graceful shutdown that ends
//! open streams cleanly and lets `run` return.

use crate::support::{
    Binding, Step, TASK_NOT_FOUND, TASK_STORE_FULL, TestServer, send_params, state_of,
};
use ferry_server::ServerConfig;
use serde_json::{Value, json};

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
    let ((), from_subscribe, from_send) =
        tokio::join!(srv.shutdown(), subscribed.remaining(), sending.remaining());
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

scenarios!(per_binding:
    full_store_evicts_only_terminal_tasks,
    full_store_of_active_tasks_refuses,
    shutdown_closes_streams,
);
