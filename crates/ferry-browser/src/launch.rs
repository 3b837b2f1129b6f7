//! Starting a headless Chromium that nobody else can share.
//!
//! Each [`Chromium`] gets a fresh profile directory (mode 0700, removed when it is dropped),
//! the flags of `notes/browser.md` (each explained below), DevTools on a pipe (default) or
//! an ephemeral port on 127.0.0.1, and its own process group. Dropping it, or calling
//! [`Chromium::shutdown`], kills the whole group: killing only the browser's pid would leave
//! its zygotes and renderers behind.
//!
//! **DevTools transport.** A debugging port can be used by any local process to drive the
//! browser and read the conversation's pages, so the default is `--remote-debugging-pipe`:
//! Chromium reads commands from fd 3 and writes to fd 4. Placing pipes on fds 3 and 4
//! usually takes `pre_exec` + `dup2` (`unsafe`, which this workspace forbids); instead the
//! browser is started through `/bin/sh -c 'exec "$@" 3<&0 4>&1 </dev/null >/dev/null'`, so
//! the shell moves our stdin/stdout pipes to fds 3 and 4 and then *becomes* Chromium (same
//! pid, same process group). [`DevToolsTransport::Port`] remains for tools that need a URL;
//! its endpoint is read from the `DevTools listening on ws://…` line on stderr.

use crate::BrowserError;
use crate::CdpError;
use crate::cdp::{self, CdpConnection, CdpEvents};
use std::collections::VecDeque;
use std::ffi::OsString;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStderr, Command};
use tokio::sync::oneshot;

/// How many of Chromium's last stderr lines are kept for error messages.
const STDERR_TAIL_LINES: usize = 20;

/// The line Chromium prints once DevTools accepts connections.
const DEVTOOLS_BANNER: &str = "DevTools listening on ";

/// The shell program that moves the DevTools pipes to fds 3 and 4, then execs Chromium
/// (`$@` is the binary and its arguments).
const PIPE_SHIM: &str = r#"exec "$@" 3<&0 4>&1 </dev/null >/dev/null"#;

/// How a launched browser offers DevTools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum DevToolsTransport {
    /// `--remote-debugging-pipe`: only the launching process can talk to the browser.
    #[default]
    Pipe,
    /// `--remote-debugging-port=0` on 127.0.0.1: any local process can connect. For
    /// debugging and for tools that need a `ws://` or `http://` endpoint.
    Port,
}

/// What to launch and how long to wait for it.
///
/// `Default`: the discovered binary ([`crate::find_chromium`]), no extra arguments,
/// DevTools on a pipe, a 20-second start-up timeout (a cold start takes 0.35–1.2 s on a
/// loaded 2-core box).
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// The binary to run; `None` means [`crate::find_chromium`]`(None)`.
    pub chrome_path: Option<PathBuf>,
    /// Arguments appended after ferry's own flags (the proxy flags, test-only switches).
    pub extra_args: Vec<OsString>,
    /// How long to wait for DevTools to come up before giving up (default 60 s: a cold
    /// Chromium on a busy two-core machine was seen to print nothing for over 20 s).
    pub startup_timeout: Duration,
    /// Pipe (default) or loopback port.
    pub devtools: DevToolsTransport,
    /// Send every request of the whole browser through this proxy
    /// (`http://127.0.0.1:PORT`), loopback included (`--proxy-bypass-list=<-loopback>`).
    pub proxy_server: Option<String>,
    /// The resolver belt: Chromium itself resolves no name at all
    /// (`--host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"`), so anything that
    /// would bypass a proxy cannot even find its host. Proxies must then listen on
    /// 127.0.0.1. On by default.
    pub resolver_belt: bool,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        Self {
            chrome_path: None,
            extra_args: Vec::new(),
            startup_timeout: Duration::from_secs(60),
            devtools: DevToolsTransport::default(),
            proxy_server: None,
            resolver_belt: true,
        }
    }
}

