//! The enforcing HTTP proxy: one per conversation, on `127.0.0.1:0`, through which a
//! browser context sends every request.
//!
//! Chromium sends https and WebSocket traffic as `CONNECT host:port` (tunnelled here as
//! opaque bytes) and plain http as absolute-form requests (`GET http://host/…`, forwarded
//! here over a fresh upstream connection). For every request the proxy:
//!
//! 1. checks the host name against the [`Allowlist`];
//! 2. resolves it itself: an IP literal as is, then the static map of
//!    [`ProxyConfig::resolve`] (like curl's `--resolve`), then the system resolver;
//! 3. checks **every** resolved address: cloud metadata addresses are always refused, the
//!    rest must pass the `ferry-net` [`IpPolicy`], so a name with one public and one
//!    private record is refused;
//! 4. dials only an address it checked, so DNS rebinding has no window.
//!
//! A refused request gets `403 Forbidden` with a one-line text body naming the host and the
//! reason, and is recorded in [`ProxyHandle::blocked`], so a caller can report which URL was
//! stopped instead of silently succeeding.
//!
//! With [`ProxyConfig::credentials`] set, a request without the matching
//! `Proxy-Authorization: Basic …` header gets `407` and is not looked at further, so other
//! local processes cannot use the proxy. (Chromium then needs the credentials answered
//! through `Fetch.authRequired`; a launched browser on a private proxy can go without.)
//!
//! Chromium never proxies loopback unless told to: give the context (or the launch flags)
//! the bypass list `<-loopback>`, see [`ProxyHandle::bypass_list`].
//!
//! ```no_run
//! use ferry_browser::proxy::{Proxy, ProxyConfig};
//! use ferry_browser::Allowlist;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let config = ProxyConfig::new(Allowlist::new(["example.com"])?);
//! let proxy = Proxy::start(config).await?;
//! println!("proxy at {}", proxy.server_url());
//! // … browse …
//! for entry in proxy.blocked() {
//!     println!("blocked {}: {}", entry.target, entry.reason);
//! }
//! # Ok(()) }
//! ```

use crate::allowlist::Allowlist;
use bytes::Bytes;
use ferry_net::IpPolicy;
use ferry_net::policy::Refusal;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HOST, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore, watch};
use tokio::task::{JoinHandle, JoinSet};

pub use ferry_net::policy::is_metadata;

/// The response body type of the proxy's service.
type Body = BoxBody<Bytes, hyper::Error>;

/// Why the proxy could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// Binding the listener on `127.0.0.1:0` failed.
    #[error("could not bind the proxy listener: {0}")]
    Bind(#[source] std::io::Error),
}

/// Why a request was refused; see [`Blocked`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BlockReason {
    /// The host name is not on the allowlist.
    NotAllowed,
    /// A resolved address is a cloud metadata service.
    Metadata {
        /// The address.
        ip: IpAddr,
    },
    /// A resolved address is refused by the IP policy.
    Address {
        /// The address.
        ip: IpAddr,
        /// The policy's reason.
        refusal: Refusal,
    },
}

impl fmt::Display for BlockReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlockReason::NotAllowed => f.write_str("host is not on the allowlist"),
            BlockReason::Metadata { ip } => write!(f, "{ip} is a cloud metadata address"),
            BlockReason::Address { ip, refusal } => write!(f, "{ip} is a {refusal}"),
        }
    }
}

/// One refused request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Blocked {
    /// What was asked for: the URL of a plain http request, `host:port` of a CONNECT.
    pub target: String,
    /// The host name (lower case, IPv6 without brackets).
    pub host: String,
    /// The port.
    pub port: u16,
    /// Why it was refused.
    pub reason: BlockReason,
}

/// Settings of one [`Proxy`].
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    allowlist: Allowlist,
    policy: IpPolicy,
    resolve: HashMap<String, Vec<IpAddr>>,
    connect_timeout: Duration,
    max_connections: usize,
    /// The exact `Proxy-Authorization` value required, if any.
    auth: Option<String>,
    /// Who may connect at all (see [`ProxyConfig::only_clients`]).
    clients: Option<Clients>,
}

