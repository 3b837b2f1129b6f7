//! Helpers shared by the `ferry` binary's integration tests (`mod support;` in each test file):
//! running the binary with a time limit, starting `ferry serve` on a free port, plain HTTP GETs
//! with the standard library, scratch directories, and finding the Python interpreter of the
//! interop tests (`$FERRY_PYTHON`, else `<workspace>/.venv/bin/python`; skipped loudly outside
//! CI, a failure when `CI=true`), and a schema of one's own in the machine's PostgreSQL (the
//! same rule when it is not there).
//!
//! Every test binary uses a different subset of these helpers, hence the `dead_code` allowance.
#![allow(dead_code)]

pub(crate) mod balancer;
pub(crate) mod browser;
pub(crate) mod oidc;
pub(crate) mod otlp;
pub(crate) mod pki;

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdout, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// Prefix of the stdout line `ferry serve` prints once it is listening.
pub(crate) const CARD_LINE_PREFIX: &str = "agent card: ";
/// Suffix of that line: the well-known agent card path.
pub(crate) const CARD_PATH: &str = "/.well-known/agent-card.json";
/// Where `ferry serve` publishes its signing keys.
pub(crate) const JWKS_PATH: &str = "/.well-known/jwks.json";
/// How long the server may take to print its card line.
pub(crate) const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// Limit for one short `ferry` command (`card …`, `keygen`).
pub(crate) const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
/// Limit for one HTTP request to a local server.
pub(crate) const HTTP_TIMEOUT: Duration = Duration::from_secs(10);

/// The workspace root (`crates/ferry/../../`).
pub(crate) fn workspace_root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../"))
}

/// Seconds since the Unix epoch, for the times in tokens and signatures.
pub(crate) fn unix_now() -> i64 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after the epoch")
        .as_secs();
    i64::try_from(secs).expect("in range")
}

/// True when running in CI (`CI=true`), where a missing prerequisite is a failure.
pub(crate) fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true"))
}

/// The `ferry` binary built by cargo, without any `FERRY_*` variable of the developer's shell.
pub(crate) fn ferry() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ferry"));
    clear_ferry_env(&mut c);
    c
}

/// Removes every `FERRY_*` variable of the test's environment from `c`, so only what a test
/// sets reaches the binary.
pub(crate) fn clear_ferry_env(c: &mut Command) {
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("FERRY_") {
            c.env_remove(k);
        }
    }
}

/// A fresh, empty scratch directory under cargo's target tmpdir, unique to this process and
/// call.
pub(crate) fn scratch_dir(name: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{name}-{}-{n}", std::process::id()));
    // A leftover from an earlier run with the same pid may exist; it is not ours to keep.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a scratch directory");
    dir
}

/// Which official Python SDK an interop test drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Sdk {
    /// `a2a-sdk` 1.3.0: `$FERRY_PYTHON`, else `<workspace>/.venv`.
    V1,
    /// `a2a-sdk` 0.3 (protocol v0.3): `$FERRY_PYTHON_V03`, else `<workspace>/.venv-v03`.
    V03,
    /// The MCP SDK `mcp` 2.3.0: `$FERRY_PYTHON_MCP`, else `<workspace>/.venv-mcp`.
    Mcp,
    /// Google ADK 2.13.0 with its A2A support: `$FERRY_PYTHON_ADK`, else
    /// `<workspace>/.venv-adk`.
    Adk,
}

impl Sdk {
    /// The variable that names its interpreter, and the venv used without it.
    fn location(self) -> (&'static str, &'static str) {
        match self {
            Sdk::V1 => ("FERRY_PYTHON", ".venv"),
            Sdk::V03 => ("FERRY_PYTHON_V03", ".venv-v03"),
            Sdk::Mcp => ("FERRY_PYTHON_MCP", ".venv-mcp"),
            Sdk::Adk => ("FERRY_PYTHON_ADK", ".venv-adk"),
        }
    }
}

