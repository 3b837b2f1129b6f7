//! The gRPC binding's message types and their conversions to and from this crate's types.
//!
//! [`pb`] holds the messages prost generates from `proto/a2a.proto` (package `lf.a2a.v1`),
//! ferry's transcription of the A2A v1.0 service. No service code is generated: the server
//! and the client call each operation at its path in the operation table with the messages
//! [`GrpcOperation`] names for it.
//!
//! Every message type `T` of this crate with a twin in `pb` converts both ways:
//!
//! - `From<&T> for pb::T` encodes; it cannot fail and clones what it borrows;
//! - `TryFrom<pb::T> for T` decodes, moving what it is given, and fails with an
//!   [`A2aError`](crate::A2aError) of kind InvalidParams that names the offending field the
//!   way the JSON parser would (`message.parts[2]`): a part or a oneof with no member set, a
//!   required message left out, an enum number the protocol does not define, a JSON number
//!   that is not finite, a timestamp out of range.
//!
//! A server's answers are written without their twins: [`WriteProto`] writes a task view, a
//! stream event or SendMessage's answer ([`SendMessageAnswer`]) as protobuf straight from the
//! borrowed values, byte for byte what prost writes for the twin, where building the twin
//! would copy every string of the task first.
//!
//! The requests without a twin of their own are paired too: a
//! [`TaskPushNotificationConfigRef`](crate::TaskPushNotificationConfigRef) is both
//! `GetTaskPushNotificationConfigRequest` and `DeleteTaskPushNotificationConfigRequest`, and
//! [`Empty`](crate::Empty) is prost's `()` for `google.protobuf.Empty`.
//!
//! # What does not carry over
//!
//! - Protobuf has one number type, `double`. A JSON integer goes out as one (exact up to
//!   2^53) and an integral `double` below 2^53 comes back as a JSON integer, so `3` stays `3`
//!   but `3.0` comes back as `3`, and integers past 2^53 lose precision.
//! - [`OAuthFlow`](crate::OAuthFlow) holds the union of every flow's fields, the proto one
//!   message per flow: encoding drops what the flow's message has no field for (a
//!   `clientCredentials` flow's `authorizationUrl`), decoding leaves it empty.
//! - proto3 cannot tell an empty string from an absent one, so a required string (a task
//!   `id`) that the JSON parser would refuse as missing decodes here as `""`; checking it is
//!   the handler's job on both bindings.
//! - Timestamps keep their nanoseconds; ferry's range (the years -9999 to 9999) is wider
//!   than protobuf's (0001 to 9999), and a year before 1 goes out as other peers may refuse.
//!
//! `pb`'s maps are `BTreeMap`s, like this crate's. The `implicit` and `password` OAuth flows
//! are deprecated in the proto, so code naming their `pb` variants needs
//! `#[allow(deprecated)]`.
//!
//! ```
//! use ferry_proto::grpc::pb;
//! use ferry_proto::{Message, Part};
//! use prost::Message as _;
//!
//! let message = Message::user("m-1", vec![Part::text("hello")]);
//! let bytes = pb::Message::from(&message).encode_to_vec();
//! let back = Message::try_from(pb::Message::decode(bytes.as_slice())?)?;
//! assert_eq!(back, message);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod card;
mod invalid;
mod operation;
mod requests;
mod task;
mod value;
mod write;

/// The messages and enums of package `lf.a2a.v1`, as prost generates them.
#[allow(missing_docs, unreachable_pub, clippy::all, clippy::pedantic)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/lf.a2a.v1.rs"));
}

pub use operation::{GrpcOperation, decode_request};
pub use write::{SendMessageAnswer, WriteProto};

/// The fully qualified name of the A2A gRPC service.
pub const SERVICE_NAME: &str = "lf.a2a.v1.A2AService";

/// The encoded `google.protobuf.FileDescriptorSet` of `proto/a2a.proto` and its imports,
/// for gRPC server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/a2a_descriptor.bin"));
