//! Saved profiles: the caller's named sets of form values that `"auto": true` fills from.
//!
//! A caller manages them with a data part of its own (or the MCP tool `forms_profile`, or
//! `ferry profile`), which goes alone in its message:
//!
//! | command | does |
//! |---|---|
//! | `{"profile": {"set": {"name": "home", "values": {"given-name": "Ada"}, "cards": false}}}` | creates or changes `home`: the values are merged in (a `null` value removes its key; `"replace": true` replaces them all); `cards` marks it for card numbers |
//! | `{"profile": {"get": "home"}}` | its values (a card number shows its last four digits only) |
//! | `{"profile": {"list": true}}` | every profile of the caller: names, how many values, cards |
//! | `{"profile": {"delete": "home"}}` | deletes it |
//!
//! Keys are WHATWG autofill field names (`given-name`, `family-name`, `email`, `tel`,
//! `street-address`, `postal-code`, `country`, `bday`, `organization`, …) or free labels
//! ("Membership number"), which the matcher then fits to a field as it fits a caller's key.
//!
//! # Whose profiles
//!
//! Each (tenant, caller) owns its profiles: a caller is the token the server authenticated
//! ([`ferry_agent::RequestContext::caller`]), so two callers with different tokens never
//! see each other's. Only [`FormsConfig::shared_profiles`](crate::FormsConfig) makes the
//! profiles of a tenant common to all its callers. A server without tokens names every
//! request the one caller `local`; a request with no caller at all (an anonymous caller of a
//! server with tokens) has no profiles: commands are refused, and `auto` uses only the
//! conversation's notes.
//!
//! # What a profile never holds
//!
//! Passwords, one-time codes and card security codes: `set` refuses their keys (by autofill
//! name and by label in the four languages auto-fill reads), since auto-fill would never use
//! them and a stored secret is a liability.
//!
//! # Limits
//!
//! [`MAX_PROFILES`] per caller, [`MAX_PROFILE_VALUES`] values per profile, keys of at most
//! [`MAX_KEY_BYTES`], values of at most [`MAX_VALUE_BYTES`], names of 1 to [`MAX_NAME_LEN`]
//! letters, digits, `.`, `_` or `-`. The store counts and creates in one step
//! ([`ProfileStore::save_profile`]), so a caller racing itself, even across replicas, never
//! ends above [`MAX_PROFILES`].

use crate::autofill;
use crate::pool::ConversationKey;
use ferry_store::StoreError;
use ferry_store::profiles::{Profile, ProfileOwner, ProfileStore};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Profiles one caller may keep.
pub const MAX_PROFILES: usize = 32;
/// Values one profile may hold.
pub const MAX_PROFILE_VALUES: usize = 200;
/// Longest key of a profile value, in bytes.
pub const MAX_KEY_BYTES: usize = 256;
/// Longest profile value, in bytes.
pub const MAX_VALUE_BYTES: usize = 4096;
/// Longest profile name, in characters.
pub const MAX_NAME_LEN: usize = 64;
/// The profile `auto` uses when the request names none (and the caller has several).
pub const DEFAULT_PROFILE: &str = "default";
/// How many times a `set` that raced another change of the same profile is tried again.
const SAVE_ATTEMPTS: usize = 5;

/// A command about the caller's profiles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProfileCommand {
    /// Create or change a profile.
    Set {
        /// Its name.
        name: String,
        /// Values to set (`Some`) or remove (`None`).
        values: BTreeMap<String, Option<String>>,
        /// Mark (or unmark) it for card numbers; `None` keeps what it was (false when new).
        cards: Option<bool>,
        /// Replace every value instead of merging.
        replace: bool,
    },
    /// Read one profile.
    Get {
        /// Its name.
        name: String,
    },
    /// List the caller's profiles.
    List,
    /// Delete one profile.
    Delete {
        /// Its name.
        name: String,
    },
}

/// Reads a profile command out of a request object: `None` when the object is not one (no
/// `profile` key holding an object).
pub(crate) fn command_of(value: &Value) -> Result<Option<ProfileCommand>, CommandError> {
    let Some(object) = value.as_object() else {
        return Ok(None);
    };
    let Some(Value::Object(command)) = object.get("profile") else {
        return Ok(None);
    };
    if object.len() > 1 {
        return Err(problem(
            "a profile command goes alone in its message (no url, values or other keys beside it)",
        ));
    }
    parse_command(command).map(Some)
}

fn problem(text: impl Into<String>) -> CommandError {
    CommandError(text.into())
}

