//! `ferry bench --mode idle`: what idle keep-alive connections cost a server.
//!
//! Opens `--connections` HTTP/1.1 connections, each fetching the agent card once and then
//! staying open, idle, for `--duration` seconds; then asks for the card again on each, to
//! count how many the server kept (`ferry serve` closes a connection idle for longer than its
//! `--header-timeout`). With `--pid`, the server's resident memory is read before and while
//! they are all open. One source address has some 28,000 ports, so connections to a loopback
//! address come from 127.0.0.1, 127.0.0.2, … in blocks of 10,000.
//! The bench and the server each need a file descriptor per connection (`ulimit -n`).

use crate::bench::server_memory::{Growth, Sampler, rss_kib};
use crate::bench::{BenchArgs, split_url};
use anyhow::{Context, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::Request;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::json;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpSocket;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// Connections being opened at once.
const OPENING_AT_ONCE: usize = 256;
/// Connections from one source address (its ephemeral ports, with room to spare).
const PER_SOURCE: usize = 10_000;
/// Where the card is.
const CARD: &str = "/.well-known/agent-card.json";

type Connection = SendRequest<Empty<Bytes>>;

pub(crate) async fn run(args: &BenchArgs) -> anyhow::Result<()> {
    let (authority, _) = split_url(&args.url)?;
    let server: SocketAddr = tokio::net::lookup_host(&authority)
        .await?
        .next()
        .with_context(|| format!("{authority} has no address"))?;
    let authority: Arc<str> = authority.into();
    let idle_rss = args.pid.and_then(rss_kib);
    let wanted = args.connections.max(1);
    let opening = Arc::new(Semaphore::new(OPENING_AT_ONCE));
    let mut opened = JoinSet::new();
    for n in 0..wanted {
        let (authority, opening) = (authority.clone(), opening.clone());
        opened.spawn(async move {
            let _permit = opening.acquire_owned().await;
            open(server, &authority, n).await
        });
    }
    let mut connections = Vec::with_capacity(wanted);
    let mut first_error = None;
    while let Some(outcome) = opened.join_next().await {
        match outcome.context("opening a connection panicked")? {
            Ok(connection) => connections.push(connection),
            Err(e) => {
                first_error.get_or_insert(format!("{e:#}"));
            }
        }
    }
    let open_count = connections.len();
    let hold = Duration::from_secs(args.duration.max(1));
    let sampler = args
        .pid
        .map(|pid| Sampler::start(pid, Duration::ZERO, Duration::from_secs(1)));
    tokio::time::sleep(hold).await;
    let memory = Growth {
        before: idle_rss,
        peak: match sampler {
            Some(sampler) => sampler.finish().await,
            None => None,
        },
    };
    let mut alive = 0usize;
    let mut asked = JoinSet::new();
    for connection in connections {
        let authority = authority.clone();
        asked.spawn(async move { card(connection, &authority).await.is_ok() });
    }
    while let Some(kept) = asked.join_next().await {
        alive += usize::from(kept.unwrap_or(false));
    }
    if args.json {
        println!(
            "{}",
            json!({
                "mode": "idle", "url": args.url, "wanted": wanted, "opened": open_count,
                "aliveAfterHold": alive, "holdSecs": hold.as_secs(), "firstError": first_error,
                "serverRssIdleKiB": memory.before, "serverRssPeakKiB": memory.peak,
                "serverKiBPerConnection": memory.per(open_count),
            })
        );
    } else {
        println!(
            "idle: {open_count} of {wanted} connections opened, {alive} still served after {} s idle",
            hold.as_secs()
        );
        if let Some(e) = &first_error {
            println!("first failure: {e}");
        }
        memory.print(open_count, "a connection");
    }
    if open_count < wanted {
        bail!("{} connections could not be opened", wanted - open_count);
    }
    Ok(())
}

/// Opens connection `n` to `server` and fetches the card on it once.
async fn open(server: SocketAddr, authority: &str, n: usize) -> anyhow::Result<Connection> {
    let socket = match server {
        SocketAddr::V4(_) => TcpSocket::new_v4(),
        SocketAddr::V6(_) => TcpSocket::new_v6(),
    }
    .context("a socket (is `ulimit -n` high enough?)")?;
    // Ports left in TIME_WAIT by an earlier run may be bound again.
    socket.set_reuseaddr(true)?;
    if let SocketAddr::V4(v4) = server
        && v4.ip().is_loopback()
    {
        let block = u32::try_from(n / PER_SOURCE).unwrap_or(0);
        let source = Ipv4Addr::from(u32::from(Ipv4Addr::LOCALHOST) + block);
        socket.bind(SocketAddr::V4(SocketAddrV4::new(source, 0)))?;
    }
    let tcp = socket
        .connect(server)
        .await
        .with_context(|| format!("connecting to {server}"))?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
    tokio::spawn(conn);
    card(sender, authority).await
}

/// Fetches the card on `connection`; the connection, ready for the next request.
async fn card(mut connection: Connection, authority: &str) -> anyhow::Result<Connection> {
    connection.ready().await?;
    let request = Request::get(CARD)
        .header("host", authority)
        .body(Empty::new())?;
    let response = connection.send_request(request).await?;
    let status = response.status();
    response.into_body().collect().await?;
    if !status.is_success() {
        bail!("the card was answered {status}");
    }
    Ok(connection)
}
