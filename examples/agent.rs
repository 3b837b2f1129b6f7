//! An agent: answers every message in capitals, served over A2A v1.0 (JSON-RPC, REST and
//! gRPC, with SSE streams) on `127.0.0.1:8765` or the address given.
//!
//! `cargo run -p ferry-examples --bin agent`, then `cargo run -p ferry-examples --bin client --
//! http://127.0.0.1:8765 "hello there"`.

use ferry_agent::{AgentDescription, AgentExecutor, AgentFuture, EventSink, RequestContext};
use ferry_proto::{Artifact, Part};
use ferry_server::{A2aServer, ServerConfig};
use std::sync::Arc;

struct Shout;

impl AgentExecutor for Shout {
    fn describe(&self) -> AgentDescription {
        AgentDescription::new("shout", "Answers in capitals")
    }

    fn execute(&self, ctx: RequestContext, events: EventSink) -> AgentFuture<'_> {
        Box::pin(async move {
            let answer = Part::text(ctx.message.text().to_uppercase());
            let artifact = Artifact::new("answer", "answer", vec![answer]);
            events.artifact(artifact, false, true).await?;
            events.complete(None).await?;
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
    let server = A2aServer::bind(Arc::new(Shout), config).await?;
    println!("agent card: {}", server.card_url());
    server
        .run(async { _ = tokio::signal::ctrl_c().await })
        .await?;
    Ok(())
}
