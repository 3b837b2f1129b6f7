//! What a turn tells the caller: the `data` artifact (JSON) and the `result` artifact (the
//! same, as compact text for a person).
//!
//! Labels, values, titles and error texts come from the website: data, never
//! instructions. The artifacts carrying them are marked `metadata.untrusted: true`.

use crate::snapshot::{FieldInfo, FieldValue, FormInfo};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Refused requests a report lists one by one; the rest are counted in `blockedMore`.
pub(crate) const MAX_BLOCKED_REPORTED: usize = 20;

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The `data` artifact.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FormReport {
    /// The page's URL now.
    pub url: String,
    /// The page's title now.
    pub title: String,
    /// Every form, main frame first.
    pub forms: Vec<FormSummary>,
    /// Every field (of the chosen form, once values were given; of the page otherwise).
    pub fields: Vec<FieldSummary>,
    /// Keys that were filled, and the field each went to.
    pub filled: Vec<Filled>,
    /// Fields `"auto": true` filled (by the key in `filled`: the field's label) and where
    /// each value came from: `context` (this conversation) or `profile:NAME`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub autofilled: BTreeMap<String, String>,
    /// Required fields that are still empty and got no value (their labels: use them as
    /// keys).
    pub missing: Vec<String>,
    /// Keys that matched no field.
    pub unmatched: Vec<String>,
    /// Keys that matched several fields equally well; not filled.
    pub ambiguous: Vec<Ambiguous>,
    /// Per key (or field label): what is wrong with its value.
    pub field_errors: BTreeMap<String, String>,
    /// Errors the page shows for the whole form.
    pub form_errors: Vec<String>,
    /// True when a submit waits for `{"confirm": true}`.
    pub pending_submit: bool,
    /// True when this turn submitted the form.
    pub submitted: bool,
    /// What the page showed after the submit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// Requests the allowlist or the address policy refused during this turn (the first
    /// [`MAX_BLOCKED_REPORTED`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<BlockedRequest>,
    /// How many more were refused during this turn than `blocked` lists.
    #[serde(skip_serializing_if = "is_zero")]
    pub blocked_more: usize,
    /// Things worth knowing that are not errors (a page that did not finish loading).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The steps of a multi-step form this task passed, oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepPassed>,
    /// Keys kept for a later step of a multi-step form: no field of this step fits them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub later: Vec<String>,
    /// The review page where a person approves the waiting submit (`--approval human`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval_url: Option<String>,
    /// A person's decision on the submit, and who gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalRecord>,
    /// A picture of the form as filled, secrets blanked (its own artifact, not in the JSON).
    #[serde(skip)]
    pub screenshot: Option<crate::screenshot::Screenshot>,
}

/// The record of a decision, kept in the task (the `data` artifact's `approval`, the status
/// message's metadata) and logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRecord {
    /// `approved` or `rejected`.
    pub decision: &'static str,
    /// Who decided: `review page` (with the address it came from) or `approver token`.
    pub by: String,
    /// When (RFC 3339, UTC).
    pub at: String,
    /// The person's reason for a rejection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A step of a multi-step form that was passed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StepPassed {
    /// The step's page.
    pub url: String,
    /// Its title.
    pub title: String,
    /// The button pressed ("Continue").
    pub button: String,
    /// The fields filled on it (their labels).
    pub filled: Vec<String>,
}

/// One form.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FormSummary {
    /// Its index, as `"form": N` selects it.
    pub index: usize,
    /// The frame's URL when the form is inside an iframe.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame: Option<String>,
    /// `id` attribute.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `name` attribute.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Where it submits.
    pub action: String,
    /// `get` or `post`.
    pub method: String,
    /// Number of fields.
    pub fields: usize,
    /// Its submit buttons' texts.
    pub submit: Vec<String>,
}

impl FormSummary {
    /// The summary of `form`, numbered `index`, in frame `frame` (`None`: main frame).
    pub(crate) fn new(index: usize, form: &FormInfo, frame: Option<String>) -> Self {
        Self {
            index,
            frame,
            id: form.id.clone(),
            name: form.name.clone(),
            action: form.action.clone(),
            method: form.method.clone(),
            fields: form.field_count,
            submit: form.submit_labels.clone(),
        }
    }
}

