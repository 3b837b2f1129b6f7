//! One turn of the forms agent on a session: open, inspect, fill, ask, submit.
//!
//! The lifecycle (`README.md`, "The forms agent"):
//! - inspect only → COMPLETED with the fields;
//! - values given and something missing, ambiguous or invalid → INPUT_REQUIRED;
//! - all good and `submit` → INPUT_REQUIRED asking for `{"confirm": true}` (or, with
//!   `--auto-submit` or `confirm` given up front, submitted at once);
//! - `confirm` → submit, wait for the navigation or for the page to settle, re-inspect →
//!   COMPLETED, or INPUT_REQUIRED when the page now shows errors.

use crate::config::FormsConfig;
use crate::inspection::{FieldAt, Inspection};
use crate::matcher::{self, Candidate};
use crate::report::{
    Ambiguous, BlockedRequest, FieldSummary, Filled, FormReport, FormSummary, Outcome,
    display_label,
};
use crate::request::{FormRequest, FormSelector, RequestedValue};
use crate::session::{PendingSubmit, Session};
use crate::snapshot::{FieldInfo, FillOutcome};
use ferry_browser::{Allowlist, BrowserError};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How a turn ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Done (inspected, filled without submit, or submitted).
    Completed,
    /// The caller must answer (values, corrections, or the confirmation).
    InputRequired,
    /// The page could not be used (blocked, unreachable).
    Failed,
}

/// The result of a turn: the verdict, the status text, and the report.
#[derive(Debug, Clone)]
pub struct TurnResult {
    /// Final state.
    pub verdict: Verdict,
    /// The status message for the caller.
    pub message: String,
    /// The `data` artifact.
    pub report: FormReport,
    /// The pending submit to remember (replaces the previous one).
    pub pending: Option<PendingSubmit>,
}

/// What a turn needs besides the session.
pub struct TurnInput<'a> {
    /// Settings.
    pub config: &'a FormsConfig,
    /// The request.
    pub request: &'a FormRequest,
    /// The task this turn belongs to.
    pub task_id: &'a str,
    /// The conversation's pending submit.
    pub pending: Option<PendingSubmit>,
    /// Progress reports (`working` status updates).
    pub progress: &'a (dyn Fn(&str) + Send + Sync),
}

