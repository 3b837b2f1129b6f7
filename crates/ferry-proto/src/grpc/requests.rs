//! The request and response messages of the eleven operations, push notification configs
//! included, and `google.protobuf.Empty`.

use super::invalid::{Decode, Invalid, optional, repeated, required, try_from_pb};
use super::pb;
use super::task::task_state;
use super::value::{struct_to_pb, timestamp_to_pb};
use crate::{
    AuthenticationInfo, CancelTaskRequest, Empty, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, SendMessageConfiguration, SendMessageRequest,
    SubscribeToTaskRequest, Task, TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};

impl From<&SendMessageRequest> for pb::SendMessageRequest {
    fn from(r: &SendMessageRequest) -> Self {
        pb::SendMessageRequest {
            tenant: r.tenant.clone(),
            message: Some(pb::Message::from(&r.message)),
            configuration: r
                .configuration
                .as_ref()
                .map(pb::SendMessageConfiguration::from),
            metadata: r.metadata.as_ref().map(struct_to_pb),
        }
    }
}

impl Decode for SendMessageRequest {
    type Pb = pb::SendMessageRequest;

    fn decode(pb: pb::SendMessageRequest) -> Result<SendMessageRequest, Invalid> {
        Ok(SendMessageRequest {
            tenant: pb.tenant,
            message: required(pb.message, "message")?,
            configuration: optional(pb.configuration, "configuration")?,
            metadata: optional(pb.metadata, "metadata")?,
        })
    }
}

impl From<&SendMessageConfiguration> for pb::SendMessageConfiguration {
    fn from(c: &SendMessageConfiguration) -> Self {
        pb::SendMessageConfiguration {
            accepted_output_modes: c.accepted_output_modes.clone(),
            task_push_notification_config: c
                .task_push_notification_config
                .as_ref()
                .map(pb::TaskPushNotificationConfig::from),
            history_length: c.history_length,
            return_immediately: c.return_immediately,
        }
    }
}

impl Decode for SendMessageConfiguration {
    type Pb = pb::SendMessageConfiguration;

    fn decode(pb: pb::SendMessageConfiguration) -> Result<SendMessageConfiguration, Invalid> {
        Ok(SendMessageConfiguration {
            accepted_output_modes: pb.accepted_output_modes,
            task_push_notification_config: optional(
                pb.task_push_notification_config,
                "taskPushNotificationConfig",
            )?,
            history_length: pb.history_length,
            return_immediately: pb.return_immediately,
        })
    }
}

impl From<&GetTaskRequest> for pb::GetTaskRequest {
    fn from(r: &GetTaskRequest) -> Self {
        pb::GetTaskRequest {
            tenant: r.tenant.clone(),
            id: r.id.clone(),
            history_length: r.history_length,
        }
    }
}

impl Decode for GetTaskRequest {
    type Pb = pb::GetTaskRequest;

    fn decode(pb: pb::GetTaskRequest) -> Result<GetTaskRequest, Invalid> {
        Ok(GetTaskRequest {
            tenant: pb.tenant,
            id: pb.id,
            history_length: pb.history_length,
        })
    }
}

impl From<&ListTasksRequest> for pb::ListTasksRequest {
    fn from(r: &ListTasksRequest) -> Self {
        pb::ListTasksRequest {
            tenant: r.tenant.clone(),
            context_id: r.context_id.clone(),
            status: pb::TaskState::from(r.status).into(),
            page_size: r.page_size,
            page_token: r.page_token.clone(),
            history_length: r.history_length,
            status_timestamp_after: r.status_timestamp_after.map(timestamp_to_pb),
            include_artifacts: r.include_artifacts,
        }
    }
}

impl Decode for ListTasksRequest {
    type Pb = pb::ListTasksRequest;

    fn decode(pb: pb::ListTasksRequest) -> Result<ListTasksRequest, Invalid> {
        Ok(ListTasksRequest {
            tenant: pb.tenant,
            context_id: pb.context_id,
            status: task_state(pb.status, "status")?,
            page_size: pb.page_size,
            page_token: pb.page_token,
            history_length: pb.history_length,
            status_timestamp_after: optional(pb.status_timestamp_after, "statusTimestampAfter")?,
            include_artifacts: pb.include_artifacts,
        })
    }
}

impl From<&ListTasksResponse> for pb::ListTasksResponse {
    fn from(r: &ListTasksResponse) -> Self {
        pb::ListTasksResponse {
            tasks: r.tasks.iter().map(pb::Task::from).collect(),
            next_page_token: r.next_page_token.clone(),
            page_size: r.page_size,
            total_size: r.total_size,
        }
    }
}

