//! `inspect.js` against real pages in headless Chromium.
//!
//! The script is evaluated in the page's main world here (the isolated world is wired by the
//! agent); every `inspect()` result is also checked against the serde structs of
//! `ferry_forms::snapshot`: deserialising and serialising again must give the same JSON.

use crate::support::site::TestSite;
use crate::support::{TEST_TIMEOUT, chromium_or_skip};
use ferry_browser::{Browser, BrowserContext, LaunchOptions, Page};
use ferry_forms::INSPECT_JS;
use ferry_forms::snapshot::{
    FieldInfo, FieldValue, FillOutcome, LabelSource, PageSnapshot, SubmitOutcome,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::future::Future;
use std::time::Duration;

const NAVIGATION_TIMEOUT: Duration = Duration::from_secs(15);

/// One browser, one context and the test site, shared by the pages of one test.
struct Harness {
    site: TestSite,
    // Declared before the browser so it is dropped (disposed) first.
    context: BrowserContext,
    browser: Browser,
}

impl Harness {
    async fn start() -> Harness {
        let site = TestSite::start().await;
        let browser = Browser::launch(LaunchOptions::default())
            .await
            .expect("launch chromium");
        let context = browser.new_context().await.expect("new context");
        Harness {
            site,
            context,
            browser,
        }
    }

    fn url(&self, path: &str) -> String {
        self.site.url("127.0.0.1", path)
    }

    /// A new page at `path` with the script loaded.
    async fn open(&self, path: &str) -> Page {
        let page = self.context.new_page().await.expect("new page");
        page.navigate(&self.url(path), NAVIGATION_TIMEOUT)
            .await
            .unwrap_or_else(|e| panic!("navigate to {path}: {e}"));
        load_script(&page).await;
        page
    }

    async fn finish(self) {
        let Harness {
            site,
            context,
            browser,
        } = self;
        let _ = context.dispose().await;
        browser.shutdown().await;
        drop(site);
    }
}

/// Runs a test body with a fresh harness, within the test timeout.
async fn with_harness<F, Fut>(name: &str, body: F)
where
    F: FnOnce(Harness) -> Fut,
    Fut: Future<Output = Harness>,
{
    if !chromium_or_skip(name) {
        return;
    }
    tokio::time::timeout(TEST_TIMEOUT, async {
        let harness = Harness::start().await;
        body(harness).await.finish().await;
    })
    .await
    .unwrap_or_else(|_| panic!("{name} timed out"));
}

async fn load_script(page: &Page) {
    let defined = page
        .evaluate(INSPECT_JS)
        .await
        .expect("evaluate inspect.js");
    assert_eq!(defined, json!(true), "inspect.js evaluates to true");
}

async fn eval<T: DeserializeOwned>(page: &Page, expression: &str) -> T {
    let value = page
        .evaluate(expression)
        .await
        .unwrap_or_else(|e| panic!("evaluate {expression}: {e}"));
    serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("{expression} gave {value}: {e}"))
}

/// `inspect()`, checked against the serde contract.
async fn inspect(page: &Page) -> PageSnapshot {
    let raw = page
        .evaluate("__ferryForms.inspect()")
        .await
        .expect("inspect()");
    let snapshot: PageSnapshot = serde_json::from_value(raw.clone())
        .unwrap_or_else(|e| panic!("inspect() does not match PageSnapshot: {e}\n{raw:#}"));
    let again = serde_json::to_value(&snapshot).expect("serialize");
    assert_eq!(
        again, raw,
        "inspect() JSON has keys or shapes the serde structs do not"
    );
    snapshot
}

async fn fill(page: &Page, assignments: Value) -> Vec<FillOutcome> {
    eval(page, &format!("__ferryForms.fill({assignments})")).await
}

async fn fill_one(page: &Page, field: &FieldInfo, value: Value) -> FillOutcome {
    let mut outcomes = fill(page, json!([{ "ref": field.reference, "value": value }])).await;
    assert_eq!(outcomes.len(), 1);
    outcomes.remove(0)
}

async fn submit(page: &Page, form: usize) -> SubmitOutcome {
    eval(page, &format!("__ferryForms.submit({form})")).await
}

/// Polls `check` until it is true (or panics after 10 s).
async fn wait_for<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until the page's title is `title` (a navigation may be under way).
async fn wait_for_title(page: &Page, title: &str) {
    wait_for(&format!("title {title:?}"), || async {
        page.evaluate("document.title")
            .await
            .is_ok_and(|t| t == title)
    })
    .await;
}

/// Types `text` into the focused element with CDP `Input.insertText` (trusted events).
async fn insert_text(h: &Harness, page: &Page, text: &str) {
    h.browser
        .cdp()
        .call(
            "Input.insertText",
            json!({ "text": text }),
            Some(page.session_id()),
        )
        .await
        .expect("Input.insertText");
}

