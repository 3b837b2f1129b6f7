//! Issue 11, point 1: every proto message refuses a JSON array (or any non-object) where the
//! proto has a message, at any depth, with the `invalid type` error of any other mismatch.
//!
//! The examples below are Rust struct literals without `..Default::default()`, so a field
//! added to a type does not compile here until the example sets it; serialized, they hold
//! every member in declaration order. The walk then replaces each object of each example,
//! one at a time, by the array of its member values (exactly the positional form serde's
//! derive used to accept) and expects the decode to fail.

use ferry_proto::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

fn meta() -> Option<Struct> {
    let mut m = Map::new();
    m.insert("k".into(), json!({"nested": [1, 2]}));
    Some(m)
}

fn strings(s: &str) -> Vec<String> {
    vec![s.to_owned()]
}

fn every_part() -> Vec<Part> {
    vec![
        Part::text("t")
            .with_filename("f.txt")
            .with_media_type("text/plain"),
        Part {
            metadata: meta(),
            ..Part::new(PartContent::Raw(vec![1, 2]))
        },
        Part::new(PartContent::Url("https://example.com/f".into())),
        Part::data(json!({"confirm": true, "list": [{"a": 1}]})),
    ]
}

fn message() -> Message {
    Message {
        message_id: "m-1".into(),
        context_id: "c-1".into(),
        task_id: "t-1".into(),
        role: Role::User,
        parts: every_part(),
        metadata: meta(),
        extensions: strings("urn:x"),
        reference_task_ids: strings("t-0"),
    }
}

fn artifact() -> Artifact {
    Artifact {
        artifact_id: "a-1".into(),
        name: "n".into(),
        description: "d".into(),
        parts: every_part(),
        metadata: meta(),
        extensions: strings("urn:x"),
    }
}

fn status() -> TaskStatus {
    TaskStatus {
        state: TaskState::Working,
        message: Some(message().into()),
        timestamp: Some(Timestamp::from_millis(1_700_000_000_000)),
    }
}

fn task() -> Task {
    Task {
        id: "t-1".into(),
        context_id: "c-1".into(),
        status: status(),
        artifacts: vec![artifact().into()],
        history: vec![message().into()],
        metadata: meta(),
    }
}

fn push_config() -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        tenant: "tn".into(),
        id: "p-1".into(),
        task_id: "t-1".into(),
        url: "https://example.com/hook".into(),
        token: "tok".into(),
        authentication: Some(AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: "c".into(),
        }),
    }
}

fn flow() -> OAuthFlow {
    OAuthFlow {
        authorization_url: "https://example.com/a".into(),
        device_authorization_url: "https://example.com/d".into(),
        token_url: "https://example.com/t".into(),
        refresh_url: "https://example.com/r".into(),
        scopes: BTreeMap::from([("read".to_owned(), "reads".to_owned())]),
        pkce_required: true,
    }
}

/// One scheme of each kind, and each OAuth flow kind.
fn every_scheme() -> BTreeMap<String, SecurityScheme> {
    let flows = [
        OAuthFlows::AuthorizationCode(flow()),
        OAuthFlows::ClientCredentials(flow()),
        OAuthFlows::Implicit(flow()),
        OAuthFlows::Password(flow()),
        OAuthFlows::DeviceCode(flow()),
    ];
    let mut schemes = vec![
        SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
            description: "d".into(),
            location: "header".into(),
            name: "X-Key".into(),
        }),
        SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
            description: "d".into(),
            scheme: "Bearer".into(),
            bearer_format: "JWT".into(),
        }),
        SecurityScheme::OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme {
            description: "d".into(),
            open_id_connect_url: "https://example.com/.well-known/openid-configuration".into(),
        }),
        SecurityScheme::MtlsSecurityScheme(MutualTlsSecurityScheme {
            description: "d".into(),
        }),
    ];
    schemes.extend(flows.into_iter().map(|flows| {
        SecurityScheme::Oauth2SecurityScheme(OAuth2SecurityScheme {
            description: "d".into(),
            flows,
            oauth2_metadata_url: "https://example.com/m".into(),
        })
    }));
    // Exhaustive on purpose: a new scheme kind must be added above.
    for s in &schemes {
        match s {
            SecurityScheme::ApiKeySecurityScheme(_)
            | SecurityScheme::HttpAuthSecurityScheme(_)
            | SecurityScheme::Oauth2SecurityScheme(_)
            | SecurityScheme::OpenIdConnectSecurityScheme(_)
            | SecurityScheme::MtlsSecurityScheme(_) => {}
        }
    }
    schemes
        .into_iter()
        .enumerate()
        .map(|(i, s)| (format!("s{i}"), s))
        .collect()
}

