//! A confirmation approves only a submit ferry showed ready, as it was shown: on a page whose
//! browser validation lets an incomplete form through (a date picker's hidden input under a
//! read-only copy, a `novalidate` form), nothing is clicked while ferry reports the form
//! incomplete — on a bare confirm, on confirm with values, and under `--auto-submit`; a
//! field the page empties after the fill is never reported as filled.

use crate::agent::{shop_config, strings, with_agent};
use crate::support::agent::{FormsServer, report, state, status_text, task_id};
use crate::support::site::TestSite;
use ferry_forms::{ConversationKey, FormsConfig};
use serde_json::{Value, json};

/// The three required answers, with the date the picker will not take.
fn booking() -> Value {
    json!({"Full name": "Ada Lovelace", "Pick a date": "2027-03-14", "Favourite colour": "Crimson"})
}

/// The labels of the report's `filled`.
fn filled(result: &Value) -> Vec<String> {
    report(result)["filled"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["field"].as_str().map(str::to_owned))
        .collect()
}

/// How often the page's submit button was clicked, as its title counts them; read through a
/// look at the open page in a task of its own in `context` (the look keeps what waits).
async fn submit_clicks(server: &FormsServer, context: &str) -> usize {
    let look = server.send(context, None, json!({})).await;
    let title = report(&look)["title"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    match title.strip_prefix("Book a tasting (submit clicked ") {
        Some(rest) => rest.trim_end_matches(')').parse().expect("a click count"),
        None => {
            assert_eq!(title, "Book a tasting", "{look}");
            0
        }
    }
}

/// Turn 1 of every scenario: everything given, the date refused by its read-only picker.
async fn ask_with_the_picker_refusing(
    server: &FormsServer,
    site: &TestSite,
    context: &str,
    url: &str,
    extra: Value,
) -> String {
    let mut data = json!({"url": url, "values": booking()});
    if let (Some(data), Some(extra)) = (data.as_object_mut(), extra.as_object()) {
        data.extend(extra.clone());
    }
    let first = server.send(context, None, data).await;
    assert_eq!(state(&first), "TASK_STATE_INPUT_REQUIRED", "{first}");
    let data = report(&first);
    assert_eq!(strings(&data["missing"]), ["Pick a date"], "{data}");
    let error = data["fieldErrors"]["Pick a date"]
        .as_str()
        .unwrap_or_default();
    assert!(error.contains("read-only"), "{data}");
    assert_eq!(data["pendingSubmit"], false, "{data}");
    assert_eq!(data["submitted"], false, "{data}");
    assert!(
        !filled(&first).contains(&"Pick a date".to_owned()),
        "{data}"
    );
    assert!(site.submissions().is_empty());
    task_id(&first)
}

/// A bare confirm on a task whose form is not ready: nothing clicked, nothing sent, the task
/// waits with the reason.
async fn confirm_is_refused(server: &FormsServer, site: &TestSite, context: &str, task: &str) {
    let confirm = server
        .send(context, Some(task), json!({"confirm": true}))
        .await;
    assert_eq!(state(&confirm), "TASK_STATE_INPUT_REQUIRED", "{confirm}");
    let text = status_text(&confirm);
    assert!(text.starts_with("Nothing was submitted"), "{text}");
    assert!(text.contains("Pick a date"), "{text}");
    let data = report(&confirm);
    assert!(
        strings(&data["missing"]).contains(&"Pick a date".to_owned()),
        "{data}"
    );
    assert_eq!(data["submitted"], false, "{data}");
    assert_eq!(data["pendingSubmit"], false, "{data}");
    assert!(site.submissions().is_empty(), "no POST after the confirm");
    assert_eq!(
        submit_clicks(server, context).await,
        0,
        "the submit button was clicked"
    );
}

/// The caller makes the picker typeable, then types the date: the form is ready.
async fn complete_the_date(server: &FormsServer, context: &str, task: &str, extra: Value) -> Value {
    let mut typed = json!({"values": {"Type the date instead": true}});
    let mut date = json!({"values": {"Pick a date": "2027-03-14"}});
    for data in [&mut typed, &mut date] {
        if let (Some(data), Some(extra)) = (data.as_object_mut(), extra.as_object()) {
            data.extend(extra.clone());
        }
    }
    let still = server.send(context, Some(task), typed).await;
    assert_eq!(state(&still), "TASK_STATE_INPUT_REQUIRED", "{still}");
    assert_eq!(
        strings(&report(&still)["missing"]),
        ["Pick a date"],
        "{still}"
    );
    server.send(context, Some(task), date).await
}

/// The one POST the site received, by field name.
fn the_one_post(site: &TestSite) -> Vec<(String, String)> {
    let posts = site.submissions();
    assert_eq!(posts.len(), 1, "exactly one submit: {posts:?}");
    posts.into_iter().next().unwrap_or_default()
}

fn posted<'a>(post: &'a [(String, String)], name: &str) -> Option<&'a str> {
    post.iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirm_submits_only_what_was_shown_ready() {
    with_agent("confirm::picker", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/datepicker.html");
        let task =
            ask_with_the_picker_refusing(&server, &site, "picker", &url, json!({"submit": true}))
                .await;
        confirm_is_refused(&server, &site, "picker", &task).await;
        // Asked twice, the same answer.
        confirm_is_refused(&server, &site, "picker", &task).await;

        let ready = complete_the_date(&server, "picker", &task, json!({})).await;
        assert_eq!(state(&ready), "TASK_STATE_INPUT_REQUIRED", "{ready}");
        assert_eq!(report(&ready)["pendingSubmit"], true, "{ready}");
        assert!(
            site.submissions().is_empty(),
            "nothing before the confirmation"
        );

        let done = server
            .send("picker", Some(&task), json!({"confirm": true}))
            .await;
        assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
        assert_eq!(report(&done)["submitted"], true, "{done}");
        let post = the_one_post(&site);
        assert_eq!(posted(&post, "tasting_date"), Some("2027-03-14"));
        assert_eq!(posted(&post, "fullname"), Some("Ada Lovelace"));
        assert_eq!(posted(&post, "colour"), Some("crimson"));
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_clicked_while_the_form_is_incomplete_whatever_the_browser_allows() {
    with_agent("confirm::novalidate", shop_config, |site, server| async move {
        // A novalidate form: a click would send it at once.
        let url = site.url("shop.test", "/datepicker.html?novalidate=1");
        let task = ask_with_the_picker_refusing(&server, &site, "novalidate", &url, json!({"submit": true})).await;
        confirm_is_refused(&server, &site, "novalidate", &task).await;
        // Submit and confirm together, no values: ferry's report of the page decides.
        let both = server
            .send("novalidate", Some(&task), json!({"submit": true, "confirm": true}))
            .await;
        assert_eq!(state(&both), "TASK_STATE_INPUT_REQUIRED", "{both}");
        assert!(status_text(&both).contains("Pick a date"), "{both}");
        assert!(site.submissions().is_empty(), "no POST");
        assert_eq!(submit_clicks(&server, "novalidate").await, 0);

        // The select left empty too: the browser's validation would stop a click; there is none.
        let url = site.url("shop.test", "/datepicker.html");
        let first = server
            .send(
                "both-missing",
                None,
                json!({"url": url, "values": {"Full name": "Ada Lovelace", "Pick a date": "2027-03-14"}, "submit": true}),
            )
            .await;
        assert_eq!(
            strings(&report(&first)["missing"]),
            ["Pick a date", "Favourite colour"],
            "{first}"
        );
        confirm_is_refused(&server, &site, "both-missing", &task_id(&first)).await;
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirm_with_values_submits_only_a_complete_form() {
    with_agent(
        "confirm::with_values",
        shop_config,
        |site, server| async move {
            let url = site.url("shop.test", "/datepicker.html?novalidate=1");
            let task = ask_with_the_picker_refusing(
                &server,
                &site,
                "with-values",
                &url,
                json!({"confirm": true}),
            )
            .await;
            assert_eq!(submit_clicks(&server, "with-values").await, 0);
            let done =
                complete_the_date(&server, "with-values", &task, json!({"confirm": true})).await;
            assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
            let post = the_one_post(&site);
            assert_eq!(posted(&post, "tasting_date"), Some("2027-03-14"));
            server
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_submit_obeys_the_same_rule() {
    let config = |site: &TestSite| FormsConfig {
        auto_submit: true,
        ..shop_config(site)
    };
    with_agent("confirm::auto_submit", config, |site, server| async move {
        let url = site.url("shop.test", "/datepicker.html?novalidate=1");
        let task =
            ask_with_the_picker_refusing(&server, &site, "auto", &url, json!({"submit": true}))
                .await;
        confirm_is_refused(&server, &site, "auto", &task).await;
        // Once the form is complete, the kept intent submits at once.
        let done = complete_the_date(&server, "auto", &task, json!({})).await;
        assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
        let post = the_one_post(&site);
        assert_eq!(posted(&post, "tasting_date"), Some("2027-03-14"));
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_changed_since_it_was_shown_ready_is_shown_again() {
    with_agent("confirm::changed", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/signup.html");
        let values = json!({"Name": "Ada", "Email": "ada@example.com", "Password": "correct horse", "I accept the terms": true});
        let ready = server
            .send("changed", None, json!({"url": url, "values": values, "submit": true}))
            .await;
        assert_eq!(report(&ready)["pendingSubmit"], true, "{ready}");
        let task = task_id(&ready);

        // The page changes a value behind the caller's back.
        {
            let mut slot = server
                .agent()
                .pool()
                .acquire(&ConversationKey::context("changed"))
                .await
                .expect("the conversation's slot");
            let session = slot.session.as_mut().expect("an open session");
            session
                .page()
                .evaluate("document.querySelector('[name=email]').value = 'mallory@example.com'")
                .await
                .expect("the page script runs");
        }
        let shown_again = server.send("changed", Some(&task), json!({"confirm": true})).await;
        assert_eq!(state(&shown_again), "TASK_STATE_INPUT_REQUIRED", "{shown_again}");
        let text = status_text(&shown_again);
        assert!(text.contains("changed since it was shown ready"), "{text}");
        assert!(text.contains("Email"), "{text}");
        assert_eq!(report(&shown_again)["pendingSubmit"], true, "{shown_again}");
        assert!(site.submissions().is_empty(), "nothing sent on a stale confirmation");

        // Confirmed again, as it is now.
        let done = server.send("changed", Some(&task), json!({"confirm": true})).await;
        assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
        let post = the_one_post(&site);
        assert_eq!(posted(&post, "email"), Some("mallory@example.com"));
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_field_the_page_empties_after_the_fill_is_not_filled() {
    with_agent("confirm::emptied", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/datepicker.html");
        let result = server
            .send(
                "emptied",
                None,
                json!({"url": url, "values": {"Full name": "Ada Lovelace", "Voucher code": "SPRING"}}),
            )
            .await;
        let data = report(&result);
        assert_eq!(filled(&result), ["Full name"], "{data}");
        let error = data["fieldErrors"]["Voucher code"].as_str().unwrap_or_default();
        assert!(error.contains("did not stick"), "{data}");
        assert!(site.submissions().is_empty());
        server
    })
    .await;
}
