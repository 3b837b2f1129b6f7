//! `RequestHandler`: the A2A semantics, once. The JSON-RPC and REST bindings are thin
//! translators over it.

use crate::clock::Clock;
use crate::config::ServerConfig;
use crate::core::SPAN_TARGET;
use crate::core::answer::{Answer, Sent, Shaped};
use crate::core::call::CallContext;
use crate::core::dedup::Dedup;
use crate::core::forward::{Forwarder, Route};
use crate::core::live::{LiveItem, LiveTask, View};
use crate::core::manager::{TaskManager, store_error};
use crate::core::owner;
use crate::core::stream::{LocalStream, Opening, TaskStream};
use crate::core::turn::{TurnTarget, cancel_turn, run_turn};
use crate::core::turn_data::TurnDataSource;
use crate::push::PushService;
use ferry_agent::{AgentDescription, AgentExecutor, ConversationMoved, RequestContext, TurnData};
use ferry_proto::{
    A2aError, A2aRequest, CancelTaskRequest, ErrorKind, GetTaskRequest, ListTasksRequest,
    ListTasksResponse, Message, Role, SendMessageRequest, StreamResponse, SubscribeToTaskRequest,
    Task, TaskState, TaskStatus,
};
use ferry_store::replicas::Remembered;
use ferry_store::{ListQuery, StoreError, TaskKey};
use std::sync::Arc;
use std::time::Duration;

mod push;

/// Default ListTasks page size (spec §4.11).
pub(crate) const DEFAULT_PAGE_SIZE: i32 = 50;
/// Largest ListTasks page size.
pub(crate) const MAX_PAGE_SIZE: i32 = 100;
/// How long an agent's `cancel` may take before the server cancels the task itself.
const CANCEL_GRACE: Duration = Duration::from_secs(5);
/// How long a cancel asked on one replica waits for the replica running the turn to end it.
const CANCEL_ELSEWHERE_WAIT: Duration = Duration::from_secs(15);
/// How long a reply waits for the end of the turn that asked for it.
const TURN_END_GRACE: Duration = Duration::from_secs(5);

/// The protocol semantics over a task store and an agent.
pub(crate) struct RequestHandler {
    shutting_down: std::sync::atomic::AtomicBool,
    turn_data: Vec<Arc<dyn TurnDataSource>>,
    extended_card: Option<Arc<ferry_proto::AgentCard>>,
    dedup: Option<Dedup>,
    manager: Arc<TaskManager>,
    executor: Arc<dyn AgentExecutor>,
    description: AgentDescription,
    config: Arc<ServerConfig>,
    /// Prefixed to the tenant of every task key, so that agents sharing one store never see
    /// each other's tasks (empty on a server of one agent).
    namespace: String,
    /// Push notifications, when offered: the server's push service and this agent's card URL
    /// (the issuer of its deliveries' signatures).
    push: Option<(Arc<PushService>, String)>,
    /// For an agent that keeps its conversations in its process, on a store replicas share:
    /// how a message reaches the replica holding its conversation.
    forwarder: Option<Forwarder>,
}

impl std::fmt::Debug for RequestHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestHandler")
            .field("agent", &self.description.name)
            .finish_non_exhaustive()
    }
}

impl RequestHandler {
    /// A handler serving `executor` with tasks kept by `manager`.
    pub(crate) fn new(
        executor: Arc<dyn AgentExecutor>,
        manager: Arc<TaskManager>,
        config: Arc<ServerConfig>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let description = executor.describe();
        let forwarder = description.keeps_conversations.then(|| {
            Forwarder::new(
                config.token.clone(),
                config.jsonrpc_path.clone(),
                Duration::from_secs(config.request_timeout_secs.max(1)),
            )
        });
        let dedup = (config.dedup_ttl_secs > 0).then(|| {
            Dedup::new(
                Duration::from_secs(config.dedup_ttl_secs),
                config.dedup_capacity,
                clock,
            )
        });
        Self {
            shutting_down: std::sync::atomic::AtomicBool::new(false),
            turn_data: Vec::new(),
            extended_card: None,
            dedup,
            manager,
            executor,
            description,
            config,
            namespace: String::new(),
            push: None,
            forwarder,
        }
    }

    /// Offers push notifications through `service`, signing as the agent whose card is at
    /// `card_url`.
    pub(crate) fn with_push(mut self, service: Arc<PushService>, card_url: String) -> Self {
        self.push = Some((service, card_url));
        self
    }

    /// Whether push notifications are offered (`capabilities.pushNotifications`).
    pub(crate) fn pushes(&self) -> bool {
        self.push.is_some()
    }

    /// Keeps this agent's tasks apart from other agents' in a shared store: every task key's
    /// tenant becomes `{namespace}:{tenant}`. The namespace is an agent id, which has no `:`,
    /// so no tenant of one agent can name another agent's tasks.
    pub(crate) fn with_namespace(mut self, namespace: &str) -> Self {
        self.namespace = if namespace.is_empty() {
            String::new()
        } else {
            format!("{namespace}:")
        };
        if let Some(forwarder) = &mut self.forwarder {
            forwarder.under(&format!("/agents/{namespace}"));
        }
        self
    }

