//! SendMessage semantics on both bindings (§16 points 12, 13, 28–37): blocking and
//! `returnImmediately`, context and task ids, multi-turn continuation and its refusals,
//! content-type refusal, `historyLength`, direct replies, agent failures, and the
//! ConformanceAgent's `ferry-turns-3` scenario.

use crate::support::{
    Binding, CONTENT_TYPE_NOT_SUPPORTED, INVALID_AGENT_RESPONSE, INVALID_PARAMS, PANIC_DETAIL,
    Step, TASK_NOT_FOUND, TestServer, UNSUPPORTED_OPERATION, keys, message, pluck, send_params,
    state_of,
};
use serde_json::{Value, json};

/// A follow-up message for `task_id` (and `context_id`, when given).
fn follow_up(text: &str, task_id: &Value, context_id: Option<&Value>) -> Value {
    let mut m = message(text);
    m["taskId"] = task_id.clone();
    if let Some(c) = context_id {
        m["contextId"] = c.clone();
    }
    json!({"message": m})
}

/// The number of tasks ListTasks reports.
async fn task_count(srv: &TestServer, b: Binding) -> i64 {
    srv.ok(b, "ListTasks", json!({})).await["totalSize"]
        .as_i64()
        .expect("totalSize")
}

/// Point 28: a blocking send returns the task finished, with every artifact (the echo agent's
/// two chunks appended into one artifact) and the user's message in its history.
async fn blocking_send_returns_the_finished_task(b: Binding) {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let params = send_params("hello");
    let task = srv.send_task(b, params.clone()).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    assert_eq!(
        task["artifacts"],
        json!([{"artifactId": "echo", "name": "echo", "parts": [{"text": "he"}, {"text": "llo"}]}])
    );
    let history = task["history"].as_array().expect("history");
    assert_eq!(history.len(), 1, "{task}");
    assert_eq!(history[0]["messageId"], params["message"]["messageId"]);
    assert_eq!(history[0]["taskId"], task["id"]);
    assert_eq!(history[0]["contextId"], task["contextId"]);
}

/// Point 28: a blocking send also returns at an interrupted state, with the agent's question.
async fn blocking_send_returns_at_input_required(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let task = srv.send_task(b, send_params("ask")).await;
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{task}"
    );
    let question = &task["status"]["message"];
    assert_eq!(question["role"], "ROLE_AGENT", "{task}");
    assert_eq!(question["parts"], json!([{"text": "what next?"}]));
    assert_eq!(question["taskId"], task["id"]);
    assert_eq!(question["contextId"], task["contextId"]);
}

/// Point 29: `returnImmediately` answers before the agent finishes; GetTask then shows the
/// task progress to its terminal state.
async fn return_immediately(b: Binding) {
    let (srv, remote) = TestServer::scripted().await;
    let mut params = send_params("wait");
    params["configuration"] = json!({"returnImmediately": true});
    let task = srv.send_task(b, params).await;
    let state = task["status"]["state"].as_str().expect("a state");
    assert!(
        ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"].contains(&state),
        "{task}"
    );
    let id = task["id"].clone();
    let now = srv.ok(b, "GetTask", json!({"id": id})).await;
    assert_eq!(now["status"]["state"], "TASK_STATE_WORKING", "{now}");
    remote.step(Step::Complete);
    assert_eq!(remote.finished().await, id.as_str().expect("a string id"));
    let done = srv.ok(b, "GetTask", json!({"id": id})).await;
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
}

/// Point 30: without a contextId the server makes one; sending it back (no taskId) starts a
/// new task in the same context. A client's own contextId is kept.
async fn context_ids(b: Binding) {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let first = srv.send_task(b, send_params("one")).await;
    let context = first["contextId"].clone();
    assert!(context.as_str().is_some_and(|c| !c.is_empty()), "{first}");
    let mut again = send_params("two");
    again["message"]["contextId"] = context.clone();
    let second = srv.send_task(b, again).await;
    assert_eq!(second["contextId"], context);
    assert_ne!(second["id"], first["id"], "a new task");
    let mut own = send_params("three");
    own["message"]["contextId"] = json!("client-context-1");
    assert_eq!(srv.send_task(b, own).await["contextId"], "client-context-1");
}

