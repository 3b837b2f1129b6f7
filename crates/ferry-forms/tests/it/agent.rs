//! The forms agent's A2A contract, end to end: a real server, a real browser, pages from the
//! test site under fake names (`shop.test`, `other.test`) mapped to 127.0.0.1.

use crate::support::agent::{FormsServer, report, state, status_text, task_id};
use crate::support::site::TestSite;
use crate::support::{bounded, chromium_or_skip};
use ferry_forms::FormsConfig;
use serde_json::{Value, json};
use std::future::Future;
use std::path::PathBuf;

/// The agent config for `site`: shop.test and other.test allowed and mapped to loopback.
pub(crate) fn shop_config(site: &TestSite) -> FormsConfig {
    let _ = site;
    FormsConfig {
        allow_domains: vec!["shop.test".into(), "other.test".into()],
        allow_private_networks: true,
        resolve: ["shop.test", "other.test", "evil.test"]
            .iter()
            .map(|n| ((*n).to_owned(), "127.0.0.1".parse().expect("ip")))
            .collect(),
        ..FormsConfig::default()
    }
}

/// Runs `body` with a site and a server when Chromium is here.
pub(crate) async fn with_agent<F, Fut>(
    name: &str,
    config: impl FnOnce(&TestSite) -> FormsConfig,
    body: F,
) where
    F: FnOnce(TestSite, FormsServer) -> Fut,
    Fut: Future<Output = FormsServer>,
{
    if !chromium_or_skip(name) {
        return;
    }
    bounded(async {
        let site = TestSite::start().await;
        let server = FormsServer::start(config(&site)).await;
        let server = body(site, server).await;
        server.agent().pool().shutdown().await;
    })
    .await;
}

pub(crate) fn field<'a>(report: &'a Value, label: &str) -> &'a Value {
    report["fields"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["label"] == label))
        .unwrap_or_else(|| panic!("no field {label:?} in {report}"))
}

