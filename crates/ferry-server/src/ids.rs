//! Ids the server makes: UUIDs as text.

use std::sync::Arc;
use uuid::Uuid;

/// `id` in its hyphenated lowercase form, written straight into its one allocation (no
/// formatting machinery, no `String` copied into an `Arc` afterwards): three of these are
/// made for every new task.
fn text(id: Uuid) -> Arc<str> {
    let mut buffer = Uuid::encode_buffer();
    Arc::from(&*id.hyphenated().encode_lower(&mut buffer))
}

/// A new time-ordered id (UUIDv7, 74 random bits), for tasks and contexts: new tasks land
/// next to each other in a store's indexes instead of all over them, so a batch of new tasks
/// writes a few index pages, not one page per task.
pub(crate) fn time_ordered() -> Arc<str> {
    text(Uuid::now_v7())
}

/// A new random id (UUIDv4), for request ids.
pub(crate) fn random() -> Arc<str> {
    text(Uuid::new_v4())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_the_usual_form() {
        let id = Uuid::now_v7();
        assert_eq!(&*text(id), id.to_string());
        assert_eq!(random().len(), 36);
        assert_ne!(time_ordered(), time_ordered());
    }
}
