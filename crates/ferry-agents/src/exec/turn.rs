//! One turn: spawn the command, feed it, stream its stdout as one artifact, watch the clock
//! and the cancel request, and turn the way it ended into the task's next state.
//!
//! Everything a turn owns lives in this one future (the child, its pipes, the process group
//! guard), so dropping the future ends all of it: nothing is spawned onto the runtime.

use super::group::{ProcessGroup, signal_name};
use super::stderr::StderrLog;
use super::stdout::StdoutSplitter;
use ferry_agent::{AgentError, EventSink};
use ferry_proto::{Artifact, Part, TaskState};
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::pin::pin;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Notify;
use tokio::time::Instant;

/// How long a canceled or timed-out command has between SIGTERM and SIGKILL.
pub(crate) const KILL_GRACE: Duration = Duration::from_secs(2);

/// The prompt when the command asked for input by its exit status alone.
const GENERIC_PROMPT: &str = "the command asks for more input";

/// Everything one turn needs, resolved by the agent. Not `Debug`: `env` holds values of
/// ferry's environment, which have no business in a log.
pub(crate) struct TurnSpec<'a> {
    pub(crate) task_id: Arc<str>,
    pub(crate) argv: &'a [String],
    pub(crate) env: Vec<(OsString, OsString)>,
    pub(crate) working_dir: Option<&'a Path>,
    pub(crate) stdin: String,
    pub(crate) artifact_id: String,
    pub(crate) timeout: Duration,
    pub(crate) max_output_bytes: u64,
    pub(crate) max_stderr_log_bytes: u64,
    pub(crate) input_exit_code: i32,
    pub(crate) input_marker: &'a str,
}

/// Why a turn stopped the command before it ended by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Canceled,
    TimedOut,
    OutputLimit,
}

/// Runs one turn to its end, reporting through `events`; `stop` is notified to cancel it.
/// Every way the command ends is a task state; only a refused event is an error.
pub(crate) async fn run_turn(
    spec: TurnSpec<'_>,
    events: &EventSink,
    stop_requested: &Notify,
) -> Result<(), AgentError> {
    let spawned = match spawn(&spec) {
        Ok(spawned) => spawned,
        Err(why) => return fail(events, why).await,
    };
    let mut watch = Watch::new(&spec, events);
    let ended = match watch.run(spawned, &spec, stop_requested).await? {
        Ok(ended) => ended,
        Err(why) => {
            watch.output.close(String::new()).await?;
            return fail(events, why).await;
        }
    };
    report(ended, watch, &spec, events).await
}

/// The command, started in a process group of its own, with its pipes.
struct Spawned {
    child: tokio::process::Child,
    group: Option<ProcessGroup>,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::process::ChildStdout,
    stderr: tokio::process::ChildStderr,
}

/// Starts the command of `spec` with only the environment it is given; why not, when not.
fn spawn(spec: &TurnSpec<'_>) -> Result<Spawned, String> {
    let Some((program, args)) = spec.argv.split_first() else {
        return Err("the command is empty".to_owned());
    };
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so that one signal reaches everything it starts.
        .process_group(0)
        .kill_on_drop(true);
    if let Some(dir) = spec.working_dir {
        command.current_dir(dir);
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("could not start {program}: {e}"))?;
    let group = ProcessGroup::led_by(&child);
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err("could not connect to the command's pipes".to_owned());
    };
    Ok(Spawned {
        child,
        group,
        stdin,
        stdout,
        stderr,
    })
}

/// How the command ended: stopped by the turn, or by itself with a status.
#[derive(Debug, Clone, Copy)]
enum Ended {
    Stopped(Stop),
    Exited(ExitStatus),
}

/// What a turn watches while the command runs: its output as it arrives, its stderr, its
/// exit, the clock and the cancel request.
struct Watch<'a> {
    output: ArtifactStream<'a>,
    splitter: StdoutSplitter,
    stderr_log: Option<StderrLog>,
    /// What stdout held back at its end (a partial line, the input marker's prompt).
    tail: String,
}