fn requirement() -> SecurityRequirement {
    SecurityRequirement {
        schemes: BTreeMap::from([(
            "s0".to_owned(),
            StringList {
                list: strings("read"),
            },
        )]),
    }
}

fn card() -> AgentCard {
    AgentCard {
        name: "n".into(),
        description: "d".into(),
        supported_interfaces: vec![AgentInterface {
            url: "https://example.com/rpc".into(),
            protocol_binding: "JSONRPC".into(),
            tenant: "tn".into(),
            protocol_version: "1.0".into(),
        }],
        provider: Some(AgentProvider {
            url: "https://example.com".into(),
            organization: "o".into(),
        }),
        version: "1".into(),
        documentation_url: Some("https://example.com/doc".into()),
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(false),
            extensions: vec![AgentExtension {
                uri: "urn:x".into(),
                description: "d".into(),
                required: true,
                params: meta(),
            }],
            extended_agent_card: Some(false),
        },
        security_schemes: every_scheme(),
        security_requirements: vec![requirement()],
        default_input_modes: strings("text/plain"),
        default_output_modes: strings("text/plain"),
        skills: vec![AgentSkill {
            id: "s".into(),
            name: "n".into(),
            description: "d".into(),
            tags: strings("t"),
            examples: strings("e"),
            input_modes: strings("text/plain"),
            output_modes: strings("text/plain"),
            security_requirements: vec![requirement()],
        }],
        signatures: vec![AgentCardSignature {
            protected: "e30".into(),
            signature: "AA".into(),
            header: meta(),
        }],
        icon_url: Some("https://example.com/i.png".into()),
    }
}

fn send_request() -> SendMessageRequest {
    SendMessageRequest {
        tenant: "tn".into(),
        message: message(),
        configuration: Some(SendMessageConfiguration {
            accepted_output_modes: strings("text/plain"),
            task_push_notification_config: Some(push_config()),
            history_length: Some(3),
            return_immediately: true,
        }),
        metadata: meta(),
    }
}

fn stream_events() -> Vec<StreamResponse> {
    vec![
        StreamResponse::Task(task().into()),
        StreamResponse::Message(message()),
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: "t-1".into(),
            context_id: "c-1".into(),
            status: status(),
            metadata: meta(),
        }),
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: "t-1".into(),
            context_id: "c-1".into(),
            artifact: artifact().into(),
            append: true,
            last_chunk: true,
            metadata: meta(),
        }),
    ]
}

