//! One agent of a server of several: its id (the path segment under `/agents/`), the
//! executor, its extensions and its own limits.

use crate::config::AgentLimits;
use crate::error::ServerError;
use crate::extension::ServerExtension;
use ferry_agent::AgentExecutor;
use std::sync::Arc;

/// The longest agent id: it is a path segment and a prefix of every task key of the agent.
pub const MAX_AGENT_ID_LEN: usize = 64;

/// An agent to host on a server of several agents ([`crate::A2aServer::hosting`]): served
/// under `/agents/{id}` with its own card, interfaces, task namespace and limits.
///
/// ```
/// use ferry_agents::EchoAgent;
/// use ferry_server::AgentMount;
/// use std::sync::Arc;
///
/// let echo = AgentMount::new("echo", Arc::new(EchoAgent)).max_in_flight(64);
/// assert_eq!(echo.id(), "echo");
/// ```
pub struct AgentMount {
    pub(crate) id: String,
    pub(crate) executor: Arc<dyn AgentExecutor>,
    pub(crate) extensions: Vec<Arc<dyn ServerExtension>>,
    pub(crate) limits: AgentLimits,
    /// Whether its callers see each other's tasks (`None`: the server's `shared_tasks`).
    pub(crate) shared_tasks: Option<bool>,
}

impl std::fmt::Debug for AgentMount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentMount")
            .field("id", &self.id)
            .field("agent", &self.executor.describe().name)
            .field("extensions", &self.extensions)
            .field("limits", &self.limits)
            .field("shared_tasks", &self.shared_tasks)
            .finish()
    }
}

impl AgentMount {
    /// The agent `executor` under the id `id` (checked when the server binds: see
    /// [`check_agent_id`]).
    pub fn new(id: impl Into<String>, executor: Arc<dyn AgentExecutor>) -> Self {
        Self {
            id: id.into(),
            executor,
            extensions: Vec::new(),
            limits: AgentLimits::default(),
            shared_tasks: None,
        }
    }

    /// The agent's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Adds an extension for this agent only: its card entry, its routes (under
    /// `/agents/{id}`), its per-turn data.
    pub fn extension(mut self, extension: Arc<dyn ServerExtension>) -> Self {
        self.extensions.push(extension);
        self
    }

    /// Whether this agent's callers see each other's tasks (the server's `shared_tasks`, for
    /// this agent only): true restores one task namespace per tenant; false keeps each
    /// caller's tasks its own even where the server shares them.
    pub fn shared_tasks(mut self, shared: bool) -> Self {
        self.shared_tasks = Some(shared);
        self
    }

    /// At most `n` requests to this agent in flight at once.
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.limits.max_in_flight = Some(n.max(1));
        self
    }

    /// At most `n` open streams of this agent.
    pub fn max_streams(mut self, n: usize) -> Self {
        self.limits.max_streams = Some(n.max(1));
        self
    }

    /// Both limits at once.
    pub fn limits(mut self, limits: AgentLimits) -> Self {
        self.limits = AgentLimits {
            max_in_flight: limits.max_in_flight.map(|n| n.max(1)),
            max_streams: limits.max_streams.map(|n| n.max(1)),
        };
        self
    }
}

/// Checks an agent id: 1 to [`MAX_AGENT_ID_LEN`] characters of `a-z`, `0-9`, `-` and `_`,
/// starting with a letter or digit. So it is one path segment that needs no escaping, and it
/// has no `:` (the separator of the task namespace: no tenant of one agent can name another's
/// tasks).
pub fn check_agent_id(id: &str) -> Result<(), ServerError> {
    let first_ok = id
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let rest_ok = id
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if first_ok && rest_ok && id.len() <= MAX_AGENT_ID_LEN {
        Ok(())
    } else {
        Err(ServerError::Agents(format!(
            "agent id {id:?} is not valid: use 1 to {MAX_AGENT_ID_LEN} of a-z, 0-9, '-' and '_', starting with a letter or digit"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_ids_are_one_plain_path_segment() {
        for good in ["echo", "forms-2", "a", "exec_1", "0day"] {
            assert!(check_agent_id(good).is_ok(), "{good}");
        }
        let long = "a".repeat(MAX_AGENT_ID_LEN + 1);
        for bad in ["", "Echo", "-x", "a:b", "a/b", "a b", "é", long.as_str()] {
            let e = check_agent_id(bad).expect_err(bad).to_string();
            assert!(e.contains("is not valid"), "{bad}: {e}");
        }
    }
}
