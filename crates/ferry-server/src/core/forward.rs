//! Conversations that live in one replica: routing their messages to it.
//!
//! An agent that keeps a conversation's state in its process between turns (the forms
//! agent's browser: [`ferry_agent::AgentDescription::keeps_conversations`]) must see every
//! turn of that conversation, and a load balancer cannot route by a `contextId` inside a JSON
//! body. So, with replicas, each such conversation is held by one replica, recorded in the
//! store ([`ferry_store::replicas::ReplicaStore::claim`]):
//!
//! - a message of a conversation nobody holds (a new one) is claimed and runs here;
//! - one held by another live replica is **forwarded** there, as an A2A JSON-RPC call to its
//!   internal URL through its front door (the server's token, the caller named in headers:
//!   `edge::front_door::forwarded`), and its answer relayed, streams included;
//! - one held by a replica that stopped announcing itself is taken over and runs here,
//!   starting afresh: its turn carries [`ConversationMoved`], which the agent tells its
//!   caller about.
//!
//! A forwarded request runs where it arrives, whoever the store says holds it, so nothing is
//! forwarded twice.

use crate::core::answer::{Sent, Shaped};
use crate::core::call::{Access, CallContext, TaskReach};
use crate::core::manager::{TaskManager, store_error};
use crate::core::stream::{Relay, StreamItem, TaskStream};
use ferry_agent::ConversationMoved;
use ferry_client::{A2aClient, Binding, ClientError, ClientOptions, Endpoint, RetryPolicy};
use ferry_proto::{A2aError, ErrorKind, SendMessageRequest, SendMessageResponse};
use ferry_store::replicas::Claim;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// Where a message's turn runs.
#[derive(Debug)]
pub(crate) enum Route {
    /// Here; with the replica the conversation moved from, when that one is gone.
    Here(Option<ConversationMoved>),
    /// On the replica that holds the conversation.
    There(Holder),
}

/// A live replica holding a conversation.
#[derive(Debug, Clone)]
pub(crate) struct Holder {
    /// Its id.
    pub(crate) replica: String,
    /// Its internal URL.
    pub(crate) url: String,
}

/// The id of the replica that forwarded a request.
pub(crate) const FORWARDED_BY: &str = "ferry-forwarded-by";
/// The caller the forwarding replica authenticated (absent: an anonymous caller).
pub(crate) const FORWARDED_CALLER: &str = "ferry-forwarded-caller";
/// What that caller may do: `full`, `read-only` or `anonymous` ([`Access`]).
pub(crate) const FORWARDED_ACCESS: &str = "ferry-forwarded-access";
/// The agents that caller may reach, comma-separated (absent: every agent).
pub(crate) const FORWARDED_AGENTS: &str = "ferry-forwarded-agents";
/// `all` when that caller reaches every caller's tasks (an admin).
pub(crate) const FORWARDED_REACH: &str = "ferry-forwarded-reach";

/// What the front door of the forwarding replica granted the caller: it travels with the
/// request, so that the replica it reaches serves it exactly as the first would have.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Granted<'a> {
    /// The caller (`None`: anonymous).
    pub(crate) caller: Option<&'a str>,
    /// Its access.
    pub(crate) access: Access,
    /// The agents it may reach (`None`: every one).
    pub(crate) agents: Option<&'a [String]>,
    /// Whose tasks it reaches.
    pub(crate) reach: TaskReach,
}

impl Access {
    /// The value of [`FORWARDED_ACCESS`].
    pub(crate) fn header_value(self) -> &'static str {
        match self {
            Access::Full => "full",
            Access::ReadOnly => "read-only",
            Access::Anonymous => "anonymous",
        }
    }

    /// The access a [`FORWARDED_ACCESS`] value names (least privilege for anything else).
    pub(crate) fn from_header_value(value: &[u8]) -> Access {
        match value {
            b"full" => Access::Full,
            b"read-only" => Access::ReadOnly,
            _ => Access::Anonymous,
        }
    }
}

