//! Push notifications: the configs a caller registers on a task ([`stored`], checked by
//! [`validate`]), and the deliverer that sends every event of such a task to each of them
//! from the store's outbox ([`deliver`], one attempt at a time by [`send`], retried after
//! [`retry`]'s waits).
//!
//! The store writes one outbox row per (event, config) with the event, so an acknowledged
//! event's deliveries survive a crash; the deliverer claims due rows under a lease (several
//! processes on one database share the outbox), sends each as a signed `POST` through
//! ferry-net (the address checked where it is dialed, no redirects), and records how it
//! ended: delivered, retried after a backoff (or the receiver's `Retry-After`), or dead.
//! It runs beside the request path and never blocks it: a slow receiver holds one of the
//! deliverer's slots, nothing else.

pub(crate) mod deliver;
pub(crate) mod retry;
pub(crate) mod send;
pub(crate) mod stored;
pub(crate) mod thread;
pub(crate) mod validate;

use crate::config::PushSettings;
use std::sync::Arc;
use tokio::sync::Notify;

/// What the request handlers share of push: the settings, the delivery policy (configs are
/// checked against it when created), the deliverer's wake-up and its counters.
#[derive(Debug)]
pub(crate) struct PushService {
    pub(crate) settings: PushSettings,
    pub(crate) sender: send::Sender,
    pub(crate) wake: Arc<Notify>,
    pub(crate) metrics: deliver::PushMetrics,
}
