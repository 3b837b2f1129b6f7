//! The gRPC binding's messages against the ProtoJSON types.
//!
//! Every fixture (in `fixtures`) is a canonical ProtoJSON document of one message type. It goes JSON →
//! ferry-proto type → pb message → protobuf bytes → pb message → ferry-proto type, must come
//! back equal and print the same JSON. The descriptor set then checks the fixtures
//! themselves: each message of `proto/a2a.proto` is the top level of some fixture, and
//! together they set every field and every oneof member, so a field a conversion forgets
//! fails here. `values` covers what JSON fixtures cannot show; `refusals` checks what
//! decoding refuses, and where it says the fault is.

/// Fixtures of every message type, and their round trip.
mod fixtures;

/// The fixtures cover the proto; the service is the operation table.
mod descriptor;

/// Enums, `Empty`, number and timestamp edges, flows, shaped tasks.
mod values;

/// Decode refusals and their field paths.
mod refusals;

/// The answers written straight from ferry's types, byte for byte as prost writes their twins.
mod written;
