//! Pages nobody on this project wrote: demo and example pages shipped in npm packages of
//! form libraries and design systems (`scripts/third-party-forms.sh` fetches them;
//! `scripts/test.sh` exports their directory as `FERRY_THIRD_PARTY_FORMS`). Without them the
//! tests skip loudly, and fail under `CI=true`.
//!
//! | page | what is checked |
//! |---|---|
//! | jquery-validation 1.13.1 `demo/index.html` | a group of checkboxes disabled until "I'd like to receive the newsletter" is ticked: a value for the group ticks it first, and says so |
//! | govuk-frontend 6.6.0 date input (its template, wrapped in a page) | a date asked in parts, given part by part ("Day", "Month", "Year") |
//! | nhsuk-frontend 10.6.1 date input (its fixture, wrapped) | the same, as one value |
//! | jquery-validation 1.13.1 `demo/multipart`, `demo/milk`; parsleyjs 2.6.0 `simple.html`; formvalidation 0.6.2 `demo/index.html`; foundation-sites 6.9.0 customizer; nhsuk-frontend and govuk-frontend checkboxes (wrapped) | a group's question as a person reads it: a `<label>` that names no control before the radios (inside a fieldset whose legend names a section), in the table cell left of a nested table of options, beside a Bootstrap column, a legend holding a heading over a conditional reveal |

use crate::agent::{field, shop_config, strings};
use crate::support::agent::{FormsServer, report};
use crate::support::site::TestSite;
use crate::support::{bounded, chromium_or_skip};
use serde_json::{Value, json};
use std::path::PathBuf;

/// The fetched pages, or `None` after a loud skip (a failure in CI).
fn pages(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("FERRY_THIRD_PARTY_FORMS").map(PathBuf::from);
    let missing = match &dir {
        Some(dir) if dir.join("_pages").is_dir() => None,
        Some(dir) => Some(format!("{} holds no fetched pages", dir.display())),
        None => Some(
            "FERRY_THIRD_PARTY_FORMS is not set (scripts/test.sh fetches the pages with scripts/third-party-forms.sh)"
                .to_owned(),
        ),
    };
    ferry_testkit::required_or_skip(test, missing)
        .then_some(dir)
        .flatten()
}

/// Runs `body` with the third-party pages served and a forms agent, when both are here.
pub(crate) async fn with_pages<F, Fut>(test: &str, body: F)
where
    F: FnOnce(TestSite, FormsServer) -> Fut,
    Fut: Future<Output = FormsServer>,
{
    let Some(root) = pages(test) else {
        return;
    };
    if !chromium_or_skip(test) {
        return;
    }
    bounded(async {
        let site = TestSite::start_in(root).await;
        // Uploads come from the test site's files (the drop zone's case).
        let config = ferry_forms::FormsConfig {
            upload_dir: Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/site/files")),
            ..shop_config(&site)
        };
        let server = FormsServer::start(config).await;
        let server = body(site, server).await;
        server.agent().pool().shutdown().await;
    })
    .await;
}

/// One turn on `path` of the site with `values`; the report.
pub(crate) async fn fill(
    server: &FormsServer,
    site: &TestSite,
    context: &str,
    path: &str,
    values: Value,
) -> Value {
    let url = site.url("shop.test", path);
    let answer = server
        .send(context, None, json!({"url": url, "values": values}))
        .await;
    report(&answer)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_disabled_until_a_box_is_ticked_is_enabled_by_ticking_it() {
    with_pages(
        "third_party::enabled_by_ticking",
        |site, server| async move {
            let data = fill(
                &server,
                &site,
                "jqv-newsletter",
                "/jquery-validation/demo/index.html",
                json!({"Topics": ["Marketflash", "Latest fuzz"]}),
            )
            .await;
            assert!(strings(&data["unmatched"]).is_empty(), "{data}");
            assert!(
                data["fieldErrors"]
                    .as_object()
                    .is_some_and(|e| e.is_empty()),
                "{data}"
            );
            let topics = data["fields"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|f| f["label"].as_str().is_some_and(|l| l.starts_with("Topics")))
                .unwrap_or_else(|| panic!("no Topics group: {data}"));
            assert_eq!(topics["value"], json!(["marketflash", "fuzz"]), "{topics}");
            let newsletter = field(&data, "I'd like to receive the newsletter");
            assert_eq!(
                newsletter["value"], true,
                "the enabling box is ticked: {newsletter}"
            );
            let warnings = strings(&data["warnings"]).join("\n");
            assert!(
                warnings.contains("ticked \"I'd like to receive the newsletter\" first"),
                "{warnings}"
            );
            server
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn design_system_dates_in_parts_take_parts_or_a_whole_date() {
    with_pages("third_party::dates", |site, server| async move {
        let govuk = fill(
            &server,
            &site,
            "govuk-date",
            "/_pages/govuk-date-input.html",
            json!({"Day": "31", "Month": "3", "Year": "1980"}),
        )
        .await;
        assert!(strings(&govuk["unmatched"]).is_empty(), "{govuk}");
        assert_eq!(
            field(&govuk, "What is your date of birth?")["value"],
            "1980-03-31",
            "{govuk}"
        );
        let nhs = fill(
            &server,
            &site,
            "nhs-date",
            "/_pages/nhsuk-date-input.html",
            json!({"What is your date of birth?": "31/03/1980"}),
        )
        .await;
        assert!(strings(&nhs["unmatched"]).is_empty(), "{nhs}");
        assert_eq!(
            field(&nhs, "What is your date of birth?")["value"],
            "1980-03-31",
            "{nhs}"
        );
        server
    })
    .await;
}

/// The question of each radio or checkbox group a look at `path` reports.
async fn group_questions(server: &FormsServer, site: &TestSite, path: &str) -> Vec<String> {
    let url = site.url("shop.test", path);
    // One conversation for every look (a look with a URL opens it in the same session).
    let data = report(&server.send("looks", None, json!({"url": url})).await);
    data["fields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["type"] == "radio" || f["type"] == "checkbox-group")
        .filter_map(|f| f["label"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_questions_on_library_demo_pages_are_read_as_people_read_them() {
    with_pages("third_party::group_questions", |site, server| async move {
        for (path, question) in [
            (
                "/jquery-validation/demo/multipart/index.html",
                "Are you currently working with a real estate agent?",
            ),
            (
                "/jquery-validation/demo/milk/index.html",
                "Which Looks Right",
            ),
            ("/parsleyjs/doc/examples/simple.html", "Gender"),
            (
                "/parsleyjs/doc/examples/simple.html",
                "Hobbies (Optional, but 2 minimum)",
            ),
            ("/formvalidation/demo/index.html", "Gender"),
            (
                "/foundation-sites/customizer/index.html",
                "Choose Your Favorite",
            ),
            (
                "/_pages/nhsuk-checkboxes-conditional.html",
                "How do you want to be contacted about this?",
            ),
            (
                "/_pages/govuk-checkboxes-legend-heading.html",
                "Which types of waste do you transport regularly?",
            ),
        ] {
            let questions = group_questions(&server, &site, path).await;
            assert!(
                questions.iter().any(|q| q == question),
                "{path}: {questions:?}"
            );
        }
        server
    })
    .await;
}
