//! Browsers, browser contexts and pages on top of the CDP connection.
//!
//! A [`Browser`] owns one DevTools connection (and, when it launched it, the [`Chromium`]
//! process). A dispatcher task consumes the connection's event queue in order and hands
//! events to whoever registered to wait for them (a page waiting for its load event), so
//! nothing on the event path ever awaits a command reply.
//!
//! A [`BrowserContext`] is an isolated profile inside the browser: its own cookies, storage
//! and cache. One conversation gets one context (or its own browser). A [`Page`] is a tab
//! in a context, driven over its own flat session.

use crate::cdp::{
    self, BrowserContextId, CdpConnection, CdpEvent, CdpEvents, CreateBrowserContext, FrameId,
    SessionId, TargetId, WeakCdpConnection,
};
use crate::frame::{Frame, flatten_tree};
use crate::targets::{Registry, auto_attach_params};
use crate::{BrowserError, CdpError, Chromium, LaunchOptions};
use serde_json::Value;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// A connected browser: the CDP connection plus, if ferry launched it, the process.
///
/// Dropping a launched browser kills its process group (see [`Chromium`]).
#[derive(Debug)]
pub struct Browser {
    cdp: CdpConnection,
    waiters: Arc<Waiters>,
    registry: Arc<Registry>,
    init_scripts: Vec<String>,
    /// Browser-level page auto-attach is on (popups get the init scripts; connected
    /// browsers only).
    popup_guard: std::sync::atomic::AtomicBool,
    // Declared last so the connection handles go first; the process is killed on drop.
    process: Option<Chromium>,
}

impl Browser {
    /// Launches a fresh headless Chromium and connects to it.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), ferry_browser::BrowserError> {
    /// use ferry_browser::{Browser, LaunchOptions};
    /// use std::time::Duration;
    ///
    /// let browser = Browser::launch(LaunchOptions::default()).await?;
    /// let context = browser.new_context().await?;
    /// let page = context.new_page().await?;
    /// page.navigate("http://127.0.0.1:8000/", Duration::from_secs(10)).await?;
    /// println!("{}", page.evaluate("document.title").await?);
    /// context.dispose().await?;
    /// browser.shutdown().await;
    /// # Ok(()) }
    /// ```
    pub async fn launch(options: LaunchOptions) -> Result<Self, BrowserError> {
        let mut process = Chromium::launch(options).await?;
        let (cdp, events) = match (process.take_connection(), process.ws_url()) {
            (Some(connection), _) => connection,
            (None, Some(url)) => cdp::connect_ws(url).await?,
            // A launched Chromium always has one or the other.
            (None, None) => return Err(CdpError::Closed.into()),
        };
        Ok(Self::start(cdp, events, Some(process)))
    }

    /// Connects to a browser someone else started, by `ws://…/devtools/browser/…` or by
    /// its `http://host:port` DevTools endpoint. Shutting it down only disconnects.
    pub async fn connect(endpoint: &str) -> Result<Self, BrowserError> {
        let (cdp, events) = if endpoint.starts_with("http://") {
            cdp::connect_http(endpoint).await?
        } else {
            cdp::connect_ws(endpoint).await?
        };
        Ok(Self::start(cdp, events, None))
    }

    /// Connects with an already open DevTools connection (for example one made with
    /// extra headers by [`cdp::connect_ws_with_headers`]).
    pub fn from_connection(cdp: CdpConnection, events: CdpEvents) -> Self {
        Self::start(cdp, events, None)
    }

    fn start(cdp: CdpConnection, events: CdpEvents, process: Option<Chromium>) -> Self {
        let waiters = Arc::new(Waiters::default());
        let registry = Arc::new(Registry::default());
        tokio::spawn(dispatch(
            events,
            waiters.clone(),
            registry.clone(),
            cdp.downgrade(),
        ));
        Self {
            cdp,
            waiters,
            registry,
            init_scripts: Vec::new(),
            popup_guard: std::sync::atomic::AtomicBool::new(false),
            process,
        }
    }

