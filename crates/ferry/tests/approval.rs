//! Human approval (`ferry serve --approval human`), end to end: the forms agent fills a real
//! sign-up page in Chromium, and only a person lets the submit happen.
//!
//! | step | what is checked |
//! |---|---|
//! | the caller fills the form with `submit: true` | INPUT_REQUIRED, `pendingSubmit`, an `approvalUrl` in the status data and the `data` artifact |
//! | the caller sends `{"confirm": true}` | still INPUT_REQUIRED ("a person must approve"); the site receives no POST |
//! | a person opens the link in Chromium | the page shows the site, the action, the values (the password masked, never sent in the page), the picture; strict CSP, no script |
//! | the person clicks Approve | exactly one POST reaches the site; the task is COMPLETED, its `approval` says who approved; a stream subscribed before sees COMPLETED |
//! | the link again | 410 (used) |
//! | forged decisions | without the nonce: 403; from another origin: refused; another task's id with this secret: 404 |
//! | Reject with a reason | no POST; the task back at INPUT_REQUIRED with the reason |
//! | `ferry approve` | a wrong token is refused; the approver token shows the review and approves: one POST |
//! | the server's log | never holds a link's secret |
//!
//! Expiry is the ledger's unit test (tokio's paused clock): no test here waits for time.
//!
//! Chromium is required (a loud skip outside CI, a failure with `CI=true`).

#[path = "../../ferry-forms/tests/it/support/site.rs"]
mod site;
mod support;

use ferry_browser::{Browser, LaunchOptions};
use serde_json::{Value, json};
use site::TestSite;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use support::browser::{ServerTmp, chromium_or_skip};
use support::{Server, ferry, scratch_dir};

/// The approver token the server is started with.
const APPROVER_TOKEN: &str = "approver-token-for-the-test-0123456789";
/// Everything the caller fills, the password included.
const PASSWORD: &str = "correct horse battery staple";
/// An upper bound for the whole test.
const TEST_TIMEOUT: Duration = Duration::from_secs(240);

/// The forms agent on a free port with `--approval human`, and its A2A caller.
struct Agent {
    server: Server,
    http: reqwest::Client,
    ids: AtomicU64,
    _tmp: ServerTmp,
}

impl Agent {
    fn start(chromium: &std::path::Path) -> Agent {
        let tmp = scratch_dir("approval-tmp");
        let mut cmd = ferry();
        cmd.env("TMPDIR", &tmp)
            .env("FERRY_APPROVER_TOKEN", APPROVER_TOKEN)
            .args(["serve", "--agent", "forms", "--bind", "127.0.0.1:0"])
            .args(["--approval", "human", "--isolation", "context"])
            .args(["--allow-domain", "shop.test", "--allow-private-networks"])
            .args(["--resolve", "shop.test=127.0.0.1", "--chrome-path"])
            .arg(chromium);
        Agent {
            server: Server::spawn(cmd),
            http: reqwest::Client::new(),
            ids: AtomicU64::new(1),
            _tmp: ServerTmp(tmp),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server.base_url)
    }

    /// SendMessage with one data part; the task.
    async fn send(&self, context: &str, task: Option<&str>, data: Value) -> Value {
        let id = self.ids.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({
            "messageId": format!("m-{id}"), "role": "ROLE_USER", "contextId": context,
            "parts": [{"data": data, "mediaType": "application/json"}]
        });
        if let Some(task) = task {
            message["taskId"] = json!(task);
        }
        let answer = self.rpc("SendMessage", json!({"message": message})).await;
        answer["result"]["task"].clone()
    }

    async fn rpc(&self, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let response = self
            .http
            .post(self.url("/jsonrpc"))
            .header("A2A-Version", "1.0")
            .json(&body)
            .send()
            .await
            .expect("the server answers");
        let answer: Value = response.json().await.expect("JSON-RPC");
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer
    }