/// The Python interpreter of `sdk` if it exists and can `import <imports>`; otherwise the
/// reason why not. Checked once per test binary, SDK and import list.
fn python(sdk: Sdk, imports: &str) -> Result<PathBuf, String> {
    type Checked = HashMap<(Sdk, String), Result<PathBuf, String>>;
    static CHECKED: OnceLock<Mutex<Checked>> = OnceLock::new();
    let mut checked = CHECKED
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let (var, venv) = sdk.location();
    checked
        .entry((sdk, imports.to_owned()))
        .or_insert_with(|| {
            let (python, source) = match std::env::var_os(var) {
                Some(p) if !p.is_empty() => (PathBuf::from(p), format!("${var}")),
                _ => (
                    workspace_root().join(venv).join("bin/python"),
                    format!("the workspace venv {venv}"),
                ),
            };
            let probe = Command::new(&python)
                .args(["-c", &format!("import {imports}")])
                .stdin(Stdio::null())
                .output();
            match probe {
                Ok(out) if out.status.success() => Ok(python),
                Ok(out) => Err(format!(
                    "{} ({source}) cannot `import {imports}`: {}",
                    python.display(),
                    String::from_utf8_lossy(&out.stderr).trim()
                )),
                Err(e) => Err(format!(
                    "{} ({source}) cannot be run: {e}",
                    python.display()
                )),
            }
        })
        .clone()
}

/// Returns an `a2a-sdk` 1.3.0 interpreter that can `import <imports>`, or `None` after
/// printing a `SKIPPED:` notice (panics instead in CI).
pub(crate) fn python_or_skip(test: &str, imports: &str) -> Option<PathBuf> {
    sdk_python_or_skip(Sdk::V1, test, imports)
}

/// [`python_or_skip`] for the SDK `sdk`.
pub(crate) fn sdk_python_or_skip(sdk: Sdk, test: &str, imports: &str) -> Option<PathBuf> {
    let (var, venv) = sdk.location();
    match python(sdk, imports) {
        Ok(p) => Some(p),
        Err(why) if in_ci() => panic!(
            "{test}: Python interop prerequisite missing in CI: {why}. \
             Run scripts/test.sh (creates {venv}) or set {var}."
        ),
        Err(why) => {
            // Written to the real stderr handle, not with `eprintln!`, so that libtest's output
            // capture does not hide the notice of a "passing" test.
            let notice = format!(
                "\n==================== SKIPPED: {test} ====================\n\
                 SKIPPED: Python interop test not run: {why}.\n\
                 SKIPPED: create {venv} with scripts/test.sh, or set {var}.\n\
                 ==========================================================\n"
            );
            // Nothing sensible to do if stderr itself is broken.
            let _ = std::io::stderr().lock().write_all(notice.as_bytes());
            None
        }
    }
}

/// Shared, growing copy of a child's output, for failure messages, and the signal of each
/// new line (for [`wait_for_log`]).
pub(crate) type Log = Arc<(Mutex<String>, std::sync::Condvar)>;

/// Appends a line to a log, tolerating a poisoned lock (a panicking reader thread).
fn push_line(log: &Log, line: &str) {
    let mut buf = log.0.lock().unwrap_or_else(|p| p.into_inner());
    buf.push_str(line);
    buf.push('\n');
    log.1.notify_all();
}

