//! Serving: the accept loop (HTTP/1.1 and HTTP/2 on one port, the header timeout from the
//! accept, the client address on every request), the sweeper of expired tasks, and a
//! shutdown that drains.

use super::preface::UntilPreface;
use super::tls::{Tls, client_caller};
use crate::config::ServerConfig;
use crate::core::manager::TaskManager;
use crate::edge::front_door::{Caller, ClientCertificate};
use crate::edge::request_id::ClientAddr;
use crate::edge::service::ServerState;
use axum::Router;
use axum::extract::Request;
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
    let http = Arc::new(connection_builder(&server.config));
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

/// HTTP/1.1, and HTTP/2 with prior knowledge (h2c: gRPC, or any client that speaks it), told
/// apart by the connection preface.
fn connection_builder(config: &ServerConfig) -> Builder<TokioExecutor> {
    let mut http = Builder::new(TokioExecutor::new());
    // hyper's smallest read buffer, 8 KiB, which is then also the largest request head
    // (request line and headers: Tomcat's and Jetty's default too). A larger limit lets hyper
    // grow every connection's buffer to twice that after its first read, idle or streaming.
    http.http1()
        .timer(TokioTimer::new())
        .max_buf_size(MAX_HEAD_BYTES)
        .header_read_timeout(header_timeout(config));
    // One connection may carry as many calls as the server serves at once: the front door
    // refuses what is over its limits (a stream cap at the in-flight limit would queue calls
    // in the client instead of answering them).
    let per_connection = config
        .max_in_flight
        .saturating_add(config.max_streams)
        .max(1);
    http.http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(u32::try_from(per_connection).unwrap_or(u32::MAX))
        .max_header_list_size(64 * 1024)
        .keep_alive_interval(config.sse_keepalive())
        .keep_alive_timeout(Duration::from_secs(20));
    http
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
        http: &Arc<Builder<TokioExecutor>>,
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
            connections.spawn(async move { served.serve(stream, &http, routes, watcher).await });
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
                    served.serve(stream, &http, routes, watcher).await;
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
        let Served {
            peer,
            certified,
            header_timeout,
        } = self;
        let service = routes.map_request(move |mut request: Request<hyper::body::Incoming>| {
            request.extensions_mut().insert(ClientAddr(peer));
            if let Some(caller) = &certified {
                request
                    .extensions_mut()
                    .insert(ClientCertificate(caller.clone()));
            }
            request
        });
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