impl<'a> Watch<'a> {
    fn new(spec: &TurnSpec<'_>, events: &'a EventSink) -> Self {
        Self {
            output: ArtifactStream::new(events, spec.artifact_id.clone()),
            splitter: StdoutSplitter::new(spec.input_marker),
            stderr_log: None,
            tail: String::new(),
        }
    }

    /// Feeds stdin, streams stdout, keeps stderr's end, and stops the command when the turn
    /// is canceled, times out or writes too much; returns how it ended (`Err`: waiting for
    /// it failed). The outer error is a refused event.
    async fn run(
        &mut self,
        spawned: Spawned,
        spec: &TurnSpec<'_>,
        stop_requested: &Notify,
    ) -> Result<Result<Ended, String>, AgentError> {
        let Spawned {
            mut child,
            mut group,
            mut stdin,
            mut stdout,
            stderr,
        } = spawned;
        let input = spec.stdin.clone();
        let mut feed_stdin = pin!(async move {
            // A command that does not read its stdin closes it early: not an error.
            let _ = stdin.write_all(input.as_bytes()).await;
            // Dropping `stdin` here closes it, so the command sees the end of its input.
        });
        let mut read_stderr =
            pin!(StderrLog::new(spec.task_id.clone(), spec.max_stderr_log_bytes).read_all(stderr));
        let mut buf = vec![0u8; 16 * 1024];
        let mut stdout_read: u64 = 0;
        let deadline = Instant::now() + spec.timeout;
        let (mut stdin_done, mut stdout_done) = (false, false);
        let mut exit: Option<ExitStatus> = None;
        let mut stop: Option<Stop> = None;
        let mut kill_at: Option<Instant> = None;
        loop {
            // A stopped command's remaining output does not matter; a finished one's does.
            if let Some(status) = exit
                && (stop.is_some() || (stdout_done && self.stderr_log.is_some()))
            {
                return Ok(Ok(stop.map_or(Ended::Exited(status), Ended::Stopped)));
            }
            tokio::select! {
                read = stdout.read(&mut buf), if !stdout_done && stop.is_none() => match read {
                    Ok(0) | Err(_) => {
                        stdout_done = true;
                        self.tail = self.splitter.finish();
                    }
                    Ok(n) => {
                        stdout_read += n as u64;
                        if stdout_read > spec.max_output_bytes {
                            stop = Some(Stop::OutputLimit);
                            stdout_done = true;
                            kill(&mut group);
                        } else {
                            self.output.send(self.splitter.feed(&buf[..n])).await?;
                        }
                    }
                },
                log = &mut read_stderr, if self.stderr_log.is_none() => self.stderr_log = Some(log),
                () = &mut feed_stdin, if !stdin_done => stdin_done = true,
                waited = child.wait(), if exit.is_none() => {
                    // Whatever the command left running in its group ends with it (and its
                    // stdout and stderr reach their end once nothing holds them open).
                    kill(&mut group);
                    match waited {
                        Ok(status) => exit = Some(status),
                        Err(e) => return Ok(Err(format!("could not wait for the command: {e}"))),
                    }
                }
                () = stop_requested.notified(), if stop.is_none() => {
                    stop = Some(Stop::Canceled);
                    kill_at = terminate(group.as_ref());
                }
                () = tokio::time::sleep_until(deadline), if stop.is_none() => {
                    stop = Some(Stop::TimedOut);
                    kill_at = terminate(group.as_ref());
                }
                () = sleep_until(kill_at), if kill_at.is_some() => {
                    kill_at = None;
                    kill(&mut group);
                }
            }
        }
    }
}

/// Kills the group, once.
fn kill(group: &mut Option<ProcessGroup>) {
    if let Some(group) = group.take() {
        group.kill();
    }
}

