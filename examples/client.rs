//! A client: sends one message to any A2A agent (on a task, when a task id is given) and
//! prints the task's state, its status message and its artifacts.
//!
//! `cargo run -p ferry-examples --bin client -- URL TEXT [TASK_ID]`

use ferry_client::{A2aClient, ClientOptions};
use ferry_proto::{Message, Part, SendMessageRequest, SendMessageResponse};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, text, task @ ..] = args.as_slice() else {
        return Err("usage: client URL TEXT [TASK_ID]".into());
    };
    // The card is fetched and checked first; a URL on this machine may be plain http.
    let (client, card) = A2aClient::connect(url, ClientOptions::default()).await?;
    let mut message = Message::user(uuid::Uuid::new_v4().to_string(), vec![Part::text(text)]);
    message.task_id = task.first().cloned().unwrap_or_default();
    let request = SendMessageRequest {
        tenant: String::new(),
        message,
        configuration: None,
        metadata: None,
    };
    match client.send_message(request).await? {
        SendMessageResponse::Task(task) => {
            let state = task.status.state.as_str().trim_start_matches("TASK_STATE_");
            println!("{} answered: task {} {state}", card.name, task.id);
            if let Some(said) = &task.status.message {
                println!("  says: {}", said.text());
            }
            for artifact in &task.artifacts {
                println!(
                    "  {}: {}",
                    artifact.name,
                    artifact.parts[0].as_text().unwrap_or("…")
                );
            }
        }
        SendMessageResponse::Message(reply) => println!("{} replied: {}", card.name, reply.text()),
    }
    Ok(())
}
