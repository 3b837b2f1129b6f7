//! Every task belongs to the caller that created it: two callers of one agent (two scoped
//! tokens naming different callers) never list, read, subscribe to, resume, continue or
//! cancel each other's tasks — each is answered exactly as for a task that does not exist —
//! while each sees its own, a second token of the same caller shares them, and an admin token
//! sees every one. `shared_tasks` restores one namespace per tenant. On every binding, over
//! the memory store and over SQLite (the PostgreSQL store runs the same owner checks in the
//! store conformance suite).

use crate::support::{Auth, Binding, ServiceParams, TestServer, WireError, send_params};
use ferry_agents::ConformanceAgent;
use ferry_server::{ScopedToken, ServerConfig, TaskStore};
use serde_json::{Value, json};
use std::sync::Arc;

const ADA: &str = "Bearer ada-token-0123456789";
const ADA_READER: &str = "Bearer ada-reader-0123456789";
const BOB: &str = "Bearer bob-token-0123456789";
const ROOT: &str = "Bearer root-token-0123456789";

fn scoped(token: &str, caller: &str, read_only: bool, admin: bool) -> ScopedToken {
    ScopedToken {
        token: token.trim_start_matches("Bearer ").into(),
        // The agent of a server of one agent has the empty id.
        agents: vec![String::new()],
        read_only,
        caller: Some(caller.into()),
        admin,
    }
}

fn callers(shared_tasks: bool) -> ServerConfig {
    ServerConfig {
        scoped_tokens: vec![
            scoped(ADA, "ada", false, false),
            scoped(ADA_READER, "ada", true, false),
            scoped(BOB, "bob", false, false),
            scoped(ROOT, "root", true, true),
        ],
        shared_tasks,
        ..ServerConfig::default()
    }
}

fn as_(header: &str) -> ServiceParams<'_> {
    ServiceParams {
        auth: Auth::Header(header),
        ..ServiceParams::default()
    }
}

/// A task `who` starts that works until it is canceled (the conformance agent's `ferry-hold`).
async fn held_task(srv: &TestServer, b: Binding, who: &str) -> String {
    let mut params = send_params("hold");
    params["message"]["messageId"] = json!(format!("ferry-hold-{}", uuid()));
    params["configuration"] = json!({"returnImmediately": true});
    let sent = srv
        .call_with(b, "SendMessage", params, as_(who))
        .await
        .result
        .unwrap_or_else(|e| panic!("{who} starts a task over {b:?}: {}", e.body));
    sent["task"]["id"].as_str().expect("a task id").to_owned()
}

fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The error `who` gets for `method` with `params`.
async fn error_of(
    srv: &TestServer,
    b: Binding,
    who: &str,
    method: &str,
    params: Value,
) -> WireError {
    match srv.call_with(b, method, params, as_(who)).await.result {
        Ok(v) => panic!("{method} over {b:?} as {who} succeeded: {v}"),
        Err(e) => e,
    }
}

/// The error of opening `method` as `who`.
async fn stream_error_of(
    srv: &TestServer,
    b: Binding,
    who: &str,
    method: &str,
    params: Value,
    last_event_id: Option<&str>,
) -> WireError {
    let sp = ServiceParams {
        last_event_id,
        ..as_(who)
    };
    match srv.stream_with(b, method, params, sp).await.1 {
        Ok(_) => panic!("{method} over {b:?} as {who} opened a stream"),
        Err(e) => e,
    }
}

/// The same refusal, whatever the task id: what a caller learns of another's task (`theirs`)
/// is what it learns of one that does not exist (`none`).
#[track_caller]
fn assert_not_found_alike(theirs: (&WireError, &str), none: (&WireError, &str), what: &str) {
    let ((theirs, their_id), (none, none_id)) = (theirs, none);
    assert_eq!(theirs.reason(), "TASK_NOT_FOUND", "{what}: {}", theirs.body);
    assert_eq!(theirs.reason(), none.reason(), "{what}");
    assert_eq!(theirs.http_status, none.http_status, "{what}");
    assert_eq!(
        theirs.message().replace(their_id, "ID"),
        none.message().replace(none_id, "ID"),
        "{what}: the messages differ only in the id"
    );
}

