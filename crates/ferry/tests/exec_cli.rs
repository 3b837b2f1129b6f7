//! `ferry serve --exec 'CMD ARGS'` and `[[agents]] kind = "exec"` end to end: real servers on
//! 127.0.0.1:0 running small `/bin/sh` scripts written into a scratch directory, driven with
//! the `ferry` CLI (`send`, `send --stream`, `task get`, `task cancel`) as a user drives them.
//!
//! | test                                   | what it proves                                                              |
//! |----------------------------------------|-----------------------------------------------------------------------------|
//! | `stdout_streams_through_the_server`    | `send --stream` prints the first chunk while the script is still blocked (a gate file), then the rest, then COMPLETED; the task keeps the whole output |
//! | `a_failing_command_fails_the_task_…`   | exit 3 → FAILED, the status message names the status and quotes the end of stderr (only its tail) |
//! | `the_input_marker_makes_a_conversation`| turn 1 INPUT_REQUIRED with the marker's prompt, turn 2 (`--task ID`) COMPLETED using both messages, `FERRY_TURN` 2 |
//! | `cancel_kills_the_command_and_…`       | `task cancel` → CANCELED; the script, its child and a grandchild ignoring SIGTERM are all gone |
//! | `only_allowlisted_variables_…`         | with `FERRY_TOKEN` and `SECRET_API_KEY` in the server's environment the command sees `PATH` and `FERRY_TASK_ID` but neither the names nor the values |
//! | `a_config_entry_serves_an_exec_agent`  | `[[agents]] kind = "exec"` answers at `/agents/shout`; `--print-config` keeps `max_in_flight` |
//! | `an_unknown_exec_key_stops_the_server` | `colour = 1` in the entry: `ferry serve` exits 1 naming the agent and the key |
//! | `sigterm_stops_the_running_commands`   | SIGTERM to `ferry serve` while a turn runs: exit 0, and the command is gone |
//!
//! No test sleeps to synchronize: each waits for the line, event or file it needs, with
//! [`GUARD`] only as a failure guard. Scripts may sleep and poll; every wait in a script is
//! bounded (a background `sleep` lasts at most 60 s), because whatever a leaked process
//! inherited (the cargo lock of `flock`, say) it keeps until it ends.

mod support;

use ferry_testkit::process::wait_for_exit;

use serde_json::Value;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::Duration;
use support::{
    CARD_PATH, Server, ferry, output_with_timeout, run_with_timeout, s, scratch_dir, text, write,
};

/// How long a test waits for a line, an event or a process before it fails.
const GUARD: Duration = Duration::from_secs(30);
/// Hard limit for one CLI run.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);

const COMPLETED: &str = "TASK_STATE_COMPLETED";
const FAILED: &str = "TASK_STATE_FAILED";
const INPUT_REQUIRED: &str = "TASK_STATE_INPUT_REQUIRED";
const CANCELED: &str = "TASK_STATE_CANCELED";

/// Writes `body` as `script.sh` in `dir` and returns the `--exec` line that runs it with
/// `/bin/sh` (not the file itself: a file just written may still be open in a forked child,
/// and executing it would then fail with ETXTBSY), `dir` as its first argument.
fn exec_line(dir: &Path, body: &str) -> String {
    let script = write(dir, "script.sh", body);
    format!("/bin/sh '{}' '{}'", s(&script), s(dir))
}

/// `ferry serve --exec LINE --bind 127.0.0.1:0` in `dir`, with `env` added to its environment.
fn exec_server(dir: &Path, line: &str, env: &[(&str, &str)]) -> Server {
    let mut cmd = ferry();
    cmd.args(["serve", "--exec", line, "--bind", "127.0.0.1:0"])
        .current_dir(dir)
        .envs(env.iter().copied());
    Server::spawn(cmd)
}

/// Runs `ferry ARGS` to its end.
fn cli(args: &[&str]) -> Output {
    run_with_timeout(ferry().args(args), None, RUN_TIMEOUT)
}

/// Runs `ferry ARGS -o json`: exit 0 and one JSON document.
fn cli_json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    let out = cli(&all);
    assert_eq!(
        out.status.code(),
        Some(0),
        "ferry {all:?}\nstdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("ferry {all:?}: not JSON ({e}): {}", text(&out.stdout)))
}

/// `ferry send URL TEXT EXTRA… -o json`: the task it answers with.
fn send(url: &str, message: &str, extra: &[&str]) -> Value {
    let mut args = vec!["send", url, message];
    args.extend_from_slice(extra);
    let answer = cli_json(&args);
    answer
        .get("task")
        .cloned()
        .unwrap_or_else(|| panic!("the answer is not a task: {answer}"))
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no string at {pointer} in {v}"))
}

