//! SSE streams on both bindings (§16 points 38–47): the exact event sequence of a send, message
//! streams, artifact chunks, the streaming capability, SubscribeToTask, concurrent
//! subscribers, a subscriber that falls behind the log (`event: error`), agent failures,
//! keep-alive comments, continued tasks, and errors before the first event.

use crate::support::{
    A2aStream, Binding, CONTENT_TYPE_NOT_SUPPORTED, INTERNAL, INVALID_AGENT_RESPONSE,
    INVALID_PARAMS, PANIC_DETAIL, Remote, ScriptedAgent, ServiceParams, Step, TASK_NOT_FOUND,
    TestServer, UNSUPPORTED_OPERATION, keys, message, send_params, state_of,
};
use ferry_server::ServerConfig;
use serde_json::{Value, json};

/// Reads every remaining event with its SSE id; each event must carry an id. gRPC messages
/// have no ids: there each is numbered by its place in the stream.
async fn sequenced(stream: &mut A2aStream) -> Vec<(u64, Value)> {
    let mut out = Vec::new();
    while let Some(item) = stream.next().await {
        let event = item.unwrap_or_else(|e| panic!("the stream sent an error: {}", e.body));
        let seq = if stream.binding() == Binding::Grpc {
            u64::try_from(out.len()).ok().map(|n| n + 1)
        } else {
            stream
                .last_seq()
                .filter(|s| out.last().is_none_or(|(last, _)| s > last))
        };
        out.push((
            seq.unwrap_or_else(|| panic!("a task event has a fresh `id:`: {event}")),
            event,
        ));
    }
    out
}

/// Each StreamResponse's member name (`task`, `statusUpdate`, …) and its state, if any.
fn shapes<'a>(events: impl IntoIterator<Item = &'a Value>) -> Vec<(&'a str, Option<&'a str>)> {
    events
        .into_iter()
        .map(|e| (keys(e)[0], state_of(e)))
        .collect()
}

/// Completes the waiting task; the stream's remaining events must be exactly its COMPLETED
/// status.
async fn complete_and_close(remote: &Remote, stream: &mut A2aStream) {
    remote.step(Step::Complete);
    let rest = stream.remaining().await;
    assert_eq!(
        shapes(&rest),
        [("statusUpdate", Some("TASK_STATE_COMPLETED"))]
    );
}

/// Subscribes to `id` and returns the stream after checking its first event is the task.
async fn subscribe(srv: &TestServer, b: Binding, id: &str) -> (A2aStream, Value) {
    let mut stream = srv.open(b, "SubscribeToTask", json!({"id": id})).await;
    let first = stream.next_ok().await;
    assert_eq!(
        first["task"]["id"], id,
        "the first event is the task: {first}"
    );
    (stream, first)
}

/// Points 38–40 and 42: the echo agent's stream, event by event: the task, WORKING, two chunks
/// of one artifact (the second `append` and `lastChunk`), COMPLETED, then the stream closes.
async fn echo_stream(b: Binding) {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let (headers, stream) = srv
        .stream_with(
            b,
            "SendStreamingMessage",
            send_params("hello"),
            Default::default(),
        )
        .await;
    if b == Binding::Grpc {
        let content_type = headers["content-type"].to_str().expect("ASCII");
        assert!(
            content_type.starts_with("application/grpc"),
            "{content_type}"
        );
    } else {
        assert_eq!(headers["cache-control"], "no-cache");
    }
    let mut stream = stream.unwrap_or_else(|e| panic!("the stream opened: {}", e.body));
    let events = sequenced(&mut stream).await;
    assert_eq!(
        shapes(events.iter().map(|(_, e)| e)),
        [
            ("task", Some("TASK_STATE_SUBMITTED")),
            ("statusUpdate", Some("TASK_STATE_WORKING")),
            ("artifactUpdate", None),
            ("artifactUpdate", None),
            ("statusUpdate", Some("TASK_STATE_COMPLETED")),
        ]
    );
    let task = &events[0].1["task"];
    for (_, event) in &events[1..] {
        let update = event
            .get("statusUpdate")
            .or_else(|| event.get("artifactUpdate"))
            .expect("an update");
        assert_eq!(
            (&update["taskId"], &update["contextId"]),
            (&task["id"], &task["contextId"]),
            "{event}"
        );
    }
    let first_chunk = &events[2].1["artifactUpdate"];
    assert_eq!(
        first_chunk["artifact"],
        json!({"artifactId": "echo", "name": "echo", "parts": [{"text": "he"}]})
    );
    assert!(
        first_chunk.get("append").is_none() && first_chunk.get("lastChunk").is_none(),
        "{first_chunk}"
    );
    let second_chunk = &events[3].1["artifactUpdate"];
    assert_eq!(
        second_chunk["artifact"],
        json!({"artifactId": "echo", "name": "echo", "parts": [{"text": "llo"}]})
    );
    assert_eq!(
        (&second_chunk["append"], &second_chunk["lastChunk"]),
        (&json!(true), &json!(true))
    );
}

