//! The turn's first steps: open the page the request names (or keep the open one), then
//! inspect it, ending the turn when there is no usable page (blocked, unreachable, an error
//! page without a form, nothing loaded).

use super::reporting::{blocked, blocked_more, blocked_reason, refuse_host};
use super::{Progress, TurnResult, Verdict, no_page_yet};
use crate::config::FormsConfig;
use crate::inspection::Inspection;
use crate::report::FormReport;
use crate::request::FormRequest;
use crate::session::Session;
use ferry_browser::BrowserError;

/// A step's outcome: its value, or the turn's result when the step ends the turn (boxed: a
/// result is large, and most steps go on).
pub(super) type Step<T> = Result<T, Box<TurnResult>>;

/// The session at the start of a turn, with what the turn noted so far.
pub(super) struct Visit<'s> {
    pub(super) session: &'s mut Session,
    /// The proxy's refusal count when the turn began: the report lists those after it.
    pub(super) mark: usize,
    /// Warnings for the report (a page that did not finish loading, an error status).
    pub(super) warnings: Vec<String>,
}

impl<'s> Visit<'s> {
    /// A turn on `session`, its refusals counted from now.
    pub(super) fn new(session: &'s mut Session) -> Self {
        let mark = session.blocked_mark();
        Self {
            session,
            mark,
            warnings: Vec::new(),
        }
    }

    /// The turn's result when the page cannot be used: `why`, the refusals, the warnings.
    pub(super) fn failed(&mut self, why: String) -> TurnResult {
        let report = FormReport {
            blocked: blocked(self.session, self.mark),
            blocked_more: blocked_more(self.session, self.mark),
            warnings: std::mem::take(&mut self.warnings),
            ..FormReport::default()
        };
        TurnResult {
            learned: Vec::new(),
            verdict: Verdict::Failed,
            message: why,
            report,
            pending: None,
        }
    }

    /// Step 1: opens the request's URL unless the open page is it, and has not moved on since
    /// (a submit went to its result page). A request without a URL continues on the open
    /// page; there must be one.
    pub(super) async fn open(
        &mut self,
        config: &FormsConfig,
        request: &FormRequest,
        progress: &Progress,
    ) -> Result<Step<()>, BrowserError> {
        let Some(url) = &request.url else {
            return Ok(match self.session.requested_url {
                Some(_) => Ok(()),
                None => Err(Box::new(no_page_yet())),
            });
        };
        if let Some(refused) = refuse_host(config, url) {
            return Ok(Err(Box::new(self.failed(refused))));
        }
        let here = self.session.page().evaluate("location.href").await.ok();
        let moved = self.session.landed_url.is_none()
            || here.as_ref().and_then(|h| h.as_str()) != self.session.landed_url.as_deref();
        if self.session.requested_url.as_ref() == Some(url) && !moved {
            return Ok(Ok(()));
        }
        progress.say(&format!("opening {url}")).await;
        let navigation = self
            .session
            .page()
            .navigate(url.as_str(), config.navigation_timeout)
            .await;
        self.session.requested_url = Some(url.clone());
        match navigation {
            Ok(()) => {}
            Err(BrowserError::LoadTimeout { after, .. }) => {
                let _ = self.session.page().stop_loading().await;
                self.warnings.push(format!(
                    "the page did not finish loading within {} s; inspected what had loaded",
                    after.as_secs()
                ));
            }
            Err(BrowserError::NavigationFailed { error_text, .. }) => {
                let why = blocked_reason(self.session, self.mark, url)
                    .unwrap_or_else(|| format!("could not open {url}: {error_text}"));
                return Ok(Err(Box::new(self.refused(why))));
            }
            Err(e) => return Err(e),
        }
        Ok(match blocked_reason(self.session, self.mark, url) {
            Some(why) => Err(Box::new(self.refused(why))),
            None => Ok(()),
        })
    }

    /// Step 2: inspects the page. Ends the turn when the page is not a form to work on: it
    /// landed on a refused host (a redirect), it shows nothing after a load that timed out,
    /// or it is an HTTP error page without a form (an error page with a form is inspected,
    /// with a warning).
    pub(super) async fn inspect(
        &mut self,
        request: &FormRequest,
        progress: &Progress,
    ) -> Result<Step<Inspection>, BrowserError> {
        progress.say("inspecting the form").await;
        let inspection = Inspection::take(self.session.page()).await?;
        if request.url.is_some() {
            // Where the page is now: a later turn with the same URL continues here.
            self.session.landed_url = inspection.main().map(|m| m.url.clone());
        }
        if let Some(landed) = inspection.main().and_then(|m| url::Url::parse(&m.url).ok())
            && let Some(why) = blocked_reason(self.session, self.mark, &landed)
        {
            return Ok(Err(Box::new(self.refused(why))));
        }
        let shows_nothing = inspection.main().is_some_and(|m| m.fields.is_empty())
            && inspection.frames().len() == 1;
        if shows_nothing && !self.warnings.is_empty() {
            let why = self.warnings.remove(0);
            return Ok(Err(Box::new(self.failed(why))));
        }
        let error_status = inspection
            .main()
            .and_then(|m| m.http_status)
            .filter(|s| *s >= 400 && request.url.is_some());
        if let Some(status) = error_status {
            if inspection.forms().is_empty() {
                let url = inspection.main().map(|m| m.url.clone()).unwrap_or_default();
                let why = format!("{url} answered HTTP {status} and shows no form");
                return Ok(Err(Box::new(self.failed(why))));
            }
            self.warnings
                .push(format!("the page answered HTTP {status}"));
        }
        Ok(Ok(inspection))
    }

    /// The page was refused: it is forgotten (the next turn must name it again), and the
    /// turn fails saying why.
    fn refused(&mut self, why: String) -> TurnResult {
        self.session.requested_url = None;
        self.failed(why)
    }
}
