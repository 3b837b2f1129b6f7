//! The A2A error model (spec §7): one error type, mapped to every binding's representation.

use crate::{BAD_REQUEST_TYPE, ERROR_DOMAIN, ERROR_INFO_TYPE};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::fmt;

/// What went wrong, as callers branch on it. Each kind has one JSON-RPC code and one
/// `ErrorInfo.reason`; HTTP statuses follow the chosen [`ErrorTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// -32700: the body is not JSON.
    ParseError,
    /// -32600: not a valid JSON-RPC request.
    InvalidRequest,
    /// -32601: no such method.
    MethodNotFound,
    /// -32602: parameters do not parse or fail validation.
    InvalidParams,
    /// -32603: the server failed.
    Internal,
    /// -32001: the task does not exist or is not visible.
    TaskNotFound,
    /// -32002: the task is terminal and cannot be canceled.
    TaskNotCancelable,
    /// -32003: push notifications are not supported.
    PushNotificationNotSupported,
    /// -32004: the operation is not supported (in this state).
    UnsupportedOperation,
    /// -32005: a content type is not supported.
    ContentTypeNotSupported,
    /// -32006: the agent produced a non-conforming response.
    InvalidAgentResponse,
    /// -32007: the extended card capability is declared but no card is configured.
    ExtendedAgentCardNotConfigured,
    /// -32008: a required extension was not activated.
    ExtensionSupportRequired,
    /// -32009: the requested protocol version is not supported.
    VersionNotSupported,
    /// -32603 over HTTP 503: the server cannot take the request now (shutting down, at a
    /// capacity limit, timed out); retry later. Not an A2A error: a server condition.
    Unavailable,
    /// -32603 over HTTP 429: the caller sent too many requests; retry later.
    ResourceExhausted,
    /// HTTP 401: no valid credentials (the front door; never an A2A error).
    Unauthenticated,
    /// HTTP 403: refused whoever asks (a foreign `Host`, a web page's `Origin`).
    PermissionDenied,
    /// HTTP 405 (REST): the path exists, not with this verb. Reason and JSON-RPC code are
    /// MethodNotFound's.
    MethodNotAllowed,
    /// HTTP 413: the body is larger than the server takes. Reason and JSON-RPC code are
    /// InvalidRequest's.
    PayloadTooLarge,
    /// HTTP 415 (REST): the request body is not JSON. Reason and JSON-RPC code are
    /// ContentTypeNotSupported's (which the JSON-RPC binding answers with HTTP 200).
    UnsupportedMediaType,
}

/// Which HTTP status table to use: the spec changed it in v1.0.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorTable {
    /// The v1.0.1 table (the default; what the current spec says).
    #[default]
    V1_0_1,
    /// The v1.0.0 table (409 for not-cancelable, 415 for content type, 502 for a bad agent
    /// response), which some older peers and the March conformance kit still expect.
    V1_0_0,
}