/// JSON that keeps the member order of the text (serde_json's `Value` sorts members), so
/// that the positional form below lists members in declaration order.
#[derive(Debug, Clone)]
enum Json {
    Scalar(Value),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl<'de> serde::Deserialize<'de> for Json {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
                Ok(Json::Scalar(b.into()))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
                Ok(Json::Scalar(n.into()))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
                Ok(Json::Scalar(n.into()))
            }
            fn visit_f64<E>(self, n: f64) -> Result<Json, E> {
                Ok(Json::Scalar(n.into()))
            }
            fn visit_str<E>(self, s: &str) -> Result<Json, E> {
                Ok(Json::Scalar(s.into()))
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Scalar(Value::Null))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = a.next_element()? {
                    items.push(item);
                }
                Ok(Json::Array(items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = a.next_entry()? {
                    members.push(member);
                }
                Ok(Json::Object(members))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Json {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            Json::Scalar(v) => v.serialize(s),
            Json::Array(items) => items.serialize(s),
            Json::Object(members) => {
                let mut m = s.serialize_map(Some(members.len()))?;
                for (k, v) in members {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
        }
    }
}

/// A decoder for one root type: the decoded value (serialized again) when the JSON text
/// decodes, through both serde_json entry points (text and `Value`), which must agree.
type Decode = fn(&str) -> Result<Value, String>;

fn decoder<T: DeserializeOwned + Serialize>(text: &str) -> Result<Value, String> {
    let written = |t: T| serde_json::to_value(t).expect("serializes");
    let from_text = serde_json::from_str::<T>(text)
        .map(written)
        .map_err(|e| e.to_string());
    let value: Value = serde_json::from_str(text).expect("JSON");
    let from_value = serde_json::from_value::<T>(value)
        .map(written)
        .map_err(|e| e.to_string());
    assert_eq!(
        from_text.is_ok(),
        from_value.is_ok(),
        "text and Value decoding disagree on {text}: {from_text:?} / {from_value:?}"
    );
    from_text
}

fn example<T: Serialize>(t: &T) -> Json {
    serde_json::from_str(&serde_json::to_string(t).expect("serialize")).expect("parse")
}

/// Every root type the bindings, the client and the trust crate decode, with a full example.
fn roots() -> Vec<(&'static str, Json, Decode)> {
    let mut roots: Vec<(&'static str, Json, Decode)> = vec![
        (
            "SendMessageRequest",
            example(&send_request()),
            decoder::<SendMessageRequest>,
        ),
        (
            "GetTaskRequest",
            example(&GetTaskRequest {
                tenant: "tn".into(),
                id: "t-1".into(),
                history_length: Some(1),
            }),
            decoder::<GetTaskRequest>,
        ),
        (
            "ListTasksRequest",
            example(&ListTasksRequest {
                tenant: "tn".into(),
                context_id: "c-1".into(),
                status: TaskState::Working,
                page_size: Some(5),
                page_token: "p".into(),
                history_length: Some(1),
                status_timestamp_after: Some(Timestamp::from_millis(1)),
                include_artifacts: Some(true),
            }),
            decoder::<ListTasksRequest>,
        ),
        (
            "ListTasksResponse",
            example(&ListTasksResponse {
                tasks: vec![task()],
                next_page_token: "n".into(),
                page_size: 1,
                total_size: 2,
            }),
            decoder::<ListTasksResponse>,
        ),
        (
            "CancelTaskRequest",
            example(&CancelTaskRequest {
                tenant: "tn".into(),
                id: "t-1".into(),
                metadata: meta(),
            }),
            decoder::<CancelTaskRequest>,
        ),
        (
            "SubscribeToTaskRequest",
            example(&SubscribeToTaskRequest {
                tenant: "tn".into(),
                id: "t-1".into(),
            }),
            decoder::<SubscribeToTaskRequest>,
        ),
        (
            "TaskPushNotificationConfig",
            example(&push_config()),
            decoder::<TaskPushNotificationConfig>,
        ),
        (
            "TaskPushNotificationConfigRef",
            example(&TaskPushNotificationConfigRef {
                tenant: "tn".into(),
                task_id: "t-1".into(),
                id: "p-1".into(),
            }),
            decoder::<TaskPushNotificationConfigRef>,
        ),
        (
            "ListTaskPushNotificationConfigsRequest",
            example(&ListTaskPushNotificationConfigsRequest {
                tenant: "tn".into(),
                task_id: "t-1".into(),
                page_size: 2,
                page_token: "p".into(),
            }),
            decoder::<ListTaskPushNotificationConfigsRequest>,
        ),
        (
            "ListTaskPushNotificationConfigsResponse",
            example(&ListTaskPushNotificationConfigsResponse {
                configs: vec![push_config()],
                next_page_token: "n".into(),
            }),
            decoder::<ListTaskPushNotificationConfigsResponse>,
        ),
        (
            "GetExtendedAgentCardRequest",
            example(&GetExtendedAgentCardRequest {
                tenant: "tn".into(),
            }),
            decoder::<GetExtendedAgentCardRequest>,
        ),
        ("AgentCard", example(&card()), decoder::<AgentCard>),
        ("Task", example(&task()), decoder::<Task>),
        (
            "SendMessageResponse(task)",
            example(&SendMessageResponse::Task(task())),
            decoder::<SendMessageResponse>,
        ),
        (
            "SendMessageResponse(message)",
            example(&SendMessageResponse::Message(message())),
            decoder::<SendMessageResponse>,
        ),
        (
            "JsonRpcResponse",
            example(&JsonRpcResponse {
                jsonrpc: "2.0".into(),
                id: json!(1),
                result: Some(json!({"a": 1})),
                error: None,
            }),
            decoder::<JsonRpcResponse>,
        ),
    ];
    for event in stream_events() {
        roots.push(("StreamResponse", example(&event), decoder::<StreamResponse>));
    }
    roots
}

/// Members whose value is any JSON (a data part's `data`, an envelope's `result`), a map
/// keyed by names that are data (`securitySchemes`, `schemes`, `scopes`), or a
/// `Struct` of any JSON values (`metadata`, `params`, `header`): the walk does not go into
/// them, but a `Struct` itself must still be an object.
const FREE_FORM: &[&str] = &["data", "result", "metadata", "params", "header"];

/// Maps whose keys are names chosen by a card's author, not proto field names: respelling
/// them would change the data.
const NAMED_MAPS: &[&str] = &["securitySchemes", "schemes", "scopes"];

/// Paths (member names and indexes) of every object in `v` that is a proto message or a
/// map, not content inside a free-form member.
fn objects(v: &Json, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Json::Object(members) => {
            out.push(at.clone());
            for (k, child) in members {
                at.push(k.clone());
                if !FREE_FORM.contains(&k.as_str()) {
                    objects(child, at, out);
                } else if matches!(child, Json::Object(_)) && k != "data" && k != "result" {
                    out.push(at.clone());
                }
                at.pop();
            }
        }
        Json::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                at.push(i.to_string());
                objects(child, at, out);
                at.pop();
            }
        }
        Json::Scalar(_) => {}
    }
}