/// Snapshot of a log.
pub(crate) fn read_log(log: &Log) -> String {
    log.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Waits until the log holds `text` (woken by each new line, not by a timer); panics after
/// `limit` with the log.
pub(crate) fn wait_for_log(log: &Log, text: &str, limit: Duration) {
    let buf = log.0.lock().unwrap_or_else(|p| p.into_inner());
    let (buf, waited) = log
        .1
        .wait_timeout_while(buf, limit, |b| !b.contains(text))
        .unwrap_or_else(|p| p.into_inner());
    assert!(
        !waited.timed_out(),
        "no {text:?} in the output within {limit:?}:\n{}",
        *buf
    );
}

/// A running `ferry serve`; killed (and reaped) on drop.
pub(crate) struct Server {
    /// The server process.
    child: Child,
    /// `http://127.0.0.1:PORT`, derived from the card line.
    pub base_url: String,
    /// Everything the server wrote to stdout and stderr so far.
    pub log: Log,
}

impl Drop for Server {
    fn drop(&mut self) {
        // Errors are irrelevant here: the process may already have exited.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Extracts the base URL from a `agent card: http://127.0.0.1:PORT/.well-known/agent-card.json` line.
fn base_url_from_card_line(line: &str) -> Option<String> {
    let url = line.trim().strip_prefix(CARD_LINE_PREFIX)?.trim();
    let base = url.strip_suffix(CARD_PATH)?;
    (base.starts_with("http://") || base.starts_with("https://")).then(|| base.to_owned())
}

impl Server {
    /// Runs `ferry serve <args>` (which should include `--bind 127.0.0.1:0`) and waits for its
    /// card line.
    pub(crate) fn start<I, S>(args: I) -> Server
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = ferry();
        cmd.arg("serve").args(args);
        Server::spawn(cmd)
    }

    /// Runs `ferry serve --agent echo` on a free port, signing its card with the `ferry keygen`
    /// key at `prefix` under `kid`.
    pub(crate) fn start_signed(prefix: &Path, kid: &str) -> Server {
        let key = with_ext(prefix, ".pem");
        Server::start([
            "--agent",
            "echo",
            "--bind",
            "127.0.0.1:0",
            "--sign-key",
            s(&key),
            "--sign-kid",
            kid,
        ])
    }

    /// Runs any server command that prints `agent card: http://127.0.0.1:PORT/.well-known/agent-card.json`
    /// on stdout once it listens (`ferry serve`, `interop/python/sdk_server.py`), and waits for
    /// that line.
    pub(crate) fn spawn(mut cmd: Command) -> Server {
        let shown = format!("{cmd:?}");
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the ferry binary");
        let log: Log = Arc::default();
        let stdout = child.stdout.take().expect("server stdout is piped");
        let stderr = child.stderr.take().expect("server stderr is piped");
        let lines = forward_stdout(stdout, Arc::clone(&log));
        drain_stderr(stderr, Arc::clone(&log));

        // Wrap the child now so it is killed even if we panic below.
        let mut server = Server {
            child,
            base_url: String::new(),
            log,
        };
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(base) = base_url_from_card_line(&line) {
                        server.base_url = base;
                        return server;
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!(
                    "{shown} printed no `{CARD_LINE_PREFIX}…{CARD_PATH}` line within {STARTUP_TIMEOUT:?}; output:\n{}",
                    read_log(&server.log)
                ),
                Err(RecvTimeoutError::Disconnected) => {
                    let status = server.child.wait().expect("wait for the exited server");
                    // Give the stderr reader a moment to collect the last lines.
                    thread::sleep(Duration::from_millis(200));
                    panic!(
                        "{shown} exited ({status}) before printing its card line; output:\n{}",
                        read_log(&server.log)
                    );
                }
            }
        }
    }

    /// The server's process id (for signals).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The value of the metric `name` in the server's `/metrics`.
    pub(crate) fn metric(&self, name: &str) -> u64 {
        let body = text(&self.get_ok("/metrics"));
        body.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {body}"))
    }

    /// Where the server listens (`http://127.0.0.1:PORT`), from its log: its card names its
    /// public URL instead, when it has one.
    pub(crate) fn bound_url(&self) -> String {
        // Logged (stderr) before the card line (stdout), but read apart from it.
        wait_for_log(&self.log, "listening addr=", Duration::from_secs(60));
        let log = self.output();
        let addr = log
            .split("listening addr=")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no listening line in {log}"));
        format!("http://{addr}")
    }

    /// Everything the server printed so far.
    pub(crate) fn output(&self) -> String {
        read_log(&self.log)
    }

    /// `GET base_url + path`; panics unless the answer is 200. Returns the body.
    pub(crate) fn get_ok(&self, path: &str) -> Vec<u8> {
        let (status, body) = http_get(&format!("{}{path}", self.base_url));
        assert_eq!(
            status,
            200,
            "GET {path}: status {status}, body {}\nserver output:\n{}",
            String::from_utf8_lossy(&body),
            self.output()
        );
        body
    }
}

/// Calls `f` with every line of `pipe` (lossily decoded, without the line ending) until EOF.
fn for_each_line(pipe: impl Read, mut f: impl FnMut(String)) {
    let mut reader = BufReader::new(pipe);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf);
                f(line.trim_end_matches(['\r', '\n']).to_owned());
            }
        }
    }
}