    async fn task(&self, id: &str) -> Value {
        self.rpc("GetTask", json!({"id": id})).await["result"].clone()
    }
}

fn state(task: &Value) -> &str {
    task["status"]["state"].as_str().unwrap_or_default()
}

/// The `data` artifact of a task.
fn data(task: &Value) -> Value {
    task["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["artifactId"] == "data")
        .map(|a| a["parts"][0]["data"].clone())
        .unwrap_or(Value::Null)
}

/// The status message's data part.
fn needed(task: &Value) -> Value {
    task["status"]["message"]["parts"][1]["data"].clone()
}

fn status_text(task: &Value) -> String {
    task["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Fills the sign-up form in conversation `context`, asking for the submit; returns the task
/// id and its review link.
async fn fill(agent: &Agent, site: &TestSite, context: &str, name: &str) -> (String, String) {
    let values = json!({
        "Full name": name, "Email": "ada@example.com", "Password": PASSWORD,
        "I accept the terms": true
    });
    let url = site.url("shop.test", "/signup.html");
    let task = agent
        .send(
            context,
            None,
            json!({"url": url, "values": values, "submit": true}),
        )
        .await;
    assert_eq!(state(&task), "TASK_STATE_INPUT_REQUIRED", "{task}");
    let report = data(&task);
    assert_eq!(report["pendingSubmit"], true, "{report}");
    let link = report["approvalUrl"]
        .as_str()
        .expect("an approvalUrl")
        .to_owned();
    assert_eq!(needed(&task)["approvalUrl"], json!(link));
    assert!(status_text(&task).contains(&link), "{task}");
    assert!(
        link.starts_with(&agent.url("/approvals/")),
        "{link} is under the server's address"
    );
    let id = task["id"].as_str().expect("task id").to_owned();
    (id, link)
}

/// The link's secret (its last segment).
fn secret(link: &str) -> &str {
    link.rsplit('/').next().unwrap_or_default()
}

/// The review page's nonce, read from its HTML.
fn nonce(html: &str) -> String {
    let after = html
        .split("name=\"nonce\" value=\"")
        .nth(1)
        .expect("a nonce field");
    after.split('"').next().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_person_lets_the_submit_happen() {
    let Some(chromium) = chromium_or_skip("approval only_a_person_lets_the_submit_happen") else {
        return;
    };
    tokio::time::timeout(TEST_TIMEOUT, scenario(&chromium))
        .await
        .expect("the test finished in time");
}

async fn scenario(chromium: &std::path::Path) {
    let site = TestSite::start().await;
    let agent = Agent::start(chromium);
    let links = approve_in_the_browser(&agent, &site, chromium).await;
    let (more, other_task) = refusals_and_rejection(&agent, &site).await;
    approve_from_the_command_line(&agent, &site, &other_task).await;
    let log = agent.server.output();
    for link in links.iter().chain(&more) {
        assert!(
            !log.contains(secret(link)),
            "a link's secret in the log:\n{log}"
        );
    }
    // The decision is logged inside its request's span, whose path stops at the prefix.
    let decided = log
        .lines()
        .find(|l| l.contains("a person decided a submit"))
        .unwrap_or_else(|| panic!("no decision in the log:\n{log}"));
    assert!(decided.contains("/approvals/…"), "{decided}");
}

/// The calling agent's confirmation submits nothing; a person approves in Chromium.
async fn approve_in_the_browser(
    agent: &Agent,
    site: &TestSite,
    chromium: &std::path::Path,
) -> Vec<String> {
    let (task, link) = fill(agent, site, "ctx-browser", "Ada Lovelace").await;
    let confirmed = agent
        .send("ctx-browser", Some(&task), json!({"confirm": true}))
        .await;
    assert_eq!(
        state(&confirmed),
        "TASK_STATE_INPUT_REQUIRED",
        "{confirmed}"
    );
    assert!(
        status_text(&confirmed).contains("A person must approve"),
        "{confirmed}"
    );
    assert_eq!(
        data(&confirmed)["approvalUrl"],
        json!(link),
        "the same showing, the same link"
    );
    assert!(
        site.submissions().is_empty(),
        "the caller's confirm sent nothing"
    );

    // A stream that follows the task from now on sees the person's decision.
    let stream = agent
        .http
        .post(agent.url("/jsonrpc"))
        .header("A2A-Version", "1.0")
        .header("Accept", "text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 9, "method": "SubscribeToTask", "params": {"id": task}}))
        .send()
        .await
        .expect("subscribe");
    let completed = tokio::spawn(read_until(stream, "TASK_STATE_COMPLETED"));

    let browser = Browser::launch(LaunchOptions {
        chrome_path: Some(chromium.to_owned()),
        ..LaunchOptions::default()
    })
    .await
    .expect("the person's Chromium");
    let context = browser.new_context().await.expect("context");
    let page = context.new_page().await.expect("page");
    page.navigate(&link, Duration::from_secs(30))
        .await
        .expect("the review page loads");
    let shown: Value = page
        .evaluate("({text: document.body.innerText, html: document.documentElement.outerHTML, scripts: document.scripts.length, picture: document.querySelector('img') ? document.querySelector('img').naturalWidth : 0})")
        .await
        .expect("read the page");
    let text = shown["text"].as_str().unwrap_or_default();
    for expected in [
        "Ada Lovelace",
        "ada@example.com",
        "shop.test",
        "/submit",
        "••••••",
    ] {
        assert!(
            text.contains(expected),
            "{expected:?} not on the page:\n{text}"
        );
    }
    assert!(
        !shown["html"]
            .as_str()
            .unwrap_or_default()
            .contains(PASSWORD),
        "the password is never in the page"
    );
    assert_eq!(shown["scripts"], 0, "the page runs no script");
    assert!(
        shown["picture"].as_u64().unwrap_or(0) > 0,
        "the picture loads under the CSP"
    );

    let loaded = page.next_event("Page.loadEventFired", None);
    page.evaluate("document.querySelector('button.approve').click()")
        .await
        .expect("click Approve");
    loaded.await.expect("the answer page loads");
    let answer = page
        .evaluate("({title: document.title, text: document.body.innerText})")
        .await
        .expect("the answer page");
    assert_eq!(
        answer["title"], "Approved: the form was submitted",
        "{answer}"
    );
    let _ = context.dispose().await;
    browser.shutdown().await;

    let posts = site.submissions();
    assert_eq!(posts.len(), 1, "exactly one POST: {posts:?}");
    assert!(
        posts[0].contains(&("name".into(), "Ada Lovelace".into())),
        "{posts:?}"
    );
    let done = agent.task(&task).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    let record = &data(&done)["approval"];
    assert_eq!(record["decision"], "approved", "{done}");
    assert_eq!(record["by"], "a person on the review page", "{done}");
    assert_eq!(
        done["status"]["message"]["metadata"]["approval"]["decision"],
        "approved"
    );
    completed.await.expect("the stream's reader");

    // Used: the link opens nothing any more.
    let again = reqwest::get(&link).await.expect("the link again");
    assert_eq!(again.status(), 410);
    vec![link]
}

/// Reads an SSE stream until a line holds `needle`.
async fn read_until(mut stream: reqwest::Response, needle: &'static str) {
    let mut seen = String::new();
    while let Some(chunk) = stream.chunk().await.expect("the stream") {
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if seen.contains(needle) {
            return;
        }
    }
    panic!("the stream ended without {needle}:\n{seen}");
}

/// Forged decisions are refused; a person rejects with a reason and nothing is sent.
async fn refusals_and_rejection(agent: &Agent, site: &TestSite) -> (Vec<String>, String) {
    let (task, link) = fill(agent, site, "ctx-reject", "Grace Hopper").await;
    let (other_task, other_link) = fill(agent, site, "ctx-other", "Ada Byron").await;
    let http = reqwest::Client::new();
    let page = http.get(&link).send().await.expect("the review page");
    assert_eq!(page.status(), 200);
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        csp.contains("default-src 'none'") && csp.contains("form-action 'self'"),
        "{csp}"
    );
    assert_eq!(page.headers()["referrer-policy"], "same-origin");
    let html = page.text().await.expect("html");
    let nonce = nonce(&html);

    let post = |url: String, body: String, origin: Option<String>| {
        let mut request = http
            .post(url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send()
    };
    // No nonce, another site, another task's id with this link's secret: nothing decided.
    let forged = post(link.clone(), "decision=approve".into(), None)
        .await
        .expect("post");
    assert_eq!(forged.status(), 403);
    let approve = format!("decision=approve&nonce={nonce}");
    let cross = post(
        link.clone(),
        approve.clone(),
        Some("http://evil.test".into()),
    )
    .await
    .expect("post");
    assert_eq!(cross.status(), 403);
    let swapped = agent.url(&format!("/approvals/{other_task}/{}", secret(&link)));
    let swapped = post(swapped, approve, None).await.expect("post");
    assert_eq!(swapped.status(), 404);
    assert!(
        site.submissions().len() == 1,
        "no POST from a refused decision"
    );

    let reject = format!("decision=reject&nonce={nonce}&reason=the+address+is+wrong");
    let rejected = post(link.clone(), reject, Some(agent.url("")))
        .await
        .expect("reject");
    assert_eq!(rejected.status(), 200);
    assert!(
        rejected
            .text()
            .await
            .unwrap_or_default()
            .contains("Rejected")
    );
    let back = agent.task(&task).await;
    assert_eq!(state(&back), "TASK_STATE_INPUT_REQUIRED", "{back}");
    assert!(
        status_text(&back).contains("the address is wrong"),
        "{back}"
    );
    assert_eq!(
        back["status"]["message"]["metadata"]["approval"]["decision"],
        "rejected"
    );
    assert_eq!(site.submissions().len(), 1, "a rejection sends nothing");
    (vec![link, other_link], other_task)
}

/// The approver token decides from the command line; any other token is refused.
async fn approve_from_the_command_line(agent: &Agent, site: &TestSite, task: &str) {
    let run = |token: &str, extra: &[&str]| {
        let mut cmd = ferry();
        cmd.env("FERRY_APPROVER_TOKEN", token)
            .args(["approve", &agent.server.base_url, task])
            .args(extra);
        cmd.output().expect("run ferry approve")
    };
    let wrong = run("not-the-token", &["--show"]);
    assert!(!wrong.status.success());
    assert!(
        String::from_utf8_lossy(&wrong.stderr).contains("approver token"),
        "{wrong:?}"
    );

    let shown = run(APPROVER_TOKEN, &["--show"]);
    let out = String::from_utf8_lossy(&shown.stdout).to_string();
    assert!(shown.status.success(), "{shown:?}");
    assert!(
        out.contains("Full name: Ada Byron") && out.contains("Password: ••••••"),
        "{out}"
    );
    assert!(!out.contains(PASSWORD), "{out}");
    assert_eq!(site.submissions().len(), 1, "--show decides nothing");

    let approved = run(APPROVER_TOKEN, &[]);
    let out = String::from_utf8_lossy(&approved.stdout).to_string();
    assert!(approved.status.success(), "{approved:?}");
    assert!(out.contains("approved:"), "{out}");
    let posts = site.submissions();
    assert_eq!(posts.len(), 2, "{posts:?}");
    assert!(
        posts[1].contains(&("name".into(), "Ada Byron".into())),
        "{posts:?}"
    );
    let done = agent.task(task).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(data(&done)["approval"]["by"], "the approver token");
}