    /// Scripts every document of every page opened later runs first
    /// (`Page.addScriptToEvaluateOnNewDocument`, on the page and on each of its frames).
    /// Used to remove `RTCPeerConnection` from browsers whose flags ferry cannot set. With
    /// init scripts, pages that a page opens (popups) in ferry's contexts are attached
    /// browser-wide and get the scripts before they run, like the pages ferry opens.
    pub fn with_init_scripts(mut self, scripts: Vec<String>) -> Self {
        self.init_scripts = scripts;
        self
    }

    /// False once the DevTools connection is gone (the browser exited or crashed).
    pub fn is_connected(&self) -> bool {
        !self.cdp.is_closed()
    }

    /// The underlying connection, for commands without a helper here.
    pub fn cdp(&self) -> &CdpConnection {
        &self.cdp
    }

    /// The launched process; `None` for a browser reached with [`Browser::connect`].
    pub fn process(&self) -> Option<&Chromium> {
        self.process.as_ref()
    }

    /// Creates a new isolated browser context with default settings.
    pub async fn new_context(&self) -> Result<BrowserContext, BrowserError> {
        self.new_context_with(&CreateBrowserContext::default())
            .await
    }

    /// Creates a new isolated browser context (for example with its own proxy).
    pub async fn new_context_with(
        &self,
        options: &CreateBrowserContext,
    ) -> Result<BrowserContext, BrowserError> {
        if !self.init_scripts.is_empty() {
            // A browser ferry does not control: popups would escape the init scripts, so
            // watch new pages browser-wide and configure those a page opens in our contexts.
            if !self
                .popup_guard
                .swap(true, std::sync::atomic::Ordering::AcqRel)
            {
                let watched = self
                    .cdp
                    .call(
                        "Target.setAutoAttach",
                        serde_json::json!({
                            "autoAttach": true,
                            "waitForDebuggerOnStart": true,
                            "flatten": true,
                            "filter": [{ "type": "page" }]
                        }),
                        None,
                    )
                    .await;
                if let Err(e) = watched {
                    self.popup_guard
                        .store(false, std::sync::atomic::Ordering::Release);
                    return Err(e.into());
                }
            }
        }
        let id = self.cdp.create_browser_context(options).await?;
        if !self.init_scripts.is_empty() {
            self.registry
                .guard_popups_in(id.as_str(), self.init_scripts.clone());
        }
        Ok(BrowserContext {
            id,
            cdp: self.cdp.clone(),
            waiters: self.waiters.clone(),
            registry: self.registry.clone(),
            init_scripts: self.init_scripts.clone(),
            disposed: false,
        })
    }

    /// Ends the session: kills a launched browser's process group and removes its profile;
    /// for a connected browser, only closes the connection.
    pub async fn shutdown(self) {
        let Self { process, .. } = self;
        if let Some(process) = process {
            process.shutdown().await;
        }
    }
}

/// An isolated context in a browser (`Target.createBrowserContext`): pages in different
/// contexts share no cookies, storage or cache.
///
/// Dropping it without [`BrowserContext::dispose`] still asks the browser to dispose it,
/// without waiting for the answer.
#[derive(Debug)]
pub struct BrowserContext {
    id: BrowserContextId,
    cdp: CdpConnection,
    waiters: Arc<Waiters>,
    registry: Arc<Registry>,
    init_scripts: Vec<String>,
    disposed: bool,
}

impl BrowserContext {
    /// The browser's id for this context.
    pub fn id(&self) -> &BrowserContextId {
        &self.id
    }

    /// Opens a blank page in this context and attaches a flat session to it, with page
    /// events enabled and every frame and worker it starts attached (paused, configured,
    /// resumed; see [`crate::targets`]).
    pub async fn new_page(&self) -> Result<Page, BrowserError> {
        let target_id = self
            .cdp
            .create_target("about:blank", Some(&self.id))
            .await?;
        let session_id = match self.cdp.attach_to_target(&target_id).await {
            Ok(session) => session,
            Err(e) => {
                let _ = self.cdp.send(
                    "Target.closeTarget",
                    serde_json::json!({ "targetId": target_id }),
                    None,
                );
                return Err(e.into());
            }
        };
        let page = Page {
            target_id,
            session_id,
            cdp: self.cdp.clone(),
            waiters: self.waiters.clone(),
            registry: self.registry.clone(),
        };
        self.registry
            .add_root(&page.session_id, self.init_scripts.clone());
        page.configure(&self.init_scripts).await?;
        Ok(page)
    }

