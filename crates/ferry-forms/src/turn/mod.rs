//! One turn of the forms agent on a session: open, inspect, fill, ask, submit.
//!
//! The lifecycle (`docs/src/forms/index.md`):
//! - inspect only → COMPLETED with the fields;
//! - values given and something missing, ambiguous or invalid → INPUT_REQUIRED;
//! - all good and `submit` → INPUT_REQUIRED asking for `{"confirm": true}` (or, with
//!   `--auto-submit` or `confirm` given up front, submitted at once);
//! - `confirm` alone → submit what the previous answer showed ready, if the form is unchanged
//!   (`confirm`): wait for the navigation or for the page to settle, re-inspect →
//!   COMPLETED when the form's data left the browser, INPUT_REQUIRED when the page now shows
//!   errors or did not send the form (a script cancelled it), FAILED when the site refused it.
//!
//! Nothing is clicked while ferry's own report of the form says anything is still needed
//! (`submit` checks it first), whatever the browser would let through.
//!
//! A submit the task asked for stays its intent until it happens or the caller says
//! `"submit": false`: a follow-up on the same task that brings only the missing values
//! continues toward it (asks for the confirmation once the form is ready). Only the task that
//! holds a pending submit may confirm it.
//!
//! [`run`] is the lifecycle as a pipeline of steps, each a function with one job that either
//! hands the next step its value or ends the turn: `page` opens and inspects the page, then
//! the form is selected, then a bare confirmation goes to `confirm` (which judges it), a look
//! is answered, or the values are matched and filled (`scope` decides which form they belong
//! to and what is still missing, `fill` puts them in) and the outcome decided: ask, submit
//! (`submit` submits and judges the result) or show the form ready. `reporting` builds the
//! report's common part and reads the proxy's refusals.

pub(crate) mod auto;
mod confirm;
mod fill;
mod page;
mod reporting;
mod scope;
pub(crate) mod steps;
mod submit;
mod widget;

use crate::config::FormsConfig;
use crate::inspection::Inspection;
use crate::pool::PendingSubmit;
use crate::report::{Ambiguous, FormReport, StepPassed};
use crate::request::{FormRequest, FormSelector};
use crate::session::Session;
use crate::shown::ShownForm;
use ferry_browser::BrowserError;
use fill::Filling;
use page::{Step, Visit};
use reporting::build_report;
use scope::{Scope, choose_scope, field_error, missing, unsent_warnings};
use submit::{SubmitTarget, submit};

/// How a turn ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Done (inspected, filled without submit, or submitted).
    Completed,
    /// The caller must answer (values, corrections, or the confirmation).
    InputRequired,
    /// The page could not be used (blocked, unreachable).
    Failed,
    /// A step of a multi-step form was passed: the turn goes on on the next page (never
    /// the verdict of a whole turn).
    Advanced,
}

/// The result of a turn: the verdict, the status text, and the report.
#[derive(Debug, Clone)]
pub(crate) struct TurnResult {
    /// Final state.
    pub verdict: Verdict,
    /// The status message for the caller.
    pub message: String,
    /// The `data` artifact.
    pub report: FormReport,
    /// The pending submit to remember (replaces the previous one).
    pub pending: Option<PendingSubmit>,
    /// What the conversation learned in this turn (see [`auto::learned`]).
    pub learned: Vec<(String, String)>,
}

/// Who lets a submit happen in this turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gate {
    /// The caller's confirmation (`{"confirm": true}`, or `--auto-submit`).
    Caller,
    /// A person, on the review page: the caller's confirmation submits nothing.
    Person,
    /// The person approved the showing `ticket`: that showing, unchanged, is submitted.
    Approved(u64),
}

/// Where a turn says what it is doing: a WORKING status with one line of text (over A2A),
/// or nowhere.
pub(crate) struct Progress(pub(crate) Option<ferry_agent::EventSink>);

impl Progress {
    /// Reports `text`; a refused report (the task ended meanwhile) is not the turn's failure.
    pub(crate) async fn say(&self, text: &str) {
        if let Some(sink) = &self.0 {
            let _ = sink.working(Some(sink.text_message(text))).await;
        }
    }
}

