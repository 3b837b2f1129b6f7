//! The conformance agent. It serves two contracts:
//!
//! - the official conformance kit's: behaviour chosen by the prefix of `message.messageId`
//!   (`shared/notes/conformance.md` §4.2), plus `ferry-turns-3` and `ferry-hold` (WORKING, an
//!   artifact `held`, then nothing until the task is canceled or the server goes away: a turn
//!   to kill a server in the middle of), `ferry-ticks` and `ferry-pulse` (see [`pulse`]);
//! - ACTS's (the corpus the official SDKs run): behaviour chosen by the text of the first
//!   part, `tck-multi-turn …` (see [`acts`]).
//!
//! A messageId prefix of the kit wins; then a `tck-…` name in the text of this message or of
//! the task's first one; anything else is echoed and completed.

mod acts;
mod client_parse;
mod pulse;

pub use pulse::ARTIFACT as PULSE_ARTIFACT;

use ferry_agent::{
    AgentDescription, AgentError, AgentExecutor, AgentFuture, EventSink, RequestContext,
};
use ferry_proto::{AgentSkill, Artifact, Part, PartContent, Role};
use std::time::Duration;

/// A scenario, selected by messageId prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scenario {
    CompleteTask,
    InputRequired,
    ArtifactText,
    ArtifactFile,
    ArtifactFileUrl,
    ArtifactData,
    MessageResponse,
    StreamWorkArtifactComplete,
    StreamStraightToComplete,
    StreamArtifactText,
    StreamArtifactFile,
    StreamArtifactChunked,
    RejectTask,
    SlowComplete,
    ThreeTurns,
    Hold,
    Ticks,
    Pulse,
    Echo,
}

/// Prefixes, longest first where one is a prefix of another.
const PREFIXES: &[(&str, Scenario)] = &[
    ("tck-complete-task", Scenario::CompleteTask),
    ("tck-input-required", Scenario::InputRequired),
    ("tck-artifact-text", Scenario::ArtifactText),
    ("tck-artifact-file-url", Scenario::ArtifactFileUrl),
    ("tck-artifact-file", Scenario::ArtifactFile),
    ("tck-artifact-data", Scenario::ArtifactData),
    ("tck-message-response", Scenario::MessageResponse),
    ("tck-stream-artifact-text", Scenario::StreamArtifactText),
    ("tck-stream-artifact-file", Scenario::StreamArtifactFile),
    (
        "tck-stream-artifact-chunked",
        Scenario::StreamArtifactChunked,
    ),
    (
        "tck-stream-ordering-001",
        Scenario::StreamWorkArtifactComplete,
    ),
    ("tck-stream-001", Scenario::StreamWorkArtifactComplete),
    ("tck-stream-002", Scenario::StreamStraightToComplete),
    ("tck-stream-003", Scenario::StreamWorkArtifactComplete),
    ("tck-reject-task", Scenario::RejectTask),
    ("test-resubscribe-message-id", Scenario::SlowComplete),
    ("ferry-turns-3", Scenario::ThreeTurns),
    ("ferry-hold", Scenario::Hold),
    ("ferry-ticks", Scenario::Ticks),
    ("ferry-pulse", Scenario::Pulse),
];

impl Scenario {
    fn for_message_id(id: &str) -> Self {
        let mut best: Option<(&str, Scenario)> = None;
        for (prefix, scenario) in PREFIXES {
            if id.starts_with(prefix) && best.is_none_or(|(b, _)| prefix.len() > b.len()) {
                best = Some((prefix, *scenario));
            }
        }
        best.map_or(Scenario::Echo, |(_, s)| s)
    }
}

/// Plays the conformance kit's scenarios and the ACTS behaviours; anything else is echoed and
/// completed. It streams, and shows one more skill in the extended card (which the server
/// serves when it has a token).
#[derive(Debug, Clone, Copy)]
pub struct ConformanceAgent {
    streaming: bool,
}

impl Default for ConformanceAgent {
    fn default() -> Self {
        Self { streaming: true }
    }
}

const TURNS: usize = 3;

impl ConformanceAgent {
    /// The agent of ACTS's reduced-capabilities pass (`ITK_ACTS_REDUCED_CAPABILITIES=1`): the
    /// same behaviours, streaming not declared (so the server refuses the streaming
    /// operations).
    pub fn without_streaming() -> Self {
        Self { streaming: false }
    }