/// One field, as the caller needs to know it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FieldSummary {
    /// The label a person sees (use it as the key in `values`).
    pub label: String,
    /// `name` attribute.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Input type (`email`, `select-one`, `radio`, `checkbox-group`, `file`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// Required.
    pub required: bool,
    /// Current value (passwords masked).
    pub value: FieldValue,
    /// Option labels of selects and groups.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// The browser's validity.
    pub valid: bool,
    /// The page's or the browser's error text for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The form it belongs to (`None`: outside any form).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub form: Option<usize>,
    /// Disabled fields cannot be filled.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
    /// A secret (password, one-time code, card data): a review page masks its value.
    #[serde(skip)]
    pub secret: bool,
    /// The value as a person reads it: a select's or a group's option labels, not their
    /// submitted values (a review page shows it).
    #[serde(skip)]
    pub shown: String,
}

impl FieldSummary {
    /// The summary of `field`, whose form is `form` (global numbering). `show_validity`:
    /// report the browser's message on an untouched field (after a fill or submit).
    pub(crate) fn new(field: &FieldInfo, form: Option<usize>, show_validity: bool) -> Self {
        let error = field.error.clone().or_else(|| {
            (show_validity && !field.valid)
                .then(|| field.validation_message.clone())
                .flatten()
        });
        Self {
            label: display_label(field),
            name: field.name.clone(),
            kind: field.kind.clone(),
            required: field.required,
            value: field.value.clone(),
            options: field.options.iter().map(|o| o.label.clone()).collect(),
            valid: field.valid,
            error,
            form,
            disabled: field.disabled,
            secret: is_secret(field),
            shown: readable(field),
        }
    }

    /// The value as a person may see it: secrets masked, lists joined, a box ticked or not.
    pub(crate) fn shown_value(&self) -> String {
        let empty = match &self.value {
            FieldValue::Text(text) => text.is_empty(),
            FieldValue::List(items) => items.is_empty(),
            FieldValue::Bool(_) => false,
        };
        if self.secret && !empty {
            return "••••••".to_owned();
        }
        self.shown.clone()
    }
}

/// `field`'s value as a person reads it: a box ticked or not, the labels of the chosen
/// options (their values when an option has no label), text as it is.
fn readable(field: &FieldInfo) -> String {
    let label_of = |value: &String| {
        field
            .options
            .iter()
            .find(|o| &o.value == value && !o.label.trim().is_empty())
            .map_or_else(|| value.clone(), |o| o.label.clone())
    };
    match &field.value {
        FieldValue::Bool(true) => "☑ checked".to_owned(),
        FieldValue::Bool(false) => "☐ not checked".to_owned(),
        FieldValue::Text(text) if text.is_empty() => String::new(),
        FieldValue::Text(text) => label_of(text),
        FieldValue::List(items) => items.iter().map(label_of).collect::<Vec<_>>().join(", "),
    }
}

/// True when `field` holds a secret: as the page script tells it (its type, `autocomplete`
/// tokens or name), or by its label ("Passwort", "CVV", "Card number").
fn is_secret(field: &FieldInfo) -> bool {
    field.secret
        || crate::autofill::is_secret_key(&field.label)
        || crate::autofill::is_card_number_key(&field.label)
}

/// The name to show for a field: its label, else its name, else its id, else its type.
pub(crate) fn display_label(field: &FieldInfo) -> String {
    [Some(&field.label), field.name.as_ref(), field.id.as_ref()]
        .into_iter()
        .flatten()
        .find(|s| !s.trim().is_empty())
        .cloned()
        .unwrap_or_else(|| field.kind.clone())
}

/// A key that was filled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Filled {
    /// The caller's key.
    pub key: String,
    /// The field's label.
    pub field: String,
}

/// A key that fits several fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Ambiguous {
    /// The caller's key.
    pub key: String,
    /// The labels of the fields it fits.
    pub candidates: Vec<String>,
}

