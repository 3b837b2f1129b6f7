//! The forms agent as an A2A executor.

use crate::config::{BrowserSource, FormsConfig};
use crate::pool::{ConversationKey, SessionPool};
use crate::report::FormReport;
use crate::request::{self, Incoming, RequestError};
use crate::turn::{self, TurnInput, Verdict};
use ferry_agent::{
    AgentDescription, AgentError, AgentExecutor, AgentFuture, EventSink, RequestContext,
};
use ferry_browser::{CdpEndpoint, CdpEndpoints};
use ferry_proto::{A2aError, AgentSkill, Artifact, ErrorKind, Message, Part};
use serde_json::{Value, json};
use std::sync::Arc;

/// Fills web forms in headless Chromium: inspect, fill, report, submit on confirmation.
///
/// ```no_run
/// use ferry_forms::{FormsAgent, FormsConfig};
/// # async fn run() {
/// let agent = FormsAgent::new(FormsConfig {
///     allow_domains: vec!["example.com".into()],
///     ..FormsConfig::default()
/// });
/// # let _ = agent; }
/// ```
#[derive(Debug, Clone)]
pub struct FormsAgent {
    config: Arc<FormsConfig>,
    pool: Arc<SessionPool>,
    browser_found: bool,
}

impl FormsAgent {
    /// An agent with `config`. Call inside a tokio runtime (the idle reaper runs on it).
    pub fn new(config: FormsConfig) -> FormsAgent {
        let browser_found = match config.browser {
            BrowserSource::Launch => {
                ferry_browser::find_chromium(config.chrome_path.as_deref()).is_ok()
            }
            BrowserSource::Cdp { .. } => true,
        };
        let config = Arc::new(config);
        FormsAgent {
            pool: SessionPool::new(config.clone()),
            config,
            browser_found,
        }
    }

    /// The settings.
    pub fn config(&self) -> &FormsConfig {
        &self.config
    }

    /// The sessions (for tests and shutdown).
    pub fn pool(&self) -> &Arc<SessionPool> {
        &self.pool
    }

    async fn turn(&self, ctx: RequestContext, events: EventSink) -> Result<(), AgentError> {
        let incoming = request::parse(&ctx.message);
        let request = match incoming {
            Ok(Incoming::Request(r)) => r,
            Ok(Incoming::Chatter(_)) => return reply_help(&ctx, &events, None).await,
            Err(e) => return reply_help(&ctx, &events, Some(e)).await,
        };
        let endpoint = match &self.config.browser {
            BrowserSource::Cdp { name } => match cdp_endpoint(&ctx, name.as_deref()) {
                Ok(endpoint) => Some(endpoint),
                Err(e) => {
                    // Still a task with both artifacts; the framework fails it as infra_error.
                    emit_report(&events, &failure_report(&request, &e.to_string())).await?;
                    return Err(e);
                }
            },
            BrowserSource::Launch => None,
        };
        let key = ConversationKey::of(&ctx);
        let mut slot = self.pool.acquire(&key).await.map_err(|full| {
            AgentError::Protocol(
                A2aError::new(ErrorKind::Unavailable, full.to_string())
                    .with_meta("retryAfterSeconds", full.retry_after_secs.to_string()),
            )
        })?;
        let progress = crate::turn::Progress(events.clone());
        let opened = if slot.session.as_ref().is_some_and(crate::Session::is_alive) {
            Ok(false)
        } else {
            progress.say("starting a browser session").await;
            self.pool
                .ensure_session(&key, &mut slot, endpoint.as_ref())
                .await
        };
        if let Err(e) = opened {
            return Err(failed(
                &events,
                &request,
                format!("could not start a browser session: {e}"),
            )
            .await);
        }
        let Some(session) = slot.session.as_mut() else {
            return Err(failed(&events, &request, "no browser session".into()).await);
        };
        let pending = self.pool.pending(&key);
        let result = turn::run(
            session,
            TurnInput {
                config: &self.config,
                request: &request,
                task_id: &ctx.task_id,
                pending,
                progress: &progress,
            },
        )
        .await;
        let result = match result {
            Ok(result) => result,
            Err(e) => {
                // The browser is gone or broken: the next message gets a fresh session.
                let crashed = slot.session.as_ref().is_none_or(|s| !s.is_alive());
                if let Some(session) = slot.session.take().filter(|_| crashed) {
                    session.close().await;
                }
                self.pool.set_pending(&key, None);
                let message = if crashed {
                    format!(
                        "the browser session ended unexpectedly ({e}); send the request again to start a new session"
                    )
                } else {
                    format!("the browser could not complete this step: {e}")
                };
                return Err(failed(&events, &request, message).await);
            }
        };
        self.pool.set_pending(&key, result.pending.clone());
        drop(slot);

        emit_report(&events, &result.report).await?;
        let message = status_message(&events, &result.message, &result.report);
        match result.verdict {
            Verdict::Completed => events.complete(Some(message)).await?,
            Verdict::InputRequired => events.input_required(message).await?,
            Verdict::Failed => events.fail(message).await?,
        }
        Ok(())
    }
}

