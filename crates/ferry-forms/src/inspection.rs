//! One look at the page: every frame's snapshot, with global numbering of forms and fields.

use crate::INSPECT_JS;
use crate::snapshot::{FieldInfo, FillOutcome, FormInfo, PageSnapshot, SubmitOutcome};
use ferry_browser::{BrowserError, Frame, Page};
use serde_json::Value;

/// Where a field lives: the frame (index into [`Inspection::frames`]) and its position in
/// that frame's snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FieldAt {
    /// Frame index.
    pub frame: usize,
    /// Index into that frame's `fields`.
    pub index: usize,
}

/// Every frame of the page (main first) with what `inspect.js` saw in it.
#[derive(Debug, Clone)]
pub(crate) struct Inspection {
    frames: Vec<Frame>,
    snapshots: Vec<PageSnapshot>,
}

impl Inspection {
    /// Inspects every frame of `page`. Frames other than the main one that fail (gone
    /// meanwhile) or hold no fields are left out.
    pub(crate) async fn take(page: &Page) -> Result<Inspection, BrowserError> {
        let mut frames = Vec::new();
        let mut snapshots = Vec::new();
        let expression = format!("{INSPECT_JS}\n;__ferryForms.inspect()");
        for frame in page.frames().await? {
            let result = frame.evaluate(&expression, false).await;
            let snapshot = result.and_then(|value| decode::<PageSnapshot>("inspect", value));
            match snapshot {
                Ok(snapshot) if frame.is_main() || !snapshot.fields.is_empty() => {
                    frames.push(frame);
                    snapshots.push(snapshot);
                }
                Ok(_) => {}
                Err(e) if frame.is_main() => return Err(e),
                Err(e) => tracing::debug!(frame = frame.url(), error = %e, "frame not inspected"),
            }
        }
        Ok(Inspection { frames, snapshots })
    }

    /// The main frame's snapshot.
    pub(crate) fn main(&self) -> Option<&PageSnapshot> {
        self.snapshots.first()
    }

    /// The frames, main first.
    pub(crate) fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// Every form, globally numbered in this order: `(frame, form)`.
    pub(crate) fn forms(&self) -> Vec<(usize, &FormInfo)> {
        self.snapshots
            .iter()
            .enumerate()
            .flat_map(|(frame, s)| s.forms.iter().map(move |f| (frame, f)))
            .collect()
    }

    /// The global number of form `local` of frame `frame`.
    pub(crate) fn global_form(&self, frame: usize, local: Option<usize>) -> Option<usize> {
        let local = local?;
        let before: usize = self.snapshots[..frame].iter().map(|s| s.forms.len()).sum();
        (local < self.snapshots.get(frame)?.forms.len()).then_some(before + local)
    }

    /// `(frame, local index)` of global form `global`.
    pub(crate) fn local_form(&self, global: usize) -> Option<(usize, usize)> {
        let mut rest = global;
        for (frame, snapshot) in self.snapshots.iter().enumerate() {
            if rest < snapshot.forms.len() {
                return Some((frame, rest));
            }
            rest -= snapshot.forms.len();
        }
        None
    }

    /// Each form (global number) with the places of its fields, in order.
    pub(crate) fn form_places(&self) -> Vec<(usize, Vec<FieldAt>)> {
        let mut forms: Vec<(usize, Vec<FieldAt>)> =
            (0..self.forms().len()).map(|f| (f, Vec::new())).collect();
        for (at, form, _) in self.fields() {
            if let Some(places) = form.and_then(|f| forms.get_mut(f)) {
                places.1.push(at);
            }
        }
        forms
    }

    /// Every field with its place and global form number.
    pub(crate) fn fields(&self) -> Vec<(FieldAt, Option<usize>, &FieldInfo)> {
        self.snapshots
            .iter()
            .enumerate()
            .flat_map(|(frame, s)| {
                s.fields.iter().enumerate().map(move |(index, field)| {
                    (
                        FieldAt { frame, index },
                        self.global_form(frame, field.form),
                        field,
                    )
                })
            })
            .collect()
    }

    /// The field at `at`.
    pub(crate) fn field(&self, at: FieldAt) -> Option<&FieldInfo> {
        self.snapshots.get(at.frame)?.fields.get(at.index)
    }

    /// The field at `at`, to adjust.
    pub(crate) fn field_mut(&mut self, at: FieldAt) -> Option<&mut FieldInfo> {
        self.snapshots.get_mut(at.frame)?.fields.get_mut(at.index)
    }

    /// Page-level error texts of every frame.
    pub(crate) fn form_errors(&self) -> Vec<String> {
        self.snapshots
            .iter()
            .flat_map(|s| s.form_errors.iter().cloned())
            .collect()
    }

    /// The frame URL to show for a form in frame `frame` (`None` for the main frame).
    pub(crate) fn frame_label(&self, frame: usize) -> Option<String> {
        (frame > 0).then(|| self.snapshots.get(frame).map(|s| s.url.clone()))?
    }

    /// Global number of the form matching `selector` in any frame.
    pub(crate) async fn form_by_selector(
        &self,
        selector: &str,
    ) -> Result<Option<usize>, BrowserError> {
        let selector = serde_json::to_string(selector).unwrap_or_default();
        for (frame_index, frame) in self.frames.iter().enumerate() {
            let found = frame
                .evaluate(&format!("__ferryForms.formIndex({selector})"), false)
                .await?;
            if let Some(local) = found.as_u64() {
                return Ok(self.global_form(frame_index, usize::try_from(local).ok()));
            }
        }
        Ok(None)
    }

