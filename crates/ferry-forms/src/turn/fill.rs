//! Filling: the values go into the fields the matcher chose (native setters in the page,
//! typing for inputs that ignore them, `DOM.setFileInputFiles` for uploads), then the page is
//! inspected again.

use super::Progress;
use super::scope::Chosen;
use crate::config::FormsConfig;
use crate::inspection::{FieldAt, Inspection};
use crate::report::{Filled, display_label};
use crate::request::{FormRequest, RequestedValue};
use crate::session::Session;
use crate::snapshot::{FieldInfo, FillOutcome};
use ferry_browser::BrowserError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a fill did.
pub(super) struct Filling {
    /// Keys filled, and their fields.
    pub filled: Vec<Filled>,
    /// Per key: why its value did not go in.
    pub fill_errors: BTreeMap<String, String>,
    /// Per key: where its field is.
    pub assigned_fields: Vec<(String, FieldAt)>,
    /// The page after the fill (unchanged when nothing was filled).
    pub inspection: Inspection,
    /// What the fill did besides setting values (a box ticked to enable a field).
    pub notes: Vec<String>,
}

/// Values to set through the page's setters, per frame: (field reference, value, key).
type PerFrame = BTreeMap<usize, Vec<(u32, serde_json::Value, String)>>;

/// Fills the chosen assignments and inspects the page again: plan the values per frame
/// (files and dates in parts are settled here), set them, read the page back.
pub(super) async fn fill_values(
    session: &Session,
    config: &FormsConfig,
    request: &FormRequest,
    chosen: &Chosen,
    mut inspection: Inspection,
    progress: &Progress,
) -> Result<Filling, BrowserError> {
    let mut filled = Vec::new();
    let mut fill_errors: BTreeMap<String, String> = BTreeMap::new();
    let mut assigned_fields: Vec<(String, FieldAt)> = Vec::new();
    let mut notes = Vec::new();
    if !chosen.matching.assigned.is_empty() {
        let count = chosen.matching.assigned.len();
        progress.say(&format!("filling {count} field(s)")).await;
        let mut work = Work {
            filled: &mut filled,
            fill_errors: &mut fill_errors,
            assigned_fields: &mut assigned_fields,
        };
        let per_frame = work.plan(config, request, chosen, &inspection).await;
        notes = set_values(&inspection, per_frame, work.fill_errors).await?;
        tokio::time::sleep(config.settle).await;
        inspection = read_back(session, inspection, &assigned_fields).await?;
    }
    let emptied = emptied_after_fill(request, &inspection, &assigned_fields, &fill_errors);
    fill_errors.extend(emptied);
    // `filled` names the fields that hold their value now, and no other.
    filled.retain(|f| !fill_errors.contains_key(&f.key));
    Ok(Filling {
        filled,
        fill_errors,
        assigned_fields,
        inspection,
        notes,
    })
}

/// What the fill is noting as it goes.
struct Work<'w> {
    filled: &'w mut Vec<Filled>,
    fill_errors: &'w mut BTreeMap<String, String>,
    assigned_fields: &'w mut Vec<(String, FieldAt)>,
}

impl Work<'_> {
    /// Notes each assignment, uploads files at once, splits dates into their parts (refused
    /// whole when they do not fit), and returns the values the page's setters take.
    async fn plan(
        &mut self,
        config: &FormsConfig,
        request: &FormRequest,
        chosen: &Chosen,
        inspection: &Inspection,
    ) -> PerFrame {
        let values: BTreeMap<&str, &RequestedValue> = request
            .values
            .iter()
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        let mut per_frame = PerFrame::new();
        for assignment in &chosen.matching.assigned {
            let at = chosen.places[assignment.field];
            let (Some(field), Some(value)) =
                (inspection.field(at), values.get(assignment.key.as_str()))
            else {
                continue;
            };
            let key = assignment.key.clone();
            self.assigned_fields.push((key.clone(), at));
            self.filled.push(Filled {
                key: key.clone(),
                field: display_label(field),
            });
            let value = match field.kind.as_str() {
                "file" => {
                    if let Err(e) = fill_files(config, inspection, at, field, value).await {
                        self.fill_errors.insert(key, e);
                    }
                    continue;
                }
                "date-parts" => match date_value(value, &field.parts) {
                    Ok(parts) => parts,
                    Err(e) => {
                        self.fill_errors.insert(key, e);
                        continue;
                    }
                },
                _ => value.to_json(),
            };
            per_frame
                .entry(at.frame)
                .or_default()
                .push((field.reference, value, key));
        }
        per_frame
    }
}

