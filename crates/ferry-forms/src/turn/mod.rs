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
//! [`run`] is the lifecycle; `scope` decides which form the values belong to and what is
//! still missing, `fill` puts the values in, `confirm` judges a bare confirmation, `submit`
//! submits and judges the result, and `reporting` builds the report's common part and reads
//! the proxy's refusals.

pub(crate) mod auto;
mod confirm;
mod fill;
mod reporting;
mod scope;
mod submit;

use crate::config::FormsConfig;
use crate::inspection::Inspection;
use crate::pool::PendingSubmit;
use crate::report::{Ambiguous, FormReport};
use crate::request::{FormRequest, FormSelector};
use crate::session::Session;
use crate::shown::ShownForm;
use ferry_browser::BrowserError;
use fill::Filling;
use reporting::{blocked, blocked_more, blocked_reason, build_report, refuse_host};
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
}

/// Runs one turn. A browser failure (crash, lost connection) is returned as the error; the
/// caller replaces the session.
pub(crate) async fn run(
    session: &mut Session,
    input: TurnInput<'_>,
) -> Result<TurnResult, BrowserError> {
    let mut learned = Vec::new();
    let mut result = run_turn(session, input, &mut learned).await?;
    result.learned = learned;
    Ok(result)
}

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
    } = input;
    let mark = session.blocked_mark();
    let mut warnings = Vec::new();

    // 1. The page.
    if let Some(url) = &request.url {
        if let Some(refused) = refuse_host(config, url) {
            return Ok(failed(session, mark, refused, warnings));
        }
        // The same URL again continues on the open page, unless the page has moved on since
        // it was opened (a submit went to its result page): then the form is opened again.
        let here = session.page().evaluate("location.href").await.ok();
        let moved = session.landed_url.is_none()
            || here.as_ref().and_then(|h| h.as_str()) != session.landed_url.as_deref();
        if session.requested_url.as_ref() != Some(url) || moved {
            progress.say(&format!("opening {url}")).await;
            let navigation = session
                .page()
                .navigate(url.as_str(), config.navigation_timeout)
                .await;
            session.requested_url = Some(url.clone());
            match navigation {
                Ok(()) => {}
                Err(BrowserError::LoadTimeout { after, .. }) => {
                    let _ = session.page().stop_loading().await;
                    warnings.push(format!(
                        "the page did not finish loading within {} s; inspected what had loaded",
                        after.as_secs()
                    ));
                }
                Err(BrowserError::NavigationFailed { error_text, .. }) => {
                    let why = blocked_reason(session, mark, url)
                        .unwrap_or_else(|| format!("could not open {url}: {error_text}"));
                    session.requested_url = None;
                    return Ok(failed(session, mark, why, warnings));
                }
                Err(e) => return Err(e),
            }
            if let Some(why) = blocked_reason(session, mark, url) {
                session.requested_url = None;
                return Ok(failed(session, mark, why, warnings));
            }
        }
    } else if session.requested_url.is_none() {
        return Ok(no_page_yet());
    }

    progress.say("inspecting the form").await;
    let inspection = Inspection::take(session.page()).await?;
    if request.url.is_some() {
        // Where the page is now: a later turn with the same URL continues here.
        session.landed_url = inspection.main().map(|m| m.url.clone());
    }
    // A redirect may have ended on a host the proxy refused (its 403 page is not the form).
    if let Some(landed) = inspection.main().and_then(|m| url::Url::parse(&m.url).ok())
        && let Some(why) = blocked_reason(session, mark, &landed)
    {
        session.requested_url = None;
        return Ok(failed(session, mark, why, warnings));
    }
    if inspection.main().is_some_and(|m| m.fields.is_empty()) && inspection.frames().len() == 1 {
        // A page that never finished loading and shows nothing is a failure, not a form.
        if !warnings.is_empty() {
            let why = warnings.remove(0);
            return Ok(failed(session, mark, why, warnings));
        }
    }

    if let Some(status) = inspection
        .main()
        .and_then(|m| m.http_status)
        .filter(|s| *s >= 400)
        && request.url.is_some()
    {
        let empty = inspection.forms().is_empty();
        let url = inspection.main().map(|m| m.url.clone()).unwrap_or_default();
        if empty {
            return Ok(failed(
                session,
                mark,
                format!("{url} answered HTTP {status} and shows no form"),
                warnings,
            ));
        }
        warnings.push(format!("the page answered HTTP {status}"));
    }

    // 2. Which form.
    let selected = match &request.form {
        None => None,
        Some(FormSelector::Index(n)) => {
            if *n < inspection.forms().len() {
                Some(*n)
            } else {
                let count = inspection.forms().len();
                let report = build_report(session, mark, &inspection, &Scope::All, warnings);
                return Ok(ask(
                    format!("There is no form {n}: the page has {count} form(s), numbered from 0."),
                    report,
                ));
            }
        }
        Some(FormSelector::Css(selector)) => match inspection.form_by_selector(selector).await? {
            Some(n) => Some(n),
            None => {
                let report = build_report(session, mark, &inspection, &Scope::All, warnings);
                return Ok(ask(
                    format!("No form matches the selector {selector:?}."),
                    report,
                ));
            }
        },
    };

    // 3. A confirmation alone approves the submit shown ready on this task, as it was shown.
    if request.confirm && request.values.is_empty() && request.submit != Some(true) {
        let confirmation = confirm::Confirmation {
            mark,
            pending,
            task_id,
            warnings,
        };
        return confirm::confirm(session, config, inspection, confirmation, progress).await;
    }
    // The task's intent: what it said now, else a submit it asked for earlier.
    let own_pending = pending.as_ref().filter(|p| p.task_id == task_id);
    let wants_submit = request.submit.unwrap_or(own_pending.is_some());

    // 4. Inspect only.
    if request.is_inspect_only() {
        let scope = selected.map_or(Scope::All, Scope::Form);
        let report = build_report(session, mark, &inspection, &scope, warnings);
        let message = format!(
            "Inspected {}: {} form(s), {} field(s).",
            report.url,
            report.forms.len(),
            report.fields.len()
        );
        return Ok(TurnResult {
            learned: Vec::new(),
            verdict: Verdict::Completed,
            message,
            report,
            pending: None,
        });
    }

    // 5. Match and fill (on the form of the task's pending submit, unless told otherwise).
    let selected = selected.or_else(|| own_pending.filter(|_| wants_submit).map(|p| p.form));
    // Auto alone names no field to choose a form by: the form it would fill most of.
    let selected = match (selected, auto) {
        (None, Some(sources)) if request.values.is_empty() => {
            auto::best_form(&inspection, &inspection.form_places(), sources)
        }
        (selected, _) => selected,
    };
    let keys: Vec<&str> = request.values.iter().map(|(k, _)| k.as_str()).collect();
    let chosen = match choose_scope(&inspection, selected, &keys, pending.as_ref()) {
        Ok(chosen) => chosen,
        Err(forms) => {
            let report = build_report(session, mark, &inspection, &Scope::All, warnings);
            return Ok(ask(
                format!(
                    "These values fit several forms equally well ({}); add \"form\": N to say which.",
                    forms
                        .iter()
                        .map(|f| format!("form {f}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                report,
            ));
        }
    };
    let mut chosen = chosen;
    let (request, autofilled) = match auto {
        Some(sources) => auto::apply(&inspection, &mut chosen, sources, request),
        None => (request.clone(), Default::default()),
    };
    let request = &request;
    let Filling {
        filled,
        fill_errors,
        assigned_fields,
        inspection,
    } = fill::fill_values(session, config, request, &chosen, inspection, progress).await?;

    // 6. What is still needed.
    let scope = chosen.scope;
    warnings.extend(unsent_warnings(&inspection, &scope, &assigned_fields));
    let mut report = build_report(session, mark, &inspection, &scope, warnings);
    report.filled = filled;
    report.unmatched = chosen.matching.unmatched.clone();
    report.ambiguous = chosen
        .matching
        .ambiguous
        .iter()
        .map(|a| Ambiguous {
            key: a.key.clone(),
            candidates: a.candidates.clone(),
        })
        .collect();
    report.missing = missing(&inspection, &scope);
    let mut field_errors = fill_errors;
    for (key, at) in &assigned_fields {
        if field_errors.contains_key(key) {
            continue;
        }
        if let Some(error) = inspection.field(*at).and_then(field_error) {
            field_errors.insert(key.clone(), error);
        }
    }
    // What the caller gave is noted; what auto took from the notes or the profile is there
    // already.
    *learned = auto::learned(&inspection, &assigned_fields, |key| {
        field_errors.contains_key(key) || autofilled.contains_key(key)
    });
    report.field_errors = field_errors;
    report.autofilled = autofilled;

    let form = match scope {
        Scope::Form(form) => Some(form),
        Scope::Outside | Scope::All => None,
    };
    if report.needs_input() {
        let mut message = needs_message(&report);
        // The submit asked for waits for these answers; it is not forgotten.
        let pending = form.filter(|_| wants_submit).map(|form| PendingSubmit {
            task_id: task_id.to_owned(),
            form,
            shown_ready: None,
        });
        if pending.is_some() {
            message.push_str(" The submit you asked for follows once they are in (send \"submit\": false to drop it).");
        }
        return Ok(TurnResult {
            learned: Vec::new(),
            pending,
            ..ask(message, report)
        });
    }
    if wants_submit || request.confirm {
        let Some(form) = form else {
            return Ok(ask(
                "These fields are not inside a form, so there is nothing to submit.".into(),
                report,
            ));
        };
        if config.auto_submit || request.confirm {
            let target = SubmitTarget { form, task_id };
            return submit(session, config, mark, inspection, target, report, progress).await;
        }
        report.pending_submit = true;
        let mut message = format!(
            "Form {form} is filled and ready. Reply {{\"confirm\": true}} to submit it (nothing has been submitted)."
        );
        if !report.unmatched.is_empty() {
            message.push_str(&format!(
                " Note: these keys matched no field and were not used: {}.",
                report.unmatched.join(", ")
            ));
        }
        return Ok(TurnResult {
            learned: Vec::new(),
            verdict: Verdict::InputRequired,
            message,
            report,
            pending: Some(PendingSubmit {
                task_id: task_id.to_owned(),
                form,
                shown_ready: Some(ShownForm::of(&inspection, form)),
            }),
        });
    }
    let message = format!(
        "Filled {} field(s); not submitted (send \"submit\": true to submit).",
        report.filled.len()
    );
    Ok(TurnResult {
        learned: Vec::new(),
        verdict: Verdict::Completed,
        message,
        report,
        pending: None,
    })
}

fn failed(session: &Session, mark: usize, why: String, warnings: Vec<String>) -> TurnResult {
    let report = FormReport {
        blocked: blocked(session, mark),
        blocked_more: blocked_more(session, mark),
        warnings,
        ..FormReport::default()
    };
    TurnResult {
        learned: Vec::new(),
        verdict: Verdict::Failed,
        message: why,
        report,
        pending: None,
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
        }),
        ..ask(message, report)
    }
}