/// Point 31: a message with only the taskId of an INPUT_REQUIRED task continues it, in the
/// task's context; `done` (with both ids) completes it.
async fn continue_input_required_task(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let task = srv.send_task(b, send_params("ask")).await;
    let (id, context) = (&task["id"], &task["contextId"]);
    let next = srv.send_task(b, follow_up("more", id, None)).await;
    assert_eq!((&next["id"], &next["contextId"]), (id, context), "{next}");
    assert_eq!(
        next["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{next}"
    );
    assert_eq!(
        pluck(&next["history"], "role"),
        ["ROLE_USER", "ROLE_AGENT", "ROLE_USER", "ROLE_AGENT"],
        "{next}"
    );
    let done = srv.send_task(b, follow_up("done", id, Some(context))).await;
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(
        done["status"]["message"]["parts"],
        json!([{"text": "finished"}])
    );
}

/// Point 32: taskId with another contextId is InvalidParams and changes nothing.
async fn mismatched_context_is_refused(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let task = srv.send_task(b, send_params("ask")).await;
    let e = srv
        .fails(
            b,
            "SendMessage",
            follow_up("more", &task["id"], Some(&json!("another-context"))),
        )
        .await;
    e.assert_is(INVALID_PARAMS);
    assert_eq!(task_count(&srv, b).await, 1, "no task was created");
    let now = srv.ok(b, "GetTask", json!({"id": task["id"]})).await;
    assert_eq!(
        now["history"], task["history"],
        "the task did not take the message"
    );
    assert_eq!(now["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
}

/// Points 33 and 37: a taskId the server never issued is TaskNotFound; nothing is created.
async fn invented_task_id_is_not_found(b: Binding) {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let e = srv
        .fails(
            b,
            "SendMessage",
            follow_up("hi", &json!("invented-by-client"), None),
        )
        .await;
    e.assert_is(TASK_NOT_FOUND);
    assert_eq!(e.meta("taskId"), Some("invented-by-client"));
    assert_eq!(task_count(&srv, b).await, 0);
}

/// Point 34: a terminal task takes no more messages (UnsupportedOperation).
async fn terminal_task_takes_no_messages(b: Binding) {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let task = srv.send_task(b, send_params("hello")).await;
    let e = srv
        .fails(b, "SendMessage", follow_up("again", &task["id"], None))
        .await;
    e.assert_is(UNSUPPORTED_OPERATION);
    assert_eq!(e.meta("taskId"), task["id"].as_str());
    let now = srv.ok(b, "GetTask", json!({"id": task["id"]})).await;
    assert_eq!(
        now["history"].as_array().map(Vec::len),
        Some(1),
        "the message was not added: {now}"
    );
}

/// Point 35: a part of a media type the agent does not take is ContentTypeNotSupported, and
/// no task is created. The part spells the field `media_type` (the proto name, which servers
/// also accept); `media_type_in_camel_case` below covers `mediaType`.
async fn unsupported_media_type(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    srv.fails(b, "SendMessage", png_message("media_type"))
        .await
        .assert_is(CONTENT_TYPE_NOT_SUPPORTED);
    assert_eq!(task_count(&srv, b).await, 0);
}

/// A message with a text part and a PNG part whose media type is under `field`.
fn png_message(field: &str) -> Value {
    let mut png = json!({"raw": "iVBORw0KGgo=", "filename": "x.png"});
    png[field] = json!("image/png");
    json!({"message": {"messageId": "m-png", "role": "ROLE_USER", "parts": [{"text": "look"}, png]}})
}

/// Point 35 with the field as clients send it. ferry-proto's `Part` deserializer currently
/// reads only `media_type`, so `mediaType` is dropped and the PNG reaches the agent untyped.
#[tokio::test]
async fn media_type_in_camel_case() {
    crate::support::bounded(async {
        let (srv, _remote) = TestServer::scripted().await;
        for b in [Binding::JsonRpc, Binding::Rest] {
            srv.fails(b, "SendMessage", png_message("mediaType"))
                .await
                .assert_is(CONTENT_TYPE_NOT_SUPPORTED);
        }
    })
    .await;
}

/// Point 36 on SendMessage: 0 omits history, N keeps the N most recent in order, negative is
/// InvalidParams (and starts no turn).
async fn history_length_on_send(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let task = srv.send_task(b, send_params("ask")).await;
    let id = &task["id"];
    let mut params = follow_up("second", id, None);
    let second_id = params["message"]["messageId"].clone();
    params["configuration"] = json!({"historyLength": 2});
    let trimmed = srv.send_task(b, params).await;
    let history = trimmed["history"].as_array().expect("history");
    assert_eq!(history.len(), 2, "{trimmed}");
    assert_eq!(
        history[0]["messageId"], second_id,
        "the most recent two, oldest first"
    );
    assert_eq!(history[1]["role"], "ROLE_AGENT");

    let mut params = follow_up("third", id, None);
    params["configuration"] = json!({"historyLength": 0});
    let none = srv.send_task(b, params).await;
    assert!(
        none.get("history").is_none(),
        "historyLength 0 omits history: {none}"
    );

    let mut params = follow_up("fourth", id, None);
    params["configuration"] = json!({"historyLength": -1});
    srv.fails(b, "SendMessage", params)
        .await
        .assert_is(INVALID_PARAMS);
    let all = srv.ok(b, "GetTask", json!({"id": id})).await;
    assert_eq!(
        all["history"].as_array().map(Vec::len),
        Some(6),
        "three turns, no fourth: {all}"
    );
}

/// Point 37: task ids are server-generated and unique.
async fn task_ids_are_unique(b: Binding) {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let mut ids = std::collections::BTreeSet::new();
    for i in 0..5 {
        let task = srv.send_task(b, send_params(&format!("n{i}"))).await;
        let id = task["id"].as_str().expect("an id").to_owned();
        assert_ne!(Some(id.as_str()), task["history"][0]["messageId"].as_str());
        assert!(ids.insert(id), "ids repeat: {ids:?}");
    }
}

/// Points 12 and 20: a direct reply is a `message` with the context and no task; no task exists.
async fn direct_reply(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let mut params = send_params("reply");
    params["message"]["contextId"] = json!("ctx-reply");
    let result = srv.ok(b, "SendMessage", params).await;
    assert_eq!(keys(&result), ["message"], "{result}");
    let m = &result["message"];
    assert_eq!(m["role"], "ROLE_AGENT");
    assert_eq!(m["contextId"], "ctx-reply");
    assert!(m.get("taskId").is_none(), "no task, no taskId: {m}");
    assert_eq!(m["parts"], json!([{"text": "pong"}]));
    assert_eq!(task_count(&srv, b).await, 0);
}

/// Point 13: unknown members in the request are ignored.
async fn unknown_fields_are_ignored(b: Binding) {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let mut params = send_params("hi");
    params["somethingNew"] = json!({"a": 1});
    params["message"]["alsoNew"] = json!([1]);
    params["configuration"] = json!({"returnImmediately": false, "futureKnob": true});
    let task = srv.send_task(b, params).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
}

/// A panicking agent fails its task with a message that tells nothing of the panic.
async fn panic_fails_the_task_opaquely(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let task = srv.send_task(b, send_params("panic")).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_FAILED", "{task}");
    let text = task["status"]["message"]["parts"][0]["text"]
        .as_str()
        .expect("a failure message");
    assert!(!text.is_empty());
    assert!(
        !task.to_string().contains(PANIC_DETAIL),
        "the panic message leaked: {task}"
    );
    let again = srv.ok(b, "GetTask", json!({"id": task["id"]})).await;
    assert_eq!(again["status"], task["status"]);
}

/// An agent that reports nothing at all is an invalid agent response (-32006 / 500).
async fn silent_agent_is_an_invalid_response(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    srv.fails(b, "SendMessage", send_params("silent"))
        .await
        .assert_is(INVALID_AGENT_RESPONSE);
    assert_eq!(task_count(&srv, b).await, 0);
}

/// The ConformanceAgent's `ferry-turns-3` with blocking sends.
async fn ferry_turns_3(b: Binding) {
    play_ferry_turns_3(b, false).await;
}

/// The ConformanceAgent's `ferry-turns-3` with a stream per turn (as the Python interop
/// client plays it): each stream starts with the task and carries that turn's artifact.
async fn ferry_turns_3_streamed(b: Binding) {
    play_ferry_turns_3(b, true).await;
}

/// INPUT_REQUIRED twice, COMPLETED on the third message, one artifact per turn.
async fn play_ferry_turns_3(b: Binding, streamed: bool) {
    let srv = TestServer::start(ferry_agents::ConformanceAgent::default()).await;
    let mut task_id: Option<Value> = None;
    for (n, expected) in [
        (1, "TASK_STATE_INPUT_REQUIRED"),
        (2, "TASK_STATE_INPUT_REQUIRED"),
        (3, "TASK_STATE_COMPLETED"),
    ] {
        let mut m = message(&format!("message {n}"));
        m["messageId"] = json!(format!("ferry-turns-3-{n}-{}", uuid::Uuid::new_v4()));
        if let Some(id) = &task_id {
            m["taskId"] = id.clone();
        }
        let (task, state) = if streamed {
            let events = srv
                .open(b, "SendStreamingMessage", json!({"message": m}))
                .await
                .remaining()
                .await;
            let artifacts: Vec<&Value> = events
                .iter()
                .filter_map(|e| e.get("artifactUpdate"))
                .map(|u| &u["artifact"]["artifactId"])
                .collect();
            assert_eq!(
                artifacts,
                [&json!(format!("turn-{n}"))],
                "turn {n}: {events:?}"
            );
            (
                events[0]["task"].clone(),
                events.last().and_then(state_of).map(str::to_owned),
            )
        } else {
            let task = srv.send_task(b, json!({"message": m})).await;
            let state = task["status"]["state"].as_str().map(str::to_owned);
            (task, state)
        };
        assert_eq!(state.as_deref(), Some(expected), "turn {n}: {task}");
        assert!(
            task_id.as_ref().is_none_or(|id| *id == task["id"]),
            "one task for every turn"
        );
        task_id = Some(task["id"].clone());
    }
    let done = srv.ok(b, "GetTask", json!({"id": task_id})).await;
    assert_eq!(
        pluck(&done["artifacts"], "artifactId"),
        ["turn-1", "turn-2", "turn-3"],
        "{done}"
    );
    assert_eq!(
        done["status"]["message"]["parts"],
        json!([{"text": "all 3 turns done"}])
    );
}

/// Point 10: parts of every kind come out with exactly one content member, `raw` as padded
/// standard base64, even when the client sent it URL-safe and unpadded.
async fn part_kinds_on_the_wire(b: Binding) {
    let srv = TestServer::start(ferry_agents::ConformanceAgent::default()).await;
    let cases = [
        (
            "tck-artifact-file",
            json!([{"raw": "R2VuZXJhdGVkIGZpbGUgY29udGVudA==", "filename": "output.txt", "mediaType": "text/plain"}]),
        ),
        (
            "tck-artifact-file-url",
            json!([{"url": "https://example.com/output.txt", "filename": "output.txt", "mediaType": "text/plain"}]),
        ),
        (
            "tck-artifact-data",
            json!([{"data": {"key": "value", "count": 42}, "mediaType": "application/json"}]),
        ),
    ];
    for (prefix, parts) in cases {
        let mut params = send_params("make a part");
        params["message"]["messageId"] = json!(format!("{prefix}-{}", uuid::Uuid::new_v4()));
        let task = srv.send_task(b, params).await;
        assert_eq!(task["artifacts"][0]["parts"], parts, "{prefix}: {task}");
    }
    let params = json!({"message": {"messageId": "raw-in", "role": "ROLE_USER", "parts": [{"raw": "__4"}, {"data": [1, null]}]}});
    let task = srv.send_task(b, params).await;
    assert_eq!(
        task["history"][0]["parts"],
        json!([{"raw": "//4="}, {"data": [1, null]}]),
        "{task}"
    );
}

scenarios!(per_binding:
    blocking_send_returns_the_finished_task,
    blocking_send_returns_at_input_required,
    return_immediately,
    context_ids,
    continue_input_required_task,
    mismatched_context_is_refused,
    invented_task_id_is_not_found,
    terminal_task_takes_no_messages,
    unsupported_media_type,
    history_length_on_send,
    task_ids_are_unique,
    direct_reply,
    unknown_fields_are_ignored,
    panic_fails_the_task_opaquely,
    silent_agent_is_an_invalid_response,
    ferry_turns_3,
    ferry_turns_3_streamed,
    part_kinds_on_the_wire,
);
