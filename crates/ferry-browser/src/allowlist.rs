//! Which hosts a browser conversation may reach, by name.
//!
//! An [`Allowlist`] holds domains; `example.com` allows itself and every subdomain
//! (`www.example.com`, `a.b.example.com`) but never a name that merely starts with it
//! (`example.com.evil.com`) or ends with it without a dot (`notexample.com`). Matching is
//! case-insensitive and ignores one trailing dot (the DNS root). An empty allowlist allows
//! every name; the enforcing [`proxy`](crate::proxy) then relies on the IP policy alone.
//!
//! ```
//! use ferry_browser::Allowlist;
//!
//! let list = Allowlist::new(["example.com"])?;
//! assert!(list.allows("WWW.Example.com."));
//! assert!(!list.allows("example.com.evil.com"));
//! # Ok::<(), ferry_browser::AllowlistError>(())
//! ```

/// Why a domain could not be put on an [`Allowlist`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AllowlistError {
    /// The entry is empty (or only a dot).
    #[error("empty allowlist entry")]
    Empty,
    /// The entry contains a character that never appears in a host name (a scheme, path,
    /// port, wildcard or whitespace).
    #[error("allowlist entry {entry:?} is not a host name (bad character {bad:?})")]
    BadCharacter {
        /// The entry as given.
        entry: String,
        /// The first offending character.
        bad: char,
    },
}

/// Domains a conversation may reach. `example.com` allows itself and its subdomains, never
/// `example.com.evil.com`; matching ignores case and one trailing dot; an empty list allows
/// every name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowlist {
    domains: Vec<String>,
}

impl Allowlist {
    /// The empty allowlist: every host name passes (the IP policy still applies).
    pub fn any() -> Allowlist {
        Allowlist::default()
    }

    /// An allowlist of `domains`. Each entry is a host name or IP literal; a leading `*.`
    /// is accepted and means the same as the bare domain.
    pub fn new<I, S>(domains: I) -> Result<Allowlist, AllowlistError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut list = Vec::new();
        for entry in domains {
            let entry = entry.as_ref();
            let trimmed = entry.trim();
            let bare = trimmed.strip_prefix("*.").unwrap_or(trimmed);
            let name = normalize(bare);
            if name.is_empty() {
                return Err(AllowlistError::Empty);
            }
            let is_ip = name.parse::<std::net::IpAddr>().is_ok();
            if let Some(bad) = name
                .chars()
                .filter(|_| !is_ip)
                .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')))
            {
                return Err(AllowlistError::BadCharacter {
                    entry: entry.to_owned(),
                    bad,
                });
            }
            if !list.contains(&name) {
                list.push(name);
            }
        }
        Ok(Allowlist { domains: list })
    }

    /// Whether the list is empty (every name allowed).
    pub fn is_empty(&self) -> bool {
        self.domains.is_empty()
    }

    /// The normalized domains (lower case, no trailing dot).
    pub fn domains(&self) -> &[String] {
        &self.domains
    }

    /// Whether `host` (a name or IP literal, IPv6 with or without brackets) may be reached.
    pub fn allows(&self, host: &str) -> bool {
        if self.domains.is_empty() {
            return true;
        }
        let host = normalize(host);
        if host.is_empty() {
            return false;
        }
        self.domains.iter().any(|domain| {
            host == *domain
                || host
                    .strip_suffix(domain.as_str())
                    .is_some_and(|prefix| prefix.ends_with('.') && prefix.len() > 1)
        })
    }
}

/// Lower case, without IPv6 brackets and without one trailing dot.
fn normalize(host: &str) -> String {
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let host = host.strip_suffix('.').unwrap_or(host);
    host.to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(domains: &[&str]) -> Allowlist {
        Allowlist::new(domains).expect("valid allowlist")
    }

    #[test]
    fn a_domain_allows_itself_and_its_subdomains() {
        let l = list(&["example.com"]);
        assert!(l.allows("example.com"));
        assert!(l.allows("www.example.com"));
        assert!(l.allows("a.b.example.com"));
        assert!(!l.allows("notexample.com"));
        assert!(!l.allows("example.com.evil.com"));
        assert!(!l.allows("example.co"));
        assert!(!l.allows("com"));
        assert!(!l.allows(".example.com"));
        assert!(!l.allows(""));
    }

    #[test]
    fn matching_ignores_case_and_one_trailing_dot() {
        let l = list(&["Example.COM."]);
        assert_eq!(l.domains(), ["example.com"]);
        assert!(l.allows("EXAMPLE.com"));
        assert!(l.allows("www.example.com."));
        assert!(!l.allows("example.com.."));
    }

    #[test]
    fn wildcards_ip_literals_and_bad_entries() {
        let l = list(&["*.example.org", "127.0.0.1", "::1"]);
        assert!(l.allows("example.org"));
        assert!(l.allows("x.example.org"));
        assert!(l.allows("127.0.0.1"));
        assert!(!l.allows("127.0.0.2"));
        assert!(!l.allows("[::2]"));
        assert!(Allowlist::new([" "]).is_err());
        assert!(Allowlist::new(["."]).is_err());
        assert!(Allowlist::new(["http://example.com"]).is_err());
        assert!(Allowlist::new(["example.com:443"]).is_err());
        assert!(Allowlist::new(["*"]).is_err());
    }

    #[test]
    fn an_empty_list_allows_every_name() {
        assert!(Allowlist::any().allows("anything.test"));
        assert!(list(&[]).is_empty());
    }
}
