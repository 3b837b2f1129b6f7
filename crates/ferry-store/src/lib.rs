//! The persistence boundary of ferry's task core (DESIGN "Inside the server").
//!
//! A [`TaskStore`] holds plain data — task snapshots and the events that led to them, each
//! with its sequence number — and nothing live: no locks, channels or abort handles (those
//! stay in the server's task manager). It is async so that a store may do I/O, and every
//! write is optimistic: [`TaskStore::append`] names the sequence number the writer last saw
//! and a stale writer gets [`StoreError::Conflict`] instead of overwriting.
//!
//! Time is passed in (`now`, milliseconds since the Unix epoch) so stores never read a clock
//! and their expiry is tested on an injected one.
//!
//! [`MemoryStore`] is the default store; `conformance` (the `conformance` feature) is the
//! suite every store runs.
//!
//! Beside the tasks, a store may keep saved [`profiles`]: named form values per caller, which
//! the forms agent fills forms from ([`profiles::ProfileStore`], in memory
//! [`profiles::MemoryProfiles`]), and each task's push-notification configs
//! ([`push::PushConfigStore`]). A store several server processes share tells each of the
//! others' writes ([`replicas::ReplicaStore`]).

#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "conformance")]
pub mod conformance;
mod memory;
mod memory_outbox;
pub mod profiles;
pub mod push;
pub mod replicas;
pub mod size;
mod store;
pub mod text;
mod types;

pub use memory::{MemoryLimits, MemoryStore};
pub use store::{Queued, StoreError, StoreFuture, TaskStore};
pub use types::{
    Event, Lease, ListQuery, Page, StoredEvent, StoredTask, TaskKey, TaskKeyHasher, visible_to,
};