/// Reads the server's stdout on a thread: every line goes to the log and to the returned channel.
///
/// The thread keeps draining after the card line is found (the receiver may be gone), so the
/// server never blocks on a full pipe.
fn forward_stdout(stdout: ChildStdout, log: Log) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for_each_line(stdout, |line| {
            push_line(&log, &line);
            // The receiver is dropped once the card line is seen; keep draining anyway.
            let _ = tx.send(line);
        });
    });
    rx
}

/// Reads the server's stderr into the log on a thread, so the pipe never fills up.
fn drain_stderr(stderr: ChildStderr, log: Log) {
    thread::spawn(move || for_each_line(stderr, |line| push_line(&log, &line)));
}

/// How a Python interop script ran: what it printed, how it ended.
pub(crate) struct ScriptRun {
    pub(crate) stdout: String,
    stderr: String,
    status: std::process::ExitStatus,
    timed_out: bool,
}

/// Runs `python script args…` from the workspace root, unbuffered, killed after `limit`.
pub(crate) fn run_script<I, S>(python: &Path, script: &str, args: I, limit: Duration) -> ScriptRun
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let (out, timed_out) = output_with_timeout(
        Command::new(python)
            .arg(script)
            .args(args)
            .env("PYTHONUNBUFFERED", "1")
            .current_dir(workspace_root()),
        None,
        limit,
    );
    ScriptRun {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        status: out.status,
        timed_out,
    }
}

impl ScriptRun {
    /// Asserts the script exited 0 in time; otherwise fails `what` with both of its outputs
    /// and `server`'s log.
    pub(crate) fn assert_passed(&self, what: &str, server: &Server) {
        assert!(
            !self.timed_out && self.status.success(),
            "{what} failed ({}{})\n---- stdout ----\n{}\n---- stderr ----\n{}\n---- server ----\n{}",
            self.status,
            if self.timed_out { ", timed out" } else { "" },
            self.stdout,
            self.stderr,
            server.output()
        );
    }
}

/// Runs `cmd` to completion with `stdin` as its standard input (empty when `None`), killing it
/// after `timeout`; returns its output and whether it timed out.
pub(crate) fn output_with_timeout(
    cmd: &mut Command,
    stdin: Option<&[u8]>,
    timeout: Duration,
) -> (Output, bool) {
    let shown = format!("{cmd:?}");
    let mut child = cmd
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {shown}: {e}"));
    let writer = stdin.map(|bytes| {
        let mut pipe = child.stdin.take().expect("stdin is piped");
        let bytes = bytes.to_vec();
        // A child that exits without reading all of its input closes the pipe: not our error.
        thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        })
    });
    let stdout = read_to_end_on_thread(child.stdout.take().expect("stdout is piped"));
    let stderr = read_to_end_on_thread(child.stderr.take().expect("stderr is piped"));
    let deadline = Instant::now() + timeout;
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("poll the child process") {
            break status;
        }
        if Instant::now() >= deadline {
            timed_out = true;
            // It may have exited in between; either way wait() reaps it.
            let _ = child.kill();
            break child.wait().expect("wait for the killed child process");
        }
        thread::sleep(Duration::from_millis(20));
    };
    if let Some(w) = writer {
        w.join().expect("stdin writer thread panicked");
    }
    let output = Output {
        status,
        stdout: stdout.join().expect("stdout reader thread panicked"),
        stderr: stderr.join().expect("stderr reader thread panicked"),
    };
    (output, timed_out)
}

/// Runs `cmd` like [`output_with_timeout`] but panics if it did not finish in time.
pub(crate) fn run_with_timeout(
    cmd: &mut Command,
    stdin: Option<&[u8]>,
    timeout: Duration,
) -> Output {
    let shown = format!("{cmd:?}");
    let (out, timed_out) = output_with_timeout(cmd, stdin, timeout);
    assert!(
        !timed_out,
        "{shown} was killed after {timeout:?}; stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Reads a pipe to its end on a thread.
fn read_to_end_on_thread(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        // A read error just truncates the diagnostic output.
        let _ = pipe.read_to_end(&mut buf);
        buf
    })
}

