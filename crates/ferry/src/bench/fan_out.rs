//! `ferry bench --mode fan-out`: many streams open on one server at once, all receiving.
//!
//! The server runs the conformance agent (`ferry serve --agent conformance`). The bench
//! starts `--tasks` pulse tasks (`ferry-pulse`: one artifact chunk every `--interval-ms`
//! for `--duration` seconds, each chunk stamped with when it was emitted), each with a
//! `SendStreamingMessage` stream, then opens `SubscribeToTask` streams round-robin over the
//! tasks until `--streams` are open. The pulses start once every stream had time to open.
//! Each stream checks that it gets every chunk emitted after it joined, in order, and then
//! the task's completion; it records each chunk's fan-out latency (emitted to received, on
//! the same machine's clock). With `--pid`, the server's resident memory is sampled
//! before the streams open and while they all receive.
//!
//! Over HTTP/1.1 each stream has a connection of its own (an SSE client's only way); with
//! `--http2` the streams share `--connections` HTTP/2 connections, as a gRPC client's or a
//! proxy's would.

use crate::bench::server_memory::{Growth, Sampler, rss_kib};
use crate::bench::{BenchArgs, dial, percentile_ms, split_url};
use anyhow::{Context, bail};
use bytes::Bytes;
use ferry_agents::PULSE_ARTIFACT;
use ferry_client::sse::{SseEvent, SseParser};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http2;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::Semaphore;

/// Streams being opened at once (a burst of thousands of connects overflows the listen
/// backlog).
const OPENING_AT_ONCE: usize = 64;

/// What the run asks of the server.
#[derive(Debug, Clone, Copy)]
struct Plan {
    streams: usize,
    tasks: usize,
    interval: Duration,
    /// Chunks per task.
    count: u32,
    /// Time every stream has to open before the first chunk.
    ramp: Duration,
}

impl Plan {
    fn of(args: &BenchArgs) -> Self {
        let streams = args.streams.max(1);
        let tasks = args.tasks.clamp(1, streams);
        let interval = Duration::from_millis(args.interval_ms.max(1));
        // Within the pulse's bounds (1 to 1,000 chunks).
        let count = (args.duration.max(1) * 1000 / args.interval_ms.max(1)).clamp(1, 1000);
        let count = u32::try_from(count).unwrap_or(1000);
        // A second, plus a millisecond per stream: opening a stream takes well under that.
        let ramp = Duration::from_millis(1000 + streams as u64);
        Self {
            streams,
            tasks,
            interval,
            count,
            ramp,
        }
    }

    /// The text of task `n`'s pulse (see the conformance agent's `ferry-pulse`). The tasks'
    /// first chunks are spread over one interval, as independent tasks' events would be,
    /// rather than all due at the same instant.
    fn pulse_text(&self, n: usize) -> String {
        let phase = self.interval.as_millis() * n as u128 / self.tasks as u128;
        format!(
            "{} {} {}",
            self.ramp.as_millis() + phase,
            self.interval.as_millis(),
            self.count
        )
    }
}

/// What one stream saw.
#[derive(Debug, Default)]
struct Received {
    latencies_us: Vec<u32>,
    /// Chunks it should have had (those emitted after it joined).
    expected: u64,
    /// Chunks that came in order.
    delivered: u64,
    /// It joined after the first chunk.
    late: bool,
    /// What went wrong, if it did.
    error: Option<String>,
}

pub(crate) async fn run(args: &BenchArgs) -> anyhow::Result<()> {
    let plan = Plan::of(args);
    let target = Arc::new(Target::connect(args).await?);
    let idle_rss = args.pid.and_then(rss_kib);
    let opening = Arc::new(Semaphore::new(OPENING_AT_ONCE));
    let mut streams = Vec::with_capacity(plan.streams);
    let mut task_ids = Vec::with_capacity(plan.tasks);
    for n in 0..plan.tasks {
        let (id, stream) = start_task(&target, &plan, n).await?;
        task_ids.push(id);
        streams.push(tokio::spawn(stream.follow(plan.count)));
    }
    for n in plan.tasks..plan.streams {
        let task = task_ids[n % plan.tasks].clone();
        let (target, opening) = (target.clone(), opening.clone());
        streams.push(tokio::spawn(async move {
            let permit = opening.acquire_owned().await;
            let opened = subscribe(&target, n, &task).await;
            drop(permit);
            match opened {
                Ok(stream) => stream.follow(plan.count).await,
                Err(e) => Received {
                    error: Some(format!("{e:#}")),
                    ..Received::default()
                },
            }
        }));
    }
    // Sampled from when the pulses start (all streams open, all receiving) to the end.
    let sampler = args
        .pid
        .map(|pid| Sampler::start(pid, plan.ramp, plan.interval));
    let mut all = Received::default();
    let (mut failed, mut late, mut first_error) = (0, 0, None);
    for stream in streams {
        let got = stream.await.context("a stream panicked")?;
        all.latencies_us.extend(got.latencies_us);
        all.expected += got.expected;
        all.delivered += got.delivered;
        late += usize::from(got.late);
        if let Some(e) = got.error {
            failed += 1;
            first_error.get_or_insert(e);
        }
    }
    let memory = Growth {
        before: idle_rss,
        peak: match sampler {
            Some(sampler) => sampler.finish().await,
            None => None,
        },
    };
    all.latencies_us.sort_unstable();
    let counts = Counts {
        failed,
        late,
        first_error,
    };
    report(args, &target, &plan, &all, &counts, memory);
    if all.delivered < all.expected || failed > 0 {
        bail!(
            "{} of {} chunks were not delivered, {failed} streams failed",
            all.expected - all.delivered,
            all.expected
        );
    }
    Ok(())
}