fn state(task: &Value) -> &str {
    str_at(task, "/status/state")
}

/// The text of the task's status message.
fn status_text(task: &Value) -> String {
    parts_text(task.pointer("/status/message/parts"))
}

/// The text parts of `parts` (a JSON array), joined.
fn parts_text(parts: Option<&Value>) -> String {
    parts
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect()
}

/// The whole text of the task's artifact `id`.
fn artifact_text(task: &Value, id: &str) -> String {
    let artifacts = task.get("artifacts").and_then(Value::as_array);
    let artifact = artifacts
        .into_iter()
        .flatten()
        .find(|a| a.get("artifactId").and_then(Value::as_str) == Some(id))
        .unwrap_or_else(|| panic!("no artifact {id} in {task}"));
    parts_text(artifact.get("parts"))
}

/// A running `ferry send URL TEXT --stream -o json`, read line by line as it prints; killed
/// (and reaped) on drop.
struct Stream {
    child: Child,
    lines: Receiver<String>,
    /// Every event so far.
    seen: Vec<Value>,
}

impl Stream {
    fn start(url: &str, message: &str, extra: &[&str]) -> Stream {
        let mut child = ferry()
            .args(["send", url, message, "--stream", "-o", "json"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            // Not read by the test: shown in its output on failure.
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn ferry send --stream");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                // The test may have given up on the receiver already.
                let _ = tx.send(line);
            }
        });
        Stream {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// The next event; `None` once the CLI closed its stdout.
    fn next(&mut self) -> Option<Value> {
        let line = match self.lines.recv_timeout(GUARD) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Disconnected) => return None,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("no stream event within {GUARD:?}; so far: {:#?}", self.seen)
            }
        };
        let event: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        self.seen.push(event.clone());
        Some(event)
    }

    /// Reads events until `done` holds for the text of artifact chunks so far; panics if the
    /// stream ends first.
    fn until_output(&mut self, done: impl Fn(&str) -> bool) -> String {
        loop {
            let output = self.output();
            if done(&output) {
                return output;
            }
            if self.next().is_none() {
                panic!(
                    "the stream ended before the output was there: {:#?}",
                    self.seen
                );
            }
        }
    }

    /// Reads the rest of the stream and waits for the CLI to exit 0.
    fn finish(&mut self) {
        while self.next().is_some() {}
        assert!(
            wait_for_exit(self.child.id(), GUARD),
            "ferry send --stream did not exit after its stream ended"
        );
        let status = self.child.wait().expect("reap ferry send");
        assert!(
            status.success(),
            "ferry send --stream: {status}; events: {:#?}",
            self.seen
        );
    }

    /// The task id, from the first event (the task).
    fn task_id(&self) -> String {
        let first = self.seen.first().expect("an event was read");
        str_at(first, "/task/id").to_owned()
    }

    /// The text of every artifact chunk so far, in order.
    fn output(&self) -> String {
        self.seen
            .iter()
            .filter_map(|e| e.get("artifactUpdate"))
            .map(|a| parts_text(a.pointer("/artifact/parts")))
            .collect()
    }

    /// The states of the status updates so far.
    fn states(&self) -> Vec<String> {
        self.seen
            .iter()
            .filter_map(|e| e.pointer("/statusUpdate/status/state"))
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    }

    /// The artifact updates so far (`artifactUpdate` objects).
    fn chunks(&self) -> Vec<&Value> {
        self.seen
            .iter()
            .filter_map(|e| e.get("artifactUpdate"))
            .collect()
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // It may have exited already.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// True when `pid` has ended: no `/proc/PID`, or a zombie waiting for its (new) parent.
fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // "PID (COMM) STATE …": the state follows the last ')'.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

fn wait_until_gone(pid: u32, what: &str) {
    assert!(
        wait_for_exit(pid, GUARD),
        "{what} (pid {pid}) still runs after {GUARD:?}"
    );
}

#[test]
fn stdout_streams_through_the_server() {
    let dir = scratch_dir("exec-stream");
    // Prints a line, then waits (bounded) until the test saw it and opened the gate.
    let line = exec_line(
        &dir,
        r#"read -r name
echo "hello $name"
i=0
while [ ! -e "$1/gate" ]; do
  i=$((i + 1))
  if [ "$i" -gt 600 ]; then echo "the gate never opened" >&2; exit 7; fi
  sleep 0.05
done
echo "second line"
echo "third line"
"#,
    );
    let server = exec_server(&dir, &line, &[]);
    let mut stream = Stream::start(&server.base_url, "ferry", &[]);

    // The first chunk arrives while the script is still blocked at the gate.
    let first = stream.until_output(|out| out.contains('\n'));
    assert_eq!(first, "hello ferry\n", "{:#?}", stream.seen);
    assert!(!dir.join("gate").exists());
    write(&dir, "gate", "");

    stream.finish();
    assert_eq!(
        stream.output(),
        "hello ferry\nsecond line\nthird line\n",
        "{:#?}",
        stream.seen
    );
    let chunks = stream.chunks();
    assert!(
        chunks.len() >= 2,
        "at least the first chunk and the last: {chunks:#?}"
    );
    for (i, chunk) in chunks.iter().enumerate() {
        assert_eq!(str_at(chunk, "/artifact/artifactId"), "output-1");
        let append = chunk
            .get("append")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        assert_eq!(
            append,
            i > 0,
            "only the first chunk opens the artifact: {chunk}"
        );
        let last = chunk
            .get("lastChunk")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        assert_eq!(
            last,
            i == chunks.len() - 1,
            "only the last chunk closes it: {chunk}"
        );
    }
    assert_eq!(
        stream.states().last().map(String::as_str),
        Some(COMPLETED),
        "{:#?}",
        stream.seen
    );

    // The task keeps the whole output.
    let id = stream.task_id();
    let task = cli_json(&["task", "get", &server.base_url, &id]);
    assert_eq!(state(&task), COMPLETED, "{task}");
    assert_eq!(
        artifact_text(&task, "output-1"),
        "hello ferry\nsecond line\nthird line\n"
    );
}

#[test]
fn a_failing_command_fails_the_task_with_the_end_of_its_stderr() {
    let dir = scratch_dir("exec-fail");
    // About 3 KiB of stderr, more than the 2 KiB the message quotes; the reason comes last.
    let line = exec_line(
        &dir,
        r#"i=0
while [ "$i" -lt 200 ]; do echo "noise line $i" >&2; i=$((i + 1)); done
echo "partial answer"
echo "fatal: the widget is broken" >&2
exit 3
"#,
    );
    let server = exec_server(&dir, &line, &[]);

    let task = send(&server.base_url, "go", &[]);
    assert_eq!(state(&task), FAILED, "{task}");
    let message = status_text(&task);
    assert!(
        message.contains("the command exited with status 3"),
        "{message}"
    );
    assert!(message.contains("fatal: the widget is broken"), "{message}");
    assert!(message.contains("noise line 199"), "{message}");
    assert!(
        !message.contains("noise line 0\n"),
        "only the tail is quoted: {message}"
    );
    assert!(
        message.len() < 2048 + 200,
        "{} bytes: {message}",
        message.len()
    );
    // What it printed before failing is still there.
    assert_eq!(artifact_text(&task, "output-1"), "partial answer\n");

    // The human output shows the same.
    let out = cli(&["send", &server.base_url, "go"]);
    let shown = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "the call worked: {shown}{}",
        text(&out.stderr)
    );
    assert!(shown.contains("): FAILED"), "{shown}");
    assert!(
        shown.contains("status message: the command exited with status 3; the end of its stderr:"),
        "{shown}"
    );
    assert!(shown.contains("fatal: the widget is broken"), "{shown}");
}

