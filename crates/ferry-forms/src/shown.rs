//! The form as ferry showed it ready: what a bare `{"confirm": true}` approves.
//!
//! A confirmation is an answer to one picture of the form. If the page changed it since (a
//! script cleared a field, another turn of the conversation filled something else), the
//! caller approved something that is no longer there, so the submit waits for a new look.

use crate::inspection::Inspection;
use crate::report::display_label;
use crate::snapshot::FieldValue;

/// One field as it was shown: its label, its name and its value (passwords masked as the
/// report masks them, so a changed password of the same emptiness is not told apart).
#[derive(Debug, Clone, PartialEq, Eq)]
struct ShownField {
    label: String,
    name: Option<String>,
    value: FieldValue,
}

/// The fields of one form with their values, in page order, and the number of this showing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShownForm {
    fields: Vec<ShownField>,
    /// Unique in the process: a person's approval names the showing it approves, so an
    /// approval of an earlier picture of the same form approves nothing.
    ticket: u64,
}

/// The next showing's number.
static NEXT_TICKET: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// How the form now differs from the one shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// Fields came or went: the form is not the one shown.
    Fields,
    /// These fields (their labels) hold other values now.
    Values(Vec<String>),
}

impl ShownForm {
    /// The fields of global form `form` in `inspection`, with their values now.
    pub(crate) fn of(inspection: &Inspection, form: usize) -> ShownForm {
        let fields = inspection
            .fields()
            .into_iter()
            .filter(|(_, of, _)| *of == Some(form))
            .map(|(_, _, field)| ShownField {
                label: display_label(field),
                name: field.name.clone(),
                value: field.value.clone(),
            })
            .collect();
        let ticket = NEXT_TICKET.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        ShownForm { fields, ticket }
    }

    /// This showing's number.
    pub(crate) fn ticket(&self) -> u64 {
        self.ticket
    }

    /// What differs in `now` from what was shown; `None` when nothing does.
    pub(crate) fn change(&self, now: &ShownForm) -> Option<Change> {
        if self.fields.len() != now.fields.len()
            || self
                .fields
                .iter()
                .zip(&now.fields)
                .any(|(a, b)| a.label != b.label || a.name != b.name)
        {
            return Some(Change::Fields);
        }
        let changed: Vec<String> = self
            .fields
            .iter()
            .zip(&now.fields)
            .filter(|(a, b)| a.value != b.value)
            .map(|(a, _)| a.label.clone())
            .collect();
        (!changed.is_empty()).then_some(Change::Values(changed))
    }
}

impl Change {
    /// The change in words, for the status message.
    pub(crate) fn describe(&self) -> String {
        match self {
            Change::Fields => "its fields are not the ones shown".to_owned(),
            Change::Values(labels) => format!("these fields changed: {}", labels.join(", ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(label: &str, value: &str) -> ShownField {
        ShownField {
            label: label.into(),
            name: Some(label.to_lowercase()),
            value: FieldValue::Text(value.into()),
        }
    }

    #[test]
    fn a_changed_value_or_field_list_is_a_change() {
        let shown = ShownForm {
            fields: vec![field("Name", "Ada"), field("Email", "ada@example.com")],
            ticket: 1,
        };
        assert_eq!(shown.change(&shown.clone()), None);
        let emptied = ShownForm {
            fields: vec![field("Name", "Ada"), field("Email", "")],
            ticket: 2,
        };
        assert_eq!(
            shown.change(&emptied),
            Some(Change::Values(vec!["Email".into()]))
        );
        let grown = ShownForm {
            fields: vec![
                field("Name", "Ada"),
                field("Email", "ada@example.com"),
                field("Phone", ""),
            ],
            ticket: 2,
        };
        assert_eq!(shown.change(&grown), Some(Change::Fields));
        let renamed = ShownForm {
            fields: vec![field("Name", "Ada"), field("E-mail", "ada@example.com")],
            ticket: 2,
        };
        assert_eq!(shown.change(&renamed), Some(Change::Fields));
    }
}
