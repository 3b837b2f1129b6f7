//! The forms agent's request model: the bytes as a data part (after the strict check the
//! server runs over every body), and as the text of a message.

#![no_main]

use ferry_forms::request;
use ferry_proto::{Message, Part, Role};
use ferry_trust::strict;
use libfuzzer_sys::fuzz_target;

fn message(parts: Vec<Part>) -> Message {
    Message {
        message_id: "m".into(),
        context_id: String::new(),
        task_id: String::new(),
        role: Role::User,
        parts,
        metadata: None,
        extensions: Vec::new(),
        reference_task_ids: Vec::new(),
    }
}

fuzz_target!(|input: &[u8]| {
    if let Ok(value) = strict::parse_with(
        input,
        &strict::Limits {
            max_bytes: 1 << 20,
            allow_unsafe_integers: true,
            ..strict::Limits::default()
        },
    ) {
        let _ = request::parse(&message(vec![Part::data(value.clone())]));
        let _ = request::parse(&message(vec![Part::data(value.clone()), Part::data(value)]));
    }
    let text = String::from_utf8_lossy(input).into_owned();
    let _ = request::parse(&message(vec![Part::text(text)]));
});