    /// The tenant under which the store keeps the caller's tasks.
    fn store_tenant<'a>(&self, call: &'a CallContext) -> std::borrow::Cow<'a, str> {
        if self.namespace.is_empty() {
            std::borrow::Cow::Borrowed(call.tenant.as_str())
        } else {
            std::borrow::Cow::Owned(format!("{}{}", self.namespace, call.tenant))
        }
    }

    /// The agent's description (as read once at start).
    pub(crate) fn description(&self) -> &AgentDescription {
        &self.description
    }

    /// The agent.
    pub(crate) fn executor(&self) -> &Arc<dyn AgentExecutor> {
        &self.executor
    }

    /// From now on, new tasks are refused with 503 `SHUTTING_DOWN`; continuing ones still run.
    pub(crate) fn begin_shutdown(&self) {
        self.shutting_down
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// Adds a source of per-turn data (an extension's).
    pub(crate) fn with_turn_data(mut self, source: Arc<dyn TurnDataSource>) -> Self {
        self.turn_data.push(source);
        self
    }

    /// What the extensions hand a turn that starts now.
    fn turn_data(&self) -> TurnData {
        let mut data = TurnData::default();
        for source in &self.turn_data {
            source.fill(&mut data);
        }
        data
    }

    /// Runs one operation: the bindings decode the request, this applies the semantics and
    /// answers with typed values (a stream for the streaming operations), which the binding
    /// encodes.
    ///
    /// It runs in an `a2a.operation` span (the operation's name, and the task's id when the
    /// request names one): the parent of the agent's turn, so a trace shows which request
    /// started which turn. The span is at DEBUG under the target `a2a` ([`SPAN_TARGET`]): a
    /// subscriber that exports spans enables it, a log at INFO does not pay for it (a log line
    /// of a request already carries the front door's `request` span).
    pub(crate) async fn dispatch(
        &self,
        call: &CallContext,
        request: A2aRequest,
    ) -> Result<Answer, A2aError> {
        use tracing::Instrument;
        let span = tracing::debug_span!(
            target: SPAN_TARGET,
            "a2a.operation",
            operation = request.operation().name(),
            task = tracing::field::Empty,
        );
        if let Some(task) = task_named(&request) {
            span.record("task", task);
        }
        self.operation(call, request).instrument(span).await
    }

    /// [`RequestHandler::dispatch`] inside its span.
    async fn operation(&self, call: &CallContext, request: A2aRequest) -> Result<Answer, A2aError> {
        // Before anything about the request is looked at: a refused caller learns nothing.
        call.access.authorize(request.operation())?;
        Ok(match request {
            A2aRequest::SendMessage(r) => Answer::Sent(self.send_message(call, r).await?),
            A2aRequest::SendStreamingMessage(r) => {
                Answer::Stream(self.send_streaming(call, r).await?)
            }
            A2aRequest::GetTask(r) => Answer::Task(self.get_task(call, &r).await?),
            A2aRequest::ListTasks(r) => Answer::Tasks(self.list_tasks(call, &r).await?),
            A2aRequest::CancelTask(r) => Answer::Task(self.cancel_task(call, &r).await?),
            A2aRequest::SubscribeToTask(r) => {
                Answer::Stream(self.subscribe(call, &r, call.resume_after).await?)
            }
            A2aRequest::CreateTaskPushNotificationConfig(r) => {
                Answer::PushConfig(self.create_push_config(call, r).await?)
            }
            A2aRequest::GetTaskPushNotificationConfig(r) => {
                Answer::PushConfig(self.get_push_config(call, &r).await?)
            }
            A2aRequest::ListTaskPushNotificationConfigs(r) => {
                Answer::PushConfigs(self.list_push_configs(call, &r).await?)
            }
            A2aRequest::DeleteTaskPushNotificationConfig(r) => {
                self.delete_push_config(call, &r).await?;
                Answer::Deleted
            }
            A2aRequest::GetExtendedAgentCard(_) => Answer::Card(self.extended_card()?),
        })
    }

    /// Whether streaming is declared.
    pub(crate) fn streaming(&self) -> bool {
        self.description.streaming
    }

    fn check_tenant(&self, call: &CallContext) -> Result<(), A2aError> {
        if self.config.tenants.is_empty() || self.config.tenants.contains(&call.tenant) {
            Ok(())
        } else {
            Err(
                A2aError::invalid_params(format!("unknown tenant {:?}", call.tenant))
                    .with_violation("tenant", "not served here"),
            )
        }
    }

    /// The task `id` of the caller's tenant, followed from now on; not found when it is
    /// another caller's (see [`owner`]).
    async fn find(&self, call: &CallContext, id: &str) -> Result<Arc<LiveTask>, A2aError> {
        self.check_tenant(call)?;
        self.manager
            .open(
                &TaskKey::new(self.store_tenant(call), id),
                self.viewer(call),
            )
            .await?
            .ok_or_else(|| A2aError::task_not_found(id))
    }

    /// Whose tasks `call` sees ([`owner::viewer`]).
    fn viewer<'a>(&self, call: &'a CallContext) -> Option<&'a str> {
        owner::viewer(call, self.config.shared_tasks)
    }

    /// `SendMessage`: creates or continues a task and, unless `returnImmediately`, waits for a
    /// terminal or interrupted state (or the end of the agent's turn). With idempotent retries
    /// on, a repeat of a remembered request gets the first answer.
    pub(crate) async fn send_message(
        &self,
        call: &CallContext,
        req: SendMessageRequest,
    ) -> Result<Sent, A2aError> {
        // A forwarded request was remembered by the replica it reached first.
        let Some(dedup) = self.dedup.as_ref().filter(|_| !call.forwarded) else {
            return self.send_message_once(call, req).await;
        };
        let caller = format!(
            "{}|{}|{}",
            call.caller.as_deref().unwrap_or_default(),
            call.client.map(|c| c.to_string()).unwrap_or_default(),
            call.tenant
        );
        let content = dedup.content_hash(&serde_json::to_vec(&req).unwrap_or_default());
        match dedup.slot(&caller, &req.message.message_id, content) {
            Some(cell) => {
                let first = self.send_message_remembered(call, req, &caller, dedup.ttl());
                Dedup::answer(&cell, first).await
            }
            None => self.send_message_once(call, req).await,
        }
    }

    /// One `SendMessage` that this replica remembers as the first under its `messageId`:
    /// with replicas, the store remembers it too, so that a retry reaching another replica
    /// gets this answer (or, while this one is still being answered, a 503 to retry).
    async fn send_message_remembered(
        &self,
        call: &CallContext,
        req: SendMessageRequest,
        caller: &str,
        ttl: Duration,
    ) -> Result<Sent, A2aError> {
        let Some(replicas) = self.manager.store().replicas() else {
            return self.send_message_once(call, req).await;
        };
        let content = serde_json::to_vec(&req).unwrap_or_default();
        let digest = ferry_trust::push_signature::body_sha256(&content);
        let message_id = req.message.message_id.clone();
        let now = self.manager.now_ms();
        let until = now.saturating_add(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
        let remembered = replicas
            .remember_request(caller, &message_id, &digest, now, until)
            .await
            .map_err(store_error)?;
        let history_length = req.configuration.as_ref().and_then(|c| c.history_length);
        match remembered {
            Remembered::First => {
                let sent = self.send_message_once(call, req).await;
                let kept = match &sent {
                    Ok(answer) => match serde_json::to_string(answer) {
                        Ok(json) => replicas.answer_request(caller, &message_id, &json).await,
                        Err(_) => replicas.forget_request(caller, &message_id).await,
                    },
                    Err(_) => replicas.forget_request(caller, &message_id).await,
                };
                if let Err(e) = kept {
                    tracing::warn!(error = %e, "could not remember an answer for retries on other replicas");
                }
                sent
            }
            Remembered::Answered(json) => remembered_answer(&json, history_length),
            Remembered::Pending => Err(A2aError::new(
                ErrorKind::Unavailable,
                format!(
                    "a request with messageId {message_id:?} is still being answered (perhaps by another replica); send it again for its answer"
                ),
            )
            .with_meta("retryAfterSeconds", "1")),
            Remembered::Different => self.send_message_once(call, req).await,
        }
    }

    /// One `SendMessage`, without idempotency.
    async fn send_message_once(
        &self,
        call: &CallContext,
        mut req: SendMessageRequest,
    ) -> Result<Sent, A2aError> {
        let (history_length, return_immediately) = req
            .configuration
            .as_ref()
            .map_or((None, false), |c| (c.history_length, c.return_immediately));
        check_history_length(history_length)?;
        let moved = match self.route(call, &mut req.message).await? {
            Route::Here(moved) => moved,
            // Boxed, as is the stream's below: a call forwarded to another replica holds a
            // client call's state (some 10 KB), and unboxed that would be the size of every
            // local call's future too, which is copied whenever it is moved.
            Route::There(holder) => {
                return Box::pin(self.forward(|f| f.send(&self.manager, call, &holder, req))).await;
            }
        };
        let started = self.start(call, req, false, moved).await?;
        let live = started.live;
        loop {
            let changed = live.changed.notified();
            {
                let view = live.view.lock();
                if let Some(reply) = &view.reply {
                    return Ok(Sent::Message(Arc::new(reply.clone())));
                }
                if let Some(e) = view.early_error.as_ref().or(view.store_error.as_ref()) {
                    return Err(e.clone());
                }
                if view.gone {
                    return Err(A2aError::task_not_found(&live.key.id).with_meta("expired", "true"));
                }
                if view.published {
                    let state = view.task.status.state;
                    let settled = view.status_seq >= started.start_seq
                        && (state.is_terminal() || state.is_interrupted());
                    let turn_over = view.turns_finished >= started.turn;
                    // A continued task answers once the new turn reported something, so that
                    // the caller does not see the previous turn's INPUT_REQUIRED.
                    let turn_reported = view.seq >= started.start_seq || turn_over;
                    if return_immediately && (started.is_new || turn_reported) {
                        // A new task as it was created, not whatever the agent did since.
                        let created = match view.created.as_deref() {
                            Some(StreamResponse::Task(t)) if started.is_new => t,
                            _ => &view.task,
                        };
                        return Ok(Sent::Task(Shaped::new(
                            created.clone(),
                            history_length,
                            true,
                        )));
                    }
                    if settled || turn_over {
                        let task = view.task.clone();
                        return Ok(Sent::Task(Shaped::new(task, history_length, true)));
                    }
                }
            }
            changed.await;
        }
    }

    /// `SendStreamingMessage`: like `send_message`, but answers with the task's event stream.
    /// Errors before the first event come back as `Err` (an ordinary error response).
    pub(crate) async fn send_streaming(
        &self,
        call: &CallContext,
        mut req: SendMessageRequest,
    ) -> Result<TaskStream, A2aError> {
        if !self.streaming() {
            return Err(A2aError::unsupported(
                "this agent does not stream (capabilities.streaming is false)",
            ));
        }
        let history_length = req.configuration.as_ref().and_then(|c| c.history_length);
        check_history_length(history_length)?;
        let moved = match self.route(call, &mut req.message).await? {
            Route::Here(moved) => moved,
            Route::There(holder) => {
                return Box::pin(self.forward(|f| f.stream(&self.manager, call, &holder, req)))
                    .await;
            }
        };
        let started = self.start(call, req, true, moved).await?;
        match started.stream {
            Some(StartStream::New(rx)) => {
                match LocalStream::open_new(started.live, self.manager.clone(), rx, started.turn)
                    .await
                {
                    Opening::Stream(s) => Ok(s.into()),
                    Opening::Error(e) => Err(e),
                }
            }
            Some(StartStream::Existing(s)) => Ok(*s),
            None => Err(A2aError::internal("stream was not prepared")),
        }
    }

    /// Validates a send, then begins a new task or continues the existing one, and starts
    /// the agent's turn. With `want_stream`, the task is subscribed before the turn starts, so
    /// the stream misses nothing.
    async fn start(
        &self,
        call: &CallContext,
        req: SendMessageRequest,
        want_stream: bool,
        moved: Option<ConversationMoved>,
    ) -> Result<Started, A2aError> {
        self.check_accepting(call)?;
        let mut message = req.message;
        validate_message(&message)?;
        let mut config = req.configuration.unwrap_or_default();
        let inline = config.task_push_notification_config.take();
        if let Some(inline) = &inline {
            self.check_push_config(inline)?;
        }
        let (live, is_new) = if message.task_id.is_empty() {
            (self.new_task(call, &mut message), true)
        } else {
            (self.existing_task(call, &mut message).await?, false)
        };
        if let Some(inline) = inline {
            self.register_inline(call, &live, is_new, inline).await?;
        }
        if !is_new {
            wait_for_turn_end(&live).await;
            self.manager.lease(&live).await?;
        }
        let begun = match self.begin_turn(&live, is_new, &message, want_stream) {
            Ok(begun) => begun,
            Err(e) => {
                self.manager.release(&live).await;
                return Err(e);
            }
        };
        let mut data = self.turn_data();
        if let Some(moved) = moved {
            data.insert(moved);
        }
        let ctx = RequestContext {
            message,
            task_id: live.key.id.to_string(),
            context_id: live.context_id.to_string(),
            task: begun.task_before,
            metadata: req.metadata,
            accepted_output_modes: config.accepted_output_modes,
            extensions: call.extensions.clone(),
            tenant: call.tenant.clone(),
            caller: call.caller.clone(),
            data,
        };
        self.run(ctx, &live, begun.turn);
        Ok(Started {
            live,
            turn: begun.turn,
            start_seq: begun.start_seq,
            is_new,
            stream: begun.stream,
        })
    }

    /// Where the turn of `message` runs: here, unless the agent keeps its conversations in
    /// its process and another live replica holds the message's conversation (see
    /// `core::forward`). A message that starts a conversation gets its contextId here, so
    /// that the conversation is claimed before its first turn.
    async fn route(&self, call: &CallContext, message: &mut Message) -> Result<Route, A2aError> {
        if self.forwarder.is_none() || call.forwarded || !self.manager.shared() {
            return Ok(Route::Here(None));
        }
        self.check_tenant(call)?;
        if message.context_id.is_empty() {
            if message.task_id.is_empty() {
                message.context_id = crate::ids::time_ordered().to_string();
            } else {
                let live = self.find(call, &message.task_id).await?;
                message.context_id = live.context_id.to_string();
            }
        }
        Forwarder::route(
            &self.manager,
            &self.store_tenant(call),
            call,
            &message.context_id,
        )
        .await
    }

    /// Runs `call` with the forwarder (there is one whenever a route leads elsewhere).
    async fn forward<'a, T, F>(
        &'a self,
        call: impl FnOnce(&'a Forwarder) -> F,
    ) -> Result<T, A2aError>
    where
        F: std::future::Future<Output = Result<T, A2aError>>,
    {
        match &self.forwarder {
            Some(forwarder) => call(forwarder).await,
            None => Err(A2aError::internal(
                "no forwarder for a conversation held elsewhere",
            )),
        }
    }

    /// Refuses a send to a tenant this server does not serve, or while it shuts down.
    fn check_accepting(&self, call: &CallContext) -> Result<(), A2aError> {
        self.check_tenant(call)?;
        if self
            .shutting_down
            .load(std::sync::atomic::Ordering::Acquire)
        {
            return Err(A2aError::new(
                ErrorKind::Unavailable,
                "the server is shutting down and takes no new tasks",
            )
            .with_reason("SHUTTING_DOWN")
            .with_meta("retryAfterSeconds", "5"));
        }
        Ok(())
    }

    /// A new task for `message` (SUBMITTED, the message its first history entry), with new
    /// ids written into the message.
    fn new_task(&self, call: &CallContext, message: &mut Message) -> Arc<LiveTask> {
        let context_id = if message.context_id.is_empty() {
            crate::ids::time_ordered()
        } else {
            message.context_id.as_str().into()
        };
        let task_id = crate::ids::time_ordered();
        message.task_id = task_id.to_string();
        message.context_id = context_id.to_string();
        let mut task = Task::new(
            task_id,
            context_id,
            TaskStatus::now(TaskState::Submitted, None),
        );
        task.history.push(Arc::new(message.clone()));
        self.manager
            .begin(&self.store_tenant(call), task, owner::owner_of(call))
    }

    /// The task `message` continues, which must be of the context the message names.
    async fn existing_task(
        &self,
        call: &CallContext,
        message: &mut Message,
    ) -> Result<Arc<LiveTask>, A2aError> {
        let live = self.find(call, &message.task_id).await?;
        if !message.context_id.is_empty() && *message.context_id != *live.context_id {
            return Err(A2aError::invalid_params(format!(
                "contextId {:?} does not match the context of task {:?}",
                message.context_id, live.key.id
            ))
            .with_violation("message.contextId", "must match the task's contextId"));
        }
        message.context_id = live.context_id.to_string();
        Ok(live)
    }

    /// Opens the turn of `message` on `live`: a continued task must take it (not ended, no
    /// turn running, history below its limit) and records it; the subscription of a stream
    /// is taken here, under the task's lock, so it misses nothing.
    fn begin_turn(
        &self,
        live: &Arc<LiveTask>,
        is_new: bool,
        message: &Message,
        want_stream: bool,
    ) -> Result<Begun, A2aError> {
        let mut view = live.view.lock();
        let task_before = if is_new {
            None
        } else {
            self.check_continuable(live, &view)?;
            let before = Task::clone(&view.task);
            // Stored with the turn's first event (a follow-up is answered only after it).
            // The task works on the reply now: its status no longer carries the previous
            // turn's question (that is in the history), so a stream of this turn does not
            // start by asking it again (Google ADK would hand the question back to its
            // caller).
            let task = Arc::make_mut(&mut view.task);
            task.history.push(Arc::new(message.clone()));
            task.status = TaskStatus::now(TaskState::Working, None);
            Some(before)
        };
        view.turns_started += 1;
        view.store_error = None;
        let turn = view.turns_started;
        let stream = match (want_stream, is_new) {
            (false, _) => None,
            (true, true) => Some(StartStream::New(view.subscribe())),
            (true, false) => {
                let rx = view.subscribe();
                let snapshot = StreamResponse::Task(Arc::new(view.task.shaped(None, true)));
                Some(StartStream::Existing(Box::new(TaskStream::from(
                    LocalStream::with_snapshot(
                        live.clone(),
                        self.manager.clone(),
                        rx,
                        snapshot,
                        view.seq,
                        Some(turn),
                    ),
                ))))
            }
        };
        Ok(Begun {
            turn,
            start_seq: view.seq + 1,
            task_before,
            stream,
        })
    }

    /// Refuses a message to a task that ended, that is still working on the previous one, or
    /// whose history is full.
    fn check_continuable(&self, live: &LiveTask, view: &View) -> Result<(), A2aError> {
        let id = &*live.key.id;
        let state = view.task.status.state;
        if state.is_terminal() {
            return Err(A2aError::unsupported(format!(
                "task {id} is {state} and accepts no more messages; start a new task in the same context"
            ))
            .with_meta("taskId", id));
        }
        if view.turns_started > view.turns_finished {
            return Err(A2aError::unsupported(format!(
                "task {id} is still working on the previous message; wait for it or cancel it"
            ))
            .with_meta("taskId", id));
        }
        self.manager
            .check_history(live, view.task.history.len() + 1)
            .map_err(|e| {
                A2aError::unsupported(format!("{e}; start a new task in the same context"))
                    .with_meta("limit", "max_history_messages")
                    .with_meta("taskId", id)
            })
    }

    /// Runs turn `turn` of the agent. The common case, an agent that finishes without
    /// waiting for anything, ends here and costs no task of its own; a turn that waits goes
    /// on in one, from where it stopped.
    fn run(&self, ctx: RequestContext, live: &Arc<LiveTask>, turn: u64) {
        let mut running = Box::pin(run_turn(
            self.executor.clone(),
            ctx,
            live.clone(),
            self.manager.clone(),
            turn,
            &self.description.name,
        ));
        if futures_util::FutureExt::now_or_never(running.as_mut()).is_none() {
            let handle = tokio::spawn(running);
            let mut view = live.view.lock();
            if view.turns_finished < turn {
                view.running = Some(handle.abort_handle());
            }
        }
    }

    /// `GetTask`.
    pub(crate) async fn get_task(
        &self,
        call: &CallContext,
        req: &GetTaskRequest,
    ) -> Result<Shaped, A2aError> {
        check_history_length(req.history_length)?;
        self.check_tenant(call)?;
        let task = self
            .manager
            .snapshot(
                &TaskKey::new(self.store_tenant(call), req.id.as_str()),
                self.viewer(call),
            )
            .await?
            .ok_or_else(|| A2aError::task_not_found(&req.id))?;
        Ok(Shaped::new(task, req.history_length, true))
    }

    /// `ListTasks` (spec §4.11): newest status first, opaque cursor, filters, all done by
    /// the store.
    pub(crate) async fn list_tasks(
        &self,
        call: &CallContext,
        req: &ListTasksRequest,
    ) -> Result<ListTasksResponse, A2aError> {
        self.check_tenant(call)?;
        let page_size = req.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
        if !(1..=MAX_PAGE_SIZE).contains(&page_size) {
            return Err(A2aError::invalid_params(format!(
                "pageSize must be between 1 and {MAX_PAGE_SIZE}, got {page_size}"
            ))
            .with_violation("pageSize", "out of range"));
        }
        check_history_length(req.history_length)?;
        let bad_token = || {
            A2aError::invalid_params("pageToken is not a token this server issued")
                .with_violation("pageToken", "invalid")
        };
        let page_token = if req.page_token.is_empty() {
            None
        } else {
            Some(page_token::decode(&req.page_token).ok_or_else(bad_token)?)
        };
        let query = ListQuery {
            tenant: self.store_tenant(call).into_owned(),
            context_id: (!req.context_id.is_empty()).then(|| req.context_id.clone()),
            state: (req.status != TaskState::Unspecified).then_some(req.status),
            // Status times are whole milliseconds: "at or after" a time within a millisecond
            // starts at the next whole one.
            status_since_ms: req
                .status_timestamp_after
                .map(|t| u64::try_from((t.as_nanos() + 999_999) / 1_000_000).unwrap_or(0)),
            owner: self.viewer(call).map(str::to_owned),
            page_size: usize::try_from(page_size).unwrap_or(1),
            page_token,
        };
        if !owner::may_list(call, self.config.shared_tasks) {
            return Ok(ListTasksResponse {
                tasks: Vec::new(),
                next_page_token: String::new(),
                page_size,
                total_size: 0,
            });
        }
        let page = self.manager.list(&query).await.map_err(|e| match e {
            StoreError::BadPageToken => bad_token(),
            other => store_error(other),
        })?;
        let with_artifacts = req.include_artifacts.unwrap_or(false);
        Ok(ListTasksResponse {
            tasks: page
                .tasks
                .iter()
                .map(|t| t.task.shaped(req.history_length, with_artifacts))
                .collect(),
            next_page_token: page
                .next_page_token
                .as_deref()
                .map(page_token::encode)
                .unwrap_or_default(),
            page_size,
            total_size: i32::try_from(page.total).unwrap_or(i32::MAX),
        })
    }

    /// `CancelTask`: asks the agent, then makes sure the task ends CANCELED.
    pub(crate) async fn cancel_task(
        &self,
        call: &CallContext,
        req: &CancelTaskRequest,
    ) -> Result<Shaped, A2aError> {
        let live = self.find(call, &req.id).await?;
        // A turn running here may have given the lease back already (its last status was
        // INPUT_REQUIRED or terminal), so the cancel takes one unless this replica holds it.
        // The hold makes that turn, as it ends, leave the lease to the cancel, which gives it
        // back below.
        let hold = TaskManager::hold_lease(&live);
        if !self.manager.try_lease(&live).await? {
            drop(hold);
            // The turn runs on another replica: it cancels it there.
            return self.cancel_elsewhere(&live).await;
        }
        let canceled = self.cancel_leased(call, req, &live).await;
        drop(hold);
        self.manager.release(&live).await;
        canceled
    }

    /// Asks the replica running `live`'s turn to cancel it, and answers with the task once it
    /// ended (CANCELED, or whatever it ended in meanwhile).
    async fn cancel_elsewhere(&self, live: &Arc<LiveTask>) -> Result<Shaped, A2aError> {
        let replicas = self
            .manager
            .store()
            .replicas()
            .ok_or_else(|| A2aError::internal("a cancel elsewhere without replicas"))?;
        let holder = replicas
            .request_cancel(&live.key)
            .await
            .map_err(store_error)?;
        if holder.is_none() {
            // Its turn ended meanwhile: cancel it here.
            self.manager.lease(live).await?;
            let canceled = cancel_turn(&self.manager, live).await;
            self.manager.release(live).await;
            canceled.map_err(|e| {
                A2aError::new(ErrorKind::Unavailable, e.to_string())
                    .with_meta("retryAfterSeconds", "1")
            })?;
            let task = live.view.lock().task.clone();
            return Ok(Shaped::new(task, None, true));
        }
        let ended = async {
            loop {
                let changed = live.changed.notified();
                {
                    let view = live.view.lock();
                    if view.task.status.state.is_terminal() || view.gone {
                        return view.task.clone();
                    }
                }
                changed.await;
            }
        };
        match tokio::time::timeout(CANCEL_ELSEWHERE_WAIT, ended).await {
            Ok(task) => Ok(Shaped::new(task, None, true)),
            Err(_) => Err(A2aError::new(
                ErrorKind::Unavailable,
                format!(
                    "the replica running task {} did not end it within {} s; ask again",
                    live.key.id,
                    CANCEL_ELSEWHERE_WAIT.as_secs()
                ),
            )
            .with_meta("retryAfterSeconds", "1")),
        }
    }

    /// [`RequestHandler::cancel_task`] once this replica may write the task.
    async fn cancel_leased(
        &self,
        call: &CallContext,
        req: &CancelTaskRequest,
        live: &Arc<LiveTask>,
    ) -> Result<Shaped, A2aError> {
        let task_before = {
            let view = live.view.lock();
            let state = view.task.status.state;
            if state.is_terminal() {
                return Err(A2aError::new(
                    ErrorKind::TaskNotCancelable,
                    format!("task {} is {} and cannot be canceled", live.key.id, state),
                )
                .with_meta("taskId", &*live.key.id));
            }
            Task::clone(&view.task)
        };
        let sink = TurnTarget::sink(live, &self.manager);
        let ctx = RequestContext {
            message: task_before
                .history
                .last()
                .map_or_else(|| Message::user("", Vec::new()), |m| Message::clone(m)),
            task_id: live.key.id.to_string(),
            context_id: live.context_id.to_string(),
            task: Some(task_before),
            metadata: req.metadata.clone(),
            accepted_output_modes: Vec::new(),
            extensions: call.extensions.clone(),
            tenant: call.tenant.clone(),
            caller: call.caller.clone(),
            data: self.turn_data(),
        };
        match tokio::time::timeout(CANCEL_GRACE, self.executor.cancel(ctx, sink.clone())).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(task = %live.key.id, error = %e, "agent cancel failed"),
            Err(_) => tracing::warn!(task = %live.key.id, "agent cancel timed out"),
        }
        if let Err(e) = cancel_turn(&self.manager, live).await {
            // Not canceled: say why, rather than answer with a task that is still running.
            return Err(A2aError::new(ErrorKind::Unavailable, e.to_string())
                .with_meta("retryAfterSeconds", "1"));
        }
        let task = live.view.lock().task.clone();
        Ok(Shaped::new(task, None, true))
    }

    /// `SubscribeToTask`: the current task first, then live events until terminal.
    ///
    /// With `resume_after` (the SSE `Last-Event-ID` a client saw last), the stream replays
    /// every stored event after that sequence number instead of starting with a snapshot, then
    /// goes live, so a dropped stream resumes without a gap or a duplicate — also on a task
    /// that ended meanwhile (its stream then ends with the terminal event). When the store no
    /// longer holds the events after it (or the number is not one this task reached), the
    /// stream starts with the current snapshot, as without `resume_after`.
    pub(crate) async fn subscribe(
        &self,
        call: &CallContext,
        req: &SubscribeToTaskRequest,
        resume_after: Option<u64>,
    ) -> Result<TaskStream, A2aError> {
        if !self.streaming() {
            return Err(A2aError::unsupported(
                "this agent does not stream (capabilities.streaming is false)",
            ));
        }
        let live = self.find(call, &req.id).await?;
        let (rx, snapshot, seq, terminal) = {
            let mut view = live.view.lock();
            let state = view.task.status.state;
            if state.is_terminal() && resume_after.is_none_or(|after| after > view.seq) {
                return Err(A2aError::unsupported(format!(
                    "task {} is {}; subscribe works only on tasks that are not finished (use GetTask)",
                    live.key.id, state
                ))
                .with_meta("taskId", &*live.key.id));
            }
            (
                view.subscribe(),
                view.task.clone(),
                view.seq,
                state.is_terminal(),
            )
        };
        if let Some(after) = resume_after
            && after <= seq
        {
            let next = self
                .manager
                .events_after(&live.key, after, 1)
                .await
                .map_err(store_error)?;
            let replayable = after == seq || next.first().is_some_and(|e| e.seq == after + 1);
            if replayable {
                // A finished task whose every event the client saw: nothing more will come.
                let over = terminal && after == seq;
                return Ok(LocalStream::resumed(
                    live,
                    self.manager.clone(),
                    rx,
                    (after, seq),
                    over,
                )
                .into());
            }
        }
        let snapshot = StreamResponse::Task(Arc::new(snapshot.shaped(None, true)));
        Ok(LocalStream::with_snapshot(live, self.manager.clone(), rx, snapshot, seq, None).into())
    }

    /// The answer to the four push-config operations until push delivery exists
    /// (`capabilities.pushNotifications` is not declared, spec §8.7).
    pub(crate) fn push_config_unsupported(&self) -> A2aError {
        A2aError::new(
            ErrorKind::PushNotificationNotSupported,
            "push notifications are not supported by this server",
        )
    }

    /// `GetExtendedAgentCard`: not declared, so UnsupportedOperation (spec §8.7).
    pub(crate) fn extended_card(&self) -> Result<Arc<ferry_proto::AgentCard>, A2aError> {
        self.extended_card.clone().ok_or_else(|| {
            A2aError::unsupported(
                "this agent has no extended agent card (capabilities.extendedAgentCard is not set)",
            )
        })
    }

    /// Serves `card` to authenticated `GetExtendedAgentCard` callers.
    pub(crate) fn with_extended_card(mut self, card: Option<ferry_proto::AgentCard>) -> Self {
        self.extended_card = card.map(Arc::new);
        self
    }
}

