//! Canonical ProtoJSON documents of every message type, and the trip each makes through
//! its gRPC twin and protobuf bytes.

use ferry_proto::grpc::pb;
use ferry_proto::*;
use prost::Name;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::fmt::Debug;

/// One canonical ProtoJSON document and the round trip of its type through its gRPC twin.
pub(super) struct Fixture {
    pub(super) label: &'static str,
    /// The full name of the pb message (`lf.a2a.v1.Task`).
    pub(super) message: String,
    pub(super) json: Value,
    pub(super) round_trip: fn(&Value) -> Result<(), String>,
}

/// A fixture of ferry-proto type `T` whose twin is `P`.
fn case<T, P>(label: &'static str, json: Value) -> Fixture
where
    T: Serialize + DeserializeOwned + PartialEq + Debug + TryFrom<P, Error = A2aError>,
    P: prost::Message + Default + Name + for<'a> From<&'a T>,
{
    Fixture {
        label,
        message: P::full_name(),
        json,
        round_trip: round_trip::<T, P>,
    }
}

fn round_trip<T, P>(json: &Value) -> Result<(), String>
where
    T: Serialize + DeserializeOwned + PartialEq + Debug + TryFrom<P, Error = A2aError>,
    P: prost::Message + Default + for<'a> From<&'a T>,
{
    let original: T = serde_json::from_value(json.clone()).map_err(|e| format!("parse: {e}"))?;
    let printed = serde_json::to_value(&original).map_err(|e| format!("print: {e}"))?;
    if printed != *json {
        return Err(format!(
            "the fixture is not canonical; it prints as {printed}"
        ));
    }
    let bytes = P::from(&original).encode_to_vec();
    let decoded = P::decode(bytes.as_slice()).map_err(|e| format!("prost decode: {e}"))?;
    let back = T::try_from(decoded).map_err(|e| format!("refused: {e}"))?;
    if back != original {
        return Err(format!(
            "changed on the way:\n  was {original:?}\n  now {back:?}"
        ));
    }
    let reprinted = serde_json::to_value(&back).map_err(|e| format!("print: {e}"))?;
    if reprinted != *json {
        return Err(format!("prints differently after the trip: {reprinted}"));
    }
    Ok(())
}

fn metadata() -> Value {
    json!({
        "trace": "abc-123",
        "attempt": 2,
        "ratio": 0.25,
        "flags": [true, false, null],
        "nested": {"k": {"deep": [1, 2.5, "x", {}, []]}}
    })
}

/// A data part's value with every kind of JSON value, integers and fractions apart.
fn data() -> Value {
    json!({
        "int": 3,
        "zero": 0,
        "negative": -42,
        "largestExact": 9_007_199_254_740_991_i64,
        "smallestExact": -9_007_199_254_740_991_i64,
        "float": 1.5,
        "tiny": 1e-7,
        "huge": 1.0e300,
        "negativeFraction": -0.001,
        "yes": true,
        "no": false,
        "nothing": null,
        "text": "ünïcödé ✓",
        "list": [1, "two", [3.25], {"x": null}, []],
        "object": {"nested": {"deep": [false]}, "empty": {}}
    })
}

fn text_part() -> Value {
    json!({"text": "hello", "metadata": metadata(), "filename": "note.txt", "mediaType": "text/plain"})
}

fn raw_part() -> Value {
    json!({"raw": "AAEC/w==", "filename": "blob.bin", "mediaType": "application/octet-stream"})
}

fn url_part() -> Value {
    json!({"url": "https://files.example.com/report.pdf", "filename": "report.pdf", "mediaType": "application/pdf"})
}

fn data_part() -> Value {
    json!({"data": data(), "mediaType": "application/json"})
}

fn parts() -> Value {
    json!([
        text_part(),
        raw_part(),
        url_part(),
        data_part(),
        {"data": [1, "a", null, 2.75]},
        {"data": "just a string"},
        {"data": null},
        {"data": -7},
        {"data": false},
        {"text": ""},
        {"raw": ""}
    ])
}

pub(super) fn user_message() -> Value {
    json!({
        "messageId": "m-1",
        "contextId": "c-1",
        "taskId": "t-1",
        "role": "ROLE_USER",
        "parts": parts(),
        "metadata": metadata(),
        "extensions": ["https://ext.example.com/a", "https://ext.example.com/b"],
        "referenceTaskIds": ["t-0"]
    })
}

fn agent_message() -> Value {
    json!({
        "messageId": "m-2",
        "contextId": "c-1",
        "taskId": "t-1",
        "role": "ROLE_AGENT",
        "parts": [{"text": "Which day?"}]
    })
}

fn artifact() -> Value {
    json!({
        "artifactId": "a-1",
        "name": "report",
        "description": "the quarterly report",
        "parts": parts(),
        "metadata": metadata(),
        "extensions": ["https://ext.example.com/a"]
    })
}

fn status() -> Value {
    json!({"state": "TASK_STATE_INPUT_REQUIRED", "message": agent_message(), "timestamp": "2026-03-01T12:34:56.789Z"})
}

pub(super) fn task() -> Value {
    json!({
        "id": "t-1",
        "contextId": "c-1",
        "status": status(),
        "artifacts": [artifact(), {"artifactId": "a-2", "parts": []}],
        "history": [user_message(), agent_message()],
        "metadata": metadata()
    })
}

fn minimal_task() -> Value {
    json!({"id": "t-2", "status": {"state": "TASK_STATE_SUBMITTED"}})
}

fn status_update() -> Value {
    json!({"taskId": "t-1", "contextId": "c-1", "status": status(), "metadata": metadata()})
}

fn artifact_update() -> Value {
    json!({
        "taskId": "t-1",
        "contextId": "c-1",
        "artifact": artifact(),
        "append": true,
        "lastChunk": true,
        "metadata": metadata()
    })
}

fn push_config() -> Value {
    json!({
        "tenant": "acme",
        "id": "cfg-1",
        "taskId": "t-1",
        "url": "https://hooks.example.com/a2a",
        "token": "opaque",
        "authentication": {"scheme": "Bearer", "credentials": "s3cret"}
    })
}

fn authorization_code() -> Value {
    json!({
        "authorizationUrl": "https://auth.example.com/authorize",
        "tokenUrl": "https://auth.example.com/token",
        "refreshUrl": "https://auth.example.com/refresh",
        "scopes": {"read": "Read things", "write": "Write things"},
        "pkceRequired": true
    })
}

fn client_credentials() -> Value {
    json!({
        "tokenUrl": "https://auth.example.com/token",
        "refreshUrl": "https://auth.example.com/refresh",
        "scopes": {"service": "Act as a service"}
    })
}

fn implicit() -> Value {
    json!({
        "authorizationUrl": "https://auth.example.com/authorize",
        "refreshUrl": "https://auth.example.com/refresh",
        "scopes": {}
    })
}

fn password() -> Value {
    json!({
        "tokenUrl": "https://auth.example.com/token",
        "refreshUrl": "https://auth.example.com/refresh",
        "scopes": {"read": "Read things"}
    })
}

fn device_code() -> Value {
    json!({
        "deviceAuthorizationUrl": "https://auth.example.com/device",
        "tokenUrl": "https://auth.example.com/token",
        "refreshUrl": "https://auth.example.com/refresh",
        "scopes": {"read": "Read things"}
    })
}

fn oauth2(flows: Value) -> Value {
    json!({"oauth2SecurityScheme": {"flows": flows}})
}

fn security_schemes() -> Value {
    json!({
        "apiKey": {"apiKeySecurityScheme": {"description": "a key", "location": "header", "name": "X-API-Key"}},
        "bearer": {"httpAuthSecurityScheme": {"description": "a JWT", "scheme": "Bearer", "bearerFormat": "JWT"}},
        "basic": {"httpAuthSecurityScheme": {"scheme": "Basic"}},
        "code": {"oauth2SecurityScheme": {
            "description": "sign in",
            "flows": {"authorizationCode": authorization_code()},
            "oauth2MetadataUrl": "https://auth.example.com/.well-known/oauth-authorization-server"
        }},
        "client": oauth2(json!({"clientCredentials": client_credentials()})),
        "implicit": oauth2(json!({"implicit": implicit()})),
        "password": oauth2(json!({"password": password()})),
        "device": oauth2(json!({"deviceCode": device_code()})),
        "oidc": {"openIdConnectSecurityScheme": {
            "description": "Google",
            "openIdConnectUrl": "https://accounts.google.com/.well-known/openid-configuration"
        }},
        "mtls": {"mtlsSecurityScheme": {"description": "client certificates"}},
        "mtlsBare": {"mtlsSecurityScheme": {}}
    })
}

fn security_requirement() -> Value {
    json!({"schemes": {"oidc": {"list": ["openid", "email"]}, "mtls": {}}})
}

fn skill() -> Value {
    json!({
        "id": "route",
        "name": "Route planner",
        "description": "Plans a route",
        "tags": ["maps", "routing"],
        "examples": ["From A to B, avoiding tolls"],
        "inputModes": ["application/json"],
        "outputModes": ["image/png"],
        "securityRequirements": [{"schemes": {"code": {"list": ["read"]}}}]
    })
}

fn extension() -> Value {
    json!({
        "uri": "https://ext.example.com/a",
        "description": "adds a",
        "required": true,
        "params": {"level": 3, "modes": ["x", "y"]}
    })
}

pub(super) fn card() -> Value {
    json!({
        "name": "Route Planner",
        "description": "Plans routes",
        "supportedInterfaces": [
            {"url": "https://agent.example.com/a2a", "protocolBinding": "JSONRPC", "tenant": "acme", "protocolVersion": "1.0"},
            {"url": "agent.example.com:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
        ],
        "provider": {"url": "https://example.com", "organization": "Example Inc."},
        "version": "1.2.0",
        "documentationUrl": "https://docs.example.com/route-planner",
        "capabilities": {
            "streaming": true,
            "pushNotifications": false,
            "extensions": [extension(), {"uri": "https://ext.example.com/b"}],
            "extendedAgentCard": true
        },
        "securitySchemes": security_schemes(),
        "securityRequirements": [security_requirement(), {"schemes": {"apiKey": {}}}],
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain"],
        "skills": [skill(), {"id": "min", "name": "Minimal", "description": "d", "tags": []}],
        "signatures": [
            {"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "QFdk", "header": {"kid": "key-1"}},
            {"protected": "e30", "signature": "AA"}
        ],
        "iconUrl": "https://agent.example.com/icon.png"
    })
}

fn minimal_card() -> Value {
    json!({
        "name": "n",
        "description": "d",
        "supportedInterfaces": [],
        "version": "1",
        "capabilities": {},
        "defaultInputModes": [],
        "defaultOutputModes": [],
        "skills": []
    })
}

pub(super) fn fixtures() -> Vec<Fixture> {
    vec![
        // Tasks and what they hold.
        case::<Part, pb::Part>("text part", text_part()),
        case::<Part, pb::Part>("raw part", raw_part()),
        case::<Part, pb::Part>("url part", url_part()),
        case::<Part, pb::Part>("data part", data_part()),
        case::<Part, pb::Part>("null data part", json!({"data": null})),
        case::<Message, pb::Message>("user message", user_message()),
        case::<Message, pb::Message>("agent message", agent_message()),
        case::<Message, pb::Message>(
            "minimal message",
            json!({"messageId": "m", "role": "ROLE_UNSPECIFIED", "parts": []}),
        ),
        case::<Artifact, pb::Artifact>("artifact", artifact()),
        case::<Artifact, pb::Artifact>("minimal artifact", json!({"artifactId": "a", "parts": []})),
        case::<TaskStatus, pb::TaskStatus>("status", status()),
        case::<TaskStatus, pb::TaskStatus>(
            "status before 1970",
            json!({"state": "TASK_STATE_WORKING", "timestamp": "1969-12-31T23:59:59.999Z"}),
        ),
        case::<TaskStatus, pb::TaskStatus>(
            "unspecified status",
            json!({"state": "TASK_STATE_UNSPECIFIED"}),
        ),
        case::<Task, pb::Task>("task", task()),
        case::<Task, pb::Task>("minimal task", minimal_task()),
        case::<TaskStatusUpdateEvent, pb::TaskStatusUpdateEvent>("status update", status_update()),
        case::<TaskStatusUpdateEvent, pb::TaskStatusUpdateEvent>(
            "minimal status update",
            json!({"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}),
        ),
        case::<TaskArtifactUpdateEvent, pb::TaskArtifactUpdateEvent>(
            "artifact update",
            artifact_update(),
        ),
        case::<TaskArtifactUpdateEvent, pb::TaskArtifactUpdateEvent>(
            "minimal artifact update",
            json!({"taskId": "t", "contextId": "c", "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}}),
        ),
        case::<StreamResponse, pb::StreamResponse>("stream task", json!({"task": task()})),
        case::<StreamResponse, pb::StreamResponse>(
            "stream message",
            json!({"message": agent_message()}),
        ),
        case::<StreamResponse, pb::StreamResponse>(
            "stream status update",
            json!({"statusUpdate": status_update()}),
        ),
        case::<StreamResponse, pb::StreamResponse>(
            "stream artifact update",
            json!({"artifactUpdate": artifact_update()}),
        ),
        case::<SendMessageResponse, pb::SendMessageResponse>(
            "send answered with a task",
            json!({"task": task()}),
        ),
        case::<SendMessageResponse, pb::SendMessageResponse>(
            "send answered with a message",
            json!({"message": agent_message()}),
        ),
        // Requests and responses.
        case::<SendMessageRequest, pb::SendMessageRequest>(
            "send",
            json!({
                "tenant": "acme",
                "message": user_message(),
                "configuration": {
                    "acceptedOutputModes": ["text/plain", "application/json"],
                    "taskPushNotificationConfig": push_config(),
                    "historyLength": 0,
                    "returnImmediately": true
                },
                "metadata": metadata()
            }),
        ),
        case::<SendMessageRequest, pb::SendMessageRequest>(
            "minimal send",
            json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}),
        ),
        case::<SendMessageConfiguration, pb::SendMessageConfiguration>(
            "send configuration",
            json!({"acceptedOutputModes": ["text/plain"], "historyLength": 5}),
        ),
        case::<SendMessageConfiguration, pb::SendMessageConfiguration>(
            "empty send configuration",
            json!({}),
        ),
        case::<GetTaskRequest, pb::GetTaskRequest>(
            "get task",
            json!({"tenant": "acme", "id": "t-1", "historyLength": 3}),
        ),
        case::<GetTaskRequest, pb::GetTaskRequest>(
            "get task without history",
            json!({"id": "t-1", "historyLength": 0}),
        ),
        case::<GetTaskRequest, pb::GetTaskRequest>("minimal get task", json!({"id": "t-1"})),
        case::<ListTasksRequest, pb::ListTasksRequest>(
            "list tasks",
            json!({
                "tenant": "acme",
                "contextId": "c-1",
                "status": "TASK_STATE_WORKING",
                "pageSize": 20,
                "pageToken": "tok",
                "historyLength": 0,
                "statusTimestampAfter": "2026-01-01T00:00:00.000Z",
                "includeArtifacts": false
            }),
        ),
        case::<ListTasksRequest, pb::ListTasksRequest>("minimal list tasks", json!({})),
        case::<ListTasksResponse, pb::ListTasksResponse>(
            "list tasks answer",
            json!({"tasks": [task(), minimal_task()], "nextPageToken": "next", "pageSize": 2, "totalSize": 7}),
        ),
        case::<ListTasksResponse, pb::ListTasksResponse>(
            "empty list tasks answer",
            json!({"tasks": [], "nextPageToken": "", "pageSize": 0, "totalSize": 0}),
        ),
        case::<CancelTaskRequest, pb::CancelTaskRequest>(
            "cancel",
            json!({"tenant": "acme", "id": "t-1", "metadata": metadata()}),
        ),
        case::<CancelTaskRequest, pb::CancelTaskRequest>("minimal cancel", json!({"id": "t-1"})),
        case::<SubscribeToTaskRequest, pb::SubscribeToTaskRequest>(
            "subscribe",
            json!({"tenant": "acme", "id": "t-1"}),
        ),
        case::<SubscribeToTaskRequest, pb::SubscribeToTaskRequest>(
            "minimal subscribe",
            json!({"id": "t-1"}),
        ),
        case::<TaskPushNotificationConfig, pb::TaskPushNotificationConfig>(
            "push config",
            push_config(),
        ),
        case::<TaskPushNotificationConfig, pb::TaskPushNotificationConfig>(
            "minimal push config",
            json!({"url": "https://hooks.example.com/a2a"}),
        ),
        case::<AuthenticationInfo, pb::AuthenticationInfo>(
            "authentication",
            json!({"scheme": "Bearer", "credentials": "s3cret"}),
        ),
        case::<AuthenticationInfo, pb::AuthenticationInfo>(
            "minimal authentication",
            json!({"scheme": "Basic"}),
        ),
        case::<TaskPushNotificationConfigRef, pb::GetTaskPushNotificationConfigRequest>(
            "get push config",
            json!({"tenant": "acme", "taskId": "t-1", "id": "cfg-1"}),
        ),
        case::<TaskPushNotificationConfigRef, pb::GetTaskPushNotificationConfigRequest>(
            "minimal get push config",
            json!({"taskId": "t-1", "id": "cfg-1"}),
        ),
        case::<TaskPushNotificationConfigRef, pb::DeleteTaskPushNotificationConfigRequest>(
            "delete push config",
            json!({"tenant": "acme", "taskId": "t-1", "id": "cfg-1"}),
        ),
        case::<TaskPushNotificationConfigRef, pb::DeleteTaskPushNotificationConfigRequest>(
            "minimal delete push config",
            json!({"taskId": "t-1", "id": "cfg-1"}),
        ),
        case::<ListTaskPushNotificationConfigsRequest, pb::ListTaskPushNotificationConfigsRequest>(
            "list push configs",
            json!({"tenant": "acme", "taskId": "t-1", "pageSize": 10, "pageToken": "tok"}),
        ),
        case::<ListTaskPushNotificationConfigsRequest, pb::ListTaskPushNotificationConfigsRequest>(
            "minimal list push configs",
            json!({"taskId": "t-1"}),
        ),
        case::<ListTaskPushNotificationConfigsResponse, pb::ListTaskPushNotificationConfigsResponse>(
            "list push configs answer",
            json!({"configs": [push_config(), {"url": "https://h.example.com/"}], "nextPageToken": "n"}),
        ),
        case::<ListTaskPushNotificationConfigsResponse, pb::ListTaskPushNotificationConfigsResponse>(
            "empty list push configs answer",
            json!({"configs": [], "nextPageToken": ""}),
        ),
        case::<GetExtendedAgentCardRequest, pb::GetExtendedAgentCardRequest>(
            "extended card",
            json!({"tenant": "acme"}),
        ),
        case::<GetExtendedAgentCardRequest, pb::GetExtendedAgentCardRequest>(
            "minimal extended card",
            json!({}),
        ),
        // The card and what it holds.
        case::<AgentCard, pb::AgentCard>("card", card()),
        case::<AgentCard, pb::AgentCard>("minimal card", minimal_card()),
        case::<AgentInterface, pb::AgentInterface>(
            "interface",
            json!({"url": "https://a.example.com", "protocolBinding": "HTTP+JSON", "tenant": "t", "protocolVersion": "1.0"}),
        ),
        case::<AgentProvider, pb::AgentProvider>(
            "provider",
            json!({"url": "https://example.com", "organization": "Example Inc."}),
        ),
        case::<AgentCapabilities, pb::AgentCapabilities>(
            "capabilities",
            json!({"streaming": false, "pushNotifications": true, "extensions": [extension()], "extendedAgentCard": false}),
        ),
        case::<AgentCapabilities, pb::AgentCapabilities>("no capabilities", json!({})),
        case::<AgentExtension, pb::AgentExtension>("extension", extension()),
        case::<AgentExtension, pb::AgentExtension>("empty extension", json!({})),
        case::<AgentSkill, pb::AgentSkill>("skill", skill()),
        case::<AgentCardSignature, pb::AgentCardSignature>(
            "signature",
            json!({"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "QFdk", "header": {"kid": "k", "n": 1}}),
        ),
        case::<SecurityRequirement, pb::SecurityRequirement>(
            "security requirement",
            security_requirement(),
        ),
        case::<SecurityRequirement, pb::SecurityRequirement>(
            "empty security requirement",
            json!({"schemes": {}}),
        ),
        case::<StringList, pb::StringList>("scopes", json!({"list": ["a", "b"]})),
        case::<StringList, pb::StringList>("no scopes", json!({})),
        case::<SecurityScheme, pb::SecurityScheme>(
            "api key scheme",
            security_schemes()["apiKey"].clone(),
        ),
        case::<SecurityScheme, pb::SecurityScheme>(
            "http scheme",
            security_schemes()["bearer"].clone(),
        ),
        case::<SecurityScheme, pb::SecurityScheme>(
            "oauth2 scheme",
            security_schemes()["code"].clone(),
        ),
        case::<SecurityScheme, pb::SecurityScheme>(
            "openid connect scheme",
            security_schemes()["oidc"].clone(),
        ),
        case::<SecurityScheme, pb::SecurityScheme>(
            "mtls scheme",
            security_schemes()["mtls"].clone(),
        ),
        case::<ApiKeySecurityScheme, pb::ApiKeySecurityScheme>(
            "api key",
            json!({"description": "d", "location": "query", "name": "key"}),
        ),
        case::<HttpAuthSecurityScheme, pb::HttpAuthSecurityScheme>(
            "http auth",
            json!({"description": "d", "scheme": "Bearer", "bearerFormat": "JWT"}),
        ),
        case::<OAuth2SecurityScheme, pb::OAuth2SecurityScheme>(
            "oauth2",
            security_schemes()["code"]["oauth2SecurityScheme"].clone(),
        ),
        case::<OpenIdConnectSecurityScheme, pb::OpenIdConnectSecurityScheme>(
            "openid connect",
            json!({"openIdConnectUrl": "https://id.example.com/.well-known/openid-configuration"}),
        ),
        case::<MutualTlsSecurityScheme, pb::MutualTlsSecurityScheme>(
            "mutual tls",
            json!({"description": "d"}),
        ),
        case::<OAuthFlows, pb::OAuthFlows>(
            "authorization code flows",
            json!({"authorizationCode": authorization_code()}),
        ),
        case::<OAuthFlows, pb::OAuthFlows>(
            "client credentials flows",
            json!({"clientCredentials": client_credentials()}),
        ),
        case::<OAuthFlows, pb::OAuthFlows>("implicit flows", json!({"implicit": implicit()})),
        case::<OAuthFlows, pb::OAuthFlows>("password flows", json!({"password": password()})),
        case::<OAuthFlows, pb::OAuthFlows>(
            "device code flows",
            json!({"deviceCode": device_code()}),
        ),
        case::<OAuthFlow, pb::AuthorizationCodeOAuthFlow>(
            "authorization code flow",
            authorization_code(),
        ),
        case::<OAuthFlow, pb::ClientCredentialsOAuthFlow>(
            "client credentials flow",
            client_credentials(),
        ),
        case::<OAuthFlow, pb::ImplicitOAuthFlow>("implicit flow", implicit()),
        case::<OAuthFlow, pb::PasswordOAuthFlow>("password flow", password()),
        case::<OAuthFlow, pb::DeviceCodeOAuthFlow>("device code flow", device_code()),
    ]
}

#[test]
fn every_fixture_survives_the_trip_through_protobuf() {
    let failures: Vec<String> = fixtures()
        .iter()
        .filter_map(|f| {
            (f.round_trip)(&f.json)
                .err()
                .map(|e| format!("{}: {e}", f.label))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
