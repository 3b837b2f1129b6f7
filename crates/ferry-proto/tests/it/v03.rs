//! v0.3 ⇄ v1.0: every v0.3 method's params and result, both ways, with the states, parts
//! and errors they carry. The v0.3 texts are written as a v0.3 peer (the a2a-sdk 0.3 models)
//! sends them.

use ferry_proto::v03::{self, Method, convert, wire};
use ferry_proto::{
    A2aError, ErrorKind, Operation, PartContent, Role, SendMessageResponse, StreamResponse, Task,
    TaskPushNotificationConfig, TaskState,
};
use serde_json::{Value, json};

fn read<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("reads")
}

fn write<T: serde::Serialize>(t: &T) -> Value {
    serde_json::to_value(t).expect("writes")
}

fn v03_message() -> Value {
    json!({"kind": "message", "messageId": "m-1", "role": "user", "contextId": "c-1",
    "taskId": "t-1", "referenceTaskIds": ["t-0"], "extensions": ["urn:x"],
    "metadata": {"k": "v"},
    "parts": [
        {"kind": "text", "text": "hello"},
        {"kind": "file", "file": {"bytes": "aGk=", "mimeType": "text/plain", "name": "a.txt"}},
        {"kind": "file", "file": {"uri": "https://x.example/f", "mimeType": "image/png"}},
        {"kind": "data", "data": {"n": 1}, "metadata": {"m": true}},
    ]})
}

