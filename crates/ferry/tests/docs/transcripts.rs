//! The documentation's transcripts, run: every ```` ```console ```` block of README.md, and
//! every one in the book (`docs/src`) that follows a `<!-- checked -->` line, is replayed
//! against the `ferry` binary this build made, and its output must be what the page shows.
//!
//! - `$ CMD` runs `CMD` with `sh` (stdout and stderr merged, as a terminal shows them), with
//!   the built `ferry` first on `PATH` and no `FERRY_*` variable of the test's environment;
//!   the lines up to the next `$` are its expected output. A line ending in `\` continues.
//! - `$ CMD &` starts a server in the background: its expected lines are the first lines it
//!   prints on stdout (the `agent card:` line; its log goes to stderr); it is killed at the
//!   end of the block. A `ferry serve` without `--bind` gets a free port.
//! - `<!-- checked: ARGS -->` first starts `ferry serve ARGS --bind 127.0.0.1:0`, which stands
//!   for the page's `http://127.0.0.1:8765`.
//! - `<!-- file: NAME -->` before a code block of the page makes that block the executable
//!   file `NAME` in the directory the page's later transcripts run in (a script the page
//!   shows, then serves with `--exec ./NAME`).
//!
//! What differs from run to run is matched, not compared: ids (UUIDs, 32 hex digits),
//! timestamps and loopback ports. The first time the page shows such a value, the test learns
//! what it is in this run, and later commands of the block use that (a `ferry task get` of
//! the task a `ferry send` made above it).

use crate::support::{self, output_with_timeout, workspace_root};
use regex::Regex;
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::LazyLock;
use std::time::Duration;

/// How long one command may take.
const COMMAND_LIMIT: Duration = Duration::from_secs(60);

/// Values that differ from run to run: UUIDs, 32-digit hex ids, RFC 3339 times, HTTP dates,
/// page tokens (base64url of `vN:…`) and loopback ports. Ids and ports are learned (the same
/// value on the page is the same value in the run); times and tokens match any value of their
/// kind (two events the page shows in one millisecond may be two in this run).
static VOLATILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        r"|\b[0-9a-f]{32}\b",
        r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z",
        r"|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT",
        r"|\bdj[A-Za-z0-9]6[A-Za-z0-9_-]{16,}",
        r"|127\.0\.0\.1:\d+",
    ))
    .expect("the pattern")
});

/// The volatile values that are learned: ids and ports.
static LEARNED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        r"|[0-9a-f]{32}|127\.0\.0\.1:\d+)$",
    ))
    .expect("the pattern")
});

/// One checked block: where it is, the server it needs, the files the page made before it,
/// and its lines.
struct Block {
    place: String,
    serve: Option<String>,
    files: Vec<(String, String)>,
    lines: Vec<String>,
}

/// The checked blocks of `file`: every console block when `all`, else those after a
/// `<!-- checked -->` marker.
fn blocks(file: &Path, all: bool) -> Vec<Block> {
    let text = std::fs::read_to_string(file).expect("a page");
    let mut found = Vec::new();
    let mut marker: Option<Option<String>> = None;
    let mut files: Vec<(String, String)> = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        if let Some(name) = line.strip_prefix("<!-- file:") {
            let name = name.trim_end_matches("-->").trim().to_owned();
            let _fence = lines.next();
            let body: Vec<&str> = lines
                .by_ref()
                .map(|(_, l)| l)
                .take_while(|l| l.trim() != "```")
                .collect();
            files.push((name, body.join("\n") + "\n"));
            continue;
        }
        if let Some(rest) = line.strip_prefix("<!-- checked") {
            let args = rest
                .trim_end_matches("-->")
                .trim()
                .trim_start_matches(':')
                .trim();
            marker = Some((!args.is_empty()).then(|| args.to_owned()));
            continue;
        }
        if line.trim() == "```console" && (all || marker.is_some()) {
            let body: Vec<String> = lines
                .by_ref()
                .map(|(_, l)| l)
                .take_while(|l| l.trim() != "```")
                .map(str::to_owned)
                .collect();
            found.push(Block {
                place: format!("{}:{}", file.display(), n + 1),
                serve: marker.take().flatten(),
                files: files.clone(),
                lines: body,
            });
        } else if !line.trim().is_empty() {
            marker = None;
        }
    }
    found
}

/// One step of a block: a command and the output the page shows for it.
struct Step {
    command: String,
    background: bool,
    expected: Vec<String>,
}

fn steps(lines: &[String]) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut continued = false;
    for line in lines {
        if continued {
            let step = steps.last_mut().expect("a command");
            step.command.push('\n');
            step.command.push_str(line);
            continued = line.ends_with('\\');
        } else if let Some(command) = line.strip_prefix("$ ") {
            continued = command.ends_with('\\');
            steps.push(Step {
                command: command.to_owned(),
                background: false,
                expected: Vec::new(),
            });
        } else if let Some(step) = steps.last_mut() {
            step.expected.push(line.clone());
        }
    }
    for step in &mut steps {
        if let Some(command) = step.command.strip_suffix(" &") {
            step.command = command.to_owned();
            step.background = true;
        }
        while step.expected.last().is_some_and(|l| l.is_empty()) {
            step.expected.pop();
        }
    }
    steps
}

/// What this run's values are for the ones the page shows.
#[derive(Default)]
struct Learned(HashMap<String, String>);

impl Learned {
    /// `text` with every value learned so far replaced by this run's.
    fn apply(&self, text: &str) -> String {
        VOLATILE
            .replace_all(text, |c: &regex::Captures| {
                let shown = &c[0];
                self.0
                    .get(shown)
                    .cloned()
                    .unwrap_or_else(|| shown.to_owned())
            })
            .into_owned()
    }

