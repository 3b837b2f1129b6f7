//! The conformance agent's ACTS behaviours, on both bindings: chosen by the first words of a
//! conversation's first message (`tck-multi-turn …`), follow-up turns by the task's history.

use crate::support::{Binding, TestServer, keys, send_params};
use serde_json::{Value, json};

fn state_of(task: &Value) -> &str {
    task["status"]["state"].as_str().unwrap_or_default()
}

fn artifacts(task: &Value) -> usize {
    task["artifacts"].as_array().map_or(0, Vec::len)
}

/// Each behaviour ends (or rests) in the state `acts/sut-behaviors.yaml` declares for it, with
/// the artifacts it promises; an unknown `tck-…` name fails the task, saying so.
async fn behaviours_end_in_their_declared_states(b: Binding) {
    let srv = TestServer::start(ferry_agents::ConformanceAgent::default()).await;
    for (text, state, artifact_count) in [
        ("tck-complete-task hello", "TASK_STATE_COMPLETED", 0),
        ("tck-task-failure", "TASK_STATE_FAILED", 0),
        ("tck-auth-required", "TASK_STATE_AUTH_REQUIRED", 0),
        ("tck-input-required", "TASK_STATE_INPUT_REQUIRED", 0),
        ("tck-reject-task", "TASK_STATE_REJECTED", 0),
        ("tck-artifact-text", "TASK_STATE_COMPLETED", 1),
        ("tck-artifact-data", "TASK_STATE_COMPLETED", 1),
        ("tck-artifact-file", "TASK_STATE_COMPLETED", 1),
        ("tck-artifact-file-url", "TASK_STATE_COMPLETED", 1),
        ("tck-stream-basic", "TASK_STATE_COMPLETED", 1),
        ("tck-stream-chunked", "TASK_STATE_COMPLETED", 1),
        ("tck-no-such-behaviour", "TASK_STATE_FAILED", 0),
    ] {
        let task = srv.send_task(b, send_params(text)).await;
        assert_eq!(state_of(&task), state, "{text}: {task}");
        assert_eq!(artifacts(&task), artifact_count, "{text}: {task}");
    }
    let url = srv.send_task(b, send_params("tck-artifact-file-url")).await;
    assert_eq!(
        url["artifacts"][0]["parts"][0]["url"], "https://example.com/document.txt",
        "{url}"
    );
    let chunked = srv.send_task(b, send_params("tck-stream-chunked")).await;
    let texts: Vec<&str> = chunked["artifacts"][0]["parts"]
        .as_array()
        .expect("parts")
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect();
    assert_eq!(
        texts,
        ["chunk one ", "chunk two ", "chunk three"],
        "{chunked}"
    );
    let failed = srv.send_task(b, send_params("tck-no-such-behaviour")).await;
    assert!(
        failed["status"]["message"]["parts"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("tck-no-such-behaviour")),
        "{failed}"
    );
    let answer = srv
        .ok(b, "SendMessage", send_params("tck-message-response"))
        .await;
    assert_eq!(keys(&answer), ["message"], "{answer}");
}

/// `tck-multi-turn`: INPUT_REQUIRED on every turn (the follow-ups carry no name) until one
/// starts with `done`.
async fn multi_turn_until_done(b: Binding) {
    let srv = TestServer::start(ferry_agents::ConformanceAgent::default()).await;
    let task = srv
        .send_task(b, send_params("tck-multi-turn start conversation"))
        .await;
    assert_eq!(state_of(&task), "TASK_STATE_INPUT_REQUIRED", "{task}");
    let id = task["id"].clone();
    let turn = |text: &str| {
        let mut params = send_params(text);
        params["message"]["taskId"] = id.clone();
        params
    };
    let more = srv.send_task(b, turn("here is more input")).await;
    assert_eq!(state_of(&more), "TASK_STATE_INPUT_REQUIRED", "{more}");
    let done = srv.send_task(b, turn("Done, thanks")).await;
    assert_eq!(done["id"], id);
    assert_eq!(state_of(&done), "TASK_STATE_COMPLETED", "{done}");
}

/// `tck-cancel` works until it is canceled.
async fn cancel_holds_until_canceled(b: Binding) {
    let srv = TestServer::start(ferry_agents::ConformanceAgent::default()).await;
    let mut params = send_params("tck-cancel");
    params["configuration"] = json!({"returnImmediately": true});
    let task = srv.send_task(b, params).await;
    let id = task["id"].clone();
    let got = srv.ok(b, "GetTask", json!({"id": id})).await;
    assert_ne!(state_of(&got), "TASK_STATE_CANCELED", "{got}");
    let canceled = srv.ok(b, "CancelTask", json!({"id": id})).await;
    assert_eq!(state_of(&canceled), "TASK_STATE_CANCELED", "{canceled}");
}

scenarios!(per_binding:
    behaviours_end_in_their_declared_states,
    multi_turn_until_done,
    cancel_holds_until_canceled,
);
