//! Frames of a page, each with its own isolated world for ferry's scripts.
//!
//! An isolated world (`Page.createIsolatedWorld`) shares the frame's DOM but not its
//! JavaScript globals: page scripts cannot see ferry's functions or patch the prototypes and
//! `JSON` those functions use. A world lives as long as its document; after a navigation,
//! ask the page for its frames again.

use crate::cdp::{CdpConnection, EvaluateIn, FrameId, RemoteObjectId, SessionId};
use crate::{BrowserError, CdpError};
use serde_json::{Value, json};
use std::path::Path;

/// The name of ferry's isolated worlds (shows in DevTools).
const WORLD_NAME: &str = "ferry";

/// One frame of a page (the main frame, a same-origin iframe, or a cross-origin iframe
/// driven over its own session), with an isolated world created in it.
#[derive(Debug, Clone)]
pub struct Frame {
    cdp: CdpConnection,
    session: SessionId,
    frame_id: FrameId,
    url: String,
    world: i64,
    main: bool,
}

impl Frame {
    /// Creates an isolated world in `frame_id` (reached over `session`).
    pub(crate) async fn open(
        cdp: &CdpConnection,
        session: &SessionId,
        frame_id: FrameId,
        url: String,
        main: bool,
    ) -> Result<Frame, CdpError> {
        let created = cdp
            .call(
                "Page.createIsolatedWorld",
                json!({ "frameId": frame_id, "worldName": WORLD_NAME, "grantUniveralAccess": false }),
                Some(session),
            )
            .await?;
        let world =
            created["executionContextId"]
                .as_i64()
                .ok_or_else(|| CdpError::BadResponse {
                    method: "Page.createIsolatedWorld".into(),
                    reason: "no executionContextId".into(),
                })?;
        Ok(Frame {
            cdp: cdp.clone(),
            session: session.clone(),
            frame_id,
            url,
            world,
            main,
        })
    }

    /// The frame's URL when it was listed.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The frame's id.
    pub fn frame_id(&self) -> &FrameId {
        &self.frame_id
    }

    /// True for the page's top-level frame.
    pub fn is_main(&self) -> bool {
        self.main
    }

    /// True when the frame is driven over its own session (a cross-origin iframe).
    pub fn is_out_of_process(&self, page_session: &SessionId) -> bool {
        &self.session != page_session
    }

    /// Evaluates `expression` in the frame's isolated world and returns its value (a
    /// promise is awaited). `user_gesture` gives the page transient user activation while
    /// the expression runs (for clicks that open popups or submit).
    pub async fn evaluate(
        &self,
        expression: &str,
        user_gesture: bool,
    ) -> Result<Value, BrowserError> {
        let target = EvaluateIn {
            context_id: Some(self.world),
            user_gesture,
        };
        self.cdp
            .runtime_evaluate_in(&self.session, expression, target)
            .await?
            .into_result()
    }

    /// Evaluates `expression` in the isolated world and returns a handle on the object it
    /// produces (an element, for [`Frame::set_file_input_files`]).
    pub async fn evaluate_handle(&self, expression: &str) -> Result<RemoteObjectId, BrowserError> {
        let target = EvaluateIn {
            context_id: Some(self.world),
            user_gesture: false,
        };
        self.cdp
            .runtime_evaluate_handle(&self.session, expression, target)
            .await?
            .map_err(|description| BrowserError::Script { description })
    }

    /// `DOM.setFileInputFiles`: puts `files` into the file input `element`, as if the user
    /// had picked them.
    pub async fn set_file_input_files(
        &self,
        element: &RemoteObjectId,
        files: &[&Path],
    ) -> Result<(), BrowserError> {
        let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        self.cdp
            .call(
                "DOM.setFileInputFiles",
                json!({ "files": files, "objectId": element }),
                Some(&self.session),
            )
            .await?;
        Ok(())
    }

    /// `Input.insertText`: types `text` into the focused element, the way an IME commit
    /// does (one `beforeinput`/`input` pair), which frameworks that ignore programmatic
    /// value changes accept.
    pub async fn insert_text(&self, text: &str) -> Result<(), BrowserError> {
        self.cdp
            .call(
                "Input.insertText",
                json!({ "text": text }),
                Some(&self.session),
            )
            .await?;
        Ok(())
    }

    /// Calls `declaration` in the page's own (main) world with `this` bound to `element` (a
    /// handle from [`Frame::evaluate_handle`], resolved again in the main world) and
    /// `arguments` passed as JSON values.
    ///
    /// For widgets whose state lives in the page's JavaScript (a date picker's calendar):
    /// only their own public API sets them. The page can see and answer such a call, so
    /// what it returns is the page's word; read the result back in the isolated world.
    pub async fn call_in_page(
        &self,
        element: &RemoteObjectId,
        declaration: &str,
        arguments: &[Value],
    ) -> Result<Value, BrowserError> {
        let described = self
            .cdp
            .call(
                "DOM.describeNode",
                json!({ "objectId": element }),
                Some(&self.session),
            )
            .await?;
        let backend = described["node"]["backendNodeId"].clone();
        // Without an execution context, DOM.resolveNode resolves in the main world.
        let resolved = self
            .cdp
            .call(
                "DOM.resolveNode",
                json!({ "backendNodeId": backend }),
                Some(&self.session),
            )
            .await?;
        let page_element: RemoteObjectId =
            serde_json::from_value(resolved["object"]["objectId"].clone()).map_err(|_| {
                BrowserError::Script {
                    description: "the element has no handle in the page's world".into(),
                }
            })?;
        let result = self
            .cdp
            .runtime_call_function_on(&self.session, &page_element, declaration, arguments, true)
            .await;
        self.release(&page_element).await;
        result?.into_result()
    }

    /// Releases an object handle.
    pub async fn release(&self, object: &RemoteObjectId) {
        let _ = self.cdp.send(
            "Runtime.releaseObject",
            json!({ "objectId": object }),
            Some(&self.session),
        );
    }
}

/// Frames of a `Page.getFrameTree` result, depth first: `(id, url)`.
pub(crate) fn flatten_tree(tree: &Value) -> Vec<(FrameId, String)> {
    let mut out = Vec::new();
    let mut stack = vec![tree];
    while let Some(node) = stack.pop() {
        if let Some(id) = node["frame"]["id"].as_str() {
            let url = node["frame"]["url"].as_str().unwrap_or_default();
            out.push((FrameId::new(id), url.to_owned()));
        }
        if let Some(children) = node["childFrames"].as_array() {
            stack.extend(children.iter().rev());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_trees_flatten_depth_first() {
        let tree = json!({
            "frame": {"id": "A", "url": "http://a/"},
            "childFrames": [
                {"frame": {"id": "B", "url": "http://b/"}, "childFrames": [
                    {"frame": {"id": "C", "url": "http://c/"}}
                ]},
                {"frame": {"id": "D", "url": "about:blank"}}
            ]
        });
        let ids: Vec<String> = flatten_tree(&tree)
            .into_iter()
            .map(|(id, _)| id.to_string())
            .collect();
        assert_eq!(ids, ["A", "B", "C", "D"]);
    }
}
