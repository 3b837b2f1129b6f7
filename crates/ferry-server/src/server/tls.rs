//! TLS served by ferry (`[tls]`): the rustls configuration of the certificate files, read
//! again when they change (a renewed certificate is served without a restart; a broken
//! renewal keeps the one in use), and the caller a verified client certificate names.

use crate::config::{ClientAuth, TlsConfig};
use crate::edge::front_door::Caller;
use crate::error::ServerError;
use rustls::server::WebPkiClientVerifier;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};
use tokio_rustls::TlsAcceptor;

/// The TLS setup in use and the files it came from.
pub(crate) struct Tls {
    files: TlsConfig,
    current: RwLock<Loaded>,
}

/// A configuration and the modification times of the files it was read from.
struct Loaded {
    acceptor: TlsAcceptor,
    stamps: Vec<Option<SystemTime>>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("files", &self.files)
            .finish_non_exhaustive()
    }
}

impl Tls {
    /// Reads the files of `files` (a mistake in them stops the server from starting).
    pub(crate) fn load(files: &TlsConfig) -> Result<Arc<Tls>, ServerError> {
        let loaded = load(files).map_err(|problem| ServerError::Setting {
            setting: "tls",
            problem,
        })?;
        Ok(Arc::new(Tls {
            files: files.clone(),
            current: RwLock::new(loaded),
        }))
    }

    /// The acceptor for the next connection.
    pub(crate) fn acceptor(&self) -> TlsAcceptor {
        self.current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .acceptor
            .clone()
    }

    /// Looks at the files every `reload_secs` for as long as the server runs, and reads them
    /// again when one changed.
    pub(crate) fn spawn_reloader(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let tls = self.clone();
        let every = Duration::from_secs(self.files.reload_secs.max(1));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.tick().await;
            loop {
                tick.tick().await;
                tls.reload_if_changed();
            }
        })
    }

    /// Reads the files again if their modification times changed; keeps what is in use if
    /// they cannot be read (a renewal half written, say) and tries again next time.
    fn reload_if_changed(&self) {
        let stamps = stamps(&self.files);
        let unchanged = self
            .current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .stamps
            == stamps;
        if unchanged {
            return;
        }
        match load(&self.files) {
            Ok(loaded) => {
                *self
                    .current
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = loaded;
                tracing::info!(cert = %self.files.cert.display(), "reloaded the TLS certificate");
            }
            Err(problem) => {
                tracing::warn!(%problem, "the changed TLS files cannot be used; keeping the certificate in use");
            }
        }
    }
}

/// The modification times of the files (`None` for one that cannot be read).
fn stamps(files: &TlsConfig) -> Vec<Option<SystemTime>> {
    let mut paths = vec![&files.cert, &files.key];
    paths.extend(&files.client_ca);
    paths
        .into_iter()
        .map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        .collect()
}

/// The rustls configuration of `files`: the certificate and key, ALPN `h2` then
/// `http/1.1`, and the client verifier of the client CA.
fn load(files: &TlsConfig) -> Result<Loaded, String> {
    let stamps = stamps(files);
    let chain = certificates(&files.cert)?;
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| format!("key {}: {e}", files.key.display()))?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let builder = match &files.client_ca {
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in certificates(ca)? {
                roots
                    .add(cert)
                    .map_err(|e| format!("client_ca {}: {e}", ca.display()))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let verifier = match files.client_auth {
                ClientAuth::Required => verifier,
                ClientAuth::Optional => verifier.allow_unauthenticated(),
            };
            let verifier = verifier
                .build()
                .map_err(|e| format!("client_ca {}: {e}", ca.display()))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(chain, key)
        .map_err(|e| format!("cert {}: {e}", files.cert.display()))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Loaded {
        acceptor: TlsAcceptor::from(Arc::new(config)),
        stamps,
    })
}

/// The certificates of a PEM file (at least one).
fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let shown = path.display();
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("{shown}: {e}"))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{shown}: {e}"))?;
    if certs.is_empty() {
        return Err(format!("{shown} holds no certificate"));
    }
    Ok(certs)
}

/// The caller a verified client certificate names: `cert:` and its subject's common name,
/// else its first DNS or URI subject alternative name.
pub(crate) fn client_caller(cert: &CertificateDer<'_>) -> Option<Caller> {
    use x509_parser::extensions::GeneralName;
    let (_, parsed) = x509_parser::parse_x509_certificate(cert.as_ref()).ok()?;
    let common_name = parsed
        .subject()
        .iter_common_name()
        .find_map(|cn| cn.as_str().ok().map(str::to_owned));
    let alternative = || {
        let names = parsed.subject_alternative_name().ok()??;
        names
            .value
            .general_names
            .iter()
            .find_map(|name| match name {
                GeneralName::DNSName(n) | GeneralName::URI(n) => Some((*n).to_owned()),
                _ => None,
            })
    };
    let name = common_name.filter(|n| !n.is_empty()).or_else(alternative)?;
    Some(Caller(format!("cert:{name}").into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{CertificateParams, DnType, KeyPair, SanType};

    fn certificate(common_name: Option<&str>, sans: Vec<SanType>) -> CertificateDer<'static> {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params.distinguished_name = rcgen::DistinguishedName::new();
        if let Some(cn) = common_name {
            params.distinguished_name.push(DnType::CommonName, cn);
        }
        params.subject_alt_names = sans;
        let key = KeyPair::generate().expect("key");
        params.self_signed(&key).expect("certificate").der().clone()
    }

    #[test]
    fn the_caller_is_the_common_name_else_the_first_dns_or_uri_name() {
        let dns = || SanType::DnsName("robot.example".try_into().expect("a name"));
        let caller = |c: &CertificateDer<'_>| client_caller(c).map(|c| c.0.to_string());
        assert_eq!(
            caller(&certificate(Some("robot-1"), vec![dns()])).as_deref(),
            Some("cert:robot-1")
        );
        assert_eq!(
            caller(&certificate(
                None,
                vec![SanType::IpAddress([10, 0, 0, 1].into()), dns()]
            ))
            .as_deref(),
            Some("cert:robot.example"),
            "an IP address names no caller; the DNS name after it does"
        );
        let uri = SanType::URI("spiffe://example.org/robot".try_into().expect("a URI"));
        assert_eq!(
            caller(&certificate(None, vec![uri])).as_deref(),
            Some("cert:spiffe://example.org/robot")
        );
        assert_eq!(
            caller(&certificate(None, Vec::new())),
            None,
            "no name, no caller"
        );
    }
}
