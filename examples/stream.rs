//! Streams one task of any A2A agent and prints each event as it arrives.
//!
//! `cargo run -p ferry-examples --bin stream -- URL TEXT`, e.g. against the streaming agent
//! (`cargo run -p ferry-examples --bin streaming`):
//! `cargo run -p ferry-examples --bin stream -- http://127.0.0.1:8765 "one two"`. It prints:
//!
//! ```text
//! task 019a…-…e6fa SUBMITTED
//! status WORKING: word 1 of 2
//! artifact words: one
//! status WORKING: word 2 of 2
//! artifact words: two
//! status COMPLETED: 2 words
//! ```

use ferry_client::{A2aClient, ClientOptions};
use ferry_proto::{Message, Part, PartContent, SendMessageRequest, StreamResponse};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(url), Some(text)) = (args.next(), args.next()) else {
        return Err("usage: stream URL TEXT".into());
    };
    // The card is fetched and checked by ferry-trust; a URL on this machine may be plain http.
    let (client, card) = A2aClient::connect(&url, ClientOptions::default()).await?;
    eprintln!("{}: {}", card.name, card.description);
    let message = Message::user(uuid::Uuid::new_v4().to_string(), vec![Part::text(text)]);
    let request = SendMessageRequest {
        tenant: String::new(),
        message,
        configuration: None,
        metadata: None,
    };
    let mut events = client.send_streaming(request).await?;
    while let Some(event) = events.next().await {
        match event? {
            StreamResponse::Task(t) => println!("task {} {}", t.id, short(t.status.state.as_str())),
            StreamResponse::StatusUpdate(s) => match &s.status.message {
                Some(said) => {
                    println!("status {}: {}", short(s.status.state.as_str()), said.text())
                }
                None => println!("status {}", short(s.status.state.as_str())),
            },
            StreamResponse::ArtifactUpdate(a) => {
                for part in &a.artifact.parts {
                    if let PartContent::Text(t) = &part.content {
                        println!("artifact {}: {}", a.artifact.name, t.trim_end());
                    }
                }
            }
            StreamResponse::Message(m) => println!("message: {}", m.text()),
        }
    }
    Ok(())
}

/// `TASK_STATE_WORKING` → `WORKING`.
fn short(state: &str) -> &str {
    state.trim_start_matches("TASK_STATE_")
}
