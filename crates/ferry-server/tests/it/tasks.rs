//! The tasks API on both bindings (§16 points 36, 48–54): GetTask against send and stream
//! results, ListTasks paging, page sizes, tokens, order, filters and artifacts, historyLength
//! on GetTask and ListTasks, tenants kept apart (the stand-in for other principals until
//! authentication exists), and CancelTask.

use crate::support::{
    Binding, INVALID_PARAMS, TASK_NOT_CANCELABLE, TASK_NOT_FOUND, TestServer, is_rfc3339_utc, keys,
    pluck, send_params, state_of,
};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// Creates `n` completed tasks (in `context`, when given); returns their ids in order.
async fn completed_tasks(
    srv: &TestServer,
    b: Binding,
    n: usize,
    context: Option<&str>,
) -> Vec<String> {
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        let mut params = send_params(&format!("task {i}"));
        if let Some(c) = context {
            params["message"]["contextId"] = json!(c);
        }
        let task = srv.send_task(b, params).await;
        ids.push(task["id"].as_str().expect("an id").to_owned());
    }
    ids
}

/// ListTasks, checking that all four response fields are present and typed.
async fn list(srv: &TestServer, b: Binding, params: Value) -> Value {
    let page = srv.ok(b, "ListTasks", params).await;
    let members: BTreeSet<&str> = keys(&page).into_iter().collect();
    assert_eq!(
        members,
        BTreeSet::from(["nextPageToken", "pageSize", "tasks", "totalSize"]),
        "{page}"
    );
    assert!(
        page["tasks"].is_array() && page["nextPageToken"].is_string(),
        "{page}"
    );
    assert!(
        page["pageSize"].is_i64() && page["totalSize"].is_i64(),
        "{page}"
    );
    page
}

fn ids_of(page: &Value) -> Vec<String> {
    let ids = pluck(&page["tasks"], "id");
    ids.into_iter()
        .map(|id| id.as_str().expect("a string id").to_owned())
        .collect()
}

/// Point 48: GetTask shows what the send and the stream ended with.
async fn get_task_matches_send_and_stream(b: Binding) {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let sent = srv.send_task(b, send_params("hello")).await;
    assert_eq!(srv.ok(b, "GetTask", json!({"id": sent["id"]})).await, sent);

    let mut stream = srv
        .open(b, "SendStreamingMessage", send_params("hello"))
        .await;
    let events = stream.remaining().await;
    let task = &events[0]["task"];
    let last = &events.last().expect("events")["statusUpdate"];
    let got = srv.ok(b, "GetTask", json!({"id": task["id"]})).await;
    assert_eq!(
        (&got["id"], &got["contextId"]),
        (&task["id"], &task["contextId"])
    );
    assert_eq!(
        got["status"], last["status"],
        "the final status, timestamp included"
    );
}

/// Point 49: all four fields always; paging visits every task exactly once and the last page
/// has an empty token.
async fn list_pages_visit_every_task_once(b: Binding) {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let empty = list(&srv, b, json!({})).await;
    assert_eq!(
        (
            &empty["tasks"],
            &empty["nextPageToken"],
            &empty["totalSize"]
        ),
        (&json!([]), &json!(""), &json!(0))
    );
    let created: BTreeSet<String> = completed_tasks(&srv, b, 7, None)
        .await
        .into_iter()
        .collect();
    let mut seen = Vec::new();
    let mut token = String::new();
    let mut sizes = Vec::new();
    loop {
        let mut params = json!({"pageSize": 3});
        if !token.is_empty() {
            params["pageToken"] = json!(token);
        }
        let page = list(&srv, b, params).await;
        assert_eq!(
            (&page["pageSize"], &page["totalSize"]),
            (&json!(3), &json!(7)),
            "{page}"
        );
        let ids = ids_of(&page);
        sizes.push(ids.len());
        seen.extend(ids);
        token = page["nextPageToken"].as_str().expect("a token").to_owned();
        if token.is_empty() {
            break;
        }
    }
    assert_eq!(sizes, [3, 3, 1]);
    assert_eq!(seen.len(), created.len(), "no task twice: {seen:?}");
    assert_eq!(seen.into_iter().collect::<BTreeSet<_>>(), created);
}

