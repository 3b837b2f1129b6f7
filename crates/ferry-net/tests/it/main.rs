//! Integration tests of ferry-net over real sockets on 127.0.0.1.

/// The safe client against local listeners: refusals and the `allow_private` switch.
mod client;
