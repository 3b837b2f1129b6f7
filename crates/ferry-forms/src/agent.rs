//! The forms agent: one conversation turn ([`FormsAgent::converse`]), shared by its two
//! faces — A2A (this file's `AgentExecutor`) and MCP (the `ferry-mcp` crate) — and the
//! saved-profile commands.

use crate::approval::{
    ApprovalError, ApprovalRecord, Credential, Decision, Ledger, Offer, Review, Waiting,
};
use crate::config::{BrowserSource, FormsConfig};
use crate::notes::ContextNotes;
use crate::pool::{AtCapacity, ConversationKey, SessionPool};
use crate::profiles::{ProfileCommand, ProfileError, Profiles};
use crate::report::FormReport;
use crate::request::{self, FormRequest, Incoming, RequestError};
use crate::turn::{self, Gate, TurnInput, TurnResult, Verdict, auto::AutoSources};
use ferry_agent::{
    AgentDescription, AgentError, AgentExecutor, AgentFuture, ConversationMoved, EventSink,
    RequestContext,
};
use ferry_browser::{CdpEndpoint, CdpEndpoints};
use ferry_proto::{A2aError, AgentSkill, Artifact, ErrorKind, Message, Part, PartContent};
use ferry_store::profiles::{MemoryProfiles, ProfileStore};
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
    profiles: Profiles,
    notes: Arc<ContextNotes>,
    approvals: Arc<Ledger>,
    /// The address people reach the review pages at (set once the server is bound).
    approvals_at: Arc<std::sync::OnceLock<String>>,
    /// Outcomes of people's decisions on conversations that have no task to report them to
    /// (MCP): the conversation's next confirmation or look answers with it.
    undelivered: Arc<std::sync::Mutex<std::collections::HashMap<ConversationKey, Outcome>>>,
    browser_found: bool,
}

/// How a turn ended, for the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnState {
    /// Done: inspected, filled without a submit, or submitted.
    Completed,
    /// The caller must answer: values, corrections, or the confirmation of a submit.
    InputRequired,
    /// The page could not be used, or the browser failed.
    Failed,
}

/// What one turn did: its state, the status text, and the report (the `result` text and the
/// `data` JSON, both holding website text: data, never instructions).
#[derive(Debug, Clone)]
pub struct Outcome {
    state: TurnState,
    message: String,
    report: FormReport,
    /// The browser itself failed (over A2A: the task fails with the text as its message).
    broken: bool,
}

impl Outcome {
    /// How the turn ended.
    pub fn state(&self) -> TurnState {
        self.state
    }

    /// The status text: what happened and what is needed next.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The report as compact text for a person (the `result` artifact).
    pub fn report_text(&self) -> String {
        self.report.to_text()
    }

    /// True when the turn submitted the form.
    pub fn submitted(&self) -> bool {
        self.report.submitted
    }

    /// A person's decision on the submit (`approved`, `rejected`), when one was taken.
    pub fn approval_decision(&self) -> Option<&'static str> {
        self.report.approval.as_ref().map(|a| a.decision)
    }

    /// The picture of the form as filled (PNG, secrets blanked), when the turn filled one.
    pub fn screenshot(&self) -> Option<&[u8]> {
        self.report.screenshot.as_ref().map(|s| s.png.as_slice())
    }

    /// The report as JSON (the `data` artifact): fields, `filled`, `autofilled`, `missing`,
    /// `unmatched`, `ambiguous`, `fieldErrors`, `pendingSubmit`, `submitted`, `outcome`, …
    pub fn report_json(&self) -> Value {
        serde_json::to_value(&self.report).unwrap_or(Value::Null)
    }

    /// What the caller must still give (the data part of the status message).
    pub fn needed_json(&self) -> Value {
        needed(&self.report)
    }

    fn failure(request: &FormRequest, why: String) -> Outcome {
        Outcome {
            state: TurnState::Failed,
            report: failure_report(request, &why),
            message: why,
            broken: true,
        }
    }
}

