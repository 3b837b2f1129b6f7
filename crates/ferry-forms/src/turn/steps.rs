//! Multi-step forms (wizards): a form whose submit leads to the next step of the same flow.
//!
//! **How a step is told from a final submit.** A form is a *step* when two things hold:
//! - the button ferry would press says only that the flow goes on: "Next", "Continue", "Save
//!   and continue", "Next step", … (and their German, French, Spanish, Italian, Dutch and
//!   Portuguese words), and nothing that sends, pays, orders, confirms, registers or
//!   finishes;
//! - and the flow shows itself: the page has a way back ("Back", "Previous", … alone on a
//!   line) or says where it is ("Step 2 of 4", "Question 3 of 10"), or the caller gave
//!   values that no field of this page takes (values for a later step).
//!
//! Anything else — no button text, "Submit", "Create account", "Accept and send", a word
//! ferry does not know, a lone page whose button says "Continue" — is a final submit, which
//! needs the confirmation (or a person's approval). The rule errs toward asking: a step taken
//! for a final submit costs one confirmation; the reverse would send a form nobody
//! approved.
//!
//! **What it does.** When the task asked for the submit (`"submit": true`) and a step is
//! complete, ferry presses its button without asking, checks that the site took it (the page
//! moved on, showing no errors and a form), and fills the next step in the same turn from the
//! values no field of the earlier steps took; values for a later step wait until that step
//! appears (`later` in the report), across turns too. The report lists the steps passed
//! (`steps`). At most [`MAX_STEPS_PER_TURN`] steps are passed in one turn.

use super::TurnResult;
use crate::flow::Flow;
use crate::inspection::Inspection;
use crate::request::FormRequest;

/// Steps passed in one turn, at most (a flow that never ends stops here and asks).
pub(crate) const MAX_STEPS_PER_TURN: usize = 10;

/// Words of a button that only moves a flow on.
const GOES_ON: [&str; 16] = [
    "next",
    "continue",
    "next step",
    "save and continue",
    "continue to next step",
    "weiter",
    "nächster schritt",
    "suivant",
    "continuer",
    "siguiente",
    "continuar",
    "avanti",
    "continua",
    "volgende",
    "verder",
    "próximo",
];

/// Words that make a button a final submit, wherever they appear in it.
const ENDS: [&str; 16] = [
    "submit", "send", "pay", "order", "buy", "purchase", "confirm", "finish", "complete",
    "register", "sign up", "apply", "book", "accept", "create", "place",
];

/// The label of the button a submit of `form` presses (its first one a person could press).
pub(super) fn submit_label(inspection: &Inspection, form: usize) -> Option<String> {
    let forms = inspection.forms();
    let (_, info) = forms.get(form)?;
    info.submit_labels.first().cloned()
}

/// Whether `form`'s button only moves a multi-step flow on (the page's part of the rule is
/// [`shows_a_flow`]).
pub(super) fn is_step(inspection: &Inspection, form: usize) -> bool {
    submit_label(inspection, form).is_some_and(|label| is_step_button(&label))
}

/// Whether a submit button labelled `label` only moves a multi-step flow on.
fn is_step_button(label: &str) -> bool {
    let words: String = label
        .to_lowercase()
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    let words = words.split_whitespace().collect::<Vec<_>>().join(" ");
    if ENDS.iter().any(|end| words.contains(end)) {
        return false;
    }
    GOES_ON.contains(&words.as_str())
}

/// Texts alone on a line that lead back to an earlier step.
const WAYS_BACK: [&str; 10] = [
    "back",
    "go back",
    "previous",
    "previous step",
    "zurück",
    "retour",
    "précédent",
    "atrás",
    "indietro",
    "terug",
];

/// Whether a page's visible text shows it is a step of a flow: a way back alone on a line,
/// or where the flow is ("Step 2 of 4").
pub(crate) fn shows_a_flow(text: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim().to_lowercase();
        WAYS_BACK.contains(&line.as_str()) || says_where(&line)
    })
}

/// "step 2 of 4", "question 3 of 10", "page 1 of 3" (and in a few other languages).
fn says_where(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    words.windows(4).any(|w| {
        [
            "step", "question", "page", "schritt", "étape", "paso", "passo", "stap",
        ]
        .contains(&w[0])
            && w[1].chars().all(|c| c.is_ascii_digit())
            && ["of", "von", "sur", "de", "di", "van"].contains(&w[2])
            && w[3].chars().all(|c| c.is_ascii_digit())
    })
}

impl Flow {
    /// `request` with the values kept for later steps added (the request's own win).
    pub(crate) fn with_later(&self, request: &FormRequest) -> FormRequest {
        let mut request = request.clone();
        for (key, value) in &self.later {
            if !request.values.iter().any(|(k, _)| k == key) {
                request.values.push((key.clone(), value.clone()));
            }
        }
        request
    }

    /// After a step was passed: the step recorded, the values it did not take kept, and the
    /// request that goes on on the next page (its values those, the submit still asked for).
    pub(crate) fn passed(&mut self, step: &TurnResult, request: &FormRequest) -> FormRequest {
        if let Some(passed) = step.report.steps.last() {
            self.steps.push(passed.clone());
            self.passed_now += 1;
        }
        self.later = request
            .values
            .iter()
            .filter(|(key, _)| step.report.later.contains(key))
            .cloned()
            .collect();
        FormRequest {
            url: None,
            values: self.later.clone(),
            submit: Some(true),
            form: None,
            ..request.clone()
        }
    }

    /// The turn's result with the flow in it: the steps passed in its report, and the flow
    /// kept with its pending submit (values for later steps only while on a step).
    pub(crate) fn finish(self, mut result: TurnResult, request: &FormRequest) -> TurnResult {
        if self.passed_now > 0 {
            result.message = format!(
                "Passed {} step(s) of the form ({}). {}",
                self.passed_now,
                self.steps[self.steps.len() - self.passed_now..]
                    .iter()
                    .map(|s| format!("{:?}", s.title))
                    .collect::<Vec<_>>()
                    .join(", "),
                result.message
            );
        }
        let mut steps = self.steps;
        steps.append(&mut result.report.steps);
        result.report.steps = steps.clone();
        let later = request
            .values
            .iter()
            .filter(|(key, _)| result.report.later.contains(key))
            .cloned()
            .collect();
        if let Some(pending) = result.pending.as_mut() {
            pending.flow = Flow {
                steps,
                later,
                passed_now: 0,
            };
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_shows_itself_by_a_way_back_or_where_it_is() {
        assert!(shows_a_flow(
            "Back\nApply for a licence\nWhat is your name?"
        ));
        assert!(shows_a_flow("Your details\nStep 2 of 4\nName"));
        assert!(shows_a_flow("Question 3 of 10"));
        assert!(!shows_a_flow("Back to the home page\nSign up"));
        assert!(!shows_a_flow("What is your date of birth?\nContinue"));
        assert!(!shows_a_flow("Step up your game: 2 of our best offers"));
    }

    #[test]
    fn only_a_button_that_just_goes_on_is_a_step() {
        for step in [
            "Continue",
            "Next",
            "Next »",
            "Save and continue",
            "Weiter",
            "Suivant →",
        ] {
            assert!(is_step_button(step), "{step}");
        }
        for last in [
            "Submit",
            "Accept and send",
            "Create account",
            "Continue to payment and pay",
            "Confirm and continue",
            "Send",
            "",
            "Go",
            "Register",
        ] {
            assert!(!is_step_button(last), "{last}");
        }
    }
}