/// Sets the values frame by frame; a combobox is picked from, an input that ignored the
/// setter is typed into. Why a value did not go in is noted per key; what else the fill did
/// (a box ticked to enable a field) is returned.
async fn set_values(
    inspection: &Inspection,
    per_frame: PerFrame,
    fill_errors: &mut BTreeMap<String, String>,
) -> Result<Vec<String>, BrowserError> {
    let mut notes = Vec::new();
    for (frame, list) in per_frame {
        let refs: Vec<(u32, serde_json::Value)> =
            list.iter().map(|(r, v, _)| (*r, v.clone())).collect();
        let outcomes = inspection.fill(frame, &refs).await?;
        for ((reference, value, key), outcome) in list.iter().zip(outcomes) {
            if let Some(box_label) = &outcome.enabled_by {
                notes.push(format!(
                    "ticked {box_label:?} first: the field for {key:?} is disabled until it is"
                ));
            }
            let outcome = if outcome.combobox {
                pick_from_combobox(inspection, frame, *reference, value).await?
            } else if let Some(widget) = &outcome.widget {
                super::widget::set_date_picker(inspection, frame, *reference, widget, value).await?
            } else {
                retry_by_typing(inspection, frame, *reference, value, outcome).await?
            };
            if let Some(error) = outcome.error.filter(|_| !outcome.ok) {
                fill_errors.insert(key.clone(), error);
            }
        }
    }
    Ok(notes)
}

/// The page after the fill. An error text the page showed before the fill (left over from
/// an earlier submit) says nothing about the new value, so it is dropped.
async fn read_back(
    session: &Session,
    before: Inspection,
    assigned_fields: &[(String, FieldAt)],
) -> Result<Inspection, BrowserError> {
    let mut inspection = Inspection::take(session.page()).await?;
    for (_, at) in assigned_fields {
        let old = before.field(*at).and_then(|f| f.error.clone());
        if let Some(field) = inspection.field_mut(*at)
            && old.is_some()
            && field.error == old
        {
            field.error = None;
        }
    }
    Ok(inspection)
}

/// Keys whose field took a value and is empty after the page settled (a script cleared it on
/// change): the value did not stick, whatever the fill saw at the time.
fn emptied_after_fill(
    request: &FormRequest,
    inspection: &Inspection,
    assigned_fields: &[(String, FieldAt)],
    fill_errors: &BTreeMap<String, String>,
) -> Vec<(String, String)> {
    assigned_fields
        .iter()
        .filter(|(key, _)| !fill_errors.contains_key(key))
        .filter(|(key, _)| {
            request
                .values
                .iter()
                .any(|(k, v)| k == key && !v.is_empty())
        })
        .filter(|(_, at)| inspection.field(*at).is_some_and(|f| f.empty))
        .map(|(key, _)| {
            (
                key.clone(),
                "the value did not stick: the page emptied the field after it was filled".into(),
            )
        })
        .collect()
}

/// The parts of a date for a `date-parts` field, from text (or a list of its parts).
fn date_value(value: &RequestedValue, parts: &[String]) -> Result<serde_json::Value, String> {
    match value {
        RequestedValue::Text(text) => crate::date_parts::split(text, parts),
        RequestedValue::List(items) => crate::date_parts::split(&items.join(" "), parts),
        RequestedValue::Bool(_) => Err("expected a date, like 2030-03-31".into()),
    }
}

/// How long a combobox's options may take to appear after opening or typing.
const COMBOBOX_OPTIONS_WAIT: std::time::Duration = std::time::Duration::from_millis(2000);

/// Drives an ARIA combobox as a person does: for each wanted option (one, or several for a
/// multi-select), open it, type to filter (a text combobox), wait for the options, click the
/// matching one; then check that it shows them all. A text combobox that offers no options
/// keeps the typed text (free-text autocomplete).
async fn pick_from_combobox(
    inspection: &Inspection,
    frame: usize,
    reference: u32,
    value: &serde_json::Value,
) -> Result<FillOutcome, BrowserError> {
    let failed = |error: String| FillOutcome::failure(reference, error);
    let wanted: Vec<&str> = match value {
        serde_json::Value::String(one) => vec![one.as_str()],
        serde_json::Value::Array(items) => items.iter().filter_map(|v| v.as_str()).collect(),
        _ => Vec::new(),
    };
    if wanted.is_empty() {
        return Ok(failed("expected one option, or a list of them".into()));
    }
    // Several options: a multi-select, which may hold some already (and lists them no
    // more). One: a single combobox, whose current text may merely contain it.
    let several = wanted.len() > 1;
    let mut labels = Vec::new();
    for want in wanted {
        // A multi-select lists no option it already holds.
        if several && shows(inspection, frame, reference, want).await? {
            labels.push(want.to_owned());
            continue;
        }
        match pick_one(inspection, frame, reference, want).await? {
            Ok(label) => labels.push(label),
            Err(error) => return Ok(failed(error)),
        }
    }
    for label in &labels {
        if !shows(inspection, frame, reference, label).await? {
            return Ok(failed(format!("the combobox did not take \"{label}\"")));
        }
    }
    Ok(FillOutcome::success(reference))
}