fn field<'a>(snapshot: &'a PageSnapshot, label: &str) -> &'a FieldInfo {
    snapshot
        .fields
        .iter()
        .find(|f| f.label == label)
        .unwrap_or_else(|| {
            let labels: Vec<&str> = snapshot.fields.iter().map(|f| f.label.as_str()).collect();
            panic!("no field labelled {label:?}; labels: {labels:?}")
        })
}

fn by_name<'a>(snapshot: &'a PageSnapshot, name: &str) -> &'a FieldInfo {
    snapshot
        .fields
        .iter()
        .find(|f| f.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no field named {name:?}"))
}

fn sources(field: &FieldInfo) -> Vec<(LabelSource, &str)> {
    field
        .labels
        .iter()
        .map(|c| (c.source, c.text.as_str()))
        .collect()
}

fn text(value: &str) -> FieldValue {
    FieldValue::Text(value.to_owned())
}

fn list(values: &[&str]) -> FieldValue {
    FieldValue::List(values.iter().map(|v| (*v).to_owned()).collect())
}

fn fields_of(submission: &[(String, String)]) -> Vec<(&str, &str)> {
    submission
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labels_come_from_every_source() {
    with_harness("labels_come_from_every_source", |h| async move {
        let page = h.open("/labels.html").await;
        let snap = inspect(&page).await;
        assert_eq!(snap.title, "Labels");
        assert!(snap.url.ends_with("/labels.html"));
        assert_eq!(snap.forms.len(), 1);
        assert_eq!(snap.forms[0].id.as_deref(), Some("labels"));
        assert_eq!(snap.forms[0].method, "post");
        assert_eq!(snap.forms[0].action, h.url("/submit"));
        assert_eq!(snap.forms[0].submit_labels, vec!["Save"]);
        assert_eq!(snap.forms[0].field_count, snap.fields.len());
        assert!(snap.text.starts_with("Label sources"), "{}", snap.text);

        let first = by_name(&snap, "first_name");
        assert_eq!(first.label, "First name", "trailing * stripped");
        assert_eq!(first.labels[0].source, LabelSource::Label);
        assert_eq!(
            sources(by_name(&snap, "last_name"))[0],
            (LabelSource::Label, "Last name")
        );
        // the wrapping label does not absorb the option texts
        let country = by_name(&snap, "country");
        assert_eq!(country.label, "Country");
        assert_eq!(country.kind, "select-one");
        assert_eq!(
            sources(by_name(&snap, "company"))[0],
            (LabelSource::AriaLabel, "Company name")
        );
        assert_eq!(
            sources(by_name(&snap, "city"))[0],
            (LabelSource::AriaLabelledby, "City of residence")
        );
        assert_eq!(
            sources(by_name(&snap, "search_term"))[0],
            (LabelSource::Placeholder, "Search the catalogue")
        );
        assert_eq!(
            sources(by_name(&snap, "nick"))[0],
            (LabelSource::Title, "Nickname")
        );
        assert_eq!(by_name(&snap, "only_a_name").label, "only_a_name");
        let only_id = snap
            .fields
            .iter()
            .find(|f| f.id.as_deref() == Some("only-an-id"))
            .expect("id-only field");
        assert_eq!(
            sources(only_id),
            vec![(LabelSource::Id, "only-an-id")],
            "an id-only field"
        );
        assert_eq!(
            sources(by_name(&snap, "both")),
            vec![
                (LabelSource::AriaLabel, "Aria text"),
                (LabelSource::Label, "Label text"),
                (LabelSource::Title, "Title text"),
                (LabelSource::Placeholder, "Placeholder text"),
                (LabelSource::Name, "both"),
                (LabelSource::Id, "both"),
            ],
            "every candidate, strongest first"
        );
        h
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preceding_text_and_shadow_roots() {
    with_harness("preceding_text_and_shadow_roots", |h| async move {
        let page = h.open("/preceding.html").await;
        let snap = inspect(&page).await;
        for (name, label) in [
            ("f1", "Email address"),
            ("f2", "Telephone"),
            ("f3", "Street"),
            ("f4", "Postcode"),
            ("f5", "Favourite book"),
            ("f6", "Town"),
        ] {
            let f = by_name(&snap, name);
            assert_eq!(
                f.labels[0].source,
                LabelSource::Text,
                "{name}: {:?}",
                f.labels
            );
            assert_eq!(f.label, label, "{name}");
        }
        let contact = by_name(&snap, "contact");
        assert_eq!(contact.kind, "radio");
        assert_eq!(contact.label, "Preferred contact");
        let labels: Vec<&str> = contact.options.iter().map(|o| o.label.as_str()).collect();
        assert_eq!(labels, ["Mail", "Phone"]);

        let page = h.open("/shadow.html").await;
        let snap = inspect(&page).await;
        let inner = field(&snap, "Shadow field");
        assert_eq!(inner.form, None);
        assert_eq!(field(&snap, "Light field").form, Some(0));
        assert!(
            fill_one(&page, inner, json!("deep")).await.ok,
            "fill inside an open shadow root"
        );
        let value: String = eval(
            &page,
            "document.getElementById('host').shadowRoot.getElementById('inner').value",
        )
        .await;
        assert_eq!(value, "deep");
        h
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selects_groups_and_their_options() {
    with_harness("selects_groups_and_their_options", |h| async move {
        let page = h.open("/select.html").await;
        let snap = inspect(&page).await;
        let car = field(&snap, "Car");
        assert_eq!(car.kind, "select-one");
        assert!(car.required && car.empty);
        assert_eq!(car.value, text(""));
        assert_eq!(car.options.len(), 5);
        assert_eq!(car.options[1].group.as_deref(), Some("Swedish cars"));
        assert_eq!(car.options[3].label, "Mercedes");
        assert_eq!(car.options[3].group.as_deref(), Some("German cars"));
        assert!(car.options[4].disabled);
        assert!(car.options[0].group.is_none());
        let langs = field(&snap, "Languages");
        assert_eq!(langs.kind, "select-multiple");
        assert!(langs.constraints.multiple);
        assert_eq!(langs.value, list(&["en"]));
        let browser = field(&snap, "Browser");
        let suggestions: Vec<&str> = browser.options.iter().map(|o| o.value.as_str()).collect();
        assert_eq!(suggestions, ["Chromium", "Firefox"]);

        let outcomes = fill(
            &page,
            json!([
                { "ref": car.reference, "value": "mercedes" },
                { "ref": langs.reference, "value": ["French", "de"] },
            ]),
        )
        .await;
        assert!(outcomes.iter().all(|o| o.ok), "{outcomes:?}");
        for (want, expected) in [("saab", "saab"), ("VOLVO", "volvo"), ("Merc", "mercedes")] {
            let outcome = fill_one(&page, car, json!(want)).await;
            assert!(outcome.ok, "{want}: {outcome:?}");
            let now: String = eval(&page, "document.getElementById('car').value").await;
            assert_eq!(now, expected, "{want}");
        }
        let unknown = fill_one(&page, car, json!("Tesla")).await;
        assert!(!unknown.ok);
        assert_eq!(
            unknown.error.as_deref(),
            Some("no option \"Tesla\" (options: Pick a car, Volvo, Saab, Mercedes, Audi)")
        );
        assert!(
            !fill_one(&page, car, json!("audi")).await.ok,
            "disabled option"
        );
        let snap = inspect(&page).await;
        assert_eq!(field(&snap, "Car").value, text("mercedes"));
        assert_eq!(field(&snap, "Languages").value, list(&["fr", "de"]));

        let page = h.open("/groups.html").await;
        let snap = inspect(&page).await;
        let plan = field(&snap, "Plan");
        assert_eq!(plan.kind, "radio");
        assert_eq!(plan.tag, "input");
        assert_eq!(plan.labels[0].source, LabelSource::Legend);
        assert!(plan.required && plan.empty);
        let plan_labels: Vec<&str> = plan.options.iter().map(|o| o.label.as_str()).collect();
        assert_eq!(plan_labels, ["Free", "Professional", "Team"]);
        let interests = field(&snap, "Interests");
        assert_eq!(interests.kind, "checkbox-group");
        assert_eq!(interests.value, list(&["web"]));
        let size = field(&snap, "Size");
        assert_eq!(size.kind, "radio");
        assert_eq!(size.value, text("M"));
        assert!(size.options[2].disabled);
        let terms = field(&snap, "I accept the terms");
        assert_eq!(terms.kind, "checkbox");
        assert_eq!(terms.value, FieldValue::Bool(false));
        assert!(terms.required && terms.empty);
        assert_eq!(snap.fields.len(), 4, "groups are one field each");

        let outcomes = fill(
            &page,
            json!([
                { "ref": plan.reference, "value": "professional" },
                { "ref": interests.reference, "value": ["Rust", "ai"] },
                { "ref": size.reference, "value": "small" },
                { "ref": terms.reference, "value": "yes" },
            ]),
        )
        .await;
        assert!(outcomes.iter().all(|o| o.ok), "{outcomes:?}");
        let disabled = fill_one(&page, size, json!("Large")).await;
        assert!(!disabled.ok && disabled.error.unwrap().contains("disabled"));
        let missing = fill_one(&page, plan, json!("Enterprise")).await;
        assert_eq!(
            missing.error.as_deref(),
            Some("no option \"Enterprise\" (options: Free, Professional, Team)")
        );
        let snap = inspect(&page).await;
        assert_eq!(field(&snap, "Plan").value, text("pro"));
        assert!(field(&snap, "Plan").valid);
        assert_eq!(field(&snap, "Interests").value, list(&["rust", "ai"]));
        assert_eq!(field(&snap, "Size").value, text("S"));
        assert_eq!(
            field(&snap, "I accept the terms").value,
            FieldValue::Bool(true)
        );
        let off = fill_one(&page, terms, json!(false)).await;
        assert!(off.ok);
        let bad = fill_one(&page, terms, json!("maybe")).await;
        assert!(!bad.ok);
        h
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn constraints_and_validity_after_fill() {
    with_harness("constraints_and_validity_after_fill", |h| async move {
        let page = h.open("/constraints.html").await;
        let snap = inspect(&page).await;
        let age = field(&snap, "Age");
        assert_eq!(age.kind, "number");
        assert_eq!(age.constraints.min.as_deref(), Some("18"));
        assert_eq!(age.constraints.max.as_deref(), Some("120"));
        assert_eq!(age.constraints.step.as_deref(), Some("1"));
        assert!(age.required);
        let phone = field(&snap, "Phone");
        assert_eq!(
            phone.constraints.pattern.as_deref(),
            Some("[0-9]{3}-[0-9]{4}")
        );
        assert_eq!(phone.constraints.autocomplete.as_deref(), Some("tel"));
        let user = field(&snap, "Username");
        assert_eq!(user.constraints.min_length, Some(3));
        assert_eq!(user.constraints.max_length, Some(12));
        assert!(field(&snap, "Email").required, "aria-required");
        let reference = field(&snap, "Reference");
        assert!(reference.read_only);
        assert_eq!(reference.value, text("REF-1"));
        let off = field(&snap, "Disabled by fieldset");
        assert!(off.disabled);
        // an untouched required field is invalid already
        assert!(!age.valid);
        assert!(age.validation_message.is_some());
        assert!(phone.valid && phone.validation_message.is_none());

        let outcomes = fill(
            &page,
            json!([
                { "ref": age.reference, "value": "15" },
                { "ref": phone.reference, "value": "12345" },
                { "ref": user.reference, "value": "bob" },
            ]),
        )
        .await;
        assert!(outcomes.iter().all(|o| o.ok), "{outcomes:?}");
        let snap = inspect(&page).await;
        let age = field(&snap, "Age");
        assert!(!age.valid);
        let message = age.validation_message.as_deref().unwrap_or_default();
        assert!(message.contains("18"), "{message}");
        let phone = field(&snap, "Phone");
        assert!(!phone.valid);
        assert!(phone.validation_message.is_some());
        assert!(field(&snap, "Username").valid);

        fill(
            &page,
            json!([
                { "ref": age.reference, "value": 30 },
                { "ref": phone.reference, "value": "555-1234" },
            ]),
        )
        .await;
        let snap = inspect(&page).await;
        assert!(field(&snap, "Age").valid);
        assert!(field(&snap, "Phone").valid);

        let read_only = fill_one(&page, reference, json!("x")).await;
        assert!(!read_only.ok && read_only.error.unwrap().contains("read-only"));
        let disabled = fill_one(&page, off, json!("x")).await;
        assert!(!disabled.ok && disabled.error.unwrap().contains("disabled"));
        let colour = fill_one(&page, field(&snap, "Colour"), json!("#FF0000")).await;
        assert!(colour.ok, "{colour:?}");
        let stale = fill(&page, json!([{ "ref": 999, "value": "x" }])).await;
        assert!(!stale[0].ok && stale[0].reference == 999);
        h
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_errors_after_a_failed_js_validated_submit() {
    with_harness(
        "custom_errors_after_a_failed_js_validated_submit",
        |h| async move {
            let page = h.open("/jsvalidate.html").await;
            let snap = inspect(&page).await;
            assert!(snap.forms[0].no_validate);
            assert!(snap.form_errors.is_empty(), "{:?}", snap.form_errors);
            assert!(snap.fields.iter().all(|f| f.error.is_none()));

            let email = field(&snap, "Email");
            assert_eq!(
                fill_one(&page, email, json!("not-an-email")).await,
                FillOutcome::success(email.reference)
            );
            let outcome = submit(&page, 0).await;
            assert!(outcome.ok);
            assert_eq!(outcome.method, "button");
            assert_eq!(outcome.button.as_deref(), Some("Create account"));

            let snap = inspect(&page).await;
            assert_eq!(
                field(&snap, "Email").error.as_deref(),
                Some("Enter a valid email address")
            );
            assert_eq!(
                field(&snap, "Password").error.as_deref(),
                Some("The password is too short"),
                "aria-describedby with aria-invalid"
            );
            assert_eq!(
                field(&snap, "I agree to the terms").error.as_deref(),
                Some("You must accept the terms")
            );
            assert_eq!(snap.form_errors, vec!["Please correct the errors below."]);
            assert!(
                h.site.submissions().is_empty(),
                "the page blocked the submit"
            );

            let outcomes = fill(
                &page,
                json!([
                    { "ref": field(&snap, "Email").reference, "value": "ann@example.com" },
                    { "ref": field(&snap, "Password").reference, "value": "correct horse" },
                    { "ref": field(&snap, "I agree to the terms").reference, "value": true },
                ]),
            )
            .await;
            assert!(outcomes.iter().all(|o| o.ok), "{outcomes:?}");
            assert!(submit(&page, 0).await.ok);
            wait_for_title(&page, "Thank you").await;
            let submissions = h.site.submissions();
            assert_eq!(submissions.len(), 1);
            assert_eq!(
                fields_of(&submissions[0]),
                vec![
                    ("email", "ann@example.com"),
                    ("password", "correct horse"),
                    ("terms", "on")
                ]
            );
            h
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controlled_inputs_see_native_setter_fills() {
    with_harness(
        "controlled_inputs_see_native_setter_fills",
        |h| async move {
            let page = h.open("/controlled.html").await;
            let page_ref = &page;
            let state = move || async move {
                eval::<String>(page_ref, "document.getElementById('state').textContent").await
            };

            // what a naive filler does: the page reverts it and keeps its state
            let value: String = eval(
                &page,
                "(() => { const el = document.getElementById('name'); el.value = 'Naive';
               el.dispatchEvent(new Event('input', { bubbles: true })); return el.value; })()",
            )
            .await;
            assert_eq!(value, "");
            assert_eq!(state().await, r#"{"name":"","email":"","note":""}"#);

            let snap = inspect(&page).await;
            let outcomes = fill(
                &page,
                json!([
                    { "ref": field(&snap, "Full name").reference, "value": "Ann Example" },
                    { "ref": field(&snap, "Email").reference, "value": "ann-at-example" },
                    { "ref": field(&snap, "Note").reference, "value": "line 1\nline 2" },
                ]),
            )
            .await;
            assert!(outcomes.iter().all(|o| o.ok), "{outcomes:?}");
            assert_eq!(
                state().await,
                r#"{"name":"Ann Example","email":"ann-at-example","note":"line 1\nline 2"}"#
            );

            // the page's own validation error after a blocked submit
            assert!(submit(&page, 0).await.ok);
            let snap = inspect(&page).await;
            assert_eq!(
                field(&snap, "Email").error,
                None,
                "the error is not next to the field"
            );
            assert!(snap.text.contains("Enter a valid email"));

            // the typed path: focus selects the content, Input.insertText replaces it
            let email = field(&snap, "Email");
            let focused: bool =
                eval(&page, &format!("__ferryForms.focus({})", email.reference)).await;
            assert!(focused);
            insert_text(&h, &page, "ann@example.com").await;
            let typed = fill(
                &page,
                json!([{ "ref": email.reference, "value": "ann@example.com", "typed": true }]),
            )
            .await;
            assert!(typed[0].ok, "{typed:?}");
            assert!(state().await.contains(r#""email":"ann@example.com""#));

            // a field that ignores synthetic input: the setter fails, typing works
            let coupon = field(&snap, "Coupon");
            let reset = fill_one(&page, coupon, json!("SAVE10")).await;
            assert_eq!(
                reset,
                FillOutcome {
                    retry_typing: true,
                    ..FillOutcome::failure(
                        coupon.reference,
                        "the page reset the value (it holds \"\")"
                    )
                }
            );
            let focused: bool =
                eval(&page, &format!("__ferryForms.focus({})", coupon.reference)).await;
            assert!(focused);
            insert_text(&h, &page, "SAVE10").await;
            let typed = fill(
                &page,
                json!([{ "ref": coupon.reference, "value": "SAVE10", "typed": true }]),
            )
            .await;
            assert!(typed[0].ok, "{typed:?}");
            let wrong = fill(
                &page,
                json!([{ "ref": coupon.reference, "value": "OTHER", "typed": true }]),
            )
            .await;
            assert!(!wrong[0].ok, "a typed value is verified: {wrong:?}");

            assert!(submit(&page, 0).await.ok);
            wait_for("the fetch POST", || async {
                !h.site.submissions().is_empty()
            })
            .await;
            assert_eq!(
                fields_of(&h.site.submissions()[0]),
                vec![
                    ("name", "Ann Example"),
                    ("email", "ann@example.com"),
                    ("note", "line 1\nline 2")
                ]
            );
            h
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_forms_on_one_page() {
    with_harness("two_forms_on_one_page", |h| async move {
        let page = h.open("/two-forms.html").await;
        let snap = inspect(&page).await;
        assert_eq!(snap.forms.len(), 2);
        let (login, newsletter) = (&snap.forms[0], &snap.forms[1]);
        assert_eq!(login.name.as_deref(), Some("login"));
        assert_eq!(login.submit_labels, vec!["Log in"]);
        assert_eq!(login.field_count, 2, "the hidden csrf field is skipped");
        assert_eq!(newsletter.index, 1);
        assert_eq!(
            newsletter.submit_labels,
            vec!["Subscribe"],
            "button linked by form="
        );
        assert_eq!(newsletter.field_count, 3);
        assert_eq!(newsletter.action, h.url("/submit?form=newsletter"));

        assert_eq!(field(&snap, "Username").form, Some(0));
        assert_eq!(field(&snap, "Email").form, Some(1));
        assert_eq!(field(&snap, "Search the site").form, None);
        assert_eq!(
            field(&snap, "Referral code").form,
            Some(1),
            "form= attribute"
        );
        let weekly = field(&snap, "Weekly digest");
        assert_eq!(weekly.kind, "checkbox");

        for (selector, index) in [
            ("'#login'", Some(0)),
            ("'#newsletter'", Some(1)),
            ("'#nl-email'", Some(1)),
            ("'#subscribe'", Some(1)),
            ("'#linked'", Some(1)),
            ("'#outside'", None),
            ("'#nothing'", None),
            ("'#['", None),
        ] {
            let got: Option<usize> =
                eval(&page, &format!("__ferryForms.formIndex({selector})")).await;
            assert_eq!(got, index, "{selector}");
        }

        let outcomes = fill(
            &page,
            json!([
                { "ref": field(&snap, "Email").reference, "value": "ann@example.com" },
                { "ref": weekly.reference, "value": true },
                { "ref": field(&snap, "Referral code").reference, "value": "FRIEND" },
                { "ref": field(&snap, "Username").reference, "value": "ann" },
            ]),
        )
        .await;
        assert!(outcomes.iter().all(|o| o.ok), "{outcomes:?}");
        let outcome = submit(&page, 1).await;
        assert_eq!(outcome.method, "button");
        assert_eq!(outcome.button.as_deref(), Some("Subscribe"));
        wait_for_title(&page, "Thank you").await;
        let posts: Vec<_> = h
            .site
            .requests_for("127.0.0.1")
            .into_iter()
            .filter(|r| r.method == "POST")
            .collect();
        assert_eq!(posts.len(), 1);
        assert_eq!(posts[0].path, "/submit?form=newsletter");
        assert_eq!(
            fields_of(&h.site.submissions()[0]),
            vec![
                ("email", "ann@example.com"),
                ("weekly", "yes"),
                ("referral", "FRIEND")
            ]
        );
        load_script(&page).await;
        let missing = submit(&page, 5).await;
        assert!(!missing.ok && missing.error.is_some());
        h
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submit_by_button_sends_every_field() {
    with_harness("submit_by_button_sends_every_field", |h| async move {
        let page = h.open("/signup.html").await;
        let snap = inspect(&page).await;
        // Only buttons a person could press; the hidden one is left out.
        assert_eq!(snap.forms[0].submit_labels, vec!["Create account"]);
        let values = [
            ("Full name", json!("Ann Example")),
            ("Email", json!("ann@example.com")),
            ("Password", json!("s3cret!")),
            ("Country", json!("New Zealand")),
            ("Plan", json!("pro")),
            ("Topics", json!(["News", "Offers"])),
            ("About you", json!("Hello,\nworld")),
            ("I accept the terms", json!(true)),
        ];
        let assignments: Vec<Value> = values
            .iter()
            .map(|(label, value)| json!({ "ref": field(&snap, label).reference, "value": value }))
            .collect();
        let outcomes = fill(&page, Value::Array(assignments)).await;
        assert!(outcomes.iter().all(|o| o.ok), "{outcomes:?}");
        let snap = inspect(&page).await;
        assert!(
            snap.fields.iter().all(|f| f.valid && !f.empty),
            "{:#?}",
            snap.fields
        );

        let outcome = submit(&page, 0).await;
        assert_eq!(
            outcome,
            SubmitOutcome {
                ok: true,
                method: "button".to_owned(),
                button: Some("Create account".to_owned()),
                error: None,
                dispatched: true,
                cancelled: false,
            },
            "the visible submit button, not the hidden one; the submit event fired, uncancelled"
        );
        wait_for_title(&page, "Thank you").await;
        let submissions = h.site.submissions();
        assert_eq!(submissions.len(), 1);
        assert_eq!(
            fields_of(&submissions[0]),
            vec![
                ("csrf", "abc123"),
                ("name", "Ann Example"),
                ("email", "ann@example.com"),
                ("password", "s3cret!"),
                ("country", "nz"),
                ("plan", "pro"),
                ("topics", "news"),
                ("topics", "offers"),
                ("bio", "Hello,\r\nworld"),
                ("terms", "accepted"),
                ("action", "create"),
            ]
        );
        load_script(&page).await;
        let after = inspect(&page).await;
        assert_eq!(after.title, "Thank you");
        assert!(after.text.contains("csrf"), "{}", after.text);
        h
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_submit_without_a_button() {
    with_harness("request_submit_without_a_button", |h| async move {
        let page = h.open("/select.html").await;
        eval::<Value>(
            &page,
            "document.querySelector('button').remove(); document.getElementById('car').value = 'saab'",
        )
        .await;
        let outcome = submit(&page, 0).await;
        assert_eq!(outcome.method, "requestSubmit");
        assert!(outcome.ok && outcome.button.is_none());
        wait_for_title(&page, "Thank you").await;
        assert_eq!(
            fields_of(&h.site.submissions()[0]),
            vec![("car", "saab"), ("langs", "en"), ("browser", "")]
        );

        // named controls shadow the form's own properties
        let page = h.open("/clobber.html").await;
        let snap = inspect(&page).await;
        let form = &snap.forms[0];
        assert_eq!(form.id.as_deref(), Some("clobbered"));
        assert_eq!(form.action, h.url("/submit?clobbered=1"));
        assert_eq!(form.method, "post");
        assert!(!form.no_validate);
        assert_eq!(form.field_count, 6);
        let outcome = submit(&page, 0).await;
        assert_eq!(outcome.method, "requestSubmit");
        assert!(outcome.ok, "{outcome:?}");
        wait_for_title(&page, "Thank you").await;
        assert_eq!(h.site.submissions().len(), 2);
        assert_eq!(h.site.submissions()[1][0], ("action".to_owned(), "go".to_owned()));
        h
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_inputs_are_reported_and_left_to_the_agent() {
    with_harness(
        "file_inputs_are_reported_and_left_to_the_agent",
        |h| async move {
            let page = h.open("/upload.html").await;
            let snap = inspect(&page).await;
            let cv = field(&snap, "Your CV (PDF)");
            assert_eq!(cv.kind, "file");
            assert_eq!(
                cv.constraints.accept.as_deref(),
                Some(".pdf,application/pdf")
            );
            assert!(cv.required && cv.empty);
            assert_eq!(cv.value, text(""));
            let photos = field(&snap, "Photos");
            assert!(photos.constraints.multiple);
            assert_eq!(photos.value, list(&[]));
            let outcome = fill_one(&page, cv, json!("/tmp/cv.pdf")).await;
            assert!(!outcome.ok);
            assert_eq!(
                outcome.error.as_deref(),
                Some("file inputs are filled by the agent")
            );
            let id: String =
                eval(&page, &format!("__ferryForms.element({}).id", cv.reference)).await;
            assert_eq!(id, "cv");
            let none: Value = eval(&page, "__ferryForms.element(999)").await;
            assert_eq!(none, Value::Null);

            // what the agent does: DOM.setFileInputFiles on the element's remote object
            let session = Some(page.session_id());
            let remote = h
                .browser
                .cdp()
                .call(
                    "Runtime.evaluate",
                    json!({
                        "expression": format!("__ferryForms.element({})", cv.reference),
                        "returnByValue": false,
                    }),
                    session,
                )
                .await
                .expect("element()");
            let object_id = remote["result"]["objectId"].clone();
            assert!(object_id.is_string(), "{remote}");
            let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/site/files/cv.pdf");
            h.browser
                .cdp()
                .call(
                    "DOM.setFileInputFiles",
                    json!({ "files": [file], "objectId": object_id }),
                    session,
                )
                .await
                .expect("DOM.setFileInputFiles");
            let snap = inspect(&page).await;
            let cv = field(&snap, "Your CV (PDF)");
            assert_eq!(cv.value, text("cv.pdf"));
            assert!(!cv.empty && cv.valid);
            assert!(
                fill_one(&page, field(&snap, "Title"), json!("My CV"))
                    .await
                    .ok
            );
            assert_eq!(submit(&page, 0).await.method, "button");
            wait_for_title(&page, "Thank you").await;
            let post = h
                .site
                .requests()
                .into_iter()
                .find(|r| r.method == "POST")
                .expect("POST");
            assert!(
                post.content_type
                    .as_deref()
                    .is_some_and(|t| t.starts_with("multipart/form-data"))
            );
            assert_eq!(
                fields_of(&h.site.submissions()[0]),
                vec![("title", "My CV"), ("cv", "cv.pdf"), ("photos", "")]
            );
            h
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dates_passwords_and_textareas() {
    with_harness("dates_passwords_and_textareas", |h| async move {
        let page = h.open("/date.html").await;
        let snap = inspect(&page).await;
        let birth = field(&snap, "Date of birth");
        assert_eq!(birth.kind, "date");
        let rejected = fill_one(&page, birth, json!("10/12/1815")).await;
        assert_eq!(
            rejected,
            FillOutcome::failure(
                birth.reference,
                "rejected by the date input (expected YYYY-MM-DD)"
            )
        );
        assert!(fill_one(&page, birth, json!("1990-12-10")).await.ok);
        let time = fill_one(&page, field(&snap, "Meeting time"), json!("half past")).await;
        assert_eq!(
            time.error.as_deref(),
            Some("rejected by the time input (expected HH:MM)")
        );
        let qty = fill_one(&page, field(&snap, "Quantity"), json!("a dozen")).await;
        assert_eq!(
            qty.error.as_deref(),
            Some("rejected by the number input (expected a number)")
        );
        let snap = inspect(&page).await;
        assert_eq!(field(&snap, "Date of birth").value, text("1990-12-10"));

        let page = h.open("/password.html").await;
        let snap = inspect(&page).await;
        let pw = field(&snap, "Password");
        assert_eq!(pw.kind, "password");
        assert_eq!(pw.value, text("••••••"));
        assert!(!pw.empty);
        let new_pw = field(&snap, "New password");
        assert_eq!(new_pw.value, text(""));
        assert!(new_pw.empty);
        assert!(fill_one(&page, new_pw, json!("brand new secret")).await.ok);
        let snap = inspect(&page).await;
        assert_eq!(field(&snap, "New password").value, text("••••••"));
        let raw: Value = page
            .evaluate("__ferryForms.inspect()")
            .await
            .expect("inspect");
        assert!(
            !raw.to_string().contains("hunter22"),
            "no password in the snapshot"
        );
        assert!(!raw.to_string().contains("brand new secret"));

        let page = h.open("/textarea.html").await;
        let snap = inspect(&page).await;
        let message = field(&snap, "Message");
        assert_eq!(message.tag, "textarea");
        assert_eq!(message.kind, "textarea");
        assert_eq!(message.constraints.max_length, Some(500));
        assert!(message.required && !message.valid);
        assert_eq!(field(&snap, "Signature").value, text("Regards"));
        assert!(
            fill_one(&page, message, json!("Dear team,\n\nhello."))
                .await
                .ok
        );
        let snap = inspect(&page).await;
        let message = field(&snap, "Message");
        assert_eq!(message.value, text("Dear team,\n\nhello."));
        assert!(message.valid && message.validation_message.is_none());
        h
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_are_left_to_their_own_inspection() {
    with_harness("frames_are_left_to_their_own_inspection", |h| async move {
        let page = h.open("/frame.html?frame=/two-forms.html").await;
        let snap = inspect(&page).await;
        assert!(snap.forms.is_empty());
        assert_eq!(snap.fields.len(), 1);
        assert_eq!(field(&snap, "Outer field").form, None);

        // the frame's own document, inspected by the script evaluated in its realm
        wait_for("the iframe", || async {
            page.evaluate("document.getElementById('frame').contentDocument?.readyState")
                .await
                .is_ok_and(|s| s == "complete")
        })
        .await;
        let script = serde_json::to_string(INSPECT_JS).expect("quote");
        let inner: PageSnapshot = eval(
            &page,
            &format!(
                "(() => {{ const w = document.getElementById('frame').contentWindow;
                   w.eval({script}); return w.__ferryForms.inspect(); }})()"
            ),
        )
        .await;
        assert_eq!(inner.forms.len(), 2);
        assert!(inner.url.ends_with("/two-forms.html"));
        h
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_script_is_idempotent_and_refs_are_rebuilt() {
    with_harness(
        "the_script_is_idempotent_and_refs_are_rebuilt",
        |h| async move {
            let page = h.open("/signup.html").await;
            load_script(&page).await;
            let first = inspect(&page).await;
            let refs: Vec<u32> = first.fields.iter().map(|f| f.reference).collect();
            assert_eq!(refs, (0..first.fields.len() as u32).collect::<Vec<_>>());
            // the page changes: a field goes away, the next inspect renumbers
            eval::<Value>(&page, "document.getElementById('name').remove()").await;
            let stale = fill_one(&page, field(&first, "Full name"), json!("x")).await;
            assert!(!stale.ok && stale.error.unwrap().contains("inspect again"));
            let second = inspect(&page).await;
            assert_eq!(second.fields.len(), first.fields.len() - 1);
            assert_eq!(field(&second, "Email").reference, 0);
            h
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn split_inputs_are_one_field_spread_by_box_length() {
    with_harness(
        "split_inputs_are_one_field_spread_by_box_length",
        |h| async move {
            let page = h.open("/split.html").await;
            let snap = inspect(&page).await;
            let phone = field(&snap, "Phone");
            let card = field(&snap, "Card number");
            let code = field(&snap, "Enter the code we sent you");
            for split in [phone, card, code] {
                assert_eq!(split.kind, "split", "{split:?}");
            }
            assert!(!phone.secret, "a phone number is no secret");
            assert!(
                card.secret && code.secret,
                "card boxes and code boxes are secrets"
            );
            // Boxes that each have their own label stay three fields.
            assert_eq!(field(&snap, "Middle initial").kind, "text");

            let filled = fill_one(&page, phone, json!("(555) 123-4567")).await;
            assert!(filled.ok, "{filled:?}");
            let boxes: Vec<String> = eval(
                &page,
                "['phone1', 'phone2', 'phone3'].map((n) => document.getElementsByName(n)[0].value)",
            )
            .await;
            assert_eq!(boxes, ["555", "123", "4567"]);
            let short = fill_one(&page, card, json!("4111 1111 1111")).await;
            assert_eq!(
                short.error.as_deref(),
                Some("expected 16 characters for 4 boxes of 4 + 4 + 4 + 4")
            );
            let code_filled = fill_one(&page, code, json!("482 913")).await;
            assert!(code_filled.ok, "{code_filled:?}");
            let again = inspect(&page).await;
            let code = field(&again, "Enter the code we sent you");
            assert_eq!(code.value, text("482913"));

            // A picture blanks every box of the card and of the code, none of the phone's.
            let shot: Value = eval(&page, "__ferryForms.shotBox(0)").await;
            assert_eq!(shot["secrets"].as_array().map(Vec::len), Some(10), "{shot}");
            h
        },
    )
    .await;
}
