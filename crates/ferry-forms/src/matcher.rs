//! Matching the keys of `values` to inspected fields.
//!
//! Keys name fields the way a person would: by label, `name`, `id`, placeholder or aria
//! label; case and punctuation do not matter. Every key is compared with every label
//! candidate of every enabled field (plus the field's `name` and `id`) and gets a score:
//!
//! | score  | the key …                                                                      |
//! |--------|--------------------------------------------------------------------------------|
//! | 100    | is exactly the text of a label, aria label, `aria-labelledby` text or legend    |
//! | 90     | [normalises](normalize) to the same words as one of those                      |
//! | 85     | normalises to the same words as the `name` or `id` (`firstName` = "first name") |
//! | 80     | normalises to the same words as the placeholder, title or the preceding text, or as the core of a longer label (its text before a parenthesis, a dash or a colon: "Topics" for "Topics (select at least two) - note: …") |
//! | 89/84/79 | as for 90/85/80, but only once accents are folded (`prenom` = "Prénom")    |
//! | 50–70  | is similar enough (similarity ≥ 0.75, see below)                               |
//!
//! The fuzzy similarity is the best of: the Dice coefficient of the two word sets; the
//! edit-distance ratio (optimal string alignment, so a swapped pair of letters is one edit:
//! "Emial" ~ "Email"), with and without spaces; the key's words starting the text
//! ("email" → "Email address"); and the key's words appearing as a whole phrase in it
//! ("privacy policy" → "I accept the privacy policy"). The more of the text the key covers,
//! the higher the score of the last two. Similarity 0.75 maps to 50 and 1.0 to 70.
//!
//! A field's score for a key is the best over all its names. A disabled field is a
//! candidate only for a key that no enabled field fits at all (the fill then looks for the
//! box that enables it, and says so), and never makes a tie. Assignment is global and greedy: the strongest pair goes first, each key gets
//! at most one field and each field at most one key. Visible fields always go before
//! invisible ones: an invisible field (a honeypot, a styled-away native checkbox) only gets
//! a key that no free visible field matches at all. A key whose best score is shared by two
//! or more free visible fields is reported as ambiguous and not guessed; at equal scores the
//! unambiguous pairs are settled first, so that a stronger or equal match of another key can
//! take one of the tied fields and remove the tie. Remaining ties are settled by key order,
//! then field order, so the result is deterministic.

use serde::Serialize;

use crate::snapshot::{FieldInfo, LabelSource};

/// Exact label text.
const EXACT: u32 = 100;
/// Normalised label, aria label, `aria-labelledby` text or legend.
const LABEL: u32 = 90;
/// Normalised `name` or `id`.
const NAME: u32 = 85;
/// Normalised placeholder, title or preceding text.
const OTHER: u32 = 80;
/// The lowest fuzzy score (similarity [`THRESHOLD`]).
const FUZZY_MIN: u32 = 50;
/// The highest fuzzy score (similarity 1.0).
const FUZZY_MAX: u32 = 70;
/// Similarity below which a fuzzy comparison is no match.
const THRESHOLD: f64 = 0.75;

/// A field the keys may be matched to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Candidate<'a> {
    /// The caller's handle for the field (for example its position across all frames'
    /// snapshots); reported back as [`Assignment::field`].
    pub id: usize,
    /// The inspected field.
    pub field: &'a FieldInfo,
}

/// The outcome of [`match_keys`]: every key is in exactly one of the three lists.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Matching {
    /// The keys that got a field, in key order.
    pub assigned: Vec<Assignment>,
    /// The keys that got no field, in key order: none scored above the threshold, or every
    /// field that did went to a stronger key.
    pub unmatched: Vec<String>,
    /// The keys whose best match is shared by several visible fields, in key order.
    pub ambiguous: Vec<Ambiguity>,
}

/// One key matched to one field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Assignment {
    /// The key, as given.
    pub key: String,
    /// The [`Candidate::id`] of the field.
    pub field: usize,
    /// The match's score (100 exact label … 50 weakest fuzzy match).
    pub score: u32,
    /// Which of the field's names matched best.
    pub via: LabelSource,
}

/// A key that matches several visible fields equally well, so none was chosen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Ambiguity {
    /// The key, as given.
    pub key: String,
    /// The labels of the tied fields, in candidate order.
    pub candidates: Vec<String>,
}

/// Normalises a label, name or key for comparison.
///
/// Trailing `*`, `:`, "(required)" and "(optional)" are dropped; camelCase words, letters
/// and digits are split apart (`firstName2` → "first name 2"); everything is lower-cased;
/// apostrophes are removed (`Mother's` → "mothers"); any other character that is not a
/// letter or digit (punctuation, `_`, `-`, whitespace) separates words; words are joined by
/// single spaces. Letters of any script are kept as they are (`Prénom` → "prénom").
pub(crate) fn normalize(s: &str) -> String {
    let s = strip_decorations(s);
    let mut out = String::with_capacity(s.len());
    let mut prev: Option<char> = None;
    let mut gap = false;
    for ch in s.chars() {
        if ch == '\'' || ch == '\u{2019}' {
            continue;
        }
        if is_combining_mark(ch) {
            // Part of the previous letter (a decomposed accent); no word boundary.
            if !out.is_empty() && !gap {
                out.push(ch);
            }
            continue;
        }
        if !ch.is_alphanumeric() {
            gap = true;
            prev = None;
            continue;
        }
        if prev.is_some_and(|p| is_word_boundary(p, ch)) {
            gap = true;
        }
        if gap && !out.is_empty() {
            out.push(' ');
        }
        gap = false;
        out.extend(ch.to_lowercase());
        prev = Some(ch);
    }
    out
}

