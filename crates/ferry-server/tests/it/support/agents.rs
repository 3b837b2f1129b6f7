//! [`ScriptedAgent`]: one test agent whose behaviour the first word of the message picks, and
//! a [`Remote`] through which a test drives the tasks that wait for it.
//!
//! | first word | what the agent does |
//! |---|---|
//! | `wait` | WORKING, then follows the test's [`Step`]s until `Complete` |
//! | `reply` | a direct message `pong` (no task) |
//! | `ask` | WORKING, then INPUT_REQUIRED; a follow-up `done` completes the task, anything else asks again |
//! | `panic` | WORKING, then panics with an internal detail the client must never see |
//! | `silent` | returns without reporting anything |
//! | anything else | WORKING, an `answer` artifact `you said: <text>`, COMPLETED |
//!
//! Before any script, parts whose `mediaType` is not `text/plain` or `application/json` are
//! refused with ContentTypeNotSupportedError.

use ferry_agent::{
    AgentDescription, AgentError, AgentExecutor, AgentFuture, EventSink, RequestContext,
};
use ferry_proto::{A2aError, AgentExtension, Artifact, ErrorKind, Part};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, mpsc};

/// The extension URI the agent declares (and so activates when a client asks for it).
pub(crate) const DECLARED_EXTENSION: &str = "urn:ferry:test:declared";
/// What the `panic` script panics with; it must not reach any client.
pub(crate) const PANIC_DETAIL: &str = "secret internal detail";
const ACCEPTED_MEDIA_TYPES: &[&str] = &["", "text/plain", "application/json"];

/// What a waiting task does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// Emit an artifact `step-<n>` holding this text.
    Artifact(String),
    /// Emit this many chunks of artifact `flood` at once, without yielding in between.
    Flood(usize),
    /// Complete the task.
    Complete,
}

/// The test's end of the agent: sends steps to waiting tasks, hears when they finish.
#[derive(Debug, Clone)]
pub(crate) struct Remote(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    steps_tx: mpsc::UnboundedSender<Step>,
    steps: Mutex<mpsc::UnboundedReceiver<Step>>,
    started_tx: mpsc::UnboundedSender<String>,
    started: Mutex<mpsc::UnboundedReceiver<String>>,
    finished_tx: mpsc::UnboundedSender<String>,
    finished: Mutex<mpsc::UnboundedReceiver<String>>,
}

impl Remote {
    fn new() -> Self {
        let (steps_tx, steps) = mpsc::unbounded_channel();
        let (started_tx, started) = mpsc::unbounded_channel();
        let (finished_tx, finished) = mpsc::unbounded_channel();
        Self(Arc::new(Shared {
            steps_tx,
            steps: Mutex::new(steps),
            started_tx,
            started: Mutex::new(started),
            finished_tx,
            finished: Mutex::new(finished),
        }))
    }

    /// Queues a step; waiting tasks take steps in the order they began waiting.
    pub(crate) fn step(&self, step: Step) {
        self.0
            .steps_tx
            .send(step)
            .expect("the agent keeps its end of the channel");
    }

    /// Waits until a `wait` task is WORKING and waiting for steps; returns its id.
    pub(crate) async fn started(&self) -> String {
        next_id(&self.0.started, "a task started waiting").await
    }

    /// Waits until a `wait` task completed; returns its id. Once this returns, the task is
    /// COMPLETED in the store (events apply synchronously).
    pub(crate) async fn finished(&self) -> String {
        next_id(&self.0.finished, "a waiting task completed").await
    }

    async fn next_step(&self) -> Option<Step> {
        self.0.steps.lock().await.recv().await
    }
}

/// The next task id reported on `ids`, within 10 s.
async fn next_id(ids: &Mutex<mpsc::UnboundedReceiver<String>>, what: &str) -> String {
    let mut rx = ids.lock().await;
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .unwrap_or_else(|_| panic!("not within 10 s: {what}"))
        .expect("the agent keeps its end of the channel")
}

/// The test agent (see the module docs for its scripts).
#[derive(Debug)]
pub(crate) struct ScriptedAgent {
    streaming: bool,
    remote: Remote,
}

impl ScriptedAgent {
    /// A streaming agent and its remote.
    pub(crate) fn new() -> (Self, Remote) {
        let remote = Remote::new();
        (
            Self {
                streaming: true,
                remote: remote.clone(),
            },
            remote,
        )
    }

    /// The same agent with `capabilities.streaming` false.
    pub(crate) fn without_streaming() -> Self {
        Self {
            streaming: false,
            remote: Remote::new(),
        }
    }

    async fn wait_for_steps(&self, events: &EventSink) -> Result<(), AgentError> {
        events.working(None).await?;
        let _ = self.remote.0.started_tx.send(events.task_id().to_owned());
        let mut n = 0;
        while let Some(step) = self.remote.next_step().await {
            match step {
                Step::Artifact(text) => {
                    n += 1;
                    events
                        .artifact(
                            Artifact::new(format!("step-{n}"), "step", vec![Part::text(text)]),
                            false,
                            true,
                        )
                        .await?;
                }
                Step::Flood(count) => {
                    for i in 0..count {
                        let chunk =
                            Artifact::new("flood", "flood", vec![Part::text(i.to_string())]);
                        events.artifact(chunk, i > 0, i + 1 == count).await?;
                    }
                }
                Step::Complete => {
                    events.complete(None).await?;
                    let _ = self.remote.0.finished_tx.send(events.task_id().to_owned());
                    break;
                }
            }
        }
        Ok(())
    }
}

impl AgentExecutor for ScriptedAgent {
    fn describe(&self) -> AgentDescription {
        let mut d = AgentDescription::new(
            "scripted",
            "Follows the script its first word names; for ferry's tests.",
        );
        d.input_modes = vec!["text/plain".into(), "application/json".into()];
        d.streaming = self.streaming;
        d.extensions = vec![AgentExtension {
            uri: DECLARED_EXTENSION.into(),
            description: "declared so that clients can activate it".into(),
            required: false,
            params: None,
        }];
        d
    }

    fn execute(&self, ctx: RequestContext, events: EventSink) -> AgentFuture<'_> {
        Box::pin(async move {
            if let Some(part) = ctx
                .message
                .parts
                .iter()
                .find(|p| !ACCEPTED_MEDIA_TYPES.contains(&p.media_type.as_str()))
            {
                let e = A2aError::new(
                    ErrorKind::ContentTypeNotSupported,
                    format!(
                        "{} is not accepted; send text/plain or application/json",
                        part.media_type
                    ),
                );
                return Err(AgentError::Protocol(e));
            }
            let text = ctx.message.text();
            let word = text.split_whitespace().next().unwrap_or_default();
            match word {
                "wait" => return self.wait_for_steps(&events).await,
                "reply" => {
                    events
                        .message(events.agent_message(vec![Part::text("pong")]))
                        .await?
                }
                "silent" => {}
                "panic" => {
                    events.working(None).await?;
                    panic!("{PANIC_DETAIL}");
                }
                _ if ctx.task.is_some() && text == "done" => {
                    events
                        .complete(Some(events.text_message("finished")))
                        .await?;
                }
                _ if word == "ask" || ctx.task.is_some() => {
                    events.working(None).await?;
                    events
                        .input_required(events.text_message("what next?"))
                        .await?;
                }
                _ => {
                    events.working(None).await?;
                    let answer = Artifact::new(
                        "answer",
                        "answer",
                        vec![Part::text(format!("you said: {text}"))],
                    );
                    events.artifact(answer, false, true).await?;
                    events.complete(None).await?;
                }
            }
            Ok(())
        })
    }
}
