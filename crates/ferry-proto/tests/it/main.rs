//! ferry-proto's integration tests: the wire types seen from outside the crate.

/// Every message type refuses a JSON array where ProtoJSON has an object.
mod objects;
