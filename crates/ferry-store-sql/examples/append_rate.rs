//! How many request-shaped write sequences a store takes per second: each "request" creates a
//! task and appends four events to it (working, two artifacts' worth, completed), one after
//! the other, as the server's task manager does; CONCURRENCY requests (default 32, as
//! `wrk -c32`) run at once.
//!
//! Run with
//! `cargo run --release -p ferry-store-sql --example append_rate -- URL [SECONDS [CONCURRENCY]]`,
//! where URL is `memory`, `sqlite:/tmp/rate.db` or `postgres://postgres@127.0.0.1:5432/test`.
//! It prints one line: `URL: N requests/s (M appends/s)`. Numbers, not a test: compare the
//! stores on the same machine.

use ferry_proto::TaskState;
use ferry_store::conformance::{event, task, with_state};
use ferry_store::{MemoryStore, StoreError, TaskStore};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args.next().unwrap_or_else(|| "memory".to_owned());
    let seconds: u64 = args.next().map_or(Ok(5), |s| s.parse())?;
    let concurrency: usize = args.next().map_or(Ok(32), |s| s.parse())?;
    let store: Arc<dyn TaskStore> = if url == "memory" {
        Arc::new(MemoryStore::default())
    } else {
        ferry_store_sql::open(&url).await?
    };
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let run = format!("run-{}", std::process::id());
    let workers: Vec<_> = (0..concurrency)
        .map(|w| {
            let (store, stop, done, run) = (
                Arc::clone(&store),
                Arc::clone(&stop),
                Arc::clone(&done),
                run.clone(),
            );
            tokio::spawn(async move {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let mut t = task(&run, &format!("w{w}-{n}"), "ctx", TaskState::Submitted, n);
                    t.expires_ms = Some(1);
                    store.create(t.clone()).await?;
                    for (seq, state) in [
                        TaskState::Working,
                        TaskState::Working,
                        TaskState::Working,
                        TaskState::Completed,
                    ]
                    .into_iter()
                    .enumerate()
                    {
                        t = with_state(&t, state);
                        store
                            .append(&t.key(), seq as u64, event(&t), t.clone())
                            .await?;
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                    n += 1;
                    // The memory store never waits: let the timer (and the other requests) run.
                    tokio::task::yield_now().await;
                }
                Ok::<(), StoreError>(())
            })
        })
        .collect();
    let started = Instant::now();
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    let elapsed = started.elapsed().as_secs_f64();
    let requests = done.load(Ordering::Relaxed) as f64;
    for worker in workers {
        worker.await??;
    }
    // Leave nothing behind in a shared database: only these tasks expire at 1 ms.
    store.expire(1).await?;
    println!(
        "{url}, {concurrency} at once: {:.0} requests/s ({:.0} appends/s)",
        requests / elapsed,
        requests * 4.0 / elapsed
    );
    Ok(())
}
