//! `ferry bench --mode forms`: the forms agent's latencies and memory, end to end.
//!
//! A local page (a 15-field signup form and its POST target) is served on 127.0.0.1 under the
//! fake name `bench.test`; the forms agent runs behind an in-process A2A server and is called
//! over JSON-RPC, exactly as a remote agent would. For each isolation mode it measures:
//!
//! - **cold session**: the first turn of the first conversation (browser start,
//!   navigation, inspection);
//! - **2nd session**: the first turn of another conversation while one is open (a new
//!   browser in `process` isolation, only a new context in `context` isolation);
//! - **warm inspect**: another inspect turn on the open page;
//! - **fill + submit**: a turn with 12 values, `submit` and `confirm` (fill, re-inspect,
//!   click, wait for the POST's page, inspect it);
//! - **PSS**: the proportional memory of every browser process with 1 and with 4 open
//!   conversations (PSS counts shared pages once; RSS would count them per process).
//!
//! Medians of `--duration` rounds (default 5), printed as a table or JSON.

use anyhow::Context;
use ferry_forms::{FormsAgent, FormsConfig, Isolation};
use ferry_server::{A2aServer, ServerConfig};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The form every round fills.
const FORM_PAGE: &str = r#"<!doctype html><html><head><title>Bench signup</title></head><body>
<form method="post" action="/submit">
<label for="first">First name</label><input id="first" name="first" required>
<label for="last">Last name</label><input id="last" name="last" required>
<label for="email">Email</label><input id="email" name="email" type="email" required>
<label for="phone">Phone</label><input id="phone" name="phone" type="tel">
<label for="street">Street</label><input id="street" name="street">
<label for="city">City</label><input id="city" name="city">
<label for="zip">Postcode</label><input id="zip" name="zip" pattern="[0-9]{5}">
<label for="country">Country</label><select id="country" name="country"><option value="">-</option><option>Germany</option><option>France</option><option>Italy</option></select>
<label for="company">Company</label><input id="company" name="company">
<label for="role">Role</label><input id="role" name="role">
<label for="age">Age</label><input id="age" name="age" type="number" min="18">
<label for="about">About you</label><textarea id="about" name="about"></textarea>
<fieldset><legend>Plan</legend><label><input type="radio" name="plan" value="free">Free</label><label><input type="radio" name="plan" value="pro">Pro</label></fieldset>
<label><input type="checkbox" name="news">Newsletter</label>
<label><input type="checkbox" name="terms" required>I accept the terms</label>
<button>Sign up</button></form></body></html>"#;

/// One isolation mode's numbers (milliseconds and MiB).
#[derive(Debug, serde::Serialize)]
struct ModeResult {
    isolation: &'static str,
    cold_session_ms: f64,
    new_session_ms: f64,
    warm_inspect_ms: f64,
    fill_submit_ms: f64,
    pss_1_mib: f64,
    pss_4_mib: f64,
    pss_per_extra_conversation_mib: f64,
}

/// Runs the forms benchmark.
pub(crate) fn run(rounds: u64, json_out: bool) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let site = serve_site().await?;
        let mut results = Vec::new();
        for isolation in [Isolation::Process, Isolation::Context] {
            results.push(measure(isolation, site, rounds.max(1)).await?);
        }
        if json_out {
            println!("{}", serde_json::to_string(&results)?);
        } else {
            println!("forms agent, median of {rounds} rounds (ms; PSS in MiB)");
            println!(
                "{:<10} {:>12} {:>12} {:>12} {:>12} {:>8} {:>8} {:>10}",
                "isolation",
                "cold session",
                "2nd session",
                "warm inspect",
                "fill+submit",
                "PSS 1",
                "PSS 4",
                "PSS/extra"
            );
            for r in &results {
                println!(
                    "{:<10} {:>12.0} {:>12.0} {:>12.1} {:>12.0} {:>8.0} {:>8.0} {:>10.0}",
                    r.isolation,
                    r.cold_session_ms,
                    r.new_session_ms,
                    r.warm_inspect_ms,
                    r.fill_submit_ms,
                    r.pss_1_mib,
                    r.pss_4_mib,
                    r.pss_per_extra_conversation_mib
                );
            }
        }
        Ok(())
    })
}

