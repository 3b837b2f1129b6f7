//! What `inspect.js` reports about a page: the typed form of its JSON.
//!
//! Everything here is text from a website: data, never instructions. It leaves ferry only
//! inside artifacts marked `metadata.untrusted: true`.

use serde::{Deserialize, Serialize};

/// One inspection of a document (the page's main frame, or one cross-origin frame).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageSnapshot {
    /// `location.href` of the inspected document.
    pub url: String,
    /// `document.title`.
    #[serde(default)]
    pub title: String,
    /// The forms of this document (and of its open shadow roots), in document order; each
    /// frame is inspected on its own.
    #[serde(default)]
    pub forms: Vec<FormInfo>,
    /// Every fillable control, in document order.
    #[serde(default)]
    pub fields: Vec<FieldInfo>,
    /// Page-level error texts (visible `[role=alert]`, `.alert-danger`, …).
    #[serde(default)]
    pub form_errors: Vec<String>,
    /// The start of the page's visible text (at most 1,000 characters), for the outcome of a
    /// submit.
    #[serde(default)]
    pub text: String,
    /// The HTTP status of the document's response, when the browser knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
}

/// A `<form>` element.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FormInfo {
    /// Its position among the document's forms (0-based), as `"form": N` selects it.
    pub index: usize,
    /// `id` attribute, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `name` attribute, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The resolved `action` URL.
    #[serde(default)]
    pub action: String,
    /// `get` or `post` (or `dialog`).
    #[serde(default)]
    pub method: String,
    /// `form.noValidate`: the browser does not validate; the page usually does it in JS.
    #[serde(default)]
    pub no_validate: bool,
    /// The texts of its submit buttons, in order.
    #[serde(default)]
    pub submit_labels: Vec<String>,
    /// How many fields belong to it.
    #[serde(default)]
    pub field_count: usize,
}

/// Where a label text of a field came from, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LabelSource {
    /// The text of the elements named by `aria-labelledby`.
    AriaLabelledby,
    /// `aria-label`.
    AriaLabel,
    /// A `<label for>` or a wrapping `<label>`.
    Label,
    /// A group's `<legend>` (or the aria label of a `role=radiogroup`).
    Legend,
    /// The `title` attribute.
    Title,
    /// The `placeholder` attribute.
    Placeholder,
    /// Text just before the control (`<td>Email</td><td><input>`).
    Text,
    /// The `name` attribute.
    Name,
    /// The `id` attribute.
    Id,
}

/// One candidate name of a field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelCandidate {
    /// Where it came from.
    pub source: LabelSource,
    /// The text, whitespace collapsed, trailing `*` and `:` removed.
    pub text: String,
}

/// A field's current value: text, a checkbox's state, or the selected values of a
/// multi-select or checkbox group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FieldValue {
    /// A single checkbox.
    Bool(bool),
    /// Text-like inputs, single selects, radio groups (the checked value, or empty).
    Text(String),
    /// Multi-selects, checkbox groups, multi-file inputs (file names).
    List(Vec<String>),
}

/// An option of a select, radio group, checkbox group or datalist.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OptionInfo {
    /// The submitted value.
    pub value: String,
    /// The visible text (option text, or the radio's/checkbox's label).
    pub label: String,
    /// The `<optgroup>` label, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Currently selected / checked.
    #[serde(default)]
    pub selected: bool,
    /// Disabled option.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
}

/// HTML constraints of a field (only those present).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Constraints {
    /// `pattern`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// `min`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<String>,
    /// `max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<String>,
    /// `step`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// `minlength`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u32>,
    /// `maxlength`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u32>,
    /// `accept` (file inputs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept: Option<String>,
    /// `multiple`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub multiple: bool,
    /// `autocomplete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autocomplete: Option<String>,
}