/// What a turn needs besides the session.
pub(crate) struct TurnInput<'a> {
    /// Settings.
    pub config: &'a FormsConfig,
    /// The request.
    pub request: &'a FormRequest,
    /// The task this turn belongs to.
    pub task_id: &'a str,
    /// The conversation's pending submit.
    pub pending: Option<PendingSubmit>,
    /// Progress reports (`working` status updates).
    pub progress: &'a Progress,
    /// Where `"auto": true` takes values from (`None` when the request does not ask).
    pub auto: Option<&'a auto::AutoSources>,
    /// Who lets a submit happen.
    pub gate: Gate,
    /// The turn goes on on the next step of a multi-step form (the page's only form is the
    /// one to fill).
    pub continuing: bool,
}

/// Runs one turn. A browser failure (crash, lost connection) is returned as the error; the
/// caller replaces the session.
pub(crate) async fn run(
    session: &mut Session,
    input: TurnInput<'_>,
) -> Result<TurnResult, BrowserError> {
    let mut learned = Vec::new();
    // The task's way through a multi-step form, as its pending submit left it.
    let mut flow = input
        .pending
        .as_ref()
        .filter(|p| p.task_id == input.task_id)
        .map(|p| p.flow.clone())
        .unwrap_or_default();
    let mut request = flow.with_later(input.request);
    let mut pending = input.pending;
    let mut continuing = input.continuing;
    for _ in 0..=steps::MAX_STEPS_PER_TURN {
        let step = TurnInput {
            request: &request,
            pending: pending.take(),
            continuing,
            ..input
        };
        let result = run_turn(session, step, &mut learned).await?;
        if result.verdict != Verdict::Advanced {
            let mut result = flow.finish(result, &request);
            result.learned = learned;
            return Ok(result);
        }
        request = flow.passed(&result, &request);
        continuing = true;
    }
    let message = format!(
        "Passed {} steps of this form in one turn, and it goes on; send {{\"submit\": true}} to continue.",
        steps::MAX_STEPS_PER_TURN
    );
    let mut result = flow.finish(ask(message, FormReport::default()), &request);
    result.learned = learned;
    Ok(result)
}

/// Ends the turn with a step's result when the step ended it.
macro_rules! step {
    ($step:expr) => {
        match $step {
            Ok(value) => value,
            Err(done) => return Ok(*done),
        }
    };
}

/// The turn, step by step: page, inspection, the form, then a confirmation, a look, or a
/// fill and what follows from it. Each step ends the turn when it can go no further.
async fn run_turn(
    session: &mut Session,
    input: TurnInput<'_>,
    learned: &mut Vec<(String, String)>,
) -> Result<TurnResult, BrowserError> {
    let TurnInput {
        config,
        request,
        task_id,
        pending,
        progress,
        auto,
        gate,
        continuing,
    } = input;
    let mut visit = Visit::new(session);
    step!(visit.open(config, request, progress).await?);
    let inspection = step!(visit.inspect(request, progress).await?);
    let selected = match step!(select_form(&mut visit, &inspection, request).await?) {
        // The next step of a multi-step form: the page's only form.
        None if continuing && inspection.forms().len() == 1 => Some(0),
        selected => selected,
    };

    // A confirmation alone approves the submit shown ready on this task, as it was shown.
    if request.confirm && request.values.is_empty() && request.submit != Some(true) {
        let confirmation = confirm::Confirmation {
            mark: visit.mark,
            pending,
            task_id,
            warnings: visit.warnings,
            gate,
        };
        return confirm::confirm(visit.session, config, inspection, confirmation, progress).await;
    }
    if request.is_inspect_only() {
        return Ok(inspected(&mut visit, &inspection, selected));
    }
    let intent = Intent::of(request, task_id, pending.as_ref(), selected);
    let mut filled = step!(
        fill_form(
            &mut visit, config, request, &intent, auto, inspection, progress
        )
        .await?
    );
    if let (true, Scope::Form(form)) = (config.screenshots, filled.scope) {
        picture(visit.session, &mut filled, form).await;
    }
    *learned = std::mem::take(&mut filled.learned);
    let decision = Decision {
        config,
        request,
        task_id,
        intent: &intent,
        progress,
        gate,
    };
    decision
        .after_fill(visit, filled.inspection, filled.scope, filled.report)
        .await
}

