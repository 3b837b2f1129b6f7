//! `ferry approve URL TASK`: a person approves (or rejects) a forms agent's waiting submit
//! from the command line, with the approver token (`FERRY_APPROVER_TOKEN`), which can do
//! nothing else. It shows what would be sent first, as the review page does.

use crate::forms_args::APPROVER_TOKEN_VAR;
use crate::out;
use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Value, json};

/// `ferry approve`.
#[derive(Debug, Args)]
pub(crate) struct ApproveArgs {
    /// The server's URL (any URL of it: only its origin is used).
    url: String,
    /// The task whose submit waits for approval.
    task: String,
    /// Reject the submit, with this reason, instead of approving it.
    #[arg(long, value_name = "REASON")]
    reject: Option<String>,
    /// Only show what would be submitted; decide nothing.
    #[arg(long, conflicts_with = "reject")]
    show: bool,
}

/// Runs `ferry approve`.
pub(crate) fn run(args: ApproveArgs) -> anyhow::Result<()> {
    let token = std::env::var(APPROVER_TOKEN_VAR)
        .ok()
        .filter(|t| !t.trim().is_empty())
        .with_context(|| format!("set {APPROVER_TOKEN_VAR} to the server's approver token"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    runtime.block_on(approve(args, token.trim()))
}

async fn approve(args: ApproveArgs, token: &str) -> anyhow::Result<()> {
    let base =
        url::Url::parse(&args.url).with_context(|| format!("{:?} is not a URL", args.url))?;
    let endpoint = format!(
        "{}/approvals/tasks/{}",
        base.origin().ascii_serialization(),
        url::form_urlencoded::byte_serialize(args.task.as_bytes()).collect::<String>()
    );
    let http = reqwest::Client::new();
    let review = answer(http.get(&endpoint).bearer_auth(token)).await?;
    show(&review)?;
    if args.show {
        return Ok(());
    }
    let decision = match &args.reject {
        Some(reason) => json!({"decision": "reject", "reason": reason}),
        None => json!({"decision": "approve"}),
    };
    let decided = answer(http.post(&endpoint).bearer_auth(token).json(&decision)).await?;
    out(format!(
        "{}: {}",
        decided["decision"].as_str().unwrap_or("decided"),
        decided["message"].as_str().unwrap_or_default()
    ))
}

/// The JSON of an answer; a refusal is the error, in the server's words.
async fn answer(request: reqwest::RequestBuilder) -> anyhow::Result<Value> {
    let response = request.send().await.context("reaching the server")?;
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    if !status.is_success() {
        let why = body["error"].as_str().unwrap_or("no reason given");
        bail!("the server refused ({status}): {why}");
    }
    Ok(body)
}

/// What would be sent: the site, where the form goes, every field (secrets masked).
fn show(review: &Value) -> anyhow::Result<()> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    out(format!("Page: {}", text(&review["url"])))?;
    out(format!(
        "Sends to: {} {}",
        text(&review["method"]).to_ascii_uppercase(),
        text(&review["action"])
    ))?;
    for field in review["fields"].as_array().into_iter().flatten() {
        let value = Some(text(&field["value"])).filter(|v| !v.is_empty());
        let value = value.unwrap_or_else(|| "(empty)".to_owned());
        out(format!("  {}: {value}", text(&field["label"])))?;
    }
    for (name, key) in [("Error", "errors"), ("Warning", "warnings")] {
        for item in review[key].as_array().into_iter().flatten() {
            out(format!("{name}: {}", text(item)))?;
        }
    }
    Ok(())
}