/// Point 50: the default page size is 50; 1..=100 is allowed; anything else and a token the
/// server did not issue are InvalidParams.
async fn list_page_size_and_token(b: Binding) {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    completed_tasks(&srv, b, 51, None).await;
    let first = list(&srv, b, json!({})).await;
    assert_eq!(
        (&first["pageSize"], &first["totalSize"]),
        (&json!(50), &json!(51))
    );
    assert_eq!(ids_of(&first).len(), 50);
    let token = first["nextPageToken"].as_str().expect("a token");
    assert!(!token.is_empty());
    let second = list(&srv, b, json!({"pageToken": token})).await;
    assert_eq!(
        (ids_of(&second).len(), &second["nextPageToken"]),
        (1, &json!(""))
    );
    for (size, len) in [(1, 1), (100, 51)] {
        assert_eq!(
            ids_of(&list(&srv, b, json!({"pageSize": size})).await).len(),
            len,
            "pageSize {size}"
        );
    }
    for size in [0, 101, -1] {
        srv.fails(b, "ListTasks", json!({"pageSize": size}))
            .await
            .assert_is(INVALID_PARAMS);
    }
    for token in ["garbage", "djE6bm9jb2xvbg", "%%%"] {
        srv.fails(b, "ListTasks", json!({"pageToken": token}))
            .await
            .assert_is(INVALID_PARAMS);
    }
}

/// Point 51: newest status first; `status`, `contextId` and `statusTimestampAfter` (≥)
/// filter, alone and together, and `totalSize` counts the matches.
async fn list_order_and_filters(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let in_a = completed_tasks(&srv, b, 3, Some("ctx-a")).await;
    let in_b = completed_tasks(&srv, b, 2, Some("ctx-b")).await;
    let mut ask = send_params("ask");
    ask["message"]["contextId"] = json!("ctx-a");
    let waiting = srv.send_task(b, ask).await;
    let all = list(&srv, b, json!({})).await;
    let tasks = all["tasks"].as_array().expect("tasks");
    assert_eq!((tasks.len(), &all["totalSize"]), (6, &json!(6)));
    let stamps: Vec<&str> = tasks
        .iter()
        .map(|t| t["status"]["timestamp"].as_str().expect("a timestamp"))
        .collect();
    assert!(
        stamps.iter().all(|s| is_rfc3339_utc(s) && s.len() == 24),
        "millisecond UTC stamps: {stamps:?}"
    );
    assert!(
        stamps.windows(2).all(|w| w[0] >= w[1]),
        "newest first: {stamps:?}"
    );

    let by_context = list(&srv, b, json!({"contextId": "ctx-b"})).await;
    assert_eq!(
        ids_of(&by_context).into_iter().collect::<BTreeSet<_>>(),
        in_b.iter().cloned().collect()
    );
    assert_eq!(by_context["totalSize"], 2);
    let by_status = list(&srv, b, json!({"status": "TASK_STATE_INPUT_REQUIRED"})).await;
    assert_eq!(ids_of(&by_status), [waiting["id"].as_str().expect("an id")]);
    let both = list(
        &srv,
        b,
        json!({"status": "TASK_STATE_COMPLETED", "contextId": "ctx-a"}),
    )
    .await;
    assert_eq!(
        ids_of(&both).into_iter().collect::<BTreeSet<_>>(),
        in_a.iter().cloned().collect()
    );
    assert_eq!(
        list(&srv, b, json!({"status": "TASK_STATE_UNSPECIFIED"})).await["totalSize"],
        6,
        "UNSPECIFIED is no filter"
    );

    let cut = stamps[3];
    let expected: BTreeSet<&str> = tasks
        .iter()
        .filter(|t| t["status"]["timestamp"].as_str() >= Some(cut))
        .map(|t| t["id"].as_str().expect("id"))
        .collect();
    let after = list(&srv, b, json!({"statusTimestampAfter": cut})).await;
    assert_eq!(
        ids_of(&after)
            .iter()
            .map(String::as_str)
            .collect::<BTreeSet<_>>(),
        expected,
        "≥ {cut}"
    );
    assert_eq!(after["totalSize"], expected.len());
    let future = list(
        &srv,
        b,
        json!({"statusTimestampAfter": "2999-01-01T00:00:00Z"}),
    )
    .await;
    assert_eq!(future["totalSize"], 0);
}

