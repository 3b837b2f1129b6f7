//! Running one turn of an agent and settling its task when the turn returns.
//!
//! [`TurnTarget`] is the server side of an `EventSink`: every emit goes to the
//! [`TaskManager`], which stores it before the emit returns.
//!
//! A turn is polled first where it was started (an agent that finishes without waiting ends
//! there), and otherwise goes on in a tokio task of its own; either way in an `a2a.turn`
//! span whose parent is the span that was current when the turn was started (the request's
//! `a2a.operation` span): what the agent does, and the calls it makes to other agents, stay
//! in the request's trace.

use crate::core::live::{LiveItem, LiveTask};
use crate::core::manager::TaskManager;
use ferry_agent::{
    AgentError, AgentEvent, AgentExecutor, EmitError, EmitFuture, EventSink, EventTarget,
    RequestContext,
};
use ferry_proto::{A2aError, ErrorKind, Part};
use futures_util::FutureExt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use tracing::Instrument;

/// Applies one task's events; one per turn (and one per cancel request).
pub(crate) struct TurnTarget {
    live: Arc<LiveTask>,
    manager: Arc<TaskManager>,
}

impl TurnTarget {
    /// A sink for the task that reports through a new target.
    pub(crate) fn sink(live: &Arc<LiveTask>, manager: &Arc<TaskManager>) -> EventSink {
        let target = Arc::new(TurnTarget {
            live: live.clone(),
            manager: manager.clone(),
        });
        EventSink::new(&live.key.id, &live.context_id, target)
    }
}

impl EventTarget for TurnTarget {
    fn emit(&self, event: AgentEvent) -> EmitFuture<'_> {
        Box::pin(self.manager.apply(&self.live, event))
    }
}

/// One turn of `agent` (the agent's name), to be polled or spawned: runs `execute` and
/// settles the task when it returns, errs or panics. The turn's span is made here, when the turn is started,
/// so that its parent is the span current now and not whatever the spawned task runs in.
pub(crate) fn run_turn(
    executor: Arc<dyn AgentExecutor>,
    ctx: RequestContext,
    live: Arc<LiveTask>,
    manager: Arc<TaskManager>,
    turn: u64,
    agent: &str,
) -> impl Future<Output = ()> + Send + 'static {
    let span = tracing::debug_span!(
        target: crate::core::SPAN_TARGET,
        "a2a.turn",
        task = ctx.task_id.as_str(),
        context = ctx.context_id.as_str(),
        agent,
        turn,
    );
    settle_turn(executor, ctx, live, manager, turn).instrument(span)
}

/// [`run_turn`] inside its span.
async fn settle_turn(
    executor: Arc<dyn AgentExecutor>,
    ctx: RequestContext,
    live: Arc<LiveTask>,
    manager: Arc<TaskManager>,
    turn: u64,
) {
    let sink = TurnTarget::sink(&live, &manager);
    let outcome = AssertUnwindSafe(executor.execute(ctx, sink.clone()))
        .catch_unwind()
        .await;
    let failure = match outcome {
        Ok(Ok(())) => None,
        Ok(Err(AgentError::Protocol(e))) => {
            let mut view = live.view.lock();
            if view.published || view.publish_queued {
                Some(vec![Part::text(e.message)])
            } else {
                view.early_error = Some(e);
                None
            }
        }
        Ok(Err(AgentError::Failed(text))) => Some(vec![Part::text(text)]),
        Ok(Err(AgentError::Infra { code, message })) => {
            tracing::warn!(task = %live.key.id, code, "turn failed by its environment");
            Some(error_parts("infra_error", code, &message))
        }
        Ok(Err(AgentError::Emit(EmitError::Limit(why)))) => Some(vec![Part::text(why)]),
        Ok(Err(AgentError::Emit(e))) => {
            tracing::warn!(task = %live.key.id, error = %e, "agent event refused");
            Some(unhandled())
        }
        Err(_panic) => {
            tracing::error!(task = %live.key.id, "agent panicked");
            Some(unhandled())
        }
    };
    if let Some(parts) = failure {
        let message = sink.agent_message(parts);
        // A terminal task simply keeps its state.
        let _ = sink.fail(message).await;
    }
    // The turn is over once all of its events are stored (queued ones included), and (with
    // replicas) its lease is given back: whoever hears that it ended may continue the task on
    // any replica.
    live.flushed().await;
    manager.release_after(&live, turn).await;
    finish_turn(&live, turn);
}

/// The parts of a failure that is not the agent's own answer: a line for people and a data
/// part `{"error":{"kind","code","message"}}` for programs (benchmarks tell an environment's
/// failure from an agent's by `kind`).
fn error_parts(kind: &str, code: &str, message: &str) -> Vec<Part> {
    vec![
        Part::text(format!("{kind} {code}: {message}")),
        Part::data(serde_json::json!({"error": {"kind": kind, "code": code, "message": message}}))
            .with_media_type("application/json"),
    ]
}

/// An executor's panic or misbehaviour, reported without its internals.
fn unhandled() -> Vec<Part> {
    error_parts(
        "framework_error",
        "framework.unhandled_exception",
        "the agent failed unexpectedly; the server log has details",
    )
}

/// Ends `live` CANCELED (unless it ended already), aborts its turn if one still runs, and
/// marks the turn finished: what a cancel does once the agent had its say. A failure to
/// store the state is the answer (the task is then not canceled).
pub(crate) async fn cancel_turn(
    manager: &TaskManager,
    live: &Arc<LiveTask>,
) -> Result<(), EmitError> {
    let terminal = live.view.lock().task.status.state.is_terminal();
    if !terminal {
        let canceled = AgentEvent::Status {
            state: ferry_proto::TaskState::Canceled,
            message: None,
        };
        manager.apply(live, canceled).await?;
    }
    let (running, turn) = {
        let mut view = live.view.lock();
        (view.running.take(), view.turns_started)
    };
    if let Some(running) = running {
        running.abort();
    }
    finish_turn(live, turn);
    Ok(())
}

/// Marks `turn` finished, explains a turn that produced nothing, and wakes everyone.
pub(crate) fn finish_turn(live: &LiveTask, turn: u64) {
    let mut view = live.view.lock();
    if !view.published && view.reply.is_none() && view.early_error.is_none() {
        view.early_error = Some(A2aError::new(
            ErrorKind::InvalidAgentResponse,
            "the agent ended its turn without a reply or a task",
        ));
    }
    if view.turns_finished < turn {
        view.turns_finished = turn;
        let seq = view.seq;
        view.broadcast(LiveItem::TurnEnded { turn, seq });
    }
    if view.turns_finished >= view.turns_started {
        view.running = None;
    }
    drop(view);
    live.changed.notify_waiters();
}
