//! Typed data a server extension hands to each turn, without this crate knowing the
//! extension: one value per type, read with [`crate::RequestContext::extension`].

use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// One value per type, shared (cheap to clone with the context it is part of).
///
/// ```
/// use ferry_agent::TurnData;
///
/// #[derive(Debug, PartialEq)]
/// struct Region(&'static str);
///
/// let mut data = TurnData::default();
/// data.insert(Region("eu"));
/// assert_eq!(data.get::<Region>(), Some(&Region("eu")));
/// assert_eq!(data.get::<String>(), None);
/// ```
#[derive(Clone, Default)]
pub struct TurnData {
    values: BTreeMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl TurnData {
    /// Puts `value` in, replacing a value of the same type.
    pub fn insert<T: Any + Send + Sync>(&mut self, value: T) {
        self.values.insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The value of type `T`, if one was put in.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.values
            .get(&TypeId::of::<T>())
            .and_then(|v| v.downcast_ref::<T>())
    }

    /// How many values it holds.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl fmt::Debug for TurnData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The values are the extensions' business (and may hold credentials): count only.
        f.debug_struct("TurnData")
            .field("values", &self.values.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_type_holds_one_value_and_debug_shows_only_the_count() {
        let mut data = TurnData::default();
        assert!(data.is_empty());
        data.insert(String::from("first secret"));
        data.insert(String::from("second secret"));
        data.insert(7_u32);
        assert_eq!(data.len(), 2, "one value per type");
        assert_eq!(
            data.get::<String>().map(String::as_str),
            Some("second secret")
        );
        assert_eq!(data.get::<u32>(), Some(&7));
        let shown = format!("{data:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains('2'), "{shown}");
    }
}
