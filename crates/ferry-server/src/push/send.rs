//! One delivery attempt: the body (the event as the config's protocol has it), the headers
//! the spec and the SDKs define, a signature when the server has a key, one `POST` through
//! ferry-net, and what the answer means for the next attempt.

use crate::config::PushSettings;
use crate::push::retry;
use crate::push::stored::{StoredConfig, Wire};
use bytes::Bytes;
use ferry_net::{NetError, SafeClient};
use ferry_store::push::ClaimedDelivery;
use ferry_trust::keys::SigningKey;
use ferry_trust::push_signature::{self, DELIVERY_ID_HEADER, SIGNATURE_HEADER};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use std::sync::Arc;
use std::time::Duration;

/// The content type of a delivery (A2A v1.0.1 §9).
const CONTENT: &str = "application/a2a+json";
/// The token headers the official SDKs send: Python's, then Go's. A receiver reads either.
const TOKEN_HEADERS: [&str; 2] = ["x-a2a-notification-token", "a2a-notification-token"];

/// How one attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Attempt {
    /// The receiver answered 2xx.
    Delivered,
    /// It did not; `permanent` when trying again cannot help (the receiver refused the
    /// delivery, redirected it, or the address is one this server may not reach).
    Failed {
        error: String,
        retry_after: Option<Duration>,
        permanent: bool,
    },
}

/// The HTTP client of deliveries: ferry-net's, with the delivery policy (public https; with
/// `allow_private`, local networks and plain http to loopback names too; metadata never), no
/// redirects, the attempt's timeout.
pub(crate) fn client(settings: &PushSettings) -> Result<SafeClient, NetError> {
    SafeClient::builder()
        .allow_private(settings.allow_private)
        .allow_loopback(settings.allow_private)
        .timeout(Duration::from_secs(settings.timeout_secs.max(1)))
        .build()
}

/// Sends deliveries.
#[derive(Debug, Clone)]
pub(crate) struct Sender {
    client: SafeClient,
    /// The key that signs deliveries (the server's first signing key), if any.
    key: Option<Arc<SigningKey>>,
}

impl Sender {
    pub(crate) fn new(client: SafeClient, key: Option<Arc<SigningKey>>) -> Self {
        Self { client, key }
    }

    /// The delivery policy's client (config creation checks URLs with it).
    pub(crate) fn client(&self) -> &SafeClient {
        &self.client
    }

    /// One attempt of `claim` to its config `stored`, signed at `now_secs`.
    pub(crate) async fn send(
        &self,
        claim: &ClaimedDelivery,
        stored: &StoredConfig,
        now_secs: i64,
    ) -> Attempt {
        let body = match body(&claim.event, stored.wire) {
            Ok(body) => body,
            Err(error) => return permanent(error),
        };
        let headers = match self.headers(claim, stored, &body, now_secs) {
            Ok(headers) => headers,
            Err(error) => return permanent(error),
        };
        let request = self
            .client
            .http()
            .post(&stored.config.url)
            .headers(headers)
            .body(body)
            .build();
        let request = match request {
            Ok(request) => request,
            Err(e) => return permanent(format!("the request cannot be made: {e}")),
        };
        match self.client.execute(request).await {
            Ok(response) => {
                let attempt = answered(&response, now_secs);
                drain(response).await;
                attempt
            }
            Err(e) => failed(&e),
        }
    }

