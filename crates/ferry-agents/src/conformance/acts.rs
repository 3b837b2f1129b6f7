//! The ACTS behaviours (the A2A Conformance Test Specification, the corpus the official SDKs
//! run): chosen by the text of the first part of the conversation's first message, a
//! `tck-…` name to the end of the word (`tck-multi-turn start conversation`). Follow-up turns
//! carry no name; the task's history says which behaviour it is.
//!
//! [`BEHAVIOURS`] is the one table: the agent plays from it and `acts/sut-behaviors.yaml` (the
//! declaration an ACTS runner gates its tests on) is printed from it.

use super::client_parse;
use ferry_agent::{AgentError, EventSink, RequestContext};
use ferry_proto::{Artifact, Message, Part, PartContent, Role, TaskState};
use std::fmt::Write;
use std::time::Duration;

/// What a behaviour does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Behaviour {
    CompleteTask,
    MessageResponse,
    LongRunning,
    MultiTurn,
    Cancel,
    TaskFailure,
    AuthRequired,
    InputRequired,
    RejectTask,
    StreamBasic,
    StreamChunked,
    ArtifactText,
    ArtifactData,
    ArtifactFile,
    ArtifactFileUrl,
    ClientParse,
}

/// One declared behaviour: its name and what the declaration promises about it.
pub(super) struct Declared {
    pub(super) name: &'static str,
    pub(super) behaviour: Behaviour,
    /// The state the task ends (or rests) in; `None` when the answer is a message.
    terminal: Option<TaskState>,
    /// How long the agent works before it answers.
    delay: Option<Duration>,
    /// Whether the behaviour is meant to be streamed.
    streaming: bool,
}

const fn task(name: &'static str, behaviour: Behaviour, terminal: TaskState) -> Declared {
    Declared {
        name,
        behaviour,
        terminal: Some(terminal),
        delay: None,
        streaming: false,
    }
}

/// How long `tck-long-running` works (ACTS expects a task that is still running when first
/// polled).
const LONG_RUNNING: Duration = Duration::from_millis(1000);

/// Every behaviour the agent plays, in the order the declaration lists them.
pub(super) const BEHAVIOURS: &[Declared] = &[
    task(
        "tck-complete-task",
        Behaviour::CompleteTask,
        TaskState::Completed,
    ),
    Declared {
        name: "tck-message-response",
        behaviour: Behaviour::MessageResponse,
        terminal: None,
        delay: None,
        streaming: false,
    },
    Declared {
        delay: Some(LONG_RUNNING),
        ..task(
            "tck-long-running",
            Behaviour::LongRunning,
            TaskState::Completed,
        )
    },
    task("tck-multi-turn", Behaviour::MultiTurn, TaskState::Completed),
    task("tck-cancel", Behaviour::Cancel, TaskState::Canceled),
    task(
        "tck-task-failure",
        Behaviour::TaskFailure,
        TaskState::Failed,
    ),
    task(
        "tck-auth-required",
        Behaviour::AuthRequired,
        TaskState::AuthRequired,
    ),
    task(
        "tck-input-required",
        Behaviour::InputRequired,
        TaskState::InputRequired,
    ),
    task(
        "tck-reject-task",
        Behaviour::RejectTask,
        TaskState::Rejected,
    ),
    Declared {
        streaming: true,
        ..task(
            "tck-stream-basic",
            Behaviour::StreamBasic,
            TaskState::Completed,
        )
    },
    Declared {
        streaming: true,
        ..task(
            "tck-stream-chunked",
            Behaviour::StreamChunked,
            TaskState::Completed,
        )
    },
    task(
        "tck-artifact-text",
        Behaviour::ArtifactText,
        TaskState::Completed,
    ),
    task(
        "tck-artifact-data",
        Behaviour::ArtifactData,
        TaskState::Completed,
    ),
    task(
        "tck-artifact-file",
        Behaviour::ArtifactFile,
        TaskState::Completed,
    ),
    task(
        "tck-artifact-file-url",
        Behaviour::ArtifactFileUrl,
        TaskState::Completed,
    ),
    task(
        "tck-client-parse",
        Behaviour::ClientParse,
        TaskState::Completed,
    ),
];

/// What the conversation's text asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Asked {
    /// A behaviour of the table.
    Known(Behaviour),
    /// A `tck-…` name the agent does not play (the task fails saying so).
    Unknown(String),
}

/// The behaviour this turn plays: named by this message, or by the first message of the
/// task's history that names one; `None` when no message names one.
pub(super) fn asked(ctx: &RequestContext) -> Option<Asked> {
    let earlier = ctx.task.iter().flat_map(|t| t.history.iter());
    std::iter::once(&ctx.message)
        .chain(earlier.map(|m| &**m))
        .filter(|m| m.role == Role::User)
        .find_map(|m| name_in(m).map(lookup))
}

