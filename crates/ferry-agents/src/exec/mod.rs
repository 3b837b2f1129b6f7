//! The exec agent: any command becomes an A2A agent, one run of the command per turn.
//!
//! [`ExecAgent`]'s doc is the contract with the command; the modules below keep its parts
//! apart: the settings (`config`, `split`), what goes in (`inputs`), what comes out
//! (`stdout`, `stderr`), one run (`turn`) and the process group that must not outlive it
//! (`group`).

mod config;
mod error;
mod group;
mod inputs;
mod split;
mod stderr;
mod stdout;
mod turn;

pub use config::{ExecCommand, ExecConfig};
pub use error::ExecError;

use ferry_agent::{
    AgentDescription, AgentError, AgentExecutor, AgentFuture, EventSink, RequestContext,
};
use ferry_proto::{A2aError, AgentSkill, ErrorKind};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{Notify, Semaphore, watch};

/// The `ErrorInfo.reason` of a turn refused because `max_concurrent` turns are running.
pub const EXEC_BUSY: &str = "EXEC_BUSY";

/// Runs a command once per turn, as the agent of every task it is given.
///
/// The contract with the command, which is all a script author needs to know:
///
/// - **stdin** holds the message's text parts joined with newlines (and ended by one), then
///   closes.
/// - **stdout** is the answer: streamed, as it is written, as the chunks of one artifact per
///   turn, `output-{turn}` named `output` (the first chunk has `append` false, the later ones
///   true; the last chunk, maybe empty, has `lastChunk` true). Decoded as UTF-8, invalid bytes
///   replaced; a chunk never ends inside a character. A turn that prints nothing has no
///   artifact.
/// - **stderr** goes to ferry's log (up to `max_stderr_log_bytes`); its last 2 KiB are quoted
///   when the turn fails.
/// - **exit status** 0 completes the task; any other fails it, quoting the status (or the
///   signal) and the end of stderr.
/// - **asking for more input**: a stdout line starting with `FERRY_INPUT_REQUIRED:` (the
///   `input_marker`) is not output; its rest is the prompt, and after the command exits with
///   0 or with `input_exit_code` (10) the task is `INPUT_REQUIRED` with that prompt. Exit
///   status 10 alone asks with a generic prompt. The client's next message on the task runs
///   the command again with `FERRY_TURN` one higher; a script keeps its state between turns
///   itself, keyed by `FERRY_TASK_ID` or `FERRY_CONTEXT_ID`. `FERRY_TURN` is 1 on a new
///   task and n on its n-th message: one more than the user messages in the task's history
///   before this one (or than the highest `output-{n}` artifact, should the server have
///   trimmed the history).
/// - **environment**: empty but for the allowlisted names copied from ferry's environment
///   (`env`, by default `PATH HOME LANG LC_ALL TZ`) and ferry's own: `FERRY_TASK_ID`,
///   `FERRY_CONTEXT_ID`, `FERRY_TURN`, `FERRY_DATA_FILE` (a temp file, mode 0600, holding the
///   message's data parts' values as a JSON array; removed after the turn) and `FERRY_DATA`
///   (the same JSON inline, set only when it is at most 64 KiB).
/// - **lifetime**: the command leads its own process group, and the group is killed when the
///   turn ends, however it ends: nothing the command leaves running in its group survives the
///   turn. (A process that leaves the group on purpose, with `setsid` or `setpgid`, is beyond
///   this; while it holds stdout or stderr open the turn waits for it, up to the timeout.)
///   Timeout and cancel send SIGTERM to the group, then SIGKILL after 2 s; too much output,
///   and a dropped turn (the server aborted it), SIGKILL straight away. A canceled turn
///   reports `CANCELED` itself once its command was reaped.
/// - **limits**: `timeout_secs` (300), `max_output_bytes` (8 MiB) and `max_concurrent` turns
///   (4; a turn over it is refused before it starts, `UNAVAILABLE` with reason
///   [`EXEC_BUSY`] and `retryAfterSeconds` 1).
///
/// ```
/// use ferry_agent::AgentExecutor;
/// use ferry_agents::{ExecAgent, ExecConfig};
///
/// let agent = ExecAgent::new(ExecConfig::from_command_line("/usr/bin/wc -w")?)?;
/// assert_eq!(agent.describe().name, "wc");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ExecAgent {
    config: ExecConfig,
    argv: Vec<String>,
    /// The allowlisted part of ferry's environment, taken once at construction.
    inherited: Vec<(OsString, OsString)>,
    slots: Arc<Semaphore>,
    running: Arc<Mutex<HashMap<String, RunningTurn>>>,
    next_serial: AtomicU64,
}

