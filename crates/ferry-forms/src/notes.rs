//! Context notes: what a conversation learned — the values its caller gave and the answers
//! its pages hold — for later turns of the same conversation (`"auto": true` fills from them
//! before the saved profile). Never for another conversation: notes are kept per
//! [`ConversationKey`], which is the tenant, the caller and the contextId together.
//!
//! A note is keyed like a profile: by the WHATWG autofill name of the field a value went to
//! (`email`), else by the caller's own key ("Membership number"). Secrets (passwords,
//! one-time codes, card security codes) and card numbers are never noted.
//!
//! Notes live in memory: [`MAX_NOTES`] values per conversation, [`MAX_CONVERSATIONS`]
//! conversations (the longest unused goes first), each forgotten after [`NOTES_TTL`] without
//! a turn, and at once when its conversation is closed.

use crate::pool::ConversationKey;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// Values one conversation's notes hold; more replace nothing (the first ones stay).
pub(crate) const MAX_NOTES: usize = 200;
/// Conversations with notes at once.
pub(crate) const MAX_CONVERSATIONS: usize = 4096;
/// How long notes outlive the conversation's last turn.
pub(crate) const NOTES_TTL: Duration = Duration::from_secs(24 * 60 * 60);

#[derive(Debug)]
struct Note {
    values: BTreeMap<String, String>,
    touched: Instant,
}

/// Every conversation's notes.
#[derive(Debug, Default)]
pub(crate) struct ContextNotes {
    notes: Mutex<HashMap<ConversationKey, Note>>,
}

impl ContextNotes {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<ConversationKey, Note>> {
        self.notes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What conversation `key` learned so far (empty when nothing, or when it expired).
    pub(crate) fn of(&self, key: &ConversationKey) -> BTreeMap<String, String> {
        let mut map = self.map();
        let now = Instant::now();
        match map.get(key) {
            Some(note) if now.duration_since(note.touched) < NOTES_TTL => note.values.clone(),
            Some(_) => {
                map.remove(key);
                BTreeMap::new()
            }
            None => BTreeMap::new(),
        }
    }

    /// Adds what a turn of conversation `key` learned (a later value replaces an earlier one
    /// of the same key).
    pub(crate) fn learn(&self, key: &ConversationKey, learned: Vec<(String, String)>) {
        let now = Instant::now();
        let mut map = self.map();
        if !map.contains_key(key) {
            map.retain(|_, note| now.duration_since(note.touched) < NOTES_TTL);
            if map.len() >= MAX_CONVERSATIONS
                && let Some(oldest) = map
                    .iter()
                    .min_by_key(|(_, note)| note.touched)
                    .map(|(k, _)| k.clone())
            {
                map.remove(&oldest);
            }
        }
        let note = map.entry(key.clone()).or_insert_with(|| Note {
            values: BTreeMap::new(),
            touched: now,
        });
        note.touched = now;
        for (k, v) in learned {
            if v.trim().is_empty() {
                continue;
            }
            if note.values.len() < MAX_NOTES || note.values.contains_key(&k) {
                note.values.insert(k, v);
            }
        }
    }

    /// Forgets conversation `key`.
    pub(crate) fn forget(&self, key: &ConversationKey) {
        self.map().remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(caller: &str, context: &str) -> ConversationKey {
        ConversationKey {
            tenant: String::new(),
            caller: Some(caller.into()),
            context_id: context.into(),
        }
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn notes_stay_in_their_conversation_and_expire() {
        let notes = ContextNotes::default();
        notes.learn(&key("alice", "c1"), pairs(&[("email", "a@example.com")]));
        notes.learn(
            &key("alice", "c1"),
            pairs(&[("email", "b@example.com"), ("tel", " ")]),
        );
        assert_eq!(
            notes
                .of(&key("alice", "c1"))
                .get("email")
                .map(String::as_str),
            Some("b@example.com")
        );
        assert!(
            !notes.of(&key("alice", "c1")).contains_key("tel"),
            "blank values are not notes"
        );
        assert!(notes.of(&key("alice", "c2")).is_empty(), "another context");
        assert!(
            notes.of(&key("bob", "c1")).is_empty(),
            "another caller, same contextId"
        );
        tokio::time::advance(NOTES_TTL - Duration::from_secs(1)).await;
        assert!(!notes.of(&key("alice", "c1")).is_empty());
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(notes.of(&key("alice", "c1")).is_empty(), "expired");
        notes.learn(&key("alice", "c3"), pairs(&[("email", "c@example.com")]));
        notes.forget(&key("alice", "c3"));
        assert!(notes.of(&key("alice", "c3")).is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn notes_are_bounded() {
        let notes = ContextNotes::default();
        let many: Vec<(String, String)> = (0..MAX_NOTES + 10)
            .map(|i| (format!("k{i:04}"), "v".to_owned()))
            .collect();
        notes.learn(&key("a", "c"), many);
        assert_eq!(notes.of(&key("a", "c")).len(), MAX_NOTES);
        for i in 0..MAX_CONVERSATIONS {
            tokio::time::advance(Duration::from_millis(1)).await;
            notes.learn(&key("a", &format!("x{i}")), pairs(&[("email", "e")]));
        }
        assert!(
            notes.of(&key("a", "c")).is_empty(),
            "the longest unused went first"
        );
        assert_eq!(notes.map().len(), MAX_CONVERSATIONS);
    }
}
