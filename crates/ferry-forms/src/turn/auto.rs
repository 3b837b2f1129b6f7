//! `"auto": true` inside a turn: which empty fields get a value from the conversation's
//! notes or the caller's profile (the planning is [`crate::autofill`]'s), and what a turn
//! teaches the conversation's notes.

use super::scope::Chosen;
use crate::autofill::{self, Secrecy, Source};
use crate::inspection::{FieldAt, Inspection};
use crate::matcher::{Assignment, Candidate};
use crate::report::display_label;
use crate::request::{FormRequest, RequestedValue};
use crate::snapshot::{FieldValue, LabelSource};
use std::collections::{BTreeMap, HashSet};

/// Where `auto` may take values from, in order: the conversation's notes, then the profile.
#[derive(Debug, Clone, Default)]
pub(crate) struct AutoSources {
    /// What the conversation learned.
    pub context: BTreeMap<String, String>,
    /// The profile's name and values, and whether it may fill card numbers.
    pub profile: Option<(String, BTreeMap<String, String>, bool)>,
}

impl AutoSources {
    /// The planner's view: context first, then `profile:NAME`.
    fn sources<'a>(&'a self, profile_name: &'a str) -> Vec<Source<'a>> {
        let mut sources = vec![Source {
            name: "context",
            values: &self.context,
            cards: false,
        }];
        if let Some((_, values, cards)) = &self.profile {
            sources.push(Source {
                name: profile_name,
                values,
                cards: *cards,
            });
        }
        sources
    }

    fn profile_name(&self) -> String {
        self.profile
            .as_ref()
            .map(|(name, _, _)| format!("profile:{name}"))
            .unwrap_or_default()
    }
}

/// The fields of `chosen` as the planner's candidates.
fn candidates<'a>(inspection: &'a Inspection, places: &[FieldAt]) -> Vec<Candidate<'a>> {
    places
        .iter()
        .enumerate()
        .filter_map(|(id, at)| {
            Some(Candidate {
                id,
                field: inspection.field(*at)?,
            })
        })
        .collect()
}

/// The form `auto` would fill most of, when the caller gave no key to choose one by: among
/// `forms` (each with its fields' places), the one with the most planned fields; `None` on a
/// tie or when nothing would be filled.
pub(super) fn best_form(
    inspection: &Inspection,
    forms: &[(usize, Vec<FieldAt>)],
    sources: &AutoSources,
) -> Option<usize> {
    let profile_name = sources.profile_name();
    let planned: Vec<(usize, usize)> = forms
        .iter()
        .map(|(form, places)| {
            let n = autofill::plan(
                &candidates(inspection, places),
                &HashSet::new(),
                &sources.sources(&profile_name),
            )
            .len();
            (*form, n)
        })
        .collect();
    let best = planned.iter().map(|(_, n)| *n).max().filter(|n| *n > 0)?;
    let mut winners = planned.iter().filter(|(_, n)| *n == best);
    let first = winners.next()?.0;
    winners.next().is_none().then_some(first)
}

/// Plans `auto` over `chosen` and adds each planned value to it as if the caller had given
/// it: an assignment in `chosen`, a value in the returned request. Returns that request and
/// what was auto-filled, by the key used (the field's label), with its source.
pub(super) fn apply(
    inspection: &Inspection,
    chosen: &mut Chosen,
    sources: &AutoSources,
    request: &FormRequest,
) -> (FormRequest, BTreeMap<String, String>) {
    let mut taken: HashSet<usize> = chosen.matching.assigned.iter().map(|a| a.field).collect();
    let candidates = candidates(inspection, &chosen.places);
    // A key that fits several fields was meant for one of them: auto leaves them all alone.
    let contested: HashSet<&str> = chosen
        .matching
        .ambiguous
        .iter()
        .flat_map(|a| a.candidates.iter().map(String::as_str))
        .collect();
    for c in &candidates {
        if contested.contains(display_label(c.field).as_str()) {
            taken.insert(c.id);
        }
    }
    let profile_name = sources.profile_name();
    let planned = autofill::plan(&candidates, &taken, &sources.sources(&profile_name));
    let mut augmented = request.clone();
    let mut autofilled = BTreeMap::new();
    let mut used: HashSet<String> = request.values.iter().map(|(k, _)| k.clone()).collect();
    for p in planned {
        let Some(candidate) = candidates.iter().find(|c| c.id == p.field) else {
            continue;
        };
        let label = display_label(candidate.field);
        let mut key = label.clone();
        let mut n = 2;
        while used.contains(&key) {
            key = format!("{label} ({n})");
            n += 1;
        }
        used.insert(key.clone());
        augmented
            .values
            .push((key.clone(), RequestedValue::Text(p.value)));
        chosen.matching.assigned.push(Assignment {
            key: key.clone(),
            field: p.field,
            score: 100,
            via: LabelSource::Label,
        });
        autofilled.insert(key, p.from);
    }
    (augmented, autofilled)
}

/// What a turn teaches its conversation: every field it filled (but those `skip` names: the
/// ones that failed, and what `auto` took from the notes or the profile) and the value the
/// page then holds there — the caller's value as the page took it (a phone
/// number as the site formatted it) — keyed by the field's autofill name, else by the
/// caller's key. Values the site put into fields by itself are not learned (a page must not
/// choose what fills the next one), and neither are secrets or card data.
pub(super) fn learned(
    inspection: &Inspection,
    filled: &[(String, FieldAt)],
    skip: impl Fn(&str) -> bool,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (key, at) in filled {
        let Some(field) = inspection.field(*at) else {
            continue;
        };
        let purpose = autofill::purpose(field);
        let open =
            !autofill::is_secret(field) && purpose.is_none_or(|p| p.secrecy == Secrecy::Open);
        if skip(key) || !open {
            continue;
        }
        if let FieldValue::Text(value) = &field.value
            && !value.trim().is_empty()
        {
            let name = purpose.map_or_else(|| key.clone(), |p| p.token.to_owned());
            out.push((name, value.clone()));
        }
    }
    out
}
