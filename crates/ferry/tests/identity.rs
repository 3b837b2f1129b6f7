//! Identity from an OpenID provider: `ferry serve --oidc-issuer … --oidc-audience …` accepts
//! the provider's access tokens (and refuses forged, stale and foreign ones with a bearer
//! challenge that says why), picks up a key rotation without a restart, maps scopes to
//! access, and keeps each subject's tasks its own; the official Python SDK calls it with a
//! token it obtained from the provider.
//!
//! The provider is `interop/python/oidc_provider.py` (see `support::oidc`); it and the SDK
//! need the interpreter of `interop_python.rs` (skipped loudly without it, a failure in CI).

mod support;

use support::unix_now;

use serde_json::{Value, json};
use std::time::Duration;
use support::oidc::{AUDIENCE, Provider};
use support::{CARD_PATH, Server, http_get, http_request_with_headers, run_script, text};

/// How long the Python client may take.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(60);

/// `ferry serve --agent echo` accepting `provider`'s tokens, with `extra` flags.
fn serve(provider: &Provider, extra: &[&str]) -> Server {
    let mut args = vec!["--agent", "echo", "--bind", "127.0.0.1:0"];
    let flags = provider.serve_flags();
    args.extend(flags.iter().map(String::as_str));
    args.extend_from_slice(extra);
    Server::start(args)
}

/// One JSON-RPC call to `url` with `token` (if any): status, response head, JSON body.
fn call(url: &str, token: Option<&str>, method: &str, params: &Value) -> (u16, String, Value) {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("A2A-Version", "1.0"),
        ("Content-Type", "application/json"),
        ("Accept", "application/json"),
    ];
    if let Some(b) = &bearer {
        headers.push(("Authorization", b));
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let (status, head, answer) = http_request_with_headers(
        "POST",
        &format!("{url}/jsonrpc"),
        &headers,
        &body.to_string(),
    );
    let answer = serde_json::from_slice(&answer).unwrap_or(Value::String(text(&answer)));
    (status, head, answer)
}

/// SendMessage with `token`: status, head, body.
fn send(url: &str, token: Option<&str>) -> (u16, String, Value) {
    let message =
        json!({"message": {"messageId": uuid(), "role": "ROLE_USER", "parts": [{"text": "hi"}]}});
    call(url, token, "SendMessage", &message)
}

