//! A DNS resolver for reqwest that refuses a whole answer if any address is not allowed.
//!
//! Why the *whole* answer: hyper's connector tries the addresses in order, so an answer of
//! `[203.0.113.7, 127.0.0.1]` would reach loopback as soon as the first address fails to
//! connect. Why in the resolver: hyper-util's `HttpConnector` dials exactly the addresses
//! the resolver returns and resolves nothing again, so the address checked is the address
//! dialed, and a DNS-rebinding answer that changes between a check and a connect has no
//! window to slip through.

use crate::NetError;
use crate::policy::IpPolicy;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// Resolves names with the system resolver (or fixed answers) and checks every address
/// against an [`IpPolicy`]. Install it with `reqwest::ClientBuilder::dns_resolver`; the
/// [`crate::SafeClientBuilder`] does so.
#[derive(Debug, Clone)]
pub struct PolicyResolver {
    policy: IpPolicy,
    fixed: Arc<HashMap<String, Vec<IpAddr>>>,
}

impl PolicyResolver {
    /// A resolver that asks the system resolver and checks its answers against `policy`.
    pub fn new(policy: IpPolicy) -> PolicyResolver {
        PolicyResolver {
            policy,
            fixed: Arc::new(HashMap::new()),
        }
    }

    /// Answers `name` (matched case-insensitively) with `addrs` instead of asking DNS. The
    /// fixed answer is checked like any other: it pins a name, it does not exempt it.
    pub fn with_fixed(mut self, name: &str, addrs: Vec<IpAddr>) -> PolicyResolver {
        Arc::make_mut(&mut self.fixed).insert(name.to_ascii_lowercase(), addrs);
        self
    }

    /// Resolves `host` and checks every address; fails on the first refused address, or
    /// when there is none.
    pub async fn lookup(&self, host: &str) -> Result<Vec<SocketAddr>, NetError> {
        let addrs: Vec<SocketAddr> = match self.fixed.get(&host.to_ascii_lowercase()) {
            Some(fixed) => fixed.iter().map(|ip| SocketAddr::new(*ip, 0)).collect(),
            None => tokio::net::lookup_host((host, 0))
                .await
                .map_err(|e| NetError::Resolve {
                    host: host.to_owned(),
                    reason: e.to_string(),
                })?
                .collect(),
        };
        if addrs.is_empty() {
            return Err(NetError::NoAddresses {
                host: host.to_owned(),
            });
        }
        let mut checked = Vec::with_capacity(addrs.len());
        for addr in addrs {
            // Canonicalize so that `::ffff:127.0.0.1` is dialed (and reported) as IPv4.
            let canonical = SocketAddr::new(addr.ip().to_canonical(), addr.port());
            let canonical = match addr {
                SocketAddr::V6(v6) if v6.scope_id() != 0 => addr,
                SocketAddr::V6(_) | SocketAddr::V4(_) => canonical,
            };
            self.policy
                .check_socket(canonical)
                .map_err(|refusal| NetError::BlockedAddress {
                    host: host.to_owned(),
                    addr: canonical.ip(),
                    refusal,
                })?;
            checked.push(canonical);
        }
        Ok(checked)
    }
}

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let this = self.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs = this.lookup(&host).await?;
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Range, Refusal};

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    #[tokio::test]
    async fn one_refused_address_refuses_the_whole_answer() {
        let r = PolicyResolver::new(IpPolicy::public_only())
            .with_fixed("mixed.test", vec![ip("8.8.8.8"), ip("::ffff:127.0.0.1")])
            .with_fixed("public.test", vec![ip("8.8.8.8"), ip("2606:4700::1")])
            .with_fixed("empty.test", vec![]);
        assert_eq!(
            r.lookup("MIXED.test").await,
            Err(NetError::BlockedAddress {
                host: "MIXED.test".into(),
                addr: ip("127.0.0.1"),
                refusal: Refusal::Range(Range::Loopback),
            })
        );
        assert_eq!(
            r.lookup("public.test").await.expect("public").len(),
            2,
            "public answers pass"
        );
        assert_eq!(
            r.lookup("empty.test").await,
            Err(NetError::NoAddresses {
                host: "empty.test".into()
            })
        );
    }

    #[tokio::test]
    async fn localhost_resolves_to_loopback_and_is_refused() {
        let r = PolicyResolver::new(IpPolicy::public_only());
        assert!(matches!(
            r.lookup("localhost").await,
            Err(NetError::BlockedAddress { .. })
        ));
        let open = PolicyResolver::new(IpPolicy::public_only().allow_private(true));
        assert!(open.lookup("localhost").await.is_ok());
    }
}
