//! Protobuf written straight from this crate's types: the answers a server sends most
//! (SendMessage's, each event of a stream) without building their [`pb`](super::pb) twins
//! first. A twin owns its fields, so building one copies every string and list of the task;
//! writing from the borrowed values copies each byte once, into the frame.
//!
//! Every [`WriteProto`] here writes what prost writes for the twin, field by field (proto3:
//! a scalar at its default is left out, a message that is present and each element of a
//! repeated field are written, a oneof member always), so a reader cannot tell the two
//! apart; the tests hold each one to prost's encoding of its twin.

use super::pb;
use crate::{
    Artifact, Message, Part, PartContent, StreamResponse, Task, TaskArtifactUpdateEvent,
    TaskStatus, TaskStatusUpdateEvent, TaskView, Timestamp,
};
use prost::bytes::BufMut;
use prost::encoding::{WireType, encode_key, encode_varint, encoded_len_varint, key_len};
use serde_json::{Map, Value};

/// A message written as protobuf from borrowed values.
pub trait WriteProto {
    /// The length of the message's encoding.
    fn encoded_len(&self) -> usize;
    /// Writes the message's fields, without a length before them (what
    /// `prost::Message::encode_raw` writes).
    fn write(&self, out: &mut impl BufMut);
}

/// SendMessage's answer (`pb::SendMessageResponse`): the task, shaped, or the reply.
#[derive(Debug, Clone, Copy)]
pub enum SendMessageAnswer<'a> {
    /// The task the message went to, shaped for the answer.
    Task(TaskView<'a>),
    /// The agent's direct reply.
    Message(&'a Message),
}

impl WriteProto for SendMessageAnswer<'_> {
    fn encoded_len(&self) -> usize {
        match self {
            SendMessageAnswer::Task(task) => message_len(1, task),
            SendMessageAnswer::Message(message) => message_len(2, *message),
        }
    }

    fn write(&self, out: &mut impl BufMut) {
        match self {
            SendMessageAnswer::Task(task) => write_message(1, task, out),
            SendMessageAnswer::Message(message) => write_message(2, *message, out),
        }
    }
}

impl WriteProto for StreamResponse {
    fn encoded_len(&self) -> usize {
        match self {
            StreamResponse::Task(task) => message_len(1, &task.view(None, true)),
            StreamResponse::Message(message) => message_len(2, message),
            StreamResponse::StatusUpdate(event) => message_len(3, event),
            StreamResponse::ArtifactUpdate(event) => message_len(4, event),
        }
    }

    fn write(&self, out: &mut impl BufMut) {
        match self {
            StreamResponse::Task(task) => write_message(1, &task.view(None, true), out),
            StreamResponse::Message(message) => write_message(2, message, out),
            StreamResponse::StatusUpdate(event) => write_message(3, event, out),
            StreamResponse::ArtifactUpdate(event) => write_message(4, event, out),
        }
    }
}

impl WriteProto for TaskView<'_> {
    fn encoded_len(&self) -> usize {
        let (task, history, artifacts) = self.shown();
        string_len(1, &task.id)
            + string_len(2, &task.context_id)
            + message_len(3, &task.status)
            + artifacts
                .iter()
                .map(|a| message_len(4, &**a))
                .sum::<usize>()
            + history.iter().map(|m| message_len(5, &**m)).sum::<usize>()
            + task.metadata.as_ref().map_or(0, |m| message_len(6, m))
    }

    fn write(&self, out: &mut impl BufMut) {
        let (task, history, artifacts) = self.shown();
        write_string(1, &task.id, out);
        write_string(2, &task.context_id, out);
        write_message(3, &task.status, out);
        artifacts.iter().for_each(|a| write_message(4, &**a, out));
        history.iter().for_each(|m| write_message(5, &**m, out));
        if let Some(metadata) = &task.metadata {
            write_message(6, metadata, out);
        }
    }
}

impl WriteProto for Task {
    fn encoded_len(&self) -> usize {
        self.view(None, true).encoded_len()
    }

    fn write(&self, out: &mut impl BufMut) {
        self.view(None, true).write(out);
    }
}

impl WriteProto for TaskStatus {
    fn encoded_len(&self) -> usize {
        enum_len(1, i32::from(pb::TaskState::from(self.state)))
            + self.message.as_deref().map_or(0, |m| message_len(2, m))
            + self.timestamp.map_or(0, |t| message_len(3, &t))
    }

    fn write(&self, out: &mut impl BufMut) {
        write_enum(1, i32::from(pb::TaskState::from(self.state)), out);
        if let Some(message) = self.message.as_deref() {
            write_message(2, message, out);
        }
        if let Some(timestamp) = self.timestamp {
            write_message(3, &timestamp, out);
        }
    }
}

impl WriteProto for Message {
    fn encoded_len(&self) -> usize {
        string_len(1, &self.message_id)
            + string_len(2, &self.context_id)
            + string_len(3, &self.task_id)
            + enum_len(4, i32::from(pb::Role::from(self.role)))
            + self.parts.iter().map(|p| message_len(5, p)).sum::<usize>()
            + self.metadata.as_ref().map_or(0, |m| message_len(6, m))
            + repeated_string_len(7, &self.extensions)
            + repeated_string_len(8, &self.reference_task_ids)
    }

