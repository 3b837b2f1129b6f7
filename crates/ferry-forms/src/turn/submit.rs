//! Submitting: the form's own submit button (else `requestSubmit()`), the wait for a
//! navigation or for the page to settle, and the verdict on what the page shows then.

use super::reporting::build_report;
use super::scope::{Scope, field_error, missing};
use super::{TurnResult, Verdict, ask};
use crate::config::FormsConfig;
use crate::inspection::Inspection;
use crate::report::{FormReport, Outcome, display_label};
use crate::session::Session;
use ferry_browser::BrowserError;
use std::collections::BTreeMap;
use std::time::Duration;

/// Submits global form `form`, waits for the result and reports it.
#[allow(clippy::too_many_arguments)]
pub(super) async fn submit(
    session: &mut Session,
    config: &FormsConfig,
    mark: usize,
    inspection: Inspection,
    form: usize,
    before: Option<FormReport>,
    warnings: Vec<String>,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<TurnResult, BrowserError> {
    progress(&format!("submitting form {form}"));
    let page = session.page();
    let main_frame = page.main_frame_id().await?;
    let started = page.next_event("Page.frameStartedLoading", Some(&main_frame));
    let loaded = page.next_event("Page.loadEventFired", None);
    let action_host = inspection
        .forms()
        .get(form)
        .and_then(|(_, f)| url::Url::parse(&f.action).ok())
        .and_then(|u| u.host_str().map(str::to_owned));
    let outcome = match inspection.submit(form).await {
        Ok(outcome) => outcome,
        // The document went away under the call: the submit navigated at once.
        Err(BrowserError::Script { description })
            if description.contains("destroyed") || description.contains("context") =>
        {
            crate::snapshot::SubmitOutcome {
                ok: true,
                method: "button".into(),
                button: None,
                error: None,
            }
        }
        Err(e) => return Err(e),
    };
    if !outcome.ok {
        let report = before.unwrap_or_else(|| {
            build_report(session, mark, &inspection, &Scope::Form(form), warnings)
        });
        return Ok(ask(
            format!(
                "Could not submit form {form}: {}",
                outcome.error.unwrap_or_else(|| "unknown reason".into())
            ),
            report,
        ));
    }
    let mut warnings = warnings;
    let navigated = tokio::time::timeout(config.submit_navigation_wait, started)
        .await
        .is_ok_and(|r| r.is_ok());
    if navigated {
        if tokio::time::timeout(config.navigation_timeout, loaded)
            .await
            .is_err()
        {
            let _ = session.page().stop_loading().await;
            warnings.push(format!(
                "the page after the submit did not finish loading within {} s",
                config.navigation_timeout.as_secs()
            ));
        }
    } else {
        tokio::time::sleep(config.settle.max(Duration::from_millis(300))).await;
    }
    let after = Inspection::take(session.page()).await?;
    let scope = if navigated {
        Scope::All
    } else {
        Scope::Form(form)
    };
    let mut report = build_report(session, mark, &after, &scope, warnings);
    if let Some(before) = before {
        report.filled = before.filled;
        report.unmatched = before.unmatched;
    }
    report.submitted = true;
    let main = after.main();
    report.outcome = Some(Outcome {
        url: main.map(|m| m.url.clone()).unwrap_or_default(),
        title: main.map(|m| m.title.clone()).unwrap_or_default(),
        text: main
            .map(|m| m.text.chars().take(500).collect())
            .unwrap_or_default(),
        navigated,
        http_status: main.and_then(|m| m.http_status),
    });
    // A refused form post must never look like success.
    if let Some(host) = &action_host
        && let Some(b) = session
            .blocked_since(mark)
            .into_iter()
            .find(|b| b.host.eq_ignore_ascii_case(host))
    {
        return Ok(TurnResult {
            verdict: Verdict::Failed,
            message: format!("blocked: the form posts to {}: {}", b.target, b.reason),
            report,
            pending: None,
        });
    }
    // The site refused the submission outright.
    if let Some(status) = main
        .and_then(|m| m.http_status)
        .filter(|s| navigated && *s >= 400)
    {
        return Ok(TurnResult {
            verdict: Verdict::Failed,
            message: format!(
                "Submitted form {form}, but the site answered HTTP {status} ({:?} at {}).",
                report.title, report.url
            ),
            report,
            pending: None,
        });
    }
    // Errors the page shows now: custom texts anywhere, and, when the form is still
    // there, the browser's own validation.
    let mut errors = BTreeMap::new();
    for (_, form_no, field) in after.fields() {
        let error = if navigated || !scope.contains(form_no) {
            field.error.clone()
        } else {
            field_error(field)
        };
        if let Some(error) = error {
            errors.insert(display_label(field), error);
        }
    }
    report.field_errors = errors;
    if !navigated {
        report.missing = missing(&after, &scope);
    }
    if !report.field_errors.is_empty() || !report.form_errors.is_empty() {
        let mut message = "Submitted, but the page reports errors".to_owned();
        if !report.field_errors.is_empty() {
            message.push_str(&format!(" — {}", report.field_error_lines().join("; ")));
        }
        if !report.form_errors.is_empty() {
            message.push_str(&format!(" — {}", report.form_errors.join("; ")));
        }
        message.push_str(". Send corrected values.");
        return Ok(ask(message, report));
    }
    let title = report
        .outcome
        .as_ref()
        .map(|o| o.title.clone())
        .unwrap_or_default();
    Ok(TurnResult {
        verdict: Verdict::Completed,
        message: format!(
            "Submitted form {form}; the page now shows {:?} at {}.",
            title, report.url
        ),
        report,
        pending: None,
    })
}
