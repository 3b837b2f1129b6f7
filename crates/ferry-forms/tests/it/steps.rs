//! Multi-step forms: a three-step flow in GOV.UK Frontend's markup (question pages with a
//! "Continue" button, then "Check your answers" with "Accept and send") is one task. Steps
//! are passed without a confirmation, values for a later step wait for it (across turns
//! too), and only the last step needs `{"confirm": true}`: the site receives each step's
//! values and exactly one final submit. A lone page whose button says "Continue" still asks
//! first (`real_pages::a_date_in_parts_is_one_field_filled_from_one_value`).

use crate::agent::{shop_config, strings, with_agent};
use crate::support::agent::{report, state, task_id};
use crate::support::site::TestSite;
use serde_json::{Value, json};

/// The POSTs the site received: (path with query, fields).
fn posts(site: &TestSite) -> Vec<(String, Vec<(String, String)>)> {
    site.requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .map(|r| {
            let fields = url::form_urlencoded::parse(&r.body).into_owned().collect();
            (r.path, fields)
        })
        .collect()
}

/// The URLs of the steps a report lists as passed.
fn steps(data: &Value) -> Vec<String> {
    data["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| {
            s["url"]
                .as_str()
                .map(|u| u.rsplit('/').next().unwrap_or(u).to_owned())
        })
        .collect()
}

/// Confirms `task` and checks the one final submit.
async fn confirm_the_last_step(
    server: &crate::support::agent::FormsServer,
    site: &TestSite,
    context: &str,
    task: &str,
) {
    let done = server
        .send(context, Some(task), json!({"confirm": true}))
        .await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    let data = report(&done);
    assert_eq!(data["submitted"], true, "{data}");
    assert_eq!(
        steps(&data),
        ["wizard-name.html", "wizard-contact.html"],
        "{data}"
    );
    let posts = posts(site);
    assert_eq!(posts.len(), 3, "{posts:?}");
    let finals: Vec<_> = posts
        .iter()
        .filter(|(path, _)| path.contains("form=final"))
        .collect();
    assert_eq!(finals.len(), 1, "exactly one final submit: {posts:?}");
    assert!(
        finals[0]
            .1
            .contains(&("answers-checked".into(), "true".into()))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_step_at_once_and_one_confirmation_for_the_last() {
    with_agent("steps::at_once", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/wizard-name.html");
        let values = json!({
            "What is your name?": "Ada Lovelace",
            "How should we contact you?": "Email",
            "Email address": "ada@example.com"
        });
        let ready = server
            .send(
                "wiz-1",
                None,
                json!({"url": url, "values": values, "submit": true}),
            )
            .await;
        assert_eq!(state(&ready), "TASK_STATE_INPUT_REQUIRED", "{ready}");
        let data = report(&ready);
        assert_eq!(data["pendingSubmit"], true, "the last step waits: {data}");
        assert!(
            data["url"]
                .as_str()
                .unwrap_or_default()
                .ends_with("/wizard-check.html"),
            "{data}"
        );
        assert_eq!(
            steps(&data),
            ["wizard-name.html", "wizard-contact.html"],
            "{data}"
        );
        assert!(strings(&data["unmatched"]).is_empty(), "{data}");
        let posts_now = posts(&site);
        assert_eq!(
            posts_now.len(),
            2,
            "the two steps, no final submit: {posts_now:?}"
        );
        assert!(
            posts_now[0]
                .1
                .contains(&("fullName".into(), "Ada Lovelace".into()))
        );
        assert!(posts_now[1].1.contains(&("contact".into(), "email".into())));
        assert!(
            posts_now[1]
                .1
                .contains(&("email".into(), "ada@example.com".into()))
        );
        confirm_the_last_step(&server, &site, "wiz-1", &task_id(&ready)).await;
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_for_a_later_step_waits_for_it() {
    with_agent("steps::later", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/wizard-name.html");
        let values =
            json!({"How should we contact you?": "Phone", "Email address": "ada@example.com"});
        let first = server
            .send(
                "wiz-2",
                None,
                json!({"url": url, "values": values, "submit": true}),
            )
            .await;
        assert_eq!(state(&first), "TASK_STATE_INPUT_REQUIRED", "{first}");
        let data = report(&first);
        assert_eq!(strings(&data["missing"]), ["What is your name?"], "{data}");
        assert_eq!(
            strings(&data["later"]),
            ["Email address", "How should we contact you?"],
            "kept for a later step, not unmatched: {data}"
        );
        assert!(strings(&data["unmatched"]).is_empty(), "{data}");
        assert!(posts(&site).is_empty());

        // The name alone: step one is passed, step two is filled from what waited.
        let task = task_id(&first);
        let ready = server
            .send(
                "wiz-2",
                Some(&task),
                json!({"values": {"What is your name?": "Ada Lovelace"}}),
            )
            .await;
        assert_eq!(state(&ready), "TASK_STATE_INPUT_REQUIRED", "{ready}");
        let data = report(&ready);
        assert_eq!(data["pendingSubmit"], true, "{data}");
        let posts_now = posts(&site);
        assert_eq!(posts_now.len(), 2, "{posts_now:?}");
        assert!(
            posts_now[1].1.contains(&("contact".into(), "phone".into())),
            "{posts_now:?}"
        );
        confirm_the_last_step(&server, &site, "wiz-2", &task).await;
        server
    })
    .await;
}
