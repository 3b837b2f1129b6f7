//! `"auto": true`: which saved value may fill an empty field, by what the field is for.
//!
//! A field's purpose is a WHATWG autofill field name (`given-name`, `postal-code`, …, see
//! [`PURPOSES`]), found the way browsers' autofill finds it:
//!
//! 1. the field's `autocomplete` attribute: its last token that names a field, after the
//!    optional `section-*`, `shipping` / `billing` and `home` / `work` / `mobile` … tokens
//!    (`autocomplete="shipping postal-code"` is `postal-code`; `off` and `on` name nothing);
//! 2. else its label, aria label, legend, placeholder, `name` or `id`, normalised like the
//!    matcher's keys, against a table of what each purpose is called in English, German,
//!    French and Spanish ("Surname", "Nachname", "Nom", "Apellido" are `family-name`);
//! 3. else nothing: a saved value whose key is a free label (not a WHATWG name) is then
//!    matched to the remaining fields by the ordinary matcher, as an explicit key would be.
//!
//! Secrets are never auto-filled, wherever the value comes from: a password field, a
//! one-time code, a card security code — by `type="password"`, by their autocomplete tokens
//! or by their names in the four languages. A card number or expiry only from a source
//! marked for cards ([`Source::cards`]). Fields the caller's explicit `values` took are not
//! touched, and neither are fields that already hold a value.

mod purposes;

pub(crate) use purposes::{PURPOSES, Purpose, Secrecy};

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use crate::matcher::{Candidate, fold_accents, match_keys, normalize};
use crate::snapshot::{FieldInfo, LabelSource};

/// Autocomplete tokens that qualify the field name after them.
const QUALIFIERS: &[&str] = &[
    "shipping", "billing", "home", "work", "mobile", "fax", "pager", "webauthn",
];

fn purpose_of_token(token: &str) -> Option<&'static Purpose> {
    PURPOSES.iter().find(|p| p.token == token)
}

/// The purpose an `autocomplete` attribute names, if any.
pub(crate) fn purpose_by_autocomplete(attribute: &str) -> Option<&'static Purpose> {
    let tokens: Vec<String> = attribute
        .split_ascii_whitespace()
        .map(str::to_ascii_lowercase)
        .collect();
    tokens
        .iter()
        .filter(|t| !t.starts_with("section-") && !QUALIFIERS.contains(&t.as_str()))
        .find_map(|t| purpose_of_token(t))
}

/// A label as the names table spells it: normalised, accents folded, and an apostrophe
/// between words ("l'entreprise", "d'adresse") a space, as the table writes elisions.
fn spelled(text: &str) -> String {
    fold_accents(&normalize(&text.replace(['\'', '\u{2019}'], " ")))
}

/// The purpose a field's label (or other name) means, strongest name first.
pub(crate) fn purpose_by_meaning(field: &FieldInfo) -> Option<&'static Purpose> {
    let texts = field
        .labels
        .iter()
        .map(|l| (l.source, l.text.as_str()))
        .chain(std::iter::once((LabelSource::Label, field.label.as_str())))
        .chain(field.name.as_deref().map(|n| (LabelSource::Name, n)))
        .chain(field.id.as_deref().map(|i| (LabelSource::Id, i)));
    let texts: Vec<&str> = texts.map(|(_, text)| text).collect();
    // A secret's name anywhere in a label makes it a secret ("Retype password", "CVV (3
    // digits)"): a wrong guess only leaves a field empty.
    for text in &texts {
        let words = format!(" {} ", spelled(text));
        if let Some(p) = PURPOSES
            .iter()
            .filter(|p| p.secrecy == Secrecy::Never)
            .find(|p| p.names.iter().any(|n| words.contains(&format!(" {n} "))))
        {
            return Some(p);
        }
    }
    for text in texts {
        for form in readings(text) {
            let compact = form.replace(' ', "");
            if let Some(p) = PURPOSES.iter().find(|p| {
                p.names
                    .iter()
                    .any(|n| *n == form || n.replace(' ', "") == compact)
            }) {
                return Some(p);
            }
        }
    }
    None
}