/// A profile command that is not well formed, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("profile: {0}")]
pub struct CommandError(pub String);

/// Reads the command object (`{"set": {…}}`, `{"get": "home"}`, `{"list": true}`,
/// `{"delete": "home"}`).
pub fn parse_command(command: &Map<String, Value>) -> Result<ProfileCommand, CommandError> {
    let mut entries = command.iter();
    let (Some((verb, argument)), None) = (entries.next(), entries.next()) else {
        return Err(problem(
            "give exactly one of set, get, list, delete, like {\"get\": \"home\"}",
        ));
    };
    let named = |argument: &Value| -> Result<String, CommandError> {
        let name = match argument {
            Value::String(name) => name.as_str(),
            Value::Object(o) if o.len() == 1 && o.get("name").is_some_and(Value::is_string) => {
                o["name"].as_str().unwrap_or_default()
            }
            _ => {
                return Err(problem(format!(
                    "{verb} takes a profile name, like {{\"{verb}\": \"home\"}}"
                )));
            }
        };
        check_name(name).map_err(problem)?;
        Ok(name.to_owned())
    };
    match verb.as_str() {
        "get" => Ok(ProfileCommand::Get {
            name: named(argument)?,
        }),
        "delete" => Ok(ProfileCommand::Delete {
            name: named(argument)?,
        }),
        "list" => match argument {
            Value::Bool(true) | Value::Null => Ok(ProfileCommand::List),
            Value::Object(o) if o.is_empty() => Ok(ProfileCommand::List),
            _ => Err(problem("list takes true, like {\"list\": true}")),
        },
        "set" => parse_set(argument),
        other => Err(problem(format!(
            "unknown command {other:?} (known: set, get, list, delete)"
        ))),
    }
}

fn parse_set(argument: &Value) -> Result<ProfileCommand, CommandError> {
    let object = argument.as_object().ok_or_else(|| {
        problem("set takes an object, like {\"set\": {\"name\": \"home\", \"values\": {\"given-name\": \"Ada\"}}}")
    })?;
    let mut name = DEFAULT_PROFILE.to_owned();
    let mut values = BTreeMap::new();
    let mut cards = None;
    let mut replace = false;
    for (key, value) in object {
        match key.as_str() {
            "name" => {
                let text = value
                    .as_str()
                    .ok_or_else(|| problem("set.name must be a string"))?;
                check_name(text).map_err(problem)?;
                name = text.to_owned();
            }
            "values" => values = parse_values(value)?,
            "cards" => {
                cards = Some(
                    value
                        .as_bool()
                        .ok_or_else(|| problem("set.cards must be true or false"))?,
                );
            }
            "replace" => {
                replace = value
                    .as_bool()
                    .ok_or_else(|| problem("set.replace must be true or false"))?;
            }
            other => {
                return Err(problem(format!(
                    "unknown key set.{other} (known: name, values, cards, replace)"
                )));
            }
        }
    }
    Ok(ProfileCommand::Set {
        name,
        values,
        cards,
        replace,
    })
}

fn parse_values(value: &Value) -> Result<BTreeMap<String, Option<String>>, CommandError> {
    let object = value
        .as_object()
        .ok_or_else(|| problem("set.values must be an object of key → value"))?;
    if object.len() > MAX_PROFILE_VALUES {
        return Err(problem(format!(
            "set.values: more than {MAX_PROFILE_VALUES} keys"
        )));
    }
    let mut out = BTreeMap::new();
    for (key, value) in object {
        check_key(key).map_err(problem)?;
        let text = match value {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => {
                return Err(problem(format!(
                    "set.values.{key}: must be text (or null to remove it)"
                )));
            }
        };
        if let Some(text) = &text
            && text.len() > MAX_VALUE_BYTES
        {
            return Err(problem(format!(
                "set.values.{key}: longer than {MAX_VALUE_BYTES} bytes"
            )));
        }
        out.insert(key.clone(), text);
    }
    Ok(out)
}

/// Checks a profile name: 1 to [`MAX_NAME_LEN`] ASCII letters, digits, `.`, `_`, `-`.
pub fn check_name(name: &str) -> Result<(), String> {
    let fine = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if fine {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a profile name (1 to {MAX_NAME_LEN} letters, digits, '.', '_' or '-')"
        ))
    }
}