/// `v` with the object at `path` replaced by the array of its member values, in order.
fn positional(v: &Json, path: &[String]) -> Json {
    let Some((first, rest)) = path.split_first() else {
        return match v {
            Json::Object(members) => Json::Array(members.iter().map(|(_, v)| v.clone()).collect()),
            _ => unreachable!("objects() lists objects only"),
        };
    };
    let step = |key: &str, child: &Json| {
        if key == first {
            positional(child, rest)
        } else {
            child.clone()
        }
    };
    match v {
        Json::Object(members) => Json::Object(
            members
                .iter()
                .map(|(k, c)| (k.clone(), step(k, c)))
                .collect(),
        ),
        Json::Array(items) => Json::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, c)| step(&i.to_string(), c))
                .collect(),
        ),
        Json::Scalar(_) => unreachable!("paths lead to objects"),
    }
}

fn text(v: &Json) -> String {
    serde_json::to_string(v).expect("serialize")
}

#[test]
fn examples_decode_and_round_trip() {
    for (name, v, decode) in roots() {
        decode(&text(&v))
            .unwrap_or_else(|e| panic!("{name}: the full example does not decode: {e}"));
    }
}

#[test]
fn every_object_of_every_message_refuses_an_array() {
    let mut walked = 0;
    for (name, v, decode) in roots() {
        let mut paths = Vec::new();
        objects(&v, &mut Vec::new(), &mut paths);
        for path in paths {
            walked += 1;
            let pointer: String = path.iter().map(|p| format!("/{p}")).collect();
            let attack = text(&positional(&v, &path));
            match decode(&attack) {
                Ok(_) => panic!("{name}: an array at {pointer:?} was accepted: {attack}"),
                // A oneof (an externally tagged enum) refuses the array before any visitor
                // sees it, so serde_json's text decoder says "expected value" there.
                Err(e) => assert!(
                    e.contains("invalid type: sequence") || e.starts_with("expected value"),
                    "{name} at {pointer:?}: want a type mismatch, got {e}"
                ),
            }
        }
    }
    // The examples hold a few hundred objects; a walk of a handful means they shrank.
    assert!(walked > 200, "only {walked} objects walked");
}

#[test]
fn scalars_where_a_message_belongs_are_type_mismatches() {
    for bad in [json!(5), json!("m"), json!(true), json!([])] {
        let e = serde_json::from_value::<SendMessageRequest>(json!({ "message": bad }))
            .expect_err("refused");
        assert!(e.to_string().starts_with("invalid type"), "{e}");
    }
}

#[test]
fn a_bare_string_list_is_still_read_but_never_positionally() {
    // a2a-go writes a scope list as a bare array; that form stays accepted.
    let r: SecurityRequirement =
        serde_json::from_value(json!({"schemes": {"s": ["read", "write"]}})).expect("bare");
    assert_eq!(r.schemes["s"].list, ["read", "write"]);
    let r: SecurityRequirement =
        serde_json::from_value(json!({"schemes": {"s": {"list": ["read"]}}})).expect("wrapped");
    assert_eq!(r.schemes["s"].list, ["read"]);
    let r: SecurityRequirement =
        serde_json::from_value(json!({"schemes": {"s": null}})).expect("null");
    assert!(r.schemes["s"].list.is_empty());
    assert!(
        serde_json::from_value::<SecurityRequirement>(json!({"schemes": {"s": [["read"]]}}))
            .is_err()
    );
}