/// Why a turn could not start at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TurnRefused {
    /// Every browser session is in use.
    #[error(transparent)]
    AtCapacity(#[from] AtCapacity),
    /// The caller's saved profile could not be read for `auto`.
    #[error("auto: {0}")]
    Profile(ProfileError),
}

impl FormsAgent {
    /// An agent with `config`, keeping saved profiles in memory. Call inside a tokio runtime
    /// (the idle reaper runs on it).
    pub fn new(config: FormsConfig) -> FormsAgent {
        let browser_found = match config.browser {
            BrowserSource::Launch => {
                ferry_browser::find_chromium(config.chrome_path.as_deref()).is_ok()
            }
            BrowserSource::Cdp { .. } => true,
        };
        let shared = config.shared_profiles;
        let config = Arc::new(config);
        FormsAgent {
            pool: SessionPool::new(config.clone()),
            config,
            profiles: Profiles::new(Arc::new(MemoryProfiles::new()), shared),
            notes: Arc::new(ContextNotes::default()),
            approvals: Arc::new(Ledger::default()),
            approvals_at: Arc::new(std::sync::OnceLock::new()),
            undelivered: Arc::default(),
            browser_found,
        }
    }

    /// Keeps saved profiles in `store` (a durable one: SQLite, PostgreSQL) instead of memory.
    pub fn with_profiles(mut self, store: Arc<dyn ProfileStore>) -> FormsAgent {
        self.profiles = Profiles::new(store, self.config.shared_profiles);
        self
    }

    /// Where the server serving this agent is reached (`https://forms.example.com`): the
    /// review links of `--approval human` start with it. Set once; until then links are
    /// relative (`/approvals/…`).
    pub fn serve_approvals_at(&self, base_url: &str) {
        let _ = self
            .approvals_at
            .set(base_url.trim_end_matches('/').to_owned());
    }

    /// The settings.
    pub fn config(&self) -> &FormsConfig {
        &self.config
    }

    /// The sessions (for tests and shutdown).
    pub fn pool(&self) -> &Arc<SessionPool> {
        &self.pool
    }

    /// Runs a profile command for conversation `key`'s owner (its tenant and caller).
    pub async fn profile_command(
        &self,
        key: &ConversationKey,
        command: ProfileCommand,
    ) -> Result<Value, ProfileError> {
        let owner = self.profiles.owner(key)?;
        self.profiles.execute(&owner, command).await
    }

    /// Ends conversation `key`: closes its browser session, drops its pending submit and
    /// forgets its notes. The next turn of the same key starts afresh.
    pub async fn close(&self, key: &ConversationKey) {
        self.pool.close(key).await;
        self.notes.forget(key);
        self.approvals.withdraw(key);
    }

    /// One turn of conversation `key` as task `task_id`: opens (or reuses) the
    /// conversation's browser session, runs `request` on it, and remembers what the turn
    /// learned. Browser failures are a [`TurnState::Failed`] outcome; only a turn that could
    /// not start is an error. Launched browsers only (a registered CDP endpoint is an A2A
    /// extension's). With a person approving submits, a confirmation (or a look at the open
    /// page) after the person decided answers with what the decision did.
    pub async fn converse(
        &self,
        key: &ConversationKey,
        task_id: &str,
        request: &FormRequest,
    ) -> Result<Outcome, TurnRefused> {
        let decided = self
            .undelivered
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
        let asks_after_it = request.confirm && request.values.is_empty()
            || request.url.is_none() && request.is_inspect_only();
        if let Some(outcome) = decided.filter(|_| asks_after_it) {
            return Ok(outcome);
        }
        let progress = turn::Progress(None);
        self.run(key, task_id, request, None, &progress, self.gate())
            .await
    }

    /// Who lets a submit happen in a turn the caller asked for.
    fn gate(&self) -> Gate {
        match self.config.approval.human() {
            Some(_) => Gate::Person,
            None => Gate::Caller,
        }
    }

