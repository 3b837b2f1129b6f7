//! ferry's runnable examples are binaries (`cargo run -p ferry-examples --bin agent`); this
//! library exists so that `cargo test` compiles the Rust blocks of the repository's README.md
//! as doc tests: the agent and the client a newcomer copies from there build.

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