impl fmt::Debug for ExecAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Names only: the values are ferry's environment.
        let inherited: Vec<_> = self.inherited.iter().map(|(k, _)| k).collect();
        f.debug_struct("ExecAgent")
            .field("config", &self.config)
            .field("inherited", &inherited)
            .field("running", &self.running.lock().len())
            .finish_non_exhaustive()
    }
}

/// A turn in progress, as `cancel` finds it.
#[derive(Debug)]
struct RunningTurn {
    serial: u64,
    stop: Arc<Notify>,
    /// Closed (its sender dropped) when the turn has ended and its child was reaped.
    done: watch::Receiver<()>,
}

/// Takes a turn out of the running map when the turn ends, however it ends.
struct Registration {
    running: Arc<Mutex<HashMap<String, RunningTurn>>>,
    task_id: String,
    serial: u64,
    /// Dropped after the map entry is gone: wakes the `cancel` waiting for this turn.
    _done: watch::Sender<()>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut running = self.running.lock();
        if running
            .get(&self.task_id)
            .is_some_and(|r| r.serial == self.serial)
        {
            running.remove(&self.task_id);
        }
    }
}

impl ExecAgent {
    /// An agent for `config`, inheriting the allowlisted variables of ferry's environment as it
    /// is now.
    pub fn new(config: ExecConfig) -> Result<Self, ExecError> {
        let parent = std::env::vars_os().collect();
        Self::build(config, parent)
    }

    /// An agent for `config` whose command inherits from `vars` instead of ferry's
    /// environment (still only the allowlisted names): for tests, which must not change the
    /// process's environment, and for embedders that keep their own.
    pub fn with_parent_env(
        config: ExecConfig,
        vars: Vec<(String, String)>,
    ) -> Result<Self, ExecError> {
        let parent = vars
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        Self::build(config, parent)
    }

    fn build(config: ExecConfig, parent: Vec<(OsString, OsString)>) -> Result<Self, ExecError> {
        config.validate()?;
        let argv = config.argv()?;
        let inherited = parent
            .into_iter()
            .filter(|(name, _)| {
                config.env.iter().any(|allowed| name == allowed.as_str())
                    && !inputs::OWN_VARIABLES.iter().any(|own| name == *own)
            })
            .collect();
        Ok(Self {
            slots: Arc::new(Semaphore::new(config.max_concurrent)),
            config,
            argv,
            inherited,
            running: Arc::default(),
            next_serial: AtomicU64::new(0),
        })
    }

    /// The config this agent runs.
    pub fn config(&self) -> &ExecConfig {
        &self.config
    }

    fn register(&self, task_id: &str) -> (Arc<Notify>, Registration) {
        let serial = self.next_serial.fetch_add(1, Ordering::Relaxed);
        let stop = Arc::new(Notify::new());
        let (done_tx, done_rx) = watch::channel(());
        self.running.lock().insert(
            task_id.to_owned(),
            RunningTurn {
                serial,
                stop: stop.clone(),
                done: done_rx,
            },
        );
        let registration = Registration {
            running: self.running.clone(),
            task_id: task_id.to_owned(),
            serial,
            _done: done_tx,
        };
        (stop, registration)
    }