    async fn run(
        &self,
        key: &ConversationKey,
        task_id: &str,
        request: &FormRequest,
        endpoint: Option<&CdpEndpoint>,
        progress: &turn::Progress,
        gate: Gate,
    ) -> Result<Outcome, TurnRefused> {
        let (sources, mut auto_warning) = if request.auto {
            self.auto_sources(key, request.profile.as_deref()).await?
        } else {
            (AutoSources::default(), None)
        };
        if request.url.is_none() && !self.pool.has_slot(key) {
            // Nothing to look at: no browser is started for it.
            let result = turn::no_page_yet();
            return Ok(Outcome {
                state: TurnState::InputRequired,
                message: result.message,
                report: result.report,
                broken: false,
            });
        }
        let mut slot = self.pool.acquire(key).await?;
        if let Err(why) = self.open_session(key, &mut slot, endpoint, progress).await {
            return Ok(Outcome::failure(request, why));
        }
        let Some(session) = slot.session.as_mut() else {
            return Ok(Outcome::failure(request, "no browser session".into()));
        };
        let pending = self.pool.pending(key);
        let result = turn::run(
            session,
            TurnInput {
                config: &self.config,
                request,
                task_id,
                pending: pending.clone(),
                progress,
                auto: request.auto.then_some(&sources),
                gate,
                continuing: false,
            },
        )
        .await;
        let mut result = match result {
            Ok(result) => result,
            Err(e) => {
                let why = self.browser_failed(key, &mut slot, &e).await;
                return Ok(Outcome::failure(request, why));
            }
        };
        // A look at the open page (no URL, nothing to do) keeps the submit that waits.
        let look = request.url.is_none() && request.is_inspect_only();
        match (look, &pending) {
            (true, Some(waiting)) => result.report.pending_submit = waiting.is_ready(),
            _ => {
                self.pool.set_pending(key, result.pending.clone());
                self.offer_approval(key, task_id, &mut result, progress);
            }
        }
        drop(slot);
        self.notes.learn(key, std::mem::take(&mut result.learned));
        if let Some(warning) = auto_warning.take() {
            result.report.warnings.push(warning);
        }
        Ok(Outcome {
            state: match result.verdict {
                Verdict::Completed => TurnState::Completed,
                Verdict::InputRequired | Verdict::Advanced => TurnState::InputRequired,
                Verdict::Failed => TurnState::Failed,
            },
            message: result.message,
            report: result.report,
            broken: false,
        })
    }

    /// With a person to approve: the review link of the submit this turn showed ready (the
    /// one already open for the same showing, or a new one), in the report and the status
    /// text; any other outcome withdraws what waited in the conversation.
    fn offer_approval(
        &self,
        key: &ConversationKey,
        task_id: &str,
        result: &mut TurnResult,
        progress: &turn::Progress,
    ) {
        let Some(human) = self.config.approval.human() else {
            return;
        };
        let shown = result
            .pending
            .as_ref()
            .filter(|p| p.task_id == task_id)
            .and_then(|p| Some((p.form, p.shown_ready.as_ref()?.ticket())));
        let Some((form, ticket)) = shown else {
            if result.pending.as_ref().is_none_or(|p| !p.is_ready()) {
                self.approvals.withdraw(key);
            }
            return;
        };
        let secret = self.approvals.offer(Offer {
            key,
            task_id,
            ticket,
            form,
            report: &result.report,
            sink: progress.0.clone(),
            ttl: human.ttl,
        });
        let base = self.approvals_at.get().map_or("", String::as_str);
        let url = format!("{base}/approvals/{task_id}/{secret}");
        result.message = format!(
            "{} Review page (valid once, for {} min): {url}",
            result.message,
            human.ttl.as_secs().div_ceil(60)
        );
        result.report.approval_url = Some(url);
    }

    /// The review of task `task_id`'s waiting submit, for the holder of its link's `secret`
    /// or of the approver token.
    pub fn review(
        &self,
        task_id: &str,
        credential: Credential<'_>,
    ) -> Result<Review, ApprovalError> {
        let secret = self.credential_secret(credential)?;
        self.approvals.review(task_id, secret)
    }