impl ErrorKind {
    /// Every kind.
    pub const ALL: &'static [ErrorKind] = &[
        Self::ParseError,
        Self::InvalidRequest,
        Self::MethodNotFound,
        Self::InvalidParams,
        Self::Internal,
        Self::TaskNotFound,
        Self::TaskNotCancelable,
        Self::PushNotificationNotSupported,
        Self::UnsupportedOperation,
        Self::ContentTypeNotSupported,
        Self::InvalidAgentResponse,
        Self::ExtendedAgentCardNotConfigured,
        Self::ExtensionSupportRequired,
        Self::VersionNotSupported,
        Self::Unavailable,
        Self::ResourceExhausted,
        Self::Unauthenticated,
        Self::PermissionDenied,
        Self::MethodNotAllowed,
        Self::PayloadTooLarge,
        Self::UnsupportedMediaType,
    ];

    /// The JSON-RPC error code.
    pub const fn code(self) -> i32 {
        match self {
            Self::Unavailable | Self::ResourceExhausted => -32603,
            Self::ParseError => -32700,
            Self::InvalidRequest | Self::PayloadTooLarge => -32600,
            Self::Unauthenticated | Self::PermissionDenied => -32600,
            Self::MethodNotFound | Self::MethodNotAllowed => -32601,
            Self::InvalidParams => -32602,
            Self::Internal => -32603,
            Self::TaskNotFound => -32001,
            Self::TaskNotCancelable => -32002,
            Self::PushNotificationNotSupported => -32003,
            Self::UnsupportedOperation => -32004,
            Self::ContentTypeNotSupported | Self::UnsupportedMediaType => -32005,
            Self::InvalidAgentResponse => -32006,
            Self::ExtendedAgentCardNotConfigured => -32007,
            Self::ExtensionSupportRequired => -32008,
            Self::VersionNotSupported => -32009,
        }
    }

    /// The kind for a JSON-RPC code, if A2A or JSON-RPC defines it.
    pub fn from_code(code: i64) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|k| i64::from(k.code()) == code)
    }

    /// The `ErrorInfo.reason`: the error name in UPPER_SNAKE_CASE without `Error`.
    pub const fn reason(self) -> &'static str {
        match self {
            Self::ParseError => "PARSE_ERROR",
            Self::InvalidRequest => "INVALID_REQUEST",
            Self::MethodNotFound => "METHOD_NOT_FOUND",
            Self::InvalidParams => "INVALID_PARAMS",
            Self::Internal => "INTERNAL_ERROR",
            Self::TaskNotFound => "TASK_NOT_FOUND",
            Self::TaskNotCancelable => "TASK_NOT_CANCELABLE",
            Self::PushNotificationNotSupported => "PUSH_NOTIFICATION_NOT_SUPPORTED",
            Self::UnsupportedOperation => "UNSUPPORTED_OPERATION",
            Self::ContentTypeNotSupported => "CONTENT_TYPE_NOT_SUPPORTED",
            Self::InvalidAgentResponse => "INVALID_AGENT_RESPONSE",
            Self::ExtendedAgentCardNotConfigured => "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            Self::ExtensionSupportRequired => "EXTENSION_SUPPORT_REQUIRED",
            Self::VersionNotSupported => "VERSION_NOT_SUPPORTED",
            Self::Unavailable => "UNAVAILABLE",
            Self::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Self::Unauthenticated => "UNAUTHENTICATED",
            Self::PermissionDenied => "PERMISSION_DENIED",
            Self::MethodNotAllowed => "METHOD_NOT_FOUND",
            Self::PayloadTooLarge => "INVALID_REQUEST",
            Self::UnsupportedMediaType => "CONTENT_TYPE_NOT_SUPPORTED",
        }
    }

    /// The kind for an `ErrorInfo.reason`.
    pub fn from_reason(reason: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.reason() == reason)
    }

    /// The HTTP status of the REST binding under `table` (and of any refusal made before a
    /// binding reads the request).
    pub const fn http_status(self, table: ErrorTable) -> u16 {
        match (self, table) {
            (Self::Unauthenticated, _) => 401,
            (Self::PermissionDenied, _) => 403,
            (Self::MethodNotAllowed, _) => 405,
            (Self::PayloadTooLarge, _) => 413,
            (Self::UnsupportedMediaType, _) => 415,
            (Self::TaskNotFound, _) => 404,
            (Self::MethodNotFound, _) => 404,
            (Self::Internal, _) => 500,
            (Self::Unavailable, _) => 503,
            (Self::ResourceExhausted, _) => 429,
            (Self::TaskNotCancelable, ErrorTable::V1_0_0) => 409,
            (Self::ContentTypeNotSupported, ErrorTable::V1_0_0) => 415,
            (Self::InvalidAgentResponse, ErrorTable::V1_0_0) => 502,
            (Self::InvalidAgentResponse, ErrorTable::V1_0_1) => 500,
            _ => 400,
        }
    }

    /// The HTTP status the JSON-RPC binding answers with: 200 for every JSON-RPC and A2A
    /// error (spec §2.2), the HTTP status for conditions of the server or the transport that
    /// HTTP clients and proxies act on (401, 403, 413, 429, 503).
    pub const fn jsonrpc_http_status(self) -> u16 {
        match self {
            Self::Unauthenticated
            | Self::PermissionDenied
            | Self::PayloadTooLarge
            | Self::ResourceExhausted
            | Self::Unavailable => self.http_status(ErrorTable::V1_0_1),
            _ => 200,
        }
    }

    /// The gRPC status name (`google.rpc.Status` code name), also the REST `status` member.
    pub const fn grpc_status(self, table: ErrorTable) -> &'static str {
        match (self, table) {
            (Self::Unauthenticated, _) => "UNAUTHENTICATED",
            (Self::PermissionDenied, _) => "PERMISSION_DENIED",
            (Self::MethodNotAllowed, _) => "UNIMPLEMENTED",
            (Self::PayloadTooLarge | Self::UnsupportedMediaType, _) => "INVALID_ARGUMENT",
            (Self::TaskNotFound, _) => "NOT_FOUND",
            (Self::MethodNotFound, _) => "NOT_FOUND",
            (Self::Internal, _) => "INTERNAL",
            (Self::Unavailable, _) => "UNAVAILABLE",
            (Self::ResourceExhausted, _) => "RESOURCE_EXHAUSTED",
            (Self::InvalidAgentResponse, _) => "INTERNAL",
            (Self::ParseError | Self::InvalidRequest | Self::InvalidParams, _) => {
                "INVALID_ARGUMENT"
            }
            (Self::ContentTypeNotSupported, _) => "INVALID_ARGUMENT",
            (
                Self::PushNotificationNotSupported
                | Self::UnsupportedOperation
                | Self::VersionNotSupported,
                ErrorTable::V1_0_0,
            ) => "UNIMPLEMENTED",
            _ => "FAILED_PRECONDITION",
        }
    }

    /// The status name that goes with an HTTP status in a REST error body.
    pub const fn rest_status_name(self, table: ErrorTable) -> &'static str {
        match self.http_status(table) {
            401 => "UNAUTHENTICATED",
            403 => "PERMISSION_DENIED",
            405 => "UNIMPLEMENTED",
            413 => "INVALID_ARGUMENT",
            404 => "NOT_FOUND",
            409 => "ABORTED",
            429 => "RESOURCE_EXHAUSTED",
            503 => "UNAVAILABLE",
            415 => "INVALID_ARGUMENT",
            500 | 502 => "INTERNAL",
            _ => self.grpc_status(table),
        }
    }

    /// The standard message for this kind.
    pub const fn default_message(self) -> &'static str {
        match self {
            Self::ParseError => "Invalid JSON payload",
            Self::InvalidRequest => "Request payload validation error",
            Self::MethodNotFound => "Method not found",
            Self::InvalidParams => "Invalid parameters",
            Self::Internal => "Internal error",
            Self::TaskNotFound => "Task not found",
            Self::TaskNotCancelable => "Task cannot be canceled",
            Self::PushNotificationNotSupported => "Push notifications are not supported",
            Self::UnsupportedOperation => "This operation is not supported",
            Self::ContentTypeNotSupported => "Incompatible content types",
            Self::InvalidAgentResponse => "Invalid agent response",
            Self::ExtendedAgentCardNotConfigured => "Extended agent card is not configured",
            Self::ExtensionSupportRequired => "A required extension was not activated",
            Self::VersionNotSupported => "This protocol version is not supported",
            Self::Unavailable => "The server cannot take this request now",
            Self::ResourceExhausted => "Too many requests",
            Self::Unauthenticated => "Valid credentials are required",
            Self::PermissionDenied => "This request is not permitted",
            Self::MethodNotAllowed => "This path does not take this method",
            Self::PayloadTooLarge => "The request body is too large",
            Self::UnsupportedMediaType => "The request body must be JSON",
        }
    }
}

