//! A multi-turn agent: the first message of a task gets a question (the task waits in
//! INPUT_REQUIRED); the answer, sent on the same task, completes it.
//!
//! `cargo run -p ferry-examples --bin input_required`, then
//! `cargo run -p ferry-examples --bin client -- http://127.0.0.1:8765 hello` and, with the task
//! id it printed, `cargo run -p ferry-examples --bin client -- http://127.0.0.1:8765 Ada TASK_ID`.

use ferry_agent::{AgentDescription, AgentExecutor, AgentFuture, EventSink, RequestContext};
use ferry_server::{A2aServer, ServerConfig};
use std::sync::Arc;

struct Greeter;

impl AgentExecutor for Greeter {
    fn describe(&self) -> AgentDescription {
        AgentDescription::new("greeter", "Asks your name, then greets you")
    }

    fn execute(&self, ctx: RequestContext, events: EventSink) -> AgentFuture<'_> {
        Box::pin(async move {
            if ctx.is_new_task() {
                let question = events.text_message("What is your name?");
                events.input_required(question).await?;
            } else {
                let greeting = format!("Hello, {}!", ctx.message.text().trim());
                events.complete(Some(events.text_message(greeting))).await?;
            }
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
    let server = A2aServer::bind(Arc::new(Greeter), config).await?;
    println!("agent card: {}", server.card_url());
    server
        .run(async { _ = tokio::signal::ctrl_c().await })
        .await?;
    Ok(())
}
