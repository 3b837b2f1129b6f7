//! Which form a turn is about, and what it still lacks.

use crate::inspection::{FieldAt, Inspection};
use crate::matcher::{self, Candidate};
use crate::pool::PendingSubmit;
use crate::report::display_label;
use crate::snapshot::FieldInfo;
use std::collections::BTreeMap;

/// Which fields a turn is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scope {
    /// Every field of the page.
    All,
    /// One form (global number).
    Form(usize),
    /// Fields outside any form.
    Outside,
}

impl Scope {
    pub(super) fn contains(self, form: Option<usize>) -> bool {
        match self {
            Scope::All => true,
            Scope::Form(f) => form == Some(f),
            Scope::Outside => form.is_none(),
        }
    }
}

/// The chosen scope, its candidates' places, and the matching within it.
pub(super) struct Chosen {
    /// The fields' scope.
    pub scope: Scope,
    /// Where each candidate (by its id) lives.
    pub places: Vec<FieldAt>,
    /// The matcher's verdict within the scope.
    pub matching: matcher::Matching,
}

/// Picks the form the values belong to: the selected one; else the one matching most keys
/// (then best total score); a tie between forms is returned as `Err(forms)`.
pub(super) fn choose_scope(
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
pub(super) fn missing(inspection: &Inspection, scope: &Scope) -> Vec<String> {
    inspection
        .fields()
        .into_iter()
        .filter(|(_, form, f)| {
            scope.contains(*form) && f.required && f.empty && !f.disabled && f.visible
        })
        .map(|(_, _, f)| display_label(f))
        .collect()
}

/// The errors the fields in `scope` show now, by label (see [`field_error`]).
pub(super) fn field_errors(inspection: &Inspection, scope: &Scope) -> BTreeMap<String, String> {
    inspection
        .fields()
        .into_iter()
        .filter(|(_, form, _)| scope.contains(*form))
        .filter_map(|(_, _, f)| field_error(f).map(|error| (display_label(f), error)))
        .collect()
}

/// The error a field shows: the page's own text, else the browser's validation message.
pub(super) fn field_error(field: &FieldInfo) -> Option<String> {
    field.error.clone().or_else(|| {
        (!field.valid)
            .then(|| field.validation_message.clone())
            .flatten()
    })
}

/// What the form will not send as it looks: named controls only are submitted, disabled ones
/// never, and a group whose options share one value does not say which is chosen. Fields
/// that hold a value, were filled, or are required are reported (an empty optional one
/// loses nothing).
pub(super) fn unsent_warnings(
    inspection: &Inspection,
    scope: &Scope,
    filled: &[(String, FieldAt)],
) -> Vec<String> {
    if !matches!(scope, Scope::Form(_)) {
        return Vec::new();
    }
    let mut warnings = Vec::new();
    for (at, form, field) in inspection.fields() {
        if !scope.contains(form) {
            continue;
        }
        let label = display_label(field);
        let holds = !field.empty || field.required || filled.iter().any(|(_, f)| *f == at);
        let native = matches!(field.tag.as_str(), "input" | "select" | "textarea");
        if native && field.name.is_none() && holds && !field.disabled {
            warnings.push(format!(
                "\"{label}\" has no name, so the browser will not send its value with the form"
            ));
        }
        if field.disabled && holds {
            warnings.push(format!(
                "\"{label}\" is disabled, so its value is not sent with the form"
            ));
        }
        if field.indistinct {
            warnings.push(format!(
                "the options of \"{label}\" all send the same value, so the site cannot tell which one is chosen"
            ));
        }
    }
    warnings
}