/// Point 41: a message-only answer is exactly one `message` event, then the stream closes.
async fn message_only_stream(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let mut stream = srv
        .open(b, "SendStreamingMessage", send_params("reply"))
        .await;
    let events = stream.remaining().await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["message"]["parts"], json!([{"text": "pong"}]));
    assert_eq!(events[0]["message"]["role"], "ROLE_AGENT");
}

/// Point 43: without the streaming capability, SendStreamingMessage and SubscribeToTask are
/// UnsupportedOperation (plain error answers, not streams).
async fn streaming_capability_off(b: Binding) {
    let srv = TestServer::start(ScriptedAgent::without_streaming()).await;
    srv.stream_fails(b, "SendStreamingMessage", send_params("hi"))
        .await
        .assert_is(UNSUPPORTED_OPERATION);
    let task = srv.send_task(b, send_params("ask")).await;
    srv.stream_fails(b, "SubscribeToTask", json!({"id": task["id"]}))
        .await
        .assert_is(UNSUPPORTED_OPERATION);
}

/// Point 44: subscribing to an active task gives the task as it is, then live events, then
/// the close at the terminal state.
async fn subscribe_to_active_task(b: Binding) {
    let (srv, remote) = TestServer::scripted().await;
    let id = srv.start_waiting(b, Value::Null).await;
    let (mut stream, first) = subscribe(&srv, b, &id).await;
    assert_eq!(
        first["task"]["status"]["state"], "TASK_STATE_WORKING",
        "{first}"
    );
    remote.step(Step::Artifact("progress".into()));
    let update = stream.next_ok().await;
    assert_eq!(
        update["artifactUpdate"]["artifact"]["parts"],
        json!([{"text": "progress"}]),
        "{update}"
    );
    complete_and_close(&remote, &mut stream).await;
}

/// A subscription to an INPUT_REQUIRED task follows it into the next turn, started by
/// another client's message, and closes when that turn completes the task.
async fn subscription_spans_turns(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let task = srv.send_task(b, send_params("ask")).await;
    let id = task["id"].as_str().expect("an id");
    let (mut stream, first) = subscribe(&srv, b, id).await;
    assert_eq!(state_of(&first), Some("TASK_STATE_INPUT_REQUIRED"));
    let mut done = message("done");
    done["taskId"] = json!(id);
    let completed = srv.send_task(b, json!({"message": done})).await;
    let rest = stream.remaining().await;
    assert_eq!(
        shapes(&rest),
        [("statusUpdate", Some("TASK_STATE_COMPLETED"))]
    );
    assert_eq!(rest[0]["statusUpdate"]["status"], completed["status"]);
}

