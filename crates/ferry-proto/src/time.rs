//! `google.protobuf.Timestamp`: RFC 3339 in UTC with `Z` and milliseconds on output, any RFC 3339
//! fraction length on input.

use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error};
use std::fmt;
use std::str::FromStr;

/// A point in time as A2A puts it on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(jiff::Timestamp);

impl Timestamp {
    /// The current time, truncated to milliseconds so that what we store is what we emit.
    pub fn now() -> Self {
        Self::from_millis(jiff::Timestamp::now().as_millisecond())
    }

    /// A timestamp from milliseconds since the Unix epoch (clamped to the representable range).
    pub fn from_millis(ms: i64) -> Self {
        Self(jiff::Timestamp::from_millisecond(ms).unwrap_or(jiff::Timestamp::UNIX_EPOCH))
    }

    /// Milliseconds since the Unix epoch.
    pub fn as_millis(self) -> i64 {
        self.0.as_millisecond()
    }

    /// Nanoseconds since the Unix epoch (what ordering and cursors use).
    pub fn as_nanos(self) -> i128 {
        self.0.as_nanosecond()
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // jiff's strftime: %.3f is a dot followed by exactly three fraction digits.
        write!(f, "{}", self.0.strftime("%Y-%m-%dT%H:%M:%S%.3fZ"))
    }
}

/// The reasons a timestamp string is refused.
#[derive(Debug, thiserror::Error)]
#[error("{input:?} is not an RFC 3339 timestamp")]
pub struct TimestampError {
    input: String,
}

impl FromStr for Timestamp {
    type Err = TimestampError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // RFC 3339 requires the `T`, a seconds field and an offset; jiff checks all of that.
        // A lowercase `t`/`z` is allowed by RFC 3339, and jiff accepts it too.
        jiff::Timestamp::from_str(s)
            .map(Self)
            .map_err(|_| TimestampError {
                input: s.to_owned(),
            })
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn millis_out_any_fraction_in() {
        let t: Timestamp = "2026-01-01T10:30:00Z".parse().expect("no fraction");
        assert_eq!(t.to_string(), "2026-01-01T10:30:00.000Z");
        let t: Timestamp = "2026-01-01T10:30:00.123456789Z".parse().expect("nanos");
        assert_eq!(t.to_string(), "2026-01-01T10:30:00.123Z");
        let t: Timestamp = "2026-01-01T12:30:00.5+02:00".parse().expect("offset");
        assert_eq!(t.to_string(), "2026-01-01T10:30:00.500Z");
        assert!("2026-01-01".parse::<Timestamp>().is_err());
        assert!("yesterday".parse::<Timestamp>().is_err());
    }
}