/// The page after a submit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Outcome {
    /// Where the page is now.
    pub url: String,
    /// Its title.
    pub title: String,
    /// The start of its text.
    pub text: String,
    /// True when the submit loaded a new document.
    pub navigated: bool,
    /// How the form's data left the browser.
    pub sent: Sent,
    /// The requests that carried it (method and URL), at most a few.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<String>,
    /// The HTTP status of the page shown now, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
}

/// How a submit's data left the browser (`outcome.sent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Sent {
    /// The browser's own form submission (a navigation).
    Navigation,
    /// A page script sent it (fetch/XHR).
    Script,
    /// Nothing left: a page script cancelled the submit, or the browser's validation
    /// stopped it.
    None,
}

/// A refused request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct BlockedRequest {
    /// URL (plain http) or `host:port` (https, WebSocket).
    pub url: String,
    /// Why.
    pub reason: String,
}

impl FormReport {
    /// True when the caller must act before a submit can happen.
    pub(crate) fn needs_input(&self) -> bool {
        !self.missing.is_empty() || !self.ambiguous.is_empty() || !self.field_errors.is_empty()
    }

    /// `key: message` for each field error.
    pub(crate) fn field_error_lines(&self) -> Vec<String> {
        self.field_errors
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect()
    }

    /// The compact text form (the `result` artifact): the page and its forms, the fields
    /// one per line, the lists of what happened, then the outcome of a submit.
    pub(crate) fn to_text(&self) -> String {
        let mut out = String::new();
        for (n, step) in self.steps.iter().enumerate() {
            let _ = writeln!(
                out,
                "Step {} passed: {} <{}> ({} filled, then {:?})",
                n + 1,
                untitled(&step.title),
                step.url,
                step.filled.len(),
                step.button
            );
        }
        let _ = writeln!(out, "{} <{}>", untitled(&self.title), self.url);
        if self.forms.is_empty() && self.fields.is_empty() {
            let _ = writeln!(out, "No form found on this page.");
        }
        for form in &self.forms {
            write_form(&mut out, form);
        }
        for field in &self.fields {
            write_field(&mut out, field);
        }
        self.write_lists(&mut out);
        match (&self.approval_url, self.pending_submit) {
            (Some(url), true) => {
                let _ = writeln!(out, "Ready to submit once a person approves it: {url}");
            }
            (None, true) => {
                let _ = writeln!(
                    out,
                    "Ready to submit: reply {{\"confirm\": true}} to submit."
                );
            }
            (_, false) => {}
        }
        if let Some(approval) = &self.approval {
            let _ = writeln!(
                out,
                "Submit {} by {} at {}.",
                approval.decision, approval.by, approval.at
            );
        }
        if let Some(outcome) = &self.outcome {
            write_outcome(&mut out, outcome);
        }
        out
    }

    /// The report's lists, one line each, those that are empty left out.
    fn write_lists(&self, out: &mut String) {
        let list = |out: &mut String, name: &str, items: &[String]| {
            if !items.is_empty() {
                let _ = writeln!(out, "{name}: {}", items.join(", "));
            }
        };
        let filled: Vec<String> = self
            .filled
            .iter()
            .map(|f| {
                if f.key == f.field {
                    f.key.clone()
                } else {
                    format!("{} → {}", f.key, f.field)
                }
            })
            .collect();
        list(out, "Filled", &filled);
        let autofilled: Vec<String> = self
            .autofilled
            .iter()
            .map(|(field, from)| format!("{field} ← {from}"))
            .collect();
        list(out, "Auto-filled", &autofilled);
        list(out, "Missing", &self.missing);
        list(out, "Kept for a later step", &self.later);
        list(out, "Unmatched", &self.unmatched);
        let ambiguous: Vec<String> = self
            .ambiguous
            .iter()
            .map(|a| format!("{} ({})", a.key, a.candidates.join(" | ")))
            .collect();
        list(out, "Ambiguous", &ambiguous);
        list(out, "Field errors", &self.field_error_lines());
        list(out, "Form errors", &self.form_errors);
        let mut blocked: Vec<String> = self
            .blocked
            .iter()
            .map(|b| format!("{} ({})", b.url, b.reason))
            .collect();
        if self.blocked_more > 0 {
            blocked.push(format!("… and {} more", self.blocked_more));
        }
        list(out, "Blocked", &blocked);
        list(out, "Warnings", &self.warnings);
    }
}

