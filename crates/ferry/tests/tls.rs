//! TLS served by ferry (`--tls-cert/--tls-key`) and mutual TLS (`--tls-client-ca`): `ferry
//! send --ca-file` and the official Python SDK over https on all three bindings; a client
//! certificate as the only credential, its name the caller (each certificate its own tasks);
//! a connection without a certificate, or with one of another CA, refused at the handshake;
//! a renewed certificate served without a restart.

mod support;

use serde_json::Value;
use std::process::Output;
use std::time::Duration;
use support::pki::{Ca, Pair};
use support::{Server, ferry, run_script, run_with_timeout, s, scratch_dir, text, wait_for_log};

/// Limit for one `ferry` command.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);

/// `ferry serve --agent echo` over TLS with `server`'s pair, and `extra` flags.
fn serve_tls(server: &Pair, extra: &[&str]) -> Server {
    let mut args = vec![
        "--agent",
        "echo",
        "--bind",
        "127.0.0.1:0",
        "--tls-cert",
        s(&server.cert),
        "--tls-key",
        s(&server.key),
    ];
    args.extend_from_slice(extra);
    Server::start(args)
}

/// `ferry ARGS`.
fn run(args: &[&str]) -> Output {
    run_with_timeout(ferry().args(args), None, RUN_TIMEOUT)
}

/// `ferry send URL hi --binding B -o json` with `extra` flags: the answer, or what failed.
fn send(url: &str, binding: &str, extra: &[&str]) -> Result<Value, String> {
    let mut args = vec![
        "send",
        url,
        "hi",
        "--binding",
        binding,
        "-o",
        "json",
        "--retries",
        "0",
    ];
    args.extend_from_slice(extra);
    let out = run(&args);
    if out.status.success() {
        Ok(serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("{e}: {}", text(&out.stdout)))?)
    } else {
        Err(text(&out.stderr))
    }
}

/// The CLI names of the bindings.
const BINDINGS: [&str; 3] = ["jsonrpc", "rest", "grpc"];

