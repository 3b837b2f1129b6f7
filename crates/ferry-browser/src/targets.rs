//! Every target a page spawns, attached and configured before it runs.
//!
//! A page's session asks for `Target.setAutoAttach{autoAttach, waitForDebuggerOnStart,
//! flatten}`. Each cross-origin iframe (OOPIF) and worker the page starts is then attached
//! to us *paused*; `configure_and_resume` configures it (the same auto-attach, recursively,
//! and the context's init scripts on frames) and only then resumes it with
//! `Runtime.runIfWaitingForDebugger`. All of that is fired with
//! [`CdpConnection::send`] from the event dispatcher, in order on the one socket, without
//! awaiting replies (awaiting there could deadlock against the paused target).
//!
//! The registry remembers which iframe sessions belong to which parent session, so a page
//! can evaluate in its cross-origin frames (forms inside an OOPIF).

use crate::cdp::{CdpConnection, CdpEvent, SessionId, TargetId};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// The auto-attach settings every page, frame and worker session gets.
pub(crate) fn auto_attach_params() -> Value {
    json!({ "autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true })
}

/// One attached child target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Child {
    /// Its flat session.
    pub session: SessionId,
    /// Its target id (for an OOPIF, also its frame id).
    pub target: TargetId,
    /// `iframe`, `worker`, `shared_worker`, `service_worker`, …
    pub kind: String,
}

/// Parent session → attached children, plus the init scripts of each root page session.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    state: Mutex<RegistryState>,
}

#[derive(Debug, Default)]
struct RegistryState {
    children: HashMap<SessionId, Vec<Child>>,
    /// Scripts to run on every new document of a root page and of its frames.
    init_scripts: HashMap<SessionId, Vec<String>>,
    /// Child session → the root page session it belongs to.
    root_of: HashMap<SessionId, SessionId>,
    /// Browser contexts whose popups get the init scripts before they run (see
    /// [`Registry::guard_popups_in`]), with those scripts.
    guarded: HashMap<String, Vec<String>>,
}

impl Registry {
    fn state(&self) -> MutexGuard<'_, RegistryState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a root page session and the scripts its documents get.
    pub(crate) fn add_root(&self, session: &SessionId, init_scripts: Vec<String>) {
        let mut state = self.state();
        state.init_scripts.insert(session.clone(), init_scripts);
    }

    /// Gives every page opened *by a page* (a popup, `target=_blank`) in browser context
    /// `context` the init scripts and the frame/worker auto-attach before it runs, as pages
    /// ferry opens get them. Needs browser-level auto-attach (see
    /// `Browser::new_context_with`). For browsers whose launch flags ferry does not control.
    pub(crate) fn guard_popups_in(&self, context: &str, init_scripts: Vec<String>) {
        self.state()
            .guarded
            .insert(context.to_owned(), init_scripts);
    }

    /// Forgets a browser context.
    pub(crate) fn forget_context(&self, context: &str) {
        self.state().guarded.remove(context);
    }

    /// Forgets a root page session and everything below it.
    pub(crate) fn remove_root(&self, session: &SessionId) {
        let mut state = self.state();
        state.init_scripts.remove(session);
        state.root_of.retain(|_, root| root != session);
        Self::drop_subtree(&mut state, session);
    }

    fn drop_subtree(state: &mut RegistryState, session: &SessionId) {
        if let Some(children) = state.children.remove(session) {
            for child in children {
                state.root_of.remove(&child.session);
                Self::drop_subtree(state, &child.session);
            }
        }
    }

    /// The iframe sessions below `session`, depth first, in attach order.
    pub(crate) fn frame_sessions(&self, session: &SessionId) -> Vec<Child> {
        let state = self.state();
        let mut out = Vec::new();
        let mut stack = vec![session.clone()];
        while let Some(parent) = stack.pop() {
            if let Some(children) = state.children.get(&parent) {
                for child in children.iter().rev() {
                    stack.push(child.session.clone());
                }
                out.extend(children.iter().filter(|c| c.kind == "iframe").cloned());
            }
        }
        out
    }

    /// Handles the target events: configures and resumes newly attached targets, forgets
    /// detached ones. Never awaits.
    pub(crate) fn on_event(&self, cdp: &CdpConnection, event: &CdpEvent) {
        match event.method.as_str() {
            "Target.attachedToTarget" => self.on_attached(cdp, event),
            "Target.detachedFromTarget" => {
                if let Some(session) = event.params["sessionId"].as_str() {
                    let session = SessionId::new(session);
                    let mut state = self.state();
                    for children in state.children.values_mut() {
                        children.retain(|c| c.session != session);
                    }
                    state.root_of.remove(&session);
                    state.init_scripts.remove(&session);
                    Self::drop_subtree(&mut state, &session);
                }
            }
            _ => {}
        }
    }

    fn on_attached(&self, cdp: &CdpConnection, event: &CdpEvent) {
        let params = &event.params;
        let (Some(session), Some(target)) = (
            params["sessionId"].as_str(),
            params["targetInfo"]["targetId"].as_str(),
        ) else {
            return;
        };
        let session = SessionId::new(session);
        let kind = params["targetInfo"]["type"].as_str().unwrap_or("other");
        let waiting = params["waitingForDebugger"].as_bool().unwrap_or(false);
        match &event.session_id {
            Some(parent) => {
                let target = TargetId::new(target);
                self.on_child_attached(cdp, parent, session, target, kind, waiting);
            }
            // An explicit `Target.attachToTarget` (a page of ours) reports here too, not
            // paused: it is the caller's.
            None if !waiting => {}
            None => self.on_page_attached_to_browser(cdp, params, &session),
        }
    }

