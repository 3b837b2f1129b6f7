//! `RequestHandler`: the A2A semantics, once. The JSON-RPC and REST bindings are thin
//! translators over it.

use crate::clock::Clock;
use crate::config::ServerConfig;
use crate::core::call::CallContext;
use crate::core::dedup::Dedup;
use crate::core::doc::JsonDoc;
use crate::core::record::TaskRecord;
use crate::core::store::TaskStore;
use crate::core::stream::{Opening, TaskStream};
use crate::core::turn::{TurnTarget, finish_turn, run_turn};
use crate::core::turn_data::TurnDataSource;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ferry_agent::{AgentDescription, AgentExecutor, RequestContext, TurnData};
use ferry_proto::{
    A2aError, A2aRequest, CancelTaskRequest, ErrorKind, GetTaskRequest, ListTasksRequest,
    ListTasksResponse, Message, Role, SendMessageRequest, SendMessageResponse, StreamResponse,
    SubscribeToTaskRequest, Task, TaskState,
};
use std::sync::Arc;
use std::time::Duration;

/// Default ListTasks page size (spec §4.11).
pub const DEFAULT_PAGE_SIZE: i32 = 50;
/// Largest ListTasks page size.
pub const MAX_PAGE_SIZE: i32 = 100;
/// How long an agent's `cancel` may take before the server cancels the task itself.
const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// What an operation answers with: one JSON document, or a stream of events.
#[derive(Debug)]
pub enum Outcome {
    /// The response message, serialized.
    Document(JsonDoc),
    /// The events of a task, for SSE.
    Stream(TaskStream),
}

/// The protocol semantics over a task store and an agent.
pub struct RequestHandler {
    shutting_down: std::sync::atomic::AtomicBool,
    turn_data: Vec<Arc<dyn TurnDataSource>>,
    extended_card: Option<ferry_proto::AgentCard>,
    dedup: Option<Dedup>,
    store: Arc<dyn TaskStore>,
    executor: Arc<dyn AgentExecutor>,
    description: AgentDescription,
    config: Arc<ServerConfig>,
}

impl std::fmt::Debug for RequestHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestHandler")
            .field("agent", &self.description.name)
            .finish_non_exhaustive()
    }
}

