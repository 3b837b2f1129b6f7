//! ferry-proto's integration tests: the wire types seen from outside the crate.

/// Every message type refuses a JSON array where ProtoJSON has an object.
mod objects;

/// v0.3 ⇄ v1.0: every v0.3 method's params and results, states, parts and errors, both ways.
#[cfg(feature = "v03")]
mod v03;

/// The gRPC messages round-trip every ProtoJSON type and refuse what JSON cannot hold.
#[cfg(feature = "grpc")]
mod grpc;