/// A subscription resumed with `Last-Event-ID` replays exactly the events after that id (no
/// snapshot, no duplicates) and then goes on live; an id that is not a number is ignored.
async fn resume_after_last_event_id(b: Binding) {
    let (srv, remote) = TestServer::scripted().await;
    let id = srv.start_waiting(b, Value::Null).await;
    let (mut first_stream, _) = subscribe(&srv, b, &id).await;
    remote.step(Step::Artifact("one".into()));
    first_stream.next_ok().await;
    let seen = first_stream.last_seq().expect("an id").to_string();
    drop(first_stream);
    remote.step(Step::Artifact("two".into()));
    remote.step(Step::Artifact("three".into()));
    let resume = ServiceParams {
        last_event_id: Some(&seen),
        ..ServiceParams::default()
    };
    let (_, resumed) = srv
        .stream_with(b, "SubscribeToTask", json!({"id": id}), resume)
        .await;
    let mut resumed = resumed.unwrap_or_else(|e| panic!("resumed: {}", e.body));
    let mut replayed = Vec::new();
    for _ in 0..2 {
        let event = resumed.next_ok().await;
        replayed.push((
            resumed.last_seq(),
            event["artifactUpdate"]["artifact"]["parts"][0]["text"].clone(),
        ));
    }
    let next: u64 = seen.parse().expect("a number");
    assert_eq!(
        replayed,
        [
            (Some(next + 1), json!("two")),
            (Some(next + 2), json!("three"))
        ]
    );
    complete_and_close(&remote, &mut resumed).await;

    let id = srv.start_waiting(b, Value::Null).await;
    let garbled = ServiceParams {
        last_event_id: Some("not-a-number"),
        ..ServiceParams::default()
    };
    let (_, stream) = srv
        .stream_with(b, "SubscribeToTask", json!({"id": id}), garbled)
        .await;
    let first = stream
        .unwrap_or_else(|e| panic!("subscribed: {}", e.body))
        .next_ok()
        .await;
    assert_eq!(
        first["task"]["id"],
        id.as_str(),
        "a plain subscription starts with the task: {first}"
    );
}

/// A stream dropped before its task ended resumes after the end too: `Last-Event-ID` replays
/// what it missed, the terminal event last, and the stream closes; resuming at the last event
/// of a finished task is an empty stream; a resume point older than the store keeps starts
/// with the snapshot, as documented.
async fn resume_after_the_task_ended(b: Binding) {
    let config = ServerConfig {
        max_events_per_task: 3,
        ..ServerConfig::default()
    };
    let (srv, remote) = TestServer::scripted_with(config).await;
    let id = srv.start_waiting(b, Value::Null).await;
    let (mut stream, _) = subscribe(&srv, b, &id).await;
    remote.step(Step::Artifact("one".into()));
    stream.next_ok().await;
    let seen = stream.last_seq().expect("an id");
    drop(stream);
    remote.step(Step::Artifact("two".into()));
    remote.step(Step::Complete);
    remote.finished().await;
    let at = seen.to_string();
    let sp = ServiceParams {
        last_event_id: Some(&at),
        ..ServiceParams::default()
    };
    let (_, resumed) = srv
        .stream_with(b, "SubscribeToTask", json!({"id": id}), sp)
        .await;
    let mut resumed = resumed.unwrap_or_else(|e| panic!("resumed: {}", e.body));
    let replayed = sequenced(&mut resumed).await;
    let seqs: Vec<u64> = replayed.iter().map(|(s, _)| *s).collect();
    assert_eq!(seqs, [seen + 1, seen + 2], "{replayed:?}");
    assert_eq!(
        shapes(replayed.iter().map(|(_, e)| e)),
        [
            ("artifactUpdate", None),
            ("statusUpdate", Some("TASK_STATE_COMPLETED"))
        ]
    );

    let last = (seen + 2).to_string();
    let sp = ServiceParams {
        last_event_id: Some(&last),
        ..ServiceParams::default()
    };
    let (_, at_end) = srv
        .stream_with(b, "SubscribeToTask", json!({"id": id}), sp)
        .await;
    let rest = at_end
        .unwrap_or_else(|e| panic!("resumed at the end: {}", e.body))
        .remaining()
        .await;
    assert!(rest.is_empty(), "nothing after the last event: {rest:?}");

    let oldest = "1".to_string();
    let sp = ServiceParams {
        last_event_id: Some(&oldest),
        ..ServiceParams::default()
    };
    let (_, from_snapshot) = srv
        .stream_with(b, "SubscribeToTask", json!({"id": id}), sp)
        .await;
    let events = from_snapshot
        .unwrap_or_else(|e| panic!("resumed too late: {}", e.body))
        .remaining()
        .await;
    assert_eq!(
        shapes(&events),
        [("task", Some("TASK_STATE_COMPLETED"))],
        "only 3 events are kept: the snapshot stands in for the rest"
    );
}

