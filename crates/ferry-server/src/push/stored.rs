//! A push config as the server stores it: the config as the caller sent it (credentials
//! included, which only deliveries read), the protocol it came through (v0.3 configs get
//! v0.3-shaped deliveries), and the agent it belongs to (the signature's issuer).

use ferry_proto::TaskPushNotificationConfig;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Which protocol's body a delivery carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Wire {
    /// A2A v1.0: a `StreamResponse`.
    #[default]
    #[serde(rename = "v1")]
    V1,
    /// A2A v0.3: the event as v0.3 streams it (`kind`-tagged).
    #[serde(rename = "v0.3")]
    V03,
}

/// A config as stored (the store keeps this as text and never reads it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredConfig {
    /// The config, as the caller sent it (its id and task filled in).
    pub(crate) config: TaskPushNotificationConfig,
    /// The protocol it came through.
    #[serde(default)]
    pub(crate) wire: Wire,
    /// The card URL of the agent whose task it is: the `iss` of its deliveries' signatures.
    pub(crate) issuer: String,
}

impl StoredConfig {
    /// The text the store keeps.
    pub(crate) fn to_text(&self) -> Arc<str> {
        serde_json::to_string(self).unwrap_or_default().into()
    }

    /// The config stored as `text`.
    pub(crate) fn parse(text: &str) -> Result<StoredConfig, String> {
        serde_json::from_str(text).map_err(|e| format!("a stored push config does not read: {e}"))
    }

    /// The config as Get and List show it: the token and the credentials are write-only.
    pub(crate) fn shown(&self) -> TaskPushNotificationConfig {
        let mut shown = self.config.clone();
        shown.token.clear();
        if let Some(auth) = shown.authentication.as_mut() {
            auth.credentials.clear();
        }
        shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_proto::AuthenticationInfo;

    #[test]
    fn a_stored_config_reads_back_and_shows_no_secret() {
        let stored = StoredConfig {
            config: TaskPushNotificationConfig {
                tenant: String::new(),
                id: "c-1".into(),
                task_id: "t-1".into(),
                url: "https://hooks.example/a2a".into(),
                token: "tok".into(),
                authentication: Some(AuthenticationInfo {
                    scheme: "Bearer".into(),
                    credentials: "secret".into(),
                }),
            },
            wire: Wire::V03,
            issuer: "https://agent.example/.well-known/agent-card.json".into(),
        };
        let again = StoredConfig::parse(&stored.to_text()).expect("reads back");
        assert_eq!(again, stored);
        let shown = serde_json::to_string(&stored.shown()).expect("json");
        assert!(
            !shown.contains("tok") && !shown.contains("secret"),
            "{shown}"
        );
        assert!(
            shown.contains("Bearer") && shown.contains("hooks.example"),
            "{shown}"
        );
    }
}
