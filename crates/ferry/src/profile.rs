//! `ferry profile set|get|list|delete`: manage your saved profiles on a forms agent, over
//! A2A. The agent keeps them per caller — the token you call with — so the command sends the
//! agent's own profile command (`{"profile": {"set": …}}`) as a data part and prints its
//! answer; it never reads the store directly.

use crate::call::{ClientFlags, OutputFormat, run_command, with_agent};
use crate::telemetry::OtlpSettings;
use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use ferry_proto::{Message, Part, PartContent, SendMessageRequest, SendMessageResponse};
use serde_json::{Map, Value, json};

/// `ferry profile`.
#[derive(Debug, Args)]
pub(crate) struct ProfileArgs {
    #[command(subcommand)]
    action: ProfileAction,
    #[command(flatten)]
    flags: ClientFlags,
}

#[derive(Debug, Subcommand)]
enum ProfileAction {
    /// Create a profile or change its values (merged into what it holds).
    Set {
        /// The forms agent's URL (or its card URL).
        url: String,
        /// The profile's name.
        name: String,
        /// Values as KEY=VALUE: WHATWG autofill names (given-name, family-name, email, tel,
        /// street-address, postal-code, country, bday, organization, …) or free labels.
        #[arg(value_name = "KEY=VALUE")]
        values: Vec<String>,
        /// Remove this key (repeatable).
        #[arg(long = "unset", value_name = "KEY")]
        unset: Vec<String>,
        /// Let it fill payment card numbers and expiry dates.
        #[arg(long, conflicts_with = "no_cards")]
        cards: bool,
        /// No longer let it fill card data.
        #[arg(long)]
        no_cards: bool,
        /// Replace every value instead of merging.
        #[arg(long)]
        replace: bool,
    },
    /// Show a profile's values (card numbers masked).
    Get {
        /// The forms agent's URL.
        url: String,
        /// The profile's name.
        name: String,
    },
    /// List your profiles.
    List {
        /// The forms agent's URL.
        url: String,
    },
    /// Delete a profile.
    Delete {
        /// The forms agent's URL.
        url: String,
        /// The profile's name.
        name: String,
    },
}

impl ProfileAction {
    fn url(&self) -> &str {
        match self {
            ProfileAction::Set { url, .. }
            | ProfileAction::Get { url, .. }
            | ProfileAction::List { url }
            | ProfileAction::Delete { url, .. } => url,
        }
    }

    /// The agent's command object.
    fn command(&self) -> anyhow::Result<Value> {
        Ok(match self {
            ProfileAction::Set {
                name,
                values,
                unset,
                cards,
                no_cards,
                replace,
                ..
            } => {
                let mut map = Map::new();
                for pair in values {
                    let (key, value) = pair
                        .split_once('=')
                        .with_context(|| format!("{pair:?} is not KEY=VALUE"))?;
                    if key.trim().is_empty() {
                        bail!("{pair:?}: the key is empty");
                    }
                    map.insert(key.trim().to_owned(), Value::String(value.to_owned()));
                }
                for key in unset {
                    map.insert(key.clone(), Value::Null);
                }
                let mut set = json!({"name": name, "values": map});
                if *cards || *no_cards {
                    set["cards"] = Value::Bool(*cards);
                }
                if *replace {
                    set["replace"] = Value::Bool(true);
                }
                json!({"set": set})
            }
            ProfileAction::Get { name, .. } => json!({"get": name}),
            ProfileAction::List { .. } => json!({"list": true}),
            ProfileAction::Delete { name, .. } => json!({"delete": name}),
        })
    }
}

/// Runs `ferry profile …`.
pub(crate) fn run(args: ProfileArgs, otlp: &OtlpSettings) -> anyhow::Result<()> {
    let root = || tracing::info_span!("ferry.profile", otel.status_code = tracing::field::Empty);
    run_command(otlp, root, async move {
        let command = args.action.command()?;
        let message = Message::user(
            uuid::Uuid::new_v4().to_string(),
            vec![Part::data(json!({"profile": command})).with_media_type("application/json")],
        );
        let req = SendMessageRequest {
            tenant: String::new(),
            message,
            configuration: None,
            metadata: None,
        };
        let answer = with_agent(&args.flags, args.action.url(), async |client| {
            Ok(client.send_message(req.clone()).await?)
        })
        .await?;
        let SendMessageResponse::Message(reply) = answer else {
            bail!(
                "the agent answered with a task, not a profile answer: is it a ferry forms agent?"
            );
        };
        let data = reply
            .parts
            .iter()
            .find_map(|p| match &p.content {
                PartContent::Data(v) => Some(v.clone()),
                _ => None,
            })
            .context("the agent's answer holds no data part")?;
        match args.flags.output {
            OutputFormat::Json => crate::out(serde_json::to_string(&data)?),
            OutputFormat::Text => print_text(&data),
        }
    })
}

/// The answer for people.
fn print_text(data: &Value) -> anyhow::Result<()> {
    if let Some(saved) = data.get("saved") {
        return crate::out(format_args!(
            "saved {} (version {}, {} value(s){})",
            saved["name"].as_str().unwrap_or_default(),
            saved["version"],
            saved["values"].as_object().map_or(0, Map::len),
            if saved["cards"] == true {
                ", cards"
            } else {
                ""
            }
        ));
    }
    if let Some(profile) = data.get("profile") {
        crate::out(format_args!(
            "{} (version {}{}, updated {})",
            profile["name"].as_str().unwrap_or_default(),
            profile["version"],
            if profile["cards"] == true {
                ", cards"
            } else {
                ""
            },
            profile["updated"].as_str().unwrap_or_default()
        ))?;
        for (key, value) in profile["values"].as_object().into_iter().flatten() {
            crate::out(format_args!(
                "  {key} = {}",
                value.as_str().unwrap_or_default()
            ))?;
        }
        return Ok(());
    }
    if let Some(list) = data.get("profiles").and_then(Value::as_array) {
        if list.is_empty() {
            return crate::out("no profiles");
        }
        for p in list {
            crate::out(format_args!(
                "{}\t{} value(s){}\tupdated {}",
                p["name"].as_str().unwrap_or_default(),
                p["values"],
                if p["cards"] == true { ", cards" } else { "" },
                p["updated"].as_str().unwrap_or_default()
            ))?;
        }
        return Ok(());
    }
    if let Some(name) = data.get("deleted").and_then(Value::as_str) {
        return crate::out(format_args!("deleted {name}"));
    }
    crate::out(data)
}
