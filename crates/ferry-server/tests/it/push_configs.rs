//! Push-config operations on every binding (points 56, 57, 59 of the spec digest): create
//! gives an id and names the task, Get/List show the config without its token or
//! credentials, an unknown config or task is TaskNotFound, Delete is idempotent, and a
//! config that can never be delivered (a refused address, a bad scheme, a header that would
//! split) or one over the per-task limit is refused with InvalidParams naming why.

use crate::support::{Binding, INVALID_PARAMS, TASK_NOT_FOUND, TestServer, send_params};
use serde_json::{Value, json};

fn hook(task: &str, url: &str) -> Value {
    json!({
        "taskId": task,
        "url": url,
        "token": "secret-token",
        "authentication": {"scheme": "Bearer", "credentials": "secret-credentials"},
    })
}

/// The config as an answer shows it: never its secrets.
fn assert_no_secret(config: &Value) {
    let text = config.to_string();
    assert!(
        !text.contains("secret-token") && !text.contains("secret-credentials"),
        "{text}"
    );
}

async fn configs_are_created_shown_listed_and_deleted(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let task = srv.send_task(b, send_params("ask")).await;
    let task = task["id"].as_str().expect("an id");
    let created = srv
        .ok(
            b,
            "CreateTaskPushNotificationConfig",
            hook(task, "https://hooks.example/a2a"),
        )
        .await;
    assert_no_secret(&created);
    let id = created["id"].as_str().expect("an id was given").to_owned();
    assert_eq!(created["taskId"], task);
    assert_eq!(created["url"], "https://hooks.example/a2a");
    assert_eq!(created["authentication"]["scheme"], "Bearer");
    let mut named = hook(task, "https://hooks.example/second");
    named["id"] = json!("second");
    srv.ok(b, "CreateTaskPushNotificationConfig", named).await;
    let got = srv
        .ok(
            b,
            "GetTaskPushNotificationConfig",
            json!({"taskId": task, "id": id}),
        )
        .await;
    assert_no_secret(&got);
    assert_eq!(got["url"], "https://hooks.example/a2a");
    let listed = srv
        .ok(
            b,
            "ListTaskPushNotificationConfigs",
            json!({"taskId": task}),
        )
        .await;
    assert_no_secret(&listed);
    let ids: Vec<&str> = listed["configs"]
        .as_array()
        .expect("configs")
        .iter()
        .filter_map(|c| c["id"].as_str())
        .collect();
    assert_eq!(ids, [id.as_str(), "second"], "oldest first: {listed}");
    let page = srv
        .ok(
            b,
            "ListTaskPushNotificationConfigs",
            json!({"taskId": task, "pageSize": 1}),
        )
        .await;
    let token = page["nextPageToken"].as_str().expect("a next page");
    let rest = srv
        .ok(
            b,
            "ListTaskPushNotificationConfigs",
            json!({"taskId": task, "pageSize": 1, "pageToken": token}),
        )
        .await;
    assert_eq!(rest["configs"][0]["id"], "second", "{rest}");
    srv.fails(
        b,
        "GetTaskPushNotificationConfig",
        json!({"taskId": task, "id": "no-such-config"}),
    )
    .await
    .assert_is(TASK_NOT_FOUND);
    for _ in 0..2 {
        srv.ok(
            b,
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": task, "id": "second"}),
        )
        .await;
    }
    srv.fails(
        b,
        "CreateTaskPushNotificationConfig",
        hook("no-such-task", "https://hooks.example/a2a"),
    )
    .await
    .assert_is(TASK_NOT_FOUND);
}

async fn undeliverable_configs_are_refused_with_the_reason(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let task = srv.send_task(b, send_params("ask")).await;
    let task = task["id"].as_str().expect("an id");
    for (url, reason) in [
        ("https://127.0.0.1/hook", "loopback"),
        ("https://[::ffff:127.0.0.1]/hook", "loopback"),
        ("https://10.0.0.7/hook", "private"),
        ("https://169.254.169.254/latest/meta-data", "metadata"),
        ("https://[fe80::1]/hook", "link-local"),
        ("http://hooks.example/a2a", "https"),
        ("ftp://hooks.example/a2a", "scheme"),
        ("not a url", "URL"),
    ] {
        let refused = srv
            .fails(b, "CreateTaskPushNotificationConfig", hook(task, url))
            .await;
        refused.assert_is(INVALID_PARAMS);
        let message = refused.body["message"].as_str().unwrap_or_default();
        assert!(message.contains(reason), "{url}: {}", refused.body);
    }
    let mut split = hook(task, "https://hooks.example/a2a");
    split["token"] = json!("a\r\nX-Injected: 1");
    srv.fails(b, "CreateTaskPushNotificationConfig", split)
        .await
        .assert_is(INVALID_PARAMS);
    for n in 0..10 {
        let mut config = hook(task, "https://hooks.example/a2a");
        config["id"] = json!(format!("c{n}"));
        srv.ok(b, "CreateTaskPushNotificationConfig", config).await;
    }
    let mut over = hook(task, "https://hooks.example/a2a");
    over["id"] = json!("one-too-many");
    let refused = srv.fails(b, "CreateTaskPushNotificationConfig", over).await;
    refused.assert_is(INVALID_PARAMS);
    assert!(
        refused.body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("10"),
        "{}",
        refused.body
    );
    let mut replaced = hook(task, "https://hooks.example/other");
    replaced["id"] = json!("c3");
    srv.ok(b, "CreateTaskPushNotificationConfig", replaced)
        .await;
}

scenarios!(per_binding:
    configs_are_created_shown_listed_and_deleted,
    undeliverable_configs_are_refused_with_the_reason,
);