/// Point 45: subscribing to a terminal task is UnsupportedOperation; to an unknown one,
/// TaskNotFound.
async fn subscribe_refusals(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let done = srv.send_task(b, send_params("hello")).await;
    srv.stream_fails(b, "SubscribeToTask", json!({"id": done["id"]}))
        .await
        .assert_is(UNSUPPORTED_OPERATION);
    srv.stream_fails(b, "SubscribeToTask", json!({"id": "no-such-task"}))
        .await
        .assert_is(TASK_NOT_FOUND);
}

/// Point 46: two subscribers see the same events with the same ids; dropping one neither
/// stops the other nor cancels the task.
async fn concurrent_subscribers(b: Binding) {
    let (srv, remote) = TestServer::scripted().await;
    let id = srv.start_waiting(b, Value::Null).await;
    let (mut kept, kept_first) = subscribe(&srv, b, &id).await;
    let (mut dropped, dropped_first) = subscribe(&srv, b, &id).await;
    assert_eq!(
        (kept.last_seq(), &kept_first),
        (dropped.last_seq(), &dropped_first)
    );
    remote.step(Step::Artifact("one".into()));
    let (a, b_event) = (kept.next_ok().await, dropped.next_ok().await);
    assert_eq!(
        (kept.last_seq(), &a),
        (dropped.last_seq(), &b_event),
        "identical events, identical ids"
    );
    drop(dropped);
    remote.step(Step::Artifact("two".into()));
    remote.step(Step::Complete);
    let rest = sequenced(&mut kept).await;
    assert_eq!(
        shapes(rest.iter().map(|(_, e)| e)),
        [
            ("artifactUpdate", None),
            ("statusUpdate", Some("TASK_STATE_COMPLETED"))
        ]
    );
    let task = srv.ok(b, "GetTask", json!({"id": id})).await;
    assert_eq!(
        task["status"]["state"], "TASK_STATE_COMPLETED",
        "not canceled: {task}"
    );
}

/// Point 47: a subscriber that falls further behind than the task's event log reaches gets an
/// `event: error` (an InternalError) and the stream closes; the task itself carries on.
///
/// Deterministic: the test runtime has one thread and the agent emits the flood without
/// yielding, so the subscriber's live channel (64 items) overflows before it can read, and a
/// log of 2 events cannot fill the gap.
async fn falling_behind_ends_with_error_event(b: Binding) {
    let config = ServerConfig {
        max_events_per_task: 2,
        ..ServerConfig::default()
    };
    let (srv, remote) = TestServer::scripted_with(config).await;
    let id = srv.start_waiting(b, Value::Null).await;
    let (mut stream, _) = subscribe(&srv, b, &id).await;
    remote.step(Step::Flood(200));
    let e = match stream.next().await {
        Some(Err(e)) => e,
        other => panic!("expected an error event, got {other:?}"),
    };
    assert!(e.in_stream);
    e.assert_is(INTERNAL);
    assert!(e.message().contains("fell behind"), "{}", e.body);
    assert!(
        stream.next().await.is_none(),
        "the stream closes after the error"
    );
    remote.step(Step::Complete);
    remote.finished().await;
    let task = srv.ok(b, "GetTask", json!({"id": id})).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        task["artifacts"][0]["parts"].as_array().map(Vec::len),
        Some(200),
        "every chunk was applied"
    );
}