fn v1_task(state: &str) -> Value {
    json!({"id": "t-1", "contextId": "c-1",
           "status": {"state": state, "timestamp": "2026-01-01T00:00:00.000Z"},
           "artifacts": [{"artifactId": "a-1", "name": "out", "parts": [{"text": "x"}, {"data": [1, 2]}]}],
           "history": [{"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}]})
}

#[test]
fn every_method_has_a_name_and_an_operation() {
    for m in Method::ALL {
        assert_eq!(Method::from_name(m.name()), Some(m));
        assert_eq!(Method::of(m.operation()), Some(m));
    }
    assert_eq!(Method::from_name("SendMessage"), None);
    assert_eq!(
        Method::of(Operation::ListTasks),
        None,
        "v0.3 JSON-RPC has no tasks/list"
    );
    assert!(v03::is_v03("0.3") && v03::is_v03("0.3.0") && !v03::is_v03("1.0"));
}

#[test]
fn every_state_both_ways() {
    let names = [
        (TaskState::Unspecified, "unknown"),
        (TaskState::Submitted, "submitted"),
        (TaskState::Working, "working"),
        (TaskState::Completed, "completed"),
        (TaskState::Failed, "failed"),
        (TaskState::Canceled, "canceled"),
        (TaskState::InputRequired, "input-required"),
        (TaskState::Rejected, "rejected"),
        (TaskState::AuthRequired, "auth-required"),
    ];
    for (state, name) in names {
        assert_eq!(convert::state_name(state), name);
        assert_eq!(convert::state_from_name(name), Ok(state));
    }
    assert!(convert::state_from_name("TASK_STATE_WORKING").is_err());
    assert!(
        convert::state_from_name("cancelled").is_err(),
        "v0.3 spells it canceled"
    );
}

#[test]
fn message_send_params_to_v1_and_back() {
    let params = json!({"message": v03_message(),
        "configuration": {"acceptedOutputModes": ["text/plain"], "historyLength": 0, "blocking": false,
                          "pushNotificationConfig": {"url": "https://hook.example/", "token": "tok",
                                                     "authentication": {"schemes": ["Bearer"], "credentials": "c"}}},
        "metadata": {"r": 1}});
    let v1 = convert::send_params_to_v1("", read(params)).expect("converts");
    let m = &v1.message;
    assert_eq!((m.message_id.as_str(), m.role), ("m-1", Role::User));
    assert_eq!((m.context_id.as_str(), m.task_id.as_str()), ("c-1", "t-1"));
    assert_eq!(m.reference_task_ids, ["t-0"]);
    assert_eq!(m.extensions, ["urn:x"]);
    assert_eq!(m.parts[0].as_text(), Some("hello"));
    assert_eq!(m.parts[1].content, PartContent::Raw(b"hi".to_vec()));
    assert_eq!(
        (m.parts[1].filename.as_str(), m.parts[1].media_type.as_str()),
        ("a.txt", "text/plain")
    );
    assert_eq!(
        m.parts[2].content,
        PartContent::Url("https://x.example/f".into())
    );
    assert_eq!(m.parts[3].as_data(), Some(&json!({"n": 1})));
    assert_eq!(write(&m.parts[3].metadata), json!({"m": true}));
    let c = v1.configuration.as_ref().expect("configuration");
    assert!(c.return_immediately, "blocking: false");
    assert_eq!(c.history_length, None, "v0.3 historyLength 0 is all of it");
    assert_eq!(c.accepted_output_modes, ["text/plain"]);
    let hook = c.task_push_notification_config.as_ref().expect("webhook");
    assert_eq!(
        (hook.url.as_str(), hook.token.as_str()),
        ("https://hook.example/", "tok")
    );
    let auth = hook.authentication.as_ref().expect("auth");
    assert_eq!(
        (auth.scheme.as_str(), auth.credentials.as_str()),
        ("Bearer", "c")
    );

    // And back, as ferry's client sends it to a v0.3 agent.
    let back = write(&convert::send_params_from_v1(&v1));
    assert_eq!(back["message"], v03_message());
    assert_eq!(back["configuration"]["blocking"], false);
    assert_eq!(back["metadata"], json!({"r": 1}));
}

#[test]
fn blocking_is_the_default_and_history_lengths_keep_their_meaning() {
    let bare =
        json!({"message": {"messageId": "m", "role": "agent", "parts": [{"text": "no kind"}]}});
    let v1 = convert::send_params_to_v1("", read(bare)).expect("converts");
    assert!(v1.configuration.is_none());
    assert_eq!(v1.message.role, Role::Agent);
    assert_eq!(
        v1.message.parts[0].as_text(),
        Some("no kind"),
        "a part's kind is inferred"
    );
    let with = json!({"message": {"messageId": "m", "role": "user", "parts": []},
                      "configuration": {"historyLength": 3}});
    let c = convert::send_params_to_v1("", read(with))
        .expect("converts")
        .configuration
        .expect("c");
    assert!(!c.return_immediately, "no blocking member: blocking");
    assert_eq!(c.history_length, Some(3));
    let get = convert::get_task_to_v1("", read(json!({"id": "t", "historyLength": 0})));
    assert_eq!(get.history_length, None);
    let mut v1_get = convert::get_task_to_v1("", read(json!({"id": "t"})));
    v1_get.history_length = Some(0);
    assert_eq!(
        write(&convert::get_task_from_v1(&v1_get)),
        json!({"id": "t", "historyLength": 1})
    );
}

#[test]
fn bad_v03_values_are_refused_by_name() {
    let cases = [
        (
            json!({"kind": "file", "file": {"bytes": "aGk=", "uri": "x"}}),
            "exactly one of file.bytes and file.uri",
        ),
        (
            json!({"kind": "data", "data": [1]}),
            "data must be an object",
        ),
        (json!({"kind": "image", "url": "x"}), "unknown part kind"),
        (json!({"kind": "text"}), "a text part needs text"),
        (json!(["text", "hi"]), "invalid type"),
    ];
    for (part, why) in cases {
        let e = serde_json::from_value::<wire::Part>(part.clone()).expect_err("refused");
        assert!(e.to_string().contains(why), "{part}: {e}");
    }
    let e = serde_json::from_value::<wire::Message>(
        json!({"kind": "task", "messageId": "m", "role": "user", "parts": []}),
    )
    .expect_err("a task is no message");
    assert!(e.to_string().contains("kind \"task\""), "{e}");
    let bad_role =
        read::<wire::Message>(json!({"messageId": "m", "role": "ROLE_USER", "parts": []}));
    assert!(convert::message_to_v1(bad_role).is_err());
    let bad_b64 = read::<wire::Part>(json!({"kind": "file", "file": {"bytes": "%%%"}}));
    assert!(convert::part_to_v1(bad_b64).is_err());
}

#[test]
fn message_send_results_both_ways() {
    let task: Task = read(v1_task("TASK_STATE_COMPLETED"));
    let out = write(&convert::send_result_from_v1(&SendMessageResponse::Task(
        task.clone(),
    )));
    assert_eq!(out["kind"], "task");
    assert_eq!(
        out["status"],
        json!({"state": "completed", "timestamp": "2026-01-01T00:00:00.000Z"})
    );
    assert_eq!(out["history"][0]["role"], "user");
    assert_eq!(out["history"][0]["kind"], "message");
    assert_eq!(
        out["artifacts"][0]["parts"][0],
        json!({"kind": "text", "text": "x"})
    );
    // A non-object data value travels wrapped, marked, and comes back as it was.
    assert_eq!(
        out["artifacts"][0]["parts"][1],
        json!({"kind": "data", "data": {"value": [1, 2]}, "metadata": {"data_part_compat": true}})
    );
    let back = convert::send_result_to_v1(read(out)).expect("converts");
    assert_eq!(back, SendMessageResponse::Task(task));

    let reply = read::<ferry_proto::Message>(
        json!({"messageId": "r", "role": "ROLE_AGENT", "parts": [{"text": "direct"}]}),
    );
    let out = write(&convert::send_result_from_v1(
        &SendMessageResponse::Message(reply.clone()),
    ));
    assert_eq!(
        out,
        json!({"kind": "message", "messageId": "r", "role": "agent", "parts": [{"kind": "text", "text": "direct"}]})
    );
    assert_eq!(
        convert::send_result_to_v1(read(out)),
        Ok(SendMessageResponse::Message(reply))
    );
}

#[test]
fn stream_events_both_ways_with_final_on_the_last() {
    let events: Vec<StreamResponse> = [
        json!({"task": v1_task("TASK_STATE_SUBMITTED")}),
        json!({"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}}),
        json!({"artifactUpdate": {"taskId": "t-1", "contextId": "c-1", "append": true, "lastChunk": true,
               "artifact": {"artifactId": "a-1", "parts": [{"raw": "aGk=", "mediaType": "text/plain"}]}}}),
        json!({"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}}),
    ]
    .into_iter()
    .map(read)
    .collect();
    let out: Vec<Value> = events
        .iter()
        .map(|e| write(&convert::event_from_v1(e)))
        .collect();
    assert_eq!(out[0]["kind"], "task");
    assert_eq!(out[1]["kind"], "status-update");
    assert_eq!(
        (&out[1]["status"]["state"], &out[1]["final"]),
        (&json!("working"), &json!(false))
    );
    assert_eq!(out[2]["kind"], "artifact-update");
    assert_eq!(
        out[2]["artifact"]["parts"][0],
        json!({"kind": "file", "file": {"bytes": "aGk=", "mimeType": "text/plain"}})
    );
    assert_eq!(
        (&out[2]["append"], &out[2]["lastChunk"]),
        (&json!(true), &json!(true))
    );
    assert_eq!(
        (&out[3]["status"]["state"], &out[3]["final"]),
        (&json!("input-required"), &json!(true))
    );
    for (v1, v03) in events.iter().zip(out) {
        assert_eq!(&convert::event_to_v1(read(v03)).expect("converts"), v1);
    }
}

#[test]
fn task_id_methods_both_ways() {
    let get = convert::get_task_to_v1(
        "",
        read(json!({"id": "t-1", "historyLength": 2, "metadata": {}})),
    );
    assert_eq!((get.id.as_str(), get.history_length), ("t-1", Some(2)));
    assert_eq!(
        write(&convert::get_task_from_v1(&get)),
        json!({"id": "t-1", "historyLength": 2})
    );
    let cancel = convert::cancel_to_v1("", read(json!({"id": "t-1", "metadata": {"why": "done"}})));
    assert_eq!(
        (cancel.id.as_str(), write(&cancel.metadata)),
        ("t-1", json!({"why": "done"}))
    );
    let sub = convert::resubscribe_to_v1("", read(json!({"id": "t-1"})));
    assert_eq!(sub.id, "t-1");
    assert_eq!(
        write(&convert::task_id_from_v1("t-1")),
        json!({"id": "t-1"})
    );
    // tasks/get and tasks/cancel answer with a task.
    let task: Task = read(v1_task("TASK_STATE_CANCELED"));
    let out = write(&convert::task_from_v1(&task));
    assert_eq!(out["status"]["state"], "canceled");
    assert_eq!(convert::task_to_v1(read(out)).expect("converts"), task);
}

#[test]
fn push_config_methods_both_ways() {
    let set = json!({"taskId": "t-1", "pushNotificationConfig": {"url": "https://h.example/", "token": "tok",
                     "authentication": {"schemes": ["Bearer"], "credentials": "secret"}}});
    let v1 = convert::set_push_config_to_v1("", read(set.clone()));
    assert_eq!(
        (v1.task_id.as_str(), v1.id.as_str()),
        ("t-1", "t-1"),
        "no id: the task's"
    );
    assert_eq!(
        v1.authentication.as_ref().map(|a| a.scheme.as_str()),
        Some("Bearer")
    );
    let mut expected = set;
    expected["pushNotificationConfig"]["id"] = json!("t-1");
    assert_eq!(write(&convert::push_config_from_v1(&v1)), expected);

    let named: TaskPushNotificationConfig =
        read(json!({"id": "cfg", "taskId": "t-1", "url": "https://h.example/"}));
    assert_eq!(
        write(&convert::push_config_from_v1(&named)),
        json!({"taskId": "t-1", "pushNotificationConfig": {"id": "cfg", "url": "https://h.example/"}})
    );
    let get = convert::push_config_ref_to_v1(
        "",
        read(json!({"id": "t-1", "pushNotificationConfigId": "cfg"})),
    );
    assert_eq!((get.task_id.as_str(), get.id.as_str()), ("t-1", "cfg"));
    let get = convert::push_config_ref_to_v1("", read(json!({"id": "t-1"})));
    assert_eq!(
        get.id, "t-1",
        "get without an id: the task's, as set made it"
    );
    let list = convert::list_push_configs_to_v1("", read(json!({"id": "t-1"})));
    assert_eq!((list.task_id.as_str(), list.page_size), ("t-1", 0));
}

#[test]
fn errors_both_ways() {
    let e =
        A2aError::new(ErrorKind::TaskNotFound, "task \"t\" was not found").with_meta("taskId", "t");
    let out = v03::error_object(&e);
    assert_eq!(out["code"], -32001);
    assert_eq!(out["message"], "task \"t\" was not found");
    assert!(out["data"].is_object(), "v0.3 data is one object: {out}");
    assert_eq!(out["data"]["reason"], "TASK_NOT_FOUND");
    let back = A2aError::from_wire(&out).expect("reads");
    assert_eq!(back.kind, ErrorKind::TaskNotFound);
    assert_eq!(back.metadata.get("taskId").map(String::as_str), Some("t"));
    // What a v0.3 SDK sends: a code, a message, and perhaps nothing else.
    for (code, kind) in [
        (-32001, ErrorKind::TaskNotFound),
        (-32002, ErrorKind::TaskNotCancelable),
        (-32003, ErrorKind::PushNotificationNotSupported),
        (-32004, ErrorKind::UnsupportedOperation),
        (-32005, ErrorKind::ContentTypeNotSupported),
        (-32006, ErrorKind::InvalidAgentResponse),
        (-32007, ErrorKind::ExtendedAgentCardNotConfigured),
        (-32602, ErrorKind::InvalidParams),
    ] {
        let e =
            A2aError::from_wire(&json!({"code": code, "message": "m", "data": {"detail": "x"}}))
                .expect("reads");
        assert_eq!(e.kind, kind, "{code}");
    }
}

#[test]
fn card_members_for_v03_clients() {
    let card: ferry_proto::AgentCard = read(json!({
        "name": "a", "description": "d", "version": "1",
        "supportedInterfaces": [
            {"url": "http://h/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "http://h/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true, "extendedAgentCard": true},
        "securitySchemes": {
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}},
            "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}}},
        "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []}));
    let Value::Object(mut served) = write(&card) else {
        panic!("a card is an object")
    };
    let at = v03::Interfaces::of(&card).expect("a JSON-RPC interface");
    assert_eq!(at.rest.as_deref(), Some("http://h/rest"));
    v03::add_card_members(&mut served, &card, &at);
    let served = Value::Object(served);
    assert_eq!(served["url"], "http://h/jsonrpc");
    assert_eq!(served["protocolVersion"], "0.3.0");
    assert_eq!(served["preferredTransport"], "JSONRPC");
    assert_eq!(
        served["additionalInterfaces"],
        json!([{"url": "http://h/jsonrpc", "transport": "JSONRPC"},
               {"url": "http://h/rest", "transport": "HTTP+JSON"}])
    );
    assert_eq!(served["supportsAuthenticatedExtendedCard"], true);
    assert_eq!(served["security"], json!([{"bearer": []}]));
    assert_eq!(served["securitySchemes"]["bearer"]["type"], "http");
    assert_eq!(served["securitySchemes"]["bearer"]["scheme"], "Bearer");
    assert_eq!(served["securitySchemes"]["key"]["type"], "apiKey");
    assert_eq!(served["securitySchemes"]["key"]["in"], "header");
    // A v1.0 reader still reads the same card.
    let reread: ferry_proto::AgentCard = read(served);
    assert_eq!(reread, card);
}

// ---- v0.3 over HTTP+JSON: routes and ProtoJSON ----

#[test]
fn every_v03_rest_route_names_its_method() {
    use v03::rest::route;
    let cases = [
        ("POST", "v1/message:send", Method::MessageSend, "", ""),
        ("POST", "v1/message:stream", Method::MessageStream, "", ""),
        ("GET", "v1/tasks/t-1", Method::TasksGet, "t-1", ""),
        (
            "POST",
            "v1/tasks/t-1:cancel",
            Method::TasksCancel,
            "t-1",
            "",
        ),
        (
            "GET",
            "v1/tasks/t-1:subscribe",
            Method::TasksResubscribe,
            "t-1",
            "",
        ),
        (
            "POST",
            "v1/tasks/t-1:subscribe",
            Method::TasksResubscribe,
            "t-1",
            "",
        ),
        (
            "POST",
            "v1/tasks/t-1/pushNotificationConfigs",
            Method::PushConfigSet,
            "t-1",
            "",
        ),
        (
            "GET",
            "v1/tasks/t-1/pushNotificationConfigs",
            Method::PushConfigList,
            "t-1",
            "",
        ),
        (
            "GET",
            "v1/tasks/t-1/pushNotificationConfigs/w",
            Method::PushConfigGet,
            "t-1",
            "w",
        ),
        (
            "DELETE",
            "v1/tasks/t-1/pushNotificationConfigs/w",
            Method::PushConfigDelete,
            "t-1",
            "w",
        ),
        (
            "GET",
            "v1/card",
            Method::GetAuthenticatedExtendedCard,
            "",
            "",
        ),
    ];
    let mut seen = std::collections::HashSet::new();
    for (verb, path, method, task, config) in cases {
        let segs: Vec<&str> = path.split('/').collect();
        let r = route(verb, &segs).unwrap_or_else(|| panic!("{verb} {path}"));
        assert_eq!(
            (r.method, r.task_id.as_str(), r.config_id.as_str()),
            (method, task, config)
        );
        seen.insert(method);
    }
    assert_eq!(
        seen.len(),
        Method::ALL.len(),
        "every v0.3 method has a route"
    );
    for (verb, path) in [
        ("GET", "v1/message:send"),
        ("POST", "message:send"),
        ("POST", "v1/tasks/t-1:archive"),
        ("GET", "v1/tasks/t-1:cancel"),
        ("PUT", "v1/tasks/t-1"),
        ("GET", "v2/tasks/t-1"),
    ] {
        let segs: Vec<&str> = path.split('/').collect();
        assert!(route(verb, &segs).is_none(), "{verb} {path}");
    }
}

/// What the a2a-sdk 0.3 REST client posts (`MessageToDict` of its `SendMessageRequest`).
fn rest_send_body() -> Value {
    json!({
        "request": {"messageId": "m-1", "contextId": "c-1", "taskId": "t-1", "role": "ROLE_USER",
            "extensions": ["urn:x"], "metadata": {"k": "v"},
            "content": [
                {"text": "hello"},
                {"file": {"fileWithBytes": "aGk=", "mimeType": "text/plain", "name": "a.txt"}},
                {"file": {"fileWithUri": "https://x.example/f", "mimeType": "image/png"}},
                {"data": {"data": {"n": 1}}, "metadata": {"m": true}}]},
        "configuration": {"acceptedOutputModes": ["text/plain"], "historyLength": 2, "blocking": true,
            "pushNotification": {"url": "https://hook.example/a", "token": "tok",
                "authentication": {"schemes": ["Bearer"], "credentials": "c"}}},
        "metadata": {"req": 1}
    })
}

#[test]
fn a_rest_send_body_reads_as_the_json_rpc_params_it_stands_for() {
    let params = v03::rest::send_request_from_rest(rest_send_body()).expect("reads");
    let from_rpc: wire::MessageSendParams = read(json!({
        "message": v03_message(),
        "configuration": {"acceptedOutputModes": ["text/plain"], "historyLength": 2, "blocking": true,
            "pushNotificationConfig": {"url": "https://hook.example/a", "token": "tok",
                "authentication": {"schemes": ["Bearer"], "credentials": "c"}}},
        "metadata": {"req": 1}}));
    let mut expected = from_rpc;
    // The REST message has no referenceTaskIds (v0.3's proto has none).
    expected.message.reference_task_ids = None;
    assert_eq!(params, expected);
    let v1 = convert::send_params_to_v1("", params).expect("converts");
    assert!(!v1.configuration.expect("configuration").return_immediately);
    // The JSON-RPC name `message` is read too; an absent `blocking` is proto3's false.
    let mut body = rest_send_body();
    let message = body
        .as_object_mut()
        .and_then(|b| b.remove("request"))
        .expect("request");
    body["message"] = message;
    body["configuration"] = json!({});
    let v1 =
        convert::send_params_to_v1("", v03::rest::send_request_from_rest(body).expect("reads"))
            .expect("converts");
    assert!(v1.configuration.expect("configuration").return_immediately);
}

#[test]
fn bad_rest_bodies_are_refused_by_name() {
    for (body, says) in [
        (json!([1]), "must be an object"),
        (json!({}), "needs a message"),
        (
            json!({"message": {"messageId": "m", "role": "ROLE_BOSS", "content": []}}),
            "role",
        ),
        (
            json!({"message": {"messageId": "m", "role": "ROLE_USER", "content": [{"x": 1}]}}),
            "a part needs",
        ),
        (
            json!({"message": {"messageId": "m", "role": "ROLE_USER", "content": [{"data": 3}]}}),
            "data",
        ),
    ] {
        let e = v03::rest::send_request_from_rest(body.clone()).expect_err("refused");
        assert!(e.0.contains(says), "{body}: {}", e.0);
    }
}

#[test]
fn answers_are_v03_proto_json_with_only_the_protos_fields() {
    let task: Task = read(json!({
        "id": "t-1", "contextId": "c-1",
        "status": {"state": "TASK_STATE_CANCELED", "timestamp": "2026-01-01T00:00:00Z",
            "message": {"messageId": "s", "role": "ROLE_AGENT", "parts": [{"text": "stopped"}]}},
        "artifacts": [{"artifactId": "a", "name": "n", "parts": [
            {"text": "x"}, {"data": {"k": 1}}, {"url": "https://x.example/f", "mediaType": "image/png", "filename": "f.png"}]}],
        "history": [{"messageId": "m-1", "role": "ROLE_USER", "referenceTaskIds": ["t-0"], "parts": [{"text": "hi"}]}]}));
    let rest = v03::rest::task_to_rest(&convert::task_from_v1(&task));
    assert_eq!(
        rest,
        json!({"id": "t-1", "contextId": "c-1",
            "status": {"state": "TASK_STATE_CANCELLED", "timestamp": "2026-01-01T00:00:00.000Z",
                "message": {"messageId": "s", "role": "ROLE_AGENT", "content": [{"text": "stopped"}]}},
            "artifacts": [{"artifactId": "a", "name": "n", "parts": [
                {"text": "x"}, {"data": {"data": {"k": 1}}},
                {"file": {"fileWithUri": "https://x.example/f", "mimeType": "image/png", "name": "f.png"}}]}],
            "history": [{"messageId": "m-1", "role": "ROLE_USER", "content": [{"text": "hi"}]}]})
    );
    for (state, name) in [
        (TaskState::Submitted, "TASK_STATE_SUBMITTED"),
        (TaskState::Working, "TASK_STATE_WORKING"),
        (TaskState::InputRequired, "TASK_STATE_INPUT_REQUIRED"),
        (TaskState::AuthRequired, "TASK_STATE_AUTH_REQUIRED"),
        (TaskState::Completed, "TASK_STATE_COMPLETED"),
        (TaskState::Failed, "TASK_STATE_FAILED"),
        (TaskState::Rejected, "TASK_STATE_REJECTED"),
        (TaskState::Canceled, "TASK_STATE_CANCELLED"),
    ] {
        let t: Task = read(v1_task(state.as_str()));
        let rest = v03::rest::task_to_rest(&convert::task_from_v1(&t));
        assert_eq!(rest["status"]["state"], name);
    }
}

#[test]
fn stream_events_and_send_answers_in_proto_json() {
    let events: [StreamResponse; 3] = [
        read(json!({"task": v1_task("TASK_STATE_SUBMITTED")})),
        read(
            json!({"artifactUpdate": {"taskId": "t-1", "contextId": "c-1", "append": true, "lastChunk": false,
            "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}}}),
        ),
        read(json!({"statusUpdate": {"taskId": "t-1", "contextId": "c-1",
            "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}})),
    ];
    let rest: Vec<Value> = events
        .iter()
        .map(|e| v03::rest::event_to_rest(&convert::event_from_v1(e)))
        .collect();
    assert_eq!(rest[0]["task"]["status"]["state"], "TASK_STATE_SUBMITTED");
    assert!(rest[0]["task"].get("kind").is_none());
    // A false lastChunk is proto3's default: not written.
    assert_eq!(
        rest[1],
        json!({"artifactUpdate": {"taskId": "t-1", "contextId": "c-1", "append": true,
            "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}}})
    );
    assert_eq!(
        rest[2],
        json!({"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "final": true,
            "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}})
    );
    let reply: SendMessageResponse = read(
        json!({"message": {"messageId": "r", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}}),
    );
    assert_eq!(
        v03::rest::event_to_rest(&convert::send_result_from_v1(&reply)),
        json!({"message": {"messageId": "r", "role": "ROLE_AGENT", "content": [{"text": "hi"}]}})
    );
}

#[test]
fn push_configs_both_ways_in_proto_json() {
    // As the a2a-sdk 0.3 REST client posts it: the whole CreateTaskPushNotificationConfigRequest.
    let sdk_body = json!({"parent": "tasks/t-1", "configId": "w",
        "config": {"name": "tasks/t-1/pushNotificationConfigs/w",
            "pushNotificationConfig": {"url": "https://hook.example/a", "token": "tok"}}});
    let config = v03::rest::push_config_from_rest("t-1", sdk_body).expect("reads");
    assert_eq!(config.task_id, "t-1");
    assert_eq!(config.push_notification_config.id.as_deref(), Some("w"));
    let v1 = convert::set_push_config_to_v1("", config);
    assert_eq!((v1.task_id.as_str(), v1.id.as_str()), ("t-1", "w"));
    // The proto's `body: "config"` form, with the id from the config itself; the path's task wins.
    let bare = json!({"name": "tasks/other/pushNotificationConfigs/x",
        "pushNotificationConfig": {"id": "x", "url": "https://hook.example/b"}});
    let config = v03::rest::push_config_from_rest("t-1", bare).expect("reads");
    assert_eq!(config.task_id, "t-1");
    assert_eq!(config.push_notification_config.id.as_deref(), Some("x"));
    assert!(v03::rest::push_config_from_rest("t-1", json!({"config": {}})).is_err());
    // Answers: the resource name and the config's proto fields only.
    let answer = convert::push_config_from_v1(&v1);
    assert_eq!(
        v03::rest::push_config_to_rest(&answer),
        json!({"name": "tasks/t-1/pushNotificationConfigs/w",
            "pushNotificationConfig": {"id": "w", "url": "https://hook.example/a", "token": "tok"}})
    );
    let list = v03::rest::push_configs_to_rest(&[answer], "next");
    assert_eq!(
        list["configs"][0]["name"],
        "tasks/t-1/pushNotificationConfigs/w"
    );
    assert_eq!(list["nextPageToken"], "next");
}