/// How the streams fared.
struct Counts {
    failed: usize,
    late: usize,
    first_error: Option<String>,
}

fn report(
    args: &BenchArgs,
    target: &Target,
    plan: &Plan,
    all: &Received,
    counts: &Counts,
    memory: Growth,
) {
    let pct = |p| percentile_ms(&all.latencies_us, p);
    if args.json {
        println!(
            "{}",
            json!({
                "mode": "fan-out", "url": args.url, "streams": plan.streams, "tasks": plan.tasks,
                "http": target.http_version(), "connections": target.connections(plan.streams),
                "intervalMs": plan.interval.as_millis() as u64, "chunksPerTask": plan.count,
                "expected": all.expected, "delivered": all.delivered,
                "failedStreams": counts.failed, "lateStreams": counts.late,
                "firstError": counts.first_error,
                "fanOutP50Ms": pct(0.50), "fanOutP99Ms": pct(0.99), "fanOutMaxMs": pct(1.0),
                "serverRssIdleKiB": memory.before, "serverRssPeakKiB": memory.peak,
                "serverKiBPerStream": memory.per(plan.streams),
            })
        );
        return;
    }
    println!(
        "fan-out: {} streams over {} tasks, a chunk every {} ms, {} per task; {} over {} connections",
        plan.streams,
        plan.tasks,
        plan.interval.as_millis(),
        plan.count,
        target.http_version(),
        target.connections(plan.streams)
    );
    println!(
        "delivered {} of {} chunks; {} streams failed, {} joined late",
        all.delivered, all.expected, counts.failed, counts.late
    );
    if let Some(e) = &counts.first_error {
        println!("first failure: {e}");
    }
    println!(
        "fan-out latency (emitted to received): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        pct(0.50),
        pct(0.99),
        pct(1.0)
    );
    memory.print(plan.streams, "a stream");
}

/// Where the streams go.
struct Target {
    authority: String,
    path: String,
    /// With `--http2`, the connections the streams share (stream `n` takes `n % len`);
    /// empty: a connection per stream.
    shared: Vec<http2::SendRequest<Full<Bytes>>>,
}

impl Target {
    /// The target of `args`, its shared HTTP/2 connections open (with `--http2`).
    async fn connect(args: &BenchArgs) -> anyhow::Result<Self> {
        let (authority, path) = split_url(&args.url)?;
        let mut shared = Vec::new();
        if args.http2 {
            for _ in 0..args.connections.max(1) {
                let io = TokioIo::new(dial(&authority).await?);
                let (sender, conn) = http2::handshake(TokioExecutor::new(), io).await?;
                tokio::spawn(conn);
                shared.push(sender);
            }
        }
        Ok(Self {
            authority,
            path,
            shared,
        })
    }

    fn http_version(&self) -> &'static str {
        if self.shared.is_empty() {
            "HTTP/1.1"
        } else {
            "HTTP/2"
        }
    }

    /// Connections that carry `streams` streams.
    fn connections(&self, streams: usize) -> usize {
        if self.shared.is_empty() {
            streams
        } else {
            self.shared.len()
        }
    }

    /// A POST to the target: HTTP/1.1 names the host in a header, HTTP/2 in the URI (its
    /// `:authority`).
    fn post(&self) -> hyper::http::request::Builder {
        if self.shared.is_empty() {
            Request::post(self.path.as_str()).header("host", self.authority.as_str())
        } else {
            Request::post(format!("http://{}{}", self.authority, self.path))
        }
    }

    /// Sends stream `n`'s request: on a connection of its own, or on its shared one.
    async fn send(
        &self,
        n: usize,
        request: Request<Full<Bytes>>,
    ) -> anyhow::Result<Response<Incoming>> {
        if self.shared.is_empty() {
            let io = TokioIo::new(dial(&self.authority).await?);
            let (mut sender, conn) = hyper::client::conn::http1::handshake(io).await?;
            tokio::spawn(conn);
            return Ok(sender.send_request(request).await?);
        }
        let mut sender = self.shared[n % self.shared.len()].clone();
        sender.ready().await?;
        Ok(sender.send_request(request).await?)
    }
}

