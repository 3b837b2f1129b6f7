//! Errors as they arrive on the wire, and the spec's v1.0.1 mapping table written out by hand
//! (spec §7.1), so the tests do not take the server's own table as their oracle.

use super::calls::Binding;
use serde_json::{Map, Value};

/// One row of the error table: what each binding must show for an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Expected {
    /// `ErrorInfo.reason`.
    pub reason: &'static str,
    /// JSON-RPC `error.code`.
    pub rpc_code: i64,
    /// REST HTTP status (and the body's `error.code`).
    pub http: u16,
    /// REST body `error.status`.
    pub status: &'static str,
}

const fn row(reason: &'static str, rpc_code: i64, http: u16, status: &'static str) -> Expected {
    Expected {
        reason,
        rpc_code,
        http,
        status,
    }
}

/// The server cannot take a new task now: its task store holds only active tasks (503).
pub(crate) const TASK_STORE_FULL: Expected = row("TASK_STORE_FULL", -32603, 503, "UNAVAILABLE");

/// The task store did not take a write (it failed, or cannot be reached) (503).
pub(crate) const TASK_STORE_UNAVAILABLE: Expected =
    row("TASK_STORE_UNAVAILABLE", -32603, 503, "UNAVAILABLE");

/// The front door's per-client rate limit (429).
pub(crate) const RATE_LIMITED: Expected = row("RATE_LIMITED", -32603, 429, "RESOURCE_EXHAUSTED");
/// The front door's limit of requests in flight (503).
pub(crate) const TOO_MANY_REQUESTS_IN_FLIGHT: Expected =
    row("TOO_MANY_REQUESTS_IN_FLIGHT", -32603, 503, "UNAVAILABLE");
/// The limit of open streams (503).
pub(crate) const TOO_MANY_STREAMS: Expected = row("TOO_MANY_STREAMS", -32603, 503, "UNAVAILABLE");
/// A unary request that took longer than the request timeout (503).
pub(crate) const REQUEST_TIMEOUT: Expected = row("REQUEST_TIMEOUT", -32603, 503, "UNAVAILABLE");
/// A new task while the server drains (503).
pub(crate) const SHUTTING_DOWN: Expected = row("SHUTTING_DOWN", -32603, 503, "UNAVAILABLE");

/// TaskNotFoundError.
pub(crate) const TASK_NOT_FOUND: Expected = row("TASK_NOT_FOUND", -32001, 404, "NOT_FOUND");
/// TaskNotCancelableError.
pub(crate) const TASK_NOT_CANCELABLE: Expected =
    row("TASK_NOT_CANCELABLE", -32002, 400, "FAILED_PRECONDITION");
/// PushNotificationNotSupportedError.
pub(crate) const PUSH_NOTIFICATION_NOT_SUPPORTED: Expected = row(
    "PUSH_NOTIFICATION_NOT_SUPPORTED",
    -32003,
    400,
    "FAILED_PRECONDITION",
);
/// UnsupportedOperationError.
pub(crate) const UNSUPPORTED_OPERATION: Expected =
    row("UNSUPPORTED_OPERATION", -32004, 400, "FAILED_PRECONDITION");
/// ContentTypeNotSupportedError.
pub(crate) const CONTENT_TYPE_NOT_SUPPORTED: Expected = row(
    "CONTENT_TYPE_NOT_SUPPORTED",
    -32005,
    400,
    "INVALID_ARGUMENT",
);
/// InvalidAgentResponseError.
pub(crate) const INVALID_AGENT_RESPONSE: Expected =
    row("INVALID_AGENT_RESPONSE", -32006, 500, "INTERNAL");
/// ExtensionSupportRequiredError.
pub(crate) const EXTENSION_SUPPORT_REQUIRED: Expected = row(
    "EXTENSION_SUPPORT_REQUIRED",
    -32008,
    400,
    "FAILED_PRECONDITION",
);
/// VersionNotSupportedError.
pub(crate) const VERSION_NOT_SUPPORTED: Expected =
    row("VERSION_NOT_SUPPORTED", -32009, 400, "FAILED_PRECONDITION");
/// JSON-RPC InvalidParams (REST: 400 INVALID_ARGUMENT).
pub(crate) const INVALID_PARAMS: Expected = row("INVALID_PARAMS", -32602, 400, "INVALID_ARGUMENT");
/// JSON-RPC InternalError (REST: 500 INTERNAL).
pub(crate) const INTERNAL: Expected = row("INTERNAL_ERROR", -32603, 500, "INTERNAL");