    /// The ACTS behaviour declaration (`acts/sut-behaviors.yaml`) of what this agent plays.
    pub fn acts_behaviors_yaml() -> String {
        acts::behaviours_yaml()
    }
}

impl AgentExecutor for ConformanceAgent {
    fn describe(&self) -> AgentDescription {
        let mut description = AgentDescription::new(
            "conformance",
            "Plays the A2A conformance kit's scenarios (chosen by messageId prefix) and the ACTS behaviours (chosen by the text of the first part, tck-…); echoes anything else.",
        )
        .with_extended_skills(vec![AgentSkill {
            id: "conformance-extended".into(),
            name: "Extended card check".into(),
            description: "Shown only to authenticated callers, in the extended agent card.".into(),
            tags: vec!["conformance".into()],
            examples: Vec::new(),
            input_modes: Vec::new(),
            output_modes: Vec::new(),
            security_requirements: Vec::new(),
        }]);
        description.streaming = self.streaming;
        description
    }

    fn execute(&self, ctx: RequestContext, events: EventSink) -> AgentFuture<'_> {
        Box::pin(async move {
            let scenario = Scenario::for_message_id(&ctx.message.message_id);
            if scenario == Scenario::Echo {
                match acts::asked(&ctx) {
                    Some(acts::Asked::Known(behaviour)) => {
                        return acts::play(behaviour, &ctx, &events).await;
                    }
                    Some(acts::Asked::Unknown(name)) => return acts::unknown(&name, &events).await,
                    None => {}
                }
            }
            play(scenario, &ctx, &events).await
        })
    }
}

/// Plays `scenario` to the end of its turn.
async fn play(
    scenario: Scenario,
    ctx: &RequestContext,
    events: &EventSink,
) -> Result<(), AgentError> {
    if let Some((id, parts)) = one_artifact(scenario) {
        events.working(None).await?;
        let artifact = Artifact::new(id, id, parts);
        events.artifact(artifact, false, true).await?;
        return events.complete(None).await.map_err(Into::into);
    }
    match scenario {
        Scenario::CompleteTask => {
            events.working(None).await?;
            events
                .complete(Some(events.text_message("Hello from TCK")))
                .await?;
        }
        Scenario::InputRequired => {
            events.working(None).await?;
            events
                .input_required(events.text_message("Please provide more input."))
                .await?;
        }
        Scenario::MessageResponse => {
            let reply = events.agent_message(vec![Part::text("Direct message response")]);
            events.message(reply).await?;
        }
        Scenario::StreamStraightToComplete => events.complete(None).await?,
        Scenario::StreamArtifactChunked => chunked(events).await?,
        Scenario::RejectTask => {
            events
                .reject(events.text_message("This task was rejected by the agent."))
                .await?;
        }
        Scenario::SlowComplete => {
            events.working(None).await?;
            tokio::time::sleep(Duration::from_secs(4)).await;
            events.complete(None).await?;
        }
        Scenario::ThreeTurns => three_turns(ctx, events).await?,
        Scenario::Hold => {
            events.working(None).await?;
            let held = vec![Part::text("holding until canceled")];
            events
                .artifact(Artifact::new("held", "held", held), false, true)
                .await?;
            std::future::pending::<()>().await;
        }
        Scenario::Ticks => ticks(events).await?,
        Scenario::Pulse => pulse::play(ctx, events).await?,
        Scenario::Echo => {
            events.working(None).await?;
            let mut parts = ctx.message.parts.clone();
            if parts.is_empty() {
                parts.push(Part::text(""));
            }
            events
                .artifact(Artifact::new("echo", "echo", parts), false, true)
                .await?;
            events.complete(None).await?;
        }
        // Played above.
        Scenario::ArtifactText
        | Scenario::StreamArtifactText
        | Scenario::ArtifactFile
        | Scenario::StreamArtifactFile
        | Scenario::ArtifactFileUrl
        | Scenario::ArtifactData
        | Scenario::StreamWorkArtifactComplete => {}
    }
    Ok(())
}