/// The task's next state from how the command ended.
async fn report(
    ended: Ended,
    mut watch: Watch<'_>,
    spec: &TurnSpec<'_>,
    events: &EventSink,
) -> Result<(), AgentError> {
    let status = match ended {
        Ended::Stopped(stop) => {
            watch.output.close(String::new()).await?;
            return report_stop(stop, spec, events).await;
        }
        Ended::Exited(status) => status,
    };
    watch.output.close(std::mem::take(&mut watch.tail)).await?;
    let asked = watch.splitter.asked_for_input();
    let stderr_tail = watch.stderr_log.map(|log| log.tail()).unwrap_or_default();
    match status.code() {
        Some(0) if !asked => {
            events.complete(None).await?;
            Ok(())
        }
        Some(code) if code == 0 || code == spec.input_exit_code => {
            let prompt = watch
                .splitter
                .prompt()
                .unwrap_or_else(|| GENERIC_PROMPT.to_owned());
            events.input_required(events.text_message(prompt)).await?;
            Ok(())
        }
        Some(code) => {
            let why = format!("the command exited with status {code}");
            fail(events, with_stderr(why, &stderr_tail)).await
        }
        None => fail(events, with_stderr(killed_by(status), &stderr_tail)).await,
    }
}

/// The state of a turn that stopped its command.
async fn report_stop(
    stop: Stop,
    spec: &TurnSpec<'_>,
    events: &EventSink,
) -> Result<(), AgentError> {
    match stop {
        Stop::Canceled => {
            let message = events.text_message("canceled; the command was stopped");
            events.status(TaskState::Canceled, Some(message)).await?;
            Ok(())
        }
        Stop::TimedOut => {
            let secs = spec.timeout.as_secs();
            let why = format!("the command did not finish within {secs} s");
            fail(events, why).await
        }
        Stop::OutputLimit => {
            let limit = spec.max_output_bytes;
            let why = format!(
                "the command wrote more than {limit} bytes to stdout (max_output_bytes) and was killed"
            );
            fail(events, why).await
        }
    }
}

/// Why a command without an exit code ended: the signal that killed it.
fn killed_by(status: ExitStatus) -> String {
    match status.signal() {
        Some(n) => match signal_name(n) {
            Some(name) => format!("the command was killed by signal {n} ({name})"),
            None => format!("the command was killed by signal {n}"),
        },
        None => format!("the command ended without a status ({status})"),
    }
}

/// Sends SIGTERM to the group; returns when to follow with SIGKILL.
fn terminate(group: Option<&ProcessGroup>) -> Option<Instant> {
    let group = group?;
    group.terminate();
    Some(Instant::now() + KILL_GRACE)
}

/// Sleeps until `at`, or forever when there is no `at`.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// `why`, with the end of stderr when there is one.
fn with_stderr(why: String, tail: &str) -> String {
    if tail.is_empty() {
        format!("{why}; it wrote nothing to stderr")
    } else {
        format!("{why}; the end of its stderr: {tail}")
    }
}

async fn fail(events: &EventSink, why: String) -> Result<(), AgentError> {
    tracing::info!(task = events.task_id(), "exec turn failed: {why}");
    events.fail(events.text_message(why)).await?;
    Ok(())
}

/// The turn's one artifact, sent in chunks as stdout arrives: the first with `append` false,
/// the rest with `append` true, and a last one with `lastChunk` true (it holds whatever was
/// held back at the end, maybe nothing). No chunk is ever held back waiting for a next one,
/// so a reader sees output as soon as the command writes it. A turn that writes nothing has
/// no artifact.
struct ArtifactStream<'a> {
    events: &'a EventSink,
    id: String,
    opened: bool,
}

impl<'a> ArtifactStream<'a> {
    fn new(events: &'a EventSink, id: String) -> Self {
        Self {
            events,
            id,
            opened: false,
        }
    }

    async fn send(&mut self, text: String) -> Result<(), AgentError> {
        if text.is_empty() {
            return Ok(());
        }
        self.chunk(text, false).await
    }

    async fn close(&mut self, text: String) -> Result<(), AgentError> {
        if !self.opened && text.is_empty() {
            return Ok(());
        }
        self.chunk(text, true).await
    }

    async fn chunk(&mut self, text: String, last: bool) -> Result<(), AgentError> {
        let artifact = Artifact::new(self.id.clone(), "output", vec![Part::text(text)]);
        self.events.artifact(artifact, self.opened, last).await?;
        self.opened = true;
        Ok(())
    }
}
