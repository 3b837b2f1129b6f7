//! How a proto message reads from JSON: as an object and only an object, with its field
//! names in either spelling.
//!
//! serde's derived `Deserialize` for a struct also accepts a JSON array and reads it
//! positionally, so `{"message": ["m-1", "", "", "ROLE_USER", [{"text": "x"}]]}` would be a
//! message. ProtoJSON has no such form, and a second reading of one body is exactly what
//! strict parsing is there to prevent. ProtoJSON parsers also accept the proto field name
//! (`context_id`) besides the JSON name (`contextId`). Every message type therefore
//! deserializes through [`ProtoMessage`], which hands the derived code a deserializer that
//! refuses arrays (with the same `invalid type` error as any other type mismatch) and gives
//! it every snake_case member name in camelCase. The same holds for the variant names of the
//! oneofs written as enums (`status_update` is `statusUpdate`). Free-form members
//! (`metadata`, a data part's `data`) are not messages: their names are kept as written.
//!
//! The derives of a message type carry `#[serde(remote = "Self")]`, which turns their code
//! into inherent `serialize`/`deserialize` functions; [`proto_messages!`] implements the
//! traits over them. Always decode through the traits (`serde_json::from_*`,
//! `<T as Deserialize>::deserialize`), never through the inherent `T::deserialize`. Types with
//! a hand-written `Deserialize` pass their wire twin through [`ProtoMessage`] themselves.

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Unexpected, Visitor,
};
use std::borrow::Cow;
use std::fmt;

/// A proto field name in its JSON (lowerCamelCase) spelling: `context_id` → `contextId`,
/// `oauth2_metadata_url` → `oauth2MetadataUrl`; a name without `_` is returned as it is.
///
/// ```
/// assert_eq!(ferry_proto::camel_case("history_length"), "historyLength");
/// assert_eq!(ferry_proto::camel_case("historyLength"), "historyLength");
/// ```
pub fn camel_case(name: &str) -> Cow<'_, str> {
    if !name.contains('_') {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A deserializer for a proto message: refuses a sequence where a struct is asked for, and
/// names members and oneof variants in camelCase; everything else goes to the inner
/// deserializer unchanged.
pub(crate) struct ProtoMessage<D>(pub(crate) D);

/// Any derived struct, read only from a JSON object: for types outside this crate (an
/// extension's request body) that serde's derive would also read from an array. Message
/// types of this crate need no wrapper; they refuse arrays themselves. Member names are not
/// respelled (the wrapped type's names are its own).
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
        T::deserialize(ObjectsOnly(d)).map(ObjectOnly)
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

/// Every deserializer method but `deserialize_struct` and `deserialize_enum`, forwarded
/// unchanged.
macro_rules! forward_rest {
    () => {
        forward! {
            deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32
            deserialize_i64 deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32
            deserialize_u64 deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char
            deserialize_str deserialize_string deserialize_bytes deserialize_byte_buf
            deserialize_option deserialize_unit deserialize_seq deserialize_map
            deserialize_identifier deserialize_ignored_any
        }
        forward_shaped!();
    };
}

/// The deserializer methods that take more than a visitor (and `is_human_readable`),
/// forwarded unchanged.
macro_rules! forward_shaped {
    () => {
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

        fn is_human_readable(&self) -> bool {
            self.0.is_human_readable()
        }
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for ProtoMessage<D> {
    type Error = D::Error;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0
            .deserialize_struct(name, fields, MapOnly(CamelKeys(visitor)))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, CamelKeys(visitor))
    }

    forward_rest!();
}

/// The object check alone, without respelling: what [`ObjectOnly`] uses.
struct ObjectsOnly<D>(D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for ObjectsOnly<D> {
    type Error = D::Error;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_struct(name, fields, MapOnly(visitor))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, visitor)
    }

    forward_rest!();
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

/// A visitor whose map keys and enum variants arrive in camelCase.
struct CamelKeys<V>(V);

impl<'de, V: Visitor<'de>> Visitor<'de> for CamelKeys<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(CamelMap(map))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.0.visit_seq(seq)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.0.visit_enum(CamelEnum(data))
    }
}

/// Map access whose keys are read through [`CamelKey`].
struct CamelMap<A>(A);

impl<'de, A: MapAccess<'de>> MapAccess<'de> for CamelMap<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(CamelKey(seed))
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        self.0.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

/// Enum access whose variant name is read through [`CamelKey`].
struct CamelEnum<A>(A);

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for CamelEnum<A> {
    type Error = A::Error;
    type Variant = A::Variant;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, A::Variant), A::Error> {
        self.0.variant_seed(CamelKey(seed))
    }
}

/// A key seed that hands the field visitor the camelCase spelling of a snake_case name.
struct CamelKey<K>(K);

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for CamelKey<K> {
    type Value = K::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<K::Value, D::Error> {
        self.0.deserialize(KeyDeserializer(d))
    }
}

/// The deserializer of one key: its strings are respelled, nothing else changes.
struct KeyDeserializer<D>(D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for KeyDeserializer<D> {
    type Error = D::Error;

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_identifier(CamelName(visitor))
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_str(CamelName(visitor))
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_string(CamelName(visitor))
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(CamelName(visitor))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_struct(name, fields, visitor)
    }

    forward! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32
        deserialize_i64 deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32
        deserialize_u64 deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char
        deserialize_bytes deserialize_byte_buf
        deserialize_option deserialize_unit deserialize_seq deserialize_map
        deserialize_ignored_any
    }

    forward_shaped!();
}

/// A name visitor that sees snake_case names in camelCase (camelCase ones pass untouched,
/// borrowed, without an allocation).
struct CamelName<V>(V);

impl<'de, V: Visitor<'de>> Visitor<'de> for CamelName<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        match camel_case(v) {
            Cow::Borrowed(v) => self.0.visit_str(v),
            Cow::Owned(v) => self.0.visit_string(v),
        }
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        match camel_case(v) {
            Cow::Borrowed(v) => self.0.visit_borrowed_str(v),
            Cow::Owned(v) => self.0.visit_string(v),
        }
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        match camel_case(&v) {
            Cow::Borrowed(_) => self.0.visit_string(v),
            Cow::Owned(c) => self.0.visit_string(c),
        }
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<V::Value, E> {
        self.0.visit_u64(v)
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<V::Value, E> {
        self.0.visit_bytes(v)
    }

    fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<V::Value, E> {
        self.0.visit_borrowed_bytes(v)
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<V::Value, E> {
        self.0.visit_byte_buf(v)
    }
}

/// Implements `Serialize` and `Deserialize` for message types whose derives carry
/// `#[serde(remote = "Self")]`: serialization as derived, deserialization as derived but
/// through [`ProtoMessage`].
macro_rules! proto_messages {
    ($($ty:ident),+ $(,)?) => {$(
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                $ty::serialize(self, s)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $ty::deserialize($crate::message::ProtoMessage(d))
            }
        }
    )+};
}
pub(crate) use proto_messages;
