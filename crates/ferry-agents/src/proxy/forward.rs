//! One turn forwarded, and a cancel: what is sent to the remote agent and how its answers
//! are followed to the end of the turn.
//!
//! A turn ends when the remote task is terminal or interrupted (or the remote answered with
//! a direct message). A remote stream that breaks off before that is resumed by the client
//! (`SubscribeToTask` after the last event id); when even that gives up, the proxy asks
//! `GetTask` for the state and, while the task is still running, subscribes again (a new
//! stream starts with the task's snapshot, which the relay reconciles). An error event of the
//! remote, or its refusal to resume, is checked the same way: a task that ended anyway ends
//! the turn as it ended; one still running fails the turn with the remote's error,
//! unchanged. A remote that does
//! not stream gets a blocking send; when its answer is a task still running, the proxy polls
//! `GetTask` until the turn ends.

use super::ProxyAgent;
use super::ids::{LocalIds, RemoteIds, remote_message_id, strip};
use super::relay::Relay;
use ferry_agent::{AgentError, EventSink, RequestContext};
use ferry_client::ClientError;
use ferry_proto::{
    ErrorKind, Message, Role, SendMessageConfiguration, SendMessageRequest, SendMessageResponse,
    StreamResponse,
};
use std::sync::Arc;
use std::time::Duration;

/// Times a broken remote stream is taken up again with `GetTask` + `SubscribeToTask` after
/// the client's own resume gave up.
const MAX_STREAM_FALLBACKS: u32 = 3;
/// Failed polls in a row before a non-streaming turn gives up (the client retries each).
const MAX_POLL_FAILURES: u32 = 3;
/// The first and the longest wait between polls.
const POLL_FIRST: Duration = Duration::from_millis(250);
const POLL_MAX: Duration = Duration::from_secs(5);

impl ProxyAgent {
    /// Runs one turn: finds the remote ids, sends, relays until the turn ends.
    pub(super) async fn forward(
        &self,
        ctx: &RequestContext,
        events: &EventSink,
    ) -> Result<(), AgentError> {
        let local = local_ids(ctx);
        let known = match &ctx.task {
            None => None,
            Some(task) => Some(
                self.ids
                    .task(&ctx.tenant, &ctx.task_id)
                    .or_else(|| RemoteIds::recover(task))
                    .ok_or_else(|| AgentError::Infra {
                        code: "proxy.unknown_remote_task",
                        message: format!(
                            "the proxy does not know which task of the remote agent local task {} continues (its status and artifacts name none); start a new task",
                            ctx.task_id
                        ),
                    })?,
            ),
        };
        let request = SendMessageRequest {
            tenant: String::new(),
            message: self.outgoing(ctx, known.as_ref()),
            configuration: (!ctx.accepted_output_modes.is_empty()).then(|| {
                SendMessageConfiguration {
                    accepted_output_modes: ctx.accepted_output_modes.clone(),
                    ..SendMessageConfiguration::default()
                }
            }),
            metadata: strip(ctx.metadata.clone()),
        };
        let follow_up = known.is_some();
        let mut relay = Relay::new(events, &self.ids, local, known, ctx.task.as_ref());
        let outcome = if self.streaming {
            if follow_up {
                relay.skip_first_snapshot_status();
            }
            self.streamed(&mut relay, request).await
        } else {
            self.blocking(&mut relay, request).await
        };
        if let Err(AgentError::Emit(e)) = &outcome
            && let Some(remote) = relay.remote()
        {
            // The local task cannot take the remote's events (a limit, the store): stop the
            // remote's work instead of leaving it running for nobody.
            tracing::warn!(task = %ctx.task_id, remote = %remote.task_id, error = %e,
                "local task refused a relayed event; canceling the remote task");
            if let Err(e) = self.client.cancel_task(&remote.task_id).await {
                tracing::debug!(remote = %remote.task_id, error = %self.errors.scrub(e.to_string()),
                    "remote cancel after a local refusal failed");
            }
        }
        outcome
    }

    /// The message as the remote gets it: the caller's message with the remote ids instead
    /// of the local ones, role user, the proxy's metadata keys stripped, referenced tasks
    /// translated (those the proxy does not know are dropped: their ids mean nothing to the
    /// remote). The `messageId` is the caller's, tagged per local caller
    /// ([`remote_message_id`]).
    fn outgoing(&self, ctx: &RequestContext, known: Option<&RemoteIds>) -> Message {
        let mut message = ctx.message.clone();
        message.message_id =
            remote_message_id(&message.message_id, &ctx.tenant, ctx.caller.as_deref());
        message.role = Role::User;
        message.metadata = strip(message.metadata);
        match known {
            Some(remote) => {
                message.task_id.clone_from(&remote.task_id);
                message.context_id.clone_from(&remote.context_id);
            }
            None => {
                message.task_id.clear();
                message.context_id = self
                    .ids
                    .context(&ctx.tenant, ctx.caller.as_deref(), &ctx.context_id)
                    .unwrap_or_default();
            }
        }
        message.reference_task_ids = message
            .reference_task_ids
            .iter()
            .filter_map(|id| self.ids.task(&ctx.tenant, id).map(|r| r.task_id))
            .collect();
        message
    }

