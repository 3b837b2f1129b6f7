//! The deliverer's own thread: a runtime of its own, at a lower CPU priority than the
//! request path's (`[push] nice`).
//!
//! A delivery is an HTTP request, as dear to make as a SendMessage is to answer, and a task
//! makes several of them. Sharing the server's runtime, they took the request path's CPU
//! turn for turn; on a thread of its own with a higher nice value, the kernel gives the
//! request path the CPU first and the deliverer the rest. Deliveries then wait under
//! saturation (in the durable outbox; `ferry_push_deliveries_pending` shows how many) and
//! go out as fast as before whenever the CPU has room.

use crate::push::deliver::Deliverer;
use tokio::sync::watch;

/// Starts `deliverer` on a thread of its own, at `nice` below the server's priority, until
/// `closing` turns true.
pub(crate) fn spawn(
    deliverer: Deliverer,
    closing: watch::Receiver<bool>,
    nice: u8,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .thread_name("ferry-push")
        .build()?;
    std::thread::Builder::new()
        .name("ferry-push".to_owned())
        .spawn(move || {
            lower_priority(nice);
            runtime.block_on(deliverer.run(closing));
        })
}

/// Raises this thread's nice value by `nice` (Linux schedules threads one by one; elsewhere
/// the call would lower the whole process, so the thread keeps the server's priority).
fn lower_priority(nice: u8) {
    if nice == 0 || !cfg!(target_os = "linux") {
        return;
    }
    let this = rustix::thread::gettid();
    let now = rustix::process::getpriority_process(Some(this)).unwrap_or(0);
    let wanted = now.saturating_add(i32::from(nice)).min(19);
    if let Err(e) = rustix::process::setpriority_process(Some(this), wanted) {
        tracing::warn!(error = %e, nice, "the push deliverer runs at the server's priority: its nice value could not be raised");
    }
}