/// Checks a value's key: not empty, not too long, and no secret's name.
fn check_key(key: &str) -> Result<(), String> {
    if key.trim().is_empty() {
        return Err("set.values: keys must name a field (empty key)".into());
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(format!(
            "set.values: a key is longer than {MAX_KEY_BYTES} bytes"
        ));
    }
    if autofill::is_secret_key(key) {
        return Err(format!(
            "set.values.{key}: profiles never keep passwords, one-time codes or card security codes"
        ));
    }
    Ok(())
}

/// Why a profile command failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    /// The caller already has [`MAX_PROFILES`].
    #[error(
        "you have {MAX_PROFILES} profiles already, the most one caller may keep; delete one first"
    )]
    TooMany,
    /// The merged profile would hold too many values.
    #[error("the profile would hold {0} values; at most {MAX_PROFILE_VALUES}")]
    TooManyValues(usize),
    /// No such profile.
    #[error("you have no profile named {0:?}")]
    NotFound(String),
    /// The request names no caller (an anonymous caller of a server with tokens).
    #[error("saved profiles belong to a caller, and this request has none: call with a token")]
    NoCaller,
    /// The store failed.
    #[error("{0}")]
    Store(StoreError),
}

/// The forms agent's view of the profile store: whose profiles a conversation sees, and the
/// commands.
#[derive(Debug, Clone)]
pub(crate) struct Profiles {
    store: Arc<dyn ProfileStore>,
    shared: bool,
}

impl Profiles {
    /// Profiles in `store`; `shared`: every caller of a tenant shares them.
    pub(crate) fn new(store: Arc<dyn ProfileStore>, shared: bool) -> Profiles {
        Profiles { store, shared }
    }

    /// Whose profiles conversation `key` sees; none without a caller.
    pub(crate) fn owner(&self, key: &ConversationKey) -> Result<ProfileOwner, ProfileError> {
        let caller = key.caller.as_ref().ok_or(ProfileError::NoCaller)?;
        let caller = if self.shared {
            String::new()
        } else {
            caller.clone()
        };
        Ok(ProfileOwner::new(key.tenant.clone(), caller))
    }

    /// Runs `command` for `owner`; the answer's JSON (see the module docs).
    pub(crate) async fn execute(
        &self,
        owner: &ProfileOwner,
        command: ProfileCommand,
    ) -> Result<Value, ProfileError> {
        match command {
            ProfileCommand::Get { name } => {
                let profile = self
                    .store
                    .get_profile(owner, &name)
                    .await
                    .map_err(ProfileError::Store)?
                    .ok_or(ProfileError::NotFound(name))?;
                Ok(json!({"profile": shown(&profile)}))
            }
            ProfileCommand::List => {
                let profiles = self
                    .store
                    .list_profiles(owner)
                    .await
                    .map_err(ProfileError::Store)?;
                let list: Vec<Value> = profiles
                    .iter()
                    .map(|p| {
                        json!({
                            "name": p.name,
                            "values": p.values.len(),
                            "cards": p.cards,
                            "updated": timestamp(p.updated_ms),
                        })
                    })
                    .collect();
                Ok(json!({"profiles": list}))
            }
            ProfileCommand::Delete { name } => {
                let existed = self
                    .store
                    .delete_profile(owner, &name)
                    .await
                    .map_err(ProfileError::Store)?;
                if !existed {
                    return Err(ProfileError::NotFound(name));
                }
                Ok(json!({"deleted": name}))
            }
            ProfileCommand::Set {
                name,
                values,
                cards,
                replace,
            } => {
                let saved = self.set(owner, &name, &values, cards, replace).await?;
                Ok(json!({"saved": shown(&saved)}))
            }
        }
    }

