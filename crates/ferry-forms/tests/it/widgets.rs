//! The widgets sites use, each on its library's **own** demo page from its npm package
//! (`scripts/third-party-forms.sh` fetches them): a value goes in through the agent, and is
//! read back from the page's own API or the control the library keeps in step with it.
//!
//! | library | page | read back with |
//! |---|---|---|
//! | flatpickr 2.0.8 | `index.html` (a range picker with time) | `calendar.selectedDates` |
//! | jQuery UI 1.12.1 datepicker | `demos/datepicker/default.html` | `.datepicker('getDate')` |
//! | react-datepicker 0.20.0 | `docs/index.html` | the input it renders from its selected date |
//! | select2 4.0.0 | `docs/examples.html` (rendered from its Jekyll source) | `.val()` |
//! | Choices.js 4.1.0 | `public/index.html` | the `<select>` it keeps in step (its instances are local to the page script) |
//! | react-select 1.0.0-rc.10 | `.publish/index.html` | the hidden input it renders from its value |
//! | jquery-autotab 1.9.2 | `index.html` (a phone number in three boxes, a key in five) | each box's `.val()` |
//! | bootstrap-pincode-input 3.0.1 | `index.html` (a code one digit a box) | the original input's `.val()` |
//! | Dropzone 4.3.0 | `test.html` (a drop zone that simulates the upload) | `Dropzone.forElement(…).files` |

use crate::support::agent::FormsServer;
use crate::support::site::TestSite;
use crate::third_party::{fill, with_pages};
use ferry_forms::ConversationKey;
use serde_json::{Value, json};

/// One library's case: the page, the values sent, the expression that reads the page's
/// answer back in its own world, and what it must say.
struct Case {
    library: &'static str,
    path: &'static str,
    values: Value,
    read_back: &'static str,
    expected: Value,
    /// For a page whose widget appears after the load event (require.js loads jQuery UI's
    /// demos): what says it is there. The agent fills what the page holds when it looks,
    /// so the test looks once, waits for this, and fills on the page as it now is.
    ready: Option<&'static str>,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            library: "flatpickr",
            path: "/flatpickr/index.html",
            values: json!({"Select Date..": "2016-10-21 to 2016-10-25"}),
            read_back: "calendar.selectedDates.map((d) => [d.getFullYear(), d.getMonth() + 1, d.getDate()])",
            expected: json!([[2016, 10, 21], [2016, 10, 25]]),
            ready: None,
        },
        Case {
            library: "jQuery UI datepicker",
            path: "/jquery-ui-1.12.1/demos/datepicker/default.html",
            values: json!({"Date": "31 March 2030"}),
            read_back: "(() => { const d = jQuery('#datepicker').datepicker('getDate'); \
                        return d && [d.getFullYear(), d.getMonth() + 1, d.getDate(), jQuery('#datepicker').val()]; })()",
            expected: json!([2030, 3, 31, "03/31/2030"]),
            ready: Some(
                "typeof jQuery === 'function' && jQuery('#datepicker').hasClass('hasDatepicker')",
            ),
        },
        Case {
            library: "react-datepicker",
            path: "/react-datepicker/docs/index.html",
            values: json!({"Select a weekday": "2030-03-29"}),
            read_back: "Array.from(document.querySelectorAll('input')).find((i) => i.placeholder === 'Select a weekday').value",
            expected: json!("2030-03-29"),
            ready: None,
        },
        Case {
            library: "select2",
            path: "/select2/docs/examples.rendered.html",
            values: json!({"and turn it into this...": "California"}),
            read_back: "[jQuery('.js-example-basic-single').val(), \
                        jQuery('.js-example-basic-single').next('.select2-container').find('.select2-selection__rendered').text()]",
            expected: json!(["CA", "California"]),
            ready: None,
        },
        Case {
            library: "Choices.js",
            path: "/choices.js/public/index.html",
            values: json!({"Change me!": "Option 4", "And me!": ["Choice 1", "Choice 3"]}),
            read_back: "[document.getElementById('reset-simple').value, \
                        document.getElementById('reset-simple').closest('.choices').querySelector('.choices__list--single').innerText.trim(), \
                        Array.from(document.getElementById('reset-multiple').selectedOptions).map((o) => o.value)]",
            expected: json!(["Option 4", "Option 4", ["Choice 1", "Choice 3"]]),
            ready: None,
        },
        Case {
            library: "react-select",
            path: "/react-select/.publish/index.html",
            values: json!({"States": "Victoria"}),
            read_back: "document.querySelector('input[type=hidden][name=\"selected-state\"]').value",
            expected: json!("victoria"),
            ready: None,
        },
        Case {
            library: "jquery-autotab",
            path: "/jquery-autotab/index.html",
            values: json!({"Phone Number": "(555) 123-4567", "Uppercase letters and numbers": "ABCDE-12345-FGHIJ-67890-KLMNO"}),
            read_back: "['#number1', '#number2', '#number3', '#alphanumeric1', '#alphanumeric5'].map((id) => jQuery(id).val())",
            expected: json!(["555", "123", "4567", "ABCDE", "KLMNO"]),
            ready: None,
        },
        Case {
            library: "bootstrap-pincode-input",
            path: "/bootstrap-pincode-input/index.html",
            values: json!({"4 visible digits example": "4821"}),
            read_back: "jQuery('#pincode-input4').val()",
            expected: json!("4821"),
            ready: None,
        },
        Case {
            library: "Dropzone",
            path: "/dropzone/test.html",
            values: json!({"Drop files here to upload": "cv.pdf"}),
            read_back: "Dropzone.forElement('#new-theme').files.map((f) => f.name)",
            expected: json!(["cv.pdf"]),
            ready: None,
        },
    ]
}

