//! Decode failures, located by the field path the JSON parser would name, and the helpers that
//! decode a field and put its name on whatever fails inside it.
//!
//! A failure is found at a leaf (a part, an enum number, a JSON number) before anyone knows
//! where that leaf sits; each enclosing message adds its field name on the way out, and the
//! public `TryFrom` turns the result into one InvalidParams [`A2aError`] with the whole path.

use crate::A2aError;
use std::borrow::Cow;
use std::fmt::Write as _;

/// Why a gRPC message does not decode, and where.
#[derive(Debug)]
pub(super) struct Invalid {
    /// The path from the failure outwards: the innermost segment first.
    path: Vec<Segment>,
    /// What is wrong there.
    reason: Cow<'static, str>,
}

/// One step of a field path.
#[derive(Debug)]
enum Segment {
    /// A message field, in its JSON (lowerCamelCase) name.
    Field(&'static str),
    /// An element of a repeated field or a list value.
    Index(usize),
    /// An entry of a map or a `Struct`.
    Key(String),
}

impl Invalid {
    /// A failure at the value being decoded.
    pub(super) fn new(reason: impl Into<Cow<'static, str>>) -> Self {
        Self {
            path: Vec::new(),
            reason: reason.into(),
        }
    }

    /// A required message that was left out.
    pub(super) fn missing(field: &'static str) -> Self {
        Self::new("required").at(field)
    }

    /// The failure sits in field `name` of the enclosing message.
    pub(super) fn at(mut self, name: &'static str) -> Self {
        self.path.push(Segment::Field(name));
        self
    }

    /// The failure sits at element `index` of a list.
    pub(super) fn at_index(mut self, index: usize) -> Self {
        self.path.push(Segment::Index(index));
        self
    }

    /// The failure sits at entry `key` of a map.
    pub(super) fn at_key(mut self, key: &str) -> Self {
        self.path.push(Segment::Key(key.to_owned()));
        self
    }

    /// The AIP-193 field path: `message.parts[2]`, `metadata.key[0]`.
    fn field_path(&self) -> String {
        let mut out = String::new();
        for segment in self.path.iter().rev() {
            match segment {
                Segment::Index(i) => {
                    let _ = write!(out, "[{i}]");
                }
                Segment::Field(name) => push_member(&mut out, name),
                Segment::Key(key) => push_member(&mut out, key),
            }
        }
        out
    }
}

fn push_member(out: &mut String, name: &str) {
    if !out.is_empty() {
        out.push('.');
    }
    out.push_str(name);
}

impl From<Invalid> for A2aError {
    fn from(e: Invalid) -> Self {
        let path = e.field_path();
        if path.is_empty() {
            return A2aError::invalid_params(e.reason);
        }
        A2aError::invalid_params(format!("invalid {path}: {}", e.reason))
            .with_violation(path, e.reason)
    }
}

/// A ferry-proto type decoded from its gRPC twin, failing with a located [`Invalid`].
pub(super) trait Decode: Sized {
    /// The prost message (or oneof) it is decoded from.
    type Pb;

    /// Decodes `pb`, moving its strings and lists.
    fn decode(pb: Self::Pb) -> Result<Self, Invalid>;
}

/// Implements the public `TryFrom<pb type> for ferry type` over [`Decode`].
macro_rules! try_from_pb {
    ($($pb:ty => $ty:ty),+ $(,)?) => {$(
        impl TryFrom<$pb> for $ty {
            type Error = $crate::A2aError;

            fn try_from(pb: $pb) -> Result<Self, $crate::A2aError> {
                <$ty as $crate::grpc::invalid::Decode>::decode(pb).map_err(Into::into)
            }
        }
    )+};
}
pub(super) use try_from_pb;

/// Decodes field `name`.
pub(super) fn field<T: Decode>(pb: T::Pb, name: &'static str) -> Result<T, Invalid> {
    T::decode(pb).map_err(|e| e.at(name))
}

/// Decodes message field `name`, which must be present.
pub(super) fn required<T: Decode>(pb: Option<T::Pb>, name: &'static str) -> Result<T, Invalid> {
    field(pb.ok_or_else(|| Invalid::missing(name))?, name)
}

/// Decodes message field `name` if it is present.
pub(super) fn optional<T: Decode>(
    pb: Option<T::Pb>,
    name: &'static str,
) -> Result<Option<T>, Invalid> {
    pb.map(|pb| field(pb, name)).transpose()
}

/// Decodes each element of repeated field `name` (into `U`: the type or an `Arc` of it).
pub(super) fn repeated<T: Decode, U: From<T>>(
    pbs: Vec<T::Pb>,
    name: &'static str,
) -> Result<Vec<U>, Invalid> {
    pbs.into_iter()
        .enumerate()
        .map(|(i, pb)| {
            T::decode(pb)
                .map(U::from)
                .map_err(|e| e.at_index(i).at(name))
        })
        .collect()
}