pub(crate) fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn submitted(site: &TestSite) -> Vec<(String, String)> {
    site.submissions().pop().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_turns_missing_then_confirm_then_submitted() {
    with_agent("agent::three_turns", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/signup.html");
        let first = server
            .send(
                "c3",
                None,
                json!({"url": url, "values": {
                    "Full name": "Ada Lovelace", "email": "ada@example.com", "Country": "New Zealand",
                    "Plan": "Pro", "Topics": ["News", "Offers"], "Favourite colour": "blue"
                }, "submit": true}),
            )
            .await;
        assert_eq!(state(&first), "TASK_STATE_INPUT_REQUIRED", "{first}");
        let data = report(&first);
        assert_eq!(strings(&data["missing"]), ["Password", "I accept the terms"]);
        assert_eq!(strings(&data["unmatched"]), ["Favourite colour"]);
        assert_eq!(data["pendingSubmit"], false);
        assert!(status_text(&first).contains("Password"), "{}", status_text(&first));
        assert_eq!(field(&data, "Country")["value"], "nz");
        assert_eq!(field(&data, "Topics")["value"], json!(["news", "offers"]));
        // Both artifacts say they hold website text.
        for artifact in first["task"]["artifacts"].as_array().expect("artifacts") {
            assert_eq!(artifact["metadata"]["untrusted"], true, "{artifact}");
        }
        assert!(site.submissions().is_empty());

        // Turn 2, same task: the rest, and the agent asks before submitting.
        let task = task_id(&first);
        let second = server
            .send(
                "c3",
                Some(&task),
                json!({"values": {"Password": "correct horse", "I accept the terms": true}, "submit": true}),
            )
            .await;
        assert_eq!(state(&second), "TASK_STATE_INPUT_REQUIRED", "{second}");
        let data = report(&second);
        assert_eq!(data["pendingSubmit"], true);
        assert!(strings(&data["missing"]).is_empty());
        assert_eq!(field(&data, "Password")["value"], "••••••", "passwords are masked");
        assert!(status_text(&second).contains("confirm"));
        assert!(site.submissions().is_empty(), "nothing submitted before confirm");

        // Turn 3: confirm.
        let third = server.send("c3", Some(&task), json!({"confirm": true})).await;
        assert_eq!(state(&third), "TASK_STATE_COMPLETED", "{third}");
        let data = report(&third);
        assert_eq!(data["submitted"], true);
        assert_eq!(data["outcome"]["title"], "Thank you");
        assert_eq!(data["outcome"]["httpStatus"], 200);
        // The same URL again opens the form again (the page had moved on to "Thank you").
        let again = server.send("c3", None, json!({"url": url})).await;
        assert_eq!(state(&again), "TASK_STATE_COMPLETED", "{again}");
        assert_eq!(report(&again)["title"], "Sign up", "{again}");
        assert_eq!(field(&report(&again), "Full name")["value"], "");
        // The browser's own background services never show up as the page's refusals (they
        // go to the browser-wide sink, not the conversation's proxy).
        for turn in [&first, &second, &third] {
            let blocked = report(turn)["blocked"].to_string();
            for background in ["accounts.google.com", "android.clients.google.com", "clients2.google.com"] {
                assert!(!blocked.contains(background), "{blocked}");
            }
        }
        let got = submitted(&site);
        for (name, value) in [
            ("csrf", "abc123"),
            ("name", "Ada Lovelace"),
            ("email", "ada@example.com"),
            ("password", "correct horse"),
            ("country", "nz"),
            ("plan", "pro"),
            ("topics", "news"),
            ("topics", "offers"),
            ("terms", "accepted"),
        ] {
            assert!(
                got.contains(&(name.to_owned(), value.to_owned())),
                "{name}={value} not in {got:?}"
            );
        }
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspect_only_by_data_or_bare_url_and_chatter_gets_the_shape() {
    with_agent("agent::inspect", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/labels.html");
        let by_data = server.send("i1", None, json!({"url": url})).await;
        assert_eq!(state(&by_data), "TASK_STATE_COMPLETED", "{by_data}");
        let fields = report(&by_data)["fields"].as_array().expect("fields").len();
        assert!(fields >= 6, "{by_data}");
        let result_text = by_data["task"]["artifacts"][0]["parts"][0]["text"]
            .as_str()
            .expect("text artifact");
        assert!(result_text.contains("form 0"), "{result_text}");

        let by_text = server.send_text("i2", &url).await;
        assert_eq!(state(&by_text), "TASK_STATE_COMPLETED", "{by_text}");

        let chatter = server.send_text("i3", "hello, can you help me?").await;
        assert!(chatter.get("task").is_none(), "{chatter}");
        let text = chatter["message"]["parts"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.contains("\"values\""), "{text}");

        let bad = server
            .send_raw("i4", None, json!({"url": url, "sumbit": true}))
            .await;
        assert_eq!(bad["error"]["code"], -32602, "{bad}");
        assert!(
            bad["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains("sumbit")
        );
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_forms_pick_by_keys_index_or_selector() {
    with_agent("agent::two_forms", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/two-forms.html");
        // Username + Password fit only the login form.
        let login = server
            .send("f1", None, json!({"url": url, "values": {"Username": "ada", "Password": "pw"}}))
            .await;
        assert_eq!(state(&login), "TASK_STATE_COMPLETED", "{login}");
        let data = report(&login);
        assert_eq!(data["forms"].as_array().map(Vec::len), Some(2));
        assert!(data["fields"].as_array().expect("f").iter().all(|f| f["form"] == 0));

        // "form" by selector, then submit with confirm up front.
        let newsletter = server
            .send(
                "f2",
                None,
                json!({"url": url, "form": "#newsletter", "values": {"Email": "ada@example.com"}, "submit": true, "confirm": true}),
            )
            .await;
        assert_eq!(state(&newsletter), "TASK_STATE_COMPLETED", "{newsletter}");
        let got = submitted(&site);
        assert!(got.contains(&("email".into(), "ada@example.com".into())), "{got:?}");
        let path = site.requests().iter().rev().find(|r| r.method == "POST").map(|r| r.path.clone());
        assert_eq!(path.as_deref(), Some("/submit?form=newsletter"));

        let missing_form = server.send("f3", None, json!({"url": url, "form": 7})).await;
        assert_eq!(state(&missing_form), "TASK_STATE_INPUT_REQUIRED");
        assert!(status_text(&missing_form).contains("no form 7"));
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_inside_a_cross_origin_iframe_is_filled_and_submitted() {
    with_agent("agent::oopif", shop_config, |site, server| async move {
        let inner = site.url("other.test", "/signup.html");
        let url = format!("{}?frame={}", site.url("shop.test", "/frame.html"), inner);
        let result = server
            .send(
                "x1",
                None,
                json!({"url": url, "values": {
                    "Full name": "Ada", "Email": "ada@example.com", "Password": "pw123456",
                    "I accept the terms": true
                }, "submit": true, "confirm": true}),
            )
            .await;
        assert_eq!(state(&result), "TASK_STATE_COMPLETED", "{result}");
        // Every key went to the form in the frame.
        assert_eq!(
            report(&result)["filled"].as_array().map(Vec::len),
            Some(4),
            "{result}"
        );
        let got = submitted(&site);
        assert!(
            got.contains(&("name".into(), "Ada".into())),
            "{got:?} {result}"
        );
        let post = site
            .requests()
            .into_iter()
            .find(|r| r.method == "POST")
            .expect("a POST");
        assert_eq!(post.host, "other.test");
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controlled_inputs_and_typed_only_widgets_take_the_values() {
    with_agent("agent::controlled", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/controlled.html");
        let result = server
            .send(
                "r1",
                None,
                json!({"url": url, "values": {"Full name": "Grace Hopper", "Email": "grace@example.com", "Coupon": "SAVE10"}, "submit": true, "confirm": true}),
            )
            .await;
        assert_eq!(state(&result), "TASK_STATE_COMPLETED", "{result}");
        let data = report(&result);
        assert!(data["fieldErrors"].as_object().is_none_or(|m| m.is_empty()), "{data}");
        assert_eq!(field(&data, "Coupon")["value"], "SAVE10", "typed with Input.insertText");
        let got = submitted(&site);
        assert!(got.contains(&("name".into(), "Grace Hopper".into())), "{got:?}");
        assert!(got.contains(&("email".into(), "grace@example.com".into())), "{got:?}");
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_side_validation_after_submit_asks_again() {
    with_agent("agent::jsvalidate", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/jsvalidate.html");
        let result = server
            .send(
                "v1",
                None,
                json!({"url": url, "values": {"Email": "not-an-email", "Password": "short"}, "submit": true, "confirm": true}),
            )
            .await;
        assert_eq!(state(&result), "TASK_STATE_INPUT_REQUIRED", "{result}");
        let errors = report(&result)["fieldErrors"].to_string();
        assert!(errors.contains("Enter a valid email address"), "{errors}");
        assert!(errors.contains("too short"), "{errors}");
        assert!(site.submissions().is_empty());
        // Fix it in the same conversation; the form is still open.
        let task = task_id(&result);
        let fixed = server
            .send(
                "v1",
                Some(&task),
                json!({"values": {"Email": "ada@example.com", "Password": "long enough", "terms": true}, "submit": true, "confirm": true}),
            )
            .await;
        assert_eq!(state(&fixed), "TASK_STATE_COMPLETED", "{fixed}");
        assert_eq!(site.submissions().len(), 1);
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_constraints_are_reported_as_field_errors() {
    with_agent(
        "agent::constraints",
        shop_config,
        |site, server| async move {
            let url = site.url("shop.test", "/constraints.html");
            let result = server
                .send(
                    "n1",
                    None,
                    json!({"url": url, "values": {"Age": "12", "Phone": "abc"}, "submit": true}),
                )
                .await;
            assert_eq!(state(&result), "TASK_STATE_INPUT_REQUIRED", "{result}");
            let errors = report(&result)["fieldErrors"].clone();
            assert!(
                errors["Age"].as_str().is_some_and(|e| e.contains("18")),
                "{errors}"
            );
            assert!(errors["Phone"].as_str().is_some(), "{errors}");
            assert_eq!(report(&result)["pendingSubmit"], false);
            server
        },
    )
    .await;
}

fn upload_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/site/files")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_need_an_upload_dir_and_stay_inside_it() {
    with_agent(
        "agent::upload_refused",
        shop_config,
        |site, server| async move {
            let url = site.url("shop.test", "/upload.html");
            let result = server
                .send(
                    "u1",
                    None,
                    json!({"url": url, "values": {"Your CV": "cv.pdf"}}),
                )
                .await;
            assert_eq!(state(&result), "TASK_STATE_INPUT_REQUIRED", "{result}");
            let errors = report(&result)["fieldErrors"].to_string();
            assert!(errors.contains("uploads are disabled"), "{errors}");
            server
        },
    )
    .await;
    with_agent(
        "agent::upload",
        |site| FormsConfig {
            upload_dir: Some(upload_dir()),
            ..shop_config(site)
        },
        |site, server| async move {
            let url = site.url("shop.test", "/upload.html");
            let escape = server
                .send("u2", None, json!({"url": url, "values": {"Your CV": "../upload.html"}}))
                .await;
            assert_eq!(state(&escape), "TASK_STATE_INPUT_REQUIRED", "{escape}");
            let result = server
                .send(
                    "u3",
                    None,
                    json!({"url": url, "values": {"Title": "Application", "Your CV": "cv.pdf"}, "submit": true, "confirm": true}),
                )
                .await;
            assert_eq!(state(&result), "TASK_STATE_COMPLETED", "{result}");
            let got = submitted(&site);
            assert!(got.contains(&("cv".into(), "cv.pdf".into())), "{got:?}");
            server
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_submit_skips_the_confirmation() {
    with_agent(
        "agent::auto_submit",
        |site| FormsConfig {
            auto_submit: true,
            ..shop_config(site)
        },
        |site, server| async move {
            let url = site.url("shop.test", "/two-forms.html");
            let result = server
                .send("a1", None, json!({"url": url, "form": 1, "values": {"Email": "a@b.example"}, "submit": true}))
                .await;
            assert_eq!(state(&result), "TASK_STATE_COMPLETED", "{result}");
            assert_eq!(site.submissions().len(), 1);
            server
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_and_form_posts_to_disallowed_hosts_fail_and_say_why() {
    with_agent("agent::blocked", shop_config, |site, server| async move {
        let result = server
            .send(
                "b1",
                None,
                json!({"url": site.url("evil.test", "/signup.html")}),
            )
            .await;
        assert_eq!(state(&result), "TASK_STATE_FAILED", "{result}");
        assert!(
            status_text(&result).contains("not on the allowlist"),
            "{}",
            status_text(&result)
        );
        // A redirect off the allowlist is caught by the proxy.
        let target = site.url("evil.test", "/signup.html");
        let redirect = site.url("shop.test", &format!("/redirect?to={target}"));
        let result = server.send("b2", None, json!({"url": redirect})).await;
        assert_eq!(state(&result), "TASK_STATE_FAILED", "{result}");
        assert!(
            status_text(&result).contains("blocked"),
            "{}",
            status_text(&result)
        );
        assert!(site.requests_for("evil.test").is_empty());
        // A page that is not there says so.
        let missing = server
            .send(
                "b3",
                None,
                json!({"url": site.url("shop.test", "/no-such-page.html")}),
            )
            .await;
        assert_eq!(state(&missing), "TASK_STATE_FAILED", "{missing}");
        assert!(
            status_text(&missing).contains("HTTP 404"),
            "{}",
            status_text(&missing)
        );
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_drops_a_pending_submit_but_keeps_the_page() {
    with_agent("agent::cancel", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/two-forms.html");
        let first = server
            .send(
                "k1",
                None,
                json!({"url": url, "form": 1, "values": {"Email": "a@b.example"}, "submit": true}),
            )
            .await;
        assert_eq!(report(&first)["pendingSubmit"], true, "{first}");
        let task = task_id(&first);
        let canceled = server.rpc("CancelTask", json!({"id": task})).await;
        assert_eq!(
            canceled["result"]["status"]["state"], "TASK_STATE_CANCELED",
            "{canceled}"
        );
        // A confirm in a new task of the same conversation finds nothing to submit…
        let confirm = server.send("k1", None, json!({"confirm": true})).await;
        assert_eq!(state(&confirm), "TASK_STATE_INPUT_REQUIRED", "{confirm}");
        assert!(status_text(&confirm).contains("Nothing is waiting"));
        assert!(site.submissions().is_empty());
        // …but the page and its values are still there.
        let email = field(&report(&confirm), "Email")["value"].clone();
        assert_eq!(email, "a@b.example");
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readiness_probe_says_whether_a_browser_can_be_found() {
    let missing = FormsServer::start(FormsConfig {
        chrome_path: Some(PathBuf::from("/nonexistent/chromium")),
        ..FormsConfig::default()
    })
    .await;
    let status = reqwest::get(missing.url("/readyz"))
        .await
        .expect("readyz")
        .status();
    assert_eq!(status.as_u16(), 503, "no browser, not ready");
    if chromium_or_skip("agent::readiness") {
        let present = FormsServer::start(FormsConfig::default()).await;
        let status = reqwest::get(present.url("/readyz"))
            .await
            .expect("readyz")
            .status();
        assert_eq!(status.as_u16(), 200);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rich_text_fields_are_typed_into() {
    with_agent("agent::editor", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/editor.html");
        let first = server.send("e1", None, json!({"url": url})).await;
        let data = report(&first);
        let editor = field(&data, "Your message");
        assert_eq!(editor["type"], "contenteditable", "{data}");
        assert_eq!(editor["required"], true);
        let result = server
            .send(
                "e1",
                None,
                json!({"values": {"Subject": "Hello", "Your message": "Dear team,\nplease call back."}, "submit": true, "confirm": true}),
            )
            .await;
        assert_eq!(state(&result), "TASK_STATE_COMPLETED", "{result}");
        let got = submitted(&site);
        assert!(got.contains(&("subject".into(), "Hello".into())), "{got:?}");
        let message = got.iter().find(|(k, _)| k == "message").map(|(_, v)| v.clone());
        assert_eq!(
            message.as_deref().map(|m| m.split_whitespace().collect::<Vec<_>>().join(" ")),
            Some("Dear team, please call back.".to_owned()),
            "{got:?}"
        );
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aria_comboboxes_are_opened_typed_into_and_picked_from() {
    with_agent("agent::combobox", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/combobox.html");
        let first = server.send("cb", None, json!({"url": url})).await;
        let data = report(&first);
        assert_eq!(field(&data, "Country")["type"], "combobox", "{data}");
        let size = field(&data, "Size");
        assert_eq!(size["type"], "combobox");
        assert_eq!(size["options"], json!(["Small", "Medium", "Large"]), "{size}");

        // An option that is not there is a field error naming the choices.
        let wrong = server
            .send("cb", None, json!({"values": {"Size": "XXL"}}))
            .await;
        let errors = report(&wrong)["fieldErrors"].to_string();
        assert!(errors.contains("no option") && errors.contains("Medium"), "{errors}");

        let result = server
            .send(
                "cb",
                None,
                json!({"values": {"Country": "New Zealand", "Size": "medium", "City": "Wellington"}, "submit": true, "confirm": true}),
            )
            .await;
        assert_eq!(state(&result), "TASK_STATE_COMPLETED", "{result}");
        let got = submitted(&site);
        for (name, value) in [("country_code", "nz"), ("size", "m"), ("city", "Wellington")] {
            assert!(
                got.contains(&(name.to_owned(), value.to_owned())),
                "{name}={value} not in {got:?}"
            );
        }
        server
    })
    .await;
}
