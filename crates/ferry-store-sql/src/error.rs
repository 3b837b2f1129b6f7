//! Why a store could not be opened, and how driver errors are put into words.
//!
//! Every message names the store by its *redacted* location: a PostgreSQL URL loses its
//! password (in the user part and in a `password=` parameter) before it goes into an error,
//! and the driver's own reason is scrubbed of it too, so that an error may be logged as is.

use std::time::Duration;

/// Why [`open`](crate::open) (or a store's own `open`) failed. Messages are lower-case and
/// name the store without its password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The URL names no store this crate knows (only the scheme is kept, never the URL).
    #[error(
        "unknown task store url scheme {scheme:?} (expected sqlite:PATH, postgres:// or postgresql://)"
    )]
    UnknownScheme {
        /// What stood before the first `:` (empty when there was no `:`).
        scheme: String,
    },
    /// The URL has a known scheme but cannot be used.
    #[error("invalid task store url {url}: {reason}")]
    InvalidUrl {
        /// The URL, redacted (or only its scheme when it could not be parsed).
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The SQLite database file could not be opened or created.
    #[error("cannot open the sqlite task store {path}: {reason}")]
    Sqlite {
        /// The file.
        path: String,
        /// The driver's reason.
        reason: String,
    },
    /// PostgreSQL could not be reached, or refused the connection (authentication, unknown
    /// database, TLS).
    #[error("cannot connect to the postgresql task store at {url}: {reason}")]
    Connect {
        /// The URL, redacted.
        url: String,
        /// The driver's reason.
        reason: String,
    },
    /// The database was reached but its schema could not be brought up to date.
    #[error("cannot migrate the task store {store}: {reason}")]
    Migrate {
        /// The file or the redacted URL.
        store: String,
        /// The migrator's reason.
        reason: String,
    },
}

/// A password-free rendering of `url`, and the password itself (to scrub driver messages).
#[derive(Debug, Clone)]
pub(crate) struct Redacted {
    /// The URL with its password replaced by `***`.
    pub(crate) url: String,
    secrets: Vec<String>,
}

/// Shorter secrets are not scrubbed from messages: they would mangle ordinary words, and a
/// driver message never quotes a password anyway (the scrubbing is belt and braces).
const MIN_SCRUBBED_SECRET: usize = 4;

impl Redacted {
    /// Redacts `url`.
    pub(crate) fn new(url: &url::Url) -> Redacted {
        let mut shown = url.clone();
        let mut secrets = Vec::new();
        if let Some(password) = url.password() {
            secrets.push(password.to_owned());
            if let Ok(decoded) = percent_decode(password) {
                secrets.push(decoded);
            }
            // Cannot fail: the URL has a host, or it would have no password.
            let _ = shown.set_password(Some("***"));
        }
        if url.query_pairs().any(|(k, _)| k == "password") {
            let pairs: Vec<(String, String)> = url
                .query_pairs()
                .map(|(k, v)| {
                    if k == "password" {
                        secrets.push(v.to_string());
                        (k.to_string(), "***".to_owned())
                    } else {
                        (k.to_string(), v.to_string())
                    }
                })
                .collect();
            shown.query_pairs_mut().clear().extend_pairs(pairs);
        }
        secrets.retain(|s| s.len() >= MIN_SCRUBBED_SECRET);
        Redacted {
            url: shown.to_string(),
            secrets,
        }
    }

    /// `message` without any of the URL's secrets in it.
    pub(crate) fn scrub(&self, message: String) -> String {
        self.secrets
            .iter()
            .fold(message, |m, secret| m.replace(secret.as_str(), "***"))
    }
}

/// `s` with its `%XX` escapes decoded, as the driver decodes a URL's password.
fn percent_decode(s: &str) -> Result<String, std::string::FromUtf8Error> {
    let hex = |b: &u8| (*b as char).to_digit(16);
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let high = bytes.get(i + 1).and_then(hex);
            let low = bytes.get(i + 2).and_then(hex);
            if let (Some(high), Some(low)) = (high, low) {
                // Two hex digits make at most 0xff: the cast keeps every bit.
                out.push((high * 16 + low) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out)
}

/// A driver error in lower-case words, without sqlx's generic prefixes; `timeout` is the
/// connection wait, named when the pool gave up.
pub(crate) fn describe(error: &sqlx::Error, timeout: Duration) -> String {
    match error {
        sqlx::Error::Io(e) => lower_first(&e.to_string()),
        sqlx::Error::Database(e) => lower_first(e.message()),
        sqlx::Error::PoolTimedOut => format!("no connection within {}", seconds(timeout)),
        sqlx::Error::PoolClosed => "the store is closed".to_owned(),
        sqlx::Error::Tls(e) => format!("tls: {e}"),
        other => lower_first(&other.to_string()),
    }
}

/// A migration error in lower-case words.
pub(crate) fn describe_migration(error: &sqlx::migrate::MigrateError, timeout: Duration) -> String {
    use sqlx::migrate::MigrateError;
    match error {
        MigrateError::Execute(e) => describe(e, timeout),
        MigrateError::ExecuteMigration(e, version) => {
            format!("migration {version}: {}", describe(e, timeout))
        }
        other => lower_first(&other.to_string()),
    }
}

/// `d` in words, as messages show it ("5 s", "1.5 s").
pub(crate) fn seconds(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_leave_the_url_and_the_messages() {
        let url = url::Url::parse(
            "postgres://ferry:s%40cret-pw@db.example:5432/tasks?password=other-pw&sslmode=require",
        )
        .expect("url");
        let r = Redacted::new(&url);
        assert!(
            !r.url.contains("cret-pw") && !r.url.contains("other-pw"),
            "{}",
            r.url
        );
        assert!(
            r.url.contains("ferry:***@db.example:5432/tasks"),
            "{}",
            r.url
        );
        assert!(r.url.contains("sslmode=require"), "{}", r.url);
        let scrubbed = r.scrub("failed for s@cret-pw and other-pw".to_owned());
        assert_eq!(scrubbed, "failed for *** and ***");
    }

    #[test]
    fn a_url_without_password_is_shown_whole() {
        let url = url::Url::parse("postgres://postgres@127.0.0.1:5432/test").expect("url");
        assert_eq!(
            Redacted::new(&url).url,
            "postgres://postgres@127.0.0.1:5432/test"
        );
    }

    #[test]
    fn driver_reasons_are_lower_case() {
        let refused = sqlx::Error::Io(std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "Connection refused (os error 111)",
        ));
        assert_eq!(
            describe(&refused, Duration::from_secs(5)),
            "connection refused (os error 111)"
        );
        assert_eq!(
            describe(&sqlx::Error::PoolTimedOut, Duration::from_secs(5)),
            "no connection within 5 s"
        );
    }
}