impl AgentExecutor for FormsAgent {
    fn describe(&self) -> AgentDescription {
        let skill = AgentSkill {
            id: "fill-web-form".into(),
            name: "Fill a web form".into(),
            description: format!(
                "Opens a web page in a headless browser, inspects its form, fills the values you give (keys are the labels a person sees), reports missing, unmatched, ambiguous and invalid fields, and submits only after {{\"confirm\": true}}. Send a data part like {}.",
                request::example()
            ),
            tags: vec!["forms".into(), "browser".into(), "web".into()],
            examples: vec![
                request::example().into(),
                "https://example.com/signup".into(),
            ],
            input_modes: vec!["application/json".into(), "text/plain".into()],
            output_modes: vec!["application/json".into(), "text/plain".into()],
            ..AgentSkill::default()
        };
        AgentDescription::new(
            "ferry forms agent",
            "Fills web forms in headless Chromium: inspect, fill, report, submit on confirmation.",
        )
        .with_skills(vec![skill])
    }

    fn execute(&self, ctx: RequestContext, events: EventSink) -> AgentFuture<'_> {
        Box::pin(self.turn(ctx, events))
    }

    fn cancel(&self, ctx: RequestContext, _events: EventSink) -> AgentFuture<'_> {
        Box::pin(async move {
            if self
                .pool
                .cancel_pending(&ConversationKey::of(&ctx), &ctx.task_id)
            {
                tracing::debug!(task = %ctx.task_id, "pending submit dropped");
            }
            Ok(())
        })
    }

    fn ready(&self) -> bool {
        self.browser_found
    }
}

/// Marks a part or artifact as holding website text.
fn untrusted() -> ferry_proto::Struct {
    let mut meta = serde_json::Map::new();
    meta.insert("untrusted".into(), Value::Bool(true));
    meta
}

/// The report of a turn that could not use the browser: the requested URL and why.
fn failure_report(request: &crate::request::FormRequest, why: &str) -> FormReport {
    FormReport {
        url: request
            .url
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default(),
        warnings: vec![why.to_owned()],
        ..FormReport::default()
    }
}

/// Emits the artifacts of a failed turn (every task carries both) and the failure itself.
async fn failed(
    events: &EventSink,
    request: &crate::request::FormRequest,
    why: String,
) -> AgentError {
    if let Err(e) = emit_report(events, &failure_report(request, &why)).await {
        return e;
    }
    AgentError::Failed(why)
}

/// The `result` (text) and `data` (JSON) artifacts.
async fn emit_report(events: &EventSink, report: &FormReport) -> Result<(), AgentError> {
    let mut text = Artifact::new("result", "result", vec![Part::text(report.to_text())]);
    text.metadata = Some(untrusted());
    events.artifact(text, false, true).await?;
    let data = serde_json::to_value(report).unwrap_or(Value::Null);
    let mut data = Artifact::new(
        "data",
        "data",
        vec![Part::data(data).with_media_type("application/json")],
    );
    data.metadata = Some(untrusted());
    events.artifact(data, false, true).await?;
    Ok(())
}

/// The status message: text for people, a data part with what is needed.
fn status_message(events: &EventSink, text: &str, report: &FormReport) -> Message {
    let needed = json!({
        "missing": report.missing,
        "unmatched": report.unmatched,
        "ambiguous": report.ambiguous,
        "fieldErrors": report.field_errors,
        "pendingSubmit": report.pending_submit,
        "submitted": report.submitted,
    });
    let mut message = events.agent_message(vec![
        Part::text(text),
        Part::data(needed).with_media_type("application/json"),
    ]);
    message.metadata = Some(untrusted());
    message
}

/// Chatter or a malformed request: the expected shape, as a direct reply (no task) on a new
/// request, or as INPUT_REQUIRED on a task that is already open.
async fn reply_help(
    ctx: &RequestContext,
    events: &EventSink,
    error: Option<RequestError>,
) -> Result<(), AgentError> {
    let problem = match &error {
        Some(e) => format!("I could not read that request: {e}. "),
        None => String::new(),
    };
    let text = format!(
        "{problem}I fill web forms. Send a data part (mediaType application/json) like {} — \"values\" keys are the field labels; add \"confirm\": true to approve the submit. A text part holding only a URL inspects that page.",
        request::example()
    );
    let parts = vec![
        Part::text(text),
        Part::data(json!({
            "expected": {
                "url": "https://example.com/signup",
                "values": {"Email": "ada@example.com", "Country": "Germany"},
                "submit": true
            },
            "error": error.as_ref().map(ToString::to_string),
        }))
        .with_media_type("application/json"),
    ];
    if ctx.is_new_task() {
        if let Some(e) = error {
            return Err(AgentError::Protocol(A2aError::invalid_params(
                e.to_string(),
            )));
        }
        events.message(events.agent_message(parts)).await?;
    } else {
        events.input_required(events.agent_message(parts)).await?;
    }
    Ok(())
}

/// The registered browser endpoint this turn uses: `name`, or the only one. None (or several
/// and no name) is an infrastructure failure (`cdp.no_endpoint`, `cdp.ambiguous`).
fn cdp_endpoint(ctx: &RequestContext, name: Option<&str>) -> Result<CdpEndpoint, AgentError> {
    let none = CdpEndpoints::default();
    let endpoints = ctx.extension::<CdpEndpoints>().unwrap_or(&none);
    endpoints
        .pick(name)
        .cloned()
        .map_err(|e| AgentError::Infra {
            code: e.code(),
            message: e.to_string(),
        })
}