/// Runs one turn. A browser failure (crash, lost connection) is returned as the error; the
/// caller replaces the session.
pub async fn run(session: &mut Session, input: TurnInput<'_>) -> Result<TurnResult, BrowserError> {
    let TurnInput {
        config,
        request,
        task_id,
        pending,
        progress,
    } = input;
    let mark = session.blocked_mark();
    let mut warnings = Vec::new();

    // 1. The page.
    if let Some(url) = &request.url {
        if let Some(refused) = refuse_host(config, url) {
            return Ok(failed(session, mark, refused, warnings));
        }
        if session.requested_url.as_ref() != Some(url) {
            progress(&format!("opening {url}"));
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
        let report = FormReport::default();
        return Ok(TurnResult {
            verdict: Verdict::InputRequired,
            message: format!(
                "No page is open in this conversation yet. Send the page first: {}",
                crate::request::example()
            ),
            report,
            pending: None,
        });
    }

    progress("inspecting the form");
    let mut inspection = Inspection::take(session.page()).await?;
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

    // 3. Confirmation of a pending submit.
    if request.confirm && request.values.is_empty() && !request.submit {
        let Some(pending) = pending else {
            let report = build_report(session, mark, &inspection, &Scope::All, warnings);
            return Ok(ask(
                "Nothing is waiting for confirmation in this conversation. Send the values with \"submit\": true first.".into(),
                report,
            ));
        };
        return submit(
            session,
            config,
            mark,
            inspection,
            pending.form,
            None,
            warnings,
            progress,
        )
        .await;
    }

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
            verdict: Verdict::Completed,
            message,
            report,
            pending: None,
        });
    }

    // 5. Match and fill.
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
    let mut filled = Vec::new();
    let mut fill_errors: BTreeMap<String, String> = BTreeMap::new();
    let mut assigned_fields: Vec<(String, FieldAt)> = Vec::new();
    if !chosen.matching.assigned.is_empty() {
        progress(&format!(
            "filling {} field(s)",
            chosen.matching.assigned.len()
        ));
        let values: BTreeMap<&str, &RequestedValue> = request
            .values
            .iter()
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        let mut per_frame: BTreeMap<usize, Vec<(u32, serde_json::Value, String)>> = BTreeMap::new();
        for assignment in &chosen.matching.assigned {
            let at = chosen.places[assignment.field];
            let Some(field) = inspection.field(at) else {
                continue;
            };
            let Some(value) = values.get(assignment.key.as_str()) else {
                continue;
            };
            assigned_fields.push((assignment.key.clone(), at));
            filled.push(Filled {
                key: assignment.key.clone(),
                field: display_label(field),
            });
            if field.kind == "file" {
                if let Err(e) = fill_files(config, &inspection, at, field, value).await {
                    fill_errors.insert(assignment.key.clone(), e);
                }
                continue;
            }
            per_frame.entry(at.frame).or_default().push((
                field.reference,
                value.to_json(),
                assignment.key.clone(),
            ));
        }
        for (frame, list) in per_frame {
            let refs: Vec<(u32, serde_json::Value)> =
                list.iter().map(|(r, v, _)| (*r, v.clone())).collect();
            let outcomes = inspection.fill(frame, &refs).await?;
            for ((reference, value, key), outcome) in list.iter().zip(outcomes) {
                let outcome =
                    retry_by_typing(&inspection, frame, *reference, value, outcome).await?;
                if let Some(error) = outcome.error.filter(|_| !outcome.ok) {
                    fill_errors.insert(key.clone(), error);
                }
            }
        }
        tokio::time::sleep(config.settle).await;
        let before = inspection;
        inspection = Inspection::take(session.page()).await?;
        // An error text the page showed before this fill (left over from an earlier
        // submit) says nothing about the new value.
        for (_, at) in &assigned_fields {
            let old = before.field(*at).and_then(|f| f.error.clone());
            if let Some(field) = inspection.field_mut(*at)
                && old.is_some()
                && field.error == old
            {
                field.error = None;
            }
        }
    }

    // 6. What is still needed.
    let scope = chosen.scope;
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
    report.field_errors = field_errors;

    if report.needs_input() {
        let message = needs_message(&report);
        return Ok(ask(message, report));
    }
    let form = match scope {
        Scope::Form(form) => Some(form),
        Scope::Outside | Scope::All => None,
    };
    if request.submit || request.confirm {
        let Some(form) = form else {
            return Ok(ask(
                "These fields are not inside a form, so there is nothing to submit.".into(),
                report,
            ));
        };
        if config.auto_submit || request.confirm {
            return submit(
                session,
                config,
                mark,
                inspection,
                form,
                Some(report),
                Vec::new(),
                progress,
            )
            .await;
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
            verdict: Verdict::InputRequired,
            message,
            report,
            pending: Some(PendingSubmit {
                task_id: task_id.to_owned(),
                form,
            }),
        });
    }
    let message = format!(
        "Filled {} field(s); not submitted (send \"submit\": true to submit).",
        report.filled.len()
    );
    Ok(TurnResult {
        verdict: Verdict::Completed,
        message,
        report,
        pending: None,
    })
}

/// Which fields a turn is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Every field of the page.
    All,
    /// One form (global number).
    Form(usize),
    /// Fields outside any form.
    Outside,
}

impl Scope {
    fn contains(self, form: Option<usize>) -> bool {
        match self {
            Scope::All => true,
            Scope::Form(f) => form == Some(f),
            Scope::Outside => form.is_none(),
        }
    }
}

/// The chosen scope, its candidates' places, and the matching within it.
struct Chosen {
    scope: Scope,
    places: Vec<FieldAt>,
    matching: matcher::Matching,
}