/// Whether combobox `reference` shows `label` now.
async fn shows(
    inspection: &Inspection,
    frame: usize,
    reference: u32,
    label: &str,
) -> Result<bool, BrowserError> {
    let label_json = serde_json::Value::from(label).to_string();
    let shown = inspection
        .evaluate(
            frame,
            &format!("__ferryForms.comboShows({reference}, {label_json})"),
            false,
        )
        .await?;
    Ok(shown == true)
}

/// One pick: the label of the option clicked (or the text typed), or why not.
async fn pick_one(
    inspection: &Inspection,
    frame: usize,
    reference: u32,
    wanted: &str,
) -> Result<Result<String, String>, BrowserError> {
    let opened = inspection
        .evaluate(frame, &format!("__ferryForms.comboOpen({reference})"), true)
        .await?;
    if opened["ok"] != true {
        let error = opened["error"]
            .as_str()
            .unwrap_or("could not open the combobox");
        return Ok(Err(error.to_owned()));
    }
    let typing = opened["typing"] == true;
    if typing {
        inspection.insert_text(frame, wanted).await?;
    }
    let deadline = tokio::time::Instant::now() + COMBOBOX_OPTIONS_WAIT;
    let has_options = loop {
        let options = inspection
            .evaluate(
                frame,
                &format!("__ferryForms.comboOptions({reference})"),
                false,
            )
            .await?;
        if options.as_array().is_some_and(|o| !o.is_empty()) {
            break true;
        }
        if tokio::time::Instant::now() >= deadline {
            break false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    if !has_options {
        return Ok(if typing {
            Ok(wanted.to_owned())
        } else {
            Err("the combobox showed no options".into())
        });
    }
    let wanted_json = serde_json::Value::from(wanted).to_string();
    let picked = inspection
        .evaluate(
            frame,
            &format!("__ferryForms.comboPick({reference}, {wanted_json})"),
            true,
        )
        .await?;
    if picked["ok"] != true {
        let error = picked["error"].as_str().unwrap_or("no such option");
        return Ok(Err(error.to_owned()));
    }
    Ok(Ok(picked["label"].as_str().unwrap_or(wanted).to_owned()))
}

/// Types a value the page reset (frameworks that ignore the native setter).
async fn retry_by_typing(
    inspection: &Inspection,
    frame: usize,
    reference: u32,
    value: &serde_json::Value,
    outcome: FillOutcome,
) -> Result<FillOutcome, BrowserError> {
    match (outcome.retry_typing, value.as_str()) {
        (true, Some(text)) => inspection.type_into(frame, reference, text).await,
        _ => Ok(outcome),
    }
}

/// Fills a file input from the upload directory. Names only: no absolute paths, no `..`,
/// nothing that resolves outside the directory.
async fn fill_files(
    config: &FormsConfig,
    inspection: &Inspection,
    at: FieldAt,
    field: &FieldInfo,
    value: &RequestedValue,
) -> Result<(), String> {
    let Some(dir) = &config.upload_dir else {
        return Err(
            "uploads are disabled on this server (its operator has not set an upload directory)"
                .into(),
        );
    };
    let names: Vec<String> = match value {
        RequestedValue::Text(name) => vec![name.clone()],
        RequestedValue::List(names) => names.clone(),
        RequestedValue::Bool(_) => return Err("a file input takes a file name".into()),
    };
    if names.len() > 1 && !field.constraints.multiple {
        return Err("this file input takes one file".into());
    }
    let mut paths: Vec<PathBuf> = Vec::new();
    for name in &names {
        paths.push(upload_path(dir, name)?);
    }
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    inspection
        .set_files(at.frame, field.reference, &refs)
        .await
        .map_err(|e| format!("could not attach the file: {e}"))
}

/// `dir/name`, if `name` is a plain file name of a regular file inside `dir`.
pub(super) fn upload_path(dir: &Path, name: &str) -> Result<PathBuf, String> {
    let plain =
        !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0']);
    if !plain {
        return Err(format!(
            "{name:?}: give a file name inside the upload directory"
        ));
    }
    let root = dir
        .canonicalize()
        .map_err(|e| format!("upload directory: {e}"))?;
    let path = root
        .join(name)
        .canonicalize()
        .map_err(|_| format!("{name:?}: no such file in the upload directory"))?;
    if !path.starts_with(&root) || !path.is_file() {
        return Err(format!("{name:?}: not a file inside the upload directory"));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uploads_stay_inside_the_directory() {
        let dir = std::env::temp_dir().join(format!("ferry-forms-upload-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("cv.pdf"), b"%PDF").expect("file");
        assert!(upload_path(&dir, "cv.pdf").is_ok());
        for bad in [
            "",
            "..",
            "../etc/passwd",
            "/etc/passwd",
            "sub/cv.pdf",
            "nope.pdf",
        ] {
            assert!(upload_path(&dir, bad).is_err(), "{bad:?} accepted");
        }
        #[cfg(unix)]
        {
            let link = dir.join("escape");
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink("/etc/hostname", &link).expect("symlink");
            assert!(upload_path(&dir, "escape").is_err());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
