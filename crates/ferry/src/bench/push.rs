//! `ferry bench --mode push`: the `send` load with a push config on every task, delivered to
//! a receiver this process runs on 127.0.0.1. Besides the sends it reports the deliveries the
//! receiver got per second (from the first to the last, the backlog drained) and the time
//! from each event to its arrival: the event's status timestamp (set by the server when the
//! event was made; the task and its status updates carry one) against the receiver's clock,
//! the same machine's.

use crate::bench::{BenchArgs, load, percentile_ms, request_body};
use anyhow::Context;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;

/// How long the receiver may stay quiet before the backlog counts as drained.
const QUIET: Duration = Duration::from_secs(3);
/// The longest wait for the backlog after the load stopped.
const DRAIN_LIMIT: Duration = Duration::from_secs(300);

/// What the receiver saw.
#[derive(Debug, Default)]
struct Seen {
    deliveries: u64,
    first: Option<Instant>,
    last: Option<Instant>,
    /// Event-to-arrival times of the deliveries that carry a status timestamp, in µs.
    latencies_us: Vec<u32>,
}

pub(crate) async fn run(args: &BenchArgs) -> anyhow::Result<()> {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let hook = receive(seen.clone()).await?;
    let send = request_body(crate::bench::BenchMode::Send, args.binding);
    let body = with_hook(&send, &hook)?;
    let sends = load(args, body).await?;
    let deliveries = drained(&seen).await;
    let mut seen = seen.lock().unwrap_or_else(|p| p.into_inner());
    seen.latencies_us.sort_unstable();
    let span = match (seen.first, seen.last) {
        (Some(first), Some(last)) => last.duration_since(first).as_secs_f64().max(1e-3),
        _ => 1.0,
    };
    let rate = deliveries as f64 / span;
    let (p50, p99) = (
        percentile_ms(&seen.latencies_us, 0.50),
        percentile_ms(&seen.latencies_us, 0.99),
    );
    sends.report(
        args,
        serde_json::json!({
            "deliveries": deliveries, "deliveriesPerSecond": rate,
            "deliveryP50Ms": p50, "deliveryP99Ms": p99,
        }),
    );
    if !args.json {
        println!(
            "push: {deliveries} deliveries, {rate:.0}/s; event to receiver p50 {p50:.1} ms, p99 {p99:.1} ms"
        );
    }
    Ok(())
}

/// The SendMessage body `send` with `hook` as its inline push config.
fn with_hook(send: &Bytes, hook: &str) -> anyhow::Result<Bytes> {
    let mut call: serde_json::Value = serde_json::from_slice(send)?;
    call["params"]["configuration"] =
        serde_json::json!({"taskPushNotificationConfig": {"url": hook}});
    Ok(Bytes::from(serde_json::to_vec(&call)?))
}

/// Waits until the receiver was quiet for [`QUIET`] (at most [`DRAIN_LIMIT`]); the
/// deliveries it got.
async fn drained(seen: &Mutex<Seen>) -> u64 {
    let started = Instant::now();
    loop {
        let (count, last) = {
            let s = seen.lock().unwrap_or_else(|p| p.into_inner());
            (s.deliveries, s.last)
        };
        let quiet = last.is_none_or(|l| l.elapsed() >= QUIET);
        if quiet || started.elapsed() >= DRAIN_LIMIT {
            return count;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Serves `POST /hook` on 127.0.0.1 (a free port), recording each delivery in `seen`; the
/// hook's URL. The receiver has a thread and a runtime of its own, so that it takes no turn
/// from the load generator's (one thread) while it measures the sends.
async fn receive(seen: Arc<Mutex<Seen>>) -> anyhow::Result<String> {
    let std_listener =
        std::net::TcpListener::bind("127.0.0.1:0").context("binding the receiver")?;
    std_listener.set_nonblocking(true)?;
    let hook = format!("http://{}/hook", std_listener.local_addr()?);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("the receiver's runtime")?;
    std::thread::spawn(move || runtime.block_on(serve(std_listener, seen)));
    Ok(hook)
}

/// The receiver's accept loop.
async fn serve(listener: std::net::TcpListener, seen: Arc<Mutex<Seen>>) {
    let Ok(listener) = TcpListener::from_std(listener) else {
        return;
    };
    while let Ok((stream, _)) = listener.accept().await {
        let seen = seen.clone();
        let service = hyper::service::service_fn(move |request: Request<Incoming>| {
            let seen = seen.clone();
            async move {
                let body = request.into_body().collect().await?.to_bytes();
                record(&seen, &body);
                Ok::<_, hyper::Error>(Response::new(Full::new(Bytes::from_static(b"{}"))))
            }
        });
        tokio::spawn(
            hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service),
        );
    }
}

/// Counts one delivery, and its event-to-arrival time when its body has a status timestamp.
fn record(seen: &Mutex<Seen>, body: &[u8]) {
    let now = Instant::now();
    let sent = timestamp(body).and_then(|at| {
        let age = jiff::Timestamp::now().duration_since(at);
        u32::try_from(age.as_micros()).ok()
    });
    let mut s = seen.lock().unwrap_or_else(|p| p.into_inner());
    s.deliveries += 1;
    s.first.get_or_insert(now);
    s.last = Some(now);
    if let Some(us) = sent {
        s.latencies_us.push(us);
    }
}

/// The first `"timestamp":"…"` of a body.
fn timestamp(body: &[u8]) -> Option<jiff::Timestamp> {
    const KEY: &[u8] = b"\"timestamp\":\"";
    let at = body.windows(KEY.len()).position(|w| w == KEY)? + KEY.len();
    let end = body[at..].iter().position(|&b| b == b'"')? + at;
    std::str::from_utf8(&body[at..end]).ok()?.parse().ok()
}