/// The task a request names, if any (a new task's id is not known before it is created).
fn task_named(request: &A2aRequest) -> Option<&str> {
    let id = match request {
        A2aRequest::SendMessage(r) | A2aRequest::SendStreamingMessage(r) => &r.message.task_id,
        A2aRequest::GetTask(r) => &r.id,
        A2aRequest::CancelTask(r) => &r.id,
        A2aRequest::SubscribeToTask(r) => &r.id,
        A2aRequest::CreateTaskPushNotificationConfig(r) => &r.task_id,
        A2aRequest::GetTaskPushNotificationConfig(r)
        | A2aRequest::DeleteTaskPushNotificationConfig(r) => &r.task_id,
        A2aRequest::ListTaskPushNotificationConfigs(r) => &r.task_id,
        A2aRequest::ListTasks(_) | A2aRequest::GetExtendedAgentCard(_) => return None,
    };
    (!id.is_empty()).then_some(id.as_str())
}

/// A turn that asked for input (INPUT_REQUIRED, AUTH_REQUIRED) may not have ended yet when its
/// answer reached the client: its last events are still being stored, or its task not yet
/// scheduled. A reply that arrives in that moment waits for the end (at most
/// [`TURN_END_GRACE`]) instead of being refused as "still working".
async fn wait_for_turn_end(live: &LiveTask) {
    let ended = async {
        loop {
            let changed = live.changed.notified();
            {
                let view = live.view.lock();
                let asking = view.turns_started > view.turns_finished
                    && view.task.status.state.is_interrupted();
                if !asking {
                    return;
                }
            }
            changed.await;
        }
    };
    let _ = tokio::time::timeout(TURN_END_GRACE, ended).await;
}

