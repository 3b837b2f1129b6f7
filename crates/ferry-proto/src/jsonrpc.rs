//! JSON-RPC 2.0 envelopes as the A2A JSON-RPC binding uses them (spec §2.2).

use crate::message::{ProtoMessage, proto_messages};
use crate::{A2aError, ErrorTable};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// A request id: a string, a number, or `null` (a missing id is treated as `null`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JsonRpcId {
    /// A string id.
    Str(String),
    /// A numeric id (kept as written).
    Num(serde_json::Number),
    /// No usable id.
    Null,
}

/// A parsed request envelope; `params` stays raw until the method is known.
#[derive(Debug, Deserialize)]
#[serde(remote = "Self")]
pub struct JsonRpcRequest<'a> {
    /// Must be `"2.0"`.
    #[serde(default)]
    pub jsonrpc: Option<&'a str>,
    /// The id to echo.
    #[serde(default)]
    pub id: Option<Value>,
    /// The method name (PascalCase in v1.0).
    #[serde(default, borrow)]
    pub method: Option<std::borrow::Cow<'a, str>>,
    /// The parameters, unparsed.
    #[serde(default, borrow)]
    pub params: Option<&'a RawValue>,
}

impl<'de: 'a, 'a> Deserialize<'de> for JsonRpcRequest<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        JsonRpcRequest::deserialize(ProtoMessage(d))
    }
}

/// A response envelope with a success `result` or an `error`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct JsonRpcResponse {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The request's id.
    pub id: Value,
    /// The result on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
}

/// A request envelope as a client sends it.
#[derive(Debug, Clone, Serialize)]
pub struct JsonRpcCall<'a, P: Serialize> {
    /// Always `"2.0"`.
    pub jsonrpc: &'static str,
    /// The id the answer will carry.
    pub id: &'a str,
    /// The operation's name (`Operation::name`).
    pub method: &'a str,
    /// The request message.
    pub params: &'a P,
}

impl<'a, P: Serialize> JsonRpcCall<'a, P> {
    /// The envelope of one call.
    pub fn new(id: &'a str, method: &'a str, params: &'a P) -> Self {
        Self {
            jsonrpc: "2.0",
            id,
            method,
            params,
        }
    }
}

/// A success response for one id around results that are already serialized (a task
/// serialized once under its lock, an SSE event shared by every subscriber): the id is
/// serialized once, each answer is `{"jsonrpc":"2.0","id":…,"result":` + result + `}`.
///
/// ```
/// let envelope = ferry_proto::JsonRpcSuccess::new(&serde_json::json!(7));
/// let mut out = Vec::new();
/// out.extend_from_slice(envelope.prefix());
/// out.extend_from_slice(br#"{"task":{}}"#);
/// out.extend_from_slice(envelope.suffix());
/// assert_eq!(out, br#"{"jsonrpc":"2.0","id":7,"result":{"task":{}}}"#);
/// ```
#[derive(Debug, Clone)]
pub struct JsonRpcSuccess {
    prefix: Vec<u8>,
}

impl JsonRpcSuccess {
    /// The envelope of answers to `id`.
    pub fn new(id: &Value) -> Self {
        let mut prefix = Vec::with_capacity(40);
        prefix.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        if serde_json::to_writer(&mut prefix, id).is_err() {
            prefix.extend_from_slice(b"null");
        }
        prefix.extend_from_slice(b",\"result\":");
        Self { prefix }
    }

    /// What comes before the result.
    pub fn prefix(&self) -> &[u8] {
        &self.prefix
    }

    /// What comes after it.
    pub fn suffix(&self) -> &'static [u8] {
        b"}"
    }

    /// The whole answer around `result`.
    pub fn wrap(&self, result: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.prefix.len() + result.len() + 1);
        out.extend_from_slice(&self.prefix);
        out.extend_from_slice(result);
        out.extend_from_slice(self.suffix());
        out
    }
}

/// Serializes a JSON-RPC error response for `id`.
pub fn jsonrpc_error_body(id: &Value, error: &A2aError) -> Vec<u8> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error.to_jsonrpc_error()});
    serde_json::to_vec(&body).unwrap_or_default()
}

/// Serializes a REST error body.
pub fn rest_error_body(error: &A2aError, table: ErrorTable) -> Vec<u8> {
    serde_json::to_vec(&error.to_rest_body(table)).unwrap_or_default()
}

proto_messages!(JsonRpcResponse,);