    /// A person's decision on task `task_id`'s waiting submit: approved, the submit runs (if
    /// the form is still as shown) and the task gets its outcome (streams and push see it);
    /// rejected, nothing is sent and the task waits for the caller with the reason. `by`
    /// says who decided, for the record (the task's `data` artifact, the status message's
    /// metadata, the log). The link is used up whatever happens.
    pub async fn decide(
        &self,
        task_id: &str,
        credential: Credential<'_>,
        decision: Decision,
        by: &str,
    ) -> Result<Outcome, ApprovalError> {
        let secret = self.credential_secret(credential)?;
        let nonce = match credential {
            Credential::Link { nonce, .. } => Some(nonce),
            Credential::Approver { .. } => None,
        };
        let waiting = self
            .approvals
            .take(task_id, secret, nonce, decision.word())?;
        let record = ApprovalRecord {
            decision: decision.word(),
            by: by.to_owned(),
            at: jiff::Timestamp::now().to_string(),
            reason: match &decision {
                Decision::Reject { reason } if !reason.trim().is_empty() => {
                    Some(reason.trim().to_owned())
                }
                _ => None,
            },
        };
        tracing::info!(
            task = task_id,
            decision = record.decision,
            by,
            "a person decided a submit"
        );
        let mut outcome = match decision {
            Decision::Approve => self.submit_approved(task_id, &waiting).await,
            Decision::Reject { .. } => self.rejected(&waiting, &record),
        };
        outcome.report.approval = Some(record);
        match &waiting.sink {
            Some(sink) => {
                // A rejection changes nothing on the page: the task keeps its report.
                let reported = match decision {
                    Decision::Approve => report_outcome(sink, &outcome, None).await,
                    Decision::Reject { .. } => {
                        let message = status_message(sink, &outcome.message, &outcome.report);
                        sink.input_required(message).await.map_err(Into::into)
                    }
                };
                if let Err(e) = reported {
                    tracing::warn!(task = task_id, error = %e, "the decision's outcome could not be reported to the task");
                }
            }
            None => {
                self.undelivered
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(waiting.key.clone(), outcome.clone());
            }
        }
        Ok(outcome)
    }