/// The answer a store remembered for a request (`SendMessageResponse` JSON), shaped as the
/// retry asks (the same request: the same shape).
fn remembered_answer(json: &str, history_length: Option<i32>) -> Result<Sent, A2aError> {
    match serde_json::from_str::<ferry_proto::SendMessageResponse>(json) {
        Ok(ferry_proto::SendMessageResponse::Task(task)) => Ok(Sent::Task(Shaped::new(
            Arc::new(task),
            history_length,
            true,
        ))),
        Ok(ferry_proto::SendMessageResponse::Message(message)) => {
            Ok(Sent::Message(Arc::new(message)))
        }
        Err(e) => Err(A2aError::internal(format!(
            "a remembered answer does not parse: {e}"
        ))),
    }
}

/// A turn opened on its task: its number, where its events begin, the task as it was
/// before (for a continued task), the stream's subscription.
struct Begun {
    turn: u64,
    start_seq: u64,
    task_before: Option<Task>,
    stream: Option<StartStream>,
}

/// What `start` set in motion.
struct Started {
    live: Arc<LiveTask>,
    turn: u64,
    start_seq: u64,
    is_new: bool,
    stream: Option<StartStream>,
}

/// The subscription taken before the turn started.
enum StartStream {
    /// A new task: the first live item decides between task and direct reply.
    New(tokio::sync::broadcast::Receiver<LiveItem>),
    /// A continued task: its snapshot comes first.
    Existing(Box<TaskStream>),
}

