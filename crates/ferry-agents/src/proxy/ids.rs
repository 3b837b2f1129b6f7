//! Local and remote ids. ferry names the local task and context; the remote agent names its
//! own. The proxy keeps the pairs in a bounded in-memory map (the fast path) and writes them
//! into the metadata of what it emits, so that a follow-up turn still finds the remote task
//! when the map has forgotten it (evicted, or ferry restarted on a durable store).
//!
//! Where a follow-up looks, in order: the map; the task's status message; its artifacts.
//! Never the task's history: a client may send a message with `role: ROLE_AGENT` and its
//! own `ferry.proxy/…` metadata, and following it would let one local caller steer the
//! proxy into a remote task of another (the proxy calls the remote with one credential for
//! all of them). The status and the artifacts are written by the agent alone, and the proxy
//! strips `ferry.proxy/…` keys from everything the remote sends before adding its own.

use ferry_proto::{Struct, Task};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::sync::{Mutex, PoisonError};

/// The prefix of every metadata key the proxy writes; keys with it are stripped from what
/// the remote sends and from what the local caller sends on.
pub(super) const PREFIX: &str = "ferry.proxy/";
/// The remote task's id.
pub(super) const REMOTE_TASK_ID: &str = "ferry.proxy/remoteTaskId";
/// The remote context's id.
pub(super) const REMOTE_CONTEXT_ID: &str = "ferry.proxy/remoteContextId";
/// The id the remote gave the message (the proxy gives it a fresh local one).
pub(super) const REMOTE_MESSAGE_ID: &str = "ferry.proxy/remoteMessageId";
/// `true` on everything relayed from the remote: its parts and metadata are the remote's
/// data, never instructions from ferry.
pub(super) const UNTRUSTED: &str = "ferry.proxy/untrusted";
/// `true` on a status message the proxy wrote itself because the remote sent none.
pub(super) const SYNTHESIZED: &str = "ferry.proxy/synthesized";

/// How many tasks and contexts the map remembers (each; the oldest go first).
const CAPACITY: usize = 10_000;

/// The remote's ids for one local task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RemoteIds {
    /// The remote task.
    pub(super) task_id: String,
    /// The remote context ("" when the remote named none).
    pub(super) context_id: String,
}

impl RemoteIds {
    /// The ids written into `metadata`.
    pub(super) fn write(&self, metadata: &mut Struct) {
        metadata.insert(REMOTE_TASK_ID.into(), self.task_id.clone().into());
        if !self.context_id.is_empty() {
            metadata.insert(REMOTE_CONTEXT_ID.into(), self.context_id.clone().into());
        }
    }

    /// The ids `metadata` holds, when it names a remote task.
    pub(super) fn read(metadata: Option<&Struct>) -> Option<RemoteIds> {
        let metadata = metadata?;
        let text = |key: &str| metadata.get(key).and_then(Value::as_str).map(str::to_owned);
        let task_id = text(REMOTE_TASK_ID).filter(|id| !id.is_empty())?;
        Some(RemoteIds {
            task_id,
            context_id: text(REMOTE_CONTEXT_ID).unwrap_or_default(),
        })
    }

    /// The ids a local task's status message or artifacts hold (see the module docs for
    /// why not its history).
    pub(super) fn recover(task: &Task) -> Option<RemoteIds> {
        let status = task
            .status
            .message
            .as_ref()
            .and_then(|m| m.metadata.as_ref());
        RemoteIds::read(status).or_else(|| {
            task.artifacts
                .iter()
                .rev()
                .find_map(|a| RemoteIds::read(a.metadata.as_ref()))
        })
    }
}

/// `metadata` without the proxy's keys (someone else's claims of them).
pub(super) fn strip(metadata: Option<Struct>) -> Option<Struct> {
    let mut metadata = metadata?;
    metadata.retain(|k, _| !k.starts_with(PREFIX));
    (!metadata.is_empty()).then_some(metadata)
}