async fn measure(isolation: Isolation, site: u16, rounds: u64) -> anyhow::Result<ModeResult> {
    let config = FormsConfig {
        allow_domains: vec!["bench.test".into()],
        allow_private_networks: true,
        resolve: vec![("bench.test".into(), "127.0.0.1".parse()?)],
        isolation,
        max_contexts: 8,
        ..FormsConfig::default()
    };
    let agent = FormsAgent::new(config);
    let server = A2aServer::bind(
        Arc::new(agent.clone()),
        ServerConfig {
            bind: "127.0.0.1:0".parse()?,
            ..ServerConfig::default()
        },
    )
    .await?;
    let rpc = format!("http://{}/jsonrpc", server.local_addr());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.run(async move {
        let _ = stopped.await;
    }));
    let client = Client {
        http: reqwest::Client::new(),
        rpc,
    };
    let url = format!("http://bench.test:{site}/form");
    let values = json!({
        "First name": "Ada", "Last name": "Lovelace", "Email": "ada@example.com",
        "Phone": "+44 20 7946 0000", "Street": "12 St James's Square", "City": "London",
        "Postcode": "12345", "Country": "France", "Company": "Analytical Engines",
        "Age": "36", "Plan": "Pro", "I accept the terms": true
    });

    let (mut cold, mut new, mut warm, mut submit) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let context = format!("{isolation:?}-{round}");
        cold.push(client.timed(&context, json!({"url": url})).await?);
        // A second conversation while the first is open: in context isolation the browser
        // is already running, so this is the cost of a context.
        new.push(
            client
                .timed(&format!("{context}-second"), json!({"url": url}))
                .await?,
        );
        for _ in 0..3 {
            warm.push(client.timed(&context, json!({"url": url})).await?);
        }
        submit.push(
            client
                .timed(
                    &context,
                    json!({"values": values, "submit": true, "confirm": true}),
                )
                .await?,
        );
        agent.pool().shutdown().await;
    }

    // Memory: one conversation, then four, each with the form open.
    let pss = |agent: &FormsAgent, contexts: &[String]| -> f64 {
        let mut groups: Vec<u32> = contexts
            .iter()
            .filter_map(|c| {
                agent
                    .pool()
                    .browser_pid(&ferry_forms::ConversationKey::context(c))
            })
            .collect();
        groups.extend(agent.pool().shared_browser_pid());
        groups.sort_unstable();
        groups.dedup();
        let kib: u64 = groups
            .iter()
            .map(|g| ferry_browser::group_memory(*g).pss_kib)
            .sum();
        kib as f64 / 1024.0
    };
    let contexts: Vec<String> = (0..4).map(|i| format!("mem-{isolation:?}-{i}")).collect();
    client.timed(&contexts[0], json!({"url": url})).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pss_1 = pss(&agent, &contexts[..1]);
    for context in &contexts[1..] {
        client.timed(context, json!({"url": url})).await?;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pss_4 = pss(&agent, &contexts);
    agent.pool().shutdown().await;
    let _ = stop.send(());

    Ok(ModeResult {
        isolation: match isolation {
            Isolation::Process => "process",
            Isolation::Context => "context",
        },
        cold_session_ms: median(cold),
        new_session_ms: median(new),
        warm_inspect_ms: median(warm),
        fill_submit_ms: median(submit),
        pss_1_mib: pss_1,
        pss_4_mib: pss_4,
        pss_per_extra_conversation_mib: (pss_4 - pss_1) / 3.0,
    })
}

struct Client {
    http: reqwest::Client,
    rpc: String,
}

impl Client {
    /// One SendMessage turn; its wall time in milliseconds. Fails unless the task ended
    /// COMPLETED (a bench of failures measures nothing).
    async fn timed(&self, context: &str, data: Value) -> anyhow::Result<f64> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
            "messageId": uuid::Uuid::new_v4().to_string(),
            "role": "ROLE_USER",
            "contextId": context,
            "parts": [{"data": data, "mediaType": "application/json"}]
        }}});
        let started = Instant::now();
        let answer: Value = self
            .http
            .post(&self.rpc)
            .header("A2A-Version", "1.0")
            .json(&body)
            .send()
            .await?
            .json()
            .await?;
        let took = started.elapsed().as_secs_f64() * 1000.0;
        let state = answer["result"]["task"]["status"]["state"].as_str();
        anyhow::ensure!(
            state == Some("TASK_STATE_COMPLETED"),
            "turn did not complete: {answer}"
        );
        Ok(took)
    }
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len() / 2).copied().unwrap_or(0.0)
}

/// Serves `/form` and `POST /submit` on 127.0.0.1; returns the port.
async fn serve_site() -> anyhow::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut buf = [0u8; 8192];
                let body = loop {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                    let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") else {
                        continue;
                    };
                    let head = String::from_utf8_lossy(&seen[..end]).to_ascii_lowercase();
                    let length = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse::<usize>().ok())
                        .unwrap_or(0);
                    if seen.len() >= end + 4 + length {
                        break head;
                    }
                };
                let page = if body.starts_with("post") {
                    "<!doctype html><title>Thanks</title><p>Thank you for signing up."
                } else if body
                    .split_whitespace()
                    .nth(1)
                    .is_some_and(|p| p.ends_with("/form"))
                {
                    FORM_PAGE
                } else {
                    "<!doctype html><title>Not here</title>"
                };
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                    page.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    Ok(port)
}
