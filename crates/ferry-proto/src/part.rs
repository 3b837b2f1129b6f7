//! `Part`: one piece of message or artifact content, with exactly one content member.

use crate::de;
use crate::message::ProtoMessage;
use base64::Engine;
use serde::de::Error;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The content of a [`Part`]: the proto oneof `content`.
#[derive(Debug, Clone, PartialEq)]
pub enum PartContent {
    /// Text.
    Text(String),
    /// Inline file bytes (base64 on the wire).
    Raw(Vec<u8>),
    /// A reference to a file by URL.
    Url(String),
    /// Any JSON value (object, array, string, number, bool or null).
    Data(Value),
}

/// A section of content in a message or artifact (spec §4.5).
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// The one content member.
    pub content: PartContent,
    /// Part metadata (a `Struct`; `None` when unset).
    pub metadata: Option<Map<String, Value>>,
    /// File name, allowed on any part.
    pub filename: String,
    /// MIME type, allowed on any part.
    pub media_type: String,
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(PartContent::Text(text.into()))
    }

    /// A data part (`mediaType` left unset).
    pub fn data(value: Value) -> Self {
        Self::new(PartContent::Data(value))
    }

    /// A part with the given content and no extras.
    pub fn new(content: PartContent) -> Self {
        Self {
            content,
            metadata: None,
            filename: String::new(),
            media_type: String::new(),
        }
    }

    /// Sets the media type.
    pub fn with_media_type(mut self, media_type: impl Into<String>) -> Self {
        self.media_type = media_type.into();
        self
    }

    /// Sets the file name.
    pub fn with_filename(mut self, filename: impl Into<String>) -> Self {
        self.filename = filename.into();
        self
    }

    /// The text, if this is a text part.
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            PartContent::Text(t) => Some(t),
            _ => None,
        }
    }

    /// The JSON value, if this is a data part.
    pub fn as_data(&self) -> Option<&Value> {
        match &self.content {
            PartContent::Data(v) => Some(v),
            _ => None,
        }
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match &self.content {
            PartContent::Text(t) => m.serialize_entry("text", t)?,
            PartContent::Raw(b) => {
                m.serialize_entry("raw", &base64::engine::general_purpose::STANDARD.encode(b))?
            }
            PartContent::Url(u) => m.serialize_entry("url", u)?,
            PartContent::Data(v) => m.serialize_entry("data", v)?,
        }
        if let Some(md) = &self.metadata {
            m.serialize_entry("metadata", md)?;
        }
        if !self.filename.is_empty() {
            m.serialize_entry("filename", &self.filename)?;
        }
        if !self.media_type.is_empty() {
            m.serialize_entry("mediaType", &self.media_type)?;
        }
        m.end()
    }
}

/// The wire form of a part before the oneof is checked.
#[derive(Deserialize)]
struct WirePart {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    raw: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default, deserialize_with = "de::present_value")]
    data: Option<Value>,
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
    #[serde(default, deserialize_with = "de::string_or_null")]
    filename: String,
    #[serde(default, rename = "mediaType", deserialize_with = "de::string_or_null")]
    media_type: String,
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = WirePart::deserialize(ProtoMessage(d))?;
        let present = [
            w.text.is_some(),
            w.raw.is_some(),
            w.url.is_some(),
            w.data.is_some(),
        ]
        .iter()
        .filter(|p| **p)
        .count();
        if present != 1 {
            return Err(D::Error::custom(format!(
                "a part needs exactly one of text, raw, url or data; found {present}"
            )));
        }
        let content = if let Some(t) = w.text {
            PartContent::Text(t)
        } else if let Some(r) = w.raw {
            PartContent::Raw(
                de::decode_base64_lenient(&r)
                    .map_err(|e| D::Error::custom(format!("part raw is not base64: {e}")))?,
            )
        } else if let Some(u) = w.url {
            PartContent::Url(u)
        } else {
            PartContent::Data(w.data.unwrap_or(Value::Null))
        };
        Ok(Part {
            content,
            metadata: w.metadata,
            filename: w.filename,
            media_type: w.media_type,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn exactly_one_member() {
        assert!(serde_json::from_value::<Part>(json!({})).is_err());
        assert!(serde_json::from_value::<Part>(json!({"text":"a","url":"b"})).is_err());
        let p: Part = serde_json::from_value(json!({"text":""})).expect("empty text is valid");
        assert_eq!(serde_json::to_value(&p).expect("ser"), json!({"text":""}));
        let p: Part = serde_json::from_value(json!({"data":null})).expect("null data is a value");
        assert_eq!(p.content, PartContent::Data(Value::Null));
    }

    #[test]
    fn raw_is_padded_out_and_lenient_in() {
        for input in ["//4=", "//4", "__4=", "__4"] {
            let p: Part = serde_json::from_value(json!({"raw": input})).expect(input);
            assert_eq!(p.content, PartContent::Raw(vec![0xff, 0xfe]), "{input}");
            assert_eq!(
                serde_json::to_value(&p).expect("ser"),
                json!({"raw":"//4="})
            );
        }
        assert!(serde_json::from_value::<Part>(json!({"raw":"***"})).is_err());
    }

    #[test]
    fn media_type_in_camel_case() {
        let p: Part =
            serde_json::from_value(json!({"text":"x","mediaType":"text/plain"})).expect("camel");
        assert_eq!(p.media_type, "text/plain");
    }

    #[test]
    fn snake_case_in_camel_case_out() {
        let p: Part = serde_json::from_value(
            json!({"url":"https://x/y.pdf","media_type":"application/pdf","filename":"y.pdf"}),
        )
        .expect("snake");
        assert_eq!(
            serde_json::to_value(&p).expect("ser"),
            json!({"url":"https://x/y.pdf","filename":"y.pdf","mediaType":"application/pdf"})
        );
    }
}
