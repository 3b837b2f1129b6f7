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

    /// A timestamp from nanoseconds since the Unix epoch, kept to the nanosecond; `None`
    /// outside the supported range (the years -9999 to 9999, a day short at either end:
    /// jiff's, which leaves room for any UTC offset).
    ///
    /// ```
    /// use ferry_proto::Timestamp;
    ///
    /// let t = Timestamp::from_nanos(1_500_000_001).ok_or("in range")?;
    /// assert_eq!(t.as_nanos(), 1_500_000_001);
    /// assert_eq!(t.to_string(), "1970-01-01T00:00:01.500Z");
    /// assert_eq!(Timestamp::from_nanos(i128::MAX), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_nanos(nanos: i128) -> Option<Self> {
        jiff::Timestamp::from_nanosecond(nanos).ok().map(Self)
    }
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ`.
const WIRE_LEN: usize = 24;

impl Timestamp {
    /// The wire form written digit by digit (every status update carries one, and a format
    /// string parsed per call cost more than the rest of the status); `None` for years
    /// outside 0000–9999, which need a sign or a fifth digit.
    fn wire_digits(self) -> Option<[u8; WIRE_LEN]> {
        let t = jiff::tz::Offset::UTC.to_datetime(self.0);
        let year = u32::try_from(t.year()).ok().filter(|y| *y <= 9999)?;
        let fields = [
            (year, 4, 0),
            (u32::from(t.month().unsigned_abs()), 2, 5),
            (u32::from(t.day().unsigned_abs()), 2, 8),
            (u32::from(t.hour().unsigned_abs()), 2, 11),
            (u32::from(t.minute().unsigned_abs()), 2, 14),
            (u32::from(t.second().unsigned_abs()), 2, 17),
            (t.subsec_nanosecond().unsigned_abs() / 1_000_000, 3, 20),
        ];
        let mut out = *b"0000-00-00T00:00:00.000Z";
        for (mut value, width, at) in fields {
            for i in (at..at + width).rev() {
                out[i] = b'0' + (value % 10) as u8;
                value /= 10;
            }
        }
        Some(out)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.wire_digits() {
            // Only ASCII digits and separators were written.
            Some(digits) => f.write_str(std::str::from_utf8(&digits).map_err(|_| fmt::Error)?),
            // jiff's strftime: %.3f is a dot followed by exactly three fraction digits.
            None => write!(f, "{}", self.0.strftime("%Y-%m-%dT%H:%M:%S%.3fZ")),
        }
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
        match self.wire_digits() {
            Some(digits) => match std::str::from_utf8(&digits) {
                Ok(text) => s.serialize_str(text),
                Err(_) => s.collect_str(self),
            },
            None => s.collect_str(self),
        }
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
        assert_eq!(
            Timestamp::from_millis(-1).to_string(),
            "1969-12-31T23:59:59.999Z"
        );
        assert!("yesterday".parse::<Timestamp>().is_err());
    }

    /// The digit-by-digit form is what jiff's strftime writes, over leap days, month and
    /// year ends, millisecond edges and the ends of the four-digit years; outside them
    /// (negative years, 10000 on) strftime itself answers.
    #[test]
    fn wire_form_matches_strftime() {
        let strftime = |t: Timestamp| t.0.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
        let day = 86_400_000_i64;
        let mut samples: Vec<i64> = vec![
            0,
            -1,
            1,
            999,
            1000,
            951_782_400_000,     // 2000-02-29
            1_709_164_800_000,   // 2024-02-29
            4_102_444_799_999,   // 2099-12-31T23:59:59.999
            -62_167_219_200_000, // 0000-01-01
            -62_167_219_200_001, // -0001-12-31T23:59:59.999
            253_402_300_799_999, // 9999-12-31T23:59:59.999
            253_402_300_800_000, // 10000-01-01
        ];
        // Every day for 130 years from 1960, at a time that changes with the day.
        samples.extend((0..130 * 366).map(|d| -3_650 * day + d * day + d * 7_919 % day));
        for ms in samples {
            let t = Timestamp::from_millis(ms);
            let written = t.to_string();
            assert_eq!(written, strftime(t), "{ms}");
            assert_eq!(
                serde_json::to_string(&t).expect("serializes"),
                format!("\"{written}\""),
                "{ms}"
            );
        }
    }
}