    fn write(&self, out: &mut impl BufMut) {
        write_string(1, &self.message_id, out);
        write_string(2, &self.context_id, out);
        write_string(3, &self.task_id, out);
        write_enum(4, i32::from(pb::Role::from(self.role)), out);
        self.parts.iter().for_each(|p| write_message(5, p, out));
        if let Some(metadata) = &self.metadata {
            write_message(6, metadata, out);
        }
        write_repeated_string(7, &self.extensions, out);
        write_repeated_string(8, &self.reference_task_ids, out);
    }
}

impl WriteProto for Artifact {
    fn encoded_len(&self) -> usize {
        string_len(1, &self.artifact_id)
            + string_len(2, &self.name)
            + string_len(3, &self.description)
            + self.parts.iter().map(|p| message_len(4, p)).sum::<usize>()
            + self.metadata.as_ref().map_or(0, |m| message_len(5, m))
            + repeated_string_len(6, &self.extensions)
    }

    fn write(&self, out: &mut impl BufMut) {
        write_string(1, &self.artifact_id, out);
        write_string(2, &self.name, out);
        write_string(3, &self.description, out);
        self.parts.iter().for_each(|p| write_message(4, p, out));
        if let Some(metadata) = &self.metadata {
            write_message(5, metadata, out);
        }
        write_repeated_string(6, &self.extensions, out);
    }
}

impl WriteProto for Part {
    fn encoded_len(&self) -> usize {
        let content = match &self.content {
            PartContent::Text(text) => bytes_len(1, text.as_bytes()),
            PartContent::Raw(raw) => bytes_len(2, raw),
            PartContent::Url(url) => bytes_len(3, url.as_bytes()),
            PartContent::Data(value) => message_len(4, value),
        };
        content
            + self.metadata.as_ref().map_or(0, |m| message_len(5, m))
            + string_len(6, &self.filename)
            + string_len(7, &self.media_type)
    }

    fn write(&self, out: &mut impl BufMut) {
        // The content is a oneof member: written even when empty.
        match &self.content {
            PartContent::Text(text) => write_bytes(1, text.as_bytes(), out),
            PartContent::Raw(raw) => write_bytes(2, raw, out),
            PartContent::Url(url) => write_bytes(3, url.as_bytes(), out),
            PartContent::Data(value) => write_message(4, value, out),
        }
        if let Some(metadata) = &self.metadata {
            write_message(5, metadata, out);
        }
        write_string(6, &self.filename, out);
        write_string(7, &self.media_type, out);
    }
}

impl WriteProto for TaskStatusUpdateEvent {
    fn encoded_len(&self) -> usize {
        string_len(1, &self.task_id)
            + string_len(2, &self.context_id)
            + message_len(3, &self.status)
            + self.metadata.as_ref().map_or(0, |m| message_len(4, m))
    }

    fn write(&self, out: &mut impl BufMut) {
        write_string(1, &self.task_id, out);
        write_string(2, &self.context_id, out);
        write_message(3, &self.status, out);
        if let Some(metadata) = &self.metadata {
            write_message(4, metadata, out);
        }
    }
}

impl WriteProto for TaskArtifactUpdateEvent {
    fn encoded_len(&self) -> usize {
        string_len(1, &self.task_id)
            + string_len(2, &self.context_id)
            + message_len(3, &*self.artifact)
            + bool_len(4, self.append)
            + bool_len(5, self.last_chunk)
            + self.metadata.as_ref().map_or(0, |m| message_len(6, m))
    }

    fn write(&self, out: &mut impl BufMut) {
        write_string(1, &self.task_id, out);
        write_string(2, &self.context_id, out);
        write_message(3, &*self.artifact, out);
        write_bool(4, self.append, out);
        write_bool(5, self.last_chunk, out);
        if let Some(metadata) = &self.metadata {
            write_message(6, metadata, out);
        }
    }
}

/// `google.protobuf.Timestamp`, as `timestamp_to_pb` makes it.
impl WriteProto for Timestamp {
    fn encoded_len(&self) -> usize {
        let pb = super::value::timestamp_to_pb(*self);
        int_len(1, pb.seconds) + int_len(2, i64::from(pb.nanos))
    }

    fn write(&self, out: &mut impl BufMut) {
        let pb = super::value::timestamp_to_pb(*self);
        write_int(1, pb.seconds, out);
        write_int(2, i64::from(pb.nanos), out);
    }
}

/// `google.protobuf.Struct`: a map of string to `Value`, each entry a message of its own
/// (the key, field 1, left out when empty, as prost leaves it; the value, field 2).
impl WriteProto for Map<String, Value> {
    fn encoded_len(&self) -> usize {
        self.iter()
            .map(|(key, value)| length_delimited_len(1, entry_len(key, value)))
            .sum()
    }