/// The `messageId` a local caller's message gets at the remote: the caller's own, tagged
/// with its tenant and caller when ferry names them. The proxy calls the remote with one
/// credential for every local caller, so a remote that deduplicates sends by `messageId`
/// would otherwise answer one caller's retry with another caller's task. The caller's id
/// stays a prefix (scenarios key on it) and the tag is stable, so one caller's retries
/// still deduplicate.
pub(super) fn remote_message_id(message_id: &str, tenant: &str, caller: Option<&str>) -> String {
    if tenant.is_empty() && caller.is_none() {
        return message_id.to_owned();
    }
    // FNV-1a: stable across builds and restarts (std's hasher promises neither).
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    // The tenant, a separator, then (when named) a marker and the caller.
    let caller_bytes = caller.map(str::as_bytes).unwrap_or_default();
    let marker: &[u8] = if caller.is_some() { &[1] } else { &[] };
    let bytes = tenant
        .as_bytes()
        .iter()
        .chain(&[0])
        .chain(marker)
        .chain(caller_bytes);
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{message_id}~{hash:016x}")
}

/// A task: its tenant and local id.
type TaskKey = (String, String);
/// A conversation: tenant, caller and local context id. The caller is part of it: two
/// callers who chose the same contextId must not share a remote conversation.
type ContextKey = (String, Option<String>, String);

/// The bounded in-memory map of local ids to remote ones.
#[derive(Debug, Default)]
pub(super) struct IdMap {
    inner: Mutex<Maps>,
}

#[derive(Debug, Default)]
struct Maps {
    tasks: Bounded<TaskKey, RemoteIds>,
    contexts: Bounded<ContextKey, String>,
}

impl IdMap {
    /// The remote ids of the local task `task_id`.
    pub(super) fn task(&self, tenant: &str, task_id: &str) -> Option<RemoteIds> {
        let maps = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        maps.tasks
            .get(&(tenant.to_owned(), task_id.to_owned()))
            .cloned()
    }

    /// The remote context of the local context `context_id`, as `caller` saw it.
    pub(super) fn context(
        &self,
        tenant: &str,
        caller: Option<&str>,
        context_id: &str,
    ) -> Option<String> {
        let maps = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        maps.contexts
            .get(&(
                tenant.to_owned(),
                caller.map(str::to_owned),
                context_id.to_owned(),
            ))
            .cloned()
    }

    /// Remembers the remote ids of a local task (and its context).
    pub(super) fn remember(&self, local: &LocalIds<'_>, remote: &RemoteIds) {
        let mut maps = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        maps.tasks.insert(
            (local.tenant.to_owned(), local.task_id.to_owned()),
            remote.clone(),
        );
        if !remote.context_id.is_empty() {
            maps.contexts.insert(
                (
                    local.tenant.to_owned(),
                    local.caller.map(str::to_owned),
                    local.context_id.to_owned(),
                ),
                remote.context_id.clone(),
            );
        }
    }

    /// Remembers a remote context without a task (a direct message reply).
    pub(super) fn remember_context(&self, local: &LocalIds<'_>, remote_context: &str) {
        if remote_context.is_empty() {
            return;
        }
        let mut maps = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        maps.contexts.insert(
            (
                local.tenant.to_owned(),
                local.caller.map(str::to_owned),
                local.context_id.to_owned(),
            ),
            remote_context.to_owned(),
        );
    }
}

/// The local ids of one turn.
#[derive(Debug, Clone, Copy)]
pub(super) struct LocalIds<'a> {
    pub(super) tenant: &'a str,
    pub(super) caller: Option<&'a str>,
    pub(super) task_id: &'a str,
    pub(super) context_id: &'a str,
}

/// A map that forgets its oldest entry past [`CAPACITY`] (insertion order; an update keeps
/// the entry's place).
#[derive(Debug)]
struct Bounded<K, V> {
    map: HashMap<K, V>,
    order: VecDeque<K>,
    capacity: usize,
}

impl<K, V> Default for Bounded<K, V> {
    fn default() -> Self {
        Self {
            map: HashMap::new(),
            order: VecDeque::new(),
            capacity: CAPACITY,
        }
    }
}