    /// The link's secret to check (`None` for the approver, whose token is checked here).
    fn credential_secret<'c>(
        &self,
        credential: Credential<'c>,
    ) -> Result<Option<&'c str>, ApprovalError> {
        let human = self.config.approval.human().ok_or(ApprovalError::Off)?;
        match credential {
            Credential::Link { secret, .. } => Ok(Some(secret)),
            Credential::Approver { token } => match &human.approver_token {
                Some(own)
                    if ferry_net::secret::constant_time_eq(token.as_bytes(), own.as_bytes()) =>
                {
                    Ok(None)
                }
                _ => Err(ApprovalError::NotAnApprover),
            },
        }
    }

    /// The approved submit: a confirmation turn that submits the showing the person saw, if
    /// the page still shows it (otherwise the form is shown again, with a new link).
    async fn submit_approved(&self, task_id: &str, waiting: &Waiting) -> Outcome {
        let request = FormRequest {
            confirm: true,
            ..FormRequest::default()
        };
        let progress = turn::Progress(waiting.sink.clone());
        let gate = Gate::Approved(waiting.ticket);
        match self
            .run(&waiting.key, task_id, &request, None, &progress, gate)
            .await
        {
            Ok(outcome) => outcome,
            Err(refused) => Outcome {
                state: TurnState::InputRequired,
                message: format!(
                    "The approved submit could not run now: {refused}. Nothing was submitted."
                ),
                report: FormReport::default(),
                broken: false,
            },
        }
    }

    /// A rejected submit: dropped (if it still waits as shown), the task back to its caller
    /// with the person's reason.
    fn rejected(&self, waiting: &Waiting, record: &ApprovalRecord) -> Outcome {
        let same_showing = self.pool.pending(&waiting.key).is_some_and(|p| {
            p.shown_ready
                .as_ref()
                .is_some_and(|s| s.ticket() == waiting.ticket)
        });
        if same_showing {
            self.pool.set_pending(&waiting.key, None);
        }
        let reason = record
            .reason
            .as_ref()
            .map(|r| format!(": {r}"))
            .unwrap_or_default();
        Outcome {
            state: TurnState::InputRequired,
            message: format!(
                "The submit was rejected by {}{reason}. Nothing was submitted; send changed values with \"submit\": true to have the form shown again.",
                record.by
            ),
            report: FormReport::default(),
            broken: false,
        }
    }

    /// The conversation's browser session, started (or started again) when it has none that
    /// is alive; `Err` says why it could not be.
    async fn open_session(
        &self,
        key: &ConversationKey,
        slot: &mut crate::pool::SlotGuard,
        endpoint: Option<&CdpEndpoint>,
        progress: &turn::Progress,
    ) -> Result<(), String> {
        if slot.session.as_ref().is_some_and(crate::Session::is_alive) {
            return Ok(());
        }
        progress.say("starting a browser session").await;
        self.pool
            .ensure_session(key, slot, endpoint)
            .await
            .map(|_| ())
            .map_err(|e| format!("could not start a browser session: {e}"))
    }

    /// After a turn the browser could not complete: a browser that is gone (crashed, killed,
    /// disconnected) is closed, so the next message gets a fresh session, and the pending
    /// submit is dropped. What the caller is told.
    async fn browser_failed(
        &self,
        key: &ConversationKey,
        slot: &mut crate::pool::SlotGuard,
        error: &ferry_browser::BrowserError,
    ) -> String {
        let crashed = slot.session.as_ref().is_none_or(|s| !s.is_alive());
        if let Some(session) = slot.session.take().filter(|_| crashed) {
            session.close().await;
        }
        self.pool.set_pending(key, None);
        if crashed {
            format!(
                "the browser session ended unexpectedly ({error}); send the request again to start a new session"
            )
        } else {
            format!("the browser could not complete this step: {error}")
        }
    }

    /// What `auto` fills from: the conversation's notes and the caller's profile (`name`,
    /// else `default`, else the only one). With several profiles and none named, the notes
    /// alone, and a warning that names them.
    async fn auto_sources(
        &self,
        key: &ConversationKey,
        name: Option<&str>,
    ) -> Result<(AutoSources, Option<String>), TurnRefused> {
        let context = self.notes.of(key);
        let owner = match self.profiles.owner(key) {
            Ok(owner) => owner,
            // No caller, no profile: the notes alone (a named profile is an error).
            Err(e) if name.is_some() => return Err(TurnRefused::Profile(e)),
            Err(e) => {
                let warning = format!("auto: {e}; only this conversation's values were used");
                let sources = AutoSources {
                    context,
                    profile: None,
                };
                return Ok((sources, Some(warning)));
            }
        };
        let profile = self
            .profiles
            .for_auto(&owner, name)
            .await
            .map_err(TurnRefused::Profile)?;
        let warning = match &profile {
            Some(_) => None,
            None => {
                let names = self.profiles.names(&owner).await;
                (!names.is_empty()).then(|| {
                    format!(
                        "auto: you have several profiles ({}) and none is named \"default\"; add \"profile\": NAME to use one (only this conversation's values were used)",
                        names.join(", ")
                    )
                })
            }
        };
        Ok((
            AutoSources {
                context,
                profile: profile.map(|p| (p.name, p.values, p.cards)),
            },
            warning,
        ))
    }

    async fn turn(&self, ctx: RequestContext, events: EventSink) -> Result<(), AgentError> {
        let incoming = request::parse(&ctx.message);
        let request = match incoming {
            Ok(Incoming::Request(r)) => r,
            Ok(Incoming::Profile(command)) => {
                return reply_profile(self, &ctx, &events, command).await;
            }
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
        let progress = turn::Progress(Some(events.clone()));
        let outcome = self
            .run(
                &key,
                &ctx.task_id,
                &request,
                endpoint.as_ref(),
                &progress,
                self.gate(),
            )
            .await;
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(TurnRefused::AtCapacity(full)) => {
                return Err(AgentError::Protocol(
                    A2aError::new(ErrorKind::Unavailable, full.to_string())
                        .with_meta("retryAfterSeconds", full.retry_after_secs.to_string()),
                ));
            }
            Err(TurnRefused::Profile(ProfileError::Store(e))) => {
                return Err(AgentError::Protocol(
                    A2aError::new(ErrorKind::Unavailable, format!("auto: {e}"))
                        .with_meta("retryAfterSeconds", "1"),
                ));
            }
            Err(TurnRefused::Profile(e)) => {
                let why = format!("auto: {e}");
                if ctx.is_new_task() {
                    return Err(AgentError::Protocol(A2aError::invalid_params(why)));
                }
                return events
                    .input_required(events.agent_message(vec![Part::text(why)]))
                    .await
                    .map_err(Into::into);
            }
        };
        report_outcome(&events, &outcome, ctx.data.get::<ConversationMoved>()).await
    }
}

