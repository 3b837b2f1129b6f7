//! ferry-server's integration tests: real servers on 127.0.0.1:0, spoken to over real HTTP/1.1 and HTTP/2 (gRPC).
//!
//! One test binary, one module per area (ripgrep's habit). Point numbers in the docs refer to
//! the conformance points of `shared/spec/a2a-v1.md` §16. Every test runs under a deadline;
//! scenarios that apply to every binding run over JSON-RPC, REST and gRPC.

#[macro_use]
mod support;

// The conformance agent's ACTS behaviours.
mod acts;
// The agent card and its caching.
mod card;
// The JSON-RPC envelope and its validation order.
mod jsonrpc;
// REST routing, query parameters and HTTP-level errors.
mod rest;
// SendMessage semantics.
mod send;
// SSE streams: sends, subscriptions, chunks, errors and keep-alives.
mod streaming;
// GetTask, ListTasks, tenants and CancelTask.
mod tasks;
// A2A-Version, A2A-Extensions, and the capabilities the card does not declare.
mod service;
// Push-notification configs: the four operations, their checks and limits.
mod push_configs;
// Push deliveries to real receivers: retries, order, dead letters, refused addresses.
mod push_delivery;
// The bounded store and graceful shutdown.
mod lifecycle;
// The same streams over a store that commits events together (SQLite).
mod durable;
// The front door: auth, Host/Origin, limits, probes, request ids, draining shutdown.
mod front_door;
// Graded access: read-only tokens, anonymous callers, the agent's extended card.
mod access;
// Every task belongs to its caller: two callers, an admin, shared tasks.
mod ownership;
// Idempotent retries, metrics, signed cards and the extended card.
mod ops;
// What only gRPC has: its front door, protobuf decoding, size limit, unknown methods.
#[cfg(feature = "grpc")]
mod grpc;
// A server of several agents: paths, task namespaces, scoped tokens, per-agent limits.
mod hosting;
// Strict decoding of bodies and headers: arrays, duplicates, sizes, authorities (issue 11).
mod strict;