impl Decode for ListTasksResponse {
    type Pb = pb::ListTasksResponse;

    fn decode(pb: pb::ListTasksResponse) -> Result<ListTasksResponse, Invalid> {
        Ok(ListTasksResponse {
            tasks: repeated::<Task, _>(pb.tasks, "tasks")?,
            next_page_token: pb.next_page_token,
            page_size: pb.page_size,
            total_size: pb.total_size,
        })
    }
}

impl From<&CancelTaskRequest> for pb::CancelTaskRequest {
    fn from(r: &CancelTaskRequest) -> Self {
        pb::CancelTaskRequest {
            tenant: r.tenant.clone(),
            id: r.id.clone(),
            metadata: r.metadata.as_ref().map(struct_to_pb),
        }
    }
}

impl Decode for CancelTaskRequest {
    type Pb = pb::CancelTaskRequest;

    fn decode(pb: pb::CancelTaskRequest) -> Result<CancelTaskRequest, Invalid> {
        Ok(CancelTaskRequest {
            tenant: pb.tenant,
            id: pb.id,
            metadata: optional(pb.metadata, "metadata")?,
        })
    }
}

impl From<&SubscribeToTaskRequest> for pb::SubscribeToTaskRequest {
    fn from(r: &SubscribeToTaskRequest) -> Self {
        pb::SubscribeToTaskRequest {
            tenant: r.tenant.clone(),
            id: r.id.clone(),
        }
    }
}

impl Decode for SubscribeToTaskRequest {
    type Pb = pb::SubscribeToTaskRequest;

    fn decode(pb: pb::SubscribeToTaskRequest) -> Result<SubscribeToTaskRequest, Invalid> {
        Ok(SubscribeToTaskRequest {
            tenant: pb.tenant,
            id: pb.id,
        })
    }
}

impl From<&TaskPushNotificationConfig> for pb::TaskPushNotificationConfig {
    fn from(c: &TaskPushNotificationConfig) -> Self {
        pb::TaskPushNotificationConfig {
            tenant: c.tenant.clone(),
            id: c.id.clone(),
            task_id: c.task_id.clone(),
            url: c.url.clone(),
            token: c.token.clone(),
            authentication: c.authentication.as_ref().map(pb::AuthenticationInfo::from),
        }
    }
}

impl Decode for TaskPushNotificationConfig {
    type Pb = pb::TaskPushNotificationConfig;

    fn decode(pb: pb::TaskPushNotificationConfig) -> Result<TaskPushNotificationConfig, Invalid> {
        Ok(TaskPushNotificationConfig {
            tenant: pb.tenant,
            id: pb.id,
            task_id: pb.task_id,
            url: pb.url,
            token: pb.token,
            authentication: optional(pb.authentication, "authentication")?,
        })
    }
}

impl From<&AuthenticationInfo> for pb::AuthenticationInfo {
    fn from(a: &AuthenticationInfo) -> Self {
        pb::AuthenticationInfo {
            scheme: a.scheme.clone(),
            credentials: a.credentials.clone(),
        }
    }
}

impl Decode for AuthenticationInfo {
    type Pb = pb::AuthenticationInfo;

    fn decode(pb: pb::AuthenticationInfo) -> Result<AuthenticationInfo, Invalid> {
        Ok(AuthenticationInfo {
            scheme: pb.scheme,
            credentials: pb.credentials,
        })
    }
}

impl From<&TaskPushNotificationConfigRef> for pb::GetTaskPushNotificationConfigRequest {
    fn from(r: &TaskPushNotificationConfigRef) -> Self {
        pb::GetTaskPushNotificationConfigRequest {
            tenant: r.tenant.clone(),
            task_id: r.task_id.clone(),
            id: r.id.clone(),
        }
    }
}

impl From<&TaskPushNotificationConfigRef> for pb::DeleteTaskPushNotificationConfigRequest {
    fn from(r: &TaskPushNotificationConfigRef) -> Self {
        pb::DeleteTaskPushNotificationConfigRequest {
            tenant: r.tenant.clone(),
            task_id: r.task_id.clone(),
            id: r.id.clone(),
        }
    }
}

// The two requests are one message twice over; nothing in either can be invalid.
impl TryFrom<pb::GetTaskPushNotificationConfigRequest> for TaskPushNotificationConfigRef {
    type Error = crate::A2aError;