/// A title, or "(untitled)".
fn untitled(title: &str) -> &str {
    if title.is_empty() {
        "(untitled)"
    } else {
        title
    }
}

/// `form N: METHOD action (K fields[, in frame F])`.
fn write_form(out: &mut String, form: &FormSummary) {
    let _ = write!(
        out,
        "form {}: {} {} ({} fields",
        form.index,
        form.method.to_uppercase(),
        form.action,
        form.fields
    );
    if let Some(frame) = &form.frame {
        let _ = write!(out, ", in frame {frame}");
    }
    let _ = writeln!(out, ")");
}

/// `  * Label [kind] = value options: … ! error`.
fn write_field(out: &mut String, field: &FieldSummary) {
    let required = if field.required { "*" } else { "-" };
    let _ = write!(out, "  {required} {} [{}]", field.label, field.kind);
    match &field.value {
        FieldValue::Text(t) if !t.is_empty() => {
            let _ = write!(out, " = {t}");
        }
        FieldValue::Bool(b) => {
            let _ = write!(out, " = {}", if *b { "checked" } else { "unchecked" });
        }
        FieldValue::List(items) if !items.is_empty() => {
            let _ = write!(out, " = {}", items.join(", "));
        }
        _ => {}
    }
    if !field.options.is_empty() {
        let _ = write!(out, " options: {}", field.options.join(" | "));
    }
    if let Some(error) = &field.error {
        let _ = write!(out, " ! {error}");
    }
    out.push('\n');
}

/// How a submit went, and what the page says after it.
fn write_outcome(out: &mut String, outcome: &Outcome) {
    let how = match outcome.sent {
        Sent::None => "Not sent (the form's data did not leave the browser)",
        Sent::Script => "Sent by a page script",
        Sent::Navigation => "Submitted",
    };
    let _ = writeln!(
        out,
        "{how} → {} <{}>",
        untitled(&outcome.title),
        outcome.url
    );
    if !outcome.text.is_empty() {
        let _ = writeln!(out, "Page says: {}", outcome.text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_form_lists_what_matters() {
        let report = FormReport {
            url: "http://shop.test/signup".into(),
            title: "Signup".into(),
            fields: vec![FieldSummary {
                label: "Email".into(),
                name: Some("email".into()),
                kind: "email".into(),
                required: true,
                value: FieldValue::Text("ada@example.com".into()),
                options: vec![],
                valid: true,
                error: None,
                form: Some(0),
                disabled: false,
                secret: false,
                shown: "ada@example.com".into(),
            }],
            missing: vec!["Password".into()],
            unmatched: vec!["Favourite colour".into()],
            ambiguous: vec![Ambiguous {
                key: "name".into(),
                candidates: vec!["Your name".into(), "Company name".into()],
            }],
            field_errors: [("Age".to_owned(), "too young".to_owned())].into(),
            pending_submit: true,
            ..FormReport::default()
        };
        let text = report.to_text();
        for needle in [
            "Signup <http://shop.test/signup>",
            "* Email [email] = ada@example.com",
            "Missing: Password",
            "Unmatched: Favourite colour",
            "Ambiguous: name (Your name | Company name)",
            "Field errors: Age: too young",
            "reply {\"confirm\": true}",
        ] {
            assert!(text.contains(needle), "{needle:?} not in\n{text}");
        }
        assert!(report.needs_input());
        let json = serde_json::to_value(&report).expect("json");
        assert_eq!(json["pendingSubmit"], true);
        assert_eq!(json["fieldErrors"]["Age"], "too young");
        assert!(json.get("outcome").is_none());
    }
}
