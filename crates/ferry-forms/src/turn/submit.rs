//! Submitting: the form's own submit button (else `requestSubmit()`), the wait for a
//! navigation or for the page to settle, and the verdict on what happened, decided from
//! evidence: did the submit event fire and did a page script cancel it, did a request that
//! can carry the form leave the browser (a navigation, or a script's fetch/XHR to the
//! form's or the page's site), did the page navigate, what errors does it show now.
//! `submitted` is true only when the form's data left the browser.

use super::Progress;
use super::reporting::build_report;
use super::scope::{Scope, field_error, missing};
use super::{TurnResult, Verdict, ask, not_ready};
use crate::config::FormsConfig;
use crate::inspection::Inspection;
use crate::pool::PendingSubmit;
use crate::report::{FormReport, Outcome, Sent, display_label};
use crate::session::Session;
use crate::shown::ShownForm;
use crate::snapshot::SubmitOutcome;
use ferry_browser::{BrowserError, SentRequest};
use std::collections::BTreeMap;
use std::time::Duration;

/// The requests shown in `outcome.requests`, at most.
const SHOWN_REQUESTS: usize = 5;

/// What a submit is about: the form and the task that asked for it.
pub(super) struct SubmitTarget<'a> {
    /// Global form index.
    pub form: usize,
    /// The task (a submit that did not happen stays pending for it).
    pub task_id: &'a str,
}

/// Submits global form `form`, waits for the result and reports it. `before` is ferry's
/// report of the form as it is now: when it says anything is still needed, nothing is
/// clicked. Steps: press the submit and wait ([`press`]), read the page again and report
/// what happened ([`report_after`]), then judge it ([`judge`]).
pub(super) async fn submit(
    session: &mut Session,
    config: &FormsConfig,
    mark: usize,
    inspection: Inspection,
    target: SubmitTarget<'_>,
    before: FormReport,
    progress: &Progress,
) -> Result<TurnResult, BrowserError> {
    let form = target.form;
    // ferry's own report decides, whatever the browser would let through.
    if before.needs_input() {
        let why = format!("Nothing was submitted: form {form} is not ready");
        return Ok(not_ready(before, &why, form, target.task_id));
    }
    progress.say(&format!("submitting form {form}")).await;
    let hosts = Hosts::of(&inspection, form);
    let pressed = match press(session, config, &inspection, form, &hosts).await? {
        Ok(pressed) => pressed,
        Err(why) => return Ok(ask(format!("Could not submit form {form}: {why}"), before)),
    };
    let after = Inspection::take(session.page()).await?;
    let report = report_after(session, mark, &after, form, before, &pressed);
    let refused = refused_post(session, mark, &hosts);
    Ok(judge(config, &after, report, pressed, target, refused))
}

/// Why the proxy refused the form's post, if it did (a refused post is never a success).
fn refused_post(session: &Session, mark: usize, hosts: &Hosts) -> Option<String> {
    let host = hosts.action.as_ref()?;
    session
        .blocked_since(mark)
        .into_iter()
        .find(|b| b.host.eq_ignore_ascii_case(host))
        .map(|b| format!("blocked: the form posts to {}: {}", b.target, b.reason))
}

/// The hosts a request that carries the form may go to: the form's action's and the page's.
struct Hosts {
    action: Option<String>,
    page: Option<String>,
}

impl Hosts {
    fn of(inspection: &Inspection, form: usize) -> Self {
        let host = |url: &str| url::Url::parse(url).ok()?.host_str().map(str::to_owned);
        Self {
            action: inspection
                .forms()
                .get(form)
                .and_then(|(_, f)| host(&f.action)),
            page: inspection.main().and_then(|m| host(&m.url)),
        }
    }

    /// Whether `url` goes to one of them.
    fn receives(&self, url: &str) -> bool {
        let host = url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned));
        host.is_some() && (host == self.action || host == self.page)
    }
}