    /// A streamed turn.
    async fn streamed(
        &self,
        relay: &mut Relay<'_>,
        request: SendMessageRequest,
    ) -> Result<(), AgentError> {
        let mut stream = self
            .client
            .send_streaming(request)
            .await
            .map_err(|e| self.errors.agent_error(e))?;
        let mut fallbacks = 0;
        loop {
            let dropped = loop {
                match stream.next().await {
                    Some(Ok(event)) => {
                        relay.apply(event).await?;
                        if relay.ended() {
                            return Ok(());
                        }
                    }
                    Some(Err(e)) => break e,
                    None => {
                        break ClientError::Unreachable(
                            "the remote stream ended before the turn did".into(),
                        );
                    }
                }
            };
            // Before the remote named a task, its error (or the transport's) is the answer;
            // a remote refusal arrives unchanged.
            let Some(remote) = relay.remote().cloned() else {
                return Err(self.errors.agent_error(dropped));
            };
            fallbacks += 1;
            if fallbacks > MAX_STREAM_FALLBACKS {
                return Err(self.errors.agent_error(dropped));
            }
            tracing::debug!(remote = %remote.task_id, cause = %self.errors.scrub(dropped.to_string()),
                "remote stream lost; reading the task");
            let task = self
                .client
                .get_task(&remote.task_id, Some(0))
                .await
                .map_err(|e| self.errors.agent_error(e))?;
            relay.apply(StreamResponse::Task(Arc::new(task))).await?;
            if relay.ended() {
                // Also after an error event or a refused resume (a remote that will not
                // resubscribe to a task that just ended): the task's end is what counts.
                return Ok(());
            }
            if let ClientError::Protocol(e) = dropped {
                // The remote's own error while its task still runs: unchanged.
                return Err(AgentError::Protocol(e));
            }
            stream = self
                .client
                .subscribe(&remote.task_id)
                .await
                .map_err(|e| self.errors.agent_error(e))?;
        }
    }

    /// A blocking turn, polled when the remote answers before the turn ended.
    async fn blocking(
        &self,
        relay: &mut Relay<'_>,
        request: SendMessageRequest,
    ) -> Result<(), AgentError> {
        let answer = self
            .client
            .send_message(request)
            .await
            .map_err(|e| self.errors.agent_error(e))?;
        let event = match answer {
            SendMessageResponse::Task(task) => StreamResponse::Task(Arc::new(task)),
            SendMessageResponse::Message(message) => StreamResponse::Message(message),
        };
        relay.apply(event).await?;
        let mut wait = POLL_FIRST;
        let mut failures = 0;
        while !relay.ended() {
            let Some(remote) = relay.remote().cloned() else {
                return Err(AgentError::Infra {
                    code: "proxy.bad_answer",
                    message: format!(
                        "the remote agent at {} answered a send with neither a task nor a message",
                        self.errors.url
                    ),
                });
            };
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(POLL_MAX);
            match self.client.get_task(&remote.task_id, Some(0)).await {
                Ok(task) => {
                    failures = 0;
                    relay.apply(StreamResponse::Task(Arc::new(task))).await?;
                }
                Err(ClientError::Protocol(e)) => return Err(AgentError::Protocol(e)),
                Err(e) if e.is_transient() && failures + 1 < MAX_POLL_FAILURES => failures += 1,
                Err(e) => return Err(self.errors.agent_error(e)),
            }
        }
        Ok(())
    }

    /// Forwards a cancel and reflects the remote's answer locally.
    ///
    /// - the remote canceled: the local task becomes CANCELED with the remote's status
    ///   message (and the artifacts it has that the local task lacks);
    /// - the remote refused because its task already ended (`TaskNotCancelable`): the local
    ///   task takes the remote's terminal state instead (a task that completed remotely does
    ///   not become a false CANCELED locally), and the refusal is returned, which the server
    ///   logs: the agent API gives a cancel no way to refuse the caller;
    /// - any other failure (unreachable, …) is returned (logged by the server), and the
    ///   server cancels the local task as it does for every agent;
    /// - a task the proxy knows no remote task of (the turn never reached the remote) has
    ///   nothing to forward.
    pub(super) async fn cancel_remote(
        &self,
        ctx: &RequestContext,
        events: &EventSink,
    ) -> Result<(), AgentError> {
        let remote = self
            .ids
            .task(&ctx.tenant, &ctx.task_id)
            .or_else(|| ctx.task.as_ref().and_then(RemoteIds::recover));
        let Some(remote) = remote else {
            return Ok(());
        };
        let mut relay = Relay::new(
            events,
            &self.ids,
            local_ids(ctx),
            Some(remote.clone()),
            ctx.task.as_ref(),
        );
        match self.client.cancel_task(&remote.task_id).await {
            Ok(task) => {
                // A remote that cancels asynchronously answers with a task still running:
                // the server's own CANCELED then stands for it.
                if task.status.state.is_terminal() {
                    relay.apply(StreamResponse::Task(Arc::new(task))).await?;
                }
                Ok(())
            }
            Err(ClientError::Protocol(refusal)) => {
                if refusal.kind == ErrorKind::TaskNotCancelable
                    && let Ok(task) = self.client.get_task(&remote.task_id, Some(0)).await
                    && task.status.state.is_terminal()
                {
                    relay.apply(StreamResponse::Task(Arc::new(task))).await?;
                }
                Err(AgentError::Protocol(refusal))
            }
            Err(e) => Err(self.errors.agent_error(e)),
        }
    }
}

fn local_ids(ctx: &RequestContext) -> LocalIds<'_> {
    LocalIds {
        tenant: &ctx.tenant,
        caller: ctx.caller.as_deref(),
        task_id: &ctx.task_id,
        context_id: &ctx.context_id,
    }
}