/// The ways a label may be read, most literal first: as it is; its core (before a
/// parenthesis, colon, slash or dash, or the first of alternatives: "Ville ou commune"); each
/// without a possessive ("Your email", "Ihre E-Mail-Adresse"); each without a word that only
/// says "the name or number of" ("Organization name", "Nom de l'entreprise", "Mobile phone
/// number", "Número de teléfono").
fn readings(text: &str) -> Vec<String> {
    let mut forms = vec![spelled(text)];
    if let Some(core) = core_of(text) {
        forms.push(spelled(core));
    }
    let unowned: Vec<String> = forms.iter().filter_map(|f| without_possessive(f)).collect();
    forms.extend(unowned);
    let bare: Vec<String> = forms.iter().filter_map(|f| without_carrier(f)).collect();
    forms.extend(bare);
    forms.retain(|f| !f.is_empty());
    forms
}

/// Words that address the reader and say nothing of the field ("Your", "Ihre", "Votre",
/// "Tu"), as a spelled label starts with them.
const POSSESSIVES: &[&str] = &[
    "your", "my", "ihre", "ihr", "deine", "dein", "meine", "mein", "votre", "vos", "ton", "ta",
    "tes", "mon", "ma", "mes", "tu", "tus", "su", "sus", "mi", "mis",
];

/// A spelled label without the possessive it starts with, if it starts with one.
fn without_possessive(spelled: &str) -> Option<String> {
    let (first, rest) = spelled.split_once(' ')?;
    (POSSESSIVES.contains(&first) && !rest.is_empty()).then(|| rest.to_owned())
}

/// Words around a field's subject that only say "its name" or "its number", as a spelled
/// label starts or ends with them.
const CARRIER_HEADS: &[&str] = &[
    "numero de la ",
    "numero de ",
    "nom de l ",
    "nom de la ",
    "nom du ",
    "nom de ",
    "nombre de la ",
    "nombre del ",
    "nombre de ",
    "name of the ",
    "name of ",
];
const CARRIER_TAILS: &[&str] = &[" name", " number", " no", " nr", " nummer"];

/// A spelled label without such words, if it has them (and something else).
fn without_carrier(spelled: &str) -> Option<String> {
    let head = CARRIER_HEADS.iter().find_map(|h| spelled.strip_prefix(h));
    let tail = CARRIER_TAILS.iter().find_map(|t| spelled.strip_suffix(t));
    head.or(tail)
        .map(str::trim)
        .filter(|rest| !rest.is_empty())
        .map(str::to_owned)
}

/// A label's core: the text before a parenthesis, colon, slash, dash or comma ("Nachname
/// (wie im Pass)", "Zip/Postal code"), or before the second of two alternatives ("Ville ou
/// commune", "Phone or email").
fn core_of(label: &str) -> Option<&str> {
    let cut = [
        "(", ":", " - ", " – ", "/", ",", " or ", " oder ", " ou ", " o ",
    ]
    .iter()
    .filter_map(|sep| label.find(sep))
    .min()?;
    let core = label[..cut].trim();
    (core.chars().count() >= 2).then_some(core)
}

/// What a field is for: its autocomplete token, else its meaning.
pub(crate) fn purpose(field: &FieldInfo) -> Option<&'static Purpose> {
    field
        .constraints
        .autocomplete
        .as_deref()
        .and_then(purpose_by_autocomplete)
        .or_else(|| purpose_by_meaning(field))
}

/// True when a field must never be auto-filled whatever its source: a password input, a
/// field whose purpose is a secret, or a secret split into boxes (a code one character a
/// box, card boxes: the page script marks them).
pub(crate) fn is_secret(field: &FieldInfo) -> bool {
    field.kind == "password"
        || (field.kind == "split" && field.secret)
        || purpose(field).is_some_and(|p| p.secrecy == Secrecy::Never)
}

/// Where auto-filled values come from, in order of preference.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Source<'a> {
    /// How the report names it: `context`, `profile:home`.
    pub name: &'a str,
    /// Its values, by WHATWG field name or free label.
    pub values: &'a BTreeMap<String, String>,
    /// Whether it may fill card numbers and expiry dates.
    pub cards: bool,
}

/// One field to fill, and from where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Planned {
    /// The candidate's id.
    pub field: usize,
    /// The value.
    pub value: String,
    /// The source's name.
    pub from: String,
}

