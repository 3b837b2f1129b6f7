//! `google.protobuf.Struct`, `Value` and `Timestamp` against serde_json and [`Timestamp`].
//!
//! Protobuf numbers are all `f64`. JSON integers go out through `as_f64` (exact below 2^53);
//! an integral `f64` below 2^53 comes back as a JSON integer, so `3` stays `3` and not `3.0`.
//! JSON has no NaN or infinity, so a `Value` holding one is refused rather than turned into
//! `null` behind the caller's back; a `Value` with no kind set is `null`.

use super::invalid::{Decode, Invalid};
use crate::Timestamp;
use prost_types::value::Kind;
use prost_types::{ListValue, Struct};
use serde_json::{Map, Number, Value};

/// 2^53: the integers below it are exact in an `f64`.
const EXACT_INTEGERS: f64 = 9_007_199_254_740_992.0;

const NANOS_PER_SECOND: i128 = 1_000_000_000;

/// A JSON value as a `google.protobuf.Value`.
pub(super) fn value_to_pb(value: &Value) -> prost_types::Value {
    let kind = match value {
        Value::Null => Kind::NullValue(prost_types::NullValue::NullValue.into()),
        Value::Bool(b) => Kind::BoolValue(*b),
        // Without serde_json's `arbitrary_precision` every number has an f64 form.
        Value::Number(n) => n.as_f64().map_or(Kind::NullValue(0), Kind::NumberValue),
        Value::String(s) => Kind::StringValue(s.clone()),
        Value::Array(items) => Kind::ListValue(ListValue {
            values: items.iter().map(value_to_pb).collect(),
        }),
        Value::Object(map) => Kind::StructValue(struct_to_pb(map)),
    };
    prost_types::Value { kind: Some(kind) }
}

/// A JSON object as a `google.protobuf.Struct`.
pub(super) fn struct_to_pb(map: &Map<String, Value>) -> Struct {
    Struct {
        fields: map
            .iter()
            .map(|(k, v)| (k.clone(), value_to_pb(v)))
            .collect(),
    }
}

impl Decode for Value {
    type Pb = prost_types::Value;

    fn decode(pb: prost_types::Value) -> Result<Value, Invalid> {
        Ok(match pb.kind {
            None | Some(Kind::NullValue(_)) => Value::Null,
            Some(Kind::BoolValue(b)) => Value::Bool(b),
            Some(Kind::NumberValue(x)) => Value::Number(number(x)?),
            Some(Kind::StringValue(s)) => Value::String(s),
            Some(Kind::ListValue(list)) => Value::Array(
                list.values
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| Value::decode(v).map_err(|e| e.at_index(i)))
                    .collect::<Result<_, _>>()?,
            ),
            Some(Kind::StructValue(s)) => Value::Object(Map::decode(s)?),
        })
    }
}

impl Decode for Map<String, Value> {
    type Pb = Struct;

    fn decode(pb: Struct) -> Result<Map<String, Value>, Invalid> {
        pb.fields
            .into_iter()
            .map(|(k, v)| match Value::decode(v) {
                Ok(v) => Ok((k, v)),
                Err(e) => Err(e.at_key(&k)),
            })
            .collect()
    }
}

/// A protobuf number as a JSON number: an integer when it is one exactly.
fn number(x: f64) -> Result<Number, Invalid> {
    if x.fract() == 0.0 && x.abs() < EXACT_INTEGERS && !(x == 0.0 && x.is_sign_negative()) {
        // Integral and below 2^53 in magnitude: the conversion is exact.
        return Ok(Number::from(x as i64));
    }
    Number::from_f64(x).ok_or_else(|| {
        Invalid::new(format!(
            "{x} is not a JSON number (JSON has no NaN or infinity)"
        ))
    })
}

/// A timestamp as a `google.protobuf.Timestamp` (seconds and non-negative nanoseconds).
pub(super) fn timestamp_to_pb(t: Timestamp) -> prost_types::Timestamp {
    let nanos = t.as_nanos();
    prost_types::Timestamp {
        // The supported years keep the seconds far inside i64; the fraction is below 10^9.
        seconds: i64::try_from(nanos.div_euclid(NANOS_PER_SECOND)).unwrap_or(i64::MAX),
        nanos: i32::try_from(nanos.rem_euclid(NANOS_PER_SECOND)).unwrap_or(0),
    }
}

impl Decode for Timestamp {
    type Pb = prost_types::Timestamp;

    fn decode(pb: prost_types::Timestamp) -> Result<Timestamp, Invalid> {
        if !(0..1_000_000_000).contains(&pb.nanos) {
            return Err(Invalid::new(format!(
                "nanos {} is outside 0 to 999999999",
                pb.nanos
            )));
        }
        let nanos = i128::from(pb.seconds) * NANOS_PER_SECOND + i128::from(pb.nanos);
        Timestamp::from_nanos(nanos).ok_or_else(|| {
            Invalid::new(format!(
                "{} seconds since 1970 is outside the supported range (the years -9999 to 9999)",
                pb.seconds
            ))
        })
    }
}