/// Step 3: the form the request names (`"form": N` or a CSS selector), if it names one.
async fn select_form(
    visit: &mut Visit<'_>,
    inspection: &Inspection,
    request: &FormRequest,
) -> Result<Step<Option<usize>>, BrowserError> {
    let not_found = |visit: &mut Visit<'_>, message: String| {
        let warnings = std::mem::take(&mut visit.warnings);
        let report = build_report(visit.session, visit.mark, inspection, &Scope::All, warnings);
        Err(Box::new(ask(message, report)))
    };
    Ok(match &request.form {
        None => Ok(None),
        Some(FormSelector::Index(n)) if *n < inspection.forms().len() => Ok(Some(*n)),
        Some(FormSelector::Index(n)) => {
            let count = inspection.forms().len();
            not_found(
                visit,
                format!("There is no form {n}: the page has {count} form(s), numbered from 0."),
            )
        }
        Some(FormSelector::Css(selector)) => match inspection.form_by_selector(selector).await? {
            Some(n) => Ok(Some(n)),
            None => not_found(visit, format!("No form matches the selector {selector:?}.")),
        },
    })
}

/// The answer to a request that only looks: the page's forms and fields.
fn inspected(
    visit: &mut Visit<'_>,
    inspection: &Inspection,
    selected: Option<usize>,
) -> TurnResult {
    let scope = selected.map_or(Scope::All, Scope::Form);
    let warnings = std::mem::take(&mut visit.warnings);
    let report = build_report(visit.session, visit.mark, inspection, &scope, warnings);
    let message = format!(
        "Inspected {}: {} form(s), {} field(s).",
        report.url,
        report.forms.len(),
        report.fields.len()
    );
    TurnResult {
        learned: Vec::new(),
        verdict: Verdict::Completed,
        message,
        report,
        pending: None,
    }
}

/// What the task wants of this turn besides the values: a submit (said now, or asked for
/// earlier on this task and still waiting), and the form it named.
struct Intent<'p> {
    /// Whether the turn ends in a submit (or in asking for its confirmation).
    wants_submit: bool,
    /// The form named by the request, else the one of the task's pending submit.
    selected: Option<usize>,
    /// The conversation's pending submit, whichever task holds it.
    pending: Option<&'p PendingSubmit>,
}

impl<'p> Intent<'p> {
    fn of(
        request: &FormRequest,
        task_id: &str,
        pending: Option<&'p PendingSubmit>,
        selected: Option<usize>,
    ) -> Self {
        let own_pending = pending.filter(|p| p.task_id == task_id);
        let wants_submit = request.submit.unwrap_or(own_pending.is_some());
        let selected = selected.or_else(|| own_pending.filter(|_| wants_submit).map(|p| p.form));
        Self {
            wants_submit,
            selected,
            pending,
        }
    }
}

/// What a fill leaves: the page as read back, the form filled, the report, and what the
/// conversation learned.
struct Filled {
    inspection: Inspection,
    scope: Scope,
    report: FormReport,
    learned: Vec<(String, String)>,
}

