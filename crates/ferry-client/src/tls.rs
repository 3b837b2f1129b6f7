//! TLS beyond the platform's roots, on every binding: a private CA to trust (an agent whose
//! certificate a company CA issued) and a client certificate to present (mutual TLS).

use crate::error::ClientError;
use ferry_net::SafeClientBuilder;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::sync::Arc;

/// A private CA and a client certificate, both optional (default: neither).
#[derive(Clone, Default)]
pub struct ClientTls {
    ca: Option<Ca>,
    identity: Option<Identity>,
}

/// A CA bundle as given (PEM), for gRPC, and its certificates (DER), for HTTP.
#[derive(Clone)]
struct Ca {
    pem: Arc<[u8]>,
    der: Vec<Vec<u8>>,
}

/// A client certificate chain and its key (PEM).
#[derive(Clone)]
struct Identity {
    cert: Arc<[u8]>,
    key: Arc<[u8]>,
}

impl std::fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientTls")
            .field("ca_certificates", &self.ca.as_ref().map(|ca| ca.der.len()))
            .field("client_certificate", &self.identity.is_some())
            .finish()
    }
}

impl ClientTls {
    /// Also trusts the certificates of the PEM bundle `pem` (at least one).
    pub fn with_ca_pem(mut self, pem: &[u8]) -> Result<Self, ClientError> {
        let der = CertificateDer::pem_slice_iter(pem)
            .map(|c| c.map(|c| c.to_vec()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(format!("the CA file is not PEM certificates: {e}")))?;
        if der.is_empty() {
            return Err(bad("the CA file holds no certificate".into()));
        }
        self.ca = Some(Ca {
            pem: pem.into(),
            der,
        });
        Ok(self)
    }

    /// Presents the client certificate chain `cert_pem` with its key `key_pem` (mutual TLS).
    pub fn with_identity_pem(
        mut self,
        cert_pem: &[u8],
        key_pem: &[u8],
    ) -> Result<Self, ClientError> {
        let certs = CertificateDer::pem_slice_iter(cert_pem).count();
        if certs == 0 {
            return Err(bad(
                "the client certificate file holds no certificate".into()
            ));
        }
        PrivateKeyDer::from_pem_slice(key_pem)
            .map_err(|e| bad(format!("the client key file holds no private key: {e}")))?;
        self.identity = Some(Identity {
            cert: cert_pem.into(),
            key: key_pem.into(),
        });
        Ok(self)
    }

    /// The HTTP client's builder with this material.
    pub(crate) fn apply(&self, mut builder: SafeClientBuilder) -> SafeClientBuilder {
        if let Some(ca) = &self.ca {
            for cert in &ca.der {
                builder = builder.add_root_certificate(cert.clone());
            }
        }
        if let Some(identity) = &self.identity {
            let mut pem = identity.cert.to_vec();
            pem.push(b'\n');
            pem.extend_from_slice(&identity.key);
            builder = builder.identity_pem(pem);
        }
        builder
    }

    /// tonic's TLS settings with this material, besides the web's roots.
    #[cfg(feature = "grpc")]
    pub(crate) fn tonic(&self) -> tonic::transport::ClientTlsConfig {
        use tonic::transport::{Certificate, ClientTlsConfig};
        let mut config = ClientTlsConfig::new().with_webpki_roots();
        if let Some(ca) = &self.ca {
            config = config.ca_certificate(Certificate::from_pem(&ca.pem));
        }
        if let Some(identity) = &self.identity {
            config = config.identity(tonic::transport::Identity::from_pem(
                &identity.cert,
                &identity.key,
            ));
        }
        config
    }
}

fn bad(reason: String) -> ClientError {
    ClientError::Tls(reason)
}