/// A fresh message id.
fn uuid() -> String {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    format!("m-{}", N.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

/// The `WWW-Authenticate` line of a response head (lower-cased, as the head is).
fn challenge(head: &str) -> &str {
    head.lines()
        .find(|l| l.starts_with("www-authenticate:"))
        .unwrap_or_else(|| panic!("no WWW-Authenticate in {head}"))
}

/// The card declares the provider (openIdConnect, its discovery document) and requires it;
/// tokens signed with each of its algorithms are accepted; no token is 401 without an error
/// code; every forged, stale or foreign token is 401 `invalid_token` with a description of
/// what is wrong.
#[test]
fn provider_tokens_are_verified_and_bad_ones_refused_with_reasons() {
    let test = "provider_tokens_are_verified_and_bad_ones_refused_with_reasons";
    let Some(provider) = Provider::start(test, &[]) else {
        return;
    };
    let server = serve(&provider, &[]);
    let url = &server.base_url;

    let (status, card) = http_get(&format!("{url}{CARD_PATH}"));
    assert_eq!(status, 200);
    let card: Value = serde_json::from_slice(&card).expect("card");
    assert_eq!(
        card["securitySchemes"]["oidc"]["openIdConnectSecurityScheme"]["openIdConnectUrl"],
        format!("{}/.well-known/openid-configuration", provider.issuer),
        "{card}"
    );
    assert_eq!(
        card["securityRequirements"],
        json!([{"schemes": {"oidc": {}}}]),
        "{card}"
    );

    for alg in ["RS256", "ES256", "EdDSA"] {
        let token = provider.mint(&json!({"alg": alg}));
        let (status, _, body) = send(url, Some(&token));
        assert_eq!(status, 200, "{alg}: {body}\n{}", server.output());
        assert_eq!(
            body["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{alg}: {body}"
        );
    }

    let (status, head, _) = send(url, None);
    assert_eq!(status, 401);
    assert!(
        !challenge(&head).contains("error="),
        "no error code without credentials (RFC 6750 §3.1): {head}"
    );

    let t = unix_now();
    let refused: [(&str, Value, &str); 9] = [
        (
            "wrong issuer",
            json!({"claims": {"iss": "https://elsewhere.example"}}),
            "issuer",
        ),
        (
            "wrong audience",
            json!({"claims": {"aud": "someone-else"}}),
            "audience",
        ),
        (
            "expired",
            json!({"claims": {"exp": t - 3600, "iat": t - 7200, "nbf": t - 7200}}),
            "expired",
        ),
        (
            "not yet valid",
            json!({"claims": {"nbf": t + 3600}}),
            "not valid yet",
        ),
        ("alg none", json!({"alg": "none"}), "algorithm"),
        (
            "HMAC with the public key",
            json!({"alg": "HS256-public-key"}),
            "algorithm",
        ),
        ("unknown kid", json!({"kid": "made-up"}), "key"),
        ("tampered payload", json!({"tamper": true}), "signature"),
        ("no subject", json!({"remove": ["sub"]}), "sub"),
    ];
    for (what, asked, why) in refused {
        let token = provider.mint(&asked);
        let (status, head, body) = send(url, Some(&token));
        assert_eq!(status, 401, "{what}: {body}");
        let challenge = challenge(&head);
        assert!(
            challenge.contains("error=\"invalid_token\""),
            "{what}: {challenge}"
        );
        assert!(
            challenge.contains("error_description=") && challenge.contains(why),
            "{what}: the challenge says why ({why}): {challenge}"
        );
        assert_eq!(
            body["error"]["details"][0]["reason"], "UNAUTHENTICATED",
            "{what}: {body}"
        );
    }
}

/// The provider rotates its keys: a token of the new key is accepted without restarting
/// ferry (the unknown key makes it fetch the keys again), and once the old key is no longer
/// published its tokens are refused.
#[test]
fn a_key_rotation_is_picked_up_without_a_restart() {
    let test = "a_key_rotation_is_picked_up_without_a_restart";
    let Some(provider) = Provider::start(test, &[]) else {
        return;
    };
    let server = serve(&provider, &[]);
    let url = &server.base_url;
    let old = provider.token("alice", "");
    assert_eq!(send(url, Some(&old)).0, 200, "{}", server.output());
    let kid = provider.post("/test/rotate", &json!({}))["kid"].clone();
    assert_eq!(kid, "rs256-2");
    let new = provider.token("alice", "");
    let (status, _, body) = send(url, Some(&new));
    assert_eq!(status, 200, "the new key's token: {body}");
    let (status, head, _) = send(url, Some(&old));
    assert_eq!(status, 401, "the old key is gone from the provider's set");
    assert!(challenge(&head).contains("does not publish"), "{head}");
}

/// Two agents, `agent_scopes = true` and the default scope names: a token reaches the agents
/// its `a2a:agent:ID` scopes name (403 elsewhere); `a2a:read` makes it read-only; each
/// subject sees only its own tasks (another's is not found, and not listed) unless it holds
/// `a2a:admin`.
#[test]
fn scopes_decide_agents_access_and_whose_tasks() {
    let test = "scopes_decide_agents_access_and_whose_tasks";
    let Some(provider) = Provider::start(test, &[]) else {
        return;
    };
    let dir = support::scratch_dir("identity-scopes");
    let config = format!(
        "[[agents]]\nid = \"echo\"\nkind = \"echo\"\n\n[[agents]]\nid = \"other\"\nkind = \"echo\"\n\n\
         [auth.oidc]\nissuer = \"{}\"\naudience = \"{AUDIENCE}\"\nallow_private = true\nagent_scopes = true\n",
        provider.issuer
    );
    let file = support::write(&dir, "ferry.toml", &config);
    let server = Server::start(["--config", support::s(&file), "--bind", "127.0.0.1:0"]);
    let root = server
        .base_url
        .split("/agents/")
        .next()
        .expect("a root")
        .to_owned();
    let echo = format!("{root}/agents/echo");
    let other = format!("{root}/agents/other");

    let alice = provider.token("alice", "a2a:agent:echo");
    let (status, _, body) = send(&echo, Some(&alice));
    assert_eq!(status, 200, "{body}\n{}", server.output());
    let task = body["result"]["task"]["id"]
        .as_str()
        .expect("a task id")
        .to_owned();
    let (status, _, body) = send(&other, Some(&alice));
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body["error"]["details"][0]["reason"], "AGENT_NOT_ALLOWED",
        "{body}"
    );

    let reader = provider.token("alice", "a2a:agent:echo a2a:read");
    let (status, _, body) = send(&echo, Some(&reader));
    assert_eq!(status, 403, "a read-only token sends nothing: {body}");
    let (status, _, body) = call(&echo, Some(&reader), "GetTask", &json!({"id": task}));
    assert_eq!(status, 200, "it reads its subject's task: {body}");
    assert_eq!(body["result"]["id"], task.as_str(), "{body}");

    subjects_never_meet(&provider, &echo, &task, "a2a:agent:echo");
}

/// `task` is alice's: bob neither reads, lists nor cancels it (not found), a token with the
/// admin scope sees it. `scopes` go on every token.
fn subjects_never_meet(provider: &Provider, url: &str, task: &str, scopes: &str) {
    let bob = provider.token("bob", scopes);
    let (_, _, body) = call(url, Some(&bob), "GetTask", &json!({"id": task}));
    assert_eq!(
        body["error"]["code"], -32001,
        "alice's task is not found for bob: {body}"
    );
    let (_, _, body) = call(url, Some(&bob), "ListTasks", &json!({}));
    assert_eq!(body["result"]["tasks"], json!([]), "bob lists none: {body}");
    let (_, _, body) = call(url, Some(&bob), "CancelTask", &json!({"id": task}));
    assert_eq!(body["error"]["code"], -32001, "nor cancels it: {body}");

    let admin = provider.token("carol", &format!("{scopes} a2a:admin"));
    let (_, _, body) = call(url, Some(&admin), "GetTask", &json!({"id": task}));
    assert_eq!(
        body["result"]["id"], task,
        "the admin scope sees it: {body}"
    );
    let (_, _, body) = call(url, Some(&admin), "ListTasks", &json!({}));
    let listed: Vec<&str> = body["result"]["tasks"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["id"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(listed, [task], "{body}");
}

/// The same in PostgreSQL: each subject's tasks are its own there too (a schema of the
/// machine's server; skipped loudly without it, a failure in CI).
#[test]
fn subjects_keep_their_tasks_in_postgresql() {
    let test = "subjects_keep_their_tasks_in_postgresql";
    let Some(provider) = Provider::start(test, &[]) else {
        return;
    };
    let Some(schema) = support::PgSchema::create_or_skip(test) else {
        return;
    };
    let store = schema.store_url();
    let server = serve(&provider, &["--store", &store]);
    let alice = provider.token("alice", "");
    let (status, _, body) = send(&server.base_url, Some(&alice));
    assert_eq!(status, 200, "{body}\n{}", server.output());
    let task = body["result"]["task"]["id"].as_str().expect("a task id");
    subjects_never_meet(&provider, &server.base_url, task, "");
}

/// The official Python SDK follows the card's openIdConnect scheme to the provider, gets a
/// token by client credentials and calls ferry with it over each binding (its own
/// `AuthInterceptor` puts the token on the calls); without it, it is refused.
#[test]
fn the_python_sdk_calls_with_a_provider_token() {
    let test = "the_python_sdk_calls_with_a_provider_token";
    let Some(provider) = Provider::start(test, &["svc:svc-secret"]) else {
        return;
    };
    let Some(python) = support::python_or_skip(test, "a2a.client.auth.interceptor, grpc.aio")
    else {
        return;
    };
    let server = serve(&provider, &[]);
    for binding in ["JSONRPC", "HTTP+JSON", "GRPC"] {
        let run = run_script(
            &python,
            "interop/python/oidc_client.py",
            [
                "--binding",
                binding,
                "--base",
                &server.base_url,
                "--client-id",
                "svc",
                "--client-secret",
                "svc-secret",
            ],
            SCRIPT_TIMEOUT,
        );
        run.assert_passed(&format!("{test} over {binding}"), &server);
        assert!(run.stdout.contains("PASS"), "{}", run.stdout);
    }
    assert_eq!(
        provider.grants(),
        ["client_credentials"; 3],
        "one token per run, by client credentials"
    );
}

/// The status of a SendMessage with `token`.
fn send_with(url: &str, token: &str) -> u16 {
    send(url, Some(token)).0
}

/// `ferry ARGS` with `env`; its output.
fn ferry_with(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = support::ferry();
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    support::run_with_timeout(&mut cmd, None, Duration::from_secs(60))
}

/// The files of the token cache `dir`.
fn cached(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// `ferry send --client-id` with the secret in FERRY_CLIENT_SECRET: a token by client
/// credentials, kept (mode 0600) and used again; renewed when it is about to expire, and
/// once more when the agent refuses it (here: the provider rotated its keys). The secret
/// goes only to a provider the user names.
#[test]
fn ferry_send_gets_a_token_by_client_credentials() {
    let test = "ferry_send_gets_a_token_by_client_credentials";
    let Some(provider) = Provider::start(test, &["svc:svc-secret"]) else {
        return;
    };
    let server = serve(&provider, &[]);
    let cache = support::scratch_dir("identity-cache");
    let env = [
        ("FERRY_CLIENT_SECRET", "svc-secret"),
        ("FERRY_TOKEN_CACHE", support::s(&cache)),
    ];
    let send = |extra: &[&str]| {
        let mut args = vec![
            "send",
            &server.base_url,
            "hi",
            "-o",
            "json",
            "--client-id",
            "svc",
            "--oidc-allow-private",
        ];
        args.extend_from_slice(extra);
        ferry_with(&args, &env)
    };
    let named = ["--oidc-issuer", provider.issuer.as_str()];

    let refused = send(&[]);
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("--oidc-issuer"),
        "the card alone does not get the secret: {}",
        text(&refused.stderr)
    );
    assert!(
        provider.grants().is_empty(),
        "nothing was sent to the provider"
    );

    let first = send(&named);
    assert!(
        first.status.success(),
        "{}\n{}",
        text(&first.stderr),
        server.output()
    );
    let second = send(&named);
    assert!(second.status.success(), "{}", text(&second.stderr));
    assert_eq!(
        provider.grants(),
        ["client_credentials"],
        "the kept token is used again"
    );
    let files = cached(&cache);
    assert_eq!(files.len(), 1, "{files:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&files[0])
            .expect("the cache file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "only its owner reads the cache");
    }

    // The agent refuses the kept token (its key is gone): a fresh one, and the call again.
    provider.post("/test/rotate", &json!({}));
    let fresh = provider.token("someone", "");
    assert_eq!(
        send_with(&server.base_url, &fresh),
        200,
        "the server now holds only the new key"
    );
    let after_rotation = send(&named);
    assert!(
        after_rotation.status.success(),
        "{}",
        text(&after_rotation.stderr)
    );
    assert_eq!(provider.grants(), ["client_credentials"; 2]);

    // A token that expires within the renewal margin (60 s) is renewed before it is used.
    provider.post("/test/settings", &json!({"access_ttl": 30}));
    for file in cached(&cache) {
        std::fs::remove_file(file).expect("empty the cache");
    }
    assert!(send(&named).status.success(), "a short-lived token");
    assert_eq!(provider.grants(), ["client_credentials"; 3]);
    assert!(send(&named).status.success(), "renewed before use");
    assert_eq!(provider.grants(), ["client_credentials"; 4]);
}

/// `ferry login --client-id` (a public client): the device flow — the test approves the
/// code it prints through the provider — then `ferry send` with the kept token, its subject
/// the caller; a token about to expire is refreshed with its refresh token.
#[test]
fn ferry_login_signs_in_with_the_device_flow() {
    let test = "ferry_login_signs_in_with_the_device_flow";
    let Some(provider) = Provider::start(test, &["cli::"]) else {
        return;
    };
    let server = serve(&provider, &[]);
    let cache = support::scratch_dir("identity-device");
    let env = [("FERRY_TOKEN_CACHE", support::s(&cache))];
    provider.post("/test/settings", &json!({"access_ttl": 30}));

    let mut login = support::ferry();
    login
        .args([
            "login",
            &server.base_url,
            "--client-id",
            "cli",
            "--oidc-allow-private",
        ])
        .env("FERRY_TOKEN_CACHE", support::s(&cache));
    let (mut running, lines) = support::spawn_lines(&mut login);
    let code = loop {
        let line = lines
            .recv_timeout(Duration::from_secs(30))
            .expect("ferry login prints the code");
        if let Some(code) = line.strip_prefix("code: ") {
            break code.to_owned();
        }
    };
    provider.post(
        "/test/approve",
        &json!({"user_code": code, "subject": "ada"}),
    );
    let status = running.0.wait().expect("ferry login ends");
    assert!(status.success(), "ferry login failed");

    let send = ferry_with(
        &[
            "send",
            &server.base_url,
            "hi",
            "-o",
            "json",
            "--client-id",
            "cli",
            "--oidc-allow-private",
        ],
        &env,
    );
    assert!(send.status.success(), "{}", text(&send.stderr));
    let grants = provider.grants();
    assert_eq!(
        grants.last().map(String::as_str),
        Some("refresh_token"),
        "{grants:?}"
    );
    assert!(
        !grants.iter().any(|g| g == "client_credentials"),
        "{grants:?}"
    );

    // The token is ada's: a token of another subject does not see her task.
    let answer: Value = serde_json::from_slice(&send.stdout).expect("JSON");
    let task = answer["task"]["id"].as_str().expect("a task");
    let bob = provider.token("bob", "");
    let (_, _, body) = call(
        &server.base_url,
        Some(&bob),
        "GetTask",
        &json!({"id": task}),
    );
    assert_eq!(body["error"]["code"], -32001, "{body}");
    let ada = provider.token("ada", "");
    let (_, _, body) = call(
        &server.base_url,
        Some(&ada),
        "GetTask",
        &json!({"id": task}),
    );
    assert_eq!(body["result"]["id"], task, "{body}");
}

/// A static token keeps working beside the provider: the card declares both schemes, each
/// its own requirement (either suffices); the static token is its fingerprint's caller, the
/// provider's token its subject's.
#[test]
fn static_tokens_work_beside_the_provider() {
    let test = "static_tokens_work_beside_the_provider";
    let Some(provider) = Provider::start(test, &[]) else {
        return;
    };
    let server = serve(&provider, &["--token", "static-token-0123456789"]);
    let url = &server.base_url;
    let (_, card) = http_get(&format!("{url}{CARD_PATH}"));
    let card: Value = serde_json::from_slice(&card).expect("card");
    assert_eq!(
        card["securityRequirements"],
        json!([{"schemes": {"bearer": {}}}, {"schemes": {"oidc": {}}}]),
        "{card}"
    );
    let (status, _, by_static) = send(url, Some("static-token-0123456789"));
    assert_eq!(status, 200, "{by_static}");
    let ada = provider.token("ada", "");
    let (status, _, _) = send(url, Some(&ada));
    assert_eq!(status, 200);
    // The static token's task is not ada's.
    let task = by_static["result"]["task"]["id"].as_str().expect("a task");
    let (_, _, body) = call(url, Some(&ada), "GetTask", &json!({"id": task}));
    assert_eq!(body["error"]["code"], -32001, "{body}");
}
