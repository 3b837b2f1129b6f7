//! Request and response messages of the eleven operations (spec §4.9–§4.14).

use crate::de;
use crate::message::proto_messages;
use crate::task::Struct;
use crate::{Message, Task, TaskState, Timestamp};
use serde::{Deserialize, Serialize};

/// `SendMessage` / `SendStreamingMessage` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct SendMessageRequest {
    /// Tenant routing value.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub tenant: String,
    /// The message.
    pub message: Message,
    /// How to answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    /// Request metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

/// How the server should answer a send.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    /// Media types the client accepts.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "de::vec_or_null"
    )]
    pub accepted_output_modes: Vec<String>,
    /// A push config to register for the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_push_notification_config: Option<TaskPushNotificationConfig>,
    /// At most this many recent history messages in the answer.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "de::opt_i32"
    )]
    pub history_length: Option<i32>,
    /// Answer right after the task is created instead of waiting.
    #[serde(default, skip_serializing_if = "de::is_false")]
    pub return_immediately: bool,
}

/// `GetTask` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct GetTaskRequest {
    /// Tenant routing value.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub tenant: String,
    /// The task id.
    pub id: String,
    /// At most this many recent history messages.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "de::opt_i32"
    )]
    pub history_length: Option<i32>,
}

/// `ListTasks` parameters (spec §4.11).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct ListTasksRequest {
    /// Tenant routing value.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub tenant: String,
    /// Only tasks of this context.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub context_id: String,
    /// Only tasks in this state (`Unspecified` = any).
    #[serde(default, skip_serializing_if = "is_unspecified")]
    pub status: TaskState,
    /// Page size, 1..=100; 50 when unset.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "de::opt_i32"
    )]
    pub page_size: Option<i32>,
    /// Cursor from a previous page.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub page_token: String,
    /// At most this many recent history messages per task.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "de::opt_i32"
    )]
    pub history_length: Option<i32>,
    /// Only tasks whose status timestamp is at or after this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_timestamp_after: Option<Timestamp>,
    /// Include artifacts (default false: the key is absent from every task).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_artifacts: Option<bool>,
}

fn is_unspecified(s: &TaskState) -> bool {
    *s == TaskState::Unspecified
}

/// `ListTasks` result: all four members are always present.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct ListTasksResponse {
    /// This page of tasks.
    #[serde(default, deserialize_with = "de::vec_or_null")]
    pub tasks: Vec<Task>,
    /// Cursor for the next page; `""` on the last page.
    #[serde(default, deserialize_with = "de::string_or_null")]
    pub next_page_token: String,
    /// The page size used.
    #[serde(default, deserialize_with = "de::i32_or_zero")]
    pub page_size: i32,
    /// Matching tasks before paging.
    #[serde(default, deserialize_with = "de::i32_or_zero")]
    pub total_size: i32,
}

/// `CancelTask` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct CancelTaskRequest {
    /// Tenant routing value.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub tenant: String,
    /// The task id.
    pub id: String,
    /// Request metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

/// `SubscribeToTask` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct SubscribeToTaskRequest {
    /// Tenant routing value.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub tenant: String,
    /// The task id.
    pub id: String,
}

/// A webhook registered for a task (spec §4.13); also the `CreateTaskPushNotificationConfig`
/// request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// Tenant routing value.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub tenant: String,
    /// Config id (assigned by the server when empty).
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub id: String,
    /// The task.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub task_id: String,
    /// The webhook URL.
    pub url: String,
    /// Opaque client token.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub token: String,
    /// How to authenticate to the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
}

/// Credentials for a webhook call: `Authorization: {scheme} {credentials}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct AuthenticationInfo {
    /// IANA HTTP auth scheme, e.g. `Bearer`.
    pub scheme: String,
    /// The credentials.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub credentials: String,
}

/// `GetTaskPushNotificationConfig` and `DeleteTaskPushNotificationConfig` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct TaskPushNotificationConfigRef {
    /// Tenant routing value.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub tenant: String,
    /// The task.
    pub task_id: String,
    /// The config id.
    pub id: String,
}