/// A running headless Chromium process group, with its DevTools connection (pipe) or
/// WebSocket URL (port).
///
/// Dropping it sends SIGKILL to the whole process group and removes the profile directory.
#[derive(Debug)]
pub struct Chromium {
    child: Child,
    /// The browser's pid, which is also its process group id (`process_group(0)`).
    pgid: u32,
    ws_url: Option<String>,
    connection: Option<(CdpConnection, CdpEvents)>,
    startup_time: Duration,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    stderr_task: Option<tokio::task::JoinHandle<()>>,
    killed: bool,
    // Declared last: dropped after `Drop::drop` has killed the group.
    profile: TempProfile,
}

impl Chromium {
    /// Starts Chromium and waits until DevTools answers (pipe: a `Browser.getVersion`
    /// round trip; port: the endpoint announced on stderr).
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), ferry_browser::BrowserError> {
    /// use ferry_browser::{Chromium, LaunchOptions};
    /// let chromium = Chromium::launch(LaunchOptions::default()).await?;
    /// println!("devtools up after {:?}", chromium.startup_time());
    /// chromium.shutdown().await;
    /// # Ok(()) }
    /// ```
    pub async fn launch(options: LaunchOptions) -> Result<Self, BrowserError> {
        let binary = match &options.chrome_path {
            Some(path) => crate::find_chromium(Some(path))?,
            None => crate::find_chromium(None)?,
        };
        let profile = TempProfile::create()?;
        let chromium_tmp = profile.tmp_dir()?;
        let pipe = options.devtools == DevToolsTransport::Pipe;
        let args = chromium_args(profile.path(), running_as_root(), &options);

        let started = Instant::now();
        let mut command = if pipe {
            let mut shim = Command::new("/bin/sh");
            shim.args(["-c", PIPE_SHIM, "sh"]).arg(&binary);
            shim.stdin(Stdio::piped()).stdout(Stdio::piped());
            shim
        } else {
            let mut direct = Command::new(&binary);
            direct.stdin(Stdio::null()).stdout(Stdio::null());
            direct
        };
        if let Some(tmp) = &chromium_tmp {
            command.env("TMPDIR", tmp);
        }
        command
            .args(&args)
            .stderr(Stdio::piped())
            // Its own process group, so the group (zygotes, renderers) can be killed whole.
            .process_group(0)
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|e| BrowserError::Spawn {
            path: binary.clone(),
            source: Arc::new(e),
        })?;
        // `id()` is `None` only after the child was reaped, which cannot have happened yet.
        let pgid = child.id().unwrap_or(0);
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let (url_tx, url_rx) = oneshot::channel();
        let stderr_task = child
            .stderr
            .take()
            .map(|stderr| tokio::spawn(read_stderr(stderr, url_tx, stderr_tail.clone())));

        let connection = match (child.stdin.take(), child.stdout.take()) {
            (Some(to_browser), Some(from_browser)) => {
                Some(cdp::connect_pipe(to_browser, from_browser))
            }
            _ => None,
        };
        let mut chromium = Chromium {
            child,
            pgid,
            ws_url: None,
            connection,
            startup_time: Duration::ZERO,
            stderr_tail,
            stderr_task,
            killed: false,
            profile,
        };
        let ready = match &chromium.connection {
            Some((cdp, _)) => {
                let version = cdp
                    .call_with_timeout(
                        "Browser.getVersion",
                        serde_json::json!({}),
                        None,
                        options.startup_timeout,
                    )
                    .await;
                match version {
                    Ok(_) => Ok(()),
                    Err(CdpError::Closed) => Err(chromium.exited().await),
                    Err(CdpError::Timeout { .. }) => Err(chromium.startup_timeout(&options)),
                    Err(e) => Err(e.into()),
                }
            }
            None => match tokio::time::timeout(options.startup_timeout, url_rx).await {
                Ok(Ok(url)) => {
                    chromium.ws_url = Some(url);
                    Ok(())
                }
                // stderr closed without the banner: the browser exited.
                Ok(Err(_)) => Err(chromium.exited().await),
                Err(_) => Err(chromium.startup_timeout(&options)),
            },
        };
        ready?;
        chromium.startup_time = started.elapsed();
        tracing::debug!(
            pid = pgid,
            transport = ?options.devtools,
            startup_ms = chromium.startup_time.as_millis() as u64,
            "chromium started"
        );
        Ok(chromium)
    }

    /// The error for a browser that died during start-up: its status and last words.
    async fn exited(&mut self) -> BrowserError {
        // Kill before reaping: stragglers of the group go too, and the pgid is never
        // signalled after the leader was reaped (when it could be reused). The exit code
        // of a process that is already exiting is not changed by the signal.
        self.kill_group();
        let status = tokio::time::timeout(Duration::from_secs(2), self.child.wait())
            .await
            .ok()
            .and_then(Result::ok)
            .map_or_else(|| "unknown".to_owned(), |s| s.to_string());
        // The last words may still be in the pipe: let the reader reach end of file.
        if let Some(task) = self.stderr_task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(1), task).await;
        }
        BrowserError::Exited {
            status,
            stderr_tail: self.stderr_tail(),
        }
    }

    fn startup_timeout(&self, options: &LaunchOptions) -> BrowserError {
        BrowserError::StartupTimeout {
            after: options.startup_timeout,
            stderr_tail: self.stderr_tail(),
        }
    }

    /// The browser-level DevTools WebSocket URL (`ws://127.0.0.1:PORT/devtools/browser/…`)
    /// when launched with [`DevToolsTransport::Port`].
    pub fn ws_url(&self) -> Option<&str> {
        self.ws_url.as_deref()
    }

    /// The DevTools connection of a browser launched with [`DevToolsTransport::Pipe`];
    /// `Some` once, since the event queue has one consumer.
    pub fn take_connection(&mut self) -> Option<(CdpConnection, CdpEvents)> {
        self.connection.take()
    }

    /// The browser's pid, which is also the id of its process group.
    pub fn pid(&self) -> u32 {
        self.pgid
    }

    /// The temporary profile directory (`--user-data-dir`), removed on drop.
    pub fn profile_dir(&self) -> &Path {
        self.profile.path()
    }

    /// Time from spawn until DevTools was announced.
    pub fn startup_time(&self) -> Duration {
        self.startup_time
    }

    /// The last lines Chromium wrote to stderr (for diagnostics).
    pub fn stderr_tail(&self) -> Vec<String> {
        match self.stderr_tail.lock() {
            Ok(tail) => tail.iter().cloned().collect(),
            Err(poisoned) => poisoned.into_inner().iter().cloned().collect(),
        }
    }

    /// Memory of every live process in the browser's group, from `/proc/PID/smaps_rollup`.
    ///
    /// PSS is the number to budget with: RSS counts shared pages once per process and
    /// overstates a 10-process browser about threefold.
    pub fn memory(&self) -> GroupMemory {
        group_memory(self.pgid)
    }

    /// Kills the whole process group, waits (up to 5 s in all) until the browser is reaped
    /// and no member of its group is alive, and removes the profile directory.
    ///
    /// There is no graceful close: the profile is thrown away, so nothing in it needs
    /// flushing, and SIGKILL to the group is the one signal every member obeys at once.
    pub async fn shutdown(mut self) {
        self.kill_group();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        if tokio::time::timeout_at(deadline, self.child.wait())
            .await
            .is_err()
        {
            tracing::warn!(pid = self.pgid, "chromium not reaped 5 s after SIGKILL");
            return;
        }
        // The other members (renderers, zygotes) are the browser's children, not ours: no
        // wait() tells when they are gone, and on a busy machine their teardown can trail the
        // leader's. /proc shows it.
        while !live_group_members(self.pgid).is_empty() {
            if tokio::time::Instant::now() >= deadline {
                tracing::warn!(
                    pid = self.pgid,
                    "chromium's processes alive 5 s after SIGKILL"
                );
                return;
            }
            tokio::time::sleep(GROUP_EXIT_POLL).await;
        }
    }

    /// SIGKILL to every process in the group, once.
    ///
    /// The group leader is our child and is only reaped after this (by `shutdown` or by
    /// tokio after drop), so the pgid cannot have been reused by an unrelated process.
    fn kill_group(&mut self) {
        if self.killed || self.pgid == 0 {
            return;
        }
        self.killed = true;
        // std has no killpg and the workspace forbids `unsafe` (so no libc::kill); the
        // procps `kill` binary sends the signal to the group named by a negative id.
        let result = std::process::Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{}", self.pgid)])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        match result {
            Ok(status) if status.success() => {}
            // The group may already be gone (browser crashed); fall back to the leader.
            Ok(_) | Err(_) => {
                let _ = self.child.start_kill();
            }
        }
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        self.kill_group();
    }
}