/// The value `source` holds for `purpose`: under its own name, or one it is made of or part
/// of (a full name from its parts, the first line of an address from the street address).
fn value_for(source: &Source<'_>, purpose: &Purpose) -> Option<String> {
    let get = |k: &str| {
        source
            .values
            .get(k)
            .filter(|v| !v.trim().is_empty())
            .cloned()
    };
    if let Some(v) = get(purpose.token) {
        return Some(v);
    }
    match purpose.token {
        "name" => match (get("given-name"), get("family-name")) {
            (Some(g), Some(f)) => Some(format!("{g} {f}")),
            _ => None,
        },
        "address-line1" => get("street-address").map(|s| s.lines().next().unwrap_or("").to_owned()),
        "street-address" => get("address-line1"),
        "country-name" => get("country"),
        "country" => get("country-name"),
        "cc-exp" => match (get("cc-exp-month"), get("cc-exp-year")) {
            (Some(m), Some(y)) => Some(format!("{m}/{y}")),
            _ => None,
        },
        _ => None,
    }
}

/// Plans `auto`: a value for each empty, enabled, non-secret field of `candidates` that
/// `taken` (the fields explicit values went to) does not hold, from the first of `sources`
/// that has one. Fields with a purpose take the source's value of that purpose; the
/// sources' free labels are then matched to what is left by the ordinary matcher.
pub(crate) fn plan(
    candidates: &[Candidate<'_>],
    taken: &HashSet<usize>,
    sources: &[Source<'_>],
) -> Vec<Planned> {
    let open: Vec<&Candidate<'_>> = candidates
        .iter()
        .filter(|c| {
            let f = c.field;
            f.empty
                && !f.disabled
                && !f.read_only
                && !taken.contains(&c.id)
                && !matches!(f.kind.as_str(), "file" | "checkbox" | "checkbox-group")
                && !is_secret(f)
        })
        .collect();
    let mut planned: Vec<Planned> = Vec::new();
    let mut filled: HashSet<usize> = HashSet::new();
    for c in &open {
        let Some(purpose) = purpose(c.field) else {
            continue;
        };
        let found = sources.iter().find_map(|s| {
            if purpose.secrecy == Secrecy::Card && !s.cards {
                return None;
            }
            value_for(s, purpose).map(|v| (s.name, v))
        });
        if let Some((from, value)) = found {
            // A single-line input drops line breaks: an address's lines are joined instead.
            let value = if c.field.tag == "textarea" {
                value
            } else {
                one_line(&value)
            };
            filled.insert(c.id);
            planned.push(Planned {
                field: c.id,
                value,
                from: from.to_owned(),
            });
        }
    }
    // Free labels ("Membership number") by the matcher, over what is still open.
    for source in sources {
        let rest: Vec<Candidate<'_>> = open
            .iter()
            .filter(|c| !filled.contains(&c.id))
            .map(|c| **c)
            .collect();
        if rest.is_empty() {
            break;
        }
        let keys: Vec<&str> = source
            .values
            .iter()
            .filter(|(k, v)| purpose_of_token(k).is_none() && !v.trim().is_empty())
            .map(|(k, _)| k.as_str())
            .filter(|k| !names_a_secret(k))
            .collect();
        for a in match_keys(&keys, &rest).assigned {
            if let Some(value) = source.values.get(&a.key) {
                filled.insert(a.field);
                planned.push(Planned {
                    field: a.field,
                    value: value.clone(),
                    from: source.name.to_owned(),
                });
            }
        }
    }
    planned.sort_by_key(|p| p.field);
    planned
}

/// Text of several lines on one: `12 Main St\nFlat 3` → `12 Main St, Flat 3`.
fn one_line(text: &str) -> String {
    if !text.contains('\n') {
        return text.to_owned();
    }
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(", ")
}

/// True when a profile key names a secret: a secret's autofill name (`current-password`,
/// `one-time-code`, `cc-csc`, …) or one of its labels ("Passwort", "CVV").
pub(crate) fn is_secret_key(key: &str) -> bool {
    purpose_of_token(&key.to_ascii_lowercase()).is_some_and(|p| p.secrecy == Secrecy::Never)
        || names_a_secret(key)
}

/// True when a profile key holds a card number (`cc-number` or one of its labels).
pub(crate) fn is_card_number_key(key: &str) -> bool {
    let form = spelled(key);
    key.eq_ignore_ascii_case("cc-number")
        || purpose_of_token("cc-number").is_some_and(|p| p.names.contains(&form.as_str()))
}

/// True when a free label is one of the secrets' names ("Passwort", "CVV").
fn names_a_secret(label: &str) -> bool {
    let form = spelled(label);
    PURPOSES
        .iter()
        .filter(|p| p.secrecy == Secrecy::Never)
        .any(|p| p.names.contains(&form.as_str()))
}

#[cfg(test)]
mod tests;