/// An A2A error: a kind, a specific message, `ErrorInfo` metadata (string values) and optional
/// field violations for validation errors.
#[derive(Debug, Clone, PartialEq)]
pub struct A2aError {
    /// What went wrong.
    pub kind: ErrorKind,
    /// A specific, human-readable message.
    pub message: String,
    /// `ErrorInfo.metadata` (the protocol requires string values).
    pub metadata: BTreeMap<String, String>,
    /// `google.rpc.BadRequest` field violations: (field path, description).
    pub field_violations: Vec<(String, String)>,
    /// A more specific `ErrorInfo.reason` than the kind's (for example `SHUTTING_DOWN` for an
    /// [`ErrorKind::Unavailable`]).
    pub reason: Option<&'static str>,
}

impl fmt::Display for A2aError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}): {}",
            self.kind.reason(),
            self.kind.code(),
            self.message
        )
    }
}

impl std::error::Error for A2aError {}

impl A2aError {
    /// An error of `kind` with a specific message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            metadata: BTreeMap::new(),
            field_violations: Vec::new(),
            reason: None,
        }
    }

    /// Adds an `ErrorInfo.metadata` entry.
    pub fn with_meta(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// Adds a field violation (reported as a `google.rpc.BadRequest` detail).
    pub fn with_violation(
        mut self,
        field: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        self.field_violations
            .push((field.into(), description.into()));
        self
    }

    /// Sets a more specific `ErrorInfo.reason`.
    pub fn with_reason(mut self, reason: &'static str) -> Self {
        self.reason = Some(reason);
        self
    }

    /// The `ErrorInfo.reason` this error carries.
    pub fn reason(&self) -> &'static str {
        self.reason.unwrap_or(self.kind.reason())
    }

    /// Seconds the caller should wait before retrying (from `retryAfterSeconds`), for 429/503.
    pub fn retry_after_secs(&self) -> Option<u64> {
        self.metadata.get("retryAfterSeconds")?.parse().ok()
    }

    /// TaskNotFound for `task_id`.
    pub fn task_not_found(task_id: &str) -> Self {
        Self::new(
            ErrorKind::TaskNotFound,
            format!("task {task_id:?} was not found"),
        )
        .with_meta("taskId", task_id)
    }

    /// InvalidParams with a message.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidParams, message)
    }

    /// UnsupportedOperation with a message.
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::UnsupportedOperation, message)
    }

    /// Internal error with a message (never put internals of the server in it).
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    /// The `details` array: an `ErrorInfo` and, for validation errors, a `BadRequest`.
    pub fn details(&self) -> Value {
        let mut info = Map::new();
        info.insert("@type".into(), Value::from(ERROR_INFO_TYPE));
        info.insert("reason".into(), Value::from(self.reason()));
        info.insert("domain".into(), Value::from(ERROR_DOMAIN));
        if !self.metadata.is_empty() {
            let md: Map<String, Value> = self
                .metadata
                .iter()
                .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                .collect();
            info.insert("metadata".into(), Value::Object(md));
        }
        let mut details = vec![Value::Object(info)];
        if !self.field_violations.is_empty() {
            let violations: Vec<Value> = self
                .field_violations
                .iter()
                .map(|(f, d)| json!({"field": f, "description": d}))
                .collect();
            details.push(json!({"@type": BAD_REQUEST_TYPE, "fieldViolations": violations}));
        }
        Value::Array(details)
    }

    /// The JSON-RPC `error` object: `{code, message, data: [details…]}` and nothing else.
    pub fn to_jsonrpc_error(&self) -> Value {
        json!({"code": self.kind.code(), "message": self.message, "data": self.details()})
    }

    /// The REST (AIP-193) body: `{"error":{code, status, message, details}}`.
    pub fn to_rest_body(&self, table: ErrorTable) -> Value {
        json!({"error": {
            "code": self.kind.http_status(table),
            "status": self.kind.rest_status_name(table),
            "message": self.message,
            "details": self.details(),
        }})
    }

    /// Rebuilds an error from a JSON-RPC `error` object or a REST `error` object, mapping by
    /// `ErrorInfo.reason` first and the JSON-RPC code second (never by HTTP status alone).
    pub fn from_wire(error: &Value) -> Option<Self> {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let is_info = |d: &&Value| {
            d.get("@type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.ends_with("google.rpc.ErrorInfo"))
                && d.get("domain").and_then(Value::as_str) == Some(ERROR_DOMAIN)
        };
        // v1.0 carries an array of details; v0.3 one object (`crate::v03::error_object`).
        let info = match error.get("data").or_else(|| error.get("details")) {
            Some(Value::Array(details)) => details.iter().find(is_info),
            Some(one) => Some(one).filter(is_info),
            None => None,
        };
        let by_reason = info
            .and_then(|i| i.get("reason"))
            .and_then(Value::as_str)
            .and_then(ErrorKind::from_reason);
        let by_code = error
            .get("code")
            .and_then(Value::as_i64)
            .and_then(ErrorKind::from_code);
        let kind = by_reason.or(by_code)?;
        let mut e = A2aError::new(kind, message);
        if let Some(md) = info
            .and_then(|i| i.get("metadata"))
            .and_then(Value::as_object)
        {
            for (k, v) in md {
                if let Some(s) = v.as_str() {
                    e.metadata.insert(k.clone(), s.to_owned());
                }
            }
        }
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_0_1_table() {
        let rows = [
            (
                ErrorKind::TaskNotFound,
                -32001,
                404,
                "NOT_FOUND",
                "TASK_NOT_FOUND",
            ),
            (
                ErrorKind::TaskNotCancelable,
                -32002,
                400,
                "FAILED_PRECONDITION",
                "TASK_NOT_CANCELABLE",
            ),
            (
                ErrorKind::PushNotificationNotSupported,
                -32003,
                400,
                "FAILED_PRECONDITION",
                "PUSH_NOTIFICATION_NOT_SUPPORTED",
            ),
            (
                ErrorKind::UnsupportedOperation,
                -32004,
                400,
                "FAILED_PRECONDITION",
                "UNSUPPORTED_OPERATION",
            ),
            (
                ErrorKind::ContentTypeNotSupported,
                -32005,
                400,
                "INVALID_ARGUMENT",
                "CONTENT_TYPE_NOT_SUPPORTED",
            ),
            (
                ErrorKind::InvalidAgentResponse,
                -32006,
                500,
                "INTERNAL",
                "INVALID_AGENT_RESPONSE",
            ),
            (
                ErrorKind::ExtendedAgentCardNotConfigured,
                -32007,
                400,
                "FAILED_PRECONDITION",
                "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            ),
            (
                ErrorKind::ExtensionSupportRequired,
                -32008,
                400,
                "FAILED_PRECONDITION",
                "EXTENSION_SUPPORT_REQUIRED",
            ),
            (
                ErrorKind::VersionNotSupported,
                -32009,
                400,
                "FAILED_PRECONDITION",
                "VERSION_NOT_SUPPORTED",
            ),
        ];
        for (kind, code, http, grpc, reason) in rows {
            assert_eq!(kind.code(), code, "{kind:?}");
            assert_eq!(kind.http_status(ErrorTable::V1_0_1), http, "{kind:?}");
            assert_eq!(kind.grpc_status(ErrorTable::V1_0_1), grpc, "{kind:?}");
            assert_eq!(kind.reason(), reason, "{kind:?}");
            assert_eq!(ErrorKind::from_code(i64::from(code)), Some(kind));
            assert_eq!(ErrorKind::from_reason(reason), Some(kind));
        }
        assert_eq!(
            ErrorKind::TaskNotCancelable.http_status(ErrorTable::V1_0_0),
            409
        );
        assert_eq!(
            ErrorKind::ContentTypeNotSupported.http_status(ErrorTable::V1_0_0),
            415
        );
    }

    #[test]
    fn transport_conditions_own_their_statuses() {
        for (kind, http, name, rpc_http, reason) in [
            (
                ErrorKind::Unauthenticated,
                401,
                "UNAUTHENTICATED",
                401,
                "UNAUTHENTICATED",
            ),
            (
                ErrorKind::PermissionDenied,
                403,
                "PERMISSION_DENIED",
                403,
                "PERMISSION_DENIED",
            ),
            (
                ErrorKind::MethodNotFound,
                404,
                "NOT_FOUND",
                200,
                "METHOD_NOT_FOUND",
            ),
            (
                ErrorKind::MethodNotAllowed,
                405,
                "UNIMPLEMENTED",
                200,
                "METHOD_NOT_FOUND",
            ),
            (
                ErrorKind::PayloadTooLarge,
                413,
                "INVALID_ARGUMENT",
                413,
                "INVALID_REQUEST",
            ),
            (
                ErrorKind::UnsupportedMediaType,
                415,
                "INVALID_ARGUMENT",
                200,
                "CONTENT_TYPE_NOT_SUPPORTED",
            ),
            (
                ErrorKind::ResourceExhausted,
                429,
                "RESOURCE_EXHAUSTED",
                429,
                "RESOURCE_EXHAUSTED",
            ),
            (
                ErrorKind::Unavailable,
                503,
                "UNAVAILABLE",
                503,
                "UNAVAILABLE",
            ),
        ] {
            for table in [ErrorTable::V1_0_1, ErrorTable::V1_0_0] {
                assert_eq!(kind.http_status(table), http, "{kind:?}");
                assert_eq!(kind.rest_status_name(table), name, "{kind:?}");
            }
            assert_eq!(kind.jsonrpc_http_status(), rpc_http, "{kind:?}");
            assert_eq!(kind.reason(), reason, "{kind:?}");
        }
        // Kinds that share a reason or a code read back as the A2A one.
        assert_eq!(
            ErrorKind::from_reason("METHOD_NOT_FOUND"),
            Some(ErrorKind::MethodNotFound)
        );
        assert_eq!(
            ErrorKind::from_code(-32005),
            Some(ErrorKind::ContentTypeNotSupported)
        );
        for kind in ErrorKind::ALL {
            if !matches!(
                kind,
                ErrorKind::Unauthenticated
                    | ErrorKind::PermissionDenied
                    | ErrorKind::PayloadTooLarge
                    | ErrorKind::ResourceExhausted
                    | ErrorKind::Unavailable
            ) {
                assert_eq!(kind.jsonrpc_http_status(), 200, "{kind:?}");
            }
        }
    }

    #[test]
    fn wire_shapes_match_the_spec_examples() {
        let e = A2aError::task_not_found("task-123");
        let body = e.to_rest_body(ErrorTable::V1_0_1);
        assert_eq!(body["error"]["code"], 404);
        assert_eq!(body["error"]["status"], "NOT_FOUND");
        assert_eq!(body["error"]["details"][0]["@type"], ERROR_INFO_TYPE);
        assert_eq!(body["error"]["details"][0]["reason"], "TASK_NOT_FOUND");
        assert_eq!(body["error"]["details"][0]["domain"], "a2a-protocol.org");
        assert_eq!(
            body["error"]["details"][0]["metadata"]["taskId"],
            "task-123"
        );
        let rpc = e.to_jsonrpc_error();
        let keys: Vec<&String> = rpc.as_object().expect("object").keys().collect();
        assert_eq!(keys, ["code", "data", "message"]);
        assert_eq!(
            A2aError::from_wire(&rpc).map(|e| e.kind),
            Some(ErrorKind::TaskNotFound)
        );
        assert_eq!(
            A2aError::from_wire(&body["error"]).map(|e| e.kind),
            Some(ErrorKind::TaskNotFound)
        );
    }
}