/// Point 52: without `includeArtifacts` (or with false) the `artifacts` key is absent; with
/// true, present.
async fn list_include_artifacts(b: Binding) {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    completed_tasks(&srv, b, 2, None).await;
    for params in [json!({}), json!({"includeArtifacts": false})] {
        let page = list(&srv, b, params.clone()).await;
        assert!(
            page["tasks"]
                .as_array()
                .expect("tasks")
                .iter()
                .all(|t| t.get("artifacts").is_none()),
            "{params}: {page}"
        );
    }
    let page = list(&srv, b, json!({"includeArtifacts": true})).await;
    for task in page["tasks"].as_array().expect("tasks") {
        assert_eq!(task["artifacts"][0]["artifactId"], "echo", "{task}");
    }
}

/// Point 36 on GetTask and ListTasks.
async fn history_length_on_get_and_list(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let task = srv.send_task(b, send_params("ask")).await;
    let id = task["id"].clone();
    let mut more = send_params("more");
    more["message"]["taskId"] = id.clone();
    let full = srv.send_task(b, more).await["history"].clone();
    let full = full.as_array().expect("history");
    assert_eq!(full.len(), 4);
    for (n, expected) in [(1, &full[3..]), (3, &full[1..]), (10, &full[..])] {
        let got = srv
            .ok(b, "GetTask", json!({"id": id, "historyLength": n}))
            .await;
        assert_eq!(
            got["history"].as_array().map(Vec::as_slice),
            Some(expected),
            "historyLength {n}"
        );
    }
    let none = srv
        .ok(b, "GetTask", json!({"id": id, "historyLength": 0}))
        .await;
    assert!(none.get("history").is_none(), "{none}");
    srv.fails(b, "GetTask", json!({"id": id, "historyLength": -1}))
        .await
        .assert_is(INVALID_PARAMS);

    let page = list(&srv, b, json!({"historyLength": 1})).await;
    assert_eq!(
        page["tasks"][0]["history"].as_array().map(Vec::as_slice),
        Some(&full[3..])
    );
    let page = list(&srv, b, json!({"historyLength": 0})).await;
    assert!(page["tasks"][0].get("history").is_none(), "{page}");
    srv.fails(b, "ListTasks", json!({"historyLength": -2}))
        .await
        .assert_is(INVALID_PARAMS);
}

/// Point 53, as tenants: a task made under tenant t1 is invisible under t2 and under no
/// tenant, and its refusal looks exactly like a missing id's.
async fn tenants_are_kept_apart(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let mut params = send_params("ask");
    params["tenant"] = json!("t1");
    let task = srv.send_task(b, params).await;
    let id = task["id"].as_str().expect("an id");
    assert_eq!(
        srv.ok(b, "GetTask", json!({"id": id, "tenant": "t1"}))
            .await["id"],
        id
    );
    assert_eq!(list(&srv, b, json!({"tenant": "t1"})).await["totalSize"], 1);

    for tenant in [json!("t2"), Value::Null] {
        let scoped = |mut p: Value| {
            p["tenant"] = tenant.clone();
            p
        };
        assert_eq!(
            list(&srv, b, scoped(json!({}))).await["totalSize"],
            0,
            "tenant {tenant}"
        );
        let calls = |task_id: &str| {
            let m = json!({"messageId": "m", "role": "ROLE_USER", "taskId": task_id, "parts": [{"text": "x"}]});
            [
                ("GetTask", json!({"id": task_id})),
                ("CancelTask", json!({"id": task_id})),
                ("SendMessage", json!({"message": m})),
            ]
        };
        for ((method, params), (_, missing)) in calls(id).into_iter().zip(calls("missing-id")) {
            let hidden = srv.fails(b, method, scoped(params)).await;
            hidden.assert_is(TASK_NOT_FOUND);
            let missing = srv.fails(b, method, scoped(missing)).await;
            // Identical but for the task id and the request id (each request has its own).
            let strip = |body: &Value| {
                let mut body = body.clone();
                strip_request_ids(&mut body);
                body.to_string()
            };
            assert_eq!(
                strip(&hidden.body).replace(id, "missing-id"),
                strip(&missing.body),
                "{method}"
            );
        }
        srv.stream_fails(b, "SubscribeToTask", scoped(json!({"id": id})))
            .await
            .assert_is(TASK_NOT_FOUND);
    }
    let still = srv
        .ok(b, "GetTask", json!({"id": id, "tenant": "t1"}))
        .await;
    assert_eq!(
        still["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "nothing touched the task: {still}"
    );
}

/// A tenant is the same tenant on both bindings: REST's path prefix and JSON-RPC's
/// `params.tenant`.
async fn tenant_spans_bindings() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let mut params = send_params("hi");
    params["tenant"] = json!("t1");
    let task = srv.send_task(Binding::Rest, params).await;
    let got = srv
        .ok(
            Binding::JsonRpc,
            "GetTask",
            json!({"id": task["id"], "tenant": "t1"}),
        )
        .await;
    assert_eq!(got["id"], task["id"]);
    srv.fails(Binding::JsonRpc, "GetTask", json!({"id": task["id"]}))
        .await
        .assert_is(TASK_NOT_FOUND);
}