/// An error response (or an error event of a stream) as received.
#[derive(Debug, Clone)]
pub(crate) struct WireError {
    /// The binding it came over.
    pub binding: Binding,
    /// The HTTP status of the response that carried it (200 for a stream's error event).
    pub http_status: u16,
    /// True when it arrived as an SSE `event: error`.
    pub in_stream: bool,
    /// The error object: JSON-RPC `error`, or REST `error`.
    pub body: Value,
}

impl WireError {
    /// `code`: the JSON-RPC code, or the REST body's HTTP code.
    pub(crate) fn code(&self) -> i64 {
        self.body["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("error without a numeric code: {}", self.body))
    }

    /// The human-readable message.
    pub(crate) fn message(&self) -> &str {
        self.body["message"]
            .as_str()
            .unwrap_or_else(|| panic!("error without a message: {}", self.body))
    }

    /// The details array (`data` in JSON-RPC, `details` in REST).
    pub(crate) fn details(&self) -> &[Value] {
        let key = match self.binding {
            Binding::JsonRpc => "data",
            Binding::Rest | Binding::Grpc => "details",
        };
        self.body[key]
            .as_array()
            .unwrap_or_else(|| panic!("error without a {key} array: {}", self.body))
    }

    /// The `google.rpc.ErrorInfo` of domain `a2a-protocol.org` (spec §7.3).
    pub(crate) fn error_info(&self) -> &Map<String, Value> {
        self.details()
            .iter()
            .filter_map(Value::as_object)
            .find(|d| {
                d.get("@type").and_then(Value::as_str)
                    == Some("type.googleapis.com/google.rpc.ErrorInfo")
                    && d.get("domain").and_then(Value::as_str) == Some("a2a-protocol.org")
            })
            .unwrap_or_else(|| panic!("no a2a-protocol.org ErrorInfo in {}", self.body))
    }

    /// `ErrorInfo.reason`.
    pub(crate) fn reason(&self) -> &str {
        self.error_info()["reason"]
            .as_str()
            .unwrap_or_else(|| panic!("ErrorInfo without a reason: {}", self.body))
    }

    /// An `ErrorInfo.metadata` value (always a string on the wire).
    pub(crate) fn meta(&self, key: &str) -> Option<&str> {
        self.error_info()
            .get("metadata")
            .and_then(|m| m.get(key))
            .map(|v| {
                v.as_str().unwrap_or_else(|| {
                    panic!("ErrorInfo metadata values are strings, {key} is {v}")
                })
            })
    }

    /// Asserts that this is `expected` as the binding must show it: the reason, the JSON-RPC
    /// code with HTTP 200, the REST status, body code and status name, or the gRPC code (the
    /// spec's gRPC column, which names the same code as the REST status name for every row
    /// here); every detail typed.
    #[track_caller]
    pub(crate) fn assert_is(&self, expected: Expected) {
        assert_eq!(self.reason(), expected.reason, "reason of {}", self.body);
        assert!(
            !self.message().is_empty(),
            "an error message says what went wrong: {}",
            self.body
        );
        for d in self.details() {
            assert!(
                d.get("@type").and_then(Value::as_str).is_some(),
                "every detail has an @type: {}",
                self.body
            );
        }
        match self.binding {
            Binding::JsonRpc => {
                assert_eq!(
                    self.code(),
                    expected.rpc_code,
                    "JSON-RPC code of {}",
                    self.body
                );
                // A2A errors travel with HTTP 200; the server's own capacity refusals (-32603
                // with 429 or 503) carry the HTTP status that tells clients to retry later.
                let want = if matches!(expected.http, 429 | 503) {
                    expected.http
                } else {
                    200
                };
                assert_eq!(
                    self.http_status, want,
                    "JSON-RPC errors travel with HTTP {want}"
                );
            }
            Binding::Rest => {
                assert_eq!(
                    self.code(),
                    i64::from(expected.http),
                    "REST body code of {}",
                    self.body
                );
                assert_eq!(
                    self.body["status"], expected.status,
                    "REST status name of {}",
                    self.body
                );
                let http = if self.in_stream { 200 } else { expected.http };
                assert_eq!(self.http_status, http, "HTTP status for {}", self.body);
            }
            Binding::Grpc => {
                assert_eq!(
                    self.body["status"], expected.status,
                    "gRPC code of {}",
                    self.body
                );
            }
        }
    }
}