/// One fillable control (or one radio/checkbox group).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldInfo {
    /// The handle `fill`/`element` take; valid until the document changes.
    #[serde(rename = "ref")]
    pub reference: u32,
    /// The form it belongs to (`FormInfo::index`), `None` for a control outside any form.
    #[serde(default)]
    pub form: Option<usize>,
    /// `input`, `select` or `textarea`.
    pub tag: String,
    /// `text`, `email`, `password`, `checkbox`, `checkbox-group`, `radio`, `select-one`,
    /// `select-multiple`, `file`, `textarea`, `date`, `contenteditable`, `combobox`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// `name` attribute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `id` attribute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Every label candidate, strongest source first.
    #[serde(default)]
    pub labels: Vec<LabelCandidate>,
    /// The best label for people (the first candidate's text, or name/id).
    #[serde(default)]
    pub label: String,
    /// `required` or `aria-required="true"` (for a group: any member).
    #[serde(default)]
    pub required: bool,
    /// Disabled (itself or through a disabled fieldset).
    #[serde(default)]
    pub disabled: bool,
    /// `readOnly`.
    #[serde(default)]
    pub read_only: bool,
    /// Rendered and visible (`checkVisibility`).
    #[serde(default)]
    pub visible: bool,
    /// The current value; passwords are masked (`"••••••"` when not empty).
    pub value: FieldValue,
    /// True when the field holds no value (empty text, unchecked, nothing selected).
    #[serde(default)]
    pub empty: bool,
    /// Options of selects and groups (and a datalist's suggestions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<OptionInfo>,
    /// HTML constraints.
    #[serde(default)]
    pub constraints: Constraints,
    /// `validity.valid`.
    #[serde(default = "yes")]
    pub valid: bool,
    /// The browser's `validationMessage` (localised; set on untouched required fields too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation_message: Option<String>,
    /// Error text the page shows for this field (`aria-errormessage`, `aria-describedby`
    /// with `aria-invalid`, a nearby `.error` / `[role=alert]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A radio or checkbox group whose options send the same value (typically none has a
    /// `value`, so each sends "on"): the site cannot tell which one is chosen.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub indistinct: bool,
    /// A secret (a password, a one-time code, card data: by its type, `autocomplete` tokens
    /// or name): a picture blanks it and a review masks its value.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secret: bool,
    /// For a date in parts (type `date-parts`): the role of each control in page order,
    /// `day`, `month`, `year`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<String>,
    /// The date picker library driving the field (`flatpickr`, `jquery-ui-datepicker`),
    /// when one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub widget: Option<String>,
}

fn yes() -> bool {
    true
}

/// The outcome of one assignment in `fill`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FillOutcome {
    /// The field's ref.
    #[serde(rename = "ref")]
    pub reference: u32,
    /// True when the value is in the field now.
    pub ok: bool,
    /// Why not (`no option "Atlantis"`, `rejected by the date input (expected YYYY-MM-DD)`,
    /// `the page reset the value`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The page ignored the native setter (a framework reset the value): typing it with
    /// `Input.insertText` is worth a try.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub retry_typing: bool,
    /// The field is an ARIA combobox: open it, type, and click the option (the agent's
    /// combobox flow).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub combobox: bool,
    /// The field was disabled until ferry ticked this box (its label), which enables it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled_by: Option<String>,
    /// The field is a date picker whose calendar keeps the date in page JavaScript
    /// (`flatpickr`, `jquery-ui-datepicker`): the agent sets it through the library's API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub widget: Option<String>,
}

impl FillOutcome {
    /// The value is in field `reference`.
    pub fn success(reference: u32) -> FillOutcome {
        FillOutcome {
            reference,
            ok: true,
            error: None,
            retry_typing: false,
            combobox: false,
            enabled_by: None,
            widget: None,
        }
    }

    /// The value is not in field `reference`, for `error`.
    pub fn failure(reference: u32, error: impl Into<String>) -> FillOutcome {
        FillOutcome {
            ok: false,
            error: Some(error.into()),
            ..FillOutcome::success(reference)
        }
    }
}

/// What `submit` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubmitOutcome {
    /// True when a submit was started.
    pub ok: bool,
    /// `button` (the form's own submit button was clicked) or `requestSubmit`.
    #[serde(default)]
    pub method: String,
    /// The button's text, when one was clicked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub button: Option<String>,
    /// Why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The submit event fired (false when the browser's own validation stopped it).
    #[serde(default)]
    pub dispatched: bool,
    /// A page script cancelled the submit event (`preventDefault()`).
    #[serde(default)]
    pub cancelled: bool,
}
