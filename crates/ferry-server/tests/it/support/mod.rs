//! What every test module shares: an in-process server on 127.0.0.1:0, A2A calls written once
//! and played over either binding, an SSE reader, the wire-format checks that every response
//! passes through, the spec's error table, and an agent whose behaviour each test controls.

mod agents;
mod calls;
mod errors;
mod grpc;
mod raw;
mod server;
mod sse;
mod wire;

pub(crate) use agents::{DECLARED_EXTENSION, PANIC_DETAIL, Remote, ScriptedAgent, Step};
pub(crate) use calls::{A2aStream, Auth, Binding, Refusal, ServiceParams, state_of};
pub(crate) use errors::{
    CONTENT_TYPE_NOT_SUPPORTED, EXTENSION_SUPPORT_REQUIRED, INTERNAL, INVALID_AGENT_RESPONSE,
    INVALID_PARAMS, PUSH_NOTIFICATION_NOT_SUPPORTED, RATE_LIMITED, REQUEST_TIMEOUT, SHUTTING_DOWN,
    TASK_NOT_CANCELABLE, TASK_NOT_FOUND, TASK_STORE_FULL, TASK_STORE_UNAVAILABLE,
    TOO_MANY_REQUESTS_IN_FLIGHT, TOO_MANY_STREAMS, UNSUPPORTED_OPERATION, VERSION_NOT_SUPPORTED,
    WireError,
};
pub(crate) use grpc::wire_error as grpc_wire_error_in;
pub(crate) use raw::{RawConn, RawResponse};
pub(crate) use server::{TestServer, message, send_params};
pub(crate) use sse::SseReader;
pub(crate) use wire::{assert_wire_format, is_rfc3339_utc};

use serde_json::Value;
use std::future::Future;
use std::time::Duration;

/// A gRPC status as a [`WireError`] (not in a stream).
pub(crate) fn grpc_wire_error(status: &tonic::Status) -> WireError {
    grpc_wire_error_in(status, false)
}

/// The deadline of every test: generous for a loaded machine, short enough that a hang fails.
pub(crate) const TEST_DEADLINE: Duration = Duration::from_secs(30);

/// Runs a test body under [`TEST_DEADLINE`].
pub(crate) async fn bounded(body: impl Future<Output = ()>) {
    tokio::time::timeout(TEST_DEADLINE, body)
        .await
        .expect("the test did not finish within its deadline");
}

/// The member names of a JSON object, in order (panics on anything else).
pub(crate) fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .map(String::as_str)
        .collect()
}

/// `field` of every element of the JSON array `array`, in order.
pub(crate) fn pluck<'a>(array: &'a Value, field: &str) -> Vec<&'a Value> {
    array
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {array}"))
        .iter()
        .map(|v| &v[field])
        .collect()
}

/// Declares tests for `async fn` scenarios in the calling module.
///
/// `per_binding: a, b` runs each `async fn a(b: Binding)` three times, as `a::jsonrpc`,
/// `a::rest` and `a::grpc` (ripgrep's `rgtest!`: one scenario, every variant);
/// `per_http_binding: a` runs it over the two HTTP+JSON bindings only, for scenarios about
/// what only they have (JSON text, HTTP headers and statuses, SSE framing; their gRPC
/// counterparts are in `grpc.rs`); `once: c` runs `async fn c()` as `c::run`. Every run is
/// bounded by [`TEST_DEADLINE`].
macro_rules! scenarios {
    (per_binding: $($name:ident),+ $(,)?) => {$(
        mod $name {
            use crate::support::{Binding, bounded};

            #[tokio::test]
            async fn jsonrpc() {
                bounded(super::$name(Binding::JsonRpc)).await;
            }

            #[tokio::test]
            async fn rest() {
                bounded(super::$name(Binding::Rest)).await;
            }

            #[cfg(feature = "grpc")]
            #[tokio::test]
            async fn grpc() {
                bounded(super::$name(Binding::Grpc)).await;
            }
        }
    )+};
    (per_http_binding: $($name:ident),+ $(,)?) => {$(
        mod $name {
            use crate::support::{Binding, bounded};

            #[tokio::test]
            async fn jsonrpc() {
                bounded(super::$name(Binding::JsonRpc)).await;
            }

            #[tokio::test]
            async fn rest() {
                bounded(super::$name(Binding::Rest)).await;
            }
        }
    )+};
    (once: $($name:ident),+ $(,)?) => {$(
        mod $name {
            #[tokio::test]
            async fn run() {
                crate::support::bounded(super::$name()).await;
            }
        }
    )+};
}
