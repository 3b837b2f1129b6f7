//! Service parameters (spec §2.1): `A2A-Version` and `A2A-Extensions`.

use crate::config::ServerConfig;
use axum::http::{HeaderMap, HeaderName};
use ferry_proto::{A2aError, ErrorKind, PROTOCOL_VERSION};

/// The header that carries the protocol version.
pub const VERSION_HEADER: &str = "a2a-version";
/// The header that carries extension URIs.
pub const EXTENSIONS_HEADER: &str = "a2a-extensions";

// The same names, parsed once: a lookup by `&str` parses the name again on every request.
pub(crate) const VERSION: HeaderName = HeaderName::from_static(VERSION_HEADER);
pub(crate) const EXTENSIONS: HeaderName = HeaderName::from_static(EXTENSIONS_HEADER);
/// v0.3's name for it, read as well.
const X_EXTENSIONS: HeaderName = HeaderName::from_static(ferry_proto::v03::EXTENSIONS_HEADER);
pub(crate) const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// Checks the requested protocol version: `1.x` is accepted; a missing header is 1.0 unless
/// `strict_version` is set; anything else is VersionNotSupportedError.
pub(crate) fn check_version(
    headers: &HeaderMap,
    query: Option<&str>,
    config: &ServerConfig,
) -> Result<(), A2aError> {
    let from_header = stated_version(headers)?;
    let from_query = query.and_then(|q| {
        q.split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| k.eq_ignore_ascii_case("A2A-Version"))
            .map(|(_, v)| v.trim())
    });
    let requested = from_header.or(from_query.filter(|v| !v.is_empty()));
    let Some(requested) = requested else {
        if config.strict_version {
            return Err(version_error("(none; a missing A2A-Version means 0.3)"));
        }
        return Ok(());
    };
    let major = requested.split('.').next().unwrap_or_default();
    let minor_ok = requested
        .split('.')
        .nth(1)
        .is_none_or(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()));
    if major == "1" && minor_ok && requested.split('.').count() <= 2 {
        Ok(())
    } else {
        Err(version_error(requested))
    }
}

/// The version the `A2A-Version` header states, trimmed (`None`: no header, or an empty one).
/// A header that is not visible text states no version anyone speaks: it is refused like an
/// unsupported one, never read as absent.
pub(crate) fn stated_version(headers: &HeaderMap) -> Result<Option<&str>, A2aError> {
    match headers.get(VERSION) {
        None => Ok(None),
        Some(value) => {
            let text = value
                .to_str()
                .map_err(|_| version_error("(bytes that are not text)"))?;
            let text = text.trim();
            Ok((!text.is_empty()).then_some(text))
        }
    }
}

fn version_error(requested: &str) -> A2aError {
    A2aError::new(
        ErrorKind::VersionNotSupported,
        format!("A2A-Version {requested} is not supported; this server speaks {PROTOCOL_VERSION}"),
    )
    .with_meta("requestedVersion", requested)
    .with_meta("supportedVersions", PROTOCOL_VERSION)
}

/// True when a request speaks v0.3 by its header: it states no version (spec §3.6: absent
/// means 0.3) or `0.3`. A header that is not text speaks no version: v1.0's rules refuse it.
pub(crate) fn states_v03(headers: &HeaderMap) -> bool {
    stated_version(headers).is_ok_and(|v| v.is_none_or(ferry_proto::v03::is_v03))
}

/// The extension URIs a request asks for: every `A2A-Extensions` line (and v0.3's
/// `X-A2A-Extensions`), split on commas, trimmed.
pub(crate) fn requested_extensions(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(EXTENSIONS)
        .iter()
        .chain(headers.get_all(X_EXTENSIONS).iter())
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Activates the requested extensions the agent declared (unknown ones are ignored) and checks
/// that every required extension was requested.
pub(crate) fn activate_extensions(
    headers: &HeaderMap,
    declared: &[String],
    required: &[String],
) -> Result<Vec<String>, A2aError> {
    let requested = requested_extensions(headers);
    if let Some(missing) = required.iter().find(|r| !requested.contains(r)) {
        return Err(A2aError::new(
            ErrorKind::ExtensionSupportRequired,
            format!("this agent requires the extension {missing}; activate it with the A2A-Extensions header"),
        )
        .with_meta("extension", missing.as_str()));
    }
    let mut active: Vec<String> = requested
        .into_iter()
        .filter(|u| declared.contains(u))
        .collect();
    active.dedup();
    Ok(active)
}

/// The SSE `Last-Event-ID` a reconnecting client sends (ferry's event ids are sequence numbers).
pub(crate) fn last_event_id(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(LAST_EVENT_ID)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn versions() {
        let c = ServerConfig::default();
        assert!(check_version(&headers(&[("a2a-version", "1.0")]), None, &c).is_ok());
        assert!(check_version(&headers(&[("a2a-version", "1.1")]), None, &c).is_ok());
        assert!(check_version(&headers(&[]), None, &c).is_ok());
        assert!(check_version(&headers(&[]), Some("A2A-Version=1.0"), &c).is_ok());
        for bad in ["99.0", "0.3", "1.0.1", "one", "2"] {
            let h = HeaderMap::from_iter([(
                axum::http::HeaderName::from_static("a2a-version"),
                HeaderValue::from_str(bad).expect("ascii"),
            )]);
            let e = check_version(&h, None, &c).expect_err(bad);
            assert_eq!(e.kind, ErrorKind::VersionNotSupported, "{bad}");
        }
        let not_text = HeaderMap::from_iter([(
            axum::http::HeaderName::from_static("a2a-version"),
            HeaderValue::from_bytes(&[0xff, 0xfe]).expect("opaque bytes"),
        )]);
        let e = check_version(&not_text, None, &c).expect_err("bytes that are not text");
        assert_eq!(e.kind, ErrorKind::VersionNotSupported);
        let strict = ServerConfig {
            strict_version: true,
            ..ServerConfig::default()
        };
        assert!(check_version(&headers(&[]), None, &strict).is_err());
    }

    #[test]
    fn extensions_merge_lines_and_check_required() {
        let h = headers(&[
            ("a2a-extensions", " urn:a , urn:b"),
            ("a2a-extensions", "urn:c,,"),
        ]);
        assert_eq!(requested_extensions(&h), ["urn:a", "urn:b", "urn:c"]);
        let v03 = headers(&[("a2a-extensions", "urn:a"), ("x-a2a-extensions", "urn:d")]);
        assert_eq!(requested_extensions(&v03), ["urn:a", "urn:d"]);
        let declared = vec!["urn:b".to_owned(), "urn:c".to_owned()];
        assert_eq!(
            activate_extensions(&h, &declared, &[]).expect("ok"),
            ["urn:b", "urn:c"]
        );
        let e = activate_extensions(&headers(&[]), &declared, &["urn:c".to_owned()])
            .expect_err("required");
        assert_eq!(e.kind, ErrorKind::ExtensionSupportRequired);
    }
}
