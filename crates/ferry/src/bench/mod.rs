//! `ferry bench`: a closed-loop load generator for A2A servers.
//!
//! Each of `--connections` HTTP/1.1 keep-alive connections sends one request, waits for the whole
//! answer, and sends the next, for `--duration` seconds. `send` mode measures JSON-RPC
//! `SendMessage` (requests/s and latency percentiles); `stream` mode measures complete
//! `SendStreamingMessage` streams (streams/s, time to the end of each stream). With
//! `--binding grpc` the same calls go over gRPC, one HTTP/2 connection per worker with one
//! call in flight (see `bench_grpc`). `fan-out` holds thousands of streams open, all receiving,
//! and `idle` thousands of idle keep-alive connections, to see what each costs the server.
//! Results are printed as text or JSON; compare runs as ratios, not absolute numbers, since they depend on
//! the machine.

use anyhow::{Context, bail};
use bytes::Bytes;
use clap::{Args, ValueEnum};
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use std::time::{Duration, Instant};
use tokio::net::TcpStream;

mod cards;
mod fan_out;
mod forms;
mod grpc;
mod idle;
mod push;
mod server_memory;

/// What to measure.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub(crate) enum BenchMode {
    /// Blocking JSON-RPC SendMessage.
    Send,
    /// Blocking JSON-RPC SendMessage, each with a push config (inline) for a receiver the
    /// bench runs itself: sends/s as `send` measures it, then the deliveries/s the receiver
    /// got and the time from each event (its status timestamp) to its arrival. The server
    /// needs `--push-allow-private` (the receiver is on 127.0.0.1).
    Push,
    /// JSON-RPC SendStreamingMessage, read to the end of the stream.
    Stream,
    /// `--streams` streams open at once over `--tasks` tasks that each emit an event every
    /// `--interval-ms` for `--duration` seconds (`ferry serve --agent conformance`, whose
    /// `ferry-pulse` does): every event delivered, fan-out latency, the server's RSS
    /// (`--pid`).
    FanOut,
    /// `--connections` idle keep-alive connections held for `--duration` seconds: how many
    /// the server keeps, its RSS (`--pid`).
    Idle,
    /// Card trust, no server: strict parse + ES256 signature verification of a ~2 KiB card.
    VerifyEs256,
    /// Card trust, no server: strict parse + EdDSA signature verification of a ~2 KiB card.
    VerifyEddsa,
    /// Card trust, no server: strict parse + RFC 8785 canonical form of a ~2 KiB card.
    Canonicalize,
    /// The forms agent in headless Chromium, both isolation modes: cold session, warm
    /// inspect, fill + submit, memory (PSS) with 1 and 4 conversations. `--duration` is the
    /// number of rounds.
    Forms,
}

/// The binding the load uses.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub(crate) enum LoadBinding {
    /// JSON-RPC over HTTP/1.1.
    Jsonrpc,
    /// gRPC over HTTP/2 (cleartext).
    Grpc,
    /// A2A v0.3's JSON-RPC (`message/send`, `message/stream`) at `--url`, as a v0.3 client
    /// sends it (no `A2A-Version`).
    V03,
}

/// Flags of `ferry bench`.
#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// JSON-RPC endpoint of the server under test (e.g. http://127.0.0.1:8765/jsonrpc).
    #[arg(long, default_value = "http://127.0.0.1:8765/jsonrpc")]
    url: String,
    /// What to measure.
    #[arg(long, value_enum, default_value = "send")]
    mode: BenchMode,
    /// The binding of `send` and `stream`: JSON-RPC at `--url`, v0.3's JSON-RPC there, or
    /// gRPC at its host and port.
    #[arg(long, value_enum, default_value = "jsonrpc")]
    binding: LoadBinding,
    /// Concurrent connections (with `fan-out --http2`: the connections its streams share).
    #[arg(long, default_value_t = 32)]
    connections: usize,
    /// `fan-out` over HTTP/2 with prior knowledge (h2c): the streams share `--connections`
    /// connections instead of each having one of its own (HTTP/1.1).
    #[arg(long)]
    http2: bool,
    /// Seconds to run (after a one-second warm-up).
    #[arg(long, default_value_t = 10)]
    duration: u64,
    /// Streams open at once (`fan-out`).
    #[arg(long, default_value_t = 10_000)]
    streams: usize,
    /// Tasks the streams follow (`fan-out`): each has `--streams / --tasks` subscribers.
    #[arg(long, default_value_t = 100)]
    tasks: usize,
    /// Milliseconds between a task's events (`fan-out`).
    #[arg(long, default_value_t = 1000)]
    interval_ms: u64,
    /// The server's process id, to read its resident memory (`fan-out`, `idle`; Linux).
    #[arg(long)]
    pid: Option<u32>,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
}