/// The headers that forward a request granted `granted` from replica `by` to another
/// replica, with the server's `token` when it has one: the receiving replica's front door
/// serves the request with that grant only when the token is the server's.
pub(crate) fn forwarding_headers(
    by: &str,
    granted: Granted<'_>,
    token: Option<&str>,
) -> Vec<(&'static str, String)> {
    let mut headers = vec![
        (FORWARDED_BY, by.to_owned()),
        (FORWARDED_ACCESS, granted.access.header_value().to_owned()),
    ];
    if let Some(caller) = granted.caller {
        headers.push((FORWARDED_CALLER, caller.to_owned()));
    }
    if let Some(agents) = granted.agents {
        headers.push((FORWARDED_AGENTS, agents.join(",")));
    }
    if granted.reach == TaskReach::All {
        headers.push((FORWARDED_REACH, "all".to_owned()));
    }
    if let Some(token) = token.filter(|t| !t.is_empty()) {
        headers.push(("authorization", format!("Bearer {token}")));
    }
    headers
}

/// Items a relayed stream buffers ahead of its subscriber.
const RELAY_BUFFER: usize = 16;

/// Forwards one agent's requests to the replicas that hold their conversations.
#[derive(Debug)]
pub(crate) struct Forwarder {
    http: reqwest::Client,
    /// The server's token, which the front door of every replica accepts.
    token: Option<String>,
    /// This agent's JSON-RPC path on every replica (under `/agents/{id}` on a server of
    /// several).
    path: String,
    /// How long a forwarded call may take (the server's request timeout).
    timeout: Duration,
}

impl Forwarder {
    /// A forwarder calling this agent's JSON-RPC `path` on other replicas, with `token`.
    pub(crate) fn new(token: Option<String>, path: String, timeout: Duration) -> Self {
        Self {
            http: reqwest::Client::new(),
            token,
            path,
            timeout,
        }
    }

    /// Calls this agent under `prefix` (`/agents/{id}` on a server of several agents).
    pub(crate) fn under(&mut self, prefix: &str) {
        self.path = format!("{prefix}{}", self.path);
    }

    /// Where a turn of conversation `context_id` (of `call`'s caller, in `tenant`) runs,
    /// claiming it for this replica unless a live replica holds it.
    pub(crate) async fn route(
        manager: &TaskManager,
        tenant: &str,
        call: &CallContext,
        context_id: &str,
    ) -> Result<Route, A2aError> {
        let Some(replicas) = manager.store().replicas() else {
            return Ok(Route::Here(None));
        };
        let key = conversation_key(tenant, call.caller.as_deref(), context_id);
        let now = manager.now_ms();
        let live_since = now.saturating_sub(manager.lease_ms());
        match replicas
            .claim(&key, now, live_since)
            .await
            .map_err(store_error)?
        {
            Claim::Here { moved_from: None } => Ok(Route::Here(None)),
            Claim::Here {
                moved_from: Some(from_replica),
            } => {
                manager.replica_counters.moved();
                tracing::info!(context = context_id, from = %from_replica, "took over a conversation whose replica is gone");
                Ok(Route::Here(Some(ConversationMoved { from_replica })))
            }
            Claim::Elsewhere { replica, url } => Ok(Route::There(Holder { replica, url })),
        }
    }

    /// `SendMessage` on the replica that holds the conversation; its answer.
    pub(crate) async fn send(
        &self,
        manager: &TaskManager,
        call: &CallContext,
        holder: &Holder,
        req: SendMessageRequest,
    ) -> Result<Sent, A2aError> {
        manager.replica_counters.forwarded();
        let client = self.client(manager, call, holder)?;
        match client.send_message(req).await {
            Ok(SendMessageResponse::Task(task)) => {
                Ok(Sent::Task(Shaped::new(Arc::new(task), None, true)))
            }
            Ok(SendMessageResponse::Message(message)) => Ok(Sent::Message(Arc::new(message))),
            Err(e) => Err(relayed_error(holder, manager, e)),
        }
    }