    /// Disposes the context: its pages close and its cookies and storage are dropped.
    pub async fn dispose(mut self) -> Result<(), BrowserError> {
        self.disposed = true;
        self.registry.forget_context(self.id.as_str());
        self.cdp.dispose_browser_context(&self.id).await?;
        Ok(())
    }
}

impl Drop for BrowserContext {
    fn drop(&mut self) {
        if !self.disposed {
            self.registry.forget_context(self.id.as_str());
            // Best effort; a closed connection means the browser is going away anyway.
            let _ = self.cdp.send(
                "Target.disposeBrowserContext",
                serde_json::json!({ "browserContextId": self.id }),
                None,
            );
        }
    }
}

/// A page (tab) with its own flat session.
#[derive(Debug)]
pub struct Page {
    target_id: TargetId,
    session_id: SessionId,
    cdp: CdpConnection,
    waiters: Arc<Waiters>,
    registry: Arc<Registry>,
}

impl Drop for Page {
    fn drop(&mut self) {
        self.registry.remove_root(&self.session_id);
    }
}

/// A region of a page for [`Page::screenshot`], in CSS pixels of the document, and the scale
/// it is drawn at (1: one image pixel per CSS pixel).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clip {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
    /// Image pixels per CSS pixel.
    pub scale: f64,
}

impl Page {
    /// Page events, init scripts, and auto-attach of frames and workers.
    async fn configure(&self, init_scripts: &[String]) -> Result<(), BrowserError> {
        let session = Some(&self.session_id);
        self.cdp.page_enable(&self.session_id).await?;
        for source in init_scripts {
            self.cdp
                .call(
                    "Page.addScriptToEvaluateOnNewDocument",
                    serde_json::json!({ "source": source }),
                    session,
                )
                .await?;
        }
        self.cdp
            .call("Target.setAutoAttach", auto_attach_params(), session)
            .await?;
        Ok(())
    }

    /// The page's frames, main frame first, each with a fresh isolated world: frames of
    /// the page's own process (same-origin iframes) from its frame tree, then cross-origin
    /// iframes over their own sessions. A frame that went away meanwhile is left out.
    pub async fn frames(&self) -> Result<Vec<Frame>, BrowserError> {
        let remote = self.registry.frame_sessions(&self.session_id);
        let remote_ids: Vec<&str> = remote.iter().map(|c| c.target.as_str()).collect();
        let mut sessions = vec![(self.session_id.clone(), None)];
        sessions.extend(
            remote
                .iter()
                .map(|c| (c.session.clone(), Some(c.target.as_str().to_owned()))),
        );
        let mut frames = Vec::new();
        for (index, (session, own_frame)) in sessions.iter().enumerate() {
            let tree = match self
                .cdp
                .call("Page.getFrameTree", serde_json::json!({}), Some(session))
                .await
            {
                Ok(tree) => tree,
                Err(e) if index == 0 => return Err(e.into()),
                Err(_) => continue,
            };
            for (frame_id, url) in flatten_tree(&tree["frameTree"]) {
                // A cross-origin frame also shows in its parent's tree: use its own session.
                let elsewhere = remote_ids.contains(&frame_id.as_str())
                    && own_frame.as_deref() != Some(frame_id.as_str());
                if elsewhere {
                    continue;
                }
                let main = index == 0 && frames.is_empty();
                match Frame::open(&self.cdp, session, frame_id, url, main).await {
                    Ok(frame) => frames.push(frame),
                    Err(e) if main => return Err(e.into()),
                    Err(_) => {}
                }
            }
        }
        Ok(frames)
    }

    /// The main frame's id.
    pub async fn main_frame_id(&self) -> Result<FrameId, BrowserError> {
        let tree = self
            .cdp
            .call(
                "Page.getFrameTree",
                serde_json::json!({}),
                Some(&self.session_id),
            )
            .await?;
        tree["frameTree"]["frame"]["id"]
            .as_str()
            .map(FrameId::new)
            .ok_or_else(|| {
                CdpError::BadResponse {
                    method: "Page.getFrameTree".into(),
                    reason: "no main frame".into(),
                }
                .into()
            })
    }