/// Runs the benchmark on a current-thread runtime (one core for the load generator).
pub(crate) fn run(args: BenchArgs) -> anyhow::Result<()> {
    let seconds = Duration::from_secs(args.duration.max(1));
    match args.mode {
        BenchMode::Forms => return crate::bench::forms::run(args.duration, args.json),
        BenchMode::VerifyEs256 => {
            return crate::bench::cards::run(
                Some(ferry_trust::keys::Algorithm::Es256),
                seconds,
                args.json,
            );
        }
        BenchMode::VerifyEddsa => {
            return crate::bench::cards::run(
                Some(ferry_trust::keys::Algorithm::EdDsa),
                seconds,
                args.json,
            );
        }
        BenchMode::Canonicalize => return crate::bench::cards::run(None, seconds, args.json),
        BenchMode::Send
        | BenchMode::Stream
        | BenchMode::Push
        | BenchMode::FanOut
        | BenchMode::Idle => {}
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    rt.block_on(bench(args))
}

/// Host, port and path of a plain-http URL.
fn split_url(url: &str) -> anyhow::Result<(String, String)> {
    let Some(rest) = url.strip_prefix("http://") else {
        bail!("only http:// URLs are supported by the load generator, got {url}");
    };
    let (authority, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_owned()), |(a, p)| (a, format!("/{p}")));
    Ok((authority.to_owned(), path))
}

pub(crate) fn request_body(mode: BenchMode, binding: LoadBinding) -> Bytes {
    let stream = mode == BenchMode::Stream;
    Bytes::from(match binding {
        LoadBinding::V03 => {
            let method = if stream {
                "message/stream"
            } else {
                "message/send"
            };
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"message":{{"kind":"message","messageId":"bench-1","role":"user","parts":[{{"kind":"text","text":"hello ferry"}}]}}}}}}"#
            )
        }
        LoadBinding::Jsonrpc | LoadBinding::Grpc => {
            let method = if stream {
                "SendStreamingMessage"
            } else {
                "SendMessage"
            };
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"message":{{"messageId":"bench-1","role":"ROLE_USER","parts":[{{"text":"hello ferry"}}]}}}}}}"#
            )
        }
    })
}

async fn bench(args: BenchArgs) -> anyhow::Result<()> {
    match args.mode {
        BenchMode::Push => return crate::bench::push::run(&args).await,
        BenchMode::FanOut => return crate::bench::fan_out::run(&args).await,
        BenchMode::Idle => return crate::bench::idle::run(&args).await,
        _ => {}
    }
    let body = request_body(args.mode, args.binding);
    let load = load(&args, body).await?;
    load.report(&args, serde_json::Value::Null);
    Ok(())
}

/// What a load run measured: each completed call's latency (sorted), and the errors.
pub(crate) struct Load {
    latencies_us: Vec<u32>,
    errors: u64,
}

/// Runs the closed-loop load of `args` sending `body` (JSON-RPC and v0.3; gRPC builds its
/// own requests).
pub(crate) async fn load(args: &BenchArgs, body: Bytes) -> anyhow::Result<Load> {
    let (authority, path) = split_url(&args.url)?;
    let warmup = Duration::from_secs(1);
    let duration = Duration::from_secs(args.duration.max(1));
    let start = Instant::now();
    let measure_from = start + warmup;
    let stop_at = measure_from + duration;
    let mut workers = Vec::with_capacity(args.connections);
    for _ in 0..args.connections.max(1) {
        let (authority, path, body) = (authority.clone(), path.clone(), body.clone());
        workers.push(match args.binding {
            LoadBinding::Jsonrpc | LoadBinding::V03 => {
                // A v0.3 client states no version.
                let version = (args.binding == LoadBinding::Jsonrpc).then_some("1.0");
                let target = Target {
                    authority,
                    path,
                    body,
                    version,
                };
                tokio::spawn(connection_loop(target, measure_from, stop_at))
            }
            LoadBinding::Grpc => tokio::spawn(crate::bench::grpc::worker(
                format!("http://{authority}"),
                args.mode,
                measure_from,
                stop_at,
            )),
        });
    }
    let mut latencies_us: Vec<u32> = Vec::new();
    let mut errors = 0u64;
    for w in workers {
        let r = w.await.context("a load connection panicked")??;
        latencies_us.extend(r.latencies_us);
        errors += r.errors;
    }
    if latencies_us.is_empty() {
        bail!(
            "no request completed ({errors} errors); is the server at {} running?",
            args.url
        );
    }
    latencies_us.sort_unstable();
    Ok(Load {
        latencies_us,
        errors,
    })
}

