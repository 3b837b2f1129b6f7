//! The forms agent over MCP with the official MCP Python SDK (`mcp` 2.3.0) as the client, and
//! saved profiles managed with `ferry profile`:
//!
//! - over stdio: the SDK starts `ferry mcp` itself, as a coding agent does, and
//!   `interop/python/mcp_forms.py` goes through inspect → fill (auto from a saved profile) →
//!   submit on its own sign-up page;
//! - over Streamable HTTP: the same against `ferry serve`'s `/mcp/forms`, with a bearer token
//!   (a second caller's session sees none of the first one's profiles; a wrong token gets
//!   401);
//! - the tools and their schemas are exactly what the book's "Over MCP" page (docs/src/forms/mcp.md) lists;
//! - `ferry profile set|get|list|delete` over A2A: profiles are per token and survive a
//!   restart on SQLite.
//!
//! Prerequisites, each failing the test when `CI=true` and skipping it loudly otherwise: the
//! MCP SDK's interpreter (`$FERRY_PYTHON_MCP`, else `<workspace>/.venv-mcp`, which
//! `scripts/test.sh` makes from `interop/python/requirements-mcp.txt`) and Chromium.

mod support;

use serde_json::Value;
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use support::browser::{ServerTmp, chromium_or_skip, shop_flags, summary};
use support::{
    COMMAND_TIMEOUT, Sdk, Server, ferry, output_with_timeout, scratch_dir, sdk_python_or_skip,
    workspace_root,
};

/// What the script imports.
const PYTHON_IMPORTS: &str = "mcp, mcp_types, httpx2";
/// The script, relative to the workspace root.
const SCRIPT: &str = "interop/python/mcp_forms.py";
/// Hard limit for one run of the script (which has its own 90 s limit).
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(100);