#[test]
fn the_input_marker_makes_a_conversation() {
    let dir = scratch_dir("exec-turns");
    // Keeps its state between turns in a file named after the task.
    let line = exec_line(
        &dir,
        r#"state="$1/state-$FERRY_TASK_ID"
read -r answer
case "$FERRY_TURN" in
  1) printf '%s\n' "$answer" > "$state"
     echo "FERRY_INPUT_REQUIRED: Hello $answer, which city?" ;;
  2) echo "turn $FERRY_TURN: $(cat "$state") lives in $answer"
     rm -f "$state" ;;
  *) echo "unexpected turn $FERRY_TURN" >&2; exit 9 ;;
esac
"#,
    );
    let server = exec_server(&dir, &line, &[]);

    let first = send(&server.base_url, "Ada", &[]);
    assert_eq!(state(&first), INPUT_REQUIRED, "{first}");
    assert_eq!(status_text(&first), "Hello Ada, which city?", "{first}");
    assert!(
        first
            .get("artifacts")
            .is_none_or(|a| a.as_array().is_some_and(Vec::is_empty)),
        "the marker line is not output: {first}"
    );
    let id = str_at(&first, "/id").to_owned();

    let second = send(&server.base_url, "Paris", &["--task", &id]);
    assert_eq!(state(&second), COMPLETED, "{second}");
    assert_eq!(str_at(&second, "/id"), id);
    assert_eq!(str_at(&second, "/contextId"), str_at(&first, "/contextId"));
    assert_eq!(
        artifact_text(&second, "output-2"),
        "turn 2: Ada lives in Paris\n"
    );
    assert!(
        !dir.join(format!("state-{id}")).exists(),
        "the script cleaned up"
    );
}