/// A plain HTTP/1.0 `GET` of an `http://host:port/path` URL with the standard library (the
/// response body is delimited by the connection closing, so no chunked decoding is needed).
/// Returns the status code and the body; panics on network errors and after [`HTTP_TIMEOUT`].
pub(crate) fn http_get(url: &str) -> (u16, Vec<u8>) {
    http_request("GET", url, &[], "")
}

/// [`http_get`] for any method, with extra `headers` and a JSON `body` (sent with its
/// `Content-Type` and `Content-Length` when not empty).
pub(crate) fn http_request(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Vec<u8>) {
    let mut all = vec![("Accept", "application/json")];
    if !body.is_empty() {
        all.push(("Content-Type", "application/json"));
    }
    all.extend_from_slice(headers);
    let (status, _, body) = http_request_with_headers(method, url, &all, body);
    (status, body)
}

/// One HTTP/1.0 exchange with exactly `headers` (besides `Host` and the body's
/// `Content-Length`); returns the status, the response head (lower-cased) and the body.
pub(crate) fn http_request_with_headers(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, Vec<u8>) {
    let rest = url
        .strip_prefix("http://")
        .unwrap_or_else(|| panic!("not an http:// URL: {url}"));
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let addr = authority
        .to_socket_addrs()
        .unwrap_or_else(|e| panic!("resolve {authority}: {e}"))
        .next()
        .unwrap_or_else(|| panic!("{authority} resolves to nothing"));
    let mut stream = TcpStream::connect_timeout(&addr, HTTP_TIMEOUT)
        .unwrap_or_else(|e| panic!("connect to {addr}: {e}"));
    stream
        .set_read_timeout(Some(HTTP_TIMEOUT))
        .expect("set the read timeout");
    stream
        .set_write_timeout(Some(HTTP_TIMEOUT))
        .expect("set the write timeout");
    let mut head = format!("{method} {path} HTTP/1.0\r\nHost: {authority}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    write!(stream, "{head}\r\n{body}").unwrap_or_else(|e| panic!("send {method} {url}: {e}"));
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .unwrap_or_else(|e| panic!("read the answer to {method} {url}: {e}"));
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| {
            panic!(
                "{method} {url}: no end of headers in {:?}",
                String::from_utf8_lossy(&response)
            )
        });
    let head = String::from_utf8_lossy(&response[..split]).to_lowercase();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{method} {url}: bad status line in {head:?}"));
    (status, head, response[split + 4..].to_vec())
}

/// What the Python interpreter must import to run `interop/python/sdk_server.py`.
pub(crate) const SDK_SERVER_IMPORTS: &str = "a2a.server.routes, starlette, sse_starlette, uvicorn";

/// Starts `interop/python/sdk_server.py --port 0 <extra…>` (a server built with the official
/// Python SDK) once the interpreter can import `imports`, and waits for its card line
/// (printed once every port listens); `None` after a skip notice.
pub(crate) fn spawn_sdk_server(test: &str, imports: &str, extra: &[&str]) -> Option<Server> {
    let python = python_or_skip(test, imports)?;
    let root = workspace_root();
    let script = PathBuf::from("interop/python/sdk_server.py");
    assert!(
        root.join(&script).is_file(),
        "{test}: missing {}",
        root.join(&script).display()
    );
    let mut cmd = Command::new(python);
    cmd.arg(script)
        .args(["--port", "0"])
        .args(extra)
        .env("PYTHONUNBUFFERED", "1")
        .current_dir(root);
    Some(Server::spawn(cmd))
}

/// A path as `&str` for command arguments (scratch paths are UTF-8).
pub(crate) fn s(p: &Path) -> &str {
    p.to_str().expect("scratch paths are UTF-8")
}

/// Bytes as text, for messages and assertions.
pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `prefix` with `ext` appended (`key` + `.pub.pem`), as `ferry keygen --out` names its files.
pub(crate) fn with_ext(prefix: &Path, ext: &str) -> PathBuf {
    let mut p = prefix.as_os_str().to_owned();
    p.push(ext);
    PathBuf::from(p)
}

/// Writes a scratch file and returns its path.
pub(crate) fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write a scratch file");
    path
}