/// The ids of the tasks `who` lists.
async fn listed(srv: &TestServer, b: Binding, who: &str) -> Vec<String> {
    let page = srv
        .call_with(b, "ListTasks", json!({}), as_(who))
        .await
        .result
        .unwrap_or_else(|e| panic!("{who} lists over {b:?}: {}", e.body));
    let mut ids: Vec<String> = page["tasks"]
        .as_array()
        .map(|tasks| {
            tasks
                .iter()
                .filter_map(|t| t["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

/// The state of task `id` as `who` reads it.
async fn state(srv: &TestServer, b: Binding, who: &str, id: &str) -> String {
    let task = srv
        .call_with(b, "GetTask", json!({"id": id}), as_(who))
        .await
        .result
        .unwrap_or_else(|e| panic!("{who} reads {id} over {b:?}: {}", e.body));
    task["status"]["state"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The two callers, their operations on each other's task, and the admin.
async fn two_callers_never_meet(srv: &TestServer, b: Binding) {
    let adas = held_task(srv, b, ADA).await;
    let bobs = held_task(srv, b, BOB).await;
    let none = uuid();

    // Bob asks for Ada's task every way there is; each answer is that of a task that
    // does not exist.
    let theirs = |id: &str| json!({"id": id});
    for method in ["GetTask", "CancelTask"] {
        let refused = error_of(srv, b, BOB, method, theirs(&adas)).await;
        let missing = error_of(srv, b, BOB, method, theirs(&none)).await;
        assert_not_found_alike((&refused, &adas), (&missing, &none), method);
    }
    let refused = stream_error_of(srv, b, BOB, "SubscribeToTask", theirs(&adas), None).await;
    let missing = stream_error_of(srv, b, BOB, "SubscribeToTask", theirs(&none), None).await;
    assert_not_found_alike((&refused, &adas), (&missing, &none), "SubscribeToTask");
    if b != Binding::Grpc {
        // Resuming a stream of Ada's task from an event id.
        let refused =
            stream_error_of(srv, b, BOB, "SubscribeToTask", theirs(&adas), Some("1")).await;
        assert_eq!(
            refused.reason(),
            "TASK_NOT_FOUND",
            "resume: {}",
            refused.body
        );
    }
    let mut continued = send_params("me too");
    continued["message"]["taskId"] = json!(adas);
    let refused = error_of(srv, b, BOB, "SendMessage", continued.clone()).await;
    continued["message"]["taskId"] = json!(none);
    let missing = error_of(srv, b, BOB, "SendMessage", continued).await;
    assert_not_found_alike(
        (&refused, &adas),
        (&missing, &none),
        "SendMessage to a task",
    );

    // Nothing Bob tried touched Ada's task; each lists and reads its own.
    assert_eq!(state(srv, b, ADA, &adas).await, "TASK_STATE_WORKING");
    assert_eq!(listed(srv, b, ADA).await, [adas.as_str()]);
    assert_eq!(listed(srv, b, BOB).await, [bobs.as_str()]);
    assert_eq!(state(srv, b, BOB, &bobs).await, "TASK_STATE_WORKING");
    // Another token of Ada's (read-only) is the same caller: it sees her tasks.
    assert_eq!(listed(srv, b, ADA_READER).await, [adas.as_str()]);
    assert_eq!(state(srv, b, ADA_READER, &adas).await, "TASK_STATE_WORKING");

    // The admin sees both, and each caller still cancels its own.
    assert_eq!(
        listed(srv, b, ROOT).await,
        sorted(vec![adas.clone(), bobs.clone()])
    );
    assert_eq!(state(srv, b, ROOT, &bobs).await, "TASK_STATE_WORKING");
    for (who, id) in [(ADA, &adas), (BOB, &bobs)] {
        let canceled = srv
            .call_with(b, "CancelTask", json!({"id": id}), as_(who))
            .await
            .result
            .unwrap_or_else(|e| panic!("{who} cancels its task: {}", e.body));
        assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
    }
}

async fn tasks_belong_to_their_callers(b: Binding) {
    let srv = TestServer::with_config(ConformanceAgent::default(), callers(false)).await;
    two_callers_never_meet(&srv, b).await;
}

/// The same over SQLite: the owner is written with the task and read back with it.
async fn tasks_belong_to_their_callers_in_sqlite(b: Binding) {
    let dir = tempdir();
    let store: Arc<dyn TaskStore> =
        ferry_store_sql::open(&format!("sqlite:{}", dir.join("tasks.db").display()))
            .await
            .expect("open sqlite");
    let clock = Arc::new(ferry_server::clock::TokioClock);
    let srv = TestServer::with_parts(
        ConformanceAgent::default(),
        callers(false),
        clock,
        Some(store),
    )
    .await;
    two_callers_never_meet(&srv, b).await;
    drop(srv);
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ferry-ownership-{}", uuid()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// `shared_tasks = true`: one namespace per tenant again; Bob lists and reads Ada's task.
async fn shared_tasks_are_one_namespace(b: Binding) {
    let srv = TestServer::with_config(ConformanceAgent::default(), callers(true)).await;
    let adas = held_task(&srv, b, ADA).await;
    assert_eq!(listed(&srv, b, BOB).await, [adas.as_str()]);
    assert_eq!(state(&srv, b, BOB, &adas).await, "TASK_STATE_WORKING");
    let canceled = srv
        .call_with(b, "CancelTask", json!({"id": adas}), as_(BOB))
        .await
        .result
        .unwrap_or_else(|e| panic!("Bob cancels Ada's shared task: {}", e.body));
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
}

/// Callers without credentials, where they are let in: their tasks are reached by id alone
/// (by any caller without credentials: the id is the capability), never listed (they name no
/// one, so a listing would show strangers' tasks to each other), and never seen by a caller
/// with a token; they see no such caller's tasks either.
async fn anonymous_tasks_are_reached_by_id_only(b: Binding) {
    let config = ServerConfig {
        allow_anonymous: true,
        ..callers(false)
    };
    let srv = TestServer::with_config(ConformanceAgent::default(), config).await;
    let anonymous = ServiceParams {
        auth: Auth::Anonymous,
        ..ServiceParams::default()
    };
    let mut params = send_params("hold");
    params["message"]["messageId"] = json!(format!("ferry-hold-{}", uuid()));
    params["configuration"] = json!({"returnImmediately": true});
    let sent = srv
        .call_with(b, "SendMessage", params, anonymous)
        .await
        .result
        .unwrap_or_else(|e| panic!("an anonymous send over {b:?}: {}", e.body));
    let theirs = sent["task"]["id"].as_str().expect("a task id").to_owned();
    let got = srv
        .call_with(b, "GetTask", json!({"id": theirs}), anonymous)
        .await
        .result
        .unwrap_or_else(|e| panic!("an anonymous caller reads its task: {}", e.body));
    assert_eq!(got["id"], theirs.as_str());
    let page = srv
        .call_with(b, "ListTasks", json!({}), anonymous)
        .await
        .result
        .unwrap_or_else(|e| panic!("an anonymous listing: {}", e.body));
    assert_eq!(page["tasks"], json!([]), "{page}");
    assert_eq!(
        page.get("totalSize").and_then(Value::as_i64).unwrap_or(0),
        0
    );
    let refused = error_of(&srv, b, ADA, "GetTask", json!({"id": theirs})).await;
    assert_eq!(refused.reason(), "TASK_NOT_FOUND", "{}", refused.body);
    let adas = held_task(&srv, b, ADA).await;
    let refused = srv
        .call_with(b, "GetTask", json!({"id": adas}), anonymous)
        .await
        .result
        .expect_err("Ada's task is not an anonymous caller's");
    assert_eq!(refused.reason(), "TASK_NOT_FOUND", "{}", refused.body);
    assert_eq!(listed(&srv, b, ROOT).await.len(), 2, "the admin sees both");
}

/// A2A v0.3's methods run through the same core: `tasks/get` and `tasks/cancel` of another
/// caller's task are -32001 (task not found), as for a task that does not exist.
async fn v03_methods_keep_tasks_apart() {
    let srv = TestServer::with_config(ConformanceAgent::default(), callers(false)).await;
    let adas = held_task(&srv, Binding::JsonRpc, ADA).await;
    let v03 = |who: &'static str, method: &'static str, id: &str| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"id": id}});
        let srv = &srv;
        async move {
            let headers = [("content-type", "application/json"), ("authorization", who)];
            srv.request_json(
                reqwest::Method::POST,
                "/jsonrpc",
                &headers,
                &body.to_string(),
            )
            .await
            .1
        }
    };
    for method in ["tasks/get", "tasks/cancel"] {
        let answer = v03(BOB, method, &adas).await;
        assert_eq!(answer["error"]["code"], -32001, "{method}: {answer}");
    }
    let answer = v03(ADA, "tasks/get", &adas).await;
    assert_eq!(answer["result"]["id"], adas.as_str(), "{answer}");
    assert_eq!(answer["result"]["status"]["state"], "working", "{answer}");
}

scenarios!(per_binding:
    tasks_belong_to_their_callers,
    tasks_belong_to_their_callers_in_sqlite,
    shared_tasks_are_one_namespace,
    anonymous_tasks_are_reached_by_id_only,
);

#[cfg(feature = "v03")]
scenarios!(once: v03_methods_keep_tasks_apart);
