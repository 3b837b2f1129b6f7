//! `ferry serve --config FILE` with `[[agents]]`: several agents from one file, the `exposed`
//! allowlist and `--expose`, scoped tokens, and the official Python SDK client talking to each
//! exposed agent (`interop/python/hosting_client.py`).
//!
//! The Python part needs the interpreter of `interop_python.rs` (`$FERRY_PYTHON` or
//! `<workspace>/.venv`); without it that test skips loudly (and fails in CI).

mod support;

use std::time::Duration;
use support::{
    CARD_PATH, Server, ferry, http_get, http_request, output_with_timeout, python_or_skip,
    run_script, scratch_dir, text, write,
};

/// How long the Python client may take.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(60);

/// Three agents of three kinds; `forms` is not exposed. The exec agent shouts its input back.
const THREE_AGENTS: &str = r#"
exposed = ["echo", "shout"]

[[agents]]
id = "forms"
kind = "forms"
allow_domains = ["example.com"]

[[agents]]
id = "echo"
kind = "echo"

[[agents]]
id = "shout"
kind = "exec"
command = ["tr", "a-z", "A-Z"]
max_in_flight = 4
"#;

/// The server's root, from the first card line (`…/agents/{id}/.well-known/agent-card.json`).
fn root_of(server: &Server) -> String {
    match server.base_url.split_once("/agents/") {
        Some((root, _)) => root.to_owned(),
        None => server.base_url.clone(),
    }
}

fn serve_config(name: &str, config: &str, extra: &[&str]) -> Server {
    let dir = scratch_dir(name);
    let file = write(&dir, "ferry.toml", config);
    let mut args = vec![
        "--config",
        file.to_str().expect("utf-8"),
        "--bind",
        "127.0.0.1:0",
    ];
    args.extend_from_slice(extra);
    Server::start(&args)
}

fn json(body: &[u8]) -> serde_json::Value {
    serde_json::from_slice(body)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(body)))
}