    /// Merges `values` into profile `name` (creating it), retrying when another change of
    /// the same profile came between the read and the save.
    async fn set(
        &self,
        owner: &ProfileOwner,
        name: &str,
        values: &BTreeMap<String, Option<String>>,
        cards: Option<bool>,
        replace: bool,
    ) -> Result<Profile, ProfileError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let current = self
                .store
                .get_profile(owner, name)
                .await
                .map_err(ProfileError::Store)?;
            let expected = current.as_ref().map_or(0, |p| p.version);
            let mut profile = current.unwrap_or_else(|| Profile {
                name: name.to_owned(),
                ..Profile::default()
            });
            if replace {
                profile.values.clear();
            }
            for (key, value) in values {
                match value {
                    Some(v) => profile.values.insert(key.clone(), v.clone()),
                    None => profile.values.remove(key),
                };
            }
            if profile.values.len() > MAX_PROFILE_VALUES {
                return Err(ProfileError::TooManyValues(profile.values.len()));
            }
            if let Some(cards) = cards {
                profile.cards = cards;
            }
            profile.updated_ms = now_ms();
            match self
                .store
                .save_profile(owner, profile.clone(), expected, MAX_PROFILES)
                .await
            {
                Ok(version) => {
                    profile.version = version;
                    return Ok(profile);
                }
                Err(StoreError::Changed(_)) if attempt < SAVE_ATTEMPTS => continue,
                Err(StoreError::ProfileLimit { .. }) => return Err(ProfileError::TooMany),
                Err(e) => return Err(ProfileError::Store(e)),
            }
        }
    }

    /// The profile `auto` fills from: `name`, else [`DEFAULT_PROFILE`], else the owner's
    /// only one. `Ok(None)` with no profile to use; an error for a named one that is missing.
    pub(crate) async fn for_auto(
        &self,
        owner: &ProfileOwner,
        name: Option<&str>,
    ) -> Result<Option<Profile>, ProfileError> {
        if let Some(name) = name {
            return self
                .store
                .get_profile(owner, name)
                .await
                .map_err(ProfileError::Store)?
                .map(Some)
                .ok_or_else(|| ProfileError::NotFound(name.to_owned()));
        }
        let mut all = self
            .store
            .list_profiles(owner)
            .await
            .map_err(ProfileError::Store)?;
        if let Some(i) = all.iter().position(|p| p.name == DEFAULT_PROFILE) {
            return Ok(Some(all.swap_remove(i)));
        }
        Ok(if all.len() == 1 { all.pop() } else { None })
    }

    /// The names of the owner's profiles (for a hint when `auto` could not pick one).
    pub(crate) async fn names(&self, owner: &ProfileOwner) -> Vec<String> {
        self.store
            .list_profiles(owner)
            .await
            .map(|all| all.into_iter().map(|p| p.name).collect())
            .unwrap_or_default()
    }
}

/// A profile as an answer shows it: card numbers masked to their last four digits.
fn shown(profile: &Profile) -> Value {
    let values: Map<String, Value> = profile
        .values
        .iter()
        .map(|(k, v)| {
            let v = if autofill::is_card_number_key(k) {
                mask_card_number(v)
            } else {
                v.clone()
            };
            (k.clone(), Value::String(v))
        })
        .collect();
    json!({
        "name": profile.name,
        "values": values,
        "cards": profile.cards,
        "version": profile.version,
        "updated": timestamp(profile.updated_ms),
    })
}

/// `•••• 1111`: enough to tell cards apart, not enough to use one.
fn mask_card_number(number: &str) -> String {
    let digits: Vec<char> = number.chars().filter(char::is_ascii_digit).collect();
    let last: String = digits[digits.len().saturating_sub(4)..].iter().collect();
    format!("•••• {last}")
}

fn now_ms() -> u64 {
    u64::try_from(jiff::Timestamp::now().as_millisecond()).unwrap_or(0)
}