    /// `SendStreamingMessage` on the replica that holds the conversation: its stream,
    /// relayed. An error before the first event is the answer; a later one ends the stream.
    pub(crate) async fn stream(
        &self,
        manager: &TaskManager,
        call: &CallContext,
        holder: &Holder,
        req: SendMessageRequest,
    ) -> Result<TaskStream, A2aError> {
        manager.replica_counters.forwarded();
        let client = self.client(manager, call, holder)?;
        let mut events = client
            .send_streaming(req)
            .await
            .map_err(|e| relayed_error(holder, manager, e))?;
        let (tx, rx) = mpsc::channel(RELAY_BUFFER);
        let holder = holder.clone();
        let lease_secs = manager.lease_ms().div_ceil(1000);
        // The client's stream is read in a task of its own: the subscriber's reads may be
        // dropped (keep-alives) without losing what was read.
        tokio::spawn(async move {
            while let Some(item) = events.next().await {
                let item = match item {
                    Ok(event) => {
                        let seq = events.last_event_id().and_then(|id| id.parse().ok());
                        Ok(StreamItem::fresh(seq, Arc::new(event)))
                    }
                    Err(e) => Err(relayed(&holder, lease_secs, e)),
                };
                let ends = item.is_err();
                if tx.send(item).await.is_err() || ends {
                    return;
                }
            }
        });
        Ok(TaskStream::Relayed(Relay::new(rx)))
    }

    /// A client of this agent on `holder`, calling as `call`'s caller.
    fn client(
        &self,
        manager: &TaskManager,
        call: &CallContext,
        holder: &Holder,
    ) -> Result<A2aClient, A2aError> {
        let by = manager.replica_id().unwrap_or_default();
        let mut headers = HeaderMap::new();
        // The agent's gate passed the call here, so the agent it is forwarded to is allowed.
        let granted = Granted {
            caller: call.caller.as_deref(),
            access: call.access,
            agents: None,
            reach: call.reach,
        };
        let forwarding = forwarding_headers(by, granted, self.token.as_deref());
        for (name, value) in forwarding {
            let value = HeaderValue::from_str(&value)
                .map_err(|_| A2aError::internal(format!("{name} cannot be sent in a header")))?;
            headers.insert(HeaderName::from_static(name), value);
        }
        let options = ClientOptions {
            headers,
            extensions: call.extensions.clone(),
            timeout: self.timeout,
            retry: RetryPolicy {
                retries: 0,
                ..RetryPolicy::default()
            },
            ..ClientOptions::default()
        };
        let endpoint = Endpoint {
            binding: Binding::JsonRpc,
            url: format!("{}{}", holder.url.trim_end_matches('/'), self.path),
            tenant: call.tenant.clone(),
        };
        Ok(A2aClient::with_http(self.http.clone(), endpoint, options))
    }
}

/// The store's key of a conversation: its agent's tenant, caller and contextId.
fn conversation_key(tenant: &str, caller: Option<&str>, context_id: &str) -> String {
    format!(
        "a2a\u{1f}{tenant}\u{1f}{}\u{1f}{context_id}",
        caller.unwrap_or_default()
    )
}

fn relayed_error(holder: &Holder, manager: &TaskManager, e: ClientError) -> A2aError {
    relayed(holder, manager.lease_ms().div_ceil(1000), e)
}

/// What the caller is told of a forwarded call's failure: the holder's own A2A error as it
/// is; otherwise that the holder did not answer, and when to try again (once its lease
/// runs out, the conversation is taken over).
fn relayed(holder: &Holder, lease_secs: u64, e: ClientError) -> A2aError {
    match e {
        ClientError::Protocol(error) => error,
        other => A2aError::new(
            ErrorKind::Unavailable,
            format!(
                "the server process holding this conversation (replica {} at {}) did not answer: {other}; if it is gone, another one takes the conversation over within {lease_secs} s (starting it afresh): send the request again",
                holder.replica, holder.url
            ),
        )
        .with_meta("retryAfterSeconds", lease_secs.max(1).to_string()),
    }
}