/// A [`ClientCheck`] that prints as its name only.
#[derive(Clone)]
struct Clients(ClientCheck);

impl fmt::Debug for Clients {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ClientCheck")
    }
}

/// Decides whether a connection from `peer` (to the proxy's own `local` address) may use
/// the proxy.
pub type ClientCheck = Arc<dyn Fn(SocketAddr, SocketAddr) -> bool + Send + Sync>;

impl ProxyConfig {
    /// A proxy enforcing `allowlist` with the public-only IP policy.
    pub fn new(allowlist: Allowlist) -> ProxyConfig {
        ProxyConfig {
            allowlist,
            policy: IpPolicy::public_only(),
            resolve: HashMap::new(),
            connect_timeout: Duration::from_secs(10),
            max_connections: 256,
            auth: None,
            clients: None,
        }
    }

    /// Replaces the IP policy. Metadata addresses stay refused whatever it allows.
    pub fn policy(mut self, policy: IpPolicy) -> ProxyConfig {
        self.policy = policy;
        self
    }

    /// Resolves `name` to `addrs` without asking DNS (like curl's `--resolve`). The
    /// addresses are still checked against the policy.
    pub fn resolve(mut self, name: &str, addrs: Vec<IpAddr>) -> ProxyConfig {
        self.resolve.insert(normalize_host(name), addrs);
        self
    }

    /// How long dialing one upstream address may take (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> ProxyConfig {
        self.connect_timeout = timeout;
        self
    }

    /// Requires `Proxy-Authorization: Basic base64(user:password)` on every request;
    /// anything else gets `407 Proxy Authentication Required`. Use a random password per
    /// proxy so other local processes cannot borrow it.
    pub fn credentials(mut self, user: &str, password: &str) -> ProxyConfig {
        use base64::Engine as _;
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        self.auth = Some(format!("Basic {token}"));
        self
    }

    /// Serves only connections `check(peer, local)` accepts; others are closed before a byte
    /// is read. With [`crate::peer::connection_owned_by_group`] this keeps every process but
    /// the session's browser off its proxy.
    pub fn only_clients(mut self, check: ClientCheck) -> ProxyConfig {
        self.clients = Some(Clients(check));
        self
    }

    /// How many client connections are served at once (default 256); more wait.
    pub fn max_connections(mut self, max: usize) -> ProxyConfig {
        self.max_connections = max.max(1);
        self
    }
}

/// Starts proxies; see [`Proxy::start`].
#[derive(Debug)]
pub struct Proxy;

impl Proxy {
    /// Binds `127.0.0.1:0` and serves until the returned handle is dropped.
    pub async fn start(config: ProxyConfig) -> Result<ProxyHandle, ProxyError> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .map_err(ProxyError::Bind)?;
        let addr = listener.local_addr().map_err(ProxyError::Bind)?;
        let blocked = Arc::new(Mutex::new(BlockedLog::default()));
        let refused = Arc::new(Notify::new());
        let (stop, stopped) = watch::channel(());
        let shared = Arc::new(Shared {
            config,
            blocked: blocked.clone(),
            refused: refused.clone(),
            stopped,
        });
        let task = tokio::spawn(accept_loop(listener, shared));
        Ok(ProxyHandle {
            addr,
            blocked,
            refused,
            task,
            _stop: stop,
        })
    }
}

/// A running proxy. Dropping it stops the listener and every connection it serves.
#[derive(Debug)]
pub struct ProxyHandle {
    addr: SocketAddr,
    blocked: Arc<Mutex<BlockedLog>>,
    /// Woken at each refusal.
    refused: Arc<Notify>,
    task: JoinHandle<()>,
    /// Dropped with the handle: every tunnel and upstream connection watches it.
    _stop: watch::Sender<()>,
}