fn timestamp(ms: u64) -> String {
    i64::try_from(ms)
        .ok()
        .and_then(|ms| jiff::Timestamp::from_millisecond(ms).ok())
        .map(|t| t.to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_store::profiles::MemoryProfiles;

    fn command(value: Value) -> Result<ProfileCommand, CommandError> {
        command_of(&json!({ "profile": value })).map(|c| c.expect("a command"))
    }

    #[test]
    fn commands_are_read_strictly() {
        assert_eq!(
            command(json!({"get": "home"})),
            Ok(ProfileCommand::Get {
                name: "home".into()
            })
        );
        assert_eq!(
            command(json!({"delete": {"name": "w-1"}})),
            Ok(ProfileCommand::Delete { name: "w-1".into() })
        );
        assert_eq!(command(json!({"list": true})), Ok(ProfileCommand::List));
        let Ok(ProfileCommand::Set {
            name,
            values,
            cards,
            replace,
        }) = command(json!({"set": {"values": {"given-name": "Ada", "tel": 123, "email": null}}}))
        else {
            panic!("set");
        };
        assert_eq!(name, DEFAULT_PROFILE);
        assert_eq!(values["tel"], Some("123".into()));
        assert_eq!(values["email"], None);
        assert!(cards.is_none() && !replace);
        for bad in [
            json!({}),
            json!({"get": "home", "list": true}),
            json!({"fetch": "home"}),
            json!({"get": "bad name"}),
            json!({"get": 1}),
            json!({"set": {"values": {"current-password": "x"}}}),
            json!({"set": {"values": {"Passwort": "x"}}}),
            json!({"set": {"values": {"CVV": "123"}}}),
            json!({"set": {"values": {"email": ["a"]}}}),
            json!({"set": {"nme": "home"}}),
            json!({"set": {"values": {"": "x"}}}),
        ] {
            assert!(command(bad.clone()).is_err(), "{bad}");
        }
        let alone = command_of(&json!({"profile": {"list": true}, "url": "https://e.com"}));
        assert!(alone.is_err(), "a profile command goes alone");
        assert_eq!(command_of(&json!({"url": "https://e.com"})), Ok(None));
        let long = "x".repeat(MAX_VALUE_BYTES + 1);
        assert!(command(json!({"set": {"values": {"email": long}}})).is_err());
    }

    #[tokio::test]
    async fn set_merges_get_masks_and_callers_stay_apart() {
        let profiles = Profiles::new(Arc::new(MemoryProfiles::new()), false);
        let key = |caller: &str| ConversationKey {
            tenant: String::new(),
            caller: Some(caller.into()),
            context_id: "c".into(),
        };
        let alice = profiles.owner(&key("alice")).expect("alice");
        let bob = profiles.owner(&key("bob")).expect("bob");
        let nobody = ConversationKey {
            caller: None,
            ..key("x")
        };
        assert_eq!(profiles.owner(&nobody), Err(ProfileError::NoCaller));
        let set = |values: Value| {
            command(json!({"set": {"name": "home", "values": values}})).expect("set")
        };
        profiles
            .execute(
                &alice,
                set(json!({"given-name": "Ada", "email": "ada@example.com"})),
            )
            .await
            .expect("first set");
        let answer = profiles
            .execute(
                &alice,
                set(json!({"email": null, "cc-number": "4111 1111 1111 1234"})),
            )
            .await
            .expect("merge");
        assert_eq!(answer["saved"]["version"], 2);
        let got = profiles
            .execute(
                &alice,
                ProfileCommand::Get {
                    name: "home".into(),
                },
            )
            .await
            .expect("get");
        assert_eq!(
            got["profile"]["values"],
            json!({"given-name": "Ada", "cc-number": "•••• 1234"})
        );
        assert_eq!(
            profiles
                .execute(
                    &bob,
                    ProfileCommand::Get {
                        name: "home".into()
                    }
                )
                .await,
            Err(ProfileError::NotFound("home".into()))
        );
        let list = profiles
            .execute(&bob, ProfileCommand::List)
            .await
            .expect("list");
        assert_eq!(list, json!({"profiles": []}));
        // auto picks the only one, then `default` among several.
        let only = profiles.for_auto(&alice, None).await.expect("auto");
        assert_eq!(only.map(|p| p.name), Some("home".into()));
        profiles
            .execute(
                &alice,
                command(json!({"set": {"name": "work", "values": {"organization": "ACME"}}}))
                    .expect("set"),
            )
            .await
            .expect("work");
        assert_eq!(
            profiles.for_auto(&alice, None).await,
            Ok(None),
            "two, none default"
        );
        assert!(matches!(
            profiles.for_auto(&alice, Some("gone")).await,
            Err(ProfileError::NotFound(_))
        ));
    }

    #[tokio::test]
    async fn a_caller_keeps_at_most_the_limit() {
        let profiles = Profiles::new(Arc::new(MemoryProfiles::new()), false);
        let owner = ProfileOwner::new("", "alice");
        for n in 0..MAX_PROFILES {
            let c = command(json!({"set": {"name": format!("p{n}")}})).expect("set");
            profiles.execute(&owner, c).await.expect("under the limit");
        }
        let c = command(json!({"set": {"name": "one-more"}})).expect("set");
        assert_eq!(
            profiles.execute(&owner, c).await,
            Err(ProfileError::TooMany)
        );
        // Changing an existing one is still fine.
        let c = command(json!({"set": {"name": "p0", "values": {"email": "a@b.c"}}})).expect("set");
        assert!(profiles.execute(&owner, c).await.is_ok());
    }

    #[test]
    fn shared_profiles_belong_to_the_tenant() {
        let profiles = Profiles::new(Arc::new(MemoryProfiles::new()), true);
        let key = |caller: &str| ConversationKey {
            tenant: "t".into(),
            caller: Some(caller.into()),
            context_id: "c".into(),
        };
        assert_eq!(profiles.owner(&key("alice")), profiles.owner(&key("bob")));
        assert_eq!(
            profiles.owner(&key("alice")).map(|o| o.tenant),
            Ok("t".into())
        );
    }
}