/// Step 4: matches the values (and `auto`'s) to fields, fills them, reads them back, and
/// reports what is filled, unmatched, ambiguous, invalid and missing. Ends the turn when
/// the values fit several forms equally well.
async fn fill_form(
    visit: &mut Visit<'_>,
    config: &FormsConfig,
    request: &FormRequest,
    intent: &Intent<'_>,
    auto: Option<&auto::AutoSources>,
    inspection: Inspection,
    progress: &Progress,
) -> Result<Step<Filled>, BrowserError> {
    // A date given part by part ("Day", "Month", "Year") is one value for its field.
    let gathered = gather_date_parts(request, &inspection, &mut visit.warnings);
    let request = gathered.as_ref().unwrap_or(request);
    // Auto alone names no field to choose a form by: the form it would fill most of.
    let selected = match (intent.selected, auto) {
        (None, Some(sources)) if request.values.is_empty() => {
            auto::best_form(&inspection, &inspection.form_places(), sources)
        }
        (selected, _) => selected,
    };
    let keys: Vec<&str> = request.values.iter().map(|(k, _)| k.as_str()).collect();
    let mut chosen = match choose_scope(&inspection, selected, &keys, intent.pending) {
        Ok(chosen) => chosen,
        Err(forms) => {
            let warnings = std::mem::take(&mut visit.warnings);
            let report = build_report(
                visit.session,
                visit.mark,
                &inspection,
                &Scope::All,
                warnings,
            );
            let forms: Vec<String> = forms.iter().map(|f| format!("form {f}")).collect();
            let message = format!(
                "These values fit several forms equally well ({}); add \"form\": N to say which.",
                forms.join(", ")
            );
            return Ok(Err(Box::new(ask(message, report))));
        }
    };
    let (request, autofilled) = match auto {
        Some(sources) => auto::apply(&inspection, &mut chosen, sources, request),
        None => (request.clone(), Default::default()),
    };
    let Filling {
        filled,
        fill_errors,
        assigned_fields,
        inspection,
        notes,
    } = fill::fill_values(
        visit.session,
        config,
        &request,
        &chosen,
        inspection,
        progress,
    )
    .await?;
    let scope = chosen.scope;
    let mut warnings = std::mem::take(&mut visit.warnings);
    warnings.extend(notes);
    warnings.extend(unsent_warnings(&inspection, &scope, &assigned_fields));
    let mut report = build_report(visit.session, visit.mark, &inspection, &scope, warnings);
    report.filled = filled;
    report.unmatched = chosen.matching.unmatched.clone();
    report.ambiguous = ambiguous(&chosen);
    report.missing = missing(&inspection, &scope);
    let field_errors = with_page_errors(fill_errors, &inspection, &assigned_fields);
    // What the caller gave is noted; what auto took from the notes or the profile is there
    // already.
    let learned = auto::learned(&inspection, &assigned_fields, |key| {
        field_errors.contains_key(key) || autofilled.contains_key(key)
    });
    report.field_errors = field_errors;
    report.autofilled = autofilled;
    Ok(Ok(Filled {
        inspection,
        scope,
        report,
        learned,
    }))
}

/// The keys that fit several fields equally well, as the report lists them.
fn ambiguous(chosen: &scope::Chosen) -> Vec<Ambiguous> {
    chosen
        .matching
        .ambiguous
        .iter()
        .map(|a| Ambiguous {
            key: a.key.clone(),
            candidates: a.candidates.clone(),
        })
        .collect()
}

/// The fill's errors per key, and for each other assigned key the error its field shows now.
fn with_page_errors(
    mut errors: std::collections::BTreeMap<String, String>,
    inspection: &Inspection,
    assigned_fields: &[(String, crate::inspection::FieldAt)],
) -> std::collections::BTreeMap<String, String> {
    for (key, at) in assigned_fields {
        if !errors.contains_key(key)
            && let Some(error) = inspection.field(*at).and_then(field_error)
        {
            errors.insert(key.clone(), error);
        }
    }
    errors
}

/// `request` with the parts of a date given one by one gathered into one value for its
/// field (the notes saying so go to `warnings`); `None` when no key names a part.
fn gather_date_parts(
    request: &FormRequest,
    inspection: &Inspection,
    warnings: &mut Vec<String>,
) -> Option<FormRequest> {
    let dates: Vec<(String, Vec<String>)> = inspection
        .fields()
        .into_iter()
        .filter(|(_, _, field)| field.kind == "date-parts")
        .map(|(_, _, field)| (crate::report::display_label(field), field.parts.clone()))
        .collect();
    if dates.is_empty() {
        return None;
    }
    let (values, notes) = crate::date_parts::gather(&request.values, &dates)?;
    warnings.extend(notes);
    Some(FormRequest {
        values,
        ..request.clone()
    })
}

/// Step 4b: a picture of the form as filled, which every later outcome carries (a submit
/// shows what was sent). A picture that cannot be taken is a warning, never the turn's end.
async fn picture(session: &Session, filled: &mut Filled, form: usize) {
    let started = std::time::Instant::now();
    match crate::screenshot::take(session.page(), &filled.inspection, form).await {
        Ok(shot) => {
            tracing::debug!(
                form,
                bytes = shot.png.len(),
                width = shot.width,
                height = shot.height,
                took_ms = started.elapsed().as_millis() as u64,
                "screenshot taken"
            );
            filled.report.screenshot = Some(shot);
        }
        Err(e) => filled
            .report
            .warnings
            .push(format!("no picture of the form: {e}")),
    }
}

