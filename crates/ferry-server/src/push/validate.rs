//! What a push config may hold. Everything that can be known when it is created is checked
//! then, so that a config that can never be delivered is refused with a reason (400), not
//! left to fail later: the URL's form, length and scheme, an address written in it that the
//! delivery policy refuses, and header values that could not be sent (control characters,
//! CR/LF that would split a header, over the limits). A DNS name is checked where it
//! matters, on the addresses actually dialed, at every delivery.

use crate::config::PushSettings;
use ferry_net::{NetError, SafeClient, Url};
use ferry_proto::{A2aError, TaskPushNotificationConfig};

/// The longest config id, in bytes.
pub(crate) const MAX_ID_BYTES: usize = 128;

/// Checks `config` against `settings` and the delivery policy of `client`.
pub(crate) fn validate(
    config: &TaskPushNotificationConfig,
    settings: &PushSettings,
    client: &SafeClient,
) -> Result<(), A2aError> {
    check_url(&config.url, settings, client)?;
    if config.id.len() > MAX_ID_BYTES || config.id.chars().any(char::is_control) {
        return Err(refused(
            "id",
            format!("a config id is at most {MAX_ID_BYTES} bytes without control characters"),
        ));
    }
    if !config.token.is_empty() {
        check_header_value("token", &config.token, settings)?;
    }
    if let Some(auth) = &config.authentication {
        let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if auth.scheme.is_empty() || !auth.scheme.chars().all(tchar) {
            return Err(refused(
                "authentication.scheme",
                "an HTTP authentication scheme (a token such as Bearer or Basic) is required",
            ));
        }
        let value = format!("{} {}", auth.scheme, auth.credentials);
        check_header_value("authentication.credentials", &value, settings)?;
    }
    Ok(())
}

/// The webhook URL: present, within the limit, absolute, without credentials of its own, on
/// a scheme and (when written as an address) an address the delivery policy allows.
fn check_url(url: &str, settings: &PushSettings, client: &SafeClient) -> Result<(), A2aError> {
    if url.is_empty() {
        return Err(refused("url", "the webhook url is required"));
    }
    if url.len() > settings.max_url_bytes {
        return Err(refused(
            "url",
            format!(
                "the webhook url is {} bytes, over the limit of {}",
                url.len(),
                settings.max_url_bytes
            ),
        ));
    }
    let parsed: Url = url
        .parse()
        .map_err(|e| refused("url", format!("not an absolute URL: {e}")))?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(refused(
            "url",
            "the webhook url carries credentials; put them in authentication",
        ));
    }
    client.check_url(&parsed).map_err(|e| {
        let why = match &e {
            NetError::SchemeNotAllowed { .. } if settings.allow_private => {
                format!("{e}: webhooks are https (plain http only to a loopback name)")
            }
            NetError::SchemeNotAllowed { .. } => format!("{e}: webhooks are https"),
            NetError::BlockedAddress { .. } => {
                format!("{e}: this server delivers to public addresses only")
            }
            _ => e.to_string(),
        };
        refused("url", why)
    })
}

/// A value sent as a header: visible ASCII and spaces only (no CR/LF), within the limit.
fn check_header_value(field: &str, value: &str, settings: &PushSettings) -> Result<(), A2aError> {
    if value.len() > settings.max_header_bytes {
        return Err(refused(
            field,
            format!(
                "{} bytes, over the limit of {}",
                value.len(),
                settings.max_header_bytes
            ),
        ));
    }
    if !value
        .bytes()
        .all(|b| b == b' ' || b == b'\t' || b.is_ascii_graphic())
    {
        return Err(refused(
            field,
            "only visible ASCII characters and spaces may be sent in a header (no CR or LF)",
        ));
    }
    Ok(())
}

fn refused(field: &str, why: impl Into<String>) -> A2aError {
    let why = why.into();
    A2aError::invalid_params(format!("push notification config: {field}: {why}"))
        .with_violation(field, why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_proto::AuthenticationInfo;

    fn config(url: &str) -> TaskPushNotificationConfig {
        TaskPushNotificationConfig {
            tenant: String::new(),
            id: String::new(),
            task_id: "t".into(),
            url: url.into(),
            token: String::new(),
            authentication: None,
        }
    }

    fn check(config: &TaskPushNotificationConfig, allow_private: bool) -> Result<(), String> {
        let settings = PushSettings {
            allow_private,
            ..PushSettings::default()
        };
        let client = super::super::send::client(&settings).expect("client");
        validate(config, &settings, &client).map_err(|e| e.message)
    }

    #[test]
    fn webhooks_are_public_https_unless_private_ones_are_allowed() {
        assert_eq!(check(&config("https://hooks.example/a"), false), Ok(()));
        for (url, reason) in [
            ("http://hooks.example/a", "scheme"),
            ("https://127.0.0.1/a", "loopback"),
            ("https://[::1]/a", "loopback"),
            ("https://10.1.2.3/a", "private"),
            ("https://169.254.169.254/latest", "metadata"),
            ("https://user:pw@hooks.example/a", "credentials"),
            ("hooks.example/a", "absolute"),
            ("", "required"),
        ] {
            let refused = check(&config(url), false).expect_err(url);
            assert!(refused.contains(reason), "{url}: {refused}");
        }
        assert_eq!(check(&config("http://127.0.0.1:9/a"), true), Ok(()));
        assert_eq!(check(&config("https://10.1.2.3/a"), true), Ok(()));
        let metadata = check(&config("https://169.254.169.254/"), true).expect_err("never");
        assert!(metadata.contains("metadata"), "{metadata}");
        let far = check(&config("http://10.1.2.3/a"), true).expect_err("http");
        assert!(far.contains("scheme"), "{far}");
        let long = format!("https://hooks.example/{}", "a".repeat(2100));
        assert!(
            check(&config(&long), false)
                .expect_err("long")
                .contains("limit")
        );
    }

    #[test]
    fn header_values_cannot_split_a_header() {
        let mut c = config("https://hooks.example/a");
        c.token = "abc\r\nX-Evil: 1".into();
        assert!(check(&c, false).expect_err("crlf").contains("CR or LF"));
        c.token = "fine-token".into();
        c.authentication = Some(AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: "x\ny".into(),
        });
        assert!(check(&c, false).expect_err("lf").contains("CR or LF"));
        c.authentication = Some(AuthenticationInfo {
            scheme: "Bad Scheme".into(),
            credentials: "x".into(),
        });
        assert!(check(&c, false).expect_err("scheme").contains("scheme"));
        c.authentication = Some(AuthenticationInfo {
            scheme: "Basic".into(),
            credentials: "dXNlcjpwdw==".into(),
        });
        assert_eq!(check(&c, false), Ok(()));
    }
}