/// One key's score for each candidate. A disabled field is a key's candidate only when no
/// enabled field fits the key at all (the fill then looks for the box that enables it); it
/// never makes a tie.
fn key_scores(
    key: &Prepared,
    candidates: &[Candidate<'_>],
    names: &[Vec<(LabelSource, Prepared)>],
) -> Vec<Option<Scored>> {
    let row = |disabled: bool| -> Vec<Option<Scored>> {
        candidates
            .iter()
            .zip(names)
            .map(|(c, names)| {
                (c.field.disabled == disabled)
                    .then(|| score_field(key, names))
                    .flatten()
            })
            .collect()
    };
    let enabled = row(false);
    if enabled.iter().any(Option::is_some) {
        enabled
    } else {
        row(true)
    }
}

/// Matches `keys` to `candidates` (see the [module documentation](self) for the rules).
///
/// A disabled candidate counts only for a key no enabled field fits. The result is
/// deterministic: it depends only on the keys, the fields and their order.
pub(crate) fn match_keys<'a>(keys: &[&str], candidates: &[Candidate<'a>]) -> Matching {
    let prepared_keys: Vec<Prepared> = keys.iter().map(|k| Prepared::new(k)).collect();
    let names: Vec<Vec<(LabelSource, Prepared)>> =
        candidates.iter().map(|c| names_of(c.field)).collect();
    let scores: Vec<Vec<Option<Scored>>> = prepared_keys
        .iter()
        .map(|key| key_scores(key, candidates, &names))
        .collect();

    let mut taken = vec![false; candidates.len()];
    let mut outcomes: Vec<Option<Outcome>> = vec![None; keys.len()];
    loop {
        // The key to settle next: the strongest (visible, score), unambiguous before
        // ambiguous, then the first key.
        let mut next: Option<(Rank, usize, Best)> = None;
        for (k, outcome) in outcomes.iter_mut().enumerate() {
            if outcome.is_some() {
                continue;
            }
            let Some(best) = best_free(&scores[k], candidates, &taken) else {
                // Fields are only ever taken, never freed: this key will find none.
                *outcome = Some(Outcome::Unmatched);
                continue;
            };
            let rank = best.rank();
            if next.as_ref().is_none_or(|(r, _, _)| rank > *r) {
                next = Some((rank, k, best));
            }
        }
        let Some((_, k, best)) = next else { break };
        outcomes[k] = Some(if best.fields.len() > 1 {
            Outcome::Ambiguous(best.fields)
        } else {
            let field = best.fields[0];
            taken[field] = true;
            Outcome::Assigned {
                field,
                score: best.score,
                via: best.via,
            }
        });
    }

    let mut matching = Matching::default();
    for (key, outcome) in keys.iter().zip(outcomes) {
        let key = (*key).to_string();
        match outcome.unwrap_or(Outcome::Unmatched) {
            Outcome::Assigned { field, score, via } => matching.assigned.push(Assignment {
                key,
                field: candidates[field].id,
                score,
                via,
            }),
            Outcome::Ambiguous(fields) => matching.ambiguous.push(Ambiguity {
                key,
                candidates: fields
                    .iter()
                    .map(|&f| display_label(candidates[f].field))
                    .collect(),
            }),
            Outcome::Unmatched => matching.unmatched.push(key),
        }
    }
    matching
}

/// What became of one key.
#[derive(Debug, Clone)]
enum Outcome {
    Assigned {
        field: usize,
        score: u32,
        via: LabelSource,
    },
    Ambiguous(Vec<usize>),
    Unmatched,
}

/// A key's score for one field, and the name that gave it.
#[derive(Debug, Clone, Copy)]
struct Scored {
    score: u32,
    via: LabelSource,
}

/// (visible, score, unambiguous): the order in which keys are settled.
type Rank = (bool, u32, bool);

/// A key's best match among the free fields.
#[derive(Debug)]
struct Best {
    visible: bool,
    score: u32,
    via: LabelSource,
    /// Candidate indices: one, or the tied visible fields.
    fields: Vec<usize>,
}

impl Best {
    fn rank(&self) -> Rank {
        (self.visible, self.score, self.fields.len() == 1)
    }
}