    /// Frame `index`, or the error for a frame that went away.
    fn frame(&self, index: usize) -> Result<&Frame, BrowserError> {
        self.frames.get(index).ok_or_else(|| BrowserError::Script {
            description: "frame is gone".into(),
        })
    }

    /// Runs `fill` for `assignments` (ref, value) in frame `frame`.
    pub(crate) async fn fill(
        &self,
        frame: usize,
        assignments: &[(u32, Value)],
    ) -> Result<Vec<FillOutcome>, BrowserError> {
        let Ok(frame) = self.frame(frame) else {
            return Ok(Vec::new());
        };
        let list: Vec<Value> = assignments
            .iter()
            .map(|(r, v)| serde_json::json!({"ref": r, "value": v}))
            .collect();
        run_fill(frame, Value::from(list)).await
    }

    /// Types `text` into field `reference` of frame `frame` with `Input.insertText`, then
    /// lets the page see change and blur; for inputs whose framework ignored the setter.
    pub(crate) async fn type_into(
        &self,
        frame: usize,
        reference: u32,
        text: &str,
    ) -> Result<FillOutcome, BrowserError> {
        let frame = self.frame(frame)?;
        frame
            .evaluate(&format!("__ferryForms.focus({reference})"), true)
            .await?;
        frame.insert_text(text).await?;
        let typed = serde_json::json!([{"ref": reference, "value": text, "typed": true}]);
        run_fill(frame, typed)
            .await?
            .pop()
            .ok_or_else(|| BrowserError::Script {
                description: "fill returned nothing".into(),
            })
    }

    /// Evaluates `expression` in frame `frame`'s world (where `__ferryForms` lives).
    pub(crate) async fn evaluate(
        &self,
        frame: usize,
        expression: &str,
        user_gesture: bool,
    ) -> Result<Value, BrowserError> {
        self.frame(frame)?.evaluate(expression, user_gesture).await
    }

    /// Types `text` into whatever has the focus in frame `frame` (`Input.insertText`).
    pub(crate) async fn insert_text(&self, frame: usize, text: &str) -> Result<(), BrowserError> {
        self.frame(frame)?.insert_text(text).await
    }

    /// Puts `files` into the file input `reference` of frame `frame`.
    pub(crate) async fn set_files(
        &self,
        frame: usize,
        reference: u32,
        files: &[&std::path::Path],
    ) -> Result<(), BrowserError> {
        let Ok(frame) = self.frame(frame) else {
            return Ok(());
        };
        let element = frame
            .evaluate_handle(&format!("__ferryForms.element({reference})"))
            .await?;
        let result = frame.set_file_input_files(&element, files).await;
        frame.release(&element).await;
        result
    }

    /// Calls `declaration` in the page's own world on field `reference` of frame `frame`
    /// (see [`ferry_browser::Frame::call_in_page`]); the page's answer, to be read back.
    pub(crate) async fn call_in_page(
        &self,
        frame: usize,
        reference: u32,
        declaration: &str,
        arguments: &[Value],
    ) -> Result<Value, BrowserError> {
        let frame = self.frame(frame)?;
        let element = frame
            .evaluate_handle(&format!("__ferryForms.element({reference})"))
            .await?;
        let result = frame.call_in_page(&element, declaration, arguments).await;
        frame.release(&element).await;
        result
    }

    /// Starts the submit of global form `global` (its real submit button, else
    /// `requestSubmit()`), with a user gesture.
    pub(crate) async fn submit(&self, global: usize) -> Result<SubmitOutcome, BrowserError> {
        let Some((frame, local)) = self.local_form(global) else {
            return Ok(SubmitOutcome {
                ok: false,
                method: String::new(),
                button: None,
                error: Some(format!("form {global} is gone")),
                dispatched: false,
                cancelled: false,
            });
        };
        let value = self.frames[frame]
            .evaluate(&format!("__ferryForms.submit({local})"), true)
            .await?;
        decode("submit", value)
    }
}

impl Inspection {
    /// The box of global form `global` and of its secret controls, in its document's
    /// coordinates, when the form is in the main frame (a picture of a form inside a frame
    /// is not taken yet): `None` otherwise.
    pub(crate) async fn shot_box(&self, global: usize) -> Result<Option<ShotBox>, BrowserError> {
        let Some((0, local)) = self.local_form(global) else {
            return Ok(None);
        };
        let value = self
            .frame(0)?
            .evaluate(&format!("__ferryForms.shotBox({local})"), false)
            .await?;
        decode("shotBox", value)
    }
}

/// A region of a document, in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
pub(crate) struct Region {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// What `shotBox` answers: the form's region and those of its secret controls.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub(crate) struct ShotBox {
    #[serde(flatten)]
    pub form: Region,
    pub secrets: Vec<Region>,
}

/// `__ferryForms.fill(assignments)` in `frame`, with a user gesture.
async fn run_fill(frame: &Frame, assignments: Value) -> Result<Vec<FillOutcome>, BrowserError> {
    let value = frame
        .evaluate(&format!("__ferryForms.fill({assignments})"), true)
        .await?;
    decode("fill", value)
}

/// The typed form of what `inspect.js`'s `what` returned.
fn decode<T: serde::de::DeserializeOwned>(what: &str, value: Value) -> Result<T, BrowserError> {
    serde_json::from_value(value).map_err(|e| BrowserError::Script {
        description: format!("{what} returned an unexpected shape: {e}"),
    })
}
