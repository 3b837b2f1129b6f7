//! ferry-proto's integration tests: the wire types seen from outside the crate.

/// Every message type refuses a JSON array where ProtoJSON has an object.
mod objects;

/// The gRPC messages round-trip every ProtoJSON type and refuse what JSON cannot hold.
#[cfg(feature = "grpc")]
mod grpc;