/// The best free match of one key: visible fields first, then by score. Several visible
/// fields at the best score are all returned (a tie); of tied invisible fields, the first.
fn best_free(
    scores: &[Option<Scored>],
    candidates: &[Candidate<'_>],
    taken: &[bool],
) -> Option<Best> {
    let mut best: Option<Best> = None;
    for (c, scored) in scores.iter().enumerate() {
        let Some(scored) = scored else { continue };
        if taken[c] {
            continue;
        }
        let visible = candidates[c].field.visible;
        match &mut best {
            Some(b) if (visible, scored.score) < (b.visible, b.score) => {}
            Some(b) if (visible, scored.score) == (b.visible, b.score) => {
                if visible {
                    b.fields.push(c);
                }
            }
            _ => {
                best = Some(Best {
                    visible,
                    score: scored.score,
                    via: scored.via,
                    fields: vec![c],
                })
            }
        }
    }
    best
}

/// A text in the forms it is compared in.
#[derive(Debug, Clone)]
struct Prepared {
    /// Trimmed, as written.
    raw: String,
    /// [`normalize`]d.
    norm: String,
    /// Normalised with accents folded.
    folded: String,
}

impl Prepared {
    fn new(s: &str) -> Self {
        let norm = normalize(s);
        let folded = fold_accents(&norm);
        Prepared {
            raw: s.trim().to_string(),
            norm,
            folded,
        }
    }
}

/// All names of a field, strongest source first: its label candidates, then `name` and
/// `id`. A field without label candidates but with a `label` other than its `name` or `id`
/// gets that as its label.
fn names_of(field: &FieldInfo) -> Vec<(LabelSource, Prepared)> {
    let mut names: Vec<(LabelSource, Prepared)> = field
        .labels
        .iter()
        .map(|l| (l.source, Prepared::new(&l.text)))
        .collect();
    // The core of a long label or legend, as strong as a placeholder.
    let cores: Vec<(LabelSource, Prepared)> = field
        .labels
        .iter()
        .filter(|l| {
            matches!(
                l.source,
                LabelSource::AriaLabelledby
                    | LabelSource::AriaLabel
                    | LabelSource::Label
                    | LabelSource::Legend
            )
        })
        .filter_map(|l| label_core(&l.text))
        .map(|core| (LabelSource::Text, Prepared::new(core)))
        .collect();
    names.extend(cores);
    let label = field.label.trim();
    let is_attribute = |a: &Option<String>| a.as_deref().is_some_and(|a| a.trim() == label);
    if field.labels.is_empty()
        && !label.is_empty()
        && !is_attribute(&field.name)
        && !is_attribute(&field.id)
    {
        names.push((LabelSource::Label, Prepared::new(&field.label)));
    }
    if let Some(name) = &field.name {
        names.push((LabelSource::Name, Prepared::new(name)));
    }
    if let Some(id) = &field.id {
        names.push((LabelSource::Id, Prepared::new(id)));
    }
    names.retain(|(_, p)| !p.norm.is_empty());
    names
}

/// The text of a label before its first parenthesis, dash or colon, when that leaves a
/// shorter, non-empty name: the question without its notes.
fn label_core(label: &str) -> Option<&str> {
    let cut = [" (", "(", " - ", " – ", " — ", ": ", " / "]
        .iter()
        .filter_map(|sep| label.find(sep))
        .min()?;
    let core = label[..cut].trim();
    (core.chars().count() >= 2).then_some(core)
}

/// The best score of a key over a field's names (the first, strongest name on equal scores).
fn score_field(key: &Prepared, names: &[(LabelSource, Prepared)]) -> Option<Scored> {
    let mut best: Option<Scored> = None;
    for (source, name) in names {
        let score = score_name(key, *source, name);
        if score > 0 && best.is_none_or(|b| score > b.score) {
            best = Some(Scored {
                score,
                via: *source,
            });
        }
    }
    best
}

/// The score of a key against one name of a field (0: no match).
fn score_name(key: &Prepared, source: LabelSource, name: &Prepared) -> u32 {
    if key.norm.is_empty() || name.norm.is_empty() {
        return 0;
    }
    let tier = match source {
        LabelSource::AriaLabelledby
        | LabelSource::AriaLabel
        | LabelSource::Label
        | LabelSource::Legend => {
            if key.raw == name.raw {
                return EXACT;
            }
            LABEL
        }
        LabelSource::Name | LabelSource::Id => NAME,
        LabelSource::Title | LabelSource::Placeholder | LabelSource::Text => OTHER,
    };
    if key.norm == name.norm {
        tier
    } else if key.folded == name.folded {
        tier - 1
    } else {
        fuzzy_score(similarity(&key.folded, &name.folded))
    }
}

/// Maps a similarity to a fuzzy score: below [`THRESHOLD`] 0, then 50 to 70.
fn fuzzy_score(similarity: f64) -> u32 {
    if similarity < THRESHOLD {
        return 0;
    }
    let span = f64::from(FUZZY_MAX - FUZZY_MIN);
    let above = ((similarity - THRESHOLD) / (1.0 - THRESHOLD) * span).round();
    // `above` is within 0..=span: the cast cannot truncate.
    FUZZY_MIN + (above.clamp(0.0, span) as u32)
}

/// How similar two normalised texts are, 0.0 to 1.0 (see the module documentation).
fn similarity(key: &str, text: &str) -> f64 {
    if key.is_empty() || text.is_empty() {
        return 0.0;
    }
    let key_words = words(key);
    let text_words = words(text);
    let common = key_words.iter().filter(|w| text_words.contains(w)).count();
    let dice = 2.0 * common as f64 / (key_words.len() + text_words.len()) as f64;

    let compact = |s: &str| s.replace(' ', "");
    let edit = edit_ratio(key, text).max(edit_ratio(&compact(key), &compact(text)));

    let key_len = key.split(' ').count();
    let text_len = text.split(' ').count();
    let coverage = key_len as f64 / text_len as f64;
    let phrase = if text.starts_with(&format!("{key} ")) {
        THRESHOLD + 0.25 * coverage
    } else if format!(" {text} ").contains(&format!(" {key} ")) {
        THRESHOLD + 0.2 * coverage
    } else {
        0.0
    };
    dice.max(edit).max(phrase)
}

/// The distinct words of a normalised text, sorted.
fn words(s: &str) -> Vec<&str> {
    let mut words: Vec<&str> = s.split(' ').filter(|w| !w.is_empty()).collect();
    words.sort_unstable();
    words.dedup();
    words
}

/// 1 − edit distance / length of the longer text.
fn edit_ratio(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let longest = a.len().max(b.len());
    if longest == 0 {
        return 1.0;
    }
    1.0 - osa_distance(&a, &b) as f64 / longest as f64
}

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of
/// adjacent characters each cost 1.
fn osa_distance(a: &[char], b: &[char]) -> usize {
    let width = b.len() + 1;
    // Three rows: i-2, i-1, i.
    let mut before: Vec<usize> = vec![0; width];
    let mut prev: Vec<usize> = (0..width).collect();
    let mut cur: Vec<usize> = vec![0; width];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(before[j - 2] + 1);
            }
            cur[j] = d;
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Drops trailing whitespace, `*`, `:`, "(required)" and "(optional)", in any order.
fn strip_decorations(s: &str) -> &str {
    let mut t = s.trim();
    loop {
        let before = t.len();
        t = t.trim_end_matches(['*', ':']).trim_end();
        for suffix in ["(required)", "(optional)"] {
            if let Some(start) = t.len().checked_sub(suffix.len())
                && t.is_char_boundary(start)
                && t[start..].eq_ignore_ascii_case(suffix)
            {
                t = t[..start].trim_end();
            }
        }
        if t.len() == before {
            return t;
        }
    }
}

/// A word starts at `ch` after `prev`: lower case or digit → upper case (`firstName`,
/// `line2B`), letter → digit and digit → letter (`address2`).
fn is_word_boundary(prev: char, ch: char) -> bool {
    (ch.is_uppercase() && (prev.is_lowercase() || prev.is_numeric()))
        || (prev.is_alphabetic() && ch.is_numeric())
        || (prev.is_numeric() && ch.is_alphabetic())
}

/// Combining diacritical marks (the accents of decomposed letters).
fn is_combining_mark(ch: char) -> bool {
    matches!(ch,
        '\u{0300}'..='\u{036F}'
        | '\u{1AB0}'..='\u{1AFF}'
        | '\u{1DC0}'..='\u{1DFF}'
        | '\u{20D0}'..='\u{20FF}'
        | '\u{FE20}'..='\u{FE2F}')
}

/// Folds the accented Latin letters of a lower-case text to plain ones (`é` → `e`,
/// `ß` → `ss`, `æ` → `ae`) and drops combining marks.
pub(crate) fn fold_accents(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        if is_combining_mark(ch) {
            continue;
        }
        let plain = match ch {
            'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' => "a",
            'æ' => "ae",
            'ç' | 'ć' | 'ĉ' | 'ċ' | 'č' => "c",
            'ď' | 'đ' | 'ð' => "d",
            'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ĕ' | 'ė' | 'ę' | 'ě' => "e",
            'ĝ' | 'ğ' | 'ġ' | 'ģ' => "g",
            'ĥ' | 'ħ' => "h",
            'ì' | 'í' | 'î' | 'ï' | 'ĩ' | 'ī' | 'ĭ' | 'į' | 'ı' => "i",
            'ĵ' => "j",
            'ķ' => "k",
            'ĺ' | 'ļ' | 'ľ' | 'ŀ' | 'ł' => "l",
            'ñ' | 'ń' | 'ņ' | 'ň' => "n",
            'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ŏ' | 'ő' => "o",
            'œ' => "oe",
            'ŕ' | 'ŗ' | 'ř' => "r",
            'ś' | 'ŝ' | 'ş' | 'š' | 'ș' => "s",
            'ß' => "ss",
            'ţ' | 'ť' | 'ŧ' | 'ț' => "t",
            'þ' => "th",
            'ù' | 'ú' | 'û' | 'ü' | 'ũ' | 'ū' | 'ŭ' | 'ů' | 'ű' | 'ų' => "u",
            'ŵ' => "w",
            'ý' | 'ÿ' | 'ŷ' => "y",
            'ź' | 'ż' | 'ž' => "z",
            _ => {
                out.push(ch);
                continue;
            }
        };
        out.push_str(plain);
    }
    out
}