impl ProxyHandle {
    /// The listening address (`127.0.0.1:PORT`).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The value for `--proxy-server` or `proxyServer`: `http://127.0.0.1:PORT`.
    pub fn server_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bypass list to pair with [`ProxyHandle::server_url`]: `<-loopback>`, which
    /// removes Chromium's implicit loopback bypass so nothing goes around the proxy.
    pub fn bypass_list(&self) -> &'static str {
        "<-loopback>"
    }

    /// Stops the proxy and waits until its listener is closed (dropping the handle stops it
    /// too, without waiting).
    pub async fn stop(mut self) {
        self.task.abort();
        let task = std::mem::replace(&mut self.task, tokio::spawn(async {}));
        let _ = task.await;
    }

    fn log(&self) -> std::sync::MutexGuard<'_, BlockedLog> {
        self.blocked.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The refusals kept, oldest first: every one, up to the last [`MAX_BLOCKED_KEPT`]
    /// (a page that loops over refused URLs cannot grow this without bound).
    pub fn blocked(&self) -> Vec<Blocked> {
        self.log().kept.iter().cloned().collect()
    }

    /// How many requests were refused so far, counting those no longer kept: a mark for
    /// [`ProxyHandle::blocked_since`].
    pub fn refusals(&self) -> usize {
        self.log().total
    }

    /// The refusals since `mark` (a [`ProxyHandle::refusals`] value) that are still kept,
    /// oldest first; `refusals() - mark` says how many there were in all.
    pub fn blocked_since(&self, mark: usize) -> Vec<Blocked> {
        let log = self.log();
        let first_kept = log.total - log.kept.len();
        log.kept
            .iter()
            .skip(mark.saturating_sub(first_kept))
            .cloned()
            .collect()
    }

    /// Returns the refusals once `seen` holds for them (checked again at each new refusal):
    /// how a caller waits for the browser to have tried something instead of sleeping.
    pub async fn blocked_until(&self, seen: impl Fn(&[Blocked]) -> bool) -> Vec<Blocked> {
        loop {
            let next = self.refused.notified();
            tokio::pin!(next);
            // Registered before the check, so a refusal between the two is not missed.
            next.as_mut().enable();
            let blocked = self.blocked();
            if seen(&blocked) {
                return blocked;
            }
            next.await;
        }
    }
}

impl Drop for ProxyHandle {
    fn drop(&mut self) {
        // The accept task owns the client connections (a JoinSet): aborting it ends them.
        // Tunnels and upstream connections end when `_stop` is dropped right after.
        self.task.abort();
    }
}

/// Refusals a proxy keeps; older ones are dropped (and still counted).
pub const MAX_BLOCKED_KEPT: usize = 512;

/// The last [`MAX_BLOCKED_KEPT`] refusals and the count of all.
#[derive(Debug, Default)]
struct BlockedLog {
    kept: std::collections::VecDeque<Blocked>,
    total: usize,
}

impl BlockedLog {
    fn push(&mut self, entry: Blocked) {
        if self.kept.len() == MAX_BLOCKED_KEPT {
            self.kept.pop_front();
        }
        self.kept.push_back(entry);
        self.total += 1;
    }
}

struct Shared {
    config: ProxyConfig,
    blocked: Arc<Mutex<BlockedLog>>,
    refused: Arc<Notify>,
    /// Closed (its sender dropped) when the handle is dropped.
    stopped: watch::Receiver<()>,
}