/// How often [`Chromium::shutdown`] looks whether the group's last members are gone.
const GROUP_EXIT_POLL: Duration = Duration::from_millis(10);

/// Memory of a browser's process group (see [`Chromium::memory`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GroupMemory {
    /// Live processes counted.
    pub processes: usize,
    /// Proportional set size, summed, in KiB.
    pub pss_kib: u64,
    /// Resident set size, summed, in KiB (overcounts shared pages).
    pub rss_kib: u64,
}

/// Memory of every live process in process group `pgid`, from `/proc/PID/smaps_rollup`.
pub fn group_memory(pgid: u32) -> GroupMemory {
    let mut total = GroupMemory::default();
    for pid in live_group_members(pgid) {
        let Ok(rollup) = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")) else {
            continue; // exited meanwhile, or not readable
        };
        total.processes += 1;
        for line in rollup.lines() {
            let mut fields = line.split_whitespace();
            let value = |v: Option<&str>| v.and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            match fields.next() {
                Some("Pss:") => total.pss_kib += value(fields.next()),
                Some("Rss:") => total.rss_kib += value(fields.next()),
                _ => {}
            }
        }
    }
    total
}

/// Live (not zombie) processes in process group `pgid`, from `/proc/PID/stat` (what a
/// launched browser's group still holds; tests use it to prove the group was killed whole).
pub fn live_group_members(pgid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // After the command name (in parentheses, may contain spaces): state ppid pgrp.
            let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
            let state = fields.next()?;
            let group: u32 = fields.nth(1)?.parse().ok()?;
            (group == pgid && state != "Z").then_some(pid)
        })
        .collect()
}