    /// A receiver for the next `method` event of this page's session (registered now, so
    /// an event that fires before the caller awaits is not lost). With `frame`, only
    /// events whose `frameId` is that frame count.
    pub fn next_event(
        &self,
        method: &'static str,
        frame: Option<&FrameId>,
    ) -> oneshot::Receiver<CdpEvent> {
        self.waiters
            .wait_for_frame(&self.session_id, method, frame.cloned())
    }

    /// Starts recording the requests this page and its cross-origin frames send, from now
    /// until the watch is dropped (`Network.requestWillBeSent` of each session): the evidence
    /// of what left the browser, e.g. whether a submit sent the form (a navigation, or a
    /// script's `fetch`/XHR) or a page script cancelled it.
    pub async fn watch_requests(&self) -> Result<RequestWatch, BrowserError> {
        let mut sessions = vec![self.session_id.clone()];
        sessions.extend(
            self.registry
                .frame_sessions(&self.session_id)
                .into_iter()
                .map(|c| c.session),
        );
        // Tapped before the domain is on, so the first request is not missed.
        let events = self
            .waiters
            .tap(sessions.clone(), "Network.requestWillBeSent");
        let params = serde_json::json!({ "maxPostDataSize": 0 });
        for (index, session) in sessions.iter().enumerate() {
            match self
                .cdp
                .call("Network.enable", params.clone(), Some(session))
                .await
            {
                Ok(_) => {}
                Err(e) if index == 0 => return Err(e.into()),
                // A frame that went away meanwhile sends nothing.
                Err(_) => {}
            }
        }
        Ok(RequestWatch {
            events,
            sessions,
            cdp: self.cdp.clone(),
        })
    }

    /// `Page.stopLoading`: gives up on whatever is still loading.
    pub async fn stop_loading(&self) -> Result<(), BrowserError> {
        self.cdp
            .call(
                "Page.stopLoading",
                serde_json::json!({}),
                Some(&self.session_id),
            )
            .await?;
        Ok(())
    }

    /// True once the connection to the browser is gone.
    pub fn is_closed(&self) -> bool {
        self.cdp.is_closed()
    }

    /// The page's target id.
    pub fn target_id(&self) -> &TargetId {
        &self.target_id
    }

    /// The flat session commands to this page go on.
    pub fn session_id(&self) -> &SessionId {
        &self.session_id
    }

    /// Navigates to `url` and waits for the page's load event, all within `timeout`.
    ///
    /// A failed navigation (`net::ERR_…`) is [`BrowserError::NavigationFailed`]; a page that
    /// does not finish loading in time is [`BrowserError::LoadTimeout`]. A same-document
    /// navigation (only the `#fragment` changes) returns once committed.
    pub async fn navigate(&self, url: &str, timeout: Duration) -> Result<(), BrowserError> {
        let deadline = tokio::time::Instant::now() + timeout;
        let load_timeout = || BrowserError::LoadTimeout {
            url: url.to_owned(),
            after: timeout,
        };
        // Registered before the command, so a load event that beats the reply is not lost.
        let loaded = self
            .waiters
            .wait_for(&self.session_id, "Page.loadEventFired");
        let navigation = match self
            .cdp
            .clone()
            .with_timeout(timeout)
            .page_navigate(&self.session_id, url)
            .await
        {
            Ok(navigation) => navigation,
            Err(CdpError::Timeout { .. }) => return Err(load_timeout()),
            Err(e) => return Err(e.into()),
        };
        if let Some(error_text) = navigation.error_text {
            return Err(BrowserError::NavigationFailed {
                url: url.to_owned(),
                error_text,
            });
        }
        if navigation.loader_id.is_none() {
            return Ok(());
        }
        match tokio::time::timeout_at(deadline, loaded).await {
            Ok(Ok(_event)) => Ok(()),
            Ok(Err(_)) => Err(CdpError::Closed.into()),
            Err(_) => Err(load_timeout()),
        }
    }

    /// Evaluates `expression` in the page's main world and returns its value by value (a
    /// promise is awaited). An exception is [`BrowserError::Script`].
    pub async fn evaluate(&self, expression: &str) -> Result<Value, BrowserError> {
        self.cdp
            .runtime_evaluate(&self.session_id, expression)
            .await?
            .into_result()
    }