/// The value at fraction `p` of sorted `values`, in milliseconds (of microseconds).
pub(crate) fn percentile_ms(values: &[u32], p: f64) -> f64 {
    let i = ((values.len() as f64 - 1.0) * p).round() as usize;
    values.get(i).map_or(0.0, |v| f64::from(*v) / 1000.0)
}

impl Load {
    /// Calls completed per second of `args.duration`.
    pub(crate) fn rate(&self, args: &BenchArgs) -> f64 {
        self.latencies_us.len() as f64 / args.duration.max(1) as f64
    }

    /// Prints the result: text, or one JSON object with the members of `extra` (an object,
    /// or null) merged in.
    pub(crate) fn report(&self, args: &BenchArgs, extra: serde_json::Value) {
        let pct = |p| percentile_ms(&self.latencies_us, p);
        let rate = self.rate(args);
        let unit = if args.mode == BenchMode::Stream {
            "streams/s"
        } else {
            "requests/s"
        };
        if args.json {
            let mut out = serde_json::json!({
                "mode": format!("{:?}", args.mode).to_lowercase(), "url": args.url,
                "binding": format!("{:?}", args.binding).to_lowercase(),
                "connections": args.connections, "durationSecs": args.duration,
                "completed": self.latencies_us.len(), "errors": self.errors, "perSecond": rate,
                "p50Ms": pct(0.50), "p90Ms": pct(0.90), "p99Ms": pct(0.99), "maxMs": pct(1.0),
            });
            if let (Some(out), serde_json::Value::Object(extra)) = (out.as_object_mut(), extra) {
                out.extend(extra);
            }
            println!("{out}");
        } else {
            println!(
                "{:?} x{} for {}s: {:.0} {unit}, p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms, {} errors",
                args.mode,
                args.connections,
                args.duration,
                rate,
                pct(0.50),
                pct(0.90),
                pct(0.99),
                pct(1.0),
                self.errors
            );
        }
    }
}

/// What one connection measured.
pub(crate) struct ConnectionResult {
    latencies_us: Vec<u32>,
    errors: u64,
}

impl ConnectionResult {
    pub(crate) fn new() -> Self {
        Self {
            latencies_us: Vec::with_capacity(1 << 16),
            errors: 0,
        }
    }

    /// Counts a call that started at `started`, if it started after `measure_from`.
    pub(crate) fn record(&mut self, started: Instant, measure_from: Instant, ok: bool) {
        if started < measure_from {
            return;
        }
        if ok {
            let us = u32::try_from(started.elapsed().as_micros()).unwrap_or(u32::MAX);
            self.latencies_us.push(us);
        } else {
            self.errors += 1;
        }
    }
}

/// Where one HTTP/1.1 load connection sends what.
struct Target {
    authority: String,
    path: String,
    body: Bytes,
    /// The `A2A-Version` it states, if any.
    version: Option<&'static str>,
}

/// A TCP connection to `authority`, without Nagle's delay.
pub(crate) async fn dial(authority: &str) -> anyhow::Result<TcpStream> {
    let stream = TcpStream::connect(authority)
        .await
        .with_context(|| format!("connecting to {authority}"))?;
    stream.set_nodelay(true).ok();
    Ok(stream)
}

async fn connection_loop(
    target: Target,
    measure_from: Instant,
    stop_at: Instant,
) -> anyhow::Result<ConnectionResult> {
    let Target {
        authority,
        path,
        body,
        version,
    } = target;
    let stream = dial(&authority).await?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    let mut result = ConnectionResult::new();
    loop {
        let now = Instant::now();
        if now >= stop_at {
            break;
        }
        let mut req = Request::post(path.as_str())
            .header("host", authority.as_str())
            .header("content-type", "application/json");
        if let Some(version) = version {
            req = req.header("a2a-version", version);
        }
        let req = req.body(Full::new(body.clone()))?;
        let ok = match sender.send_request(req).await {
            Ok(resp) => {
                let status_ok = resp.status().is_success();
                let collected = resp.into_body().collect().await;
                status_ok
                    && collected.is_ok_and(|b| !b.to_bytes().windows(8).any(|w| w == b"\"error\":"))
            }
            Err(_) => false,
        };
        result.record(now, measure_from, ok);
        if !ok && sender.ready().await.is_err() {
            break;
        }
    }
    Ok(result)
}