    /// Browser-level auto-attach (pages only, paused): a popup in a guarded context becomes
    /// a root like the pages ferry opens before it runs; everything else is resumed and let
    /// go.
    fn on_page_attached_to_browser(
        &self,
        cdp: &CdpConnection,
        params: &Value,
        session: &SessionId,
    ) {
        let context = params["targetInfo"]["browserContextId"]
            .as_str()
            .unwrap_or("");
        let opened_by_page = params["targetInfo"]["openerId"].is_string();
        let scripts = self.state().guarded.get(context).cloned();
        if let (Some(scripts), true) = (scripts, opened_by_page) {
            tracing::debug!(context, "popup attached");
            self.add_root(session, scripts.clone());
            configure_and_resume(cdp, session, "page", &scripts, true);
            return;
        }
        let _ = cdp.send("Runtime.runIfWaitingForDebugger", json!({}), Some(session));
        let _ = cdp.send(
            "Target.detachFromTarget",
            json!({ "sessionId": session }),
            None,
        );
    }

    /// A frame or worker of a session: children of a session we manage are registered under
    /// its root and get the root's scripts; any other is only resumed.
    fn on_child_attached(
        &self,
        cdp: &CdpConnection,
        parent: &SessionId,
        session: SessionId,
        target: TargetId,
        kind: &str,
        waiting: bool,
    ) {
        let scripts = {
            let mut state = self.state();
            let root = if state.init_scripts.contains_key(parent) {
                Some(parent.clone())
            } else {
                state.root_of.get(parent).cloned()
            };
            match root {
                Some(root) => {
                    state.root_of.insert(session.clone(), root.clone());
                    state
                        .children
                        .entry(parent.clone())
                        .or_default()
                        .push(Child {
                            session: session.clone(),
                            target,
                            kind: kind.to_owned(),
                        });
                    state.init_scripts.get(&root).cloned().unwrap_or_default()
                }
                None => Vec::new(),
            }
        };
        configure_and_resume(cdp, &session, kind, &scripts, waiting);
        tracing::trace!(kind, %session, "attached child target");
    }
}

/// Sends, in order and without awaiting, what a newly attached target needs before it runs:
/// the same auto-attach one level down (nested OOPIFs, workers of workers), page events and
/// `scripts` for documents, then resumes it if it waits.
fn configure_and_resume(
    cdp: &CdpConnection,
    session: &SessionId,
    kind: &str,
    scripts: &[String],
    waiting: bool,
) {
    let session = Some(session);
    if matches!(
        kind,
        "iframe" | "worker" | "shared_worker" | "service_worker" | "page"
    ) {
        let _ = cdp.send("Target.setAutoAttach", auto_attach_params(), session);
    }
    if kind == "iframe" || kind == "page" {
        let _ = cdp.send("Page.enable", json!({}), session);
        for source in scripts {
            let _ = cdp.send(
                "Page.addScriptToEvaluateOnNewDocument",
                json!({ "source": source }),
                session,
            );
        }
    }
    if waiting {
        let _ = cdp.send("Runtime.runIfWaitingForDebugger", json!({}), session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attached(parent: &str, session: &str, kind: &str) -> CdpEvent {
        CdpEvent {
            method: "Target.attachedToTarget".into(),
            params: json!({
                "sessionId": session,
                "targetInfo": {"targetId": format!("T-{session}"), "type": kind},
                "waitingForDebugger": true
            }),
            session_id: Some(SessionId::new(parent)),
        }
    }

    #[tokio::test]
    async fn children_are_tracked_under_their_root_and_forgotten_on_detach() {
        let (to_browser, _keep) = tokio::io::duplex(1 << 16);
        let (_unused, from_browser) = tokio::io::duplex(1 << 16);
        let (cdp, _events) = crate::cdp::connect_pipe(to_browser, from_browser);
        let registry = Registry::default();
        let root = SessionId::new("ROOT");
        registry.add_root(&root, vec!["delete window.RTCPeerConnection".into()]);
        registry.on_event(&cdp, &attached("ROOT", "F1", "iframe"));
        registry.on_event(&cdp, &attached("F1", "F2", "iframe"));
        registry.on_event(&cdp, &attached("ROOT", "W1", "worker"));
        registry.on_event(&cdp, &attached("STRANGER", "X", "iframe"));
        let frames: Vec<String> = registry
            .frame_sessions(&root)
            .into_iter()
            .map(|c| c.session.to_string())
            .collect();
        assert_eq!(frames, ["F1", "F2"]);
        registry.on_event(
            &cdp,
            &CdpEvent {
                method: "Target.detachedFromTarget".into(),
                params: json!({"sessionId": "F1"}),
                session_id: Some(root.clone()),
            },
        );
        assert!(registry.frame_sessions(&root).is_empty());
        registry.remove_root(&root);
        assert!(registry.state().root_of.is_empty());
    }
}