/// What pressing the submit did.
struct Pressed {
    /// The page script's side: did the submit event fire, was it cancelled.
    outcome: SubmitOutcome,
    /// Whether the main frame started loading a new page.
    navigated: bool,
    /// What left the browser that could carry the form.
    sent: Sent,
    /// Those requests.
    carriers: Vec<SentRequest>,
    /// Warnings of the wait (a result page that did not finish loading).
    warnings: Vec<String>,
}

/// Step 1: presses the form's submit (recording requests from before the click) and waits
/// for a navigation, or for the page to settle. `Err` with the page script's reason when the
/// submit could not be pressed.
async fn press(
    session: &mut Session,
    config: &FormsConfig,
    inspection: &Inspection,
    form: usize,
    hosts: &Hosts,
) -> Result<Result<Pressed, String>, BrowserError> {
    let page = session.page();
    let main_frame = page.main_frame_id().await?;
    let started = page.next_event("Page.frameStartedLoading", Some(&main_frame));
    let loaded = page.next_event("Page.loadEventFired", None);
    // Recording from before the click, so the first request is seen.
    let mut requests = page.watch_requests().await?;
    let outcome = match inspection.submit(form).await {
        Ok(outcome) => outcome,
        // The document went away under the call: the submit navigated at once.
        Err(BrowserError::Script { description })
            if description.contains("destroyed") || description.contains("context") =>
        {
            SubmitOutcome {
                ok: true,
                method: "button".into(),
                button: None,
                error: None,
                dispatched: true,
                cancelled: false,
            }
        }
        Err(e) => return Err(e),
    };
    if !outcome.ok {
        return Ok(Err(outcome
            .error
            .unwrap_or_else(|| "unknown reason".into())));
    }
    let mut warnings = Vec::new();
    let navigated = tokio::time::timeout(config.submit_navigation_wait, started)
        .await
        .is_ok_and(|r| r.is_ok());
    if !navigated {
        tokio::time::sleep(config.settle.max(Duration::from_millis(300))).await;
    } else if tokio::time::timeout(config.navigation_timeout, loaded)
        .await
        .is_err()
    {
        let _ = session.page().stop_loading().await;
        warnings.push(format!(
            "the page after the submit did not finish loading within {} s",
            config.navigation_timeout.as_secs()
        ));
    }
    // What left the browser: a navigation, or a request to the form's or the page's own
    // site that can carry data (a beacon to an analytics host is not the form).
    let carriers: Vec<SentRequest> = requests
        .sent()
        .into_iter()
        .filter(|r| r.could_carry_form_data() && hosts.receives(&r.url))
        .collect();
    let sent = if navigated || carriers.iter().any(|r| r.resource_type == "Document") {
        Sent::Navigation
    } else if !carriers.is_empty() {
        Sent::Script
    } else {
        Sent::None
    };
    Ok(Ok(Pressed {
        outcome,
        navigated,
        sent,
        carriers,
        warnings,
    }))
}

/// Step 2: the report of the page after the submit: what was filled, where the page is,
/// what was sent, and the errors it shows now (custom texts anywhere, and, when the form is
/// still there, the browser's own validation).
fn report_after(
    session: &Session,
    mark: usize,
    after: &Inspection,
    form: usize,
    before: FormReport,
    pressed: &Pressed,
) -> FormReport {
    let scope = if pressed.navigated {
        Scope::All
    } else {
        Scope::Form(form)
    };
    let mut warnings = before.warnings;
    warnings.extend(pressed.warnings.iter().cloned());
    let mut report = build_report(session, mark, after, &scope, warnings);
    report.filled = before.filled;
    report.unmatched = before.unmatched;
    report.submitted = pressed.sent != Sent::None;
    let main = after.main();
    report.outcome = Some(Outcome {
        url: main.map(|m| m.url.clone()).unwrap_or_default(),
        title: main.map(|m| m.title.clone()).unwrap_or_default(),
        text: main
            .map(|m| m.text.chars().take(500).collect())
            .unwrap_or_default(),
        navigated: pressed.navigated,
        sent: pressed.sent,
        requests: pressed
            .carriers
            .iter()
            .take(SHOWN_REQUESTS)
            .map(|r| format!("{} {}", r.method, r.url))
            .collect(),
        http_status: main.and_then(|m| m.http_status),
    });
    let mut errors = BTreeMap::new();
    for (_, form_no, field) in after.fields() {
        let error = if pressed.navigated || !scope.contains(form_no) {
            field.error.clone()
        } else {
            field_error(field)
        };
        if let Some(error) = error {
            errors.insert(display_label(field), error);
        }
    }
    report.field_errors = errors;
    if !pressed.navigated {
        report.missing = missing(after, &scope);
    }
    report
}