/// The text people know a field by: its label, else its first label candidate, `name`, `id`
/// or, failing all, its ref.
fn display_label(field: &FieldInfo) -> String {
    [Some(field.label.as_str())]
        .into_iter()
        .chain(field.labels.iter().map(|l| Some(l.text.as_str())))
        .chain([field.name.as_deref(), field.id.as_deref()])
        .flatten()
        .map(str::trim)
        .find(|s| !s.is_empty())
        .map_or_else(|| format!("ref {}", field.reference), str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::LabelCandidate;

    /// A visible, enabled text field under construction.
    struct F(FieldInfo);

    impl F {
        fn new() -> Self {
            F(serde_json::from_value(serde_json::json!({
                "ref": 0, "tag": "input", "type": "text", "value": "", "visible": true,
            }))
            .expect("a minimal field"))
        }
        fn with(mut self, source: LabelSource, text: &str) -> Self {
            self.0.labels.push(LabelCandidate {
                source,
                text: text.to_string(),
            });
            self
        }
        fn name(mut self, name: &str) -> Self {
            self.0.name = Some(name.to_string());
            self
        }
        fn id(mut self, id: &str) -> Self {
            self.0.id = Some(id.to_string());
            self
        }
        fn hidden(mut self) -> Self {
            self.0.visible = false;
            self
        }
        fn disabled(mut self) -> Self {
            self.0.disabled = true;
            self
        }
        fn build(mut self) -> FieldInfo {
            self.0.label = self
                .0
                .labels
                .first()
                .map(|l| l.text.clone())
                .or_else(|| self.0.name.clone())
                .or_else(|| self.0.id.clone())
                .unwrap_or_default();
            self.0
        }
    }

    /// A field with a `<label>`.
    fn labelled(text: &str) -> F {
        F::new().with(LabelSource::Label, text)
    }

    /// Runs the matcher with `Candidate::id` = position.
    fn run(keys: &[&str], fields: &[FieldInfo]) -> Matching {
        let candidates: Vec<Candidate<'_>> = fields
            .iter()
            .enumerate()
            .map(|(id, field)| Candidate { id, field })
            .collect();
        match_keys(keys, &candidates)
    }

    /// (key, field) of every assignment.
    fn pairs(m: &Matching) -> Vec<(&str, usize)> {
        m.assigned
            .iter()
            .map(|a| (a.key.as_str(), a.field))
            .collect()
    }

    /// The single assignment of a one-key run.
    fn only(keys: &[&str], fields: &[FieldInfo]) -> Assignment {
        let m = run(keys, fields);
        assert_eq!(m.assigned.len(), 1, "{m:?}");
        m.assigned[0].clone()
    }

    /// The score of one key against one field (0: no match).
    fn score(key: &str, field: FieldInfo) -> u32 {
        run(&[key], &[field])
            .assigned
            .first()
            .map_or(0, |a| a.score)
    }

    #[test]
    fn normalize_lowercases_and_splits_words() {
        assert_eq!(normalize("Email Address"), "email address");
        assert_eq!(normalize("firstName"), "first name");
        assert_eq!(normalize("first_name"), "first name");
        assert_eq!(normalize("first-name"), "first name");
        assert_eq!(normalize("userID"), "user id");
        assert_eq!(normalize("URLs"), "urls");
        assert_eq!(normalize("EMAIL"), "email");
        assert_eq!(normalize("address2"), "address 2");
        assert_eq!(normalize("user[email]"), "user email");
        assert_eq!(normalize("  Full   name\t"), "full name");
        assert_eq!(normalize("Mother's maiden name"), "mothers maiden name");
        assert_eq!(normalize("Mother’s maiden name"), "mothers maiden name");
        assert_eq!(normalize("E-mail / phone"), "e mail phone");
    }

    #[test]
    fn normalize_drops_required_markers() {
        assert_eq!(normalize("Email *"), "email");
        assert_eq!(normalize("Email:"), "email");
        assert_eq!(normalize("Email: *"), "email");
        assert_eq!(normalize("Email (required)"), "email");
        assert_eq!(normalize("Email (Required) *"), "email");
        assert_eq!(normalize("Phone (optional):"), "phone");
        assert_eq!(normalize("(optional)"), "");
        assert_eq!(
            normalize("Reason (optional) for contact"),
            "reason optional for contact"
        );
    }

    #[test]
    fn normalize_keeps_unicode_letters() {
        assert_eq!(normalize("Prénom"), "prénom");
        assert_eq!(normalize("ÉCOLE"), "école");
        assert_eq!(normalize("Straße"), "straße");
        assert_eq!(normalize("Имя пользователя"), "имя пользователя");
        assert_eq!(normalize("名前"), "名前");
        // A decomposed accent stays with its letter.
        assert_eq!(normalize("Pre\u{301}nom"), "pre\u{301}nom");
        assert_eq!(normalize(""), "");
        assert_eq!(normalize(" *: "), "");
    }

    #[test]
    fn folding_and_distance_helpers() {
        assert_eq!(fold_accents("prénom"), "prenom");
        assert_eq!(fold_accents("straße"), "strasse");
        assert_eq!(fold_accents("pre\u{301}nom"), "prenom");
        let d = |a: &str, b: &str| {
            osa_distance(
                &a.chars().collect::<Vec<_>>(),
                &b.chars().collect::<Vec<_>>(),
            )
        };
        assert_eq!(d("emial", "email"), 1);
        assert_eq!(d("kitten", "sitting"), 3);
        assert_eq!(d("", "abc"), 3);
        assert_eq!(d("abc", ""), 3);
        assert_eq!(d("same", "same"), 0);
    }

    #[test]
    fn exact_label_scores_100() {
        let a = only(&["Email"], &[labelled("Email").build()]);
        assert_eq!((a.score, a.via), (100, LabelSource::Label));
        for source in [
            LabelSource::AriaLabel,
            LabelSource::AriaLabelledby,
            LabelSource::Legend,
        ] {
            assert_eq!(score("Email", F::new().with(source, "Email").build()), 100);
        }
    }

    #[test]
    fn normalised_label_scores_90() {
        assert_eq!(
            score("email address", labelled("Email address").build()),
            90
        );
        assert_eq!(
            score("EMAIL-ADDRESS:", labelled("Email address").build()),
            90
        );
        let a = only(
            &["phone"],
            &[F::new().with(LabelSource::AriaLabel, "Phone").build()],
        );
        assert_eq!((a.score, a.via), (90, LabelSource::AriaLabel));
        let a = only(
            &["contact method"],
            &[F::new().with(LabelSource::Legend, "Contact method").build()],
        );
        assert_eq!((a.score, a.via), (90, LabelSource::Legend));
    }

    #[test]
    fn name_and_id_score_85() {
        let a = only(&["email"], &[F::new().name("email").build()]);
        assert_eq!((a.score, a.via), (85, LabelSource::Name));
        let a = only(&["user email"], &[F::new().id("user_email").build()]);
        assert_eq!((a.score, a.via), (85, LabelSource::Id));
        // The name/id candidates inspect.js also reports score the same.
        assert_eq!(
            score("zip", F::new().with(LabelSource::Name, "zip").build()),
            85
        );
    }

    #[test]
    fn placeholder_title_and_preceding_text_score_80() {
        for source in [
            LabelSource::Placeholder,
            LabelSource::Title,
            LabelSource::Text,
        ] {
            let a = only(&["city"], &[F::new().with(source, "City").build()]);
            assert_eq!((a.score, a.via), (80, source));
        }
    }

    #[test]
    fn best_name_of_a_field_counts() {
        // Placeholder "Email" (80) and name "email" (85): the name wins.
        let a = only(
            &["email"],
            &[F::new()
                .with(LabelSource::Placeholder, "Email")
                .name("email")
                .build()],
        );
        assert_eq!((a.score, a.via), (85, LabelSource::Name));
        // Equal scores: the strongest source is reported.
        let a = only(
            &["email"],
            &[F::new()
                .with(LabelSource::AriaLabel, "EMAIL")
                .with(LabelSource::Label, "Email")
                .build()],
        );
        assert_eq!((a.score, a.via), (90, LabelSource::AriaLabel));
    }

    #[test]
    fn camel_case_names_match_labels_both_ways() {
        let a = only(&["firstName"], &[labelled("First name").build()]);
        assert_eq!(a.score, 90);
        let a = only(&["First name"], &[F::new().name("firstName").build()]);
        assert_eq!((a.score, a.via), (85, LabelSource::Name));
        let a = only(&["last_name"], &[F::new().id("last-name").build()]);
        assert_eq!(a.score, 85);
    }

    #[test]
    fn typos_match_fuzzily() {
        let fields = [labelled("Email").build(), labelled("Phone").build()];
        let m = run(&["Emial", "Phnoe"], &fields);
        assert_eq!(pairs(&m), [("Emial", 0), ("Phnoe", 1)]);
        assert!(
            m.assigned.iter().all(|a| (50..=70).contains(&a.score)),
            "{m:?}"
        );
        assert_eq!(score("Frist name", labelled("First name").build()), 62);
        // "E-mail" is "email" without the hyphen.
        assert_eq!(score("email", labelled("E-mail").build()), 70);
    }

    #[test]
    fn a_key_matches_the_core_of_a_long_legend() {
        let fields = [
            F::new()
                .with(
                    LabelSource::Legend,
                    "Topics (select at least two) - note: you can change them later",
                )
                .build(),
            labelled("Email").build(),
        ];
        let a = only(&["Topics"], &fields);
        assert_eq!(a.field, 0);
        assert_eq!(a.score, OTHER);
        assert_eq!(label_core("Email"), None);
        assert_eq!(
            label_core("Date of birth (DD/MM/YYYY)"),
            Some("Date of birth")
        );
    }

    #[test]
    fn prefix_matches_fuzzily() {
        let a = only(&["email"], &[labelled("Email address").build()]);
        assert_eq!((a.score, a.via), (60, LabelSource::Label));
        assert!(score("zip", labelled("Zip or postal code").build()) >= 50);
        // Only the key's words starting the label: a label inside the key is no match.
        assert_eq!(score("email address", labelled("Email").build()), 0);
        assert_eq!(score("name of company", labelled("Name").build()), 0);
    }

    #[test]
    fn whole_phrase_containment_matches_fuzzily() {
        let a = only(
            &["privacy policy"],
            &[labelled("I accept the privacy policy").build()],
        );
        assert!((50..=70).contains(&a.score), "{a:?}");
        // Whole words only.
        assert_eq!(
            score(
                "policy",
                labelled("I accept the policyholder terms").build()
            ),
            0
        );
        // A name with a prefix.
        assert!(score("email", F::new().name("txtEmail").build()) >= 50);
    }

    #[test]
    fn dissimilar_keys_are_unmatched() {
        let fields = [
            labelled("Full name").build(),
            labelled("Email address").build(),
            labelled("Country").build(),
        ];
        let m = run(&["Favourite colour", "age"], &fields);
        assert!(m.assigned.is_empty(), "{m:?}");
        assert!(m.ambiguous.is_empty());
        assert_eq!(m.unmatched, ["Favourite colour", "age"]);
    }

    #[test]
    fn honeypot_does_not_win_over_the_visible_field() {
        let fields = [
            F::new().name("email").id("email").hidden().build(),
            labelled("Email address").name("contact_addr").build(),
        ];
        let m = run(&["email"], &fields);
        assert_eq!(pairs(&m), [("email", 1)]);
        assert!(m.unmatched.is_empty() && m.ambiguous.is_empty());
    }

    #[test]
    fn invisible_field_matches_when_no_visible_field_does() {
        // A styled checkbox whose native input is not rendered.
        let fields = [
            labelled("Email").build(),
            labelled("I agree to the terms")
                .name("terms")
                .hidden()
                .build(),
        ];
        let m = run(&["Email", "terms"], &fields);
        assert_eq!(pairs(&m), [("Email", 0), ("terms", 1)]);
        // Tied invisible fields are not ambiguous: the first one is taken.
        let fields = [
            F::new().name("token").hidden().build(),
            F::new().name("token").hidden().build(),
        ];
        let m = run(&["token"], &fields);
        assert_eq!(pairs(&m), [("token", 0)]);
    }

    #[test]
    fn disabled_fields_are_candidates_only_when_nothing_else_fits() {
        // Alone, it is the key's field (the fill then looks for what enables it).
        let fields = [labelled("Email").disabled().build()];
        let m = run(&["Email"], &fields);
        assert_eq!(pairs(&m), [("Email", 0)]);
        let fields = [
            labelled("Email").disabled().build(),
            labelled("Email address").build(),
        ];
        let m = run(&["Email"], &fields);
        assert_eq!(pairs(&m), [("Email", 1)]);
        // A disabled field cannot make a tie either.
        let fields = [
            labelled("Your name").build(),
            labelled("Company name").disabled().build(),
        ];
        let m = run(&["name"], &fields);
        assert_eq!(pairs(&m), [("name", 0)]);
    }

    #[test]
    fn equal_best_scores_on_visible_fields_are_ambiguous() {
        let fields = [
            labelled("Your name").build(),
            labelled("Company name").build(),
            labelled("I accept the privacy policy").build(),
        ];
        let m = run(&["name", "privacy policy"], &fields);
        assert_eq!(
            m.ambiguous,
            [Ambiguity {
                key: "name".into(),
                candidates: vec!["Your name".into(), "Company name".into()],
            }]
        );
        assert_eq!(pairs(&m), [("privacy policy", 2)]);
        assert!(m.unmatched.is_empty());
    }

    #[test]
    fn a_hidden_field_does_not_make_a_tie() {
        let fields = [
            labelled("Email").build(),
            labelled("Email").hidden().build(),
        ];
        let m = run(&["Email"], &fields);
        assert_eq!(pairs(&m), [("Email", 0)]);
        assert!(m.ambiguous.is_empty());
    }

    #[test]
    fn exact_beats_fuzzy() {
        let fields = [labelled("Company name").build(), labelled("Name").build()];
        let m = run(&["name"], &fields);
        assert_eq!(pairs(&m), [("name", 1)]);
        assert_eq!(m.assigned[0].score, 90);
        let m = run(&["Name"], &fields);
        assert_eq!(m.assigned[0].score, 100);
    }

    #[test]
    fn a_stronger_key_elsewhere_breaks_a_tie() {
        let fields = [
            labelled("Your name").build(),
            labelled("Company name").build(),
        ];
        for keys in [["name", "company"], ["company", "name"]] {
            let m = run(&keys, &fields);
            let mut got = pairs(&m);
            got.sort();
            assert_eq!(got, [("company", 1), ("name", 0)], "{keys:?}: {m:?}");
            assert!(m.ambiguous.is_empty() && m.unmatched.is_empty());
        }
        // An exact match of another key takes one of the tied fields.
        let m = run(&["name", "Company name"], &fields);
        assert_eq!(pairs(&m), [("name", 0), ("Company name", 1)]);
        // A weaker key does not: the tie is decided first, then the weaker key gets its
        // field.
        let m = run(&["name", "the company name"], &fields);
        assert_eq!(m.ambiguous.len(), 1, "{m:?}");
        assert_eq!(pairs(&m), [("the company name", 1)]);
        assert_eq!(m.assigned[0].score, 54);
    }

    #[test]
    fn one_field_per_key_and_one_key_per_field() {
        // Both keys want the same field; the stronger one gets it.
        let fields = [labelled("Email").build()];
        let m = run(&["e-mail", "email"], &fields);
        assert_eq!(pairs(&m), [("email", 0)]);
        assert_eq!(m.unmatched, ["e-mail"]);
        // Same key twice: the second takes the next field.
        let fields = [labelled("Email").build(), labelled("Email address").build()];
        let m = run(&["Email", "Email"], &fields);
        assert_eq!(pairs(&m), [("Email", 0), ("Email", 1)]);
        // The greedy assignment is global: "Email" goes to its exact field even though
        // "email" comes first and also likes it.
        let fields = [
            labelled("Email").build(),
            labelled("Email confirmation").build(),
        ];
        let m = run(&["email", "Email"], &fields);
        assert_eq!(pairs(&m), [("email", 1), ("Email", 0)]);
        let fields = [labelled("Email").build(), labelled("Confirm email").build()];
        let m = run(&["Confirm email", "Email"], &fields);
        assert_eq!(pairs(&m), [("Confirm email", 1), ("Email", 0)]);
    }

    #[test]
    fn reports_the_callers_ids() {
        let a = labelled("Email").build();
        let b = labelled("Phone").build();
        let candidates = [
            Candidate { id: 41, field: &a },
            Candidate { id: 7, field: &b },
        ];
        let m = match_keys(&["phone", "Email"], &candidates);
        assert_eq!(pairs(&m), [("phone", 7), ("Email", 41)]);
    }

    #[test]
    fn results_are_deterministic_and_complete() {
        let fields = [
            labelled("Your name").build(),
            labelled("Company name").build(),
            labelled("Email address").name("email").build(),
            F::new().name("email").hidden().build(),
            labelled("Phone").disabled().build(),
            labelled("Country").build(),
            labelled("I accept the privacy policy").build(),
        ];
        let keys = [
            "name",
            "email",
            "phone",
            "Country",
            "privacy policy",
            "",
            "colour",
        ];
        let first = run(&keys, &fields);
        for _ in 0..20 {
            assert_eq!(run(&keys, &fields), first);
        }
        // Every key lands in exactly one list.
        let mut seen: Vec<&str> = first
            .assigned
            .iter()
            .map(|a| a.key.as_str())
            .chain(first.unmatched.iter().map(String::as_str))
            .chain(first.ambiguous.iter().map(|a| a.key.as_str()))
            .collect();
        seen.sort();
        let mut all = keys.to_vec();
        all.sort();
        assert_eq!(seen, all);
        // The disabled "Phone" is the only field "phone" fits: the fill will try to enable it.
        assert_eq!(
            pairs(&first),
            [
                ("email", 2),
                ("phone", 4),
                ("Country", 5),
                ("privacy policy", 6)
            ]
        );
        assert_eq!(first.unmatched, ["", "colour"]);
        assert_eq!(first.ambiguous.len(), 1);
    }

    #[test]
    fn unicode_and_accents() {
        assert_eq!(score("Prénom", labelled("Prénom").build()), 100);
        assert_eq!(score("prénom", labelled("Prénom").build()), 90);
        // Folded accents: one below the tier.
        assert_eq!(score("prenom", labelled("Prénom").build()), 89);
        assert_eq!(score("Prenom", F::new().name("prénom").build()), 84);
        assert_eq!(
            score(
                "strasse",
                F::new().with(LabelSource::Placeholder, "Straße").build()
            ),
            79
        );
        assert_eq!(score("Pre\u{301}nom", labelled("Prénom").build()), 89);
        assert_eq!(score("имя", labelled("Имя").build()), 90);
        // The accented exact match wins over the folded one.
        let fields = [labelled("Pais").build(), labelled("País").build()];
        let m = run(&["país"], &fields);
        assert_eq!(pairs(&m), [("país", 1)]);
        // Fuzzy comparison with accents folded.
        assert!(
            score(
                "adresse electronique",
                labelled("Adresse électronique *").build()
            ) >= 89
        );
        assert!(
            score(
                "numero de telephone",
                labelled("Numéro de téléphone").build()
            ) >= 79
        );
    }

    #[test]
    fn empty_keys_match_nothing() {
        let fields = [labelled("Email").build(), F::new().build()];
        let m = run(&["", "   ", "*", "(required)"], &fields);
        assert!(m.assigned.is_empty() && m.ambiguous.is_empty(), "{m:?}");
        assert_eq!(m.unmatched, ["", "   ", "*", "(required)"]);
        assert_eq!(run(&[], &fields), Matching::default());
        assert_eq!(run(&["Email"], &[]).unmatched, ["Email"]);
    }

    #[test]
    fn a_bare_label_counts_as_a_label() {
        // No label candidates, only `label` (not just a copy of the name).
        let mut field = F::new().name("em").build();
        field.label = "Email".into();
        let a = only(&["email"], &[field]);
        assert_eq!((a.score, a.via), (90, LabelSource::Label));
    }

    #[test]
    fn ambiguity_labels_fall_back_to_name_and_ref() {
        let mut nameless = F::new().build();
        nameless.reference = 9;
        let named = F::new().name("code").build();
        assert_eq!(display_label(&named), "code");
        assert_eq!(display_label(&nameless), "ref 9");
    }

    #[test]
    fn serializes_in_camel_case() {
        let m = run(&["Email", "x"], &[labelled("Email").build()]);
        assert_eq!(
            serde_json::to_value(&m).expect("serializable"),
            serde_json::json!({
                "assigned": [{"key": "Email", "field": 0, "score": 100, "via": "label"}],
                "unmatched": ["x"],
                "ambiguous": [],
            })
        );
    }
}