/// Picks the form the values belong to: the selected one; else the one matching most keys
/// (then best total score); a tie between forms is returned as `Err(forms)`.
fn choose_scope(
    inspection: &Inspection,
    selected: Option<usize>,
    keys: &[&str],
    pending: Option<&PendingSubmit>,
) -> Result<Chosen, Vec<usize>> {
    let fields = inspection.fields();
    let run = |scope: Scope| {
        let mut places = Vec::new();
        let mut candidates = Vec::new();
        for (at, form, field) in &fields {
            if scope.contains(*form) {
                candidates.push(Candidate {
                    id: places.len(),
                    field,
                });
                places.push(*at);
            }
        }
        let matching = matcher::match_keys(keys, &candidates);
        Chosen {
            scope,
            places,
            matching,
        }
    };
    if let Some(form) = selected {
        return Ok(run(Scope::Form(form)));
    }
    let mut scopes: Vec<Scope> = (0..inspection.forms().len())
        .filter(|f| fields.iter().any(|(_, form, _)| *form == Some(*f)))
        .map(Scope::Form)
        .collect();
    if fields.iter().any(|(_, form, _)| form.is_none()) {
        scopes.push(Scope::Outside);
    }
    if scopes.len() <= 1 {
        return Ok(run(scopes.first().copied().unwrap_or(Scope::All)));
    }
    let runs: Vec<Chosen> = scopes.into_iter().map(run).collect();
    let rank = |c: &Chosen| {
        (
            c.matching.assigned.len(),
            c.matching.assigned.iter().map(|a| a.score).sum::<u32>(),
        )
    };
    let best = runs.iter().map(rank).max().unwrap_or((0, 0));
    if best.0 == 0 {
        return Ok(run(Scope::All));
    }
    let mut tied: Vec<Chosen> = runs.into_iter().filter(|c| rank(c) == best).collect();
    if tied.len() > 1 {
        // The form of a pending submit (the conversation's form) breaks the tie.
        if let Some(p) = pending
            && let Some(i) = tied.iter().position(|c| c.scope == Scope::Form(p.form))
        {
            return Ok(tied.swap_remove(i));
        }
        return Err(tied
            .iter()
            .filter_map(|c| match c.scope {
                Scope::Form(f) => Some(f),
                _ => None,
            })
            .collect());
    }
    Ok(tied.remove(0))
}

/// Required, enabled, visible fields in `scope` that hold nothing.
fn missing(inspection: &Inspection, scope: &Scope) -> Vec<String> {
    inspection
        .fields()
        .into_iter()
        .filter(|(_, form, f)| {
            scope.contains(*form) && f.required && f.empty && !f.disabled && f.visible
        })
        .map(|(_, _, f)| display_label(f))
        .collect()
}

/// The error a field shows: the page's own text, else the browser's validation message.
fn field_error(field: &FieldInfo) -> Option<String> {
    field.error.clone().or_else(|| {
        (!field.valid)
            .then(|| field.validation_message.clone())
            .flatten()
    })
}

/// The report's common part: page, forms, fields of `scope`, blocked requests.
fn build_report(
    session: &Session,
    mark: usize,
    inspection: &Inspection,
    scope: &Scope,
    warnings: Vec<String>,
) -> FormReport {
    let main = inspection.main();
    let forms = inspection
        .forms()
        .into_iter()
        .enumerate()
        .map(|(index, (frame, form))| FormSummary::new(index, form, inspection.frame_label(frame)))
        .collect();
    let show_validity = !matches!(scope, Scope::All);
    let fields = inspection
        .fields()
        .into_iter()
        .filter(|(_, form, _)| scope.contains(*form))
        .map(|(_, form, f)| FieldSummary::new(f, form, show_validity && !f.empty))
        .collect();
    FormReport {
        url: main.map(|m| m.url.clone()).unwrap_or_default(),
        title: main.map(|m| m.title.clone()).unwrap_or_default(),
        forms,
        fields,
        form_errors: inspection.form_errors(),
        blocked: blocked(session, mark),
        warnings,
        ..FormReport::default()
    }
}

fn blocked(session: &Session, mark: usize) -> Vec<BlockedRequest> {
    session
        .blocked_since(mark)
        .into_iter()
        .map(|b| BlockedRequest {
            url: b.target.clone(),
            reason: b.reason.to_string(),
        })
        .collect()
}

/// The allowlist's verdict on a URL before the browser is asked to open it.
fn refuse_host(config: &FormsConfig, url: &url::Url) -> Option<String> {
    let host = url.host_str()?;
    if config.allow_domains.is_empty() {
        return None;
    }
    let allowed = Allowlist::new(&config.allow_domains)
        .map(|list| list.allows(host))
        .unwrap_or(false);
    (!allowed).then(|| format!("blocked: {url}: {host} is not on the allowlist"))
}

/// Why the proxy refused the page's own host during this turn, if it did.
fn blocked_reason(session: &Session, mark: usize, url: &url::Url) -> Option<String> {
    let host = url
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']');
    session
        .blocked_since(mark)
        .into_iter()
        .find(|b| b.host.eq_ignore_ascii_case(host))
        .map(|b| format!("blocked: {url}: {}", b.reason))
}

