//! The forms agent on pages written like published ones (tests/site/README.md): a submit
//! is a success only when the form's data left the browser; page errors are attached to
//! their fields however the page shows them; group questions read as people read them;
//! dates in parts are one field; fields that will not be sent are warned about; follow-ups
//! keep the task's intent; sessions belong to (tenant, caller, context).

use crate::agent::{field, shop_config, strings, submitted, with_agent};
use crate::support::agent::{report, state, status_text, task_id};
use crate::support::site::TestSite;
use crate::support::{bounded, chromium_or_skip};
use ferry_agent::{
    AgentEvent, AgentExecutor, EmitError, EmitFuture, EventSink, EventTarget, RequestContext,
};
use ferry_forms::FormsAgent;
use ferry_proto::{Message, Part, TaskState};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// Every key of the turn found its field.
fn all_matched(result: &Value) {
    let unmatched = strings(&report(result)["unmatched"]);
    assert!(unmatched.is_empty(), "unmatched {unmatched:?}: {result}");
}

/// The values of the last POST /submit, by name.
fn posted(site: &TestSite, name: &str) -> Option<String> {
    submitted(site)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submit_a_page_script_cancels_is_not_reported_as_a_success() {
    with_agent("real_pages::cancelled", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/scripted.html");
        // Last name left out: the page's script cancels the submit and shows its message.
        let result = server
            .send(
                "cancelled",
                None,
                json!({"url": url, "values": {"First name": "Ada", "Email": "ada@example.com"}, "submit": true, "confirm": true}),
            )
            .await;
        assert_eq!(state(&result), "TASK_STATE_INPUT_REQUIRED", "{result}");
        all_matched(&result);
        let data = report(&result);
        assert_eq!(data["submitted"], false, "{data}");
        assert_eq!(data["outcome"]["sent"], "none", "{data}");
        assert_eq!(data["fieldErrors"]["Last name"], "Enter your lastname", "{data}");
        // The error label is the field's error, not its name.
        assert_eq!(field(&data, "Last name")["error"], "Enter your lastname");
        let text = status_text(&result);
        assert!(text.contains("did not send"), "{text}");
        assert!(text.contains("cancelled"), "{text}");
        assert!(site.submissions().is_empty(), "the site received nothing");

        // The answer to the page's question continues the submit on the same task.
        let task = task_id(&result);
        let fixed = server
            .send(
                "cancelled",
                Some(&task),
                json!({"values": {"Last name": "Lovelace"}, "confirm": true}),
            )
            .await;
        assert_eq!(state(&fixed), "TASK_STATE_COMPLETED", "{fixed}");
        all_matched(&fixed);
        let data = report(&fixed);
        assert_eq!(data["submitted"], true, "{data}");
        assert_eq!(data["outcome"]["sent"], "script", "{data}");
        assert_eq!(data["outcome"]["navigated"], false, "{data}");
        assert_eq!(site.submissions().len(), 1);
        assert_eq!(posted(&site, "lastname").as_deref(), Some("Lovelace"));

        // An invalid e-mail: the same truth.
        let bad = server
            .send(
                "cancelled-email",
                None,
                json!({"url": url, "values": {"First name": "Ada", "Last name": "L", "Email": "ada@"}, "submit": true, "confirm": true}),
            )
            .await;
        assert_eq!(state(&bad), "TASK_STATE_INPUT_REQUIRED", "{bad}");
        all_matched(&bad);
        let data = report(&bad);
        assert_eq!(data["submitted"], false, "{data}");
        assert_eq!(
            data["fieldErrors"]["Email"], "Please enter a valid email address",
            "{data}"
        );
        assert_eq!(site.submissions().len(), 1, "nothing more was sent");
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silently_cancelled_submit_says_exactly_that() {
    with_agent("real_pages::silent", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/scripted.html?mode=silent");
        let result = server
            .send(
                "silent",
                None,
                json!({"url": url, "values": {"First name": "Ada", "Last name": "Lovelace", "Email": "ada@example.com"}, "submit": true, "confirm": true}),
            )
            .await;
        assert_eq!(state(&result), "TASK_STATE_INPUT_REQUIRED", "{result}");
        all_matched(&result);
        let text = status_text(&result);
        assert!(text.contains("a page script cancelled the submit"), "{text}");
        assert!(text.contains("shows no error"), "{text}");
        let data = report(&result);
        assert_eq!(data["submitted"], false, "{data}");
        assert!(report(&result)["outcome"]["requests"].is_null(), "{data}");
        assert!(site.submissions().is_empty());
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_attached_to_their_fields_however_the_page_shows_them() {
    with_agent(
        "real_pages::errors",
        shop_config,
        |site, server| async move {
            let url = site.url("shop.test", "/govuk-errors.html");
            let result = server.send("errors", None, json!({"url": url})).await;
            assert_eq!(state(&result), "TASK_STATE_COMPLETED", "{result}");
            let data = report(&result);
            // A fieldset-level error of a date in parts.
            let date = field(&data, "What is your date of birth?");
            assert_eq!(date["type"], "date-parts", "{date}");
            assert!(
                date["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("Date of birth must include a year")),
                "{date}"
            );
            // Only the error summary's link names this one.
            assert_eq!(field(&data, "Full name")["error"], "Enter your full name");
            // An error paragraph before the input.
            assert_eq!(
                field(&data, "National Insurance number")["error"],
                "Enter a National Insurance number in the correct format"
            );
            // An error inside the label: the label is the question, the error is the error.
            assert_eq!(field(&data, "Username")["error"], "is already taken");
            // The summary repeats the fields' errors; it is not a form error too.
            let form_errors = data["formErrors"].to_string();
            assert!(
                !form_errors.contains("must include a year"),
                "{form_errors}"
            );
            server
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_date_in_parts_is_one_field_filled_from_one_value() {
    with_agent("real_pages::date_parts", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/govuk-date.html");
        let result = server
            .send(
                "dates",
                None,
                json!({"url": url, "values": {"Date of birth": "31 3 2030", "Expiry date": "03/2030", "How would you like to be contacted?": ["Email"]}, "submit": true}),
            )
            .await;
        assert_eq!(state(&result), "TASK_STATE_INPUT_REQUIRED", "{result}");
        let data = report(&result);
        assert_eq!(data["pendingSubmit"], true, "{data}");
        assert!(strings(&data["unmatched"]).is_empty(), "{data}");
        let date = field(&data, "What is your date of birth?");
        assert_eq!(date["value"], "2030-03-31", "{date}");
        assert_eq!(field(&data, "Expiry date")["value"], "2030-03", "{data}");
        let task = task_id(&result);
        let done = server
            .send("dates", Some(&task), json!({"confirm": true}))
            .await;
        assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
        for (name, value) in [
            ("dob-day", "31"),
            ("dob-month", "3"),
            ("dob-year", "2030"),
            ("card-exp-m", "3"),
            // The control takes two digits.
            ("card-exp-y", "30"),
            ("contact", "email"),
        ] {
            assert_eq!(posted(&site, name).as_deref(), Some(value), "{name}");
        }

        // A value that does not fit is a field error, and nothing goes in.
        let misfit = server
            .send(
                "dates-misfit",
                None,
                json!({"url": url, "values": {"Date of birth": "31 3"}}),
            )
            .await;
        assert_eq!(state(&misfit), "TASK_STATE_INPUT_REQUIRED", "{misfit}");
        all_matched(&misfit);
        let data = report(&misfit);
        let error = data["fieldErrors"]["Date of birth"].as_str().unwrap_or("");
        assert!(error.contains("expected 3 parts"), "{data}");
        assert_eq!(field(&data, "What is your date of birth?")["value"], "");

        // The parts one by one, as keys of their own: one value per date, said so.
        let by_part = server
            .send(
                "dates-by-part",
                None,
                json!({"url": url, "values": {"Day": "10", "Month": "December", "Year": "1815", "Expiry month": "4", "Expiry year": "2031"}}),
            )
            .await;
        let data = report(&by_part);
        assert!(strings(&data["unmatched"]).is_empty(), "{data}");
        assert_eq!(field(&data, "What is your date of birth?")["value"], "1815-12-10", "{data}");
        assert_eq!(field(&data, "Expiry date")["value"], "2031-04", "{data}");
        let notes = strings(&data["warnings"]).join("\n");
        assert!(
            notes.contains("Day, Month, Year: read as the parts of the date \"What is your date of birth?\""),
            "{notes}"
        );
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_questions_are_named_as_people_read_them() {
    with_agent(
        "real_pages::questions",
        shop_config,
        |site, server| async move {
            let url = site.url("shop.test", "/questions.html");
            let inspected = server.send("questions", None, json!({"url": url})).await;
            let data = report(&inspected);
            for label in [
                "Date format",
                "Newsletter frequency",
                "Preferred Contact Method",
                "Topics (select at least two) - note: you can change them later in your profile",
                "Which size fits you best?",
            ] {
                let _ = field(&data, label);
            }
            let result = server
                .send(
                    "questions",
                    None,
                    json!({"values": {
                    "Date format": "DD/MM/YYYY",
                    "Newsletter frequency": "Monthly",
                    "Preferred Contact Method": "Phone",
                    "Topics": ["Rust", "Zig"],
                    "Which size fits you best?": "Medium"
                }, "submit": true, "confirm": true}),
                )
                .await;
            assert_eq!(state(&result), "TASK_STATE_COMPLETED", "{result}");
            assert!(strings(&report(&result)["unmatched"]).is_empty());
            let got = submitted(&site);
            for pair in [
                ("dateformat", "dmy"),
                ("freq", "monthly"),
                ("contact", "phone"),
                ("topics", "rust"),
                ("topics", "zig"),
                ("size", "m"),
            ] {
                assert!(
                    got.contains(&(pair.0.to_owned(), pair.1.to_owned())),
                    "{pair:?} not in {got:?}"
                );
            }
            server
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fields_that_will_not_be_sent_are_warned_about() {
    with_agent("real_pages::unsent", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/unsent.html");
        let result = server
            .send(
                "unsent",
                None,
                json!({"url": url, "values": {"Email": "ada@example.com", "Nickname": "ada", "Plan": "Pro"}, "submit": true}),
            )
            .await;
        assert_eq!(state(&result), "TASK_STATE_INPUT_REQUIRED", "{result}");
        all_matched(&result);
        let data = report(&result);
        let warnings = data["warnings"].to_string();
        for needle in [
            "\\\"Nickname\\\" has no name",
            "\\\"Referral code\\\" is disabled",
            "the options of \\\"Plan\\\" all send the same value",
        ] {
            assert!(warnings.contains(needle), "{needle} not in {warnings}");
        }
        // A radio without a value is reported by its label.
        assert_eq!(field(&data, "Plan")["value"], "Pro", "{data}");
        assert!(result.to_string().contains("has no name"), "in the text result too");
        let _ = site;
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_refused_requests_is_counted_not_listed() {
    with_agent(
        "real_pages::flood",
        shop_config,
        |site, server| async move {
            let url = site.url("shop.test", "/flood.html");
            let result = server.send("flood", None, json!({"url": url})).await;
            assert_eq!(state(&result), "TASK_STATE_COMPLETED", "{result}");
            let data = report(&result);
            let listed = data["blocked"].as_array().map_or(0, Vec::len);
            assert_eq!(listed, 20, "{data}");
            let more = data["blockedMore"].as_u64().unwrap_or(0);
            assert!(more >= 500, "{more} more: {data}");
            assert!(site.requests_for("evil.test").is_empty());
            server
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_with_the_missing_values_continues_the_submit() {
    with_agent("real_pages::follow_up", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/signup.html");
        let first = server
            .send(
                "follow",
                None,
                json!({"url": url, "values": {"Name": "Ada", "Email": "ada@example.com"}, "submit": true}),
            )
            .await;
        assert_eq!(state(&first), "TASK_STATE_INPUT_REQUIRED", "{first}");
        all_matched(&first);
        let missing = strings(&report(&first)["missing"]);
        assert!(missing.contains(&"Password".to_owned()), "{missing:?}");
        let task = task_id(&first);
        // Turn 2 carries only the missing values.
        let second = server
            .send(
                "follow",
                Some(&task),
                json!({"values": {"Password": "correct horse", "I accept the terms": true}}),
            )
            .await;
        assert_eq!(state(&second), "TASK_STATE_INPUT_REQUIRED", "{second}");
        all_matched(&second);
        assert_eq!(report(&second)["pendingSubmit"], true, "{second}");
        assert!(site.submissions().is_empty(), "nothing before the confirmation");
        let third = server
            .send("follow", Some(&task), json!({"confirm": true}))
            .await;
        assert_eq!(state(&third), "TASK_STATE_COMPLETED", "{third}");
        assert_eq!(posted(&site, "name").as_deref(), Some("Ada"));
        assert_eq!(posted(&site, "terms").as_deref(), Some("accepted"));

        // "submit": false drops the intent.
        let other = server
            .send(
                "follow-off",
                None,
                json!({"url": url, "values": {"Name": "Ada"}, "submit": true}),
            )
            .await;
        all_matched(&other);
        let task = task_id(&other);
        let off = server
            .send(
                "follow-off",
                Some(&task),
                json!({"values": {"Email": "a@example.com", "Password": "pw pw pw", "I accept the terms": true}, "submit": false}),
            )
            .await;
        assert_eq!(state(&off), "TASK_STATE_COMPLETED", "{off}");
        all_matched(&off);
        assert_eq!(report(&off)["pendingSubmit"], false);
        assert_eq!(site.submissions().len(), 1);
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_task_holding_a_pending_submit_may_confirm_it() {
    with_agent("real_pages::confirm_owner", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/signup.html");
        let values = json!({"Name": "Ada", "Email": "ada@example.com", "Password": "correct horse", "I accept the terms": true});
        let asked = server
            .send(
                "owner",
                None,
                json!({"url": url, "values": values, "submit": true}),
            )
            .await;
        assert_eq!(report(&asked)["pendingSubmit"], true, "{asked}");
        all_matched(&asked);
        let holder = task_id(&asked);
        // Another task in the same conversation.
        let intruder = server.send("owner", None, json!({"confirm": true})).await;
        assert_eq!(state(&intruder), "TASK_STATE_INPUT_REQUIRED", "{intruder}");
        let text = status_text(&intruder);
        assert!(text.contains("only that task can confirm it"), "{text}");
        assert!(site.submissions().is_empty());
        // The holder still can.
        let done = server
            .send("owner", Some(&holder), json!({"confirm": true}))
            .await;
        assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
        assert_eq!(site.submissions().len(), 1);
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tenants_with_one_context_id_do_not_share_a_session() {
    with_agent("real_pages::tenants", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/signup.html");
        let values = json!({"Name": "Ada", "Email": "ada@example.com", "Password": "correct horse", "I accept the terms": true});
        let asked = server
            .send_in(
                "tenant-a",
                "same",
                None,
                json!({"url": url, "values": values, "submit": true}),
            )
            .await;
        assert_eq!(report(&asked)["pendingSubmit"], true, "{asked}");
        all_matched(&asked);
        // Tenant b, same contextId: no page, nothing to confirm.
        let confirm = server
            .send_in("tenant-b", "same", None, json!({"confirm": true}))
            .await;
        let text = status_text(&confirm);
        assert!(text.contains("No page is open"), "{text}");
        assert!(site.submissions().is_empty());
        assert_eq!(
            server.agent().pool().len(),
            1,
            "tenant b had nothing to look at, so no browser was started for it"
        );
        // Tenant a's submit is untouched.
        let done = server
            .send_in(
                "tenant-a",
                "same",
                Some(&task_id(&asked)),
                json!({"confirm": true}),
            )
            .await;
        assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
        assert_eq!(site.submissions().len(), 1);
        server
    })
    .await;
}

/// What a turn emitted, for the agent called without a server.
#[derive(Default)]
struct Recorded(Mutex<Vec<AgentEvent>>);

impl EventTarget for Recorded {
    fn emit(&self, event: AgentEvent) -> EmitFuture<'_> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(event);
        Box::pin(async { Ok::<(), EmitError>(()) })
    }
}

impl Recorded {
    /// The last status and its text.
    fn last_status(&self) -> (TaskState, String) {
        let events = self.0.lock().unwrap_or_else(|p| p.into_inner());
        events
            .iter()
            .rev()
            .find_map(|e| match e {
                AgentEvent::Status { state, message } => Some((
                    *state,
                    message.as_ref().map(Message::text).unwrap_or_default(),
                )),
                _ => None,
            })
            .unwrap_or((TaskState::Unspecified, String::new()))
    }
}

/// One turn of `agent` as `caller`, without a server (a server names each token's caller).
async fn turn_as(agent: &FormsAgent, caller: &str, task: &str, data: Value) -> (TaskState, String) {
    let message = Message::user(format!("m-{caller}-{task}"), vec![Part::data(data)]);
    let ctx = RequestContext {
        caller: Some(caller.into()),
        ..RequestContext::new(message, task, "shared-context")
    };
    let recorded = Arc::new(Recorded::default());
    let sink = EventSink::new(task, "shared-context", recorded.clone());
    let _ = agent.execute(ctx, sink).await;
    recorded.last_status()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_callers_with_one_context_id_do_not_share_a_session() {
    if !chromium_or_skip("real_pages::callers") {
        return;
    }
    bounded(async {
        let site = TestSite::start().await;
        let agent = FormsAgent::new(shop_config(&site));
        let url = site.url("shop.test", "/signup.html");
        let (state, text) = turn_as(
            &agent,
            "alice",
            "t-alice",
            json!({"url": url, "values": {"Name": "Ada", "Email": "ada@example.com", "Password": "correct horse", "I accept the terms": true}, "submit": true}),
        )
        .await;
        assert_eq!(state, TaskState::InputRequired, "{text}");
        let (state, text) = turn_as(&agent, "bob", "t-bob", json!({"confirm": true})).await;
        assert_eq!(state, TaskState::InputRequired, "{text}");
        assert!(text.contains("No page is open"), "{text}");
        assert!(site.submissions().is_empty());
        assert_eq!(
            agent.pool().len(),
            1,
            "bob had nothing to look at, so no browser was started for him"
        );
        let (state, text) = turn_as(&agent, "alice", "t-alice", json!({"confirm": true})).await;
        assert_eq!(state, TaskState::Completed, "{text}");
        assert_eq!(site.submissions().len(), 1);
        agent.pool().shutdown().await;
    })
    .await;
}
