//! A task shaped for an answer: history cut to the most recent messages, artifacts left out
//! unless asked for (`historyLength`, `includeArtifacts`; spec §4.10, §4.11).
//!
//! There is one serialization of [`Task`]: its derive. [`TaskView`] runs that derive through
//! a serializer that drops the `artifacts` member or the oldest history messages as they go
//! by, so a field added to `Task` appears in every shaped answer without being named here,
//! and nothing is cloned to shape it.

use crate::Task;
#[cfg(feature = "grpc")]
use crate::{Artifact, Message};
use serde::Serialize;
use serde::ser::{self, Impossible, SerializeSeq, SerializeStruct, Serializer};
#[cfg(feature = "grpc")]
use std::sync::Arc;

/// A borrowed task with its answer's shape; serializing it copies nothing.
#[derive(Debug, Clone, Copy)]
pub struct TaskView<'a> {
    task: &'a Task,
    history_length: Option<usize>,
    with_artifacts: bool,
}

impl Task {
    /// This task shaped for an answer: at most `history_length` of the most recent history
    /// messages (`None`: all; 0 or less: none), artifacts only when `with_artifacts`.
    ///
    /// ```
    /// # use ferry_proto::{Message, Task, TaskState, TaskStatus};
    /// let mut task = Task::new("t-1", "c-1", TaskStatus::now(TaskState::Working, None));
    /// task.history = vec![
    ///     Message::user("m-1", vec![]).into(),
    ///     Message::user("m-2", vec![]).into(),
    /// ];
    /// let shaped = serde_json::to_value(task.view(Some(1), false))?;
    /// assert_eq!(shaped["history"][0]["messageId"], "m-2");
    /// assert_eq!(shaped["history"].as_array().map(Vec::len), Some(1));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn view(&self, history_length: Option<i32>, with_artifacts: bool) -> TaskView<'_> {
        TaskView {
            task: self,
            history_length: history_length.map(|n| usize::try_from(n).unwrap_or(0)),
            with_artifacts,
        }
    }

    /// An owned copy of [`Task::view`], for answers that hold tasks by value (ListTasks).
    pub fn shaped(&self, history_length: Option<i32>, with_artifacts: bool) -> Task {
        let keep = history_length.map_or(self.history.len(), |n| {
            usize::try_from(n).unwrap_or(0).min(self.history.len())
        });
        Task {
            id: self.id.clone(),
            context_id: self.context_id.clone(),
            status: self.status.clone(),
            artifacts: if with_artifacts {
                self.artifacts.clone()
            } else {
                Vec::new()
            },
            history: self.history[self.history.len() - keep..].to_vec(),
            metadata: self.metadata.clone(),
        }
    }
}

impl<'a> TaskView<'a> {
    /// How many of the most recent history messages the answer keeps.
    fn kept(&self) -> usize {
        self.history_length
            .map_or(self.task.history.len(), |n| n.min(self.task.history.len()))
    }

    /// The task, and what of its history and artifacts the answer carries: for encoders that
    /// build the answer field by field (the gRPC binding's), where serializing the view is not
    /// how the answer is made.
    #[cfg(feature = "grpc")]
    pub(crate) fn shown(&self) -> (&'a Task, &'a [Arc<Message>], &'a [Arc<Artifact>]) {
        let history = &self.task.history[self.task.history.len() - self.kept()..];
        let artifacts: &'a [Arc<Artifact>] = if self.with_artifacts {
            &self.task.artifacts
        } else {
            &[]
        };
        (self.task, history, artifacts)
    }
}

impl Serialize for TaskView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.task.serialize(Shaping {
            inner: s,
            keep: self.kept(),
            with_artifacts: self.with_artifacts,
        })
    }
}

/// Serializes a `Task` struct, shaping two of its members.
struct Shaping<S> {
    inner: S,
    keep: usize,
    with_artifacts: bool,
}

/// `SerializeStruct` of a shaped task.
struct ShapingStruct<S> {
    inner: S,
    keep: usize,
    with_artifacts: bool,
}