/// Starts pulse task `n` with a streaming send; its id and the stream (past the task).
async fn start_task(target: &Target, plan: &Plan, n: usize) -> anyhow::Result<(String, Stream)> {
    let call = json!({
        "jsonrpc": "2.0", "id": n, "method": "SendStreamingMessage",
        "params": {"message": {
            "messageId": format!("ferry-pulse-bench-{n}-{}", micros_now()),
            "role": "ROLE_USER", "parts": [{"text": plan.pulse_text(n)}],
        }},
    });
    let (stream, task) = Stream::open_at_task(target, n, &call).await?;
    let Some(id) = task["id"].as_str() else {
        bail!("the task has no id: {task}");
    };
    Ok((id.to_owned(), stream))
}

/// Subscribes to `task`; the stream, past the task's snapshot (with the chunks it already
/// has counted as seen).
async fn subscribe(target: &Target, n: usize, task: &str) -> anyhow::Result<Stream> {
    let call = json!({
        "jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task},
    });
    let (mut stream, task) = Stream::open_at_task(target, n, &call).await?;
    stream.seen = task["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["artifactId"] == PULSE_ARTIFACT)
        .filter_map(|a| a["parts"].as_array())
        .map(|parts| parts.len() as u64)
        .sum();
    Ok(stream)
}

/// The largest SSE event a stream reads (a pulse event is a few hundred bytes).
const EVENT_LIMIT: usize = 64 * 1024;

/// One open SSE stream of JSON-RPC events.
struct Stream {
    body: Incoming,
    parser: SseParser,
    /// Events parsed, not yet read.
    parsed: VecDeque<SseEvent>,
    /// Chunks seen so far (in its snapshot, then as events).
    seen: u64,
}

impl Stream {
    /// Stream `n`, opened with `call`.
    async fn open(target: &Target, n: usize, call: &Value) -> anyhow::Result<Self> {
        let request = target
            .post()
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .header("a2a-version", "1.0")
            .body(Full::new(Bytes::from(serde_json::to_vec(call)?)))?;
        let response = target.send(n, request).await?;
        if !response.status().is_success() {
            bail!("the server answered {}", response.status());
        }
        Ok(Self {
            body: response.into_body(),
            parser: SseParser::new(EVENT_LIMIT),
            parsed: VecDeque::new(),
            seen: 0,
        })
    }

    /// Opens a stream with `call` and reads its first event, the task; the stream (past it)
    /// and the task.
    async fn open_at_task(
        target: &Target,
        n: usize,
        call: &Value,
    ) -> anyhow::Result<(Self, Value)> {
        let mut stream = Self::open(target, n, call).await?;
        let mut first = stream
            .next()
            .await?
            .context("the stream ended before the task")?;
        let task = first["result"]["task"].take();
        if !task.is_object() {
            bail!("the first event is not the task: {first}");
        }
        Ok((stream, task))
    }

    /// The next event's `data:` as JSON, `None` at the end of the stream.
    async fn next(&mut self) -> anyhow::Result<Option<Value>> {
        loop {
            if let Some(event) = self.parsed.pop_front() {
                return Ok(Some(serde_json::from_str(&event.data)?));
            }
            let Some(frame) = self.body.frame().await else {
                return Ok(None);
            };
            if let Ok(data) = frame?.into_data() {
                self.parsed.extend(self.parser.feed(&data)?);
            }
        }
    }

    /// Reads to the task's completion: each chunk after those seen must come, in order.
    async fn follow(mut self, count: u32) -> Received {
        let mut got = Received {
            expected: u64::from(count).saturating_sub(self.seen),
            late: self.seen > 0,
            ..Received::default()
        };
        if let Err(e) = self.read_to_end(&mut got).await {
            got.error = Some(format!("{e:#}"));
        }
        got
    }

    async fn read_to_end(&mut self, got: &mut Received) -> anyhow::Result<()> {
        while let Some(event) = self.next().await? {
            let result = &event["result"];
            if !event["error"].is_null() {
                bail!("the stream ended with an error: {}", event["error"]);
            }
            if let Some(parts) = result["artifactUpdate"]["artifact"]["parts"].as_array() {
                for text in parts.iter().filter_map(|p| p["text"].as_str()) {
                    let (n, emitted) = chunk_of(text)?;
                    if n != self.seen + 1 {
                        bail!("chunk {n} came after chunk {}", self.seen);
                    }
                    self.seen = n;
                    got.delivered += 1;
                    let took = micros_now().saturating_sub(emitted);
                    got.latencies_us
                        .push(u32::try_from(took).unwrap_or(u32::MAX));
                }
            }
            if result["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED" {
                return Ok(());
            }
        }
        bail!("the stream ended before the task completed")
    }
}

/// A pulse chunk's number and emission time (`pulse N MICROS`).
fn chunk_of(text: &str) -> anyhow::Result<(u64, u64)> {
    let mut words = text.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some("pulse"), Some(n), Some(at)) => Ok((n.parse()?, at.parse()?)),
        _ => bail!("not a pulse chunk: {text:?}"),
    }
}

fn micros_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}
