//! Push deliveries end to end: a server on a manual clock, a real receiver on a socket, the
//! store watched so that the test waits for each recorded attempt (never a sleep). A receiver
//! that fails three times (one a 503 with `Retry-After`) gets every event exactly once, in
//! order, after the backoff; one down past the limit leaves a dead row that the metrics show
//! and a redelivery sends; a name that resolves to loopback and a redirect are never dialed.

use crate::support::{TestServer, send_params};
use axum::http::{HeaderMap, StatusCode};
use ferry_server::clock::ManualClock;
use ferry_server::{MemoryStore, PushSettings, ServerConfig, TaskStore};
use ferry_store::push::{
    ClaimedDelivery, Delivery, DeliveryCounts, DeliveryStatus, FinishedDelivery, PushConfig,
    PushConfigStore, PushStore,
};
use ferry_store::{Event, ListQuery, Page, Queued, StoreFuture, StoredEvent, StoredTask, TaskKey};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, mpsc};

/// A memory store that says when attempts were recorded.
#[derive(Debug, Default)]
struct Watched {
    inner: MemoryStore,
    finished: Notify,
}

impl TaskStore for Watched {
    fn create(&self, task: StoredTask) -> StoreFuture<'_, ()> {
        self.inner.create(task)
    }
    fn queue_create_with_push(
        &self,
        task: StoredTask,
        configs: Vec<PushConfig>,
    ) -> StoreFuture<'_, Queued<()>> {
        self.inner.queue_create_with_push(task, configs)
    }
    fn push(&self) -> Option<&dyn PushStore> {
        Some(self)
    }
    fn append(&self, k: &TaskKey, s: u64, e: Arc<Event>, t: StoredTask) -> StoreFuture<'_, u64> {
        self.inner.append(k, s, e, t)
    }
    fn get(&self, key: &TaskKey) -> StoreFuture<'_, Option<StoredTask>> {
        self.inner.get(key)
    }
    fn list(&self, query: &ListQuery) -> StoreFuture<'_, Page> {
        self.inner.list(query)
    }
    fn events_after(&self, k: &TaskKey, s: u64, l: usize) -> StoreFuture<'_, Vec<StoredEvent>> {
        self.inner.events_after(k, s, l)
    }
    fn expire(&self, now_ms: u64) -> StoreFuture<'_, Vec<TaskKey>> {
        self.inner.expire(now_ms)
    }
    fn unfinished(&self) -> StoreFuture<'_, Vec<TaskKey>> {
        self.inner.unfinished()
    }
    fn count_by_state(&self) -> StoreFuture<'_, Vec<(ferry_proto::TaskState, u64)>> {
        self.inner.count_by_state()
    }
}

impl PushConfigStore for Watched {
    fn put_push_config(&self, k: &TaskKey, c: PushConfig, m: usize) -> StoreFuture<'_, ()> {
        self.inner.put_push_config(k, c, m)
    }
    fn get_push_config(&self, k: &TaskKey, id: &str) -> StoreFuture<'_, Option<PushConfig>> {
        self.inner.get_push_config(k, id)
    }
    fn list_push_configs(&self, k: &TaskKey) -> StoreFuture<'_, Vec<PushConfig>> {
        self.inner.list_push_configs(k)
    }
    fn delete_push_config(&self, k: &TaskKey, id: &str) -> StoreFuture<'_, bool> {
        self.inner.delete_push_config(k, id)
    }
}

impl PushStore for Watched {
    fn claim_deliveries(
        &self,
        now: u64,
        lease: &str,
        until: u64,
        limit: usize,
    ) -> StoreFuture<'_, Vec<ClaimedDelivery>> {
        self.inner.claim_deliveries(now, lease, until, limit)
    }
    fn finish_deliveries(&self, f: Vec<FinishedDelivery>, now: u64) -> StoreFuture<'_, ()> {
        let done = self.inner.finish_deliveries(f, now);
        Box::pin(async move {
            done.await?;
            self.finished.notify_one();
            Ok(())
        })
    }
    fn list_deliveries(&self, k: &TaskKey) -> StoreFuture<'_, Vec<Delivery>> {
        self.inner.list_deliveries(k)
    }
    fn redeliver(&self, k: &TaskKey, id: &str) -> StoreFuture<'_, bool> {
        self.inner.redeliver(k, id)
    }
    fn count_deliveries(&self) -> StoreFuture<'_, DeliveryCounts> {
        self.inner.count_deliveries()
    }
}