#[test]
fn the_json_rpc_envelope_is_an_object() {
    let ok: JsonRpcRequest<'_> =
        serde_json::from_str(r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}}"#)
            .expect("object");
    assert_eq!(ok.method.as_deref(), Some("GetTask"));
    let e =
        serde_json::from_str::<JsonRpcRequest<'_>>(r#"["2.0",1,"GetTask",{}]"#).expect_err("array");
    assert!(e.to_string().starts_with("invalid type: sequence"), "{e}");
}

#[test]
fn every_public_message_type_goes_through_the_object_check() {
    // The walk above covers what the examples reach; this covers what they might not: every
    // public struct that derives `Deserialize` must do so with `remote = "Self"`, the form
    // `proto_messages!` wraps in the object check.
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut checked = 0;
    let mut dirs = vec![src];
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    for path in files {
        let text = std::fs::read_to_string(&path).expect("read");
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(name) = line.strip_prefix("pub struct ") else {
                continue;
            };
            let attrs: Vec<&str> = lines[..i]
                .iter()
                .rev()
                .take_while(|l| l.starts_with("#[") || l.starts_with("///"))
                .copied()
                .collect();
            let derives = attrs
                .iter()
                .any(|a| a.starts_with("#[derive(") && a.contains("Deserialize"));
            if derives {
                checked += 1;
                assert!(
                    attrs.iter().any(|a| a.contains(r#"remote = "Self""#)),
                    "{}: pub struct {name} derives Deserialize without remote = \"Self\"",
                    path.display()
                );
            }
        }
    }
    assert!(checked > 30, "only {checked} message types found");
}

/// `camelName` → `camel_name`.
fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `v` with every member name of every message (and every oneof variant name) in its proto
/// snake_case spelling; free-form members keep their names. Counts the names it respelled.
fn respelled(v: &Json, count: &mut usize) -> Json {
    match v {
        Json::Object(members) => Json::Object(
            members
                .iter()
                .map(|(k, child)| {
                    let snake = snake_case(k);
                    if snake != *k {
                        *count += 1;
                    }
                    let child = if FREE_FORM.contains(&k.as_str()) {
                        child.clone()
                    } else if NAMED_MAPS.contains(&k.as_str()) {
                        named_map_respelled(child, count)
                    } else {
                        respelled(child, count)
                    };
                    (snake, child)
                })
                .collect(),
        ),
        Json::Array(items) => Json::Array(items.iter().map(|c| respelled(c, count)).collect()),
        Json::Scalar(_) => v.clone(),
    }
}

/// A map keyed by data names: the keys stay, the values (messages) are respelled.
fn named_map_respelled(v: &Json, count: &mut usize) -> Json {
    match v {
        Json::Object(entries) => Json::Object(
            entries
                .iter()
                .map(|(k, child)| (k.clone(), respelled(child, count)))
                .collect(),
        ),
        other => respelled(other, count),
    }
}

/// Issue 13: every multi-word field of every request, card and task type is accepted in its
/// proto spelling too (one mechanism: message.rs), and means the same.
#[test]
fn every_multi_word_field_is_accepted_in_snake_case() {
    let mut respelled_names = 0;
    for (name, v, decode) in roots() {
        let camel = decode(&text(&v)).expect("the example decodes");
        let snake_json = respelled(&v, &mut respelled_names);
        let snake = decode(&text(&snake_json))
            .unwrap_or_else(|e| panic!("{name}: snake_case refused: {e}\n{}", text(&snake_json)));
        assert_eq!(snake, camel, "{name}: the spellings decode differently");
    }
    assert!(
        respelled_names > 150,
        "only {respelled_names} names respelled"
    );
}

#[test]
fn both_spellings_of_one_field_are_a_duplicate() {
    let e = serde_json::from_str::<Task>(
        r#"{"id":"t","contextId":"a","context_id":"b","status":{"state":"TASK_STATE_WORKING"}}"#,
    )
    .expect_err("two spellings, one field");
    assert!(e.to_string().contains("duplicate field `contextId`"), "{e}");
    // Free-form names are kept as written.
    let t: Task = serde_json::from_str(
        r#"{"id":"t","status":{"state":"TASK_STATE_WORKING"},"metadata":{"trace_id":1,"traceId":2}}"#,
    )
    .expect("metadata names are data");
    let md = t.metadata.expect("metadata");
    assert_eq!(
        (md["trace_id"].clone(), md["traceId"].clone()),
        (json!(1), json!(2))
    );
}