/// What the page's own world says after the turn in conversation `context`.
async fn read_back(server: &FormsServer, context: &str, expression: &str) -> Value {
    let mut slot = server
        .agent()
        .pool()
        .acquire(&ConversationKey::context(context))
        .await
        .expect("the conversation's slot");
    let session = slot.session.as_mut().expect("an open session");
    session
        .page()
        .evaluate(expression)
        .await
        .unwrap_or_else(|e| json!(format!("the read-back threw: {e}")))
}

/// One case: the report must say the value went in, and the page must agree.
async fn run(server: &FormsServer, site: &TestSite, case: &Case) -> Result<(), String> {
    // One conversation for every page: the agent's sessions are capped.
    let context = "widgets";
    if let Some(ready) = case.ready {
        fill(server, site, context, case.path, json!({})).await;
        while read_back(server, context, ready).await != json!(true) {
            tokio::task::yield_now().await;
        }
    }
    let data = fill(server, site, context, case.path, case.values.clone()).await;
    let keys: Vec<&String> = case
        .values
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
        .collect();
    let filled: Vec<&str> = data["filled"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["key"].as_str())
        .collect();
    if keys.iter().any(|k| !filled.contains(&k.as_str())) {
        return Err(format!(
            "{}: not filled: errors {} unmatched {}",
            case.library, data["fieldErrors"], data["unmatched"]
        ));
    }
    let answer = read_back(server, context, case.read_back).await;
    if answer != case.expected {
        return Err(format!(
            "{}: the page says {answer}, expected {}",
            case.library, case.expected
        ));
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn widget_libraries_take_values_on_their_own_demo_pages() {
    with_pages("widgets::demo_pages", |site, server| async move {
        let mut failures = Vec::new();
        let cases = cases();
        for case in &cases {
            if let Err(failure) = run(&server, &site, case).await {
                failures.push(failure);
            }
        }
        println!(
            "widget libraries working: {} of {}",
            cases.len() - failures.len(),
            cases.len()
        );
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        server
    })
    .await;
}