/// Reads Chromium's stderr line by line: hands the DevTools URL to `url_tx` once, keeps
/// the last lines in `tail`, and keeps draining so Chromium never blocks on a full pipe.
async fn read_stderr(
    stderr: ChildStderr,
    url_tx: oneshot::Sender<String>,
    tail: Arc<Mutex<VecDeque<String>>>,
) {
    let mut url_tx = Some(url_tx);
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(url) = line.trim().strip_prefix(DEVTOOLS_BANNER)
            && let Some(tx) = url_tx.take()
        {
            let _ = tx.send(url.trim().to_owned());
        }
        let mut tail = match tail.lock() {
            Ok(tail) => tail,
            Err(poisoned) => poisoned.into_inner(),
        };
        if tail.len() == STDERR_TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}

/// The full command line after the binary: ferry's flags, the profile, `extra`, and the
/// initial page.
fn chromium_args(profile: &Path, as_root: bool, options: &LaunchOptions) -> Vec<OsString> {
    let mut flag_list: Vec<&str> = vec![
        // New headless mode: the real browser without a window.
        "--headless",
        // No GPU process work on servers without a GPU.
        "--disable-gpu",
        // Containers often have a 64 MB /dev/shm; use /tmp instead of crashing renderers.
        "--disable-dev-shm-usage",
        // No first-run UI or default-browser prompt.
        "--no-first-run",
        "--no-default-browser-check",
        // Cut the browser's own traffic to Google (the proxy denies the rest anyway).
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-extensions",
        "--disable-client-side-phishing-detection",
        "--disable-domain-reliability",
        // PreconnectToSearch: no preconnect to the default search engine at start-up;
        // NetworkTimeServiceQuerying: no clients2.google.com/time queries.
        "--disable-features=AutofillServerCommunication,OptimizationHints,Translate,MediaRouter,PreconnectToSearch,NetworkTimeServiceQuerying",
        // No hyperlink auditing pings (`<a ping>`).
        "--no-pings",
        // No crash reports leave the machine.
        "--disable-breakpad",
        // HTTP/3 is UDP, which a proxy never sees.
        "--disable-quic",
        // WebRTC must not send UDP (STUN/ICE) around the proxy; measured: this flag stops it,
        // --force-webrtc-ip-handling-policy does not.
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
        // No sound devices, no OS keyring prompts.
        "--mute-audio",
        "--password-store=basic",
        "--use-mock-keychain",
        match options.devtools {
            // DevTools on fds 3 and 4 only (set up by PIPE_SHIM).
            DevToolsTransport::Pipe => "--remote-debugging-pipe",
            // DevTools on an ephemeral port, bound to 127.0.0.1 by Chromium.
            DevToolsTransport::Port => "--remote-debugging-port=0",
        },
    ];
    if as_root {
        // Chromium refuses to start its sandbox as root; the process group and the
        // enforcing proxy remain the containment.
        flag_list.push("--no-sandbox");
    }
    if options.resolver_belt {
        // Nothing resolves inside Chromium; only the proxy's own address stays reachable.
        flag_list.push("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1");
    }
    let mut args: Vec<OsString> = flag_list.into_iter().map(OsString::from).collect();
    if let Some(proxy) = &options.proxy_server {
        args.push(format!("--proxy-server={proxy}").into());
        // Without this Chromium never proxies loopback addresses.
        args.push("--proxy-bypass-list=<-loopback>".into());
    }
    let mut profile_arg = OsString::from("--user-data-dir=");
    profile_arg.push(profile.as_os_str());
    args.push(profile_arg);
    args.extend(options.extra_args.iter().cloned());
    args.push("about:blank".into());
    args
}