/// Step 5, after a fill: ask for what is still needed (keeping the submit asked for), submit
/// (auto-submit, or a confirmation sent with the values), show the form ready and ask for
/// the confirmation, or report the fill alone.
struct Decision<'a> {
    config: &'a FormsConfig,
    request: &'a FormRequest,
    task_id: &'a str,
    intent: &'a Intent<'a>,
    progress: &'a Progress,
    gate: Gate,
}

impl Decision<'_> {
    async fn after_fill(
        &self,
        visit: Visit<'_>,
        inspection: Inspection,
        scope: Scope,
        mut report: FormReport,
    ) -> Result<TurnResult, BrowserError> {
        let form = match scope {
            Scope::Form(form) => Some(form),
            Scope::Outside | Scope::All => None,
        };
        let step = form.filter(|f| {
            self.intent.wants_submit
                && steps::is_step(&inspection, *f)
                && (!report.unmatched.is_empty()
                    || inspection
                        .main()
                        .is_some_and(|m| steps::shows_a_flow(&m.text)))
        });
        if step.is_some() {
            // Keys no field of this step fits wait for a later one.
            report.later = std::mem::take(&mut report.unmatched);
        }
        if report.needs_input() {
            return Ok(self.still_needed(form, report));
        }
        if !self.intent.wants_submit && !self.request.confirm {
            let message = format!(
                "Filled {} field(s); not submitted (send \"submit\": true to submit).",
                report.filled.len()
            );
            return Ok(TurnResult {
                learned: Vec::new(),
                verdict: Verdict::Completed,
                message,
                report,
                pending: None,
            });
        }
        let Some(form) = form else {
            return Ok(ask(
                "These fields are not inside a form, so there is nothing to submit.".into(),
                report,
            ));
        };
        if step.is_some() {
            return self.advance(visit, inspection, form, report).await;
        }
        // With a person to approve, the caller's confirmation only shows the form ready.
        if (self.config.auto_submit || self.request.confirm) && self.gate == Gate::Caller {
            return self.submit(visit, inspection, form, report).await;
        }
        report.pending_submit = true;
        let mut message = ready_message(form, self.gate);
        if !report.unmatched.is_empty() {
            message.push_str(&format!(
                " Note: these keys matched no field and were not used: {}.",
                report.unmatched.join(", ")
            ));
        }
        Ok(TurnResult {
            learned: Vec::new(),
            verdict: Verdict::InputRequired,
            message,
            report,
            pending: Some(PendingSubmit {
                task_id: self.task_id.to_owned(),
                form,
                shown_ready: Some(ShownForm::of(&inspection, form)),
                ..PendingSubmit::default()
            }),
        })
    }

    /// Submits `form` for this task (see [`submit`]).
    async fn submit(
        &self,
        visit: Visit<'_>,
        inspection: Inspection,
        form: usize,
        report: FormReport,
    ) -> Result<TurnResult, BrowserError> {
        let target = SubmitTarget {
            form,
            task_id: self.task_id,
        };
        let (session, mark, progress) = (visit.session, visit.mark, self.progress);
        submit(
            session,
            self.config,
            mark,
            inspection,
            target,
            report,
            progress,
        )
        .await
    }

    /// A complete step of a multi-step form: its button pressed without asking (it sends
    /// this step, not the whole form). Passed when the site moved on to a page with a form
    /// and no errors; otherwise the submit's own verdict (errors to correct, a page that
    /// did not send, or a flow that ended: submitted), the intent kept for a new try.
    async fn advance(
        &self,
        visit: Visit<'_>,
        inspection: Inspection,
        form: usize,
        report: FormReport,
    ) -> Result<TurnResult, BrowserError> {
        let passed = StepPassed {
            url: report.url.clone(),
            title: report.title.clone(),
            button: steps::submit_label(&inspection, form).unwrap_or_default(),
            filled: report.filled.iter().map(|f| f.field.clone()).collect(),
        };
        let later = report.later.clone();
        let mut result = self.submit(visit, inspection, form, report).await?;
        result.report.later = later;
        let moved_on = result.verdict == Verdict::Completed
            && result.report.outcome.as_ref().is_some_and(|o| o.navigated)
            && !result.report.forms.is_empty();
        if moved_on {
            result.verdict = Verdict::Advanced;
            result.report.steps.push(passed);
        } else if result.verdict == Verdict::InputRequired && result.pending.is_none() {
            result.pending = Some(PendingSubmit {
                task_id: self.task_id.to_owned(),
                form,
                ..PendingSubmit::default()
            });
        }
        Ok(result)
    }

    /// What the form still needs; the submit asked for waits for these answers (it is not
    /// forgotten).
    fn still_needed(&self, form: Option<usize>, report: FormReport) -> TurnResult {
        let mut message = needs_message(&report);
        let pending = form
            .filter(|_| self.intent.wants_submit)
            .map(|form| PendingSubmit {
                task_id: self.task_id.to_owned(),
                form,
                shown_ready: None,
                ..PendingSubmit::default()
            });
        if pending.is_some() {
            message.push_str(" The submit you asked for follows once they are in (send \"submit\": false to drop it).");
        }
        TurnResult {
            learned: Vec::new(),
            pending,
            ..ask(message, report)
        }
    }
}

