//! Proto messages are JSON objects, and only objects.
//!
//! serde's derived `Deserialize` for a struct also accepts a JSON array and reads it
//! positionally, so `{"message": ["m-1", "", "", "ROLE_USER", [{"text": "x"}]]}` would be a
//! message. ProtoJSON has no such form, and a second reading of one body is exactly what
//! strict parsing is there to prevent. Every message type therefore deserializes through
//! [`RefuseArrays`], which hands the derived code a deserializer that refuses arrays with the
//! same `invalid type` error as any other type mismatch.
//!
//! The derives of a message type carry `#[serde(remote = "Self")]`, which turns their code
//! into inherent `serialize`/`deserialize` functions; [`proto_messages!`] implements the
//! traits over them. Always decode through the traits (`serde_json::from_*`,
//! `<T as Deserialize>::deserialize`), never through the inherent `T::deserialize`. Types with
//! a hand-written `Deserialize` pass their wire twin through [`RefuseArrays`] themselves.

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Unexpected, Visitor};
use std::fmt;

/// A deserializer that refuses a sequence where a struct is asked for; everything else goes
/// to the inner deserializer unchanged.
pub(crate) struct RefuseArrays<D>(pub(crate) D);

/// Any derived struct, read only from a JSON object: for types outside this crate (an
/// extension's request body) that serde's derive would also read from an array. Message
/// types of this crate need no wrapper; they refuse arrays themselves.
///
/// ```
/// use ferry_proto::ObjectOnly;
///
/// #[derive(Debug, serde::Deserialize)]
/// struct Registration { name: String }
///
/// let ObjectOnly(r) = serde_json::from_str::<ObjectOnly<Registration>>(r#"{"name":"a"}"#)?;
/// assert_eq!(r.name, "a");
/// assert!(serde_json::from_str::<Registration>(r#"["a"]"#).is_ok(), "serde's derive alone");
/// assert!(serde_json::from_str::<ObjectOnly<Registration>>(r#"["a"]"#).is_err());
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectOnly<T>(pub T);

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for ObjectOnly<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(RefuseArrays(d)).map(ObjectOnly)
    }
}

/// Forwards one-argument `deserialize_*` methods to the inner deserializer.
macro_rules! forward {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.0.$method(visitor)
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for RefuseArrays<D> {
    type Error = D::Error;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_struct(name, fields, MapOnly(visitor))
    }

    forward! {
        deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32
        deserialize_i64 deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32
        deserialize_u64 deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char
        deserialize_str deserialize_string deserialize_bytes deserialize_byte_buf
        deserialize_option deserialize_unit deserialize_seq deserialize_map
        deserialize_identifier deserialize_ignored_any
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_unit_struct(name, visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_newtype_struct(name, visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple_struct(name, len, visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// A visitor that takes a map and refuses a sequence.
struct MapOnly<V>(V);

impl<'de, V: Visitor<'de>> Visitor<'de> for MapOnly<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(map)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<V::Value, A::Error> {
        Err(de::Error::invalid_type(Unexpected::Seq, &self))
    }
}

/// Implements `Serialize` and `Deserialize` for message types whose derives carry
/// `#[serde(remote = "Self")]`: serialization as derived, deserialization as derived but
/// through [`RefuseArrays`].
macro_rules! proto_messages {
    ($($ty:ident),+ $(,)?) => {$(
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                $ty::serialize(self, s)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $ty::deserialize($crate::object::RefuseArrays(d))
            }
        }
    )+};
}
pub(crate) use proto_messages;