#[test]
fn cancel_kills_the_command_and_everything_it_started() {
    let dir = scratch_dir("exec-cancel");
    // The script, a child shell and its sleep (the grandchild), both of which ignore
    // SIGTERM; each says its pid, then all wait (at most 60 s, see the module doc).
    let line = exec_line(
        &dir,
        r#"/bin/sh -c 'trap "" TERM; sleep 60 & echo "grandchild $!"; wait' &
echo "child $!"
echo "script $$"
wait
"#,
    );
    let server = exec_server(&dir, &line, &[]);
    let mut stream = Stream::start(&server.base_url, "go", &[]);
    let output = stream.until_output(|out| {
        ["script ", "child ", "grandchild "]
            .iter()
            .all(|who| out.lines().any(|l| l.starts_with(who)))
    });
    let pid_of = |who: &str| -> u32 {
        output
            .lines()
            .find_map(|l| l.strip_prefix(who)?.strip_prefix(' ')?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no pid of the {who} in {output:?}"))
    };
    let pids = [
        ("script", pid_of("script")),
        ("child", pid_of("child")),
        ("grandchild", pid_of("grandchild")),
    ];
    for (who, pid) in pids {
        assert!(
            !process_gone(pid),
            "the {who} (pid {pid}) runs before the cancel"
        );
    }

    let id = stream.task_id();
    let canceled = cli_json(&["task", "cancel", &server.base_url, &id]);
    assert_eq!(state(&canceled), CANCELED, "{canceled}");
    for (who, pid) in pids {
        wait_until_gone(pid, who);
    }

    stream.finish();
    assert_eq!(
        stream.states().last().map(String::as_str),
        Some(CANCELED),
        "{:#?}",
        stream.seen
    );
    let task = cli_json(&["task", "get", &server.base_url, &id]);
    assert_eq!(state(&task), CANCELED, "{task}");
}

#[test]
fn only_allowlisted_variables_reach_the_command() {
    const TOKEN: &str = "exec-cli-token-5e0c9a71";
    const SECRET: &str = "hunter2";
    let dir = scratch_dir("exec-env");
    let line = exec_line(&dir, "env\n");
    let server = exec_server(
        &dir,
        &line,
        &[("FERRY_TOKEN", TOKEN), ("SECRET_API_KEY", SECRET)],
    );

    // The server wants its token.
    let refused = cli(&["send", &server.base_url, "hi"]);
    assert_eq!(refused.status.code(), Some(4), "{}", text(&refused.stderr));

    let task = send(&server.base_url, "hi", &["--token", TOKEN]);
    assert_eq!(state(&task), COMPLETED, "{task}");
    let env = artifact_text(&task, "output-1");
    let names: Vec<&str> = env
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, _)| k)
        .collect();
    for present in [
        "PATH",
        "FERRY_TASK_ID",
        "FERRY_CONTEXT_ID",
        "FERRY_TURN",
        "FERRY_DATA_FILE",
    ] {
        assert!(names.contains(&present), "{present} is set: {env}");
    }
    assert!(
        env.contains(&format!("FERRY_TASK_ID={}\n", str_at(&task, "/id"))),
        "{env}"
    );
    for absent in ["FERRY_TOKEN", "SECRET_API_KEY", TOKEN, SECRET] {
        assert!(
            !env.contains(absent),
            "{absent} must not reach the command: {env}"
        );
    }
    let log = server.output();
    for absent in [TOKEN, SECRET] {
        assert!(!log.contains(absent), "{absent} must not be logged: {log}");
    }
}

/// The config of the `shout` agent, with `extra` lines appended to its entry.
fn shout_config(dir: &Path, extra: &str) -> PathBuf {
    let toml = format!(
        "[[agents]]\nid = \"shout\"\nkind = \"exec\"\ncommand = [\"tr\", \"a-z\", \"A-Z\"]\nmax_in_flight = 2\n{extra}"
    );
    write(dir, "ferry.toml", &toml)
}

