//! The exec agent against real processes: small `/bin/sh` scripts in a temp directory,
//! driven through `execute`/`cancel` with a sink that records events, without a server.
//!
//! No test sleeps to synchronize: each waits for the event it needs (a recorded event, a
//! file, a process gone from `/proc`), with a generous timeout only as a failure guard.
//! Scripts may sleep; the tests never do. Their background sleeps are short (60 s): should a
//! regression let one escape, it would also keep every file descriptor it inherited (the
//! cargo lock of `flock`, say) for no longer than that.

use ferry_agent::{
    AgentError, AgentEvent, AgentExecutor, EmitError, EmitFuture, EventSink, EventTarget,
    RequestContext,
};
use ferry_agents::{ExecAgent, ExecConfig};
use ferry_proto::{Artifact, ErrorKind, Message, Part, Task, TaskState, TaskStatus};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// How long a test waits for something before it fails (never a synchronization).
const GUARD: Duration = Duration::from_secs(30);

/// A directory of its own under the system temp dir, removed when dropped.
struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new(test: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "ferry-exec-test-{}-{test}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("create the scratch dir");
        Self { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Writes a script and returns the config that runs it with `/bin/sh` (not by executing
    /// the file itself: a file just written may still be open in a forked child, and exec
    /// would then fail with ETXTBSY).
    fn script(&self, body: &str, args: &[&str]) -> ExecConfig {
        let path = self.path("script.sh");
        std::fs::write(&path, body).expect("write the script");
        let mut argv = vec!["/bin/sh".to_owned(), path.display().to_string()];
        argv.extend(args.iter().map(|a| a.to_string()));
        ExecConfig::from_argv(argv).expect("a valid config")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Records events into a channel the test awaits.
struct Recorder(mpsc::UnboundedSender<AgentEvent>);

impl EventTarget for Recorder {
    fn emit(&self, event: AgentEvent) -> EmitFuture<'_> {
        let _ = self.0.send(event);
        Box::pin(async { Ok::<(), EmitError>(()) })
    }
}

fn parent_env() -> Vec<(String, String)> {
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".to_owned());
    vec![("PATH".to_owned(), path)]
}

fn agent(config: ExecConfig) -> Arc<ExecAgent> {
    Arc::new(ExecAgent::with_parent_env(config, parent_env()).expect("a valid agent"))
}

fn context(task_id: &str, message: Message, task: Option<Task>) -> RequestContext {
    RequestContext {
        task,
        ..RequestContext::new(message, task_id, format!("ctx-{task_id}"))
    }
}

fn text(task_id: &str, text: &str) -> RequestContext {
    context(
        task_id,
        Message::user(format!("m-{task_id}"), vec![Part::text(text)]),
        None,
    )
}

/// One turn running on its own tokio task, and what it reported so far.
struct Turn {
    ctx: RequestContext,
    sink: EventSink,
    events: mpsc::UnboundedReceiver<AgentEvent>,
    handle: JoinHandle<Result<(), AgentError>>,
}

impl Turn {
    fn start(agent: &Arc<ExecAgent>, ctx: RequestContext) -> Self {
        let (tx, events) = mpsc::unbounded_channel();
        let sink = EventSink::new(&ctx.task_id, &ctx.context_id, Arc::new(Recorder(tx)));
        let (agent, turn_ctx, turn_sink) = (agent.clone(), ctx.clone(), sink.clone());
        let handle = tokio::spawn(async move { agent.execute(turn_ctx, turn_sink).await });
        Self {
            ctx,
            sink,
            events,
            handle,
        }
    }

    async fn next(&mut self) -> AgentEvent {
        tokio::time::timeout(GUARD, self.events.recv())
            .await
            .expect("an event in time")
            .expect("the recorder is alive")
    }

    /// The next artifact chunk (skipping statuses): (artifact, append, last_chunk).
    async fn next_chunk(&mut self) -> (Arc<Artifact>, bool, bool) {
        loop {
            match self.next().await {
                AgentEvent::Artifact {
                    artifact,
                    append,
                    last_chunk,
                } => return (artifact, append, last_chunk),
                AgentEvent::Status { state, message } => assert!(
                    !state.is_terminal(),
                    "ended before a chunk: {state} {:?}",
                    message.map(|m| m.text())
                ),
                AgentEvent::Message(m) => panic!("unexpected direct message {m:?}"),
            }
        }
    }

    /// Every event up to the state the turn ends in (terminal or interrupted), and the
    /// turn's own result.
    async fn finish(mut self) -> Ended {
        let mut chunks = Vec::new();
        let (state, message) = loop {
            match self.next().await {
                AgentEvent::Artifact {
                    artifact,
                    append,
                    last_chunk,
                } => chunks.push((artifact, append, last_chunk)),
                AgentEvent::Status { state, message }
                    if state.is_terminal() || state.is_interrupted() =>
                {
                    break (state, message.map(|m| Message::clone(&m)));
                }
                AgentEvent::Status { .. } => {}
                AgentEvent::Message(m) => panic!("unexpected direct message {m:?}"),
            }
        };
        let result = tokio::time::timeout(GUARD, self.handle)
            .await
            .expect("the turn ends in time")
            .expect("the turn did not panic");
        assert!(result.is_ok(), "{result:?}");
        Ended {
            state,
            message,
            chunks,
        }
    }
}

/// How a turn ended.
struct Ended {
    state: TaskState,
    message: Option<Message>,
    chunks: Vec<(Arc<Artifact>, bool, bool)>,
}

impl Ended {
    fn says(&self) -> String {
        self.message.as_ref().map(Message::text).unwrap_or_default()
    }

    fn output(&self) -> String {
        chunk_text(&self.chunks)
    }
}

fn chunk_text(chunks: &[(Arc<Artifact>, bool, bool)]) -> String {
    chunks
        .iter()
        .flat_map(|(a, _, _)| a.parts.iter().filter_map(Part::as_text))
        .collect()
}

/// Waits until `pid` has ended (a zombie nobody reaped yet counts), as an event (a pidfd).
async fn gone(pid: u32) -> bool {
    tokio::task::spawn_blocking(move || ferry_testkit::process::wait_for_exit(pid, GUARD))
        .await
        .expect("the waiting thread")
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

fn pids(line: &str) -> Vec<u32> {
    line.split_whitespace()
        .map(|p| p.parse().expect("a pid"))
        .collect()
}

#[tokio::test]
async fn stdout_streams_as_chunks_of_one_artifact() -> TestResult {
    let scratch = Scratch::new("stream");
    let gate = scratch.path("gate");
    let config = scratch.script(
        "echo first\nwhile [ ! -e \"$1\" ]; do sleep 0.05; done\necho second\n",
        &[&gate.display().to_string()],
    );
    let agent = agent(config);
    let mut turn = Turn::start(&agent, text("t-stream", ""));
    assert!(matches!(
        turn.next().await,
        AgentEvent::Status {
            state: TaskState::Working,
            ..
        }
    ));
    // The script is still waiting for the gate: this chunk can only have been streamed.
    let (first, append, last) = turn.next_chunk().await;
    assert_eq!(first.artifact_id, "output-1");
    assert_eq!(first.name, "output");
    assert_eq!(first.parts[0].as_text(), Some("first\n"));
    assert!(!append && !last);
    std::fs::write(&gate, "")?;
    let ended = turn.finish().await;
    assert_eq!(ended.state, TaskState::Completed, "{}", ended.says());
    assert_eq!(format!("first\n{}", ended.output()), "first\nsecond\n");
    assert!(
        ended
            .chunks
            .iter()
            .all(|(a, append, _)| *append && a.artifact_id == "output-1")
    );
    let flags: Vec<bool> = ended.chunks.iter().map(|(_, _, last)| *last).collect();
    assert_eq!(flags.last(), Some(&true));
    assert_eq!(flags.iter().filter(|l| **l).count(), 1, "one last chunk");
    Ok(())
}

#[tokio::test]
async fn a_non_zero_exit_fails_with_the_status_and_the_end_of_stderr() {
    let scratch = Scratch::new("fail");
    let config = scratch.script(
        "echo partial\necho 'first problem' >&2\necho 'it broke' >&2\nexit 3\n",
        &[],
    );
    let ended = Turn::start(&agent(config), text("t-fail", ""))
        .finish()
        .await;
    assert_eq!(ended.state, TaskState::Failed);
    let says = ended.says();
    assert!(says.contains("status 3"), "{says}");
    assert!(says.contains("first problem\nit broke"), "{says}");
    assert_eq!(
        ended.output(),
        "partial\n",
        "output before the failure is kept"
    );
    assert!(
        ended.chunks.last().is_some_and(|(_, _, last)| *last),
        "the artifact is closed"
    );
}

#[tokio::test]
async fn a_signal_is_named() {
    let scratch = Scratch::new("signal");
    let config = scratch.script("kill -KILL $$\n", &[]);
    let ended = Turn::start(&agent(config), text("t-signal", ""))
        .finish()
        .await;
    assert_eq!(ended.state, TaskState::Failed);
    assert!(
        ended.says().contains("signal 9 (SIGKILL)"),
        "{}",
        ended.says()
    );
}

/// The task as a server would hand the second turn: the first message and the agent's
/// question in history.
fn after_first_turn(ctx: &RequestContext, question: Message) -> Task {
    let question = Arc::new(question);
    let mut task = Task::new(
        ctx.task_id.as_str(),
        ctx.context_id.as_str(),
        TaskStatus::now(TaskState::InputRequired, Some(question.clone())),
    );
    task.history = vec![Arc::new(ctx.message.clone()), question];
    task
}

#[tokio::test]
async fn a_marker_line_asks_for_input_and_the_next_turn_answers() {
    let scratch = Scratch::new("marker");
    let config = scratch.script(
        "if [ \"$FERRY_TURN\" = 1 ]; then\n  echo 'FERRY_INPUT_REQUIRED: what is your name?'\n  exit 0\nfi\nread name\necho \"hello $name (turn $FERRY_TURN)\"\n",
        &[],
    );
    let agent = agent(config);
    let first = text("t-marker", "start");
    let ended = Turn::start(&agent, first.clone()).finish().await;
    assert_eq!(ended.state, TaskState::InputRequired);
    assert_eq!(ended.says(), "what is your name?");
    assert!(ended.chunks.is_empty(), "the marker line is not output");

    let question = ended.message.clone().expect("a prompt");
    let second = context(
        "t-marker",
        Message::user("m-2", vec![Part::text("Ada")]),
        Some(after_first_turn(&first, question)),
    );
    let ended = Turn::start(&agent, second).finish().await;
    assert_eq!(ended.state, TaskState::Completed, "{}", ended.says());
    assert_eq!(ended.output(), "hello Ada (turn 2)\n");
    assert!(
        ended
            .chunks
            .iter()
            .all(|(a, _, _)| a.artifact_id == "output-2")
    );
}

#[tokio::test]
async fn the_input_exit_code_asks_with_a_generic_prompt() {
    let scratch = Scratch::new("exit-code");
    let config = scratch.script(
        "if [ \"$FERRY_TURN\" = 1 ]; then exit 10; fi\nread n\necho \"got $n\"\n",
        &[],
    );
    let agent = agent(config);
    let first = text("t-code", "start");
    let ended = Turn::start(&agent, first.clone()).finish().await;
    assert_eq!(ended.state, TaskState::InputRequired);
    assert_eq!(ended.says(), "the command asks for more input");
    let question = ended.message.clone().expect("a prompt");
    let second = context(
        "t-code",
        Message::user("m-2", vec![Part::text("42")]),
        Some(after_first_turn(&first, question)),
    );
    let ended = Turn::start(&agent, second).finish().await;
    assert_eq!(ended.state, TaskState::Completed, "{}", ended.says());
    assert_eq!(ended.output(), "got 42\n");
}

#[tokio::test]
async fn cancel_kills_the_command_and_what_it_started() -> TestResult {
    let scratch = Scratch::new("cancel");
    let config = scratch.script("sleep 60 &\necho \"$$ $!\"\nwait\n", &[]);
    let agent = agent(config);
    let mut turn = Turn::start(&agent, text("t-cancel", ""));
    let (chunk, _, _) = turn.next_chunk().await;
    let pids = pids(chunk.parts[0].as_text().unwrap_or_default());
    assert_eq!(pids.len(), 2, "{pids:?}");
    assert!(pids.iter().all(|p| alive(*p)));

    let cancel = agent.cancel(turn.ctx.clone(), turn.sink.clone());
    tokio::time::timeout(GUARD, cancel).await??;
    // `cancel` returns once the script was reaped; its sleep dies with the group.
    assert!(gone(pids[0]).await, "the script survived");
    assert!(gone(pids[1]).await, "the grandchild survived");
    let ended = turn.finish().await;
    assert_eq!(ended.state, TaskState::Canceled);
    assert!(ended.chunks.last().is_some_and(|(_, _, last)| *last));
    Ok(())
}

#[tokio::test]
async fn a_dropped_turn_kills_its_process_group() {
    let scratch = Scratch::new("drop");
    let config = scratch.script("sleep 60 &\necho \"$$ $!\"\nwait\n", &[]);
    let agent = agent(config);
    let mut turn = Turn::start(&agent, text("t-drop", ""));
    let (chunk, _, _) = turn.next_chunk().await;
    let pids = pids(chunk.parts[0].as_text().unwrap_or_default());
    assert_eq!(pids.len(), 2, "{pids:?}");
    // What a server does to a turn it gives up on.
    turn.handle.abort();
    assert!(gone(pids[0]).await, "the script survived");
    assert!(gone(pids[1]).await, "the grandchild survived");
}

#[tokio::test]
async fn nothing_the_command_started_outlives_its_turn() {
    let scratch = Scratch::new("leftover");
    let config = scratch.script("sleep 60 &\necho $!\n", &[]);
    let ended = Turn::start(&agent(config), text("t-left", ""))
        .finish()
        .await;
    assert_eq!(ended.state, TaskState::Completed, "{}", ended.says());
    let pid = pids(&ended.output());
    assert!(gone(pid[0]).await, "the background sleep survived");
}

#[tokio::test]
async fn only_allowlisted_variables_reach_the_command() {
    let scratch = Scratch::new("env");
    let mut config = scratch.script("env\n", &[]);
    // An allowlisted FERRY_ name from the parent does not override ferry's own.
    config.env.push("FERRY_TURN".into());
    let mut vars = parent_env();
    vars.extend(
        [
            ("SECRET_TOKEN", "hunter2"),
            ("FERRY_TOKEN", "x"),
            ("FERRY_TURN", "99"),
            ("HOME", "/nowhere"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned())),
    );
    let agent = Arc::new(ExecAgent::with_parent_env(config, vars).expect("a valid agent"));
    let ended = Turn::start(&agent, text("t-env", "")).finish().await;
    assert_eq!(ended.state, TaskState::Completed, "{}", ended.says());
    let env = ended.output();
    let names: Vec<&str> = env
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, _)| k)
        .collect();
    for expected in [
        "PATH",
        "HOME",
        "FERRY_TASK_ID",
        "FERRY_CONTEXT_ID",
        "FERRY_TURN",
        "FERRY_DATA_FILE",
        "FERRY_DATA",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    assert!(env.lines().any(|l| l == "FERRY_TASK_ID=t-env"), "{env}");
    assert!(
        env.lines().any(|l| l == "FERRY_CONTEXT_ID=ctx-t-env"),
        "{env}"
    );
    assert!(env.lines().any(|l| l == "FERRY_TURN=1"), "{env}");
    assert!(env.lines().any(|l| l == "HOME=/nowhere"), "{env}");
    assert!(
        !env.contains("SECRET_TOKEN") && !env.contains("hunter2"),
        "{env}"
    );
    assert!(!env.contains("FERRY_TOKEN"), "{env}");
    // `sh` adds PWD (and maybe SHLVL, _) itself; nothing else may appear.
    let extra: Vec<&&str> = names
        .iter()
        .filter(|n| {
            !n.starts_with("FERRY_") && !["PATH", "HOME", "PWD", "SHLVL", "_", "OLDPWD"].contains(n)
        })
        .collect();
    assert!(extra.is_empty(), "unexpected variables {extra:?}");
}

#[tokio::test]
async fn data_parts_arrive_as_a_json_array_in_a_file_and_inline() {
    let scratch = Scratch::new("data");
    let config = scratch.script(
        "cat \"$FERRY_DATA_FILE\"; echo\nprintf '%s\\n' \"$FERRY_DATA\"\necho \"$FERRY_DATA_FILE\"\nif [ -z \"${FERRY_DATA+set}\" ]; then echo no-inline; fi\n",
        &[],
    );
    let agent = agent(config);
    let message = Message::user(
        "m-data",
        vec![
            Part::text("some text"),
            Part::data(serde_json::json!({"a": 1})),
            Part::data(serde_json::json!([2, "x"])),
        ],
    );
    let ended = Turn::start(&agent, context("t-data", message, None))
        .finish()
        .await;
    assert_eq!(ended.state, TaskState::Completed, "{}", ended.says());
    let output = ended.output();
    let lines: Vec<&str> = output.lines().collect();
    assert_eq!(lines[..2], [r#"[{"a":1},[2,"x"]]"#, r#"[{"a":1},[2,"x"]]"#]);
    assert!(
        !Path::new(lines[2]).exists(),
        "the data file is removed after the turn"
    );
    assert_eq!(lines.len(), 3);

    // Too big to put inline: only the file has it.
    let big = "y".repeat(70 * 1024);
    let message = Message::user("m-big", vec![Part::data(serde_json::json!(big))]);
    let ended = Turn::start(&agent, context("t-big", message, None))
        .finish()
        .await;
    let output = ended.output();
    let lines: Vec<&str> = output.lines().collect();
    assert_eq!(lines[0].len(), big.len() + 4, "[\"…\"] from the file");
    assert_eq!(lines[1], "", "FERRY_DATA is unset");
    assert_eq!(lines.last(), Some(&"no-inline"));
}

#[tokio::test]
async fn a_turn_over_its_time_limit_fails() -> TestResult {
    let scratch = Scratch::new("timeout");
    let mut config = scratch.script("echo $$\nsleep 60\n", &[]);
    config.timeout_secs = 1;
    let mut turn = Turn::start(&agent(config), text("t-slow", ""));
    let (chunk, _, _) = turn.next_chunk().await;
    let pid = pids(chunk.parts[0].as_text().unwrap_or_default());
    let ended = turn.finish().await;
    assert_eq!(ended.state, TaskState::Failed);
    assert_eq!(ended.says(), "the command did not finish within 1 s");
    assert!(gone(pid[0]).await);
    Ok(())
}

#[tokio::test]
async fn too_much_output_kills_the_command() {
    let scratch = Scratch::new("flood");
    let mut config = scratch.script("while :; do echo 0123456789; done\n", &[]);
    config.max_output_bytes = 1000;
    let ended = Turn::start(&agent(config), text("t-flood", ""))
        .finish()
        .await;
    assert_eq!(ended.state, TaskState::Failed);
    assert!(
        ended.says().contains("more than 1000 bytes"),
        "{}",
        ended.says()
    );
    assert!(ended.output().len() <= 1000);
}

#[tokio::test]
async fn a_turn_over_max_concurrent_is_refused_before_it_starts() -> TestResult {
    let scratch = Scratch::new("busy");
    let gate = scratch.path("gate");
    let mut config = scratch.script(
        "echo started\nwhile [ ! -e \"$1\" ]; do sleep 0.05; done\n",
        &[&gate.display().to_string()],
    );
    config.max_concurrent = 1;
    let agent = agent(config);
    let mut first = Turn::start(&agent, text("t-busy-1", ""));
    first.next_chunk().await;

    let (tx, mut refused_events) = mpsc::unbounded_channel();
    let sink = EventSink::new("t-busy-2", "ctx", Arc::new(Recorder(tx)));
    let refused = agent.execute(text("t-busy-2", ""), sink).await;
    let Err(AgentError::Protocol(e)) = refused else {
        panic!("not refused: {refused:?}");
    };
    assert_eq!(e.kind, ErrorKind::Unavailable);
    assert_eq!(e.reason(), "EXEC_BUSY");
    assert_eq!(e.retry_after_secs(), Some(1));
    assert!(
        refused_events.try_recv().is_err(),
        "a refused turn reports nothing"
    );

    std::fs::write(&gate, "")?;
    assert_eq!(first.finish().await.state, TaskState::Completed);
    // The slot is free again.
    let again = Turn::start(&agent, text("t-busy-3", "")).finish().await;
    assert_eq!(again.state, TaskState::Completed);
    Ok(())
}

#[tokio::test]
async fn a_program_that_cannot_start_fails_the_task() {
    let config =
        ExecConfig::from_command_line("/nonexistent/ferry-no-such-tool --x").expect("valid");
    let ended = Turn::start(&agent(config), text("t-missing", ""))
        .finish()
        .await;
    assert_eq!(ended.state, TaskState::Failed);
    assert!(
        ended
            .says()
            .starts_with("could not start /nonexistent/ferry-no-such-tool"),
        "{}",
        ended.says()
    );
}

#[test]
fn the_card_names_the_program_and_no_secrets() {
    let mut config =
        ExecConfig::from_command_line("/opt/tools/summarize --api-key s3cret").expect("valid");
    config.env.push("SECRET_TOKEN".into());
    let vars = vec![("SECRET_TOKEN".to_owned(), "hunter2".to_owned())];
    let card = ExecAgent::with_parent_env(config, vars)
        .expect("valid")
        .describe();
    assert_eq!(card.name, "summarize");
    assert!(card.streaming);
    assert_eq!(card.skills.len(), 1);
    assert_eq!(card.skills[0].id, "exec");
    assert_eq!(card.input_modes, ["text/plain", "application/json"]);
    assert_eq!(card.output_modes, ["text/plain"]);
    let text = format!("{} {} {:?}", card.name, card.description, card.skills);
    assert!(
        !text.contains("s3cret") && !text.contains("hunter2") && !text.contains("/opt"),
        "{text}"
    );
}