fn failed(session: &Session, mark: usize, why: String, warnings: Vec<String>) -> TurnResult {
    let report = FormReport {
        blocked: blocked(session, mark),
        warnings,
        ..FormReport::default()
    };
    TurnResult {
        verdict: Verdict::Failed,
        message: why,
        report,
        pending: None,
    }
}

fn ask(message: String, report: FormReport) -> TurnResult {
    TurnResult {
        verdict: Verdict::InputRequired,
        message,
        report,
        pending: None,
    }
}

/// The status text for a report that needs the caller.
fn needs_message(report: &FormReport) -> String {
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
        let list: Vec<String> = report
            .field_errors
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        parts.push(format!("invalid values: {}", list.join("; ")));
    }
    if !report.unmatched.is_empty() {
        parts.push(format!(
            "keys that matched no field: {}",
            report.unmatched.join(", ")
        ));
    }
    format!(
        "More input is needed — {}. Reply with the values, keyed by the field labels shown in the result.",
        parts.join("; ")
    )
}

/// Types a value the page reset (frameworks that ignore the native setter).
async fn retry_by_typing(
    inspection: &Inspection,
    frame: usize,
    reference: u32,
    value: &serde_json::Value,
    outcome: FillOutcome,
) -> Result<FillOutcome, BrowserError> {
    match (outcome.retry_typing, value.as_str()) {
        (true, Some(text)) => inspection.type_into(frame, reference, text).await,
        _ => Ok(outcome),
    }
}

/// Fills a file input from the upload directory. Names only: no absolute paths, no `..`,
/// nothing that resolves outside the directory.
async fn fill_files(
    config: &FormsConfig,
    inspection: &Inspection,
    at: FieldAt,
    field: &FieldInfo,
    value: &RequestedValue,
) -> Result<(), String> {
    let Some(dir) = &config.upload_dir else {
        return Err("uploads are disabled on this server (start it with --upload-dir DIR)".into());
    };
    let names: Vec<String> = match value {
        RequestedValue::Text(name) => vec![name.clone()],
        RequestedValue::List(names) => names.clone(),
        RequestedValue::Bool(_) => return Err("a file input takes a file name".into()),
    };
    if names.len() > 1 && !field.constraints.multiple {
        return Err("this file input takes one file".into());
    }
    let mut paths: Vec<PathBuf> = Vec::new();
    for name in &names {
        paths.push(upload_path(dir, name)?);
    }
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    inspection
        .set_files(at.frame, field.reference, &refs)
        .await
        .map_err(|e| format!("could not attach the file: {e}"))
}

/// `dir/name`, if `name` is a plain file name of a regular file inside `dir`.
pub fn upload_path(dir: &Path, name: &str) -> Result<PathBuf, String> {
    let plain =
        !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0']);
    if !plain {
        return Err(format!(
            "{name:?}: give a file name inside the upload directory"
        ));
    }
    let root = dir
        .canonicalize()
        .map_err(|e| format!("upload directory: {e}"))?;
    let path = root
        .join(name)
        .canonicalize()
        .map_err(|_| format!("{name:?}: no such file in the upload directory"))?;
    if !path.starts_with(&root) || !path.is_file() {
        return Err(format!("{name:?}: not a file inside the upload directory"));
    }
    Ok(path)
}

/// Submits global form `form`, waits for the result and reports it.
#[allow(clippy::too_many_arguments)]
async fn submit(
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
            let list: Vec<String> = report
                .field_errors
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect();
            message.push_str(&format!(" — {}", list.join("; ")));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uploads_stay_inside_the_directory() {
        let dir = std::env::temp_dir().join(format!("ferry-forms-upload-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("cv.pdf"), b"%PDF").expect("file");
        assert!(upload_path(&dir, "cv.pdf").is_ok());
        for bad in [
            "",
            "..",
            "../etc/passwd",
            "/etc/passwd",
            "sub/cv.pdf",
            "nope.pdf",
        ] {
            assert!(upload_path(&dir, bad).is_err(), "{bad:?} accepted");
        }
        #[cfg(unix)]
        {
            let link = dir.join("escape");
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink("/etc/hostname", &link).expect("symlink");
            assert!(upload_path(&dir, "escape").is_err());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
