//! Saved profiles: named sets of form values that an agent fills forms from (the forms
//! agent's `"auto": true`), kept per owner — a caller in a tenant — beside the tasks.
//!
//! A [`ProfileStore`] holds plain data, like the task store: no merge rules, no limits on
//! what a profile holds (the agent that manages profiles owns those). Writes are optimistic:
//! [`ProfileStore::save_profile`] names the version the writer read, so that two concurrent
//! changes of one profile never silently lose one of them (the loser gets
//! [`StoreError::Changed`] and reads again).

use crate::store::{StoreError, StoreFuture};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Whose profiles: one caller in one tenant. Two owners never see each other's profiles.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProfileOwner {
    /// The tenant (empty when none).
    pub tenant: String,
    /// The caller's identity as the server names it (empty: the anonymous caller of a server
    /// without tokens).
    pub caller: String,
}

impl ProfileOwner {
    /// The owner `caller` in `tenant`.
    pub fn new(tenant: impl Into<String>, caller: impl Into<String>) -> ProfileOwner {
        ProfileOwner {
            tenant: tenant.into(),
            caller: caller.into(),
        }
    }
}

/// One saved profile.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Profile {
    /// Its name, unique per owner (`home`, `work`).
    pub name: String,
    /// Its values, by WHATWG autofill field name (`given-name`, `postal-code`) or free label.
    pub values: BTreeMap<String, String>,
    /// Whether it may fill payment card numbers and expiry dates.
    pub cards: bool,
    /// Its version: 1 when created, one more at every save. The writer of the next save names
    /// it.
    pub version: u64,
    /// When it was last saved (ms since the Unix epoch).
    pub updated_ms: u64,
}

/// Where profiles live. Every method is a whole operation.
pub trait ProfileStore: Send + Sync + std::fmt::Debug {
    /// Saves `profile` for `owner` if the stored one is still at `expected_version` (0: the
    /// profile must not exist yet); returns the new version (`expected_version + 1`).
    /// The `version` field of `profile` is ignored.
    ///
    /// A new profile is created only while `owner` has fewer than `max_profiles`
    /// ([`StoreError::ProfileLimit`] otherwise). The count and the insert are one step, so
    /// writers creating profiles at once, in one process or on several replicas, never take
    /// an owner past the limit.
    fn save_profile(
        &self,
        owner: &ProfileOwner,
        profile: Profile,
        expected_version: u64,
        max_profiles: usize,
    ) -> StoreFuture<'_, u64>;

    /// The profile `name` of `owner`, if it exists.
    fn get_profile(&self, owner: &ProfileOwner, name: &str) -> StoreFuture<'_, Option<Profile>>;

    /// Every profile of `owner`, by name.
    fn list_profiles(&self, owner: &ProfileOwner) -> StoreFuture<'_, Vec<Profile>>;

    /// Deletes the profile `name` of `owner`; true when there was one.
    fn delete_profile(&self, owner: &ProfileOwner, name: &str) -> StoreFuture<'_, bool>;
}

/// Profiles in memory (the default; gone when the process ends).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ferry_store::StoreError> {
/// use ferry_store::StoreError;
/// use ferry_store::profiles::{MemoryProfiles, Profile, ProfileOwner, ProfileStore};
///
/// let store = MemoryProfiles::new();
/// let alice = ProfileOwner::new("", "alice");
/// let home = Profile { name: "home".into(), ..Profile::default() };
/// assert_eq!(store.save_profile(&alice, home.clone(), 0, 8).await?, 1);
/// // A writer that read nothing (version 0) is now stale.
/// let stale = store.save_profile(&alice, home, 0, 8).await;
/// assert_eq!(stale, Err(StoreError::Changed("home".into())));
/// // Bob has none.
/// assert!(store.list_profiles(&ProfileOwner::new("", "bob")).await?.is_empty());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Default)]
pub struct MemoryProfiles {
    profiles: Mutex<BTreeMap<(ProfileOwner, String), Profile>>,
}

impl MemoryProfiles {
    /// An empty store.
    pub fn new() -> MemoryProfiles {
        MemoryProfiles::default()
    }

    fn map(&self) -> std::sync::MutexGuard<'_, BTreeMap<(ProfileOwner, String), Profile>> {
        self.profiles.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl ProfileStore for MemoryProfiles {
    fn save_profile(
        &self,
        owner: &ProfileOwner,
        mut profile: Profile,
        expected_version: u64,
        max_profiles: usize,
    ) -> StoreFuture<'_, u64> {
        let outcome = {
            let mut map = self.map();
            let key = (owner.clone(), profile.name.clone());
            let actual = map.get(&key).map_or(0, |p| p.version);
            let owned = || map.keys().filter(|(o, _)| o == owner).count();
            if actual != expected_version {
                Err(StoreError::Changed(profile.name))
            } else if expected_version == 0 && owned() >= max_profiles {
                Err(StoreError::ProfileLimit {
                    limit: max_profiles,
                })
            } else {
                profile.version = expected_version + 1;
                let version = profile.version;
                map.insert(key, profile);
                Ok(version)
            }
        };
        Box::pin(async move { outcome })
    }

    fn get_profile(&self, owner: &ProfileOwner, name: &str) -> StoreFuture<'_, Option<Profile>> {
        let found = self.map().get(&(owner.clone(), name.to_owned())).cloned();
        Box::pin(async move { Ok(found) })
    }

    fn list_profiles(&self, owner: &ProfileOwner) -> StoreFuture<'_, Vec<Profile>> {
        let found: Vec<Profile> = self
            .map()
            .iter()
            .filter(|((o, _), _)| o == owner)
            .map(|(_, p)| p.clone())
            .collect();
        Box::pin(async move { Ok(found) })
    }

    fn delete_profile(&self, owner: &ProfileOwner, name: &str) -> StoreFuture<'_, bool> {
        let gone = self
            .map()
            .remove(&(owner.clone(), name.to_owned()))
            .is_some();
        Box::pin(async move { Ok(gone) })
    }
}