impl<S: SerializeStruct> SerializeStruct for ShapingStruct<S> {
    type Ok = S::Ok;
    type Error = S::Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), S::Error> {
        match key {
            "artifacts" if !self.with_artifacts => self.inner.skip_field(key),
            "history" if self.keep == 0 => self.inner.skip_field(key),
            "history" => self.inner.serialize_field(
                key,
                &LastOf {
                    value,
                    keep: self.keep,
                },
            ),
            _ => self.inner.serialize_field(key, value),
        }
    }

    fn skip_field(&mut self, key: &'static str) -> Result<(), S::Error> {
        self.inner.skip_field(key)
    }

    fn end(self) -> Result<S::Ok, S::Error> {
        self.inner.end()
    }
}

/// The last `keep` elements of a serialized sequence.
struct LastOf<'a, T: ?Sized> {
    value: &'a T,
    keep: usize,
}

impl<T: Serialize + ?Sized> Serialize for LastOf<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(Tail {
            inner: s,
            keep: self.keep,
        })
    }
}

/// Serializes a sequence without its first elements.
struct Tail<S> {
    inner: S,
    keep: usize,
}

/// `SerializeSeq` that drops `skip` elements before passing the rest on.
struct TailSeq<S> {
    inner: S,
    skip: usize,
}

impl<S: SerializeSeq> SerializeSeq for TailSeq<S> {
    type Ok = S::Ok;
    type Error = S::Error;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S::Error> {
        if self.skip > 0 {
            self.skip -= 1;
            Ok(())
        } else {
            self.inner.serialize_element(value)
        }
    }

    fn end(self) -> Result<S::Ok, S::Error> {
        self.inner.end()
    }
}

/// The error for a shape this serializer was not written for (a `Task` is a struct and its
/// history a sequence; anything else is a bug in this module).
fn unexpected<E: ser::Error>(what: &str) -> E {
    E::custom(format!("task view: unexpected {what}"))
}

/// Implements every `Serializer` method but the one a wrapper handles as an error.
macro_rules! only {
    ($($method:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {$(
        fn $method(self, $($arg: $ty),*) -> Result<$ret, Self::Error> {
            let _ = ($($arg,)*);
            Err(unexpected(stringify!($method)))
        }
    )*};
}

/// The `Serializer` methods neither wrapper expects, each an error.
macro_rules! unexpected_methods {
    () => {
        only! {
            serialize_bool(v: bool) -> Self::Ok;
            serialize_i8(v: i8) -> Self::Ok;
            serialize_i16(v: i16) -> Self::Ok;
            serialize_i32(v: i32) -> Self::Ok;
            serialize_i64(v: i64) -> Self::Ok;
            serialize_u8(v: u8) -> Self::Ok;
            serialize_u16(v: u16) -> Self::Ok;
            serialize_u32(v: u32) -> Self::Ok;
            serialize_u64(v: u64) -> Self::Ok;
            serialize_f32(v: f32) -> Self::Ok;
            serialize_f64(v: f64) -> Self::Ok;
            serialize_char(v: char) -> Self::Ok;
            serialize_str(v: &str) -> Self::Ok;
            serialize_bytes(v: &[u8]) -> Self::Ok;
            serialize_none() -> Self::Ok;
            serialize_unit() -> Self::Ok;
            serialize_unit_struct(name: &'static str) -> Self::Ok;
            serialize_unit_variant(name: &'static str, index: u32, variant: &'static str) -> Self::Ok;
            serialize_tuple(len: usize) -> Self::SerializeTuple;
            serialize_tuple_struct(name: &'static str, len: usize) -> Self::SerializeTupleStruct;
            serialize_tuple_variant(name: &'static str, index: u32, variant: &'static str, len: usize) -> Self::SerializeTupleVariant;
            serialize_map(len: Option<usize>) -> Self::SerializeMap;
            serialize_struct_variant(name: &'static str, index: u32, variant: &'static str, len: usize) -> Self::SerializeStructVariant;
        }

        fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<Self::Ok, Self::Error> {
            Err(unexpected("option"))
        }

        fn serialize_newtype_struct<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: &T,
        ) -> Result<Self::Ok, Self::Error> {
            Err(unexpected("newtype"))
        }

        fn serialize_newtype_variant<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<Self::Ok, Self::Error> {
            Err(unexpected("variant"))
        }
    };
}

impl<S: Serializer> Serializer for Shaping<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Impossible<S::Ok, S::Error>;
    type SerializeTuple = Impossible<S::Ok, S::Error>;
    type SerializeTupleStruct = Impossible<S::Ok, S::Error>;
    type SerializeTupleVariant = Impossible<S::Ok, S::Error>;
    type SerializeMap = Impossible<S::Ok, S::Error>;
    type SerializeStruct = ShapingStruct<S::SerializeStruct>;
    type SerializeStructVariant = Impossible<S::Ok, S::Error>;

    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        Ok(ShapingStruct {
            inner: self.inner.serialize_struct(name, len)?,
            keep: self.keep,
            with_artifacts: self.with_artifacts,
        })
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        Err(unexpected("sequence"))
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }

    unexpected_methods!();
}

impl<S: Serializer> Serializer for Tail<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = TailSeq<S::SerializeSeq>;
    type SerializeTuple = Impossible<S::Ok, S::Error>;
    type SerializeTupleStruct = Impossible<S::Ok, S::Error>;
    type SerializeTupleVariant = Impossible<S::Ok, S::Error>;
    type SerializeMap = Impossible<S::Ok, S::Error>;
    type SerializeStruct = Impossible<S::Ok, S::Error>;
    type SerializeStructVariant = Impossible<S::Ok, S::Error>;

    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        let len = len.ok_or_else(|| unexpected("sequence of unknown length"))?;
        let keep = self.keep.min(len);
        Ok(TailSeq {
            inner: self.inner.serialize_seq(Some(keep))?,
            skip: len - keep,
        })
    }

    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        Err(unexpected("struct"))
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }

    unexpected_methods!();
}