/// Step 3: the verdict. A refused form post, or an HTTP error page, is a failure (never a
/// success); data that never left the browser is not a submit; errors on the page ask for
/// corrections; otherwise the form was submitted.
fn judge(
    config: &FormsConfig,
    after: &Inspection,
    report: FormReport,
    pressed: Pressed,
    target: SubmitTarget<'_>,
    refused: Option<String>,
) -> TurnResult {
    let form = target.form;
    let failed = |message: String, report: FormReport| TurnResult {
        learned: Vec::new(),
        verdict: Verdict::Failed,
        message,
        report,
        pending: None,
    };
    if let Some(message) = refused {
        return failed(message, report);
    }
    let status = after.main().and_then(|m| m.http_status);
    if let Some(status) = status.filter(|s| pressed.navigated && *s >= 400) {
        let message = format!(
            "Submitted form {form}, but the site answered HTTP {status} ({:?} at {}).",
            report.title, report.url
        );
        return failed(message, report);
    }
    if pressed.sent == Sent::None {
        let shown = ShownForm::of(after, form);
        return not_sent(report, &pressed.outcome, target, shown, config);
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
        return ask(message, report);
    }
    let title = report
        .outcome
        .as_ref()
        .map(|o| o.title.clone())
        .unwrap_or_default();
    let how = match pressed.sent {
        Sent::Script => " (a page script sent it)",
        Sent::Navigation | Sent::None => "",
    };
    TurnResult {
        learned: Vec::new(),
        verdict: Verdict::Completed,
        message: format!(
            "Submitted form {form}{how}; the page now shows {:?} at {}.",
            title, report.url
        ),
        report,
        pending: None,
    }
}

/// The verdict on a submit whose data never left the browser: never a success. The page's
/// reasons (errors it shows, fields still missing) make it INPUT_REQUIRED with them; with no
/// visible reason it says exactly that. The submit stays pending for the task, so values
/// sent next continue toward it; with no reason shown, the form as it is now (`shown`) is
/// ready again and a confirmation tries once more.
fn not_sent(
    report: FormReport,
    outcome: &SubmitOutcome,
    target: SubmitTarget<'_>,
    shown: ShownForm,
    config: &FormsConfig,
) -> TurnResult {
    let why = if !outcome.dispatched {
        "the browser's own validation stopped the submit".to_owned()
    } else if outcome.cancelled {
        "a page script cancelled the submit".to_owned()
    } else {
        format!(
            "nothing was sent within {} s of the submit",
            config.submit_navigation_wait.as_secs_f32()
        )
    };
    let mut message = format!("The page did not send form {} — {why}", target.form);
    let mut reasons = Vec::new();
    if !report.field_errors.is_empty() {
        reasons.push(report.field_error_lines().join("; "));
    }
    if !report.form_errors.is_empty() {
        reasons.push(report.form_errors.join("; "));
    }
    if !report.missing.is_empty() {
        reasons.push(format!(
            "missing required fields: {}",
            report.missing.join(", ")
        ));
    }
    let ready = reasons.is_empty();
    if ready {
        message.push_str(
            ", and it shows no error saying why. Nothing was submitted; reply {\"confirm\": true} to try again, or send changed values.",
        );
    } else {
        message.push_str(&format!(
            "; it shows: {}. Nothing was submitted; send corrected values.",
            reasons.join(" — ")
        ));
    }
    TurnResult {
        learned: Vec::new(),
        verdict: Verdict::InputRequired,
        message,
        report,
        pending: Some(PendingSubmit {
            task_id: target.task_id.to_owned(),
            form: target.form,
            shown_ready: ready.then_some(shown),
            ..PendingSubmit::default()
        }),
    }
}