/// Whether this process runs as root (the owner of `/proc/self` is the effective uid).
fn running_as_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// A fresh, private (0700) directory under the system temp dir, removed on drop.
#[derive(Debug)]
struct TempProfile {
    path: PathBuf,
}

impl TempProfile {
    fn create() -> Result<Self, BrowserError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        static SWEEP: std::sync::Once = std::sync::Once::new();
        let base = std::env::temp_dir();
        SWEEP.call_once(|| sweep_stale_profiles(&base));
        let mut last_error = None;
        for _ in 0..8 {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let name = format!(
                "ferry-browser-{}-{}-{nanos}",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::Relaxed)
            );
            let path = base.join(name);
            // `create`, not `create_all`: fails if the name exists, so we never reuse (or
            // get handed) someone else's directory.
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(Self { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last_error = Some(e),
                Err(e) => {
                    return Err(BrowserError::Profile {
                        path,
                        source: Arc::new(e),
                    });
                }
            }
        }
        Err(BrowserError::Profile {
            path: base,
            source: Arc::new(
                last_error.unwrap_or_else(|| std::io::ErrorKind::AlreadyExists.into()),
            ),
        })
    }

    fn path(&self) -> &Path {
        &self.path
    }

    /// A private temp directory inside the profile, for Chromium's `TMPDIR` (its
    /// `org.chromium.Chromium.*` singleton files then go with the profile). `None` when the
    /// path would make Chromium's singleton socket path exceed the 107 bytes a Unix socket
    /// address holds (Chromium aborts on start then); Chromium keeps the inherited `TMPDIR`.
    fn tmp_dir(&self) -> Result<Option<PathBuf>, BrowserError> {
        /// `/org.chromium.Chromium.XXXXXX/SingletonSocket`
        const SOCKET_SUFFIX: usize = 45;
        let tmp = self.path.join("t");
        if tmp.as_os_str().len() + SOCKET_SUFFIX > 107 {
            return Ok(None);
        }
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&tmp)
            .map_err(|e| BrowserError::Profile {
                path: tmp.clone(),
                source: Arc::new(e),
            })?;
        Ok(Some(tmp))
    }
}