    /// Whether `actual` is `expected` up to volatile values: a value learned already must be
    /// what was learned, a new one is learned (when the rest matches).
    fn matches(&mut self, expected: &str, actual: &str) -> bool {
        let skeleton = |t: &str| VOLATILE.replace_all(t, "\u{1}").into_owned();
        if skeleton(expected) != skeleton(actual) {
            return false;
        }
        let mut new = HashMap::new();
        let shown = VOLATILE.find_iter(expected).map(|m| m.as_str());
        let here = VOLATILE.find_iter(actual).map(|m| m.as_str());
        for (shown, here) in shown.zip(here).filter(|(shown, _)| LEARNED.is_match(shown)) {
            let known = self.0.get(shown).or_else(|| new.get(shown));
            match known {
                Some(value) if value != here => return false,
                Some(_) => {}
                None => {
                    new.insert(shown.to_owned(), here.to_owned());
                }
            }
        }
        self.0.extend(new);
        true
    }
}

/// A directory with `ferry` in it, for `PATH`.
fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_ferry"))
        .parent()
        .expect("the binary's directory")
        .to_path_buf()
}

fn shell(command: &str, dir: &Path) -> Command {
    let mut sh = Command::new("sh");
    let path = format!(
        "{}:{}",
        bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    sh.arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("PATH", path)
        .env("NO_COLOR", "1");
    support::clear_ferry_env(&mut sh);
    sh
}

/// A server started for a block, killed with it.
struct Background(Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `command` in the background; its first `lines` lines of stdout.
fn start(command: &str, dir: &Path, lines: usize) -> (Background, Vec<String>) {
    // `env` runs the command in place of the shell (so that killing it kills the server),
    // with the variables the page sets before it.
    let mut child = shell(&format!("exec env {command}"), dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("sh");
    let stdout = child.stdout.take().expect("stdout");
    let got: Vec<String> = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .take(lines)
        .collect();
    (Background(child), got)
}

/// Runs one block; a description of the first difference, if any.
fn run(block: &Block) -> Result<(), String> {
    let dir = support::scratch_dir("docs-transcript");
    for (name, content) in &block.files {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(name);
        std::fs::write(&path, content).expect("a file of the page");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let mut learned = Learned::default();
    let mut servers = Vec::new();
    if let Some(args) = &block.serve {
        let (server, line) = start(&format!("ferry serve {args} --bind 127.0.0.1:0"), &dir, 1);
        let addr = line
            .first()
            .and_then(|l| l.strip_prefix("agent card: http://"))
            .and_then(|l| l.split('/').next())
            .ok_or_else(|| format!("ferry serve {args} printed no card line: {line:?}"))?;
        learned.0.insert("127.0.0.1:8765".into(), addr.to_owned());
        servers.push(server);
    }
    for step in steps(&block.lines) {
        let command = learned.apply(&step.command);
        let expected = step.expected.join("\n");
        let actual = if step.background {
            // A server the page starts on the default port gets a free one here.
            let command = if command.contains("ferry serve") && !command.contains("--bind") {
                format!("{command} --bind 127.0.0.1:0")
            } else {
                command.clone()
            };
            let (server, lines) = start(&command, &dir, step.expected.len());
            servers.push(server);
            lines.join("\n")
        } else {
            let (out, timed_out) = output_with_timeout(
                shell(&format!("{command} 2>&1"), &dir).stdin(Stdio::null()),
                None,
                COMMAND_LIMIT,
            );
            if timed_out {
                return Err(format!("$ {command}\ntook over {COMMAND_LIMIT:?}"));
            }
            // HTTP header lines (`curl -i`) end in CRLF; the page shows lines.
            String::from_utf8_lossy(&out.stdout)
                .replace("\r\n", "\n")
                .trim_end()
                .to_owned()
        };
        if !learned.matches(&expected, &actual) {
            return Err(format!(
                "$ {command}\n---- the page shows ----\n{}\n---- this run printed ----\n{actual}",
                learned.apply(&expected)
            ));
        }
    }
    Ok(())
}

#[test]
fn every_checked_transcript_prints_what_the_docs_show() {
    let root = workspace_root();
    let mut all = blocks(&root.join("README.md"), true);
    for page in crate::book_pages() {
        all.extend(blocks(&page, false));
    }
    assert!(
        all.len() >= 5,
        "only {} checked transcripts found",
        all.len()
    );
    let failures: Vec<String> = all
        .iter()
        .filter_map(|block| run(block).err().map(|e| format!("{}:\n{e}", block.place)))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} transcripts differ:\n\n{}",
        failures.len(),
        all.len(),
        failures.join("\n\n")
    );
}

#[test]
fn volatile_values_are_learned_once_and_reused() {
    let mut learned = Learned::default();
    let shown = "task 01a23aaf-207d-738c-aa80-ba75283b7f09 at 127.0.0.1:8765";
    let here = "task 11111111-2222-3333-4444-555555555555 at 127.0.0.1:40000";
    assert!(learned.matches(shown, here));
    assert_eq!(
        learned.apply("get 01a23aaf-207d-738c-aa80-ba75283b7f09"),
        "get 11111111-2222-3333-4444-555555555555"
    );
    assert!(!learned.matches("task COMPLETED", "task FAILED"));
    // Times match any time, and are not learned.
    assert!(learned.matches(
        "at 2026-12-06T08:55:58.627Z and 2026-12-06T08:55:58.627Z",
        "at 2026-12-06T09:29:38.081Z and 2026-12-06T09:29:38.082Z"
    ));
    // A value learned is that value from then on.
    assert!(!learned.matches(
        "again 01a23aaf-207d-738c-aa80-ba75283b7f09",
        "again 99999999-2222-3333-4444-555555555555"
    ));
}