impl RequestHandler {
    /// A handler serving `executor` with tasks in `store`.
    pub fn new(
        executor: Arc<dyn AgentExecutor>,
        store: Arc<dyn TaskStore>,
        config: Arc<ServerConfig>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let description = executor.describe();
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
            store,
            executor,
            description,
            config,
        }
    }

    /// The agent's description (as read once at start).
    pub fn description(&self) -> &AgentDescription {
        &self.description
    }

    /// The task store.
    pub fn store(&self) -> &Arc<dyn TaskStore> {
        &self.store
    }

    /// The agent.
    pub fn executor(&self) -> &Arc<dyn AgentExecutor> {
        &self.executor
    }

    /// From now on, new tasks are refused with 503 `SHUTTING_DOWN`; continuing ones still run.
    pub fn begin_shutdown(&self) {
        self.shutting_down
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// Aborts every turn still running (after the drain timeout).
    pub fn abort_running(&self) {
        for record in self.store.all_tasks() {
            if let Some(running) = record.data.lock().running.take() {
                running.abort();
            }
        }
    }

    /// Adds a source of per-turn data (an extension's).
    pub fn with_turn_data(mut self, source: Arc<dyn TurnDataSource>) -> Self {
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

    /// Runs one operation: the bindings decode the request, this applies the semantics.
    /// Streaming operations answer with [`Outcome::Stream`]; the others with a document.
    pub async fn dispatch(
        &self,
        call: &CallContext,
        request: A2aRequest,
    ) -> Result<Outcome, A2aError> {
        use Outcome::{Document, Stream};
        Ok(match request {
            A2aRequest::SendMessage(r) => Document(self.send_message(call, r).await?),
            A2aRequest::SendStreamingMessage(r) => Stream(self.send_streaming(call, r).await?),
            A2aRequest::GetTask(r) => Document(self.get_task(call, &r)?),
            A2aRequest::ListTasks(r) => Document(JsonDoc::of(&self.list_tasks(call, &r)?)),
            A2aRequest::CancelTask(r) => Document(self.cancel_task(call, &r).await?),
            A2aRequest::SubscribeToTask(r) => {
                Stream(self.subscribe(call, &r, call.resume_after)?)
            }
            A2aRequest::CreateTaskPushNotificationConfig(_)
            | A2aRequest::GetTaskPushNotificationConfig(_)
            | A2aRequest::ListTaskPushNotificationConfigs(_)
            | A2aRequest::DeleteTaskPushNotificationConfig(_) => {
                return Err(self.push_config_unsupported());
            }
            A2aRequest::GetExtendedAgentCard(_) => Document(JsonDoc::of(&self.extended_card()?)),
        })
    }

    /// Whether streaming is declared.
    pub fn streaming(&self) -> bool {
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

    fn find(&self, call: &CallContext, id: &str) -> Result<Arc<TaskRecord>, A2aError> {
        self.check_tenant(call)?;
        self.store
            .get(&call.tenant, id)
            .ok_or_else(|| A2aError::task_not_found(id))
    }

    /// `SendMessage`: creates or continues a task and, unless `returnImmediately`, waits for a
    /// terminal or interrupted state (or the end of the agent's turn). With idempotent retries
    /// on, a repeat of a remembered request gets the first answer.
    pub async fn send_message(
        &self,
        call: &CallContext,
        req: SendMessageRequest,
    ) -> Result<JsonDoc, A2aError> {
        let Some(dedup) = &self.dedup else {
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
            Some(cell) => Dedup::answer(&cell, self.send_message_once(call, req)).await,
            None => self.send_message_once(call, req).await,
        }
    }

    /// One `SendMessage`, without idempotency.
    async fn send_message_once(
        &self,
        call: &CallContext,
        req: SendMessageRequest,
    ) -> Result<JsonDoc, A2aError> {
        let (history_length, return_immediately) = req
            .configuration
            .as_ref()
            .map_or((None, false), |c| (c.history_length, c.return_immediately));
        check_history_length(history_length)?;
        let started = self.start(call, req, false)?;
        let record = started.record;
        loop {
            let changed = record.changed.notified();
            {
                let data = record.data.lock();
                if let Some(reply) = &data.reply {
                    return Ok(JsonDoc::of(&SendMessageResponse::Message(reply.clone())));
                }
                if let Some(e) = &data.early_error {
                    return Err(e.clone());
                }
                if data.published {
                    let state = data.task.status.state;
                    let settled = data.status_seq >= started.start_seq
                        && (state.is_terminal() || state.is_interrupted());
                    let turn_over = data.turns_finished >= started.turn;
                    // A continued task answers once the new turn reported something, so that
                    // the caller does not see the previous turn's INPUT_REQUIRED.
                    let turn_reported = data.next_seq > started.start_seq || turn_over;
                    if return_immediately && (started.is_new || turn_reported) {
                        // A new task as it was created, not whatever the agent did since.
                        let created = match data.log.front().map(|e| &e.event) {
                            Some(StreamResponse::Task(t)) if started.is_new => t,
                            _ => &data.task,
                        };
                        return Ok(JsonDoc::send_task(created.view(history_length, true)));
                    }
                    if settled || turn_over {
                        return Ok(JsonDoc::send_task(data.task.view(history_length, true)));
                    }
                }
            }
            changed.await;
        }
    }

    /// `SendStreamingMessage`: like `send_message`, but answers with the task's event stream.
    /// Errors before the first event come back as `Err` (an ordinary error response).
    pub async fn send_streaming(
        &self,
        call: &CallContext,
        req: SendMessageRequest,
    ) -> Result<TaskStream, A2aError> {
        if !self.streaming() {
            return Err(A2aError::unsupported(
                "this agent does not stream (capabilities.streaming is false)",
            ));
        }
        let history_length = req.configuration.as_ref().and_then(|c| c.history_length);
        check_history_length(history_length)?;
        let started = self.start(call, req, true)?;
        match started.stream {
            Some(StartStream::New(rx)) => {
                match TaskStream::open_new(started.record, rx, started.turn).await {
                    Opening::Stream(s) => Ok(s),
                    Opening::Error(e) => Err(e),
                }
            }
            Some(StartStream::Existing(s)) => Ok(*s),
            None => Err(A2aError::internal("stream was not prepared")),
        }
    }

    /// Validates a send, then creates the task record or continues the existing task, and starts
    /// the agent's turn. With `want_stream`, the record is subscribed before the turn starts, so
    /// the stream misses nothing.
    fn start(
        &self,
        call: &CallContext,
        req: SendMessageRequest,
        want_stream: bool,
    ) -> Result<Started, A2aError> {
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
        let mut message = req.message;
        validate_message(&message)?;
        let config = req.configuration.unwrap_or_default();
        if config.task_push_notification_config.is_some() {
            return Err(A2aError::new(
                ErrorKind::PushNotificationNotSupported,
                "push notifications are not supported by this server",
            ));
        }
        let (record, is_new) = if message.task_id.is_empty() {
            let context_id = if message.context_id.is_empty() {
                uuid::Uuid::new_v4().to_string()
            } else {
                message.context_id.clone()
            };
            let task_id = uuid::Uuid::new_v4().to_string();
            message.task_id.clone_from(&task_id);
            message.context_id.clone_from(&context_id);
            let record = Arc::new(TaskRecord::new(
                task_id,
                context_id,
                call.tenant.clone(),
                message.clone(),
                self.config.max_events_per_task,
            ));
            (record, true)
        } else {
            let record = self.find(call, &message.task_id)?;
            if !message.context_id.is_empty() && message.context_id != record.context_id {
                return Err(A2aError::invalid_params(format!(
                    "contextId {:?} does not match the context of task {:?}",
                    message.context_id, record.id
                ))
                .with_violation("message.contextId", "must match the task's contextId"));
            }
            message.context_id.clone_from(&record.context_id);
            (record, false)
        };

        let (turn, start_seq, task_before, stream) = {
            let mut data = record.data.lock();
            let state = data.task.status.state;
            if !is_new {
                if state.is_terminal() {
                    return Err(A2aError::unsupported(format!(
                        "task {} is {} and accepts no more messages; start a new task in the same context",
                        record.id, state
                    ))
                    .with_meta("taskId", record.id.as_str()));
                }
                if data.turns_started > data.turns_finished {
                    return Err(A2aError::unsupported(format!(
                        "task {} is still working on the previous message; wait for it or cancel it",
                        record.id
                    ))
                    .with_meta("taskId", record.id.as_str()));
                }
            }
            let task_before = (!is_new).then(|| data.task.clone());
            if !is_new {
                data.task.history.push(message.clone());
            }
            data.turns_started += 1;
            let turn = data.turns_started;
            let start_seq = data.next_seq;
            let stream = match (want_stream, is_new) {
                (false, _) => None,
                (true, true) => Some(StartStream::New(TaskRecord::subscribe_locked(&mut data))),
                (true, false) => {
                    let rx = TaskRecord::subscribe_locked(&mut data);
                    let snapshot_seq = data.next_seq.checked_sub(1);
                    let snapshot = StreamResponse::Task(data.task.shaped(None, true));
                    Some(StartStream::Existing(Box::new(TaskStream::with_snapshot(
                        record.clone(),
                        rx,
                        &snapshot,
                        snapshot_seq,
                        Some(turn),
                    ))))
                }
            };
            (turn, start_seq, task_before, stream)
        };

        let ctx = RequestContext {
            message,
            task_id: record.id.clone(),
            context_id: record.context_id.clone(),
            task: task_before,
            metadata: req.metadata,
            accepted_output_modes: config.accepted_output_modes,
            extensions: call.extensions.clone(),
            tenant: call.tenant.clone(),
            caller: call.caller.clone(),
            data: self.turn_data(),
        };
        let handle = tokio::spawn(run_turn(
            self.executor.clone(),
            ctx,
            record.clone(),
            self.store.clone(),
            turn,
        ));
        record.data.lock().running = Some(handle.abort_handle());
        Ok(Started {
            record,
            turn,
            start_seq,
            is_new,
            stream,
        })
    }

    /// `GetTask`.
    pub fn get_task(&self, call: &CallContext, req: &GetTaskRequest) -> Result<JsonDoc, A2aError> {
        check_history_length(req.history_length)?;
        let record = self.find(call, &req.id)?;
        let data = record.data.lock();
        Ok(JsonDoc::of(&data.task.view(req.history_length, true)))
    }

    /// `ListTasks` (spec §4.11): newest status first, opaque cursor, filters.
    pub fn list_tasks(
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
        let cursor = if req.page_token.is_empty() {
            None
        } else {
            Some(Cursor::decode(&req.page_token)?)
        };
        let after = req.status_timestamp_after.map(|t| t.as_nanos());
        let mut keys: Vec<(i128, Arc<TaskRecord>)> = self
            .store
            .tasks_of(&call.tenant)
            .into_iter()
            .filter(|r| req.context_id.is_empty() || r.context_id == req.context_id)
            .filter_map(|r| {
                let data = r.data.lock();
                let status = &data.task.status;
                let ts = status.timestamp.map_or(0, |t| t.as_nanos());
                let keep = (req.status == TaskState::Unspecified || status.state == req.status)
                    && after.is_none_or(|a| ts >= a);
                drop(data);
                keep.then_some((ts, r))
            })
            .collect();
        keys.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.id.cmp(&a.1.id)));
        let total_size = i32::try_from(keys.len()).unwrap_or(i32::MAX);
        let start = match &cursor {
            None => 0,
            Some(c) => {
                keys.partition_point(|(ts, r)| (*ts, r.id.as_str()) >= (c.ts, c.id.as_str()))
            }
        };
        let page_len = usize::try_from(page_size).unwrap_or(1);
        let end = (start + page_len).min(keys.len());
        let with_artifacts = req.include_artifacts.unwrap_or(false);
        let tasks: Vec<Task> = keys[start..end]
            .iter()
            .map(|(_, r)| {
                r.data
                    .lock()
                    .task
                    .shaped(req.history_length, with_artifacts)
            })
            .collect();
        let next_page_token = if end < keys.len() {
            let (ts, r) = &keys[end - 1];
            Cursor {
                ts: *ts,
                id: r.id.clone(),
            }
            .encode()
        } else {
            String::new()
        };
        Ok(ListTasksResponse {
            tasks,
            next_page_token,
            page_size,
            total_size,
        })
    }

    /// `CancelTask`: asks the agent, then makes sure the task ends CANCELED.
    pub async fn cancel_task(
        &self,
        call: &CallContext,
        req: &CancelTaskRequest,
    ) -> Result<JsonDoc, A2aError> {
        let record = self.find(call, &req.id)?;
        let task_before = {
            let data = record.data.lock();
            let state = data.task.status.state;
            if state.is_terminal() {
                return Err(A2aError::new(
                    ErrorKind::TaskNotCancelable,
                    format!("task {} is {} and cannot be canceled", record.id, state),
                )
                .with_meta("taskId", record.id.as_str()));
            }
            data.task.clone()
        };
        let sink = TurnTarget::sink(&record, &self.store);
        let ctx = RequestContext {
            message: task_before
                .history
                .last()
                .cloned()
                .unwrap_or_else(|| Message::user("", Vec::new())),
            task_id: record.id.clone(),
            context_id: record.context_id.clone(),
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
            Ok(Err(e)) => tracing::warn!(task = %record.id, error = %e, "agent cancel failed"),
            Err(_) => tracing::warn!(task = %record.id, "agent cancel timed out"),
        }
        if !record.state().is_terminal() {
            let _ = sink.status(TaskState::Canceled, None);
        }
        let (running, turn) = {
            let mut data = record.data.lock();
            (data.running.take(), data.turns_started)
        };
        if let Some(running) = running {
            running.abort();
        }
        finish_turn(&record, turn);
        let data = record.data.lock();
        Ok(JsonDoc::of(&data.task.view(None, true)))
    }

    /// `SubscribeToTask`: the current task first, then live events until terminal.
    ///
    /// With `resume_after` (the SSE `Last-Event-ID` a client saw last), the stream replays the
    /// events after that sequence number from the task's log instead of starting with a snapshot,
    /// so a dropped stream resumes without loss or duplicates. When the log no longer holds
    /// them, the stream starts with the snapshot as usual.
    pub fn subscribe(
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
        let record = self.find(call, &req.id)?;
        let mut data = record.data.lock();
        let state = data.task.status.state;
        if state.is_terminal() {
            return Err(A2aError::unsupported(format!(
                "task {} is {}; subscribe works only on tasks that are not finished (use GetTask)",
                record.id, state
            ))
            .with_meta("taskId", record.id.as_str()));
        }
        let rx = TaskRecord::subscribe_locked(&mut data);
        if let Some(after) = resume_after {
            let replay_complete =
                data.log.front().is_some_and(|e| e.seq <= after + 1) && after < data.next_seq;
            if replay_complete {
                let missed = data.log.iter().filter(|e| e.seq > after).cloned().collect();
                drop(data);
                return Ok(TaskStream::resumed(record.clone(), rx, after, missed));
            }
        }
        let snapshot = StreamResponse::Task(data.task.shaped(None, true));
        let seq = data.next_seq.checked_sub(1);
        drop(data);
        Ok(TaskStream::with_snapshot(
            record.clone(),
            rx,
            &snapshot,
            seq,
            None,
        ))
    }

    /// The answer to the four push-config operations until push delivery exists
    /// (`capabilities.pushNotifications` is not declared, spec §8.7).
    pub fn push_config_unsupported(&self) -> A2aError {
        A2aError::new(
            ErrorKind::PushNotificationNotSupported,
            "push notifications are not supported by this server",
        )
    }

    /// `GetExtendedAgentCard`: not declared, so UnsupportedOperation (spec §8.7).
    pub fn extended_card(&self) -> Result<ferry_proto::AgentCard, A2aError> {
        self.extended_card.clone().ok_or_else(|| {
            A2aError::unsupported(
                "this agent has no extended agent card (capabilities.extendedAgentCard is not set)",
            )
        })
    }

    /// Serves `card` to authenticated `GetExtendedAgentCard` callers.
    pub fn with_extended_card(mut self, card: Option<ferry_proto::AgentCard>) -> Self {
        self.extended_card = card;
        self
    }
}

