//! An agent in ten lines, served over A2A v1.0 (JSON-RPC and REST, with SSE).
//!
//! Run with `cargo run --example shout`, then in another terminal
//! `cargo run --example stream -- http://127.0.0.1:8765 "hello there"`, or
//! `curl -s http://127.0.0.1:8765/.well-known/agent-card.json`. It prints:
//!
//! ```text
//! agent card: http://127.0.0.1:8765/.well-known/agent-card.json
//! ```

use ferry_agent::{AgentDescription, AgentExecutor, AgentFuture, EventSink, RequestContext};
use ferry_proto::{Artifact, Part};
use ferry_server::{A2aServer, ServerConfig};
use std::sync::Arc;

/// Answers every message in capitals.
struct Shout;

impl AgentExecutor for Shout {
    fn describe(&self) -> AgentDescription {
        AgentDescription::new("shout", "Answers in capitals")
    }

    fn execute(&self, ctx: RequestContext, events: EventSink) -> AgentFuture<'_> {
        Box::pin(async move {
            let text = ctx.message.text().to_uppercase();
            events
                .artifact(
                    Artifact::new("answer", "answer", vec![Part::text(text)]),
                    false,
                    true,
                )
                .await?;
            events.complete(None).await?;
            Ok(())
        })
    }
}

#[tokio::main]
async fn main() -> Result<(), ferry_server::ServerError> {
    let server = A2aServer::builder(Arc::new(Shout))
        .config(ServerConfig::default())
        .bind()
        .await?;
    println!("agent card: {}", server.card_url());
    server
        .run(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}
