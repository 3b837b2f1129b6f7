//! A gRPC request message from outside, as the server's gRPC binding decodes it: the first
//! byte picks the operation, the rest is the protobuf message. Whatever decodes and passes the
//! A2A rules must survive a round trip (encoded again and decoded, it is the same request).

#![no_main]

use ferry_proto::grpc::GrpcOperation;
use ferry_proto::ops;
use libfuzzer_sys::fuzz_target;
use prost::Message;

/// Decodes `bytes` as `O`'s request and checks the round trip of what decodes.
fn check<O: GrpcOperation>(bytes: &[u8])
where
    O::Request: PartialEq + std::fmt::Debug,
{
    let Ok(message) = O::RequestMessage::decode(bytes) else {
        return;
    };
    let Ok(request) = O::request(message) else {
        return;
    };
    let again = O::request_message(&request).encode_to_vec();
    let message = O::RequestMessage::decode(again.as_slice()).expect("ferry reads what it writes");
    let back = O::request(message).expect("what ferry wrote passes its own rules");
    assert_eq!(back, request, "a round trip changes nothing");
}

fuzz_target!(|input: &[u8]| {
    let Some((selector, bytes)) = input.split_first() else {
        return;
    };
    match selector % 9 {
        0 => check::<ops::SendMessage>(bytes),
        1 => check::<ops::GetTask>(bytes),
        2 => check::<ops::ListTasks>(bytes),
        3 => check::<ops::CancelTask>(bytes),
        4 => check::<ops::SubscribeToTask>(bytes),
        5 => check::<ops::CreateTaskPushNotificationConfig>(bytes),
        6 => check::<ops::GetTaskPushNotificationConfig>(bytes),
        7 => check::<ops::ListTaskPushNotificationConfigs>(bytes),
        _ => check::<ops::GetExtendedAgentCard>(bytes),
    }
});