/// Removes profile directories left by ferry processes that no longer exist (killed with
/// SIGKILL, so their `Drop` never ran). Only directories owned by this user and named after
/// a pid that is gone are touched.
fn sweep_stale_profiles(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    let me = std::fs::metadata("/proc/self").map(|m| m.uid()).ok();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("ferry-browser-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let owned = entry
            .metadata()
            .is_ok_and(|m| m.is_dir() && Some(m.uid()) == me);
        let gone = !Path::new(&format!("/proc/{pid}")).exists();
        if owned && gone && pid != std::process::id() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

impl Drop for TempProfile {
    fn drop(&mut self) {
        // A dying browser may still be closing files; one retry covers the race.
        if std::fs::remove_dir_all(&self.path).is_err() {
            std::thread::sleep(Duration::from_millis(50));
            if let Err(e) = std::fs::remove_dir_all(&self.path)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!(path = %self.path.display(), error = %e, "profile directory left behind");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(args: &[OsString], flag: &str) -> bool {
        args.iter().any(|a| a == flag)
    }

    fn options(devtools: DevToolsTransport, extra: &[&str]) -> LaunchOptions {
        LaunchOptions {
            devtools,
            extra_args: extra.iter().map(OsString::from).collect(),
            ..LaunchOptions::default()
        }
    }

    #[test]
    fn sandbox_is_disabled_only_for_root() {
        let profile = Path::new("/tmp/p");
        let pipe = options(DevToolsTransport::Pipe, &[]);
        assert!(has(&chromium_args(profile, true, &pipe), "--no-sandbox"));
        assert!(!has(&chromium_args(profile, false, &pipe), "--no-sandbox"));
    }

    #[test]
    fn args_carry_the_security_flags_profile_and_extras_in_order() {
        let extra = "--lang=en-US";
        let args = chromium_args(
            Path::new("/tmp/p"),
            false,
            &options(DevToolsTransport::Pipe, &[extra]),
        );
        for flag in [
            "--headless",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-quic",
            "--webrtc-ip-handling-policy=disable_non_proxied_udp",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--remote-debugging-pipe",
            "--user-data-dir=/tmp/p",
        ] {
            assert!(has(&args, flag), "missing {flag}");
        }
        let n = args.len();
        assert_eq!(args[n - 2], extra);
        assert_eq!(args[n - 1], "about:blank");
        assert!(
            !args
                .iter()
                .any(|a| a.to_string_lossy().contains("remote-debugging-port"))
        );
        assert!(!args.iter().any(|a| a.to_string_lossy().contains("proxy")));

        let port = chromium_args(
            Path::new("/tmp/p"),
            false,
            &options(DevToolsTransport::Port, &[]),
        );
        assert!(has(&port, "--remote-debugging-port=0"));
        assert!(!has(&port, "--remote-debugging-pipe"));
    }

    #[test]
    fn a_browser_wide_proxy_also_covers_loopback_and_the_belt_can_be_dropped() {
        let proxied = LaunchOptions {
            proxy_server: Some("http://127.0.0.1:9".into()),
            resolver_belt: false,
            ..LaunchOptions::default()
        };
        let args = chromium_args(Path::new("/tmp/p"), false, &proxied);
        assert!(has(&args, "--proxy-server=http://127.0.0.1:9"));
        assert!(has(&args, "--proxy-bypass-list=<-loopback>"));
        assert!(
            !args
                .iter()
                .any(|a| a.to_string_lossy().contains("host-resolver-rules"))
        );
    }

    #[test]
    fn chromium_tmp_stays_inside_a_short_profile_and_is_skipped_for_a_long_one() {
        let short = TempProfile::create().expect("profile");
        let tmp = short.tmp_dir().expect("tmp").expect("short enough");
        assert!(tmp.starts_with(short.path()) && tmp.is_dir());
        let long = TempProfile {
            path: std::env::temp_dir().join("x".repeat(90)),
        };
        assert!(long.tmp_dir().expect("no io").is_none());
        std::mem::forget(long);
    }

    #[test]
    fn temp_profiles_are_private_distinct_and_removed_on_drop() {
        let a = TempProfile::create().expect("a");
        let b = TempProfile::create().expect("b");
        assert_ne!(a.path(), b.path());
        let mode = std::fs::metadata(a.path()).expect("meta").mode() & 0o777;
        assert_eq!(mode, 0o700);
        std::fs::write(a.path().join("file"), "x").expect("write");
        let path = a.path().to_path_buf();
        drop(a);
        assert!(!path.exists());
    }
}