/// Reports a turn's outcome to its task: the artifacts, then the status (a broken browser
/// fails the turn with its message). `moved`: the conversation moved here from a replica
/// that is gone, which the status says first.
async fn report_outcome(
    events: &EventSink,
    outcome: &Outcome,
    moved: Option<&ConversationMoved>,
) -> Result<(), AgentError> {
    emit_report(events, &outcome.report).await?;
    if outcome.broken {
        return Err(AgentError::Failed(outcome.message.clone()));
    }
    let text = match moved {
        Some(moved) => format!("{} {}", moved_notice(moved), outcome.message),
        None => outcome.message.clone(),
    };
    let message = status_message(events, &text, &outcome.report);
    match outcome.state {
        TurnState::Completed => events.complete(Some(message)).await?,
        TurnState::InputRequired => events.input_required(message).await?,
        TurnState::Failed => events.fail(message).await?,
    }
    Ok(())
}

/// What a turn says first when its conversation was held by a server process that is gone
/// (with several replicas): the browser session, its page and what was filled are lost.
fn moved_notice(moved: &ConversationMoved) -> String {
    format!(
        "This conversation was held by another server process (replica {}) that is gone, so it starts afresh here: the page it had open and the values filled there are lost.",
        moved.from_replica
    )
}

impl AgentExecutor for FormsAgent {
    fn describe(&self) -> AgentDescription {
        let skill = AgentSkill {
            id: "fill-web-form".into(),
            name: "Fill a web form".into(),
            description: format!(
                "Opens a web page in a headless browser, inspects its form, fills the values you give (keys are the labels a person sees), reports missing, unmatched, ambiguous and invalid fields, and submits only after {}. Multi-step forms are one task. Send a data part like {}. Add \"auto\": true to fill empty fields from your saved profile (managed with {{\"profile\": {{\"set\": {{\"name\": \"home\", \"values\": {{\"given-name\": \"Ada\"}}}}}}}}) and from what this conversation was told.",
                match self.config.approval.human() {
                    Some(_) =>
                        "a person approves it on a review page (its link comes as approvalUrl; your confirmation does not submit)",
                    None => "{\"confirm\": true}",
                },
                request::example()
            ),
            tags: vec!["forms".into(), "browser".into(), "web".into()],
            examples: vec![
                request::example().into(),
                "https://example.com/signup".into(),
                r#"{"url": "https://example.com/signup", "auto": true, "profile": "home"}"#.into(),
                r#"{"profile": {"list": true}}"#.into(),
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
        .keeping_conversations()
    }

    fn execute(&self, ctx: RequestContext, events: EventSink) -> AgentFuture<'_> {
        Box::pin(self.turn(ctx, events))
    }

    fn cancel(&self, ctx: RequestContext, _events: EventSink) -> AgentFuture<'_> {
        Box::pin(async move {
            self.approvals.withdraw_task(&ctx.task_id);
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
fn failure_report(request: &FormRequest, why: &str) -> FormReport {
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
    if let Some(shot) = &report.screenshot {
        let picture = Part::new(PartContent::Raw(shot.png.clone()))
            .with_media_type("image/png")
            .with_filename("form.png");
        let mut picture = Artifact::new("screenshot", "screenshot", vec![picture]);
        picture.metadata = Some(untrusted());
        events.artifact(picture, false, true).await?;
    }
    Ok(())
}

/// What the caller must still give, from a report.
fn needed(report: &FormReport) -> Value {
    let mut needed = json!({
        "missing": report.missing,
        "unmatched": report.unmatched,
        "ambiguous": report.ambiguous,
        "fieldErrors": report.field_errors,
        "pendingSubmit": report.pending_submit,
        "submitted": report.submitted,
    });
    if let Some(url) = &report.approval_url {
        needed["approvalUrl"] = json!(url);
    }
    if let Some(approval) = &report.approval {
        needed["approval"] = json!(approval);
    }
    needed
}

/// The status message: text for people, a data part with what is needed.
fn status_message(events: &EventSink, text: &str, report: &FormReport) -> Message {
    let mut message = events.agent_message(vec![
        Part::text(text),
        Part::data(needed(report)).with_media_type("application/json"),
    ]);
    let mut metadata = untrusted();
    if let Some(approval) = &report.approval {
        metadata.insert("approval".into(), json!(approval));
    }
    message.metadata = Some(metadata);
    message
}

/// The answer to a profile command: a direct reply (no task) on a new request, INPUT_REQUIRED
/// on a task that is already open (which keeps waiting for its own answer). A refused command
/// is an invalid-params error on a new request.
async fn reply_profile(
    agent: &FormsAgent,
    ctx: &RequestContext,
    events: &EventSink,
    command: ProfileCommand,
) -> Result<(), AgentError> {
    let key = ConversationKey::of(ctx);
    let (text, data) = match agent.profile_command(&key, command).await {
        Ok(answer) => (profile_answer_text(&answer), answer),
        Err(ProfileError::Store(e)) => {
            return Err(AgentError::Protocol(
                A2aError::new(ErrorKind::Unavailable, e.to_string())
                    .with_meta("retryAfterSeconds", "1"),
            ));
        }
        Err(ProfileError::NoCaller) if ctx.is_new_task() => {
            return Err(AgentError::Protocol(A2aError::new(
                ErrorKind::Unauthenticated,
                ProfileError::NoCaller.to_string(),
            )));
        }
        Err(e) if ctx.is_new_task() => {
            return Err(AgentError::Protocol(A2aError::invalid_params(
                e.to_string(),
            )));
        }
        Err(e) => (e.to_string(), json!({"error": e.to_string()})),
    };
    let parts = vec![
        Part::text(text),
        Part::data(data).with_media_type("application/json"),
    ];
    if ctx.is_new_task() {
        events.message(events.agent_message(parts)).await?;
    } else {
        events.input_required(events.agent_message(parts)).await?;
    }
    Ok(())
}

/// One line for people about a profile command's answer.
pub(crate) fn profile_answer_text(answer: &Value) -> String {
    if let Some(saved) = answer.get("saved") {
        return format!(
            "Saved profile {} (version {}, {} value(s)).",
            saved["name"].as_str().unwrap_or_default(),
            saved["version"],
            saved["values"].as_object().map_or(0, serde_json::Map::len)
        );
    }
    if let Some(profile) = answer.get("profile") {
        return format!(
            "Profile {}: {} value(s).",
            profile["name"].as_str().unwrap_or_default(),
            profile["values"]
                .as_object()
                .map_or(0, serde_json::Map::len)
        );
    }
    if let Some(list) = answer.get("profiles").and_then(Value::as_array) {
        let names: Vec<&str> = list.iter().filter_map(|p| p["name"].as_str()).collect();
        return if names.is_empty() {
            "You have no saved profiles.".to_owned()
        } else {
            format!("Your profiles: {}.", names.join(", "))
        };
    }
    if let Some(name) = answer.get("deleted").and_then(Value::as_str) {
        return format!("Deleted profile {name}.");
    }
    String::new()
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
