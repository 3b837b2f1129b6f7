//! `ferry serve` as a user runs it: configuration precedence (flags > `FERRY_*` environment >
//! `--config` file > defaults), `${ENV}` interpolation, unknown keys, redaction in
//! `--print-config`, refusal to listen off loopback without a token, and a clean exit 0 on
//! SIGTERM.

mod support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use support::ferry;

/// Writes `text` to a fresh file in the target directory and returns its path.
fn config_file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(format!("{name}-{}.toml", std::process::id()));
    std::fs::write(&path, text).expect("write the config file");
    path
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("ferry runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn flags_beat_environment_beat_file_beat_defaults() {
    let file = config_file(
        "precedence",
        "max_streams = 3\nmax_in_flight = 7\nrate_limit_per_sec = 9\n",
    );
    let o = run(ferry()
        .args(["serve", "--print-config", "--config"])
        .arg(&file)
        .args(["--max-streams", "5"])
        .env("FERRY_MAX_STREAMS", "4")
        .env("FERRY_MAX_IN_FLIGHT", "8"));
    assert!(o.status.success(), "{}", stderr(&o));
    let shown = stdout(&o);
    assert!(
        shown.contains("max_streams = 5"),
        "flag wins over env and file: {shown}"
    );
    assert!(
        shown.contains("max_in_flight = 8"),
        "env wins over file: {shown}"
    );
    assert!(
        shown.contains("rate_limit_per_sec = 9"),
        "file wins over defaults: {shown}"
    );
    assert!(
        shown.contains("task_capacity = 10000"),
        "defaults fill the rest: {shown}"
    );
}

#[test]
fn interpolation_and_redaction() {
    let file = config_file("interp", "token = \"${FERRY_IT_SECRET}\"\n");
    let o = run(ferry()
        .args(["serve", "--print-config", "--config"])
        .arg(&file)
        .env("FERRY_IT_SECRET", "hunter2"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !stdout(&o).contains("hunter2"),
        "the token is never printed: {}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains("token = \"<redacted>\""),
        "{}",
        stdout(&o)
    );

    let o = run(ferry()
        .args(["serve", "--print-config", "--config"])
        .arg(&file));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("FERRY_IT_SECRET is not set"),
        "names the variable: {}",
        stderr(&o)
    );
}

#[test]
fn a_store_url_is_shown_and_refused_without_its_password() {
    let file = config_file(
        "store",
        "store = \"postgres://ferry:${FERRY_IT_DB_PASSWORD}@127.0.0.1:1/tasks\"\n",
    );
    let o = run(ferry()
        .args(["serve", "--print-config", "--config"])
        .arg(&file)
        .env("FERRY_IT_DB_PASSWORD", "hunter3"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains("hunter3"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("store = \"postgres://ferry:***@127.0.0.1:1/tasks\""),
        "{}",
        stdout(&o)
    );

    // Nothing listens on port 1: a clear start-up error, promptly, still without the password.
    let o = run(ferry()
        .args(["serve", "--bind", "127.0.0.1:0", "--config"])
        .arg(&file)
        .env("FERRY_IT_DB_PASSWORD", "hunter3"));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("cannot open the task store postgres://ferry:***@127.0.0.1:1/tasks"),
        "{err}"
    );
    assert!(!err.contains("hunter3"), "{err}");
    assert!(!stdout(&o).contains("agent card"), "it never listened");

    let o = run(ferry().args(["serve", "--bind", "127.0.0.1:0", "--store", "mysql://x/y"]));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("mysql"), "{}", stderr(&o));
}

#[test]
fn unknown_keys_are_errors() {
    let file = config_file("unknown", "max_strems = 3\n");
    let o = run(ferry()
        .args(["serve", "--print-config", "--config"])
        .arg(&file));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("max_strems"),
        "names the key: {}",
        stderr(&o)
    );
}