    fn try_from(pb: pb::GetTaskPushNotificationConfigRequest) -> Result<Self, crate::A2aError> {
        Ok(TaskPushNotificationConfigRef {
            tenant: pb.tenant,
            task_id: pb.task_id,
            id: pb.id,
        })
    }
}

impl TryFrom<pb::DeleteTaskPushNotificationConfigRequest> for TaskPushNotificationConfigRef {
    type Error = crate::A2aError;

    fn try_from(pb: pb::DeleteTaskPushNotificationConfigRequest) -> Result<Self, crate::A2aError> {
        Ok(TaskPushNotificationConfigRef {
            tenant: pb.tenant,
            task_id: pb.task_id,
            id: pb.id,
        })
    }
}

impl From<&ListTaskPushNotificationConfigsRequest> for pb::ListTaskPushNotificationConfigsRequest {
    fn from(r: &ListTaskPushNotificationConfigsRequest) -> Self {
        pb::ListTaskPushNotificationConfigsRequest {
            tenant: r.tenant.clone(),
            task_id: r.task_id.clone(),
            page_size: r.page_size,
            page_token: r.page_token.clone(),
        }
    }
}

impl Decode for ListTaskPushNotificationConfigsRequest {
    type Pb = pb::ListTaskPushNotificationConfigsRequest;

    fn decode(
        pb: pb::ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsRequest, Invalid> {
        Ok(ListTaskPushNotificationConfigsRequest {
            tenant: pb.tenant,
            task_id: pb.task_id,
            page_size: pb.page_size,
            page_token: pb.page_token,
        })
    }
}

impl From<&ListTaskPushNotificationConfigsResponse>
    for pb::ListTaskPushNotificationConfigsResponse
{
    fn from(r: &ListTaskPushNotificationConfigsResponse) -> Self {
        pb::ListTaskPushNotificationConfigsResponse {
            configs: r
                .configs
                .iter()
                .map(pb::TaskPushNotificationConfig::from)
                .collect(),
            next_page_token: r.next_page_token.clone(),
        }
    }
}

impl Decode for ListTaskPushNotificationConfigsResponse {
    type Pb = pb::ListTaskPushNotificationConfigsResponse;

    fn decode(
        pb: pb::ListTaskPushNotificationConfigsResponse,
    ) -> Result<ListTaskPushNotificationConfigsResponse, Invalid> {
        Ok(ListTaskPushNotificationConfigsResponse {
            configs: repeated::<TaskPushNotificationConfig, _>(pb.configs, "configs")?,
            next_page_token: pb.next_page_token,
        })
    }
}

impl From<&GetExtendedAgentCardRequest> for pb::GetExtendedAgentCardRequest {
    fn from(r: &GetExtendedAgentCardRequest) -> Self {
        pb::GetExtendedAgentCardRequest {
            tenant: r.tenant.clone(),
        }
    }
}

impl Decode for GetExtendedAgentCardRequest {
    type Pb = pb::GetExtendedAgentCardRequest;

    fn decode(pb: pb::GetExtendedAgentCardRequest) -> Result<GetExtendedAgentCardRequest, Invalid> {
        Ok(GetExtendedAgentCardRequest { tenant: pb.tenant })
    }
}

/// prost writes `google.protobuf.Empty` as `()`.
impl From<&Empty> for () {
    fn from(_: &Empty) -> Self {}
}

impl TryFrom<()> for Empty {
    type Error = crate::A2aError;

    fn try_from((): ()) -> Result<Self, crate::A2aError> {
        Ok(Empty {})
    }
}

try_from_pb! {
    pb::SendMessageRequest => SendMessageRequest,
    pb::SendMessageConfiguration => SendMessageConfiguration,
    pb::GetTaskRequest => GetTaskRequest,
    pb::ListTasksRequest => ListTasksRequest,
    pb::ListTasksResponse => ListTasksResponse,
    pb::CancelTaskRequest => CancelTaskRequest,
    pb::SubscribeToTaskRequest => SubscribeToTaskRequest,
    pb::TaskPushNotificationConfig => TaskPushNotificationConfig,
    pb::AuthenticationInfo => AuthenticationInfo,
    pb::ListTaskPushNotificationConfigsRequest => ListTaskPushNotificationConfigsRequest,
    pb::ListTaskPushNotificationConfigsResponse => ListTaskPushNotificationConfigsResponse,
    pb::GetExtendedAgentCardRequest => GetExtendedAgentCardRequest,
}
