//! The fixtures and the operation table against the descriptor set of `proto/a2a.proto`.

use super::fixtures::fixtures;
use ferry_proto::grpc::{FILE_DESCRIPTOR_SET, SERVICE_NAME};
use ferry_proto::*;
use prost::Message as _;
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FileDescriptorSet};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The messages of `proto/a2a.proto` by full name (nested map entries included).
struct Schema {
    messages: BTreeMap<String, DescriptorProto>,
}

impl Schema {
    fn load() -> Schema {
        let set =
            FileDescriptorSet::decode(FILE_DESCRIPTOR_SET).expect("the descriptor set decodes");
        let file = set
            .file
            .iter()
            .find(|f| f.package() == "lf.a2a.v1")
            .expect("a2a.proto is in the set");
        let mut messages = BTreeMap::new();
        fn add(prefix: &str, m: &DescriptorProto, into: &mut BTreeMap<String, DescriptorProto>) {
            let name = format!("{prefix}.{}", m.name());
            for nested in &m.nested_type {
                add(&name, nested, into);
            }
            into.insert(name, m.clone());
        }
        for m in &file.message_type {
            add("lf.a2a.v1", m, &mut messages);
        }
        Schema { messages }
    }

    fn is_map_entry(m: &DescriptorProto) -> bool {
        m.options.as_ref().is_some_and(|o| o.map_entry())
    }

    /// Every (message, field) of the file, map entries left out.
    fn all_fields(&self) -> BTreeSet<(String, String)> {
        self.messages
            .iter()
            .filter(|(_, m)| !Self::is_map_entry(m))
            .flat_map(|(name, m)| m.field.iter().map(|f| (name.clone(), f.name().to_owned())))
            .collect()
    }

    /// Records the fields `json` (a `message`) sets, down through every nested message, and
    /// fails on a member the message does not have.
    fn walk(&self, message: &str, json: &Value, seen: &mut BTreeSet<(String, String)>) {
        let d = &self.messages[message];
        let object = json
            .as_object()
            .unwrap_or_else(|| panic!("{message} is not an object: {json}"));
        for key in object.keys() {
            assert!(
                d.field.iter().any(|f| json_name(f) == *key),
                "{message} has no field {key:?}"
            );
        }
        for f in &d.field {
            let Some(v) = object.get(&json_name(f)) else {
                continue;
            };
            seen.insert((message.to_owned(), f.name().to_owned()));
            let Some(child) = self.nested(f) else {
                continue;
            };
            if Self::is_map_entry(&self.messages[&child]) {
                let value_field = &self.messages[&child].field[1];
                if let Some(value_type) = self.nested(value_field) {
                    for entry in v.as_object().expect("a map is an object").values() {
                        self.walk(&value_type, entry, seen);
                    }
                }
            } else if f.label() == Label::Repeated {
                for item in v.as_array().expect("a repeated field is an array") {
                    self.walk(&child, item, seen);
                }
            } else {
                self.walk(&child, v, seen);
            }
        }
    }

    /// The A2A message a field holds (none for scalars and well-known types).
    fn nested(&self, f: &prost_types::FieldDescriptorProto) -> Option<String> {
        if f.r#type() != Type::Message {
            return None;
        }
        let name = f.type_name().strip_prefix('.')?;
        name.starts_with("lf.a2a.v1.").then(|| name.to_owned())
    }
}

fn json_name(f: &prost_types::FieldDescriptorProto) -> String {
    f.json_name
        .clone()
        .unwrap_or_else(|| camel_case(f.name()).into_owned())
}

#[test]
fn the_fixtures_set_every_field_of_every_message() {
    let schema = Schema::load();
    let mut seen = BTreeSet::new();
    let mut tops = BTreeSet::new();
    for f in fixtures() {
        schema.walk(&f.message, &f.json, &mut seen);
        tops.insert(f.message);
    }
    let unset: Vec<String> = schema
        .all_fields()
        .difference(&seen)
        .map(|(m, f)| format!("{m}.{f}"))
        .collect();
    assert!(unset.is_empty(), "no fixture sets {}", unset.join(", "));
    let untested: Vec<&String> = schema
        .messages
        .iter()
        .filter(|(name, m)| !Schema::is_map_entry(m) && !tops.contains(*name))
        .map(|(name, _)| name)
        .collect();
    assert!(untested.is_empty(), "no fixture of {untested:?}");
    assert!(
        schema.messages.len() > 40,
        "{} messages",
        schema.messages.len()
    );
}

#[test]
fn the_service_is_the_operation_table() {
    let set = FileDescriptorSet::decode(FILE_DESCRIPTOR_SET).expect("decodes");
    let file = set
        .file
        .iter()
        .find(|f| f.package() == "lf.a2a.v1")
        .expect("a2a.proto");
    let imports: BTreeSet<&str> = file.dependency.iter().map(String::as_str).collect();
    assert_eq!(
        imports,
        BTreeSet::from([
            "google/protobuf/empty.proto",
            "google/protobuf/struct.proto",
            "google/protobuf/timestamp.proto"
        ])
    );
    for dependency in &imports {
        assert!(
            set.file.iter().any(|f| f.name() == *dependency),
            "{dependency} is in the set, for reflection"
        );
    }
    let [service] = file.service.as_slice() else {
        panic!("one service");
    };
    assert_eq!(
        format!("{}.{}", file.package(), service.name()),
        SERVICE_NAME
    );
    let names: Vec<&str> = service.method.iter().map(|m| m.name()).collect();
    let ops: Vec<&str> = Operation::ALL.iter().map(|op| op.name()).collect();
    assert_eq!(
        names.iter().copied().collect::<BTreeSet<_>>(),
        ops.iter().copied().collect::<BTreeSet<_>>()
    );
    for m in &service.method {
        let op = Operation::from_name(m.name()).expect("an operation");
        assert_eq!(m.server_streaming(), op.is_streaming(), "{}", m.name());
        assert!(!m.client_streaming(), "{}", m.name());
        assert_eq!(
            op.grpc_path(),
            format!("/{SERVICE_NAME}/{}", m.name()),
            "{}",
            m.name()
        );
        assert_eq!(Operation::from_grpc_path(op.grpc_path()), Some(op));
    }
    let io = |name: &str| {
        let m = service
            .method
            .iter()
            .find(|m| m.name() == name)
            .expect("method");
        (m.input_type().to_owned(), m.output_type().to_owned())
    };
    assert_eq!(
        io("DeleteTaskPushNotificationConfig"),
        (
            ".lf.a2a.v1.DeleteTaskPushNotificationConfigRequest".to_owned(),
            ".google.protobuf.Empty".to_owned()
        )
    );
    assert_eq!(
        io("CreateTaskPushNotificationConfig"),
        (
            ".lf.a2a.v1.TaskPushNotificationConfig".to_owned(),
            ".lf.a2a.v1.TaskPushNotificationConfig".to_owned()
        )
    );
}
