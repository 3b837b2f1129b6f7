//! A JSON-RPC request body as the server reads it: the strict check of the whole body, the
//! envelope, then the params of every method (whatever the envelope names). What decodes must
//! serialize, and what ferry writes it must read back unchanged.

#![no_main]

use ferry_proto::{
    CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTasksRequest, SendMessageRequest,
    SubscribeToTaskRequest, TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};
use ferry_server::decode::{self, BodyLimits};
use libfuzzer_sys::fuzz_target;

const LIMITS: BodyLimits = BodyLimits {
    max_bytes: 1 << 20,
    max_depth: 64,
};

fuzz_target!(|body: &[u8]| {
    let Ok(envelope) = decode::jsonrpc(body, LIMITS) else {
        return;
    };
    assert!(envelope.id.is_string() || envelope.id.is_number() || envelope.id.is_null());
    if let Ok(send) = envelope.params::<SendMessageRequest>() {
        let written = serde_json::to_vec(&send).expect("a decoded request serializes");
        let read: SendMessageRequest =
            decode::body(&written, LIMITS).expect("ferry reads what it writes");
        assert_eq!(read, send, "a round trip changes nothing");
    }
    let _ = envelope.params::<GetTaskRequest>();
    let _ = envelope.params::<ListTasksRequest>();
    let _ = envelope.params::<CancelTaskRequest>();
    let _ = envelope.params::<SubscribeToTaskRequest>();
    let _ = envelope.params::<TaskPushNotificationConfig>();
    let _ = envelope.params::<TaskPushNotificationConfigRef>();
    let _ = envelope.params::<ListTaskPushNotificationConfigsRequest>();
    let _ = envelope.params::<GetExtendedAgentCardRequest>();
});