impl Shared {
    /// Runs `work` until it finishes or the proxy is dropped, detached from the caller.
    fn spawn_until_stopped<F>(&self, work: F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let mut stopped = self.stopped.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = work => {}
                _ = stopped.changed() => {}
            }
        });
    }

    fn record(&self, entry: Blocked) {
        tracing::info!(target = %entry.target, reason = %entry.reason, "proxy refused request");
        self.blocked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(entry);
        self.refused.notify_waiters();
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let permits = Arc::new(Semaphore::new(shared.config.max_connections));
    let mut connections = JoinSet::new();
    loop {
        let Ok(permit) = permits.clone().acquire_owned().await else {
            return;
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => (stream, peer),
                Err(e) => {
                    tracing::warn!(error = %e, "proxy accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            // Reap finished connections so the set does not grow without bound.
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let (stream, peer) = stream;
        let shared = shared.clone();
        connections.spawn(async move {
            let _permit = permit;
            if let Some(Clients(check)) = &shared.config.clients {
                let local = stream.local_addr();
                let allowed = local.is_ok_and(|local| check(peer, local));
                if !allowed {
                    tracing::warn!(%peer, "proxy connection refused: not the session's browser");
                    return;
                }
            }
            let service = hyper::service::service_fn(move |req| {
                let shared = shared.clone();
                async move { Ok::<_, std::convert::Infallible>(handle(&shared, req).await) }
            });
            let served = hyper::server::conn::http1::Builder::new()
                .preserve_header_case(true)
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades()
                .await;
            if let Err(e) = served {
                tracing::debug!(error = %e, "proxy connection ended with an error");
            }
        });
    }
}

async fn handle(shared: &Shared, req: Request<Incoming>) -> Response<Body> {
    if let Some(expected) = &shared.config.auth {
        let given = req
            .headers()
            .get(hyper::header::PROXY_AUTHORIZATION)
            .map(HeaderValue::as_bytes)
            .unwrap_or_default();
        if !same_secret(given, expected.as_bytes()) {
            let mut response = text(
                StatusCode::PROXY_AUTHENTICATION_REQUIRED,
                "ferry proxy: credentials required\n",
            );
            response.headers_mut().insert(
                hyper::header::PROXY_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"ferry\""),
            );
            return response;
        }
    }
    if req.method() == Method::CONNECT {
        connect(shared, req).await
    } else {
        forward(shared, req).await
    }
}

/// A CONNECT: check and dial `host:port`, answer 200, then copy bytes both ways.
async fn connect(shared: &Shared, req: Request<Incoming>) -> Response<Body> {
    let Some(authority) = req.uri().authority() else {
        return text(StatusCode::BAD_REQUEST, "CONNECT needs host:port\n");
    };
    let Some(port) = authority.port_u16() else {
        return text(StatusCode::BAD_REQUEST, "CONNECT needs host:port\n");
    };
    let host = normalize_host(authority.host());
    let target = format!("{}:{port}", authority.host());
    let upstream = match open(shared, &target, &host, port).await {
        Ok(stream) => stream,
        Err(response) => return response,
    };
    shared.spawn_until_stopped(async move {
        match hyper::upgrade::on(req).await {
            Ok(upgraded) => {
                let mut client = TokioIo::new(upgraded);
                let mut upstream = upstream;
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            }
            Err(e) => tracing::debug!(error = %e, "CONNECT upgrade failed"),
        }
    });
    Response::new(empty())
}

/// An absolute-form request (`GET http://host/…`): check and dial, send it on in origin
/// form, stream the answer back.
async fn forward(shared: &Shared, mut req: Request<Incoming>) -> Response<Body> {
    let uri = req.uri().clone();
    if uri.scheme_str() != Some("http") {
        return text(
            StatusCode::BAD_REQUEST,
            "this is a proxy: send absolute-form http:// requests or CONNECT\n",
        );
    }
    let Some(authority) = uri.authority() else {
        return text(StatusCode::BAD_REQUEST, "request URL has no host\n");
    };
    let port = authority.port_u16().unwrap_or(80);
    let host = normalize_host(authority.host());
    // The authority without any `user:password@`, for the Host header and the log.
    let host_port = match authority.port() {
        Some(p) => format!("{}:{p}", authority.host()),
        None => authority.host().to_owned(),
    };
    let path = uri.path_and_query().map(|pq| pq.as_str()).unwrap_or("/");
    let target = format!("http://{host_port}{path}");
    let upstream = match open(shared, &target, &host, port).await {
        Ok(stream) => stream,
        Err(response) => return response,
    };

    *req.uri_mut() = path
        .parse()
        .unwrap_or_else(|_| hyper::Uri::from_static("/"));
    let headers = req.headers_mut();
    headers.remove("proxy-connection");
    headers.remove(hyper::header::PROXY_AUTHORIZATION);
    // A proxy replaces Host with the checked target's authority (RFC 9112, 3.2.2), so the
    // upstream sees the name that was allowed.
    match HeaderValue::from_str(&host_port) {
        Ok(value) => {
            headers.insert(HOST, value);
        }
        Err(_) => return text(StatusCode::BAD_REQUEST, "bad host in request URL\n"),
    }

    let (mut sender, connection) =
        match hyper::client::conn::http1::handshake(TokioIo::new(upstream)).await {
            Ok(pair) => pair,
            Err(e) => return bad_gateway(&host, port, &e.to_string()),
        };
    shared.spawn_until_stopped(async move {
        if let Err(e) = connection.await {
            tracing::debug!(error = %e, "upstream connection ended with an error");
        }
    });
    match sender.send_request(req).await {
        Ok(response) => response.map(|body| body.boxed()),
        Err(e) => bad_gateway(&host, port, &e.to_string()),
    }
}

/// Checks `host` and every address it resolves to, records and answers a refusal, and
/// otherwise dials one of the checked addresses.
async fn open(
    shared: &Shared,
    target: &str,
    host: &str,
    port: u16,
) -> Result<TcpStream, Response<Body>> {
    let addrs = match decide(&shared.config, host, port).await {
        Ok(addrs) => addrs,
        Err(Decision::Blocked(reason)) => {
            let body = format!("ferry proxy: {host}:{port} blocked: {reason}\n");
            shared.record(Blocked {
                target: target.to_owned(),
                host: host.to_owned(),
                port,
                reason,
            });
            return Err(text(StatusCode::FORBIDDEN, &body));
        }
        Err(Decision::Unresolvable(why)) => {
            return Err(bad_gateway(host, port, &why));
        }
    };
    let mut last = String::from("no address");
    for addr in addrs {
        match tokio::time::timeout(shared.config.connect_timeout, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => last = format!("{addr}: {e}"),
            Err(_) => last = format!("{addr}: connect timed out"),
        }
    }
    Err(bad_gateway(host, port, &last))
}

/// The outcome of checking a host that may not be dialed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Decision {
    /// Refused by the allowlist or the address policy.
    Blocked(BlockReason),
    /// The name did not resolve (not a policy decision).
    Unresolvable(String),
}

/// The allowlist, resolution and address checks: every returned address may be dialed.
async fn decide(config: &ProxyConfig, host: &str, port: u16) -> Result<Vec<SocketAddr>, Decision> {
    if !config.allowlist.allows(host) {
        return Err(Decision::Blocked(BlockReason::NotAllowed));
    }
    let addrs: Vec<SocketAddr> = if let Ok(ip) = host.parse::<IpAddr>() {
        vec![SocketAddr::new(ip, port)]
    } else if let Some(fixed) = config.resolve.get(host) {
        fixed.iter().map(|ip| SocketAddr::new(*ip, port)).collect()
    } else {
        match tokio::net::lookup_host((host, port)).await {
            Ok(found) => found.collect(),
            Err(e) => return Err(Decision::Unresolvable(e.to_string())),
        }
    };
    if addrs.is_empty() {
        return Err(Decision::Unresolvable("no addresses".to_owned()));
    }
    check_addrs(&config.policy, &addrs)?;
    Ok(addrs)
}

/// Refuses the whole set if any address is metadata or fails the policy.
fn check_addrs(policy: &IpPolicy, addrs: &[SocketAddr]) -> Result<(), Decision> {
    for addr in addrs {
        let ip = addr.ip();
        if is_metadata(ip) {
            return Err(Decision::Blocked(BlockReason::Metadata { ip }));
        }
        if let Err(refusal) = policy.check_socket(*addr) {
            return Err(Decision::Blocked(BlockReason::Address { ip, refusal }));
        }
    }
    Ok(())
}

/// Compares two secrets without stopping at the first differing byte.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// Lower case, without IPv6 brackets and without one trailing dot.
fn normalize_host(host: &str) -> String {
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase()
}

fn empty() -> Body {
    Full::new(Bytes::new())
        .map_err(|never| match never {})
        .boxed()
}

fn text(status: StatusCode, body: &str) -> Response<Body> {
    let mut response = Response::new(
        Full::new(Bytes::from(body.to_owned()))
            .map_err(|never| match never {})
            .boxed(),
    );
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn bad_gateway(host: &str, port: u16, why: &str) -> Response<Body> {
    text(
        StatusCode::BAD_GATEWAY,
        &format!("ferry proxy: {host}:{port} unreachable: {why}\n"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_net::Range;

    fn sock(ip: &str) -> SocketAddr {
        SocketAddr::new(ip.parse().expect("ip"), 80)
    }

    #[test]
    fn metadata_is_refused_even_with_private_allowed() {
        let open = IpPolicy::public_only().allow_private(true);
        for ip in [
            "169.254.169.254",
            "::ffff:169.254.169.254",
            "fd00:ec2::254",
            "168.63.129.16",
            "100.100.100.200",
        ] {
            assert!(
                matches!(
                    check_addrs(&open, &[sock(ip)]),
                    Err(Decision::Blocked(BlockReason::Metadata { .. }))
                ),
                "{ip}"
            );
        }
        assert_eq!(check_addrs(&open, &[sock("169.254.1.1")]), Ok(()));
    }

    #[test]
    fn loopback_and_private_need_allow_private() {
        let public = IpPolicy::public_only();
        assert_eq!(
            check_addrs(&public, &[sock("127.0.0.1")]),
            Err(Decision::Blocked(BlockReason::Address {
                ip: "127.0.0.1".parse().expect("ip"),
                refusal: Refusal::Range(Range::Loopback),
            }))
        );
        assert!(check_addrs(&public, &[sock("::1")]).is_err());
        assert!(check_addrs(&public, &[sock("10.0.0.5")]).is_err());
        assert_eq!(check_addrs(&public, &[sock("93.184.215.14")]), Ok(()));
        let private = public.allow_private(true);
        assert_eq!(check_addrs(&private, &[sock("127.0.0.1")]), Ok(()));
        assert_eq!(check_addrs(&private, &[sock("10.0.0.5")]), Ok(()));
    }

    #[test]
    fn one_bad_address_refuses_the_whole_set() {
        let public = IpPolicy::public_only();
        let mixed = [sock("93.184.215.14"), sock("10.0.0.5")];
        assert!(check_addrs(&public, &mixed).is_err());
    }

    #[tokio::test]
    async fn decide_checks_the_allowlist_then_every_resolved_address() {
        let config = ProxyConfig::new(Allowlist::new(["allowed.test"]).expect("list"))
            .resolve("allowed.test", vec!["127.0.0.1".parse().expect("ip")])
            .resolve(
                "www.allowed.test",
                vec!["169.254.169.254".parse().expect("ip")],
            );
        assert_eq!(
            decide(&config, "blocked.test", 80).await,
            Err(Decision::Blocked(BlockReason::NotAllowed))
        );
        assert!(matches!(
            decide(&config, "allowed.test", 80).await,
            Err(Decision::Blocked(BlockReason::Address { .. }))
        ));
        let config = config.policy(IpPolicy::public_only().allow_private(true));
        assert_eq!(
            decide(&config, "allowed.test", 8080).await,
            Ok(vec![SocketAddr::new(
                "127.0.0.1".parse().expect("ip"),
                8080
            )])
        );
        assert!(matches!(
            decide(&config, "www.allowed.test", 80).await,
            Err(Decision::Blocked(BlockReason::Metadata { .. }))
        ));
        // An empty allowlist leaves the IP policy in charge: IP literals are checked too.
        let any = ProxyConfig::new(Allowlist::any());
        assert!(matches!(
            decide(&any, "127.0.0.1", 80).await,
            Err(Decision::Blocked(BlockReason::Address { .. }))
        ));
        assert!(matches!(
            decide(&any, "::1", 80).await,
            Err(Decision::Blocked(BlockReason::Address { .. }))
        ));
    }
}
