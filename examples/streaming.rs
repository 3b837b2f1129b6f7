//! A streaming agent: reports its progress as it works (WORKING status updates), writes its
//! answer as an artifact in chunks, then completes. A client that streams
//! (`SendStreamingMessage`) sees each event as it happens.
//!
//! `cargo run -p ferry-examples --bin streaming`, then `cargo run -p ferry-examples --bin
//! stream -- http://127.0.0.1:8765 "one two three"`.

use ferry_agent::{AgentDescription, AgentExecutor, AgentFuture, EventSink, RequestContext};
use ferry_proto::{Artifact, Part};
use ferry_server::{A2aServer, ServerConfig};
use std::sync::Arc;

struct Counter;

impl AgentExecutor for Counter {
    fn describe(&self) -> AgentDescription {
        // Streaming is declared on the card by default.
        AgentDescription::new("counter", "Counts the words of a message, one at a time")
    }

    fn execute(&self, ctx: RequestContext, events: EventSink) -> AgentFuture<'_> {
        Box::pin(async move {
            let text = ctx.message.text();
            let words: Vec<&str> = text.split_whitespace().collect();
            for (n, word) in words.iter().enumerate() {
                let progress = events.text_message(format!("word {} of {}", n + 1, words.len()));
                events.working(Some(progress)).await?;
                let chunk = Artifact::new("words", "words", vec![Part::text(format!("{word}\n"))]);
                // The first chunk opens the artifact, the others append; the last closes it.
                events.artifact(chunk, n > 0, n + 1 == words.len()).await?;
            }
            let done = events.text_message(format!("{} words", words.len()));
            events.complete(Some(done)).await?;
            Ok(())
        })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let bind = std::env::args().nth(1).unwrap_or("127.0.0.1:8765".into());
    let config = ServerConfig {
        bind: bind.parse()?,
        ..ServerConfig::default()
    };
    let server = A2aServer::bind(Arc::new(Counter), config).await?;
    println!("agent card: {}", server.card_url());
    server
        .run(async { _ = tokio::signal::ctrl_c().await })
        .await?;
    Ok(())
}