#[test]
fn a_config_entry_serves_an_exec_agent() {
    let dir = scratch_dir("exec-config");
    let file = shout_config(&dir, "");
    let server = Server::start(["--config", s(&file), "--bind", "127.0.0.1:0"]);
    assert!(
        server.base_url.ends_with("/agents/shout"),
        "the first card line is the agent's: {}",
        server.base_url
    );
    let card: Value = serde_json::from_slice(&server.get_ok(CARD_PATH)).expect("the card is JSON");
    assert_eq!(card["name"], "tr", "{card}");

    let task = send(&server.base_url, "hello, agents", &[]);
    assert_eq!(state(&task), COMPLETED, "{task}");
    assert_eq!(artifact_text(&task, "output-1"), "HELLO, AGENTS\n");

    let out = cli(&["send", &server.base_url, "hello"]);
    let shown = text(&out.stdout);
    assert!(shown.contains("): COMPLETED"), "{shown}");
    assert!(shown.contains("artifact output: HELLO"), "{shown}");

    let (printed, timed_out) = output_with_timeout(
        ferry().args(["serve", "--config", s(&file), "--print-config"]),
        None,
        RUN_TIMEOUT,
    );
    assert!(
        !timed_out && printed.status.success(),
        "{}",
        text(&printed.stderr)
    );
    let shown = text(&printed.stdout);
    assert!(shown.contains("kind = \"exec\""), "{shown}");
    assert!(shown.contains("max_in_flight = 2"), "{shown}");
}

#[test]
fn an_unknown_exec_key_stops_the_server() {
    let dir = scratch_dir("exec-config-bad");
    let file = shout_config(&dir, "colour = 1\n");
    let mut cmd: Command = ferry();
    cmd.args(["serve", "--config", s(&file), "--bind", "127.0.0.1:0"]);
    let (out, timed_out) = output_with_timeout(&mut cmd, None, RUN_TIMEOUT);
    let said = text(&out.stderr);
    assert!(!timed_out, "ferry serve must not start: {said}");
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("\"shout\""), "names the agent: {said}");
    assert!(
        said.contains("unknown field `colour`"),
        "names the key: {said}"
    );
    assert!(
        !text(&out.stdout).contains("agent card:"),
        "{}",
        text(&out.stdout)
    );
}

/// A `ferry serve` the test spawns itself (to signal it); killed and reaped on drop.
struct Spawned(Child);

impl Drop for Spawned {
    fn drop(&mut self) {
        // It may have exited already.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn sigterm_stops_the_running_commands() {
    let dir = scratch_dir("exec-sigterm");
    // Says its pid into a FIFO the test reads (the read returns when the script has written:
    // the event itself), then waits; `exec` keeps the pid.
    let pid_fifo = dir.join("pid");
    let made = Command::new("mkfifo")
        .arg(&pid_fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", pid_fifo.display());
    let line = exec_line(
        &dir,
        r#"echo $$ > "$1/pid"
exec sleep 60
"#,
    );
    let log = File::create(dir.join("server.log")).expect("create the server log");
    let mut server = Spawned(
        ferry()
            .args(["serve", "--exec", &line, "--bind", "127.0.0.1:0"])
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("spawn ferry serve"),
    );
    let stdout = server.0.stdout.take().expect("stdout is piped");
    let mut card_line = String::new();
    BufReader::new(stdout)
        .read_line(&mut card_line)
        .expect("the card line");
    let url = card_line
        .trim()
        .strip_prefix("agent card: ")
        .and_then(|u| u.strip_suffix(CARD_PATH))
        .unwrap_or_else(|| panic!("not a card line: {card_line:?}"))
        .to_owned();

    let task = send(&url, "go", &["--async"]);
    let id = str_at(&task, "/id").to_owned();
    let (said, heard) = mpsc::channel();
    thread::spawn(move || {
        let _ = said.send(std::fs::read_to_string(&pid_fifo));
    });
    let pid: u32 = heard
        .recv_timeout(GUARD)
        .unwrap_or_else(|_| panic!("task {id}: the command never started"))
        .expect("read the pid FIFO")
        .trim()
        .parse()
        .expect("a pid");
    assert!(!process_gone(pid), "the command (pid {pid}) runs");

    let status = Command::new("kill")
        .args(["-TERM", &server.0.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    assert!(
        wait_for_exit(server.0.id(), GUARD),
        "ferry serve did not exit after SIGTERM"
    );
    let exit = server.0.wait().expect("reap ferry serve");
    let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
    assert_eq!(exit.code(), Some(0), "SIGTERM is a clean exit: {log}");
    wait_until_gone(pid, "the command");
}
