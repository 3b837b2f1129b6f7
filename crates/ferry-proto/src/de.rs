//! Lenient ProtoJSON readers shared by the wire types: int32 as number or string, bytes as any
//! base64 flavour, and `google.protobuf.Value` members whose `null` is a value, not an absence.

use base64::Engine;
use serde::{Deserialize, Deserializer, de::Error};
use serde_json::Value;

/// An `int32` given as a JSON number or a decimal string (ProtoJSON accepts both).
pub(crate) fn opt_i32<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum NumOrStr {
        Num(i64),
        Float(f64),
        Str(String),
    }
    let v: Option<NumOrStr> = Option::deserialize(d)?;
    let n = match v {
        None => return Ok(None),
        Some(NumOrStr::Num(n)) => n,
        Some(NumOrStr::Float(f)) if f.fract() == 0.0 && f.abs() < 1e10 => f as i64,
        Some(NumOrStr::Float(f)) => return Err(D::Error::custom(format!("{f} is not an integer"))),
        Some(NumOrStr::Str(s)) => s
            .trim()
            .parse::<i64>()
            .map_err(|_| D::Error::custom(format!("{s:?} is not an integer")))?,
    };
    i32::try_from(n)
        .map(Some)
        .map_err(|_| D::Error::custom(format!("{n} is out of the int32 range")))
}

/// A required-or-defaulted `int32` read with [`opt_i32`]; absent or `null` is 0.
pub(crate) fn i32_or_zero<'de, D: Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
    Ok(opt_i32(d)?.unwrap_or(0))
}

/// Decodes base64 in any of the forms ProtoJSON accepts: standard or URL-safe alphabet, padded
/// or not.
pub(crate) fn decode_base64_lenient(s: &str) -> Result<Vec<u8>, base64::DecodeError> {
    use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
    use base64::engine::{DecodePaddingMode, general_purpose};
    const LENIENT: GeneralPurposeConfig =
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    const STANDARD: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::STANDARD, LENIENT);
    const URL_SAFE: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::URL_SAFE, LENIENT);
    let _ = general_purpose::STANDARD; // the padded encoder used for output lives in part.rs
    if s.contains(['-', '_']) {
        URL_SAFE.decode(s)
    } else {
        STANDARD.decode(s)
    }
}

/// Reads a `google.protobuf.Value` member as present even when it is JSON `null`.
pub(crate) fn present_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Reads a string whose JSON `null` means the default (ProtoJSON treats `null` as unset).
pub(crate) fn string_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

/// Reads a repeated field whose JSON `null` means empty.
pub(crate) fn vec_or_null<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
}

/// `skip_serializing_if` helper for proto3 `bool` fields without presence.
pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

/// `skip_serializing_if` helper for proto3 `int32` fields without presence.
pub(crate) fn is_zero(n: &i32) -> bool {
    *n == 0
}