    /// The headers of a delivery (see the module docs).
    fn headers(
        &self,
        claim: &ClaimedDelivery,
        stored: &StoredConfig,
        body: &Bytes,
        now_secs: i64,
    ) -> Result<HeaderMap, String> {
        let value = |text: &str| {
            HeaderValue::from_str(text).map_err(|_| "a header value is not sendable".to_owned())
        };
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(CONTENT));
        headers.insert(
            HeaderName::from_static("a2a-delivery-id"),
            value(&claim.delivery.id)?,
        );
        let config = &stored.config;
        if let Some(auth) = &config.authentication {
            let mut credentials = value(&format!("{} {}", auth.scheme, auth.credentials))?;
            credentials.set_sensitive(true);
            headers.insert(AUTHORIZATION, credentials);
        }
        if !config.token.is_empty() {
            let mut token = value(&config.token)?;
            token.set_sensitive(true);
            for name in TOKEN_HEADERS {
                headers.insert(HeaderName::from_static(name), token.clone());
            }
        }
        if let Some(key) = &self.key {
            let delivery = push_signature::Delivery {
                issuer: &stored.issuer,
                webhook: &config.url,
                delivery_id: &claim.delivery.id,
                task_id: &claim.key.id,
                body,
            };
            let signature =
                push_signature::sign(key, &delivery, now_secs, push_signature::DEFAULT_LIFETIME)
                    .map_err(|e| format!("signing the delivery failed: {e}"))?;
            headers.insert(
                HeaderName::from_bytes(SIGNATURE_HEADER.as_bytes()).map_err(|e| e.to_string())?,
                value(&signature)?,
            );
        }
        debug_assert!(DELIVERY_ID_HEADER.eq_ignore_ascii_case("a2a-delivery-id"));
        Ok(headers)
    }
}

/// The body of a delivery of `event` (its stored ProtoJSON) in the `wire` protocol: the
/// bytes as stored for v1.0, the event converted for v0.3.
fn body(event: &Bytes, wire: Wire) -> Result<Bytes, String> {
    match wire {
        Wire::V1 => Ok(event.clone()),
        Wire::V03 => v03_body(event),
    }
}

#[cfg(feature = "v03")]
fn v03_body(event: &Bytes) -> Result<Bytes, String> {
    let value: ferry_proto::StreamResponse =
        serde_json::from_slice(event).map_err(|e| format!("a stored event does not read: {e}"))?;
    let converted = ferry_proto::v03::convert::event_from_v1(&value);
    serde_json::to_vec(&converted)
        .map(Bytes::from)
        .map_err(|e| format!("the v0.3 event does not serialize: {e}"))
}

#[cfg(not(feature = "v03"))]
fn v03_body(event: &Bytes) -> Result<Bytes, String> {
    // Without v0.3 no v0.3 config is created; one stored by a build with it gets v1.0.
    Ok(event.clone())
}

fn permanent(error: String) -> Attempt {
    Attempt::Failed {
        error,
        retry_after: None,
        permanent: true,
    }
}

/// What the receiver's answer means: 2xx delivered; 408, 425, 429 and 5xx try again (after
/// its `Retry-After`, if any); a redirect is not followed; any other answer is a refusal.
fn answered(response: &reqwest::Response, now_secs: i64) -> Attempt {
    let status = response.status();
    if status.is_success() {
        return Attempt::Delivered;
    }
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| retry::retry_after(v, now_secs));
    if status.is_redirection() {
        let to = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("?");
        return permanent(format!(
            "the webhook answered {status} to {to}; redirects are not followed"
        ));
    }
    let transient = status.is_server_error() || matches!(status.as_u16(), 408 | 425 | 429);
    Attempt::Failed {
        error: format!("the webhook answered {status}"),
        retry_after,
        permanent: !transient,
    }
}

/// The most of an answer's body read (and dropped) so that its connection can carry the
/// next delivery; a longer body costs the connection instead.
const DRAINED_BODY: usize = 64 * 1024;

/// Reads the answer's body to its end (at most [`DRAINED_BODY`] bytes): a connection whose
/// answer was not read to the end cannot be used again, and a new connection per delivery
/// would cost more than the delivery.
async fn drain(mut response: reqwest::Response) {
    let mut read = 0;
    while read <= DRAINED_BODY {
        match response.chunk().await {
            Ok(Some(chunk)) => read += chunk.len(),
            Ok(None) | Err(_) => return,
        }
    }
}

/// A request that got no answer: an address the policy refuses or a URL that cannot be
/// requested is permanent; anything else (refused connection, timeout, DNS) is tried again.
fn failed(e: &NetError) -> Attempt {
    let permanent = matches!(
        e,
        NetError::BlockedAddress { .. }
            | NetError::SchemeNotAllowed { .. }
            | NetError::InvalidUrl { .. }
    );
    Attempt::Failed {
        error: e.to_string(),
        retry_after: None,
        permanent,
    }
}
