//! Serving: the accept loop (HTTP/1.1 and HTTP/2 on one port, the header timeout from the
//! accept, the client address on every request), the sweeper of expired tasks, and a
//! shutdown that drains.

use super::preface::{PREFACE_LEN, Protocol, UntilPreface, protocol_of};
use super::tls::{Tls, client_caller};
use crate::config::ServerConfig;
use crate::core::manager::TaskManager;
use crate::edge::front_door::{Caller, ClientCertificate};
use crate::edge::request_id::ClientAddr;
use crate::edge::service::ServerState;
use axum::Router;
use axum::extract::Request;
use hyper::server::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

/// Serves `routes` on `listener` until `shutdown` resolves, then drains (see
/// [`super::A2aServer::run`]).
pub(super) async fn serve(
    listener: TcpListener,
    server: Arc<ServerState>,
    routes: Router,
    tls: Option<Arc<Tls>>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let sweeper = spawn_sweeper(server.manager.clone());
    let follower = spawn_replica_follower(
        &server,
        replica_url(&server.config, &listener, tls.is_some()),
    );
    let reloader = tls.as_ref().map(Tls::spawn_reloader);
    // Shared by the connections' tasks (a TLS connection is served after its handshake, in
    // its own task).
    let http = Arc::new(Http::new(&server.config));
    let header_timeout = header_timeout(&server.config);
    let graceful = GracefulShutdown::new();
    // Connections live in a set so that those still open after the drain are closed with it,
    // not left running after `serve` returns.
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let tls = tls.as_ref().map(|t| t.acceptor());
                    let connection = Connection { stream, peer, header_timeout, tls };
                    connection.spawn(&http, &routes, &graceful, &mut connections);
                }
                Err(e) => {
                    // Out of file descriptors and the like: wait a little, keep serving.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    drain(&server, graceful).await;
    connections.shutdown().await;
    sweeper.abort();
    if let Some(follower) = follower {
        follower.abort();
    }
    if let Some(reloader) = reloader {
        reloader.abort();
    }
}

/// Expires what is due, every second, for as long as the server runs.
fn spawn_sweeper(manager: Arc<TaskManager>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            tick.tick().await;
            if let Err(e) = manager.sweep().await {
                tracing::warn!(error = %e, "expiring tasks failed; retrying");
            }
        }
    })
}

/// The URL the other replicas reach this one at: the configured one, or the bound address
/// (which other hosts cannot use when it is a wildcard: the configuration must say then).
fn replica_url(config: &ServerConfig, listener: &TcpListener, tls: bool) -> String {
    if let Some(url) = &config.replicas.url {
        return url.clone();
    }
    let scheme = if tls { "https" } else { "http" };
    match listener.local_addr() {
        Ok(addr) => {
            if addr.ip().is_unspecified() {
                tracing::warn!(%addr, "bound to a wildcard address without [replicas] url (--replica-url): other replicas cannot forward conversations to this one");
            }
            format!("{scheme}://{addr}")
        }
        Err(_) => String::new(),
    }
}

/// Follows the other replicas' writes, when the store is shared (see `core::replicas`), and
/// announces this replica, reached at `url`, at every heartbeat.
fn spawn_replica_follower(
    server: &ServerState,
    url: String,
) -> Option<tokio::task::JoinHandle<()>> {
    let notices = server.manager.store().replicas()?.notices();
    let settings = &server.config.replicas;
    let poll = Duration::from_secs(settings.safety_poll_secs.max(1));
    let heartbeat = Duration::from_secs(settings.heartbeat_secs.max(1));
    let manager = server.manager.clone();
    Some(tokio::spawn(async move {
        tokio::join!(
            crate::core::replicas::follow(manager.clone(), notices, poll),
            crate::core::replicas::keep_leases(manager, heartbeat, url),
        );
    }))
}

/// The largest HTTP/1.1 request head served; a larger one is answered 431.
pub(crate) const MAX_HEAD_BYTES: usize = 8 * 1024;

fn header_timeout(config: &ServerConfig) -> Duration {
    Duration::from_secs(config.header_read_timeout_secs.max(1))
}

