//! A server extension: it declares itself on the card, serves a route of its own behind the
//! server's front door, and hands every turn of the agent a value the agent reads by type.
//! Here a "motto" the operator sets: `GET /ext/motto` shows it, and the agent signs with it.
//!
//! `cargo run -p ferry-examples --bin extension`, then
//! `curl -s http://127.0.0.1:8765/ext/motto` and
//! `cargo run -p ferry-examples --bin client -- http://127.0.0.1:8765 hello`.

use ferry_agent::TurnData;
use ferry_agent::{AgentDescription, AgentExecutor, AgentFuture, EventSink, RequestContext};
use ferry_proto::AgentExtension;
use ferry_server::decode::BodyLimits;
use ferry_server::{A2aServer, ServerConfig, ServerExtension, TurnDataSource};
use std::sync::Arc;

/// What the extension gives each turn.
#[derive(Debug, Clone)]
struct Motto(String);

#[derive(Debug)]
struct MottoExtension(Motto);

impl ServerExtension for MottoExtension {
    fn card_entry(&self) -> AgentExtension {
        AgentExtension {
            uri: "urn:example:motto:v1".into(),
            description: "Signs every answer with the operator's motto (GET /ext/motto).".into(),
            required: false,
            params: None,
        }
    }

    fn routes(self: Arc<Self>, _limits: BodyLimits) -> axum::Router {
        let motto = self.0.0.clone();
        axum::Router::new().route("/ext/motto", axum::routing::get(|| async move { motto }))
    }

    fn turn_data(self: Arc<Self>) -> Option<Arc<dyn TurnDataSource>> {
        Some(self)
    }
}

impl TurnDataSource for MottoExtension {
    fn fill(&self, data: &mut TurnData) {
        data.insert(self.0.clone());
    }
}

struct Signer;

impl AgentExecutor for Signer {
    fn describe(&self) -> AgentDescription {
        AgentDescription::new("signer", "Answers with the server's motto")
    }

    fn execute(&self, ctx: RequestContext, events: EventSink) -> AgentFuture<'_> {
        Box::pin(async move {
            let motto = ctx.extension::<Motto>().map_or("(none)", |m| m.0.as_str());
            let answer = format!("{} — {motto}", ctx.message.text());
            events.complete(Some(events.text_message(answer))).await?;
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
    let motto = MottoExtension(Motto("ferry: across, intact".into()));
    let server = A2aServer::builder(Arc::new(Signer))
        .config(config)
        .extension(Arc::new(motto))
        .bind()
        .await?;
    println!("agent card: {}", server.card_url());
    server
        .run(async { _ = tokio::signal::ctrl_c().await })
        .await?;
    Ok(())
}