/// With `tenants` configured, only those tenants are served (point 65, server side): another
/// tenant, or none, is InvalidParams.
async fn configured_tenants_refuse_others(b: Binding) {
    let config = ferry_server::ServerConfig {
        tenants: vec!["t1".into()],
        ..Default::default()
    };
    let srv = TestServer::with_config(ferry_agents::EchoAgent, config).await;
    let mut params = send_params("hi");
    params["tenant"] = json!("t1");
    let task = srv.send_task(b, params.clone()).await;
    for tenant in [json!("t2"), Value::Null] {
        params["tenant"] = tenant.clone();
        srv.fails(b, "SendMessage", params.clone())
            .await
            .assert_is(INVALID_PARAMS);
        srv.fails(b, "ListTasks", json!({"tenant": tenant}))
            .await
            .assert_is(INVALID_PARAMS);
        srv.fails(b, "GetTask", json!({"id": task["id"], "tenant": tenant}))
            .await
            .assert_is(INVALID_PARAMS);
    }
}

/// Point 54: cancelling a working task answers CANCELED, wakes a blocked sender with it, ends
/// open streams with it, and a second cancel is TaskNotCancelable.
async fn cancel_working_task(b: Binding) {
    let (srv, remote) = TestServer::scripted().await;
    let (blocked, (id, canceled, streamed)) =
        tokio::join!(srv.send_task(b, send_params("wait")), async {
            let id = remote.started().await;
            let mut stream = srv.open(b, "SubscribeToTask", json!({"id": id})).await;
            let first = stream.next_ok().await;
            assert_eq!(state_of(&first), Some("TASK_STATE_WORKING"));
            let canceled = srv.ok(b, "CancelTask", json!({"id": id})).await;
            (id, canceled, stream.remaining().await)
        });
    assert_eq!(
        (canceled["id"].as_str(), &canceled["status"]["state"]),
        (Some(id.as_str()), &json!("TASK_STATE_CANCELED"))
    );
    assert_eq!(
        blocked["status"]["state"], "TASK_STATE_CANCELED",
        "the blocked send returned: {blocked}"
    );
    assert_eq!(
        streamed.iter().map(state_of).collect::<Vec<_>>(),
        [Some("TASK_STATE_CANCELED")]
    );
    assert_eq!(
        srv.ok(b, "GetTask", json!({"id": id})).await["status"]["state"],
        "TASK_STATE_CANCELED"
    );
    let again = srv.fails(b, "CancelTask", json!({"id": id})).await;
    again.assert_is(TASK_NOT_CANCELABLE);
    assert_eq!(again.meta("taskId"), Some(id.as_str()));
}

/// Point 54: an interrupted task can be canceled; a completed one cannot; an unknown one is
/// not found.
async fn cancel_other_states(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let asking = srv.send_task(b, send_params("ask")).await;
    let canceled = srv.ok(b, "CancelTask", json!({"id": asking["id"]})).await;
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
    let done = srv.send_task(b, send_params("hello")).await;
    srv.fails(b, "CancelTask", json!({"id": done["id"]}))
        .await
        .assert_is(TASK_NOT_CANCELABLE);
    assert_eq!(
        srv.ok(b, "GetTask", json!({"id": done["id"]})).await["status"],
        done["status"],
        "unchanged"
    );
    srv.fails(b, "CancelTask", json!({"id": "no-such-task"}))
        .await
        .assert_is(TASK_NOT_FOUND);
}

scenarios!(per_binding:
    get_task_matches_send_and_stream,
    list_pages_visit_every_task_once,
    list_page_size_and_token,
    list_order_and_filters,
    list_include_artifacts,
    history_length_on_get_and_list,
    tenants_are_kept_apart,
    configured_tenants_refuse_others,
    cancel_working_task,
    cancel_other_states,
);

scenarios!(once: tenant_spans_bindings);

/// Removes every `requestId` member, at any depth.
fn strip_request_ids(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.remove("requestId");
            map.values_mut().for_each(strip_request_ids);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_request_ids),
        _ => {}
    }
}
