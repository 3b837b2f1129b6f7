//! What a turn hands the command: its stdin, the `FERRY_*` variables, and the temp file
//! holding the message's data parts.

use ferry_agent::RequestContext;
use ferry_proto::{Message, Part, Role};
use serde_json::Value;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The task's id.
pub(crate) const TASK_ID: &str = "FERRY_TASK_ID";
/// The conversation's id.
pub(crate) const CONTEXT_ID: &str = "FERRY_CONTEXT_ID";
/// 1 on a task's first turn, n on its n-th.
pub(crate) const TURN: &str = "FERRY_TURN";
/// The path of the file holding the data parts as a JSON array.
pub(crate) const DATA_FILE: &str = "FERRY_DATA_FILE";
/// The same JSON inline, when it is at most [`INLINE_DATA_LIMIT`] bytes.
pub(crate) const DATA: &str = "FERRY_DATA";
/// Every variable ferry sets itself: never copied from ferry's own environment.
pub(crate) const OWN_VARIABLES: [&str; 5] = [TASK_ID, CONTEXT_ID, TURN, DATA_FILE, DATA];

/// The largest JSON put inline into `FERRY_DATA` (Linux refuses a single variable over
/// 128 KiB, and the file is there for anything bigger).
pub(crate) const INLINE_DATA_LIMIT: usize = 64 * 1024;

/// The number of this turn in its task: 1 for a new task, n for the n-th message.
///
/// `ctx.task` is the task as it was before this turn, so its user messages are the earlier
/// turns (one with this message's id is not counted, should a server include it). A server
/// that bounds history may have dropped old messages; the `output-{n}` artifacts earlier
/// turns left count too, and the larger count wins.
pub(crate) fn turn_number(ctx: &RequestContext) -> u64 {
    let Some(task) = &ctx.task else {
        return 1;
    };
    let by_history = task
        .history
        .iter()
        .filter(|m| m.role == Role::User && m.message_id != ctx.message.message_id)
        .count() as u64;
    let by_artifacts = task
        .artifacts
        .iter()
        .filter_map(|a| a.artifact_id.strip_prefix("output-")?.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    by_history.max(by_artifacts) + 1
}

/// The command's stdin: the text parts joined with newlines, ended by one (so that a script's
/// `read` sees a whole line); empty when the message has no text.
pub(crate) fn stdin_text(message: &Message) -> String {
    let mut text = message.text();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// The values of the message's data parts, in order, as a JSON array (`[]` when none).
pub(crate) fn data_json(message: &Message) -> String {
    let values: Vec<&Value> = message.parts.iter().filter_map(Part::as_data).collect();
    // Serializing `Value`s cannot fail (their map keys are strings).
    serde_json::to_string(&values).unwrap_or_else(|_| "[]".to_owned())
}

/// The `FERRY_*` variables of one turn.
pub(crate) fn ferry_variables(
    ctx: &RequestContext,
    turn: u64,
    data: &str,
    data_file: &Path,
) -> Vec<(OsString, OsString)> {
    let mut vars: Vec<(OsString, OsString)> = vec![
        (TASK_ID.into(), ctx.task_id.clone().into()),
        (CONTEXT_ID.into(), ctx.context_id.clone().into()),
        (TURN.into(), turn.to_string().into()),
        (DATA_FILE.into(), data_file.as_os_str().to_owned()),
    ];
    if data.len() <= INLINE_DATA_LIMIT {
        vars.push((DATA.into(), data.into()));
    }
    vars
}

/// A temp file readable only by ferry's user, removed when dropped (after the turn, however
/// it ends).
#[derive(Debug)]
pub(crate) struct DataFile {
    path: PathBuf,
}

impl DataFile {
    /// Writes `contents` to a new file in the system's temp directory.
    pub(crate) async fn create(contents: &str) -> io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir();
        let mut attempts = 0;
        loop {
            let name = format!(
                "ferry-exec-{}-{}.json",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            );
            let path = dir.join(name);
            // `create_new`: never write through a file (or link) someone else put there.
            let opened = tokio::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
                .await;
            match opened {
                Ok(mut file) => {
                    // From here on the guard removes the file, also when writing fails.
                    let guard = Self { path };
                    tokio::io::AsyncWriteExt::write_all(&mut file, contents.as_bytes()).await?;
                    tokio::io::AsyncWriteExt::flush(&mut file).await?;
                    return Ok(guard);
                }
                // A leftover of an earlier ferry with the same pid: try the next name.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 16 => {
                    attempts += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Where the file is.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for DataFile {
    fn drop(&mut self) {
        // Nothing to do about a failure here but leave the file to the temp directory's
        // cleaner; the command may also have removed it itself.
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_proto::{Artifact, Task, TaskState, TaskStatus};
    use std::sync::Arc;

    fn ctx(task: Option<Task>) -> RequestContext {
        RequestContext {
            task,
            ..RequestContext::new(Message::user("m-now", vec![Part::text("hi")]), "t", "c")
        }
    }

    #[test]
    fn turns_count_earlier_user_messages_and_output_artifacts() {
        assert_eq!(turn_number(&ctx(None)), 1);
        let mut task = Task::new("t", "c", TaskStatus::now(TaskState::InputRequired, None));
        task.history = vec![
            Arc::new(Message::user("m-1", vec![Part::text("a")])),
            Arc::new(Message::agent("a-1", vec![Part::text("more?")])),
        ];
        assert_eq!(turn_number(&ctx(Some(task.clone()))), 2);
        task.history
            .push(Arc::new(Message::user("m-now", vec![Part::text("hi")])));
        assert_eq!(turn_number(&ctx(Some(task.clone()))), 2, "this message");
        task.history.clear();
        task.artifacts = vec![Arc::new(Artifact::new("output-4", "output", Vec::new()))];
        assert_eq!(turn_number(&ctx(Some(task))), 5, "history was trimmed");
    }

    #[test]
    fn stdin_ends_with_a_newline_and_data_is_an_array() {
        let mut m = Message::user(
            "m",
            vec![
                Part::text("a"),
                Part::data(serde_json::json!({"k": 1})),
                Part::text("b"),
                Part::data(serde_json::json!([2])),
            ],
        );
        assert_eq!(stdin_text(&m), "a\nb\n");
        assert_eq!(data_json(&m), r#"[{"k":1},[2]]"#);
        m.parts.clear();
        assert_eq!(stdin_text(&m), "");
        assert_eq!(data_json(&m), "[]");
    }

    #[tokio::test]
    async fn the_data_file_is_private_and_removed_on_drop() -> io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let file = DataFile::create("[1]").await?;
        let path = file.path().to_owned();
        assert_eq!(std::fs::read_to_string(&path)?, "[1]");
        assert_eq!(
            std::fs::metadata(&path)?.permissions().mode() & 0o777,
            0o600
        );
        drop(file);
        assert!(!path.exists());
        Ok(())
    }
}