/// Under `--approval human`: who submits, and that the caller cannot.
pub(super) const PERSON_APPROVES: &str = "A person must approve the submit on the review page (approvalUrl); a confirmation from the caller does not submit it.";

/// What a form shown ready waits for: the caller's confirmation, or a person's approval.
fn ready_message(form: usize, gate: Gate) -> String {
    match gate {
        Gate::Caller => format!(
            "Form {form} is filled and ready. Reply {{\"confirm\": true}} to submit it (nothing has been submitted)."
        ),
        Gate::Person | Gate::Approved(_) => format!(
            "Form {form} is filled and ready; nothing has been submitted. {PERSON_APPROVES}"
        ),
    }
}

/// The answer to a request without a URL in a conversation that has opened no page.
pub(crate) fn no_page_yet() -> TurnResult {
    ask(
        format!(
            "No page is open in this conversation yet. Send the page first: {}",
            crate::request::example()
        ),
        FormReport::default(),
    )
}

pub(super) fn ask(message: String, report: FormReport) -> TurnResult {
    TurnResult {
        learned: Vec::new(),
        verdict: Verdict::InputRequired,
        message,
        report,
        pending: None,
    }
}

/// The status text for a report that needs the caller.
fn needs_message(report: &FormReport) -> String {
    format!(
        "More input is needed — {}. Reply with the values, keyed by the field labels shown in the result.",
        needs(report).join("; ")
    )
}

/// What a report says the form still needs, one part per kind: missing fields, ambiguous
/// keys, invalid values, keys that matched nothing.
fn needs(report: &FormReport) -> Vec<String> {
    let mut parts = Vec::new();
    if !report.missing.is_empty() {
        parts.push(format!(
            "missing required fields: {}",
            report.missing.join(", ")
        ));
    }
    if !report.ambiguous.is_empty() {
        let list: Vec<String> = report
            .ambiguous
            .iter()
            .map(|a| format!("{:?} fits {}", a.key, a.candidates.join(" and ")))
            .collect();
        parts.push(format!(
            "ambiguous keys (use the exact label): {}",
            list.join("; ")
        ));
    }
    if !report.field_errors.is_empty() {
        parts.push(format!(
            "invalid values: {}",
            report.field_error_lines().join("; ")
        ));
    }
    if !report.unmatched.is_empty() {
        parts.push(format!(
            "keys that matched no field: {}",
            report.unmatched.join(", ")
        ));
    }
    parts
}

/// The answer when ferry's own report stops a submit: nothing is clicked, whatever the
/// browser would let through (a hidden or read-only required input, a `novalidate` form, a
/// script-driven widget). `why` opens the message; what the form needs follows. The task
/// keeps its intent; the form is not ready.
fn not_ready(report: FormReport, why: &str, form: usize, task_id: &str) -> TurnResult {
    let message = format!(
        "{why} — {}. Send what is needed; once the form is complete, ferry asks for the confirmation.",
        needs(&report).join("; ")
    );
    TurnResult {
        pending: Some(PendingSubmit {
            task_id: task_id.to_owned(),
            form,
            shown_ready: None,
            ..PendingSubmit::default()
        }),
        ..ask(message, report)
    }
}