/// Checks a message from a client: an id, a role, at least one part.
fn validate_message(message: &Message) -> Result<(), A2aError> {
    if message.message_id.is_empty() {
        return Err(A2aError::invalid_params("message.messageId is required")
            .with_violation("message.messageId", "required"));
    }
    if message.role == Role::Unspecified {
        return Err(
            A2aError::invalid_params("message.role is required (ROLE_USER)")
                .with_violation("message.role", "required"),
        );
    }
    if message.parts.is_empty() {
        return Err(
            A2aError::invalid_params("message.parts needs at least one part")
                .with_violation("message.parts", "must not be empty"),
        );
    }
    Ok(())
}

fn check_history_length(h: Option<i32>) -> Result<(), A2aError> {
    match h {
        Some(n) if n < 0 => Err(A2aError::invalid_params(format!(
            "historyLength must not be negative, got {n}"
        ))
        .with_violation("historyLength", "negative")),
        _ => Ok(()),
    }
}

/// ListTasks page tokens: the store's own token, wrapped so that clients see one opaque
/// string whatever the store.
mod page_token {
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    const PREFIX: &str = "v2:";

    pub(super) fn encode(store_token: &str) -> String {
        URL_SAFE_NO_PAD.encode(format!("{PREFIX}{store_token}"))
    }

    pub(super) fn decode(token: &str) -> Option<String> {
        let raw = URL_SAFE_NO_PAD.decode(token).ok()?;
        let text = String::from_utf8(raw).ok()?;
        text.strip_prefix(PREFIX).map(str::to_owned)
    }
}