/// The `tck-…` word that the first text part of `message` starts with.
fn name_in(message: &Message) -> Option<&str> {
    let text = first_text(message)?.trim_start();
    if !text.starts_with("tck-") {
        return None;
    }
    let end = text
        .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
        .unwrap_or(text.len());
    Some(text[..end].trim_end_matches('-'))
}

fn first_text(message: &Message) -> Option<&str> {
    message.parts.iter().find_map(Part::as_text)
}

fn lookup(name: &str) -> Asked {
    BEHAVIOURS.iter().find(|d| d.name == name).map_or_else(
        || Asked::Unknown(name.to_owned()),
        |d| Asked::Known(d.behaviour),
    )
}

/// Plays `behaviour` for this turn.
pub(super) async fn play(
    behaviour: Behaviour,
    ctx: &RequestContext,
    events: &EventSink,
) -> Result<(), AgentError> {
    let name = BEHAVIOURS
        .iter()
        .find(|d| d.behaviour == behaviour)
        .map_or("tck-?", |d| d.name);
    let ok = || events.text_message(format!("{name} ok"));
    match behaviour {
        Behaviour::MessageResponse => {
            let reply = events.agent_message(vec![Part::text("tck message response")]);
            events.message(reply).await?;
        }
        Behaviour::LongRunning => long_running(events).await?,
        Behaviour::MultiTurn => multi_turn(ctx, events).await?,
        Behaviour::Cancel => {
            events.working(None).await?;
            // WORKING until CancelTask ends the turn.
            std::future::pending::<()>().await;
        }
        Behaviour::StreamBasic | Behaviour::StreamChunked => {
            stream(behaviour, ctx, events).await?;
            events.complete(Some(ok())).await?;
        }
        Behaviour::ArtifactText
        | Behaviour::ArtifactData
        | Behaviour::ArtifactFile
        | Behaviour::ArtifactFileUrl => {
            events.working(None).await?;
            artifact(events, name, artifact_part(behaviour)).await?;
            events.complete(Some(ok())).await?;
        }
        Behaviour::ClientParse => parse_for_the_client(ctx, events, name).await?,
        // Refused before any work, as the kit's reject scenario is.
        Behaviour::RejectTask => events.reject(ok()).await?,
        Behaviour::CompleteTask
        | Behaviour::TaskFailure
        | Behaviour::AuthRequired
        | Behaviour::InputRequired => {
            events.working(None).await?;
            let state = match behaviour {
                Behaviour::CompleteTask => TaskState::Completed,
                Behaviour::TaskFailure => TaskState::Failed,
                Behaviour::AuthRequired => TaskState::AuthRequired,
                _ => TaskState::InputRequired,
            };
            events.status(state, Some(ok())).await?;
        }
    }
    Ok(())
}

/// WORKING, a while, an artifact, COMPLETED.
async fn long_running(events: &EventSink) -> Result<(), AgentError> {
    events.working(None).await?;
    tokio::time::sleep(LONG_RUNNING).await;
    artifact(events, "long-running", Part::text("long running result")).await?;
    events
        .complete(Some(events.text_message("long running work finished")))
        .await?;
    Ok(())
}

/// INPUT_REQUIRED until a message starts with "done", then COMPLETED.
async fn multi_turn(ctx: &RequestContext, events: &EventSink) -> Result<(), AgentError> {
    events.working(None).await?;
    let done = first_text(&ctx.message)
        .is_some_and(|t| t.trim_start().to_ascii_lowercase().starts_with("done"));
    if done {
        events
            .complete(Some(events.text_message("multi-turn complete")))
            .await?;
    } else {
        events
            .input_required(events.text_message("more input please"))
            .await?;
    }
    Ok(())
}

/// A streaming behaviour's events before its end: one artifact, or one in three chunks.
async fn stream(
    behaviour: Behaviour,
    ctx: &RequestContext,
    events: &EventSink,
) -> Result<(), AgentError> {
    events
        .working(Some(events.text_message("streaming started")))
        .await?;
    if behaviour == Behaviour::StreamBasic {
        return artifact(events, "streamed", Part::text("streamed content")).await;
    }
    let id = format!("{}-chunked", ctx.task_id);
    let chunks = ["chunk one ", "chunk two ", "chunk three"];
    for (i, chunk) in chunks.iter().enumerate() {
        let chunk = Artifact::new(id.clone(), "chunked", vec![Part::text(*chunk)]);
        events.artifact(chunk, i > 0, i + 1 == chunks.len()).await?;
    }
    Ok(())
}