/// An agent that panics mid-stream: the stream reports FAILED (with an opaque message) and
/// closes.
async fn panic_mid_stream(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let mut stream = srv
        .open(b, "SendStreamingMessage", send_params("panic"))
        .await;
    let events = stream.remaining().await;
    assert_eq!(
        shapes(&events),
        [
            ("task", Some("TASK_STATE_SUBMITTED")),
            ("statusUpdate", Some("TASK_STATE_WORKING")),
            ("statusUpdate", Some("TASK_STATE_FAILED")),
        ]
    );
    let failed = &events[2]["statusUpdate"]["status"]["message"];
    assert_eq!(failed["role"], "ROLE_AGENT");
    assert!(!failed.to_string().contains(PANIC_DETAIL), "{failed}");
}

/// An idle stream carries `: keep-alive` comments at the configured interval, and still ends
/// at the terminal state.
async fn keep_alive_comments(b: Binding) {
    let config = ServerConfig {
        sse_keepalive_secs: 1,
        ..ServerConfig::default()
    };
    let (srv, remote) = TestServer::scripted_with(config).await;
    let id = srv.start_waiting(b, Value::Null).await;
    let (mut stream, _) = subscribe(&srv, b, &id).await;
    assert_eq!(stream.next_comment().await, "keep-alive");
    assert_eq!(stream.next_comment().await, "keep-alive");
    complete_and_close(&remote, &mut stream).await;
}

/// A stream that continues an INPUT_REQUIRED task starts with the task (the new message in its
/// history) and closes when the agent's turn ends, interrupted or terminal.
async fn continued_task_streams(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let task = srv.send_task(b, send_params("ask")).await;
    for (text, ending) in [
        ("more", "TASK_STATE_INPUT_REQUIRED"),
        ("done", "TASK_STATE_COMPLETED"),
    ] {
        let mut m = message(text);
        m["taskId"] = task["id"].clone();
        let mut stream = srv
            .open(b, "SendStreamingMessage", json!({"message": m}))
            .await;
        let events = stream.remaining().await;
        let first = &events[0]["task"];
        assert_eq!(first["id"], task["id"], "{first}");
        let history = first["history"].as_array().expect("history");
        assert_eq!(
            history.last().map(|h| &h["messageId"]),
            Some(&m["messageId"]),
            "{first}"
        );
        assert_eq!(events.last().and_then(state_of), Some(ending), "{events:?}");
    }
}

/// Errors found before the first event are ordinary error answers, not streams.
async fn errors_before_the_first_event(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let mut unknown = send_params("hi");
    unknown["message"]["taskId"] = json!("no-such-task");
    let png = json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"raw": "AAAA", "media_type": "image/png"}]}});
    let mut negative = send_params("hi");
    negative["configuration"] = json!({"historyLength": -3});
    let cases = [
        (unknown, TASK_NOT_FOUND),
        (png, CONTENT_TYPE_NOT_SUPPORTED),
        (send_params("silent"), INVALID_AGENT_RESPONSE),
        (negative, INVALID_PARAMS),
    ];
    for (params, expected) in cases {
        srv.stream_fails(b, "SendStreamingMessage", params)
            .await
            .assert_is(expected);
    }
}

scenarios!(per_binding:
    echo_stream,
    message_only_stream,
    streaming_capability_off,
    subscribe_to_active_task,
    subscription_spans_turns,
    subscribe_refusals,
    concurrent_subscribers,
    falling_behind_ends_with_error_event,
    panic_mid_stream,
    continued_task_streams,
    errors_before_the_first_event,
);

// SSE only: `Last-Event-ID` and keep-alive comments have no gRPC form (a gRPC subscription
// starts with the task's snapshot; HTTP/2 keeps an idle connection alive with PINGs).
scenarios!(per_http_binding:
    resume_after_last_event_id,
    resume_after_the_task_ended,
    keep_alive_comments,
);
