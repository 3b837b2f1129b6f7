//! The echo agent: every message becomes a completed task whose artifact holds the text and
//! data parts it was sent.

use ferry_agent::{AgentDescription, AgentExecutor, AgentFuture, EventSink, RequestContext};
use ferry_proto::{Artifact, Part, PartContent};

/// Completes each task with an `echo` artifact, sent in two chunks (`append`, `lastChunk`)
/// after a `working` status. The chunks together hold exactly the text and data parts of the
/// message; a single text part is split in the middle so that a stream shows two chunks.
#[derive(Debug, Clone, Copy, Default)]
pub struct EchoAgent;

impl AgentExecutor for EchoAgent {
    fn describe(&self) -> AgentDescription {
        AgentDescription::new(
            "echo",
            "Echoes the text and data parts of each message back as an artifact.",
        )
    }

    fn execute(&self, ctx: RequestContext, events: EventSink) -> AgentFuture<'_> {
        Box::pin(async move {
            events.working(None).await?;
            let parts: Vec<Part> = ctx
                .message
                .parts
                .into_iter()
                .filter(|p| matches!(p.content, PartContent::Text(_) | PartContent::Data(_)))
                .collect();
            let (first, second) = split_in_two(parts);
            let chunk = |parts| Artifact::new("echo", "echo", parts);
            match second {
                Some(second) => {
                    events.artifact(chunk(first), false, false).await?;
                    events.artifact(chunk(second), true, true).await?;
                }
                None => events.artifact(chunk(first), false, true).await?,
            }
            events.complete(None).await?;
            Ok(())
        })
    }
}

/// Splits parts into two non-empty halves where possible.
fn split_in_two(mut parts: Vec<Part>) -> (Vec<Part>, Option<Vec<Part>>) {
    if parts.len() >= 2 {
        let second = parts.split_off(parts.len() / 2);
        return (parts, Some(second));
    }
    match parts.pop() {
        None => (vec![Part::text("")], None),
        Some(part) => match part.as_text() {
            Some(text) if text.chars().count() >= 2 => {
                let mid = text
                    .char_indices()
                    .nth(text.chars().count() / 2)
                    .map_or(0, |(i, _)| i);
                let (a, b) = text.split_at(mid);
                (vec![Part::text(a)], Some(vec![Part::text(b)]))
            }
            _ => (vec![part], None),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_keep_everything() {
        let (a, b) = split_in_two(vec![Part::text("hello")]);
        let b = b.expect("two chunks");
        assert_eq!(
            format!(
                "{}{}",
                a[0].as_text().expect("t"),
                b[0].as_text().expect("t")
            ),
            "hello"
        );
        let (a, b) = split_in_two(vec![
            Part::text("x"),
            Part::data(serde_json::json!({"n":1})),
        ]);
        assert_eq!(a.len(), 1);
        assert_eq!(b.expect("two").len(), 1);
        let (a, b) = split_in_two(vec![Part::text("x")]);
        assert_eq!(a.len(), 1);
        assert!(b.is_none());
    }
}