    fn write(&self, out: &mut impl BufMut) {
        for (key, value) in self {
            encode_key(1, WireType::LengthDelimited, out);
            encode_varint(entry_len(key, value) as u64, out);
            write_string(1, key, out);
            write_message(2, value, out);
        }
    }
}

/// The length of one entry of a `Struct`'s map.
fn entry_len(key: &str, value: &Value) -> usize {
    string_len(1, key) + message_len(2, value)
}

/// `google.protobuf.Value`, as `value_to_pb` makes it: its kind
/// is a oneof member, so it is written whatever its value.
impl WriteProto for Value {
    fn encoded_len(&self) -> usize {
        match self {
            Value::Null => NULL_LEN,
            Value::Number(n) => n.as_f64().map_or(NULL_LEN, |_| key_len(2) + 8),
            Value::String(s) => bytes_len(3, s.as_bytes()),
            Value::Bool(_) => key_len(4) + 1,
            Value::Object(map) => message_len(5, map),
            Value::Array(items) => length_delimited_len(6, list_len(items)),
        }
    }

    fn write(&self, out: &mut impl BufMut) {
        match self {
            Value::Null => write_null(out),
            Value::Number(n) => match n.as_f64() {
                Some(x) => {
                    encode_key(2, WireType::SixtyFourBit, out);
                    out.put_f64_le(x);
                }
                // Without serde_json's `arbitrary_precision` every number has an f64 form.
                None => write_null(out),
            },
            Value::String(s) => write_bytes(3, s.as_bytes(), out),
            Value::Bool(b) => {
                encode_key(4, WireType::Varint, out);
                encode_varint(u64::from(*b), out);
            }
            Value::Object(map) => write_message(5, map, out),
            Value::Array(items) => {
                encode_key(6, WireType::LengthDelimited, out);
                encode_varint(list_len(items) as u64, out);
                items.iter().for_each(|item| write_message(1, item, out));
            }
        }
    }
}

/// `null_value: NULL_VALUE` (field 1, the enum's number 0).
const NULL_LEN: usize = 2;

fn write_null(out: &mut impl BufMut) {
    encode_key(1, WireType::Varint, out);
    encode_varint(0, out);
}

/// The length of a `google.protobuf.ListValue` of `items` (field 1, repeated `Value`).
fn list_len(items: &[Value]) -> usize {
    items.iter().map(|item| message_len(1, item)).sum()
}

fn length_delimited_len(tag: u32, len: usize) -> usize {
    key_len(tag) + encoded_len_varint(len as u64) + len
}

fn message_len(tag: u32, message: &impl WriteProto) -> usize {
    length_delimited_len(tag, message.encoded_len())
}

fn write_message(tag: u32, message: &impl WriteProto, out: &mut impl BufMut) {
    encode_key(tag, WireType::LengthDelimited, out);
    encode_varint(message.encoded_len() as u64, out);
    message.write(out);
}

/// A oneof member or an element of a repeated field: written even when empty.
fn bytes_len(tag: u32, bytes: &[u8]) -> usize {
    length_delimited_len(tag, bytes.len())
}

fn write_bytes(tag: u32, bytes: &[u8], out: &mut impl BufMut) {
    encode_key(tag, WireType::LengthDelimited, out);
    encode_varint(bytes.len() as u64, out);
    out.put_slice(bytes);
}

/// A singular string field: left out when empty.
fn string_len(tag: u32, s: &str) -> usize {
    if s.is_empty() {
        0
    } else {
        bytes_len(tag, s.as_bytes())
    }
}

fn write_string(tag: u32, s: &str, out: &mut impl BufMut) {
    if !s.is_empty() {
        write_bytes(tag, s.as_bytes(), out);
    }
}

fn repeated_string_len(tag: u32, items: &[String]) -> usize {
    items.iter().map(|s| bytes_len(tag, s.as_bytes())).sum()
}

fn write_repeated_string(tag: u32, items: &[String], out: &mut impl BufMut) {
    items
        .iter()
        .for_each(|s| write_bytes(tag, s.as_bytes(), out));
}

/// A singular integer field (`int32`, `int64` or an enum): left out when 0; a negative one
/// takes ten bytes, as protobuf sign-extends it.
fn int_len(tag: u32, value: i64) -> usize {
    if value == 0 {
        0
    } else {
        key_len(tag) + encoded_len_varint(value as u64)
    }
}

fn write_int(tag: u32, value: i64, out: &mut impl BufMut) {
    if value != 0 {
        encode_key(tag, WireType::Varint, out);
        encode_varint(value as u64, out);
    }
}

fn enum_len(tag: u32, number: i32) -> usize {
    int_len(tag, i64::from(number))
}

fn write_enum(tag: u32, number: i32, out: &mut impl BufMut) {
    write_int(tag, i64::from(number), out);
}

/// A singular bool field: left out when false.
fn bool_len(tag: u32, value: bool) -> usize {
    if value { key_len(tag) + 1 } else { 0 }
}

fn write_bool(tag: u32, value: bool, out: &mut impl BufMut) {
    if value {
        encode_key(tag, WireType::Varint, out);
        out.put_u8(1);
    }
}