    fn busy(&self) -> AgentError {
        let n = self.config.max_concurrent;
        AgentError::Protocol(
            A2aError::new(
                ErrorKind::Unavailable,
                format!("the agent is already running its command {n} times at once (max_concurrent); try again shortly"),
            )
            .with_reason(EXEC_BUSY)
            .with_meta("retryAfterSeconds", "1"),
        )
    }

    async fn run(&self, ctx: RequestContext, events: EventSink) -> Result<(), AgentError> {
        // Refused before anything happens, so that the caller may simply retry.
        let Ok(_slot) = self.slots.clone().try_acquire_owned() else {
            return Err(self.busy());
        };
        let (stop, _registration) = self.register(&ctx.task_id);
        let turn = inputs::turn_number(&ctx);
        events.working(None).await?;
        let data = inputs::data_json(&ctx.message);
        let data_file = match inputs::DataFile::create(&data).await {
            Ok(file) => file,
            Err(e) => {
                let why = format!("could not write the data file for the command: {e}");
                events.fail(events.text_message(why)).await?;
                return Ok(());
            }
        };
        let mut env = self.inherited.clone();
        env.extend(inputs::ferry_variables(&ctx, turn, &data, data_file.path()));
        let spec = turn::TurnSpec {
            task_id: ctx.task_id.as_str().into(),
            argv: &self.argv,
            env,
            working_dir: self.config.working_dir.as_deref(),
            stdin: inputs::stdin_text(&ctx.message),
            artifact_id: format!("output-{turn}"),
            timeout: Duration::from_secs(self.config.timeout_secs),
            max_output_bytes: self.config.max_output_bytes,
            max_stderr_log_bytes: self.config.max_stderr_log_bytes,
            input_exit_code: self.config.input_exit_code,
            input_marker: &self.config.input_marker,
        };
        turn::run_turn(spec, &events, &stop).await
        // `data_file`, `_registration` and `_slot` go here, in that order: the file is removed
        // and cancel is answered only once the command was reaped.
    }
}

impl AgentExecutor for ExecAgent {
    fn describe(&self) -> AgentDescription {
        let program = self.config.program_name();
        let name = self.config.name.clone().unwrap_or_else(|| program.clone());
        let description = self.config.description.clone().unwrap_or_else(|| {
            format!("Runs {program} for each message: the message's text is its input, what it prints is the answer.")
        });
        let skill = AgentSkill {
            id: "exec".into(),
            name: format!("run {program}"),
            description: format!(
                "Runs {program} once per message. Text parts arrive on its stdin, data parts as a JSON array; its stdout streams back as the artifact. It may ask for more input, and the next message continues the task."
            ),
            tags: vec!["exec".into(), "command".into()],
            examples: Vec::new(),
            input_modes: Vec::new(),
            output_modes: Vec::new(),
            security_requirements: Vec::new(),
        };
        let mut card = AgentDescription::new(name, description).with_skills(vec![skill]);
        card.input_modes = vec!["text/plain".into(), "application/json".into()];
        card.output_modes = vec!["text/plain".into()];
        card.streaming = true;
        card
    }

    fn execute(&self, ctx: RequestContext, events: EventSink) -> AgentFuture<'_> {
        Box::pin(self.run(ctx, events))
    }

    /// Stops the task's running turn, if it has one: SIGTERM to its process group, SIGKILL
    /// after 2 s, then waits until the command was reaped. The turn itself reports
    /// `CANCELED` (after closing its artifact), so this returns once the task is canceled.
    /// Without a running turn (the task waits for input) there is nothing to stop, and the
    /// server marks the task canceled.
    fn cancel(&self, ctx: RequestContext, _events: EventSink) -> AgentFuture<'_> {
        Box::pin(async move {
            let found = self
                .running
                .lock()
                .get(&ctx.task_id)
                .map(|r| (r.stop.clone(), r.done.clone()));
            let Some((stop, mut done)) = found else {
                return Ok(());
            };
            stop.notify_one();
            // `changed` fails once the turn dropped its sender: the turn is over.
            while done.changed().await.is_ok() {}
            Ok(())
        })
    }
}
