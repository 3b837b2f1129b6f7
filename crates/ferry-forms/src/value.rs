//! A value the caller gives for one field.

use serde_json::Value;

/// A value for one field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestedValue {
    /// Text fields, selects, radio groups (option value or label), file inputs (a file
    /// name inside the upload directory).
    Text(String),
    /// A checkbox.
    Bool(bool),
    /// Multi-selects, checkbox groups, multi-file inputs.
    List(Vec<String>),
}

impl RequestedValue {
    /// The value as the page script takes it.
    pub fn to_json(&self) -> Value {
        match self {
            RequestedValue::Text(s) => Value::String(s.clone()),
            RequestedValue::Bool(b) => Value::Bool(*b),
            RequestedValue::List(items) => Value::from(items.clone()),
        }
    }

    /// True when the value leaves a field empty (no text, unchecked, no items): a field
    /// given it may well be empty afterwards.
    pub fn is_empty(&self) -> bool {
        match self {
            RequestedValue::Text(s) => s.is_empty(),
            RequestedValue::Bool(b) => !b,
            RequestedValue::List(items) => items.is_empty(),
        }
    }
}