    /// A PNG of the page region `clip` (CSS pixels of the document, not only of the
    /// viewport: the region may lie below the fold), at `clip.scale`. The image is what the
    /// page renders; to hide parts of it, cover them before the call.
    pub async fn screenshot(&self, clip: Clip) -> Result<Vec<u8>, BrowserError> {
        use base64::Engine as _;
        let reply = self
            .cdp
            .call(
                "Page.captureScreenshot",
                serde_json::json!({
                    "format": "png",
                    "captureBeyondViewport": true,
                    "clip": {
                        "x": clip.x,
                        "y": clip.y,
                        "width": clip.width,
                        "height": clip.height,
                        "scale": clip.scale,
                    },
                }),
                Some(&self.session_id),
            )
            .await?;
        let data = reply
            .get("data")
            .and_then(Value::as_str)
            .unwrap_or_default();
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| BrowserError::Script {
                description: format!("the screenshot was not base64: {e}"),
            })
    }

    /// Closes the page.
    pub async fn close(self) -> Result<(), BrowserError> {
        self.cdp.close_target(&self.target_id).await?;
        Ok(())
    }
}

/// A request a page sent, as the browser announced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentRequest {
    /// `GET`, `POST`, …
    pub method: String,
    /// The URL requested.
    pub url: String,
    /// The resource type: `Document` (a navigation), `XHR`, `Fetch`, `Ping`, `Image`, …
    pub resource_type: String,
    /// True when the request carries a body.
    pub has_body: bool,
}

impl SentRequest {
    /// True for a request that can carry form data out: a navigation, or a request with a
    /// body or a method other than GET (a script's `fetch`/XHR/beacon post).
    pub fn could_carry_form_data(&self) -> bool {
        self.resource_type == "Document"
            || self.has_body
            || !self.method.eq_ignore_ascii_case("GET")
    }

    fn from_event(event: &CdpEvent) -> Option<SentRequest> {
        let request = &event.params["request"];
        Some(SentRequest {
            method: request["method"].as_str()?.to_owned(),
            url: request["url"].as_str()?.to_owned(),
            resource_type: event.params["type"].as_str().unwrap_or("Other").to_owned(),
            has_body: request["hasPostData"].as_bool().unwrap_or(false),
        })
    }
}

/// What [`Page::watch_requests`] records; dropping it stops the recording.
#[derive(Debug)]
pub struct RequestWatch {
    events: mpsc::UnboundedReceiver<CdpEvent>,
    sessions: Vec<SessionId>,
    cdp: CdpConnection,
}

impl RequestWatch {
    /// The requests announced since the last call, oldest first.
    pub fn sent(&mut self) -> Vec<SentRequest> {
        let mut out = Vec::new();
        while let Ok(event) = self.events.try_recv() {
            out.extend(SentRequest::from_event(&event));
        }
        out
    }
}

impl Drop for RequestWatch {
    fn drop(&mut self) {
        // Best effort: a closed session or connection records nothing anyway.
        for session in &self.sessions {
            let _ = self
                .cdp
                .send("Network.disable", serde_json::json!({}), Some(session));
        }
    }
}

/// Who waits for which event: `(session, method)` pairs with a oneshot each, and taps that
/// receive every matching event until their receiver is dropped.
#[derive(Debug, Default)]
struct Waiters {
    state: Mutex<WaiterState>,
}

#[derive(Debug, Default)]
struct WaiterState {
    /// Set when the event queue ended; new waiters fail at once.
    closed: bool,
    list: Vec<Waiter>,
    taps: Vec<Tap>,
}

#[derive(Debug)]
struct Tap {
    sessions: Vec<SessionId>,
    method: &'static str,
    tx: mpsc::UnboundedSender<CdpEvent>,
}

#[derive(Debug)]
struct Waiter {
    session: SessionId,
    method: &'static str,
    frame: Option<FrameId>,
    tx: oneshot::Sender<CdpEvent>,
}

impl Waiter {
    fn wants(&self, session: &SessionId, event: &CdpEvent) -> bool {
        &self.session == session
            && self.method == event.method
            && self
                .frame
                .as_ref()
                .is_none_or(|f| event.params["frameId"].as_str() == Some(f.as_str()))
    }
}