#[cfg(test)]
mod tests {
    use crate::{Artifact, Message, Part, Task, TaskState, TaskStatus};
    use serde_json::{Value, json};

    fn task() -> Task {
        let mut t = Task::new("t-1", "c-1", TaskStatus::now(TaskState::Working, None));
        t.history = (1..=3)
            .map(|i| Message::user(format!("m-{i}"), vec![Part::text("x")]).into())
            .collect();
        t.artifacts = vec![Artifact::new("a", "a", vec![Part::text("y")]).into()];
        t.metadata = Some(json!({"k": 1}).as_object().cloned().unwrap_or_default());
        t
    }

    fn ids(v: &Value) -> Vec<&str> {
        v["history"]
            .as_array()
            .map(|h| h.iter().filter_map(|m| m["messageId"].as_str()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn an_unshaped_view_is_the_task() {
        let t = task();
        let view = serde_json::to_value(t.view(None, true)).expect("view");
        assert_eq!(view, serde_json::to_value(&t).expect("task"));
        assert_eq!(
            serde_json::to_value(t.shaped(None, true)).expect("shaped"),
            view
        );
    }

    #[test]
    fn history_is_cut_from_the_front_and_artifacts_are_optional() {
        let t = task();
        for (n, want) in [
            (Some(0), vec![]),
            (Some(-1), vec![]),
            (Some(2), vec!["m-2", "m-3"]),
            (Some(9), vec!["m-1", "m-2", "m-3"]),
            (None, vec!["m-1", "m-2", "m-3"]),
        ] {
            for with_artifacts in [true, false] {
                let view = serde_json::to_value(t.view(n, with_artifacts)).expect("view");
                assert_eq!(ids(&view), want, "{n:?}");
                assert_eq!(
                    view.get("history").is_some(),
                    !want.is_empty(),
                    "empty is omitted"
                );
                assert_eq!(view.get("artifacts").is_some(), with_artifacts);
                assert_eq!(view["metadata"]["k"], 1);
                let shaped = serde_json::to_value(t.shaped(n, with_artifacts)).expect("shaped");
                assert_eq!(shaped, view, "{n:?} {with_artifacts}");
            }
        }
    }
}
