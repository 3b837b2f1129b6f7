//! A REST request body as the server reads it (the strict check, then the typed decode), for
//! every body type the routes take. What decodes must survive a round trip.

#![no_main]

use ferry_proto::{CancelTaskRequest, SendMessageRequest, TaskPushNotificationConfig};
use ferry_server::decode::{self, BodyLimits};
use libfuzzer_sys::fuzz_target;

const LIMITS: BodyLimits = BodyLimits {
    max_bytes: 1 << 20,
    max_depth: 64,
};

fuzz_target!(|body: &[u8]| {
    if let Ok(send) = decode::body::<SendMessageRequest>(body, LIMITS) {
        let written = serde_json::to_vec(&send).expect("a decoded request serializes");
        let read: SendMessageRequest =
            decode::body(&written, LIMITS).expect("ferry reads what it writes");
        assert_eq!(read, send, "a round trip changes nothing");
    }
    if let Ok(config) = decode::body::<TaskPushNotificationConfig>(body, LIMITS) {
        let written = serde_json::to_vec(&config).expect("serializes");
        let read: TaskPushNotificationConfig = decode::body(&written, LIMITS).expect("reads");
        assert_eq!(read, config);
    }
    let _ = decode::body::<CancelTaskRequest>(body, LIMITS);
});