/// The scenarios that are WORKING, one artifact, COMPLETED: the artifact's id and parts.
fn one_artifact(scenario: Scenario) -> Option<(&'static str, Vec<Part>)> {
    let file = |content: PartContent| {
        Part::new(content)
            .with_media_type("text/plain")
            .with_filename("output.txt")
    };
    Some(match scenario {
        Scenario::ArtifactText | Scenario::StreamArtifactText => {
            ("text-artifact", vec![Part::text("Generated text content")])
        }
        Scenario::ArtifactFile | Scenario::StreamArtifactFile => (
            "file-artifact",
            vec![file(PartContent::Raw(b"Generated file content".to_vec()))],
        ),
        Scenario::ArtifactFileUrl => (
            "file-url-artifact",
            vec![file(PartContent::Url(
                "https://example.com/output.txt".into(),
            ))],
        ),
        Scenario::ArtifactData => (
            "data-artifact",
            vec![
                Part::data(serde_json::json!({"key": "value", "count": 42}))
                    .with_media_type("application/json"),
            ],
        ),
        Scenario::StreamWorkArtifactComplete => {
            ("stream-artifact", vec![Part::text("Streamed content")])
        }
        _ => return None,
    })
}

/// One artifact in three chunks, then COMPLETED.
async fn chunked(events: &EventSink) -> Result<(), AgentError> {
    events.working(None).await?;
    for (n, (append, last)) in [(false, false), (true, false), (true, true)]
        .into_iter()
        .enumerate()
    {
        let chunk = vec![Part::text(format!("chunk {}", n + 1))];
        let artifact = Artifact::new("chunked-artifact", "chunked-artifact", chunk);
        events.artifact(artifact, append, last).await?;
    }
    events.complete(None).await?;
    Ok(())
}

/// `ferry-ticks`: WORKING, then [`TICKS`] chunks of one artifact a few milliseconds apart,
/// then COMPLETED: a task whose events keep coming for a while after it was created (what
/// the replica tests follow from another replica).
async fn ticks(events: &EventSink) -> Result<(), AgentError> {
    events.working(None).await?;
    for n in 1..=TICKS {
        tokio::time::sleep(TICK).await;
        let chunk = vec![Part::text(format!("tick {n}\n"))];
        let artifact = Artifact::new("ticks", "ticks", chunk);
        events.artifact(artifact, n > 1, n == TICKS).await?;
    }
    events.complete(None).await?;
    Ok(())
}

/// The chunks of `ferry-ticks`, and the pause before each.
const TICKS: u32 = 20;
const TICK: Duration = Duration::from_millis(5);

/// `ferry-turns-3`: INPUT_REQUIRED after the first and second message, COMPLETED after the
/// third, with an artifact on every turn that says which turn it was.
async fn three_turns(ctx: &RequestContext, events: &EventSink) -> Result<(), AgentError> {
    // `ctx.task` is the task before this turn: its user messages are the earlier turns.
    let turn = ctx.task.as_ref().map_or(0, |t| {
        t.history.iter().filter(|m| m.role == Role::User).count()
    }) + 1;
    events.working(None).await?;
    let id = format!("turn-{turn}");
    let note = format!("turn {turn} of {TURNS}: got {:?}", ctx.message.text());
    events
        .artifact(
            Artifact::new(id.clone(), id, vec![Part::text(note)]),
            false,
            true,
        )
        .await?;
    if turn < TURNS {
        events
            .input_required(events.text_message(format!(
                "turn {turn} of {TURNS} done; send the next message"
            )))
            .await?;
    } else {
        events
            .complete(Some(events.text_message(format!("all {TURNS} turns done"))))
            .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins() {
        assert_eq!(
            Scenario::for_message_id("tck-artifact-file-url-1a2b"),
            Scenario::ArtifactFileUrl
        );
        assert_eq!(
            Scenario::for_message_id("tck-artifact-file-1a2b"),
            Scenario::ArtifactFile
        );
        assert_eq!(
            Scenario::for_message_id("tck-stream-artifact-text-x"),
            Scenario::StreamArtifactText
        );
        assert_eq!(
            Scenario::for_message_id("tck-stream-001-x-jsonrpc"),
            Scenario::StreamWorkArtifactComplete
        );
        assert_eq!(Scenario::for_message_id("tck-dm-test-001"), Scenario::Echo);
        assert_eq!(
            Scenario::for_message_id("ferry-turns-3-abc"),
            Scenario::ThreeTurns
        );
    }
}