/// Writes a `ferry serve` config file with `signing` keys (`ferry keygen` prefixes and kids)
/// and `announced` public keys, and returns its path.
pub(crate) fn signing_config(
    dir: &Path,
    signing: &[(&Path, &str)],
    announced: &[(&Path, &str)],
) -> PathBuf {
    let entry = |prefix: &Path, ext: &str, kid: &str| {
        format!("{{ key = {:?}, kid = {kid:?} }}", s(&with_ext(prefix, ext)))
    };
    let keys: Vec<String> = signing
        .iter()
        .map(|(p, kid)| entry(p, ".pem", kid))
        .collect();
    let next: Vec<String> = announced
        .iter()
        .map(|(p, kid)| entry(p, ".pub.pem", kid))
        .collect();
    let toml = format!(
        "signing_keys = [{}]\nannounced_keys = [{}]\n",
        keys.join(", "),
        next.join(", ")
    );
    write(dir, "ferry.toml", &toml)
}

/// A schema of its own in the machine's PostgreSQL (127.0.0.1:5432, trust auth, database
/// `test`; `FERRY_TEST_POSTGRES` overrides the URL), dropped with everything in it on drop.
pub(crate) struct PgSchema {
    admin_url: String,
    name: String,
}

impl PgSchema {
    /// A fresh schema, or `None` (skipped loudly) when PostgreSQL or `psql` is not there;
    /// in CI that is a failure.
    pub(crate) fn create_or_skip(test: &str) -> Option<PgSchema> {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let admin_url = std::env::var("FERRY_TEST_POSTGRES")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = format!("ferry_cli_{}_{n}", std::process::id());
        if psql(&admin_url, &format!("CREATE SCHEMA {name}")) {
            return Some(PgSchema { admin_url, name });
        }
        assert!(
            !in_ci(),
            "{test}: PostgreSQL at {admin_url} is not reachable (or psql is missing), and CI needs it"
        );
        eprintln!(
            "SKIPPED {test}: PostgreSQL at {admin_url} is not reachable (or psql is missing)"
        );
        None
    }

    /// Runs `sql` in the schema (`{schema}` in it is replaced by the schema's name).
    pub(crate) fn run(&self, sql: &str) -> bool {
        psql(&self.admin_url, &sql.replace("{schema}", &self.name))
    }

    /// The store URL whose connections use this schema (libpq's `options`).
    pub(crate) fn store_url(&self) -> String {
        let sep = if self.admin_url.contains('?') {
            '&'
        } else {
            '?'
        };
        format!(
            "{}{sep}options=-csearch_path%3D{}",
            self.admin_url, self.name
        )
    }
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        psql(
            &self.admin_url,
            &format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name),
        );
    }
}

/// Runs one statement with `psql`; false when PostgreSQL (or psql) is not there.
fn psql(url: &str, sql: &str) -> bool {
    Command::new("psql")
        .args([url, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql])
        .env("PGOPTIONS", "--client-min-messages=warning")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .is_ok_and(|s| s.success())
}

/// A child process killed (and reaped) on drop.
pub(crate) struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        // It may have exited already.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Spawns `cmd` with its stdout piped and read line by line on a thread: each line arrives on
/// the receiver as it is printed, and the receiver disconnects when stdout closes. stderr is
/// inherited (shown in the test's output on failure).
pub(crate) fn spawn_lines(cmd: &mut Command) -> (Running, mpsc::Receiver<String>) {
    let shown = format!("{cmd:?}");
    let mut child = Running(
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {shown}: {e}")),
    );
    let stdout = child.0.stdout.take().expect("stdout is piped");
    let (tx, lines) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // The test may have given up on the receiver already.
            let _ = tx.send(line);
        }
    });
    (child, lines)
}

/// A server configuration of the MCP tests: the forms agent hosted as `forms`, and two
/// callers, Alice and Bob, each with a token of their own.
pub(crate) const TWO_CALLERS: &str = r#"
[[agents]]
id = "forms"
kind = "forms"

[[scoped_tokens]]
token = "alice-secret-token"
agents = ["forms"]
caller = "alice"

[[scoped_tokens]]
token = "bob-secret-token"
agents = ["forms"]
caller = "bob"
"#;
