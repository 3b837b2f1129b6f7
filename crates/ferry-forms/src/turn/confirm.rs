//! A confirmation alone (`{"confirm": true}`): it approves the submit ferry showed ready on
//! this task, exactly as it was shown. Anything else submits nothing and says why: nothing
//! waits, another task's submit waits, the form still needs something, or the page changed
//! it since it was shown (then it is shown again, and a new confirmation approves the new
//! picture).

use super::reporting::build_report;
use super::scope::{Scope, field_errors, missing};
use super::submit::{SubmitTarget, submit};
use super::{Gate, PERSON_APPROVES, Progress, TurnResult, Verdict, ask, not_ready};
use crate::config::FormsConfig;
use crate::inspection::Inspection;
use crate::pool::PendingSubmit;
use crate::report::FormReport;
use crate::session::Session;
use crate::shown::ShownForm;
use ferry_browser::BrowserError;

/// What a confirmation is checked against.
pub(super) struct Confirmation<'a> {
    /// The session's blocked-request mark at the start of the turn.
    pub mark: usize,
    /// The conversation's pending submit.
    pub pending: Option<PendingSubmit>,
    /// The task the confirmation came on.
    pub task_id: &'a str,
    /// Warnings of the turn so far (the page load).
    pub warnings: Vec<String>,
    /// Who lets the submit happen.
    pub gate: Gate,
}

/// Submits the pending form if the confirmation approves it; otherwise answers why not.
pub(super) async fn confirm(
    session: &mut Session,
    config: &FormsConfig,
    inspection: Inspection,
    confirmation: Confirmation<'_>,
    progress: &Progress,
) -> Result<TurnResult, BrowserError> {
    let Confirmation {
        mark,
        pending,
        task_id,
        warnings,
        gate,
    } = confirmation;
    let Some(pending) = pending else {
        let report = build_report(session, mark, &inspection, &Scope::All, warnings);
        return Ok(ask(
            "Nothing is waiting for confirmation in this conversation. Send the values with \"submit\": true first.".into(),
            report,
        ));
    };
    if pending.task_id != task_id {
        let report = build_report(session, mark, &inspection, &Scope::All, warnings);
        let message = format!(
            "The submit waiting in this conversation belongs to task {}; only that task can confirm it. Nothing was submitted.",
            pending.task_id
        );
        return Ok(TurnResult {
            pending: Some(pending),
            ..ask(message, report)
        });
    }
    let form = pending.form;
    let report = form_now(session, mark, &inspection, form, warnings);
    let Some(shown) = &pending.shown_ready else {
        return Ok(not_shown_ready(report, pending));
    };
    let now = ShownForm::of(&inspection, form);
    if let Some(change) = shown.change(&now) {
        let lead = format!(
            "Nothing was submitted: form {form} changed since it was shown ready ({})",
            change.describe()
        );
        if report.needs_input() {
            let why = format!("{lead}, and it is not ready");
            return Ok(not_ready(report, &why, form, task_id));
        }
        return Ok(shown_again(report, lead, gate, task_id, (now, form)));
    }
    match gate {
        Gate::Caller => {}
        Gate::Person => return Ok(awaiting_person(report, pending)),
        Gate::Approved(ticket) if ticket != shown.ticket() => {
            let message = "Nothing was submitted: the approval was for an earlier showing of the form; a person must approve the form as it is shown now.".to_owned();
            return Ok(TurnResult {
                pending: Some(pending),
                ..ask(message, report)
            });
        }
        Gate::Approved(_) => {}
    }
    let target = SubmitTarget { form, task_id };
    submit(session, config, mark, inspection, target, report, progress).await
}

/// The report of form `form` as the page shows it now: its fields, the required ones still
/// empty, the errors they show.
fn form_now(
    session: &Session,
    mark: usize,
    inspection: &Inspection,
    form: usize,
    warnings: Vec<String>,
) -> FormReport {
    let scope = Scope::Form(form);
    let mut report = build_report(session, mark, inspection, &scope, warnings);
    report.missing = missing(inspection, &scope);
    report.field_errors = field_errors(inspection, &scope);
    report
}

/// A confirmation of a submit that was never shown ready: the last answer asked for more.
fn not_shown_ready(report: FormReport, pending: PendingSubmit) -> TurnResult {
    let form = pending.form;
    if report.needs_input() {
        let why = format!(
            "Nothing was submitted: the submit of form {form} is not waiting for confirmation, because the form is not ready"
        );
        return not_ready(report, &why, form, &pending.task_id);
    }
    let message = format!(
        "Nothing was submitted: the submit of form {form} is not waiting for confirmation; the last answer asked for more input and none has come since. Send the values it asked for, or {{\"submit\": true, \"confirm\": true}} to submit the form as it is now."
    );
    TurnResult {
        pending: Some(pending),
        ..ask(message, report)
    }
}

/// A caller's confirmation when a person approves: the form stays shown ready, waiting.
fn awaiting_person(mut report: FormReport, pending: PendingSubmit) -> TurnResult {
    report.pending_submit = true;
    let message = format!("Nothing was submitted. {PERSON_APPROVES}");
    TurnResult {
        pending: Some(pending),
        ..ask(message, report)
    }
}

/// The form changed but is still complete: shown again, ready, for a new confirmation (or
/// a person's new approval).
fn shown_again(
    mut report: FormReport,
    lead: String,
    gate: Gate,
    task_id: &str,
    (now, form): (ShownForm, usize),
) -> TurnResult {
    report.pending_submit = true;
    let message = match gate {
        Gate::Caller => {
            format!("{lead}. Review it as it is now and reply {{\"confirm\": true}} to submit it.")
        }
        Gate::Person | Gate::Approved(_) => format!(
            "{lead}. A person must approve it as it is now, on the new review page (approvalUrl)."
        ),
    };
    TurnResult {
        learned: Vec::new(),
        verdict: Verdict::InputRequired,
        message,
        report,
        pending: Some(PendingSubmit {
            task_id: task_id.to_owned(),
            form,
            shown_ready: Some(now),
            ..PendingSubmit::default()
        }),
    }
}