/// What the client's parser makes of the payload the message carries, as an artifact; a
/// refused payload fails the task with the reason.
async fn parse_for_the_client(
    ctx: &RequestContext,
    events: &EventSink,
    name: &str,
) -> Result<(), AgentError> {
    events.working(None).await?;
    match client_parse::run(&ctx.message.parts) {
        client_parse::Outcome::Parsed(value) => {
            artifact(events, name, Part::data(value)).await?;
            let ok = events.text_message(format!("{name} ok"));
            events.complete(Some(ok)).await?;
        }
        client_parse::Outcome::Refused(why) => {
            events.fail(events.text_message(why)).await?;
        }
    }
    Ok(())
}

/// The part an artifact behaviour returns.
fn artifact_part(behaviour: Behaviour) -> Part {
    match behaviour {
        Behaviour::ArtifactData => Part::data(serde_json::json!({"key": "value", "count": 1})),
        Behaviour::ArtifactFile => Part::new(PartContent::Raw(b"file bytes".to_vec()))
            .with_filename("document.txt")
            .with_media_type("text/plain"),
        Behaviour::ArtifactFileUrl => Part::new(PartContent::Url(
            "https://example.com/document.txt".to_owned(),
        ))
        .with_filename("document.txt")
        .with_media_type("text/plain"),
        _ => Part::text("generated text content"),
    }
}

/// One whole artifact named `name` holding `part`.
async fn artifact(events: &EventSink, name: &str, part: Part) -> Result<(), AgentError> {
    let id = format!("{}-{name}", events.task_id());
    Ok(events
        .artifact(Artifact::new(id, name, vec![part]), false, true)
        .await?)
}

/// Fails the task for a `tck-…` name the agent does not play.
pub(super) async fn unknown(name: &str, events: &EventSink) -> Result<(), AgentError> {
    events.working(None).await?;
    Ok(events
        .fail(events.text_message(format!(
            "unimplemented ACTS behaviour {name:?}; this agent plays: {}",
            BEHAVIOURS.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
        )))
        .await?)
}

/// The declaration an ACTS runner reads (`acts/sut-behaviors.yaml`), made from [`BEHAVIOURS`].
pub(super) fn behaviours_yaml() -> String {
    let mut out = String::from(
        "# The ACTS behaviours `ferry serve --agent conformance` plays, chosen by the text of the\n\
         # first part of the first message. Printed by `ferry serve --agent conformance\n\
         # --print-acts-behaviors`; a test keeps this file equal to that output.\n\
         acts_version: \"1.0\"\nbehaviors:\n",
    );
    for d in BEHAVIOURS {
        let _ = write!(out, "  - {{prefix: \"{}\"", d.name);
        match d.terminal {
            Some(state) => {
                let _ = write!(
                    out,
                    ", response_type: task, terminal_state: {}",
                    state.as_str()
                );
            }
            None => out.push_str(", response_type: message"),
        }
        if let Some(delay) = d.delay {
            let _ = write!(out, ", delay_ms: {}", delay.as_millis());
        }
        if d.streaming {
            out.push_str(", streaming: true");
        }
        out.push_str("}\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Message {
        Message::user("m-1", vec![Part::text(text)])
    }

    #[test]
    fn the_name_runs_to_the_end_of_the_word() {
        assert_eq!(
            name_in(&user("tck-multi-turn start")),
            Some("tck-multi-turn")
        );
        assert_eq!(
            name_in(&user("  tck-artifact-file-url")),
            Some("tck-artifact-file-url")
        );
        assert_eq!(
            name_in(&user("tck-artifact-file")),
            Some("tck-artifact-file")
        );
        assert_eq!(name_in(&user("tck-cancel, please")), Some("tck-cancel"));
        assert_eq!(name_in(&user("hello tck-cancel")), None);
        assert_eq!(name_in(&user("done")), None);
        assert_eq!(
            lookup("tck-artifact-file-url"),
            Asked::Known(Behaviour::ArtifactFileUrl)
        );
        assert_eq!(lookup("tck-nope"), Asked::Unknown("tck-nope".into()));
    }

    #[test]
    fn the_declaration_in_the_repository_is_this_one() {
        let file = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../acts/sut-behaviors.yaml"
        ));
        assert_eq!(
            file,
            behaviours_yaml(),
            "regenerate it: ferry serve --agent conformance --print-acts-behaviors > acts/sut-behaviors.yaml"
        );
    }

    #[test]
    fn every_behaviour_is_declared_once() {
        for (i, d) in BEHAVIOURS.iter().enumerate() {
            assert!(
                BEHAVIOURS[..i]
                    .iter()
                    .all(|e| e.name != d.name && e.behaviour != d.behaviour),
                "{} twice",
                d.name
            );
        }
        let yaml = behaviours_yaml();
        assert!(yaml.contains(
            "  - {prefix: \"tck-long-running\", response_type: task, terminal_state: TASK_STATE_COMPLETED, delay_ms: 1000}\n"
        ));
        assert!(yaml.contains("  - {prefix: \"tck-message-response\", response_type: message}\n"));
        assert_eq!(yaml.matches("- {prefix").count(), BEHAVIOURS.len());
    }
}