impl Waiters {
    fn state(&self) -> MutexGuard<'_, WaiterState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A receiver for the next `method` event on `session`. It errors if the connection
    /// closes first.
    fn wait_for(&self, session: &SessionId, method: &'static str) -> oneshot::Receiver<CdpEvent> {
        self.wait_for_frame(session, method, None)
    }

    /// Like `wait_for`, only for events about `frame` when given.
    fn wait_for_frame(
        &self,
        session: &SessionId,
        method: &'static str,
        frame: Option<FrameId>,
    ) -> oneshot::Receiver<CdpEvent> {
        let (tx, rx) = oneshot::channel();
        let mut state = self.state();
        if !state.closed {
            // Forget waiters whose caller gave up (timed out, dropped the future).
            state.list.retain(|w| !w.tx.is_closed());
            state.list.push(Waiter {
                session: session.clone(),
                method,
                frame,
                tx,
            });
        }
        rx
    }

    /// Every `method` event of `sessions` from now on, until the receiver is dropped.
    fn tap(
        &self,
        sessions: Vec<SessionId>,
        method: &'static str,
    ) -> mpsc::UnboundedReceiver<CdpEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut state = self.state();
        if !state.closed {
            state.taps.retain(|t| !t.tx.is_closed());
            state.taps.push(Tap {
                sessions,
                method,
                tx,
            });
        }
        rx
    }

    /// Hands `event` to every waiter registered for it.
    fn deliver(&self, event: &CdpEvent) {
        let Some(session) = &event.session_id else {
            return;
        };
        let mut state = self.state();
        for tap in &state.taps {
            if tap.method == event.method && tap.sessions.contains(session) {
                let _ = tap.tx.send(event.clone());
            }
        }
        let (matching, rest): (Vec<Waiter>, Vec<Waiter>) = std::mem::take(&mut state.list)
            .into_iter()
            .partition(|w| w.wants(session, event));
        state.list = rest;
        drop(state);
        for waiter in matching {
            let _ = waiter.tx.send(event.clone());
        }
    }

    /// The connection is gone: every waiter fails now and later ones fail at once.
    fn close(&self) {
        let mut state = self.state();
        state.closed = true;
        state.list.clear();
        state.taps.clear();
    }
}

/// Consumes the event queue in order until the connection closes: attaches and resumes
/// new frames and workers, then wakes whoever waits for the event.
async fn dispatch(
    mut events: CdpEvents,
    waiters: Arc<Waiters>,
    registry: Arc<Registry>,
    cdp: WeakCdpConnection,
) {
    while let Some(event) = events.recv().await {
        if event.method.starts_with("Target.")
            && let Some(cdp) = cdp.upgrade()
        {
            registry.on_event(&cdp, &event);
        }
        waiters.deliver(&event);
    }
    waiters.close();
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(session: &str, method: &str) -> CdpEvent {
        CdpEvent {
            method: method.to_owned(),
            params: json!({}),
            session_id: Some(SessionId::new(session)),
        }
    }

    #[test]
    fn events_reach_only_the_waiter_of_their_session_and_method() {
        let waiters = Waiters::default();
        let mut a = waiters.wait_for(&SessionId::new("A"), "Page.loadEventFired");
        let mut b = waiters.wait_for(&SessionId::new("B"), "Page.loadEventFired");
        waiters.deliver(&event("A", "Page.frameNavigated"));
        waiters.deliver(&event("B", "Page.loadEventFired"));
        assert!(a.try_recv().is_err());
        assert_eq!(b.try_recv().expect("b").method, "Page.loadEventFired");
        waiters.deliver(&event("A", "Page.loadEventFired"));
        assert!(a.try_recv().is_ok());
    }

    #[test]
    fn closing_fails_current_and_future_waiters() {
        let waiters = Waiters::default();
        let mut before = waiters.wait_for(&SessionId::new("A"), "Page.loadEventFired");
        waiters.close();
        let mut after = waiters.wait_for(&SessionId::new("A"), "Page.loadEventFired");
        assert!(matches!(
            before.try_recv(),
            Err(oneshot::error::TryRecvError::Closed)
        ));
        assert!(matches!(
            after.try_recv(),
            Err(oneshot::error::TryRecvError::Closed)
        ));
    }
}