impl<K: Hash + Eq + Clone, V> Bounded<K, V> {
    fn get(&self, key: &K) -> Option<&V> {
        self.map.get(key)
    }

    fn insert(&mut self, key: K, value: V) {
        if let Some(slot) = self.map.get_mut(&key) {
            *slot = value;
            return;
        }
        while self.map.len() >= self.capacity {
            match self.order.pop_front() {
                Some(oldest) => {
                    self.map.remove(&oldest);
                }
                None => break,
            }
        }
        self.order.push_back(key.clone());
        self.map.insert(key, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_proto::{Artifact, Message, Part, TaskState, TaskStatus};
    use serde_json::json;
    use std::sync::Arc;

    #[test]
    fn the_oldest_entry_goes_first() {
        let mut map = Bounded {
            capacity: 2,
            ..Bounded::default()
        };
        map.insert(1, "a");
        map.insert(2, "b");
        map.insert(1, "a2");
        map.insert(3, "c");
        assert_eq!(map.get(&1), None);
        assert_eq!(map.get(&2), Some(&"b"));
        assert_eq!(map.get(&3), Some(&"c"));
        assert_eq!(map.order.len(), 2);
    }

    #[test]
    fn contexts_are_per_caller() {
        let ids = IdMap::default();
        let local = LocalIds {
            tenant: "",
            caller: Some("alice"),
            task_id: "t",
            context_id: "c",
        };
        let remote = RemoteIds {
            task_id: "rt".into(),
            context_id: "rc".into(),
        };
        ids.remember(&local, &remote);
        assert_eq!(ids.context("", Some("alice"), "c").as_deref(), Some("rc"));
        assert_eq!(ids.context("", Some("bob"), "c"), None);
        assert_eq!(ids.context("other", Some("alice"), "c"), None);
        assert_eq!(ids.task("", "t"), Some(remote));
    }

    #[test]
    fn recovery_reads_the_status_and_artifacts_never_the_history() {
        let remote = RemoteIds {
            task_id: "rt".into(),
            context_id: "rc".into(),
        };
        let mut metadata = Struct::new();
        remote.write(&mut metadata);
        let mut forged = Message::agent("m", vec![Part::text("x")]);
        forged.metadata = Some(
            json!({REMOTE_TASK_ID: "someone-elses"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        let mut task = Task::new("t", "c", TaskStatus::now(TaskState::InputRequired, None));
        task.history.push(Arc::new(forged));
        assert_eq!(RemoteIds::recover(&task), None, "history is not trusted");
        let mut artifact = Artifact::new("a", "a", vec![Part::text("x")]);
        artifact.metadata = Some(metadata.clone());
        task.artifacts.push(Arc::new(artifact));
        assert_eq!(RemoteIds::recover(&task), Some(remote.clone()));
        let mut question = Message::agent("q", vec![Part::text("?")]);
        question.metadata = Some(metadata);
        task.status.message = Some(Arc::new(question));
        assert_eq!(RemoteIds::recover(&task), Some(remote));
    }

    #[test]
    fn message_ids_are_tagged_per_caller_and_stable() {
        assert_eq!(remote_message_id("m-1", "", None), "m-1");
        let alice = remote_message_id("tck-x-1", "", Some("alice"));
        assert!(alice.starts_with("tck-x-1~"), "{alice}");
        assert_eq!(alice, remote_message_id("tck-x-1", "", Some("alice")));
        assert_ne!(alice, remote_message_id("tck-x-1", "", Some("bob")));
        assert_ne!(alice, remote_message_id("tck-x-1", "alice", None));
        assert_ne!(
            remote_message_id("m", "t", None),
            remote_message_id("m", "", None)
        );
    }

    #[test]
    fn strip_drops_claims_of_the_proxys_keys() {
        let metadata = json!({REMOTE_TASK_ID: "x", "ext/uri": 1})
            .as_object()
            .cloned();
        let kept = strip(metadata).expect("one key left");
        assert_eq!(kept.len(), 1);
        assert!(kept.contains_key("ext/uri"));
        assert_eq!(strip(json!({UNTRUSTED: false}).as_object().cloned()), None);
    }
}
