//! Each operation's gRPC messages, for code that is generic over operations: the server's
//! gRPC binding and the client's calls both route by the operation table (the method path is
//! [`Operation::grpc_path`](crate::Operation::grpc_path)), with no generated service code.

use super::pb;
use crate::{A2aError, A2aRequest, ErrorKind, Operation, OperationType, ops};

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

/// Reads the request message of `op` from its protobuf bytes: bytes that are no such message
/// are a [`ErrorKind::ParseError`] (the client's fault, like invalid JSON), a message that
/// breaks an A2A rule an [`ErrorKind::InvalidParams`] naming the field.
///
/// ```
/// use ferry_proto::grpc::{decode_request, pb};
/// use ferry_proto::{A2aRequest, ErrorKind, Operation};
/// use prost::Message as _;
///
/// let bytes = pb::GetTaskRequest { id: "t-1".into(), ..Default::default() }.encode_to_vec();
/// let request = decode_request(Operation::GetTask, &bytes)?;
/// assert!(matches!(request, A2aRequest::GetTask(r) if r.id == "t-1"));
/// let e = decode_request(Operation::GetTask, b"\xff\xff").unwrap_err();
/// assert_eq!(e.kind, ErrorKind::ParseError);
/// # Ok::<(), ferry_proto::A2aError>(())
/// ```
pub fn decode_request(op: Operation, bytes: &[u8]) -> Result<A2aRequest, A2aError> {
    use Operation as Op;
    Ok(match op {
        Op::SendMessage => A2aRequest::SendMessage(read::<ops::SendMessage>(bytes)?),
        Op::SendStreamingMessage => {
            A2aRequest::SendStreamingMessage(read::<ops::SendStreamingMessage>(bytes)?)
        }
        Op::GetTask => A2aRequest::GetTask(read::<ops::GetTask>(bytes)?),
        Op::ListTasks => A2aRequest::ListTasks(read::<ops::ListTasks>(bytes)?),
        Op::CancelTask => A2aRequest::CancelTask(read::<ops::CancelTask>(bytes)?),
        Op::SubscribeToTask => A2aRequest::SubscribeToTask(read::<ops::SubscribeToTask>(bytes)?),
        Op::CreateTaskPushNotificationConfig => {
            A2aRequest::CreateTaskPushNotificationConfig(read::<
                ops::CreateTaskPushNotificationConfig,
            >(bytes)?)
        }
        Op::GetTaskPushNotificationConfig => {
            A2aRequest::GetTaskPushNotificationConfig(read::<ops::GetTaskPushNotificationConfig>(
                bytes,
            )?)
        }
        Op::ListTaskPushNotificationConfigs => {
            A2aRequest::ListTaskPushNotificationConfigs(
                read::<ops::ListTaskPushNotificationConfigs>(bytes)?,
            )
        }
        Op::DeleteTaskPushNotificationConfig => {
            A2aRequest::DeleteTaskPushNotificationConfig(read::<
                ops::DeleteTaskPushNotificationConfig,
            >(bytes)?)
        }
        Op::GetExtendedAgentCard => {
            A2aRequest::GetExtendedAgentCard(read::<ops::GetExtendedAgentCard>(bytes)?)
        }
    })
}

/// The request of `O` from its message's bytes.
fn read<O: GrpcOperation>(bytes: &[u8]) -> Result<O::Request, A2aError> {
    use prost::Name as _;
    let message = <O::RequestMessage as prost::Message>::decode(bytes).map_err(|e| {
        A2aError::new(
            ErrorKind::ParseError,
            format!(
                "the request is not a valid {} message: {e}",
                O::RequestMessage::NAME
            ),
        )
    })?;
    O::request(message)
}
