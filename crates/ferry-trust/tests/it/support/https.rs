//! A hand-written HTTPS/1.1 server on 127.0.0.1: a test CA made with rcgen, a leaf
//! certificate for `localhost`, `card.test`, `127.0.0.1` and `::1`, one connection per
//! request (`connection: close`), and a fixed table of replies by path.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A test CA and a server certificate it issued.
pub(crate) struct TestPki {
    /// The CA certificate (DER), for the client's trusted roots.
    pub ca_der: Vec<u8>,
    config: Arc<ServerConfig>,
}

impl TestPki {
    /// A fresh CA and leaf certificate.
    pub(crate) fn new() -> TestPki {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
        let ca_key = KeyPair::generate().expect("ca key");
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("ca params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca_cert = ca_params.self_signed(&ca_key).expect("ca cert");
        let issuer = Issuer::new(ca_params, ca_key);
        let leaf_key = KeyPair::generate().expect("leaf key");
        let names = ["localhost", "card.test", "127.0.0.1", "::1"].map(String::from);
        let leaf = CertificateParams::new(names.to_vec())
            .expect("leaf params")
            .signed_by(&leaf_key, &issuer)
            .expect("leaf cert");
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
        let provider = Arc::new(tokio_rustls::rustls::crypto::aws_lc_rs::default_provider());
        let config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_single_cert(vec![CertificateDer::from(leaf.der().to_vec())], key)
            .expect("server config");
        TestPki {
            ca_der: ca_cert.der().to_vec(),
            config: Arc::new(config),
        }
    }
}

/// What the server answers on a path.
#[derive(Clone)]
pub(crate) enum Reply {
    /// 200 with this content type and body, and a `content-length`.
    Body(&'static str, Vec<u8>),
    /// 200 with this content type and body, without `content-length` (the body ends when
    /// the connection closes).
    Unsized(&'static str, Vec<u8>),
    /// 302 to this location.
    Redirect(String),
    /// Read the request, then never answer.
    Stall,
}

impl Reply {
    /// 200 `application/json`.
    pub(crate) fn json(body: impl Into<Vec<u8>>) -> Reply {
        Reply::Body("application/json", body.into())
    }
}

/// A running server.
pub(crate) struct TestServer {
    /// Where it listens (127.0.0.1).
    pub addr: SocketAddr,
    /// The CA that issued its certificate (DER).
    pub ca_der: Vec<u8>,
    routes: Arc<Mutex<HashMap<String, Reply>>>,
    hits: Arc<Mutex<HashMap<String, usize>>>,
}

impl TestServer {
    /// Starts a server with no routes (every path answers 404 until [`TestServer::route`]).
    pub(crate) async fn start() -> TestServer {
        let pki = TestPki::new();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let routes: Arc<Mutex<HashMap<String, Reply>>> = Arc::default();
        let hits: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let acceptor = TlsAcceptor::from(pki.config.clone());
        let (r, h) = (routes.clone(), hits.clone());
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let (acceptor, routes, hits) = (acceptor.clone(), r.clone(), h.clone());
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let mut head = Vec::new();
                    let mut buf = [0u8; 2048];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16384 {
                        match tls.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let text = String::from_utf8_lossy(&head);
                    let path = text.split(' ').nth(1).unwrap_or("/").to_owned();
                    *hits.lock().expect("hits").entry(path.clone()).or_default() += 1;
                    let reply = routes.lock().expect("routes").get(&path).cloned();
                    let (head, body) = match reply {
                        None => (
                            response_head("404 Not Found", "text/plain", Some(0)),
                            vec![],
                        ),
                        Some(Reply::Body(ct, body)) => {
                            (response_head("200 OK", ct, Some(body.len())), body)
                        }
                        Some(Reply::Unsized(ct, body)) => (response_head("200 OK", ct, None), body),
                        Some(Reply::Redirect(location)) => (
                            format!(
                                "HTTP/1.1 302 Found\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                            ),
                            vec![],
                        ),
                        Some(Reply::Stall) => {
                            std::future::pending::<()>().await;
                            return;
                        }
                    };
                    if tls.write_all(head.as_bytes()).await.is_err() {
                        return;
                    }
                    // Large bodies may be cut off by the client: ignore write errors.
                    let _ = tls.write_all(&body).await;
                    let _ = tls.shutdown().await;
                });
            }
        });
        TestServer {
            addr,
            ca_der: pki.ca_der,
            routes,
            hits,
        }
    }

    /// Answers `path` with `reply`.
    pub(crate) fn route(&self, path: &str, reply: Reply) -> &TestServer {
        self.routes
            .lock()
            .expect("routes")
            .insert(path.to_owned(), reply);
        self
    }

    /// `https://{host}:{port}{path}`.
    pub(crate) fn url(&self, host: &str, path: &str) -> String {
        format!("https://{host}:{}{path}", self.addr.port())
    }

    /// How many requests `path` received.
    pub(crate) fn hits(&self, path: &str) -> usize {
        self.hits
            .lock()
            .expect("hits")
            .get(path)
            .copied()
            .unwrap_or(0)
    }
}

fn response_head(status: &str, content_type: &str, length: Option<usize>) -> String {
    let length = length
        .map(|n| format!("content-length: {n}\r\n"))
        .unwrap_or_default();
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\n{length}connection: close\r\n\r\n"
    )
}
