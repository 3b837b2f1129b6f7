//! Each operation's gRPC messages, for code that is generic over operations: the server's
//! gRPC binding and the client's calls both route by the operation table (the method path is
//! [`Operation::grpc_path`](crate::Operation::grpc_path)), with no generated service code.

use super::pb;
use crate::{A2aError, OperationType, ops};

/// The gRPC side of an [`OperationType`]: its request and response messages and the
/// conversions between them and this crate's types.
pub trait GrpcOperation: OperationType {
    /// The request message on the wire.
    type RequestMessage: prost::Message + prost::Name + Default + Send + 'static;
    /// The response message (each event, for a streaming operation).
    type ResponseMessage: prost::Message + Default + Send + 'static;

    /// Encodes a request.
    fn request_message(request: &Self::Request) -> Self::RequestMessage;
    /// Decodes a request (the A2A rules of the conversion included).
    fn request(message: Self::RequestMessage) -> Result<Self::Request, A2aError>;
    /// Encodes a response.
    fn response_message(response: &Self::Response) -> Self::ResponseMessage;
    /// Decodes a response.
    fn response(message: Self::ResponseMessage) -> Result<Self::Response, A2aError>;
    /// Sets the request's `tenant` field (every A2A request has one).
    fn set_tenant(request: &mut Self::Request, tenant: &str);
}

macro_rules! grpc_operations {
    ($($op:ident: $req:ty => $resp:ty;)+) => {$(
        impl GrpcOperation for ops::$op {
            type RequestMessage = $req;
            type ResponseMessage = $resp;

            fn request_message(request: &Self::Request) -> $req {
                <$req>::from(request)
            }

            fn request(message: $req) -> Result<Self::Request, A2aError> {
                message.try_into()
            }

            fn response_message(response: &Self::Response) -> $resp {
                <$resp>::from(response)
            }

            fn response(message: $resp) -> Result<Self::Response, A2aError> {
                message.try_into()
            }

            fn set_tenant(request: &mut Self::Request, tenant: &str) {
                tenant.clone_into(&mut request.tenant);
            }
        }
    )+};
}

grpc_operations! {
    SendMessage: pb::SendMessageRequest => pb::SendMessageResponse;
    SendStreamingMessage: pb::SendMessageRequest => pb::StreamResponse;
    GetTask: pb::GetTaskRequest => pb::Task;
    ListTasks: pb::ListTasksRequest => pb::ListTasksResponse;
    CancelTask: pb::CancelTaskRequest => pb::Task;
    SubscribeToTask: pb::SubscribeToTaskRequest => pb::StreamResponse;
    CreateTaskPushNotificationConfig: pb::TaskPushNotificationConfig => pb::TaskPushNotificationConfig;
    GetTaskPushNotificationConfig:
        pb::GetTaskPushNotificationConfigRequest => pb::TaskPushNotificationConfig;
    ListTaskPushNotificationConfigs:
        pb::ListTaskPushNotificationConfigsRequest => pb::ListTaskPushNotificationConfigsResponse;
    DeleteTaskPushNotificationConfig: pb::DeleteTaskPushNotificationConfigRequest => ();
    GetExtendedAgentCard: pb::GetExtendedAgentCardRequest => pb::AgentCard;
}