/// Runs the script with `args`; its summary, or a panic with everything it printed.
fn run_script(python: &Path, args: &[OsString], tmp: &Path, context: &dyn Fn() -> String) -> Value {
    let root = workspace_root();
    let (out, timed_out) = output_with_timeout(
        Command::new(python)
            .arg(SCRIPT)
            .args(args)
            .env("PYTHONUNBUFFERED", "1")
            .env("TMPDIR", tmp)
            .current_dir(&root),
        None,
        SCRIPT_TIMEOUT,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report = |why: &str| {
        format!(
            "{SCRIPT} failed ({why})\n---- stdout ----\n{stdout}\n---- stderr ----\n{stderr}\n{}",
            context()
        )
    };
    if timed_out {
        panic!("{}", report(&format!("killed after {SCRIPT_TIMEOUT:?}")));
    }
    if !out.status.success() {
        panic!("{}", report(&out.status.to_string()));
    }
    let Some(summary) = summary(&stdout) else {
        panic!("{}", report("no JSON summary line"));
    };
    if summary["ok"] != true {
        panic!("{}", report("summary.ok is not true"));
    }
    summary
}

/// The book's page on MCP, which lists the tools.
const TOOLS_PAGE: &str = "docs/src/forms/mcp.md";

/// The tools as the book's "Over MCP" page lists them: the JSON block between the
/// `mcp-tools` markers.
fn readme_tools() -> Value {
    let readme = std::fs::read_to_string(workspace_root().join(TOOLS_PAGE)).expect(TOOLS_PAGE);
    let start = readme
        .find("<!-- mcp-tools:begin -->")
        .expect("the page has the mcp-tools block");
    let end = readme
        .find("<!-- mcp-tools:end -->")
        .expect("the mcp-tools block ends");
    let block = &readme[start..end];
    let json = block
        .split("```json")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a json code block in the mcp-tools block");
    serde_json::from_str(json).expect("the page's tools parse")
}

/// Checks what both transports must have done.
fn check_summary(summary: &Value) {
    assert_eq!(summary["protocol"], "2025-11-25", "{summary}");
    assert_eq!(summary["server"], "ferry-forms", "{summary}");
    assert_eq!(
        summary["tools"],
        readme_tools(),
        "the tools and their schemas differ from the list in {TOOLS_PAGE}"
    );
    for field in ["First name", "Last name", "Email"] {
        assert_eq!(summary["autofilled"][field], "profile:default", "{summary}");
    }
    assert_eq!(
        summary["posted"],
        serde_json::json!(["email", "first", "last", "password", "terms"]),
        "{summary}"
    );
}

#[test]
fn the_python_mcp_client_fills_and_submits_over_stdio() {
    let test = "mcp_cli the_python_mcp_client_fills_and_submits_over_stdio";
    let Some(python) = sdk_python_or_skip(Sdk::Mcp, test, PYTHON_IMPORTS) else {
        return;
    };
    let Some(chromium) = chromium_or_skip(test) else {
        return;
    };
    let tmp = ServerTmp(scratch_dir("mcp-stdio-tmp"));
    let mut args: Vec<OsString> = vec!["stdio".into(), "--".into()];
    args.push(env!("CARGO_BIN_EXE_ferry").into());
    args.push("mcp".into());
    args.extend(shop_flags(&chromium));
    let summary = run_script(&python, &args, &tmp.0, &String::new);
    assert_eq!(summary["mode"], "stdio");
    check_summary(&summary);
}

/// `ferry serve` with [`support::TWO_CALLERS`] and `extra` flags, TMPDIR in `tmp`. Its `base_url` is
/// the forms agent's (`…/agents/forms`: the server has no default agent).
fn two_callers_server(dir: &Path, tmp: &Path, extra: &[OsString]) -> Server {
    let config = support::write(dir, "ferry.toml", support::TWO_CALLERS);
    let mut cmd = ferry();
    cmd.arg("serve")
        .args(["--bind", "127.0.0.1:0", "--config"])
        .arg(&config)
        .args(extra)
        .env("TMPDIR", tmp);
    Server::spawn(cmd)
}

#[test]
fn the_python_mcp_client_fills_and_submits_over_http_with_its_token() {
    let test = "mcp_cli the_python_mcp_client_fills_and_submits_over_http_with_its_token";
    let Some(python) = sdk_python_or_skip(Sdk::Mcp, test, PYTHON_IMPORTS) else {
        return;
    };
    let Some(chromium) = chromium_or_skip(test) else {
        return;
    };
    let tmp = ServerTmp(scratch_dir("mcp-http-tmp"));
    let dir = scratch_dir("mcp-http");
    let server = two_callers_server(&dir, &tmp.0, &shop_flags(&chromium));
    let root = server
        .base_url
        .strip_suffix("/agents/forms")
        .expect("the forms agent's card line");
    let url = format!("{root}/mcp/forms");
    let args: Vec<OsString> = vec![
        "http".into(),
        url.into(),
        "alice-secret-token".into(),
        "--other-token".into(),
        "bob-secret-token".into(),
    ];
    let summary = run_script(&python, &args, &tmp.0, &|| {
        format!("---- ferry serve ----\n{}", server.output())
    });
    assert_eq!(summary["mode"], "http");
    check_summary(&summary);
    let log = server.output();
    assert!(
        !log.contains("alice-secret-token") && !log.contains("bob-secret-token"),
        "a token reached the log:\n{log}"
    );
}

/// Runs `ferry profile ARGS` against the agent at `url` with `token`; (exit code, stdout,
/// stderr).
fn profile(url: &str, token: &str, args: &[&str]) -> (i32, String, String) {
    let mut cmd = ferry();
    cmd.arg("profile")
        .args(args.iter().take(1))
        .arg(url)
        .args(args.iter().skip(1))
        .args(["--insecure-allow-private"])
        .env("FERRY_TOKEN", token);
    let (out, timed_out) = output_with_timeout(&mut cmd, None, COMMAND_TIMEOUT);
    assert!(!timed_out, "ferry profile {args:?} timed out");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn ferry_profile_keeps_each_callers_profiles_apart_and_durable() {
    let dir = scratch_dir("profile-cli");
    let tmp = scratch_dir("profile-cli-tmp");
    let store = format!("sqlite:{}", dir.join("ferry.db").display());
    let flags: Vec<OsString> = vec!["--store".into(), store.clone().into()];
    let server = two_callers_server(&dir, &tmp, &flags);
    let url = server.base_url.clone();
    let alice = "alice-secret-token";
    let bob = "bob-secret-token";

    let (code, out, err) = profile(
        &url,
        alice,
        &[
            "set",
            "home",
            "given-name=Ada",
            "family-name=Lovelace",
            "cc-number=4111 1111 1111 1111",
            "--cards",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.trim(), "saved home (version 1, 3 value(s), cards)");
    let (code, out, err) = profile(&url, alice, &["set", "home", "--unset", "family-name"]);
    assert_eq!(
        (code, out.trim()),
        (0, "saved home (version 2, 2 value(s), cards)"),
        "{err}"
    );
    let (code, _, err) = profile(&url, alice, &["set", "home", "current-password=hunter2"]);
    assert_eq!(code, 1, "a password is refused");
    assert!(err.contains("never keep passwords"), "{err}");

    // Bob sees none of it.
    let (code, out, _) = profile(&url, bob, &["list"]);
    assert_eq!((code, out.trim()), (0, "no profiles"));
    let (code, _, err) = profile(&url, bob, &["get", "home"]);
    assert_eq!(code, 1);
    assert!(err.contains("no profile named \"home\""), "{err}");
    let (code, _, _) = profile(&url, bob, &["delete", "home"]);
    assert_eq!(code, 1, "bob cannot delete alice's profile");

    // Alice's survives a restart of the server on the same SQLite file.
    drop(server);
    let server = two_callers_server(&dir, &tmp, &flags);
    let url = server.base_url.clone();
    let (code, out, err) = profile(&url, alice, &["get", "home", "-o", "json"]);
    assert_eq!(code, 0, "{err}");
    let got: Value = serde_json::from_str(out.trim()).expect("json");
    assert_eq!(got["profile"]["values"]["given-name"], "Ada");
    assert_eq!(
        got["profile"]["values"]["cc-number"], "•••• 1111",
        "card numbers are shown masked"
    );
    assert_eq!(got["profile"]["version"], 2);
    let (code, out, _) = profile(&url, alice, &["delete", "home"]);
    assert_eq!((code, out.trim()), (0, "deleted home"));
    let (_, out, _) = profile(&url, alice, &["list"]);
    assert_eq!(out.trim(), "no profiles");
    let log = server.output();
    assert!(
        !log.contains("4111"),
        "a card number reached the log:\n{log}"
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

/// `/mcp` sits behind the front door's `Origin` check, as the MCP transport asks: a page of
/// the server's own origin (or one `--allowed-origin` names) initializes a session and may
/// read the answer (CORS); any other origin, and `null`, is refused with 403 before the MCP
/// server sees it.
#[test]
fn mcp_accepts_the_servers_own_origin_and_refuses_others() {
    let tmp = ServerTmp(scratch_dir("mcp-origin-tmp"));
    let dir = scratch_dir("mcp-origin");
    let extra: Vec<OsString> = vec!["--allowed-origin".into(), "https://app.example.com".into()];
    let server = two_callers_server(&dir, &tmp.0, &extra);
    let root = server
        .base_url
        .strip_suffix("/agents/forms")
        .expect("the forms agent's card line");
    let url = format!("{root}/mcp/forms");
    let own = root.to_owned();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"origin-test","version":"1"}}}"#;
    let post = |origin: &str| {
        support::http_request_with_headers(
            "POST",
            &url,
            &[
                ("Authorization", "Bearer alice-secret-token"),
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("Origin", origin),
            ],
            init,
        )
    };
    for origin in [own.as_str(), "https://app.example.com"] {
        let (status, headers, body) = post(origin);
        assert_eq!(status, 200, "{origin}: {}", String::from_utf8_lossy(&body));
        assert!(
            headers.contains(&format!("access-control-allow-origin: {origin}")),
            "{origin}: {headers}"
        );
        assert!(
            headers.contains("mcp-session-id:"),
            "a session began: {headers}"
        );
    }
    for origin in ["http://evil.example", "null", "http://localhost:1"] {
        let (status, headers, body) = post(origin);
        let body = String::from_utf8_lossy(&body);
        assert_eq!(status, 403, "{origin}: {body}");
        assert!(body.contains("ORIGIN_NOT_ALLOWED"), "{origin}: {body}");
        assert!(!headers.contains("mcp-session-id:"), "{origin}: {headers}");
    }
    // A rebinding page: its own name for this address, in Host and in Origin.
    let addr = root.trim_start_matches("http://");
    let port = addr.rsplit(':').next().expect("a port");
    let answer = raw_post(
        addr,
        &format!(
            "POST /mcp/forms HTTP/1.0\r\nHost: evil.example:{port}\r\nOrigin: http://evil.example:{port}\r\n\
             Authorization: Bearer alice-secret-token\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{init}",
            init.len()
        ),
    );
    assert!(answer.starts_with("HTTP/1.0 403"), "{answer}");
    assert!(
        !answer.to_lowercase().contains("mcp-session-id:"),
        "{answer}"
    );
}

/// Sends `request` as written (its own Host) to `addr`; the whole answer.
fn raw_post(addr: &str, request: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .expect("a timeout");
    stream.write_all(request.as_bytes()).expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    answer
}
