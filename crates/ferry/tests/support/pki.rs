//! Test certificates written to a scratch directory: a CA, a server certificate for
//! 127.0.0.1 and localhost, client certificates of that CA, and a stranger CA with its own.

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use std::path::{Path, PathBuf};

/// A certificate and its key, as PEM files.
pub(crate) struct Pair {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// A CA that issues certificates into `dir`.
pub(crate) struct Ca {
    issuer: Issuer<'static, KeyPair>,
    /// The CA's certificate (PEM file).
    pub cert: PathBuf,
    /// The same certificate, DER.
    pub der: Vec<u8>,
    dir: PathBuf,
}

impl Ca {
    /// A fresh CA named `name`, its certificate in `dir/name.pem`.
    pub(crate) fn new(dir: &Path, name: &str) -> Ca {
        let key = KeyPair::generate().expect("a CA key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let cert = params.self_signed(&key).expect("a CA certificate");
        let path = dir.join(format!("{name}.pem"));
        std::fs::write(&path, cert.pem()).expect("write the CA");
        Ca {
            issuer: Issuer::new(params, key),
            cert: path,
            der: cert.der().to_vec(),
            dir: dir.to_owned(),
        }
    }

    /// A certificate for 127.0.0.1, ::1 and localhost, as `file`.pem / `file`.key.
    pub(crate) fn server(&self, file: &str) -> Pair {
        let names = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
        self.issue(file, CertificateParams::new(names).expect("params"))
    }

    /// A client certificate whose subject's common name is `common_name`.
    pub(crate) fn client(&self, file: &str, common_name: &str) -> Pair {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        self.issue(file, params)
    }

    fn issue(&self, file: &str, params: CertificateParams) -> Pair {
        let key = KeyPair::generate().expect("a key");
        let cert = params.signed_by(&key, &self.issuer).expect("a certificate");
        let pair = Pair {
            cert: self.dir.join(format!("{file}.pem")),
            key: self.dir.join(format!("{file}.key")),
        };
        std::fs::write(&pair.cert, cert.pem()).expect("write the certificate");
        std::fs::write(&pair.key, key.serialize_pem()).expect("write the key");
        pair
    }
}