/// `ListTaskPushNotificationConfigs` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsRequest {
    /// Tenant routing value.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub tenant: String,
    /// The task.
    pub task_id: String,
    /// Page size (0 = server default).
    #[serde(
        default,
        skip_serializing_if = "de::is_zero",
        deserialize_with = "de::i32_or_zero"
    )]
    pub page_size: i32,
    /// Cursor from a previous page.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub page_token: String,
}

/// `ListTaskPushNotificationConfigs` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsResponse {
    /// The configs.
    #[serde(default, deserialize_with = "de::vec_or_null")]
    pub configs: Vec<TaskPushNotificationConfig>,
    /// Cursor for the next page; `""` on the last page.
    #[serde(default, deserialize_with = "de::string_or_null")]
    pub next_page_token: String,
}

/// `GetExtendedAgentCard` parameters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct GetExtendedAgentCardRequest {
    /// Tenant routing value.
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "de::string_or_null"
    )]
    pub tenant: String,
}

proto_messages!(
    SendMessageRequest,
    SendMessageConfiguration,
    GetTaskRequest,
    ListTasksRequest,
    ListTasksResponse,
    CancelTaskRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    AuthenticationInfo,
    TaskPushNotificationConfigRef,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    GetExtendedAgentCardRequest,
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spec_send_request_round_trips() {
        // shared/spec/a2a-v1.md §2.2 example params.
        let wire = json!({"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]},
          "configuration":{"acceptedOutputModes":["text/plain"],"historyLength":5}});
        let r: SendMessageRequest = serde_json::from_value(json!({
          "message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]},
          "configuration":{"acceptedOutputModes":["text/plain"],"historyLength":5,"returnImmediately":false}}))
        .expect("parse");
        assert_eq!(
            r.configuration.as_ref().and_then(|c| c.history_length),
            Some(5)
        );
        assert_eq!(serde_json::to_value(&r).expect("ser"), wire);
    }

    #[test]
    fn presence_is_kept_and_ints_come_as_strings() {
        let r: ListTasksRequest = serde_json::from_value(
            json!({"context_id":"c","page_size":"20","include_artifacts":false,"historyLength":0,"status":"TASK_STATE_WORKING"}),
        )
        .expect("parse");
        assert_eq!(r.page_size, Some(20));
        assert_eq!(r.include_artifacts, Some(false));
        assert_eq!(r.history_length, Some(0));
        assert_eq!(r.status, TaskState::Working);
        assert_eq!(
            serde_json::to_value(&r).expect("ser"),
            json!({"contextId":"c","status":"TASK_STATE_WORKING","pageSize":20,"historyLength":0,"includeArtifacts":false})
        );
        assert!(serde_json::from_value::<ListTasksRequest>(json!({"pageSize":"ten"})).is_err());
        assert!(serde_json::from_value::<ListTasksRequest>(json!({"pageSize":1.5})).is_err());
    }

    #[test]
    fn list_response_prints_every_member() {
        let r = ListTasksResponse {
            tasks: vec![],
            next_page_token: String::new(),
            page_size: 50,
            total_size: 0,
        };
        assert_eq!(
            serde_json::to_value(&r).expect("ser"),
            json!({"tasks":[],"nextPageToken":"","pageSize":50,"totalSize":0})
        );
    }

    #[test]
    fn push_config_snake_case() {
        let c: TaskPushNotificationConfig = serde_json::from_value(
            json!({"task_id":"t","id":"c1","url":"https://h/x","authentication":{"scheme":"Bearer","credentials":"s"}}),
        )
        .expect("parse");
        assert_eq!(c.task_id, "t");
        assert_eq!(
            serde_json::to_value(&c).expect("ser"),
            json!({"id":"c1","taskId":"t","url":"https://h/x","authentication":{"scheme":"Bearer","credentials":"s"}})
        );
    }
}
