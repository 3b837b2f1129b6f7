//! The OpenID provider of the identity tests: `interop/python/oidc_provider.py` (PyJWT and
//! `cryptography` sign its tokens, not ferry), on 127.0.0.1, killed on drop.

use super::{Running, http_request, python_or_skip, spawn_lines, text, workspace_root};
use serde_json::{Value, json};
use std::process::Command;
use std::time::Duration;

/// The audience the provider's tokens name unless a test says otherwise.
pub(crate) const AUDIENCE: &str = "ferry-tests";
/// What the interpreter must import to run the provider.
const IMPORTS: &str = "jwt, cryptography";

/// A running provider.
pub(crate) struct Provider {
    _child: Running,
    /// `http://127.0.0.1:PORT`.
    pub issuer: String,
}

impl Provider {
    /// Starts the provider with the clients `clients` (`ID:SECRET[:SCOPES]`; an empty secret
    /// makes a public client); `None` after a skip notice where Python is missing.
    pub(crate) fn start(test: &str, clients: &[&str]) -> Option<Provider> {
        let python = python_or_skip(test, IMPORTS)?;
        let mut cmd = Command::new(python);
        cmd.current_dir(workspace_root())
            .arg("interop/python/oidc_provider.py")
            .args(["--audience", AUDIENCE])
            .env("PYTHONUNBUFFERED", "1");
        for client in clients {
            cmd.args(["--client", client]);
        }
        let (child, lines) = spawn_lines(&mut cmd);
        let line = lines
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("{test}: the provider printed no issuer line: {e}"));
        let issuer = line
            .strip_prefix("issuer ")
            .unwrap_or_else(|| panic!("{test}: not an issuer line: {line:?}"))
            .to_owned();
        Some(Provider {
            _child: child,
            issuer,
        })
    }

    /// `POST {issuer}{path}` with a JSON body; the JSON answer (panics unless 200).
    pub(crate) fn post(&self, path: &str, body: &Value) -> Value {
        let (status, answer) = http_request(
            "POST",
            &format!("{}{path}", self.issuer),
            &[],
            &body.to_string(),
        );
        assert_eq!(status, 200, "POST {path}: {}", text(&answer));
        serde_json::from_slice(&answer).expect("the provider answers JSON")
    }

    /// A token as `asked` (see the provider's `/test/mint`): subject `alice` and valid
    /// claims unless changed.
    pub(crate) fn mint(&self, asked: &Value) -> String {
        self.post("/test/mint", asked)["token"]
            .as_str()
            .expect("a token")
            .to_owned()
    }

    /// A valid token of `subject` with `scope`.
    pub(crate) fn token(&self, subject: &str, scope: &str) -> String {
        self.mint(&json!({"subject": subject, "scope": scope}))
    }

    /// The grant types the token endpoint was asked for so far.
    pub(crate) fn grants(&self) -> Vec<String> {
        let (status, body) = http_request("GET", &format!("{}/test/grants", self.issuer), &[], "");
        assert_eq!(status, 200);
        let grants: Value = serde_json::from_slice(&body).expect("JSON");
        grants["grants"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The `ferry serve` flags that accept this provider's tokens.
    pub(crate) fn serve_flags(&self) -> Vec<String> {
        [
            "--oidc-issuer",
            &self.issuer,
            "--oidc-audience",
            AUDIENCE,
            "--oidc-allow-private",
        ]
        .map(str::to_owned)
        .to_vec()
    }
}
