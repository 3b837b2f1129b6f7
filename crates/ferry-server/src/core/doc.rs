//! A response document serialized once.

use bytes::Bytes;
use ferry_proto::TaskView;

/// The first allocation of a document's buffer.
const DOC_CAPACITY: usize = 1024;

/// A response body serialized once, under the task's lock, instead of cloning the task to
/// serialize it later. Bindings wrap it (JSON-RPC) or send it as is (REST).
#[derive(Debug, Clone)]
pub struct JsonDoc(pub Bytes);

impl JsonDoc {
    /// Serializes `value`.
    pub fn of<T: serde::Serialize + ?Sized>(value: &T) -> Self {
        // Room for a typical answer (a small task is ~700 bytes) in one allocation, instead
        // of growing through 8, 16, 32… bytes.
        let mut out = Vec::with_capacity(DOC_CAPACITY);
        if serde_json::to_writer(&mut out, value).is_err() {
            out.clear();
        }
        Self(Bytes::from(out))
    }

    /// A `SendMessageResponse` holding a task: `{"task": …}`.
    pub(crate) fn send_task(view: TaskView<'_>) -> Self {
        #[derive(serde::Serialize)]
        struct Envelope<'a> {
            task: TaskView<'a>,
        }
        Self::of(&Envelope { task: view })
    }

    /// Parses the document back into a wire type (for library callers and tests).
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.0)
    }
}