#[test]
fn ferry_send_over_https_on_every_binding() {
    let dir = scratch_dir("tls-send");
    let ca = Ca::new(&dir, "ca");
    let server = serve_tls(&ca.server("server"), &[]);
    let url = &server.base_url;
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    for binding in BINDINGS {
        let answer = send(url, binding, &["--ca-file", s(&ca.cert)])
            .unwrap_or_else(|e| panic!("{binding}: {e}\n{}", server.output()));
        assert_eq!(
            answer["task"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{binding}: {answer}"
        );
        let refused =
            send(url, binding, &[]).expect_err("the test CA is not trusted without --ca-file");
        assert!(
            refused.to_lowercase().contains("certificate"),
            "{binding}: {refused}"
        );
    }
    // Plain http to the TLS port is no HTTP at all.
    let plain = url.replace("https://", "http://");
    let refused = send(&plain, "jsonrpc", &[]).expect_err("plain http");
    assert!(!refused.is_empty());
}

#[test]
fn the_python_sdk_calls_over_https_on_every_binding() {
    let test = "the_python_sdk_calls_over_https_on_every_binding";
    let Some(python) = support::python_or_skip(test, "a2a.client, grpc.aio") else {
        return;
    };
    let dir = scratch_dir("tls-sdk");
    let ca = Ca::new(&dir, "ca");
    let server = serve_tls(&ca.server("server"), &[]);
    for binding in ["JSONRPC", "HTTP+JSON", "GRPC"] {
        let run = run_script(
            &python,
            "interop/python/interop_client.py",
            [
                "--base-url",
                &server.base_url,
                "--binding",
                binding,
                "--scenario",
                "echo",
                "--ca-file",
                s(&ca.cert),
            ],
            Duration::from_secs(90),
        );
        run.assert_passed(&format!("{test} over {binding}"), &server);
    }
}

/// `--tls-client-ca` (required): a certificate of the CA is the credential, and its common
/// name the caller — another certificate of the same CA is another caller, who does not see
/// the first one's task; no certificate, or one of another CA, fails the handshake.
#[test]
fn client_certificates_are_the_callers() {
    let dir = scratch_dir("tls-mutual");
    let ca = Ca::new(&dir, "ca");
    let robot = ca.client("robot", "robot-1");
    let other_robot = ca.client("robot2", "robot-2");
    let stranger = Ca::new(&dir, "stranger").client("intruder", "robot-1");
    let server = serve_tls(&ca.server("server"), &["--tls-client-ca", s(&ca.cert)]);
    let url = &server.base_url;
    let trust = ["--ca-file", s(&ca.cert)];
    fn as_pair<'a>(trust: &[&'a str], p: &'a Pair) -> Vec<&'a str> {
        let mut flags = trust.to_vec();
        flags.extend(["--client-cert", s(&p.cert), "--client-key", s(&p.key)]);
        flags
    }
    for binding in BINDINGS {
        let answer = send(url, binding, &as_pair(&trust, &robot))
            .unwrap_or_else(|e| panic!("{binding}: {e}\n{}", server.output()));
        assert_eq!(
            answer["task"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{answer}"
        );
        let task = answer["task"]["id"].as_str().expect("an id").to_owned();

        let get = |pair: &Pair| {
            let mut args = vec![
                "task",
                "get",
                url,
                &task,
                "--binding",
                binding,
                "-o",
                "json",
            ];
            let flags = as_pair(&trust, pair);
            args.extend(flags.iter().copied());
            run(&args)
        };
        assert!(
            get(&robot).status.success(),
            "{binding}: robot-1 reads its task"
        );
        let other = get(&other_robot);
        assert!(
            !other.status.success(),
            "{binding}: robot-2 does not see robot-1's task"
        );
        assert!(
            text(&other.stderr).to_lowercase().contains("not found"),
            "{binding}: {}",
            text(&other.stderr)
        );

        let without = send(url, binding, &trust).expect_err("no client certificate");
        let stranger_refused =
            send(url, binding, &as_pair(&trust, &stranger)).expect_err("another CA");
        for refused in [without, stranger_refused] {
            assert!(
                refused.contains("cannot reach the agent: tls"),
                "{binding}: refused at the handshake, before any HTTP: {refused}"
            );
        }
    }
}

/// `client_auth = "optional"`: the probes answer without a certificate, the A2A routes want
/// a certificate or a token.
#[test]
fn optional_client_certificates_leave_the_probes_open() {
    let dir = scratch_dir("tls-optional");
    let ca = Ca::new(&dir, "ca");
    let robot = ca.client("robot", "robot-1");
    let server = serve_tls(
        &ca.server("server"),
        &[
            "--tls-client-ca",
            s(&ca.cert),
            "--tls-client-auth",
            "optional",
        ],
    );
    let url = &server.base_url;
    let trust = ["--ca-file", s(&ca.cert)];
    let refused = send(url, "jsonrpc", &trust).expect_err("neither certificate nor token");
    assert!(refused.contains("401"), "{refused}");
    let mut with_cert = trust.to_vec();
    with_cert.extend([
        "--client-cert",
        s(&robot.cert),
        "--client-key",
        s(&robot.key),
    ]);
    send(url, "jsonrpc", &with_cert).expect("a certificate suffices");
    assert_probe_answers(url, &ca);
}

/// GET /healthz over TLS without a client certificate answers 200.
fn assert_probe_answers(url: &str, ca: &Ca) {
    let probe = ferry_net::Url::parse(&format!("{url}/healthz")).expect("a URL");
    let client = ferry_net::SafeClientBuilder::for_given_url(&probe, false)
        .add_root_certificate(ca.der.clone())
        .build()
        .expect("a client");
    let status = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(client.get(&probe, "application/json"))
        .expect("the probe answers")
        .status();
    assert_eq!(status, 200);
}

/// The certificate files change: the server reads them again (within its reload interval,
/// here 1 s) and serves the new certificate to new connections, without a restart.
#[test]
fn a_renewed_certificate_is_served_without_a_restart() {
    let dir = scratch_dir("tls-reload");
    let old_ca = Ca::new(&dir, "old-ca");
    let new_ca = Ca::new(&dir, "new-ca");
    let served = old_ca.server("server");
    let config = support::write(
        &dir,
        "ferry.toml",
        &format!(
            "[tls]\ncert = \"{}\"\nkey = \"{}\"\nreload_secs = 1\n",
            served.cert.display(),
            served.key.display()
        ),
    );
    let server = Server::start([
        "--agent",
        "echo",
        "--bind",
        "127.0.0.1:0",
        "--config",
        s(&config),
    ]);
    let url = &server.base_url;
    send(url, "jsonrpc", &["--ca-file", s(&old_ca.cert)]).expect("the old certificate");
    let renewed = new_ca.server("renewed");
    std::fs::copy(&renewed.key, &served.key).expect("replace the key");
    std::fs::copy(&renewed.cert, &served.cert).expect("replace the certificate");
    wait_for_log(
        &server.log,
        "reloaded the TLS certificate",
        Duration::from_secs(30),
    );
    send(url, "grpc", &["--ca-file", s(&new_ca.cert)]).expect("the renewed certificate");
    let refused =
        send(url, "rest", &["--ca-file", s(&old_ca.cert)]).expect_err("no longer the old one");
    assert!(refused.to_lowercase().contains("certificate"), "{refused}");
}