/// The HTTP/1.1 options, on hyper's builder or hyper-util's (their methods are the same).
///
/// hyper's smallest read buffer, 8 KiB, which is then also the largest request head (request
/// line and headers: Tomcat's and Jetty's default too). A larger limit lets hyper grow every
/// connection's buffer to twice that after its first read, idle or streaming.
macro_rules! http1_options {
    ($builder:expr, $config:expr) => {
        $builder
            .timer(TokioTimer::new())
            .max_buf_size(MAX_HEAD_BYTES)
            .header_read_timeout(header_timeout($config))
    };
}

/// The HTTP/2 options, on hyper's builder or hyper-util's.
///
/// One connection may carry as many calls as the server serves at once: the front door
/// refuses what is over its limits (a stream cap at the in-flight limit would queue calls in
/// the client instead of answering them).
macro_rules! http2_options {
    ($builder:expr, $config:expr) => {
        $builder
            .timer(TokioTimer::new())
            .max_concurrent_streams(streams_per_connection($config))
            .max_header_list_size(64 * 1024)
            .keep_alive_interval($config.sse_keepalive())
            .keep_alive_timeout(Duration::from_secs(20))
    };
}

/// The HTTP/2 streams one connection may open: every call the server serves at once.
fn streams_per_connection(config: &ServerConfig) -> u32 {
    let calls = config
        .max_in_flight
        .saturating_add(config.max_streams)
        .max(1);
    u32::try_from(calls).unwrap_or(u32::MAX)
}

/// HTTP/1.1, and HTTP/2 with prior knowledge (h2c: gRPC, or any client that speaks it), told
/// apart by the connection preface.
///
/// A plain connection whose first bytes tell is served by that protocol's connection alone:
/// hyper-util's connection that serves either holds room for both, and an HTTP/1.1
/// connection's task was 2 KiB where its own needs under 1 KiB (a tenth of what an idle
/// connection costs the server beyond hyper's buffers). Where the first bytes do not tell yet,
/// and over TLS, the connection that serves either reads on until they do.
struct Http {
    either: Builder<TokioExecutor>,
    http1: http1::Builder,
    http2: http2::Builder<TokioExecutor>,
}

impl Http {
    fn new(config: &ServerConfig) -> Self {
        let mut either = Builder::new(TokioExecutor::new());
        http1_options!(either.http1(), config);
        http2_options!(either.http2(), config);
        let mut http1 = http1::Builder::new();
        http1_options!(http1, config);
        let mut http2 = http2::Builder::new(TokioExecutor::new());
        http2_options!(http2, config);
        Self {
            either,
            http1,
            http2,
        }
    }
}

/// One accepted connection.
struct Connection {
    stream: TcpStream,
    peer: SocketAddr,
    header_timeout: Duration,
    /// The TLS acceptor, on a server that serves TLS.
    tls: Option<TlsAcceptor>,
}

impl Connection {
    /// Serves the connection in a task of `connections`, watched by `graceful`: the TLS
    /// handshake first where TLS is served (within the header timeout), then HTTP; every
    /// request carries the client's address, and the caller its verified certificate names.
    fn spawn(
        self,
        http: &Arc<Http>,
        routes: &Router,
        graceful: &GracefulShutdown,
        connections: &mut JoinSet<()>,
    ) {
        let Connection {
            stream,
            peer,
            header_timeout,
            tls,
        } = self;
        let _ = stream.set_nodelay(true);
        let http = http.clone();
        let routes = routes.clone();
        let watcher = graceful.watcher();
        while connections.try_join_next().is_some() {}
        // Two tasks of their own types, so that a plain connection's task is no larger than
        // what it serves (a TLS connection's state is several KiB more).
        let Some(tls) = tls else {
            let served = Served {
                peer,
                certified: None,
                header_timeout,
            };
            connections
                .spawn(async move { served.serve_plain(stream, &http, routes, watcher).await });
            return;
        };
        connections.spawn(async move {
            match tokio::time::timeout(header_timeout, tls.accept(stream)).await {
                Ok(Ok(stream)) => {
                    let certified = stream
                        .get_ref()
                        .1
                        .peer_certificates()
                        .and_then(<[_]>::first)
                        .and_then(client_caller);
                    let served = Served {
                        peer,
                        certified,
                        header_timeout,
                    };
                    served.serve(stream, &http.either, routes, watcher).await;
                }
                Ok(Err(e)) => tracing::debug!(error = %e, %peer, "TLS handshake failed"),
                Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
            }
        });
    }
}