/// The exposed agents have their cards and are listed; the one not exposed is a 404 like any
/// unknown path, card and interfaces alike.
#[test]
fn three_agents_from_one_config_two_exposed() {
    let server = serve_config("agents-three", THREE_AGENTS, &[]);
    let root = root_of(&server);
    assert_eq!(
        server.base_url,
        format!("{root}/agents/echo"),
        "the first card line is the first exposed agent's"
    );
    for (id, name) in [("echo", "echo"), ("shout", "tr")] {
        let (status, body) = http_get(&format!("{root}/agents/{id}{CARD_PATH}"));
        assert_eq!(status, 200, "{id}: {}", text(&body));
        let card = json(&body);
        assert_eq!(card["name"], name, "{id}: {card}");
        assert_eq!(
            card["supportedInterfaces"][0]["url"],
            format!("{root}/agents/{id}/jsonrpc")
        );
    }
    for path in [
        format!("/agents/forms{CARD_PATH}"),
        "/agents/forms/jsonrpc".to_owned(),
        CARD_PATH.to_owned(),
    ] {
        let (status, _) = http_get(&format!("{root}{path}"));
        assert_eq!(status, 404, "{path}: not exposed (no default agent)");
    }
    let (status, body) = http_get(&format!("{root}/agents"));
    assert_eq!(status, 200);
    let ids: Vec<String> = json(&body)["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .map(|a| a["id"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(ids, ["echo", "shout"]);
}

/// The official Python SDK client talks to each exposed agent over both HTTP bindings, and a
/// task id of one agent is TaskNotFoundError at the other.
#[test]
fn the_python_sdk_talks_to_each_exposed_agent() {
    let test = "agents_cli the_python_sdk_talks_to_each_exposed_agent";
    let Some(python) = python_or_skip(test, "a2a.client, a2a.types.a2a_pb2") else {
        return;
    };
    let server = serve_config("agents-python", THREE_AGENTS, &[]);
    let root = root_of(&server);
    for binding in ["JSONRPC", "HTTP+JSON"] {
        let echo = format!("{root}/agents/echo=hello ferry");
        let shout = format!("{root}/agents/shout=HELLO FERRY");
        let run = run_script(
            &python,
            "interop/python/hosting_client.py",
            ["--binding", binding, "--agent", &echo, "--agent", &shout],
            SCRIPT_TIMEOUT,
        );
        run.assert_passed(&format!("{test} over {binding}"), &server);
        assert!(run.stdout.contains("PASS"), "{}", run.stdout);
    }
}

/// `--expose` replaces the file's list: only the named agent is served.
#[test]
fn expose_flag_replaces_the_allowlist() {
    let server = serve_config("agents-expose", THREE_AGENTS, &["--expose", "shout"]);
    let root = root_of(&server);
    assert_eq!(server.base_url, format!("{root}/agents/shout"));
    let (status, _) = http_get(&format!("{root}/agents/echo{CARD_PATH}"));
    assert_eq!(status, 404, "echo is no longer exposed");
    let (status, _) = http_get(&format!("{root}/agents/shout{CARD_PATH}"));
    assert_eq!(status, 200);
}

/// Tokens scoped to agents, from the file: the partner's token reaches `echo` and is refused
/// at `shout` with 403 AGENT_NOT_ALLOWED; `GET /agents` lists only what the token reaches;
/// the default agent answers at the root.
#[test]
fn scoped_tokens_from_the_config_file() {
    let config = format!(
        "token = \"full-token-0123456789\"\ndefault_agent = \"echo\"\n{THREE_AGENTS}\n[[scoped_tokens]]\ntoken = \"partner-token-0123456789\"\nagents = [\"echo\"]\n"
    );
    let server = serve_config("agents-scoped", &config, &[]);
    let root = root_of(&server);
    assert_eq!(
        server.base_url, root,
        "the default agent's root card comes first"
    );
    let partner = [("Authorization", "Bearer partner-token-0123456789")];
    let send = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}"#;
    let a2a = [("A2A-Version", "1.0"), partner[0]];
    let (status, body) = http_request("POST", &format!("{root}/agents/echo/jsonrpc"), &a2a, send);
    assert_eq!(status, 200, "{}", text(&body));
    assert_eq!(
        json(&body)["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    let (status, body) = http_request("POST", &format!("{root}/jsonrpc"), &a2a, send);
    assert_eq!(
        status,
        200,
        "the default agent at the root: {}",
        text(&body)
    );
    let (status, body) = http_request("POST", &format!("{root}/agents/shout/jsonrpc"), &a2a, send);
    assert_eq!(status, 403, "{}", text(&body));
    let error = json(&body);
    assert_eq!(
        error["error"]["details"][0]["reason"], "AGENT_NOT_ALLOWED",
        "{error}"
    );
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("'shout'"),
        "{error}"
    );
    let (status, body) = http_request("GET", &format!("{root}/agents"), &partner, "");
    assert_eq!(status, 200);
    let listed = json(&body);
    assert_eq!(
        listed["agents"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
    assert_eq!(listed["agents"][0]["id"], "echo");
    assert_eq!(listed["agents"][0]["default"], true);
    let (status, _) = http_get(&format!("{root}/agents"));
    assert_eq!(status, 401, "the list needs a token");
}

/// Mistakes in the file stop `ferry serve` before it listens, saying what is wrong.
#[test]
fn configuration_mistakes_are_refused_at_start() {
    let cases = [
        (
            "[[agents]]\nid = \"a\"\nkind = \"robot\"\n",
            &[][..],
            "unknown agent kind",
        ),
        (THREE_AGENTS, &["--expose", "nobody"][..], "\"nobody\""),
        (
            "[[scoped_tokens]]\ntoken = \"t\"\nagents = [\"nobody\"]\n[[agents]]\nid = \"a\"\nkind = \"echo\"\n",
            &[][..],
            "\"nobody\"",
        ),
        (
            "[[agents]]\nid = \"a\"\nkind = \"echo\"\n",
            &["--agent", "echo"][..],
            "--agent",
        ),
        ("", &["--expose", "a"][..], "there are none"),
    ];
    for (config, extra, expected) in cases {
        let dir = scratch_dir("agents-mistake");
        let file = write(&dir, "ferry.toml", config);
        let (out, timed_out) = output_with_timeout(
            ferry()
                .args(["serve", "--config"])
                .arg(&file)
                .args(["--bind", "127.0.0.1:0"])
                .args(extra),
            None,
            Duration::from_secs(30),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !timed_out && !out.status.success(),
            "{config} {extra:?}: {stderr}"
        );
        assert!(stderr.contains(expected), "{config} {extra:?}: {stderr}");
    }
}
