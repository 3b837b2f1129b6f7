//! A2A protocol v1.0 wire types, exactly as ProtoJSON puts them on the wire.
//!
//! Every type here serializes the way the official SDKs expect and parses the way the spec
//! allows (see `shared/spec/a2a-v1.md` §1):
//!
//! - field names go out in lowerCamelCase and come in as lowerCamelCase or the proto's
//!   snake_case;
//! - enums go out as their full proto names (`"TASK_STATE_COMPLETED"`) and come in as names or
//!   integers;
//! - fields without presence are omitted at their default; presence-tracked optionals are
//!   `Option` and keep `Some(0)` / `Some(false)` distinct from `None`;
//! - a [`Part`] has exactly one content member; `raw` bytes are padded base64 out and any base64
//!   in; timestamps are RFC 3339 UTC with milliseconds out and any fraction in;
//! - a message is a JSON object and only an object: serde's derive would also read an array
//!   positionally, which ProtoJSON has no form for (see [`ObjectOnly`]);
//! - unknown fields are ignored;
//! - a string or list that other ProtoJSON writers omit when empty is read as empty when absent
//!   (a card's `description`, `skills`, input and output modes; a skill's `description` and
//!   `tags`; a message's `messageId`), so a
//!   peer's omission is not a parse error; the ids and structure a type cannot be used without
//!   stay required (a card's name, version, capabilities, interfaces; a task's id, context and
//!   status). The server checks what a client must send on top of this (a message's id, role
//!   and parts).
//!
//! The wire knowledge lives here once: the [`Operation`] table (every operation's JSON-RPC
//! name, REST verbs and path template, request and response types, streaming or not) that the
//! server's bindings, its metrics and the client all route by; [`A2aError`], which maps each
//! error to its JSON-RPC code, HTTP status (transport conditions included), gRPC status name
//! and `ErrorInfo.reason`; the JSON-RPC envelopes; and [`Task::view`], the one way a task is
//! shaped for an answer. The crate knows nothing about I/O.
//!
//! With the `grpc` feature, the `grpc` module adds the gRPC binding's messages (prost,
//! generated from `proto/a2a.proto` by pure-Rust tooling) and their conversions to and from
//! these types.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod card;
mod de;
mod enums;
mod error;
#[cfg(feature = "grpc")]
pub mod grpc;
mod jsonrpc;
mod message;
mod operation;
mod part;
mod requests;
mod task;
mod task_view;
mod time;
pub mod v03;

pub use card::*;
pub use enums::{Role, TaskState};
pub use error::{A2aError, ErrorKind, ErrorTable};
pub use jsonrpc::{
    JsonRpcCall, JsonRpcId, JsonRpcRequest, JsonRpcResponse, JsonRpcSuccess, jsonrpc_error_body,
    rest_error_body,
};
pub use message::{ObjectOnly, camel_case};
pub use operation::{
    A2aRequest, Empty, HttpVerb, Operation, OperationType, PathParams, RequestDecoder, RestCarrier,
    RestMiss, RestRoute, ops,
};
pub use part::{Part, PartContent};
pub use requests::*;
pub use task::*;
pub use task_view::TaskView;
pub use time::Timestamp;

/// Where an agent serves its card, under its base URL (RFC 8615).
pub const WELL_KNOWN_CARD_PATH: &str = "/.well-known/agent-card.json";

/// The card URL of an agent given by its base URL, or the card URL itself (any URL ending in
/// `.json`): the one rule every client of ferry follows.
///
/// ```
/// assert_eq!(ferry_proto::card_url("https://a.example/"), "https://a.example/.well-known/agent-card.json");
/// assert_eq!(ferry_proto::card_url("https://a.example/card.json"), "https://a.example/card.json");
/// ```
pub fn card_url(base_url: &str) -> String {
    if base_url.ends_with(".json") {
        base_url.to_owned()
    } else {
        format!("{}{WELL_KNOWN_CARD_PATH}", base_url.trim_end_matches('/'))
    }
}

/// The protocol version this crate implements, as sent in `A2A-Version`.
pub const PROTOCOL_VERSION: &str = "1.0";
/// The `domain` of every `google.rpc.ErrorInfo` that A2A defines.
pub const ERROR_DOMAIN: &str = "a2a-protocol.org";
/// The `@type` of a `google.rpc.ErrorInfo` detail.
pub const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";
/// The `@type` of a `google.rpc.BadRequest` detail.
pub const BAD_REQUEST_TYPE: &str = "type.googleapis.com/google.rpc.BadRequest";