/// What every request of one connection carries.
struct Served {
    peer: SocketAddr,
    /// The caller named by the client's verified certificate.
    certified: Option<Caller>,
    header_timeout: Duration,
}

impl Served {
    /// Serves a plain connection in the protocol its first bytes name (see [`Http`]), until
    /// it ends or the drain closes it. The header timeout runs from the accept.
    async fn serve_plain(self, stream: TcpStream, http: &Http, routes: Router, watcher: Watcher) {
        let peer = self.peer;
        let deadline = tokio::time::Instant::now() + self.header_timeout;
        let mut head = [0u8; PREFACE_LEN];
        let peeked = match tokio::time::timeout_at(deadline, stream.peek(&mut head)).await {
            Ok(Ok(0)) => return,
            Ok(Ok(n)) => n,
            Ok(Err(e)) => {
                return tracing::debug!(error = %e, %peer, "reading the connection failed");
            }
            Err(_) => return tracing::debug!(%peer, "no request within the header timeout"),
        };
        let io = TokioIo::new(stream);
        let ended = match protocol_of(&head[..peeked]) {
            Protocol::Http1 => {
                let service = TowerToHyperService::new(self.service(routes));
                watcher
                    .watch(http.http1.serve_connection(io, service))
                    .await
            }
            // Rare enough to be boxed, so that an HTTP/1.1 connection's task holds no room
            // for them.
            Protocol::Http2 => {
                let service = TowerToHyperService::new(self.service(routes));
                Box::pin(watcher.watch(http.http2.serve_connection(io, service))).await
            }
            Protocol::Undecided => {
                // What is left of the header timeout is left to tell the protocol.
                let served = Served {
                    header_timeout: deadline.saturating_duration_since(tokio::time::Instant::now()),
                    ..self
                };
                let stream = io.into_inner();
                return Box::pin(served.serve(stream, &http.either, routes, watcher)).await;
            }
        };
        if let Err(e) = ended {
            tracing::debug!(error = %e, %peer, "connection ended with an error");
        }
    }

    /// `routes` with what every request of this connection carries: the client's address,
    /// and the caller its certificate names.
    fn service(
        self,
        routes: Router,
    ) -> tower::util::MapRequest<
        Router,
        impl FnMut(Request<hyper::body::Incoming>) -> Request<hyper::body::Incoming> + Clone,
    > {
        let Served {
            peer, certified, ..
        } = self;
        routes.map_request(move |mut request: Request<hyper::body::Incoming>| {
            request.extensions_mut().insert(ClientAddr(peer));
            if let Some(caller) = &certified {
                request
                    .extensions_mut()
                    .insert(ClientCertificate(caller.clone()));
            }
            request
        })
    }

    /// Serves HTTP on `stream` until the connection ends or the drain closes it.
    async fn serve<S>(
        self,
        stream: S,
        http: &Builder<TokioExecutor>,
        routes: Router,
        watcher: Watcher,
    ) where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let (peer, header_timeout) = (self.peer, self.header_timeout);
        let service = self.service(routes);
        // The header timeout runs from the accept, not only once hyper reads a head.
        let stream = UntilPreface::new(stream, header_timeout);
        let connection =
            http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        if let Err(e) = watcher.watch(connection.into_owned()).await {
            tracing::debug!(error = %e, %peer, "connection ended with an error");
        }
    }
}

/// The shutdown: new tasks refused, open streams ended, in-flight requests given the drain
/// timeout, then what still runs aborted.
async fn drain(server: &ServerState, graceful: GracefulShutdown) {
    tracing::info!("shutting down: refusing new tasks, closing streams, draining requests");
    for agent in &server.agents {
        agent.handler.begin_shutdown();
    }
    server.closing.send_replace(true);
    let drain = Duration::from_secs(server.config.drain_timeout_secs);
    tokio::select! {
        () = graceful.shutdown() => tracing::info!("drained"),
        () = tokio::time::sleep(drain) => tracing::warn!("drain timeout reached; aborting what still runs"),
    }
    server.manager.abort_running();
}