#[test]
fn the_forms_agent_reads_its_table_of_the_config_file_and_flags_win() {
    let file = config_file(
        "forms",
        "[forms]\nallow_domains = [\"shop.example\"]\nisolation = \"context\"\nmax_contexts = 8\nresolve = [\"shop.example=10.0.0.5\"]\nbrowser = \"cdp:buyer\"\n",
    );
    let o = run(ferry()
        .args(["serve", "--print-config", "--config"])
        .arg(&file)
        .args(["--allow-domain", "extra.example", "--max-contexts", "2"]));
    assert!(o.status.success(), "{}", stderr(&o));
    let shown = stdout(&o);
    let forms = shown.split("[forms]").nth(1).unwrap_or_default();
    for expected in [
        "\"shop.example\"",
        "\"extra.example\"",
        "isolation = \"context\"",
        "max_contexts = 2",
        "resolve = [\"shop.example=10.0.0.5\"]",
        "browser = \"cdp:buyer\"",
        "idle_secs = 300",
    ] {
        assert!(forms.contains(expected), "{expected} in [forms]: {shown}");
    }
    // Bring-your-own-browser needs the cdp-config extension: it is switched on.
    assert!(shown.contains("cdp_config = true"), "{shown}");

    for (name, text, says) in [
        (
            "forms-typo",
            "[forms]\nallow_domain = [\"x\"]\n",
            "allow_domain",
        ),
        (
            "forms-bad-domain",
            "[forms]\nallow_domains = [\"bad domain/\"]\n",
            "bad domain/",
        ),
        (
            "forms-bad-resolve",
            "[forms]\nresolve = [\"shop.example\"]\n",
            "NAME=ADDR",
        ),
        (
            "forms-bad-browser",
            "[forms]\nbrowser = \"chrome\"\n",
            "cdp:NAME",
        ),
    ] {
        let file = config_file(name, text);
        let o = run(ferry()
            .args(["serve", "--print-config", "--config"])
            .arg(&file));
        assert_eq!(o.status.code(), Some(1), "{name}: {}", stdout(&o));
        assert!(stderr(&o).contains(says), "{name}: {}", stderr(&o));
    }
}

#[test]
fn no_token_no_listening_off_loopback() {
    let o = run(ferry().args(["serve", "--bind", "0.0.0.0:0"]));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("without a token"),
        "says why: {}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("FERRY_TOKEN"),
        "says how: {}",
        stderr(&o)
    );
}

#[cfg(unix)]
#[test]
fn sigterm_exits_zero() {
    let mut child = ferry()
        .args(["serve", "--bind", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("ferry starts");
    let out = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(out)
        .read_line(&mut line)
        .expect("the card line");
    assert!(line.starts_with("agent card: http://127.0.0.1:"), "{line}");
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert_eq!(status.code(), Some(0), "SIGTERM is a clean exit");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "ferry did not exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The kernel's word on whether a process may get transparent huge pages
/// (`THP_enabled` in its status), or None on a kernel that does not say (before 5.0).
#[cfg(target_os = "linux")]
fn huge_pages_enabled(pid: u32) -> Option<bool> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("its status");
    let line = status.lines().find(|l| l.starts_with("THP_enabled:"))?;
    Some(line.trim_end().ends_with('1'))
}

/// A served process asks for no transparent huge pages (mimalloc's arenas would otherwise
/// turn each partly used buffer into resident 2 MiB), unless MIMALLOC_ALLOW_THP chooses.
#[cfg(target_os = "linux")]
#[test]
fn a_server_holds_no_huge_pages_unless_asked() {
    for (allow, expected) in [(None, false), (Some("1"), true)] {
        let mut command = ferry();
        command
            .args(["serve", "--bind", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .env_remove("MIMALLOC_ALLOW_THP");
        if let Some(allow) = allow {
            command.env("MIMALLOC_ALLOW_THP", allow);
        }
        let mut child = command.spawn().expect("ferry starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the card line");
        let enabled = huge_pages_enabled(child.id());
        child.kill().expect("kill");
        child.wait().expect("wait");
        let missing = enabled
            .is_none()
            .then(|| "this kernel does not show THP_enabled".to_owned());
        if !ferry_testkit::required_or_skip("a_server_holds_no_huge_pages_unless_asked", missing) {
            return;
        }
        assert_eq!(enabled, Some(expected), "MIMALLOC_ALLOW_THP={allow:?}");
    }
}