/// What `start` set in motion.
struct Started {
    record: Arc<TaskRecord>,
    turn: u64,
    start_seq: u64,
    is_new: bool,
    stream: Option<StartStream>,
}

/// The subscription taken before the turn started.
enum StartStream {
    /// A new task: the first live item decides between task and direct reply.
    New(tokio::sync::broadcast::Receiver<crate::core::record::LiveItem>),
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

/// The ListTasks cursor: the sort key of the last task of the previous page.
struct Cursor {
    ts: i128,
    id: String,
}

impl Cursor {
    fn encode(&self) -> String {
        URL_SAFE_NO_PAD.encode(format!("v1:{}:{}", self.ts, self.id))
    }

    fn decode(token: &str) -> Result<Self, A2aError> {
        let bad = || {
            A2aError::invalid_params("pageToken is not a token this server issued")
                .with_violation("pageToken", "invalid")
        };
        let raw = URL_SAFE_NO_PAD.decode(token).map_err(|_| bad())?;
        let text = String::from_utf8(raw).map_err(|_| bad())?;
        let rest = text.strip_prefix("v1:").ok_or_else(bad)?;
        let (ts, id) = rest.split_once(':').ok_or_else(bad)?;
        Ok(Self {
            ts: ts.parse().map_err(|_| bad())?,
            id: id.to_owned(),
        })
    }
}