/// What the receiver got: the headers and body of one POST.
#[derive(Debug)]
struct Received {
    headers: HeaderMap,
    body: Value,
}

/// A webhook on 127.0.0.1 that answers each POST with the next scripted status (then 200),
/// and hands what it got to the test.
async fn receiver(
    script: Vec<(u16, Option<&'static str>)>,
) -> (String, mpsc::UnboundedReceiver<Received>) {
    let script = Arc::new(Mutex::new(VecDeque::from(script)));
    let (tx, rx) = mpsc::unbounded_channel();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: axum::body::Bytes| {
            let script = script.clone();
            let tx = tx.clone();
            async move {
                let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let _ = tx.send(Received { headers, body });
                let next = script.lock().expect("script").pop_front();
                let (status, retry_after) = next.unwrap_or((200, None));
                let mut response = axum::response::Response::new(axum::body::Body::empty());
                *response.status_mut() = StatusCode::from_u16(status).expect("status");
                if let Some(wait) = retry_after {
                    response
                        .headers_mut()
                        .insert("retry-after", wait.parse().expect("header"));
                }
                response
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, rx)
}

fn settings(max_attempts: u32, allow_private: bool) -> ServerConfig {
    ServerConfig {
        push: PushSettings {
            allow_private,
            max_attempts,
            ..PushSettings::default()
        },
        ..ServerConfig::default()
    }
}

/// A server of the echo agent with `config`, on a watched store and a manual clock.
async fn serve_watched(config: ServerConfig) -> (TestServer, Arc<Watched>, Arc<ManualClock>) {
    let store = Arc::new(Watched::default());
    let clock = Arc::new(ManualClock::new());
    let srv = TestServer::with_parts(
        ferry_agents::EchoAgent,
        config,
        clock.clone(),
        Some(store.clone()),
    )
    .await;
    (srv, store, clock)
}

/// The server's `/metrics` text.
async fn metrics_text(srv: &TestServer) -> String {
    let response = srv.http().get(srv.url("/metrics")).send().await;
    response.expect("metrics").text().await.expect("text")
}

/// Waits for the first attempt of the only task's first delivery: it must be dead, saying
/// `why`, with nothing ever connected to `trap`.
async fn first_dies_undialed(store: &Watched, trap: &std::net::TcpListener, why: &str) {
    store.finished.notified().await;
    let row = rows(store).await.remove(0);
    assert_eq!(row.status, DeliveryStatus::Dead, "{row:?}");
    assert!(
        row.last_error.as_deref().is_some_and(|e| e.contains(why)),
        "{row:?}"
    );
    assert!(
        matches!(trap.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "{why}: the trap was dialed"
    );
}

/// A send that registers `url` inline, with a token and credentials.
fn send_with_hook(url: &str) -> Value {
    let mut params = send_params("hello");
    params["configuration"] = json!({"taskPushNotificationConfig": {
        "url": url,
        "token": "tok-1",
        "authentication": {"scheme": "Bearer", "credentials": "cred-1"},
    }});
    params
}

/// The deliveries of the only task of the store.
async fn rows(store: &Watched) -> Vec<Delivery> {
    let page = store.list(&ListQuery::all("", 10)).await.expect("list");
    let key = page.tasks.first().expect("a task").key();
    store.list_deliveries(&key).await.expect("deliveries")
}

/// The event kind of a delivered body (its one member), and its state if it has one.
fn kind(body: &Value) -> String {
    let (name, value) = body
        .as_object()
        .and_then(|o| o.iter().next())
        .expect("one member");
    let state = value["status"]["state"].as_str().unwrap_or_default();
    format!("{name}:{state}")
}

async fn a_receiver_that_fails_three_times_gets_every_event_once_in_order() {
    let (url, mut got) = receiver(vec![(500, None), (503, Some("7")), (500, None)]).await;
    let (srv, store, clock) = serve_watched(settings(10, true)).await;
    let task = srv
        .send_task(crate::support::Binding::JsonRpc, send_with_hook(&url))
        .await;
    let task_id = task["id"].as_str().expect("id").to_owned();
    // Attempt 1 fails (500): retried after the first backoff, 0.5 to 1 s.
    let first = got.recv().await.expect("attempt 1");
    store.finished.notified().await;
    let row = rows(&store).await.remove(0);
    let t0 = row.first_attempt_ms.expect("attempted");
    assert_eq!((row.attempts, row.status), (1, DeliveryStatus::Pending));
    assert!((t0 + 500..=t0 + 1_000).contains(&row.due_ms), "{row:?}");
    assert!(
        row.last_error.as_deref().is_some_and(|e| e.contains("500")),
        "{row:?}"
    );
    clock.advance(Duration::from_secs(1));
    // Attempt 2 gets 503 with Retry-After: 7 s, longer than the backoff (1 to 2 s).
    let second = got.recv().await.expect("attempt 2");
    store.finished.notified().await;
    let row = rows(&store).await.remove(0);
    assert_eq!(row.due_ms, t0 + 1_000 + 7_000, "{row:?}");
    clock.advance(Duration::from_secs(7));
    // Attempt 3 fails again: the backoff doubles (2 to 4 s).
    let third = got.recv().await.expect("attempt 3");
    store.finished.notified().await;
    let row = rows(&store).await.remove(0);
    let at = t0 + 8_000;
    assert!((at + 2_000..=at + 4_000).contains(&row.due_ms), "{row:?}");
    clock.advance(Duration::from_secs(4));
    // Attempt 4 is taken; the task's other events follow, in order.
    let mut delivered = vec![got.recv().await.expect("attempt 4")];
    while !kind(&delivered.last().expect("one").body).contains("COMPLETED") {
        delivered.push(got.recv().await.expect("the next event"));
    }
    let id = |r: &Received| {
        r.headers["a2a-delivery-id"]
            .to_str()
            .expect("id")
            .to_owned()
    };
    for attempt in [&first, &second, &third] {
        assert_eq!(id(attempt), id(&delivered[0]), "one id across the retries");
    }
    let kinds: Vec<String> = delivered.iter().map(|r| kind(&r.body)).collect();
    assert_eq!(
        kinds.first().map(String::as_str),
        Some("task:TASK_STATE_SUBMITTED"),
        "{kinds:?}"
    );
    let mut ids: Vec<String> = delivered.iter().map(id).collect();
    ids.dedup();
    assert_eq!(ids.len(), delivered.len(), "each event once: {kinds:?}");
    for r in &delivered {
        let h = &r.headers;
        assert_eq!(h["content-type"], "application/a2a+json");
        assert_eq!(h["authorization"], "Bearer cred-1");
        assert_eq!(h["x-a2a-notification-token"], "tok-1");
        assert_eq!(h["a2a-notification-token"], "tok-1");
        assert!(
            !h.contains_key("a2a-push-signature"),
            "no signing key, no signature"
        );
        assert!(r.body.to_string().contains(&task_id));
    }
    store.finished.notified().await;
    let all = rows(&store).await;
    let seqs: Vec<u64> = all.iter().map(|d| d.seq).collect();
    assert_eq!(seqs, (1..=delivered.len() as u64).collect::<Vec<_>>());
    let metrics = metrics_text(&srv).await;
    assert!(metrics.contains("ferry_push_retried_total 3"), "{metrics}");
    assert!(
        metrics.contains("ferry_push_deliveries_dead 0"),
        "{metrics}"
    );
}

async fn a_receiver_down_past_the_limit_leaves_a_dead_row_a_redelivery_sends() {
    let (url, mut got) = receiver(vec![(500, None), (502, None)]).await;
    let (srv, store, clock) = serve_watched(settings(2, true)).await;
    let task = srv
        .send_task(crate::support::Binding::Rest, send_with_hook(&url))
        .await;
    let task_id = task["id"].as_str().expect("id").to_owned();
    got.recv().await.expect("attempt 1");
    store.finished.notified().await;
    clock.advance(Duration::from_secs(1));
    got.recv().await.expect("attempt 2");
    store.finished.notified().await;
    let dead = rows(&store).await.remove(0);
    assert_eq!(
        (dead.status, dead.attempts),
        (DeliveryStatus::Dead, 2),
        "{dead:?}"
    );
    assert!(
        dead.last_error
            .as_deref()
            .is_some_and(|e| e.contains("attempt 2 of 2")),
        "{dead:?}"
    );
    // The rows after it go on (the receiver is back).
    loop {
        let r = got.recv().await.expect("the next event");
        if kind(&r.body).contains("COMPLETED") {
            break;
        }
    }
    let metrics = metrics_text(&srv).await;
    assert!(
        metrics.contains("ferry_push_deliveries_dead 1"),
        "{metrics}"
    );
    let listed: Value = srv
        .http()
        .get(srv.url(&format!("/rest/tasks/{task_id}/pushNotificationDeliveries")))
        .header("a2a-version", "1.0")
        .send()
        .await
        .expect("deliveries")
        .json()
        .await
        .expect("json");
    assert_eq!(listed["deliveries"][0]["status"], "dead", "{listed}");
    let redelivered = srv
        .http()
        .post(srv.url(&format!(
            "/rest/tasks/{task_id}/pushNotificationDeliveries/{}/redeliver",
            dead.id
        )))
        .header("a2a-version", "1.0")
        .send()
        .await
        .expect("redeliver");
    assert_eq!(redelivered.status(), 200);
    let again = got.recv().await.expect("the redelivery");
    assert_eq!(again.headers["a2a-delivery-id"], dead.id.as_str());
    loop {
        store.finished.notified().await;
        if rows(&store).await[0].status == DeliveryStatus::Delivered {
            break;
        }
    }
    let missing = srv
        .http()
        .post(srv.url(&format!(
            "/rest/tasks/{task_id}/pushNotificationDeliveries/no-such/redeliver"
        )))
        .send()
        .await
        .expect("redeliver");
    assert_eq!(missing.status(), 404);
}

async fn refused_addresses_are_never_dialed() {
    // A listener nobody may reach: loopback, named `localhost`.
    let trap = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    trap.set_nonblocking(true).expect("nonblocking");
    let port = trap.local_addr().expect("addr").port();
    let (srv, store, _clock) = serve_watched(settings(10, false)).await;
    srv.send_task(
        crate::support::Binding::JsonRpc,
        send_with_hook(&format!("https://localhost:{port}/hook")),
    )
    .await;
    first_dies_undialed(&store, &trap, "loopback").await;
}

async fn a_redirect_is_not_followed() {
    let trap = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    trap.set_nonblocking(true).expect("nonblocking");
    let target = format!("http://{}/inside", trap.local_addr().expect("addr"));
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let target = target.clone();
            async move { axum::response::Redirect::temporary(&target) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    let (srv, store, _clock) = serve_watched(settings(10, true)).await;
    srv.send_task(crate::support::Binding::JsonRpc, send_with_hook(&url))
        .await;
    first_dies_undialed(&store, &trap, "redirects are not followed").await;
}

/// A config set over v0.3 gets v0.3-shaped bodies (the event as v0.3 streams it, `kind`
/// tagged); a v1.0 config of the same task gets `StreamResponse`s.
#[cfg(feature = "v03")]
async fn a_v03_config_gets_v03_shaped_deliveries() {
    use crate::support::{Binding, ScriptedAgent, Step};
    let (agent, remote) = ScriptedAgent::new();
    let srv = TestServer::with_parts(
        agent,
        settings(10, true),
        Arc::new(ManualClock::new()),
        None,
    )
    .await;
    let id = srv.start_waiting(Binding::JsonRpc, Value::Null).await;
    remote.started().await;
    let (v03_url, mut v03_got) = receiver(Vec::new()).await;
    let (v1_url, mut v1_got) = receiver(Vec::new()).await;
    // v0.3's method, without A2A-Version (as a v0.3 client sends it).
    let set = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/pushNotificationConfig/set",
        "params": {"taskId": id, "pushNotificationConfig": {"id": "old", "url": v03_url}}});
    let answer: Value = srv
        .http()
        .post(srv.url("/jsonrpc"))
        .json(&set)
        .send()
        .await
        .expect("set")
        .json()
        .await
        .expect("json");
    assert_eq!(
        answer["result"]["pushNotificationConfig"]["id"], "old",
        "{answer}"
    );
    srv.ok(
        Binding::JsonRpc,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": id, "url": v1_url}),
    )
    .await;
    remote.step(Step::Complete);
    let old = v03_got.recv().await.expect("a v0.3 delivery").body;
    assert_eq!(old["kind"], "status-update", "{old}");
    assert_eq!(old["status"]["state"], "completed", "{old}");
    let new = v1_got.recv().await.expect("a v1.0 delivery").body;
    assert_eq!(
        new["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{new}"
    );
}

#[cfg(feature = "v03")]
scenarios!(once: a_v03_config_gets_v03_shaped_deliveries);

scenarios!(once:
    a_receiver_that_fails_three_times_gets_every_event_once_in_order,
    a_receiver_down_past_the_limit_leaves_a_dead_row_a_redelivery_sends,
    refused_addresses_are_never_dialed,
    a_redirect_is_not_followed,
);
