//! Human approval (`--approval human`): a submit that only a person can let through.
//!
//! When a form is shown ready, ferry opens a review link for it: a capability, unguessable
//! (256 random bits), bound to one task and one showing of the form (its ticket: a form
//! shown again gets a new link, and the old one approves nothing), expiring, and single-use.
//! The calling agent's `{"confirm": true}` no longer submits; the person who opens the link
//! sees the site, the form's action, the picture, every field and value (secrets masked),
//! warnings and errors, and approves or rejects. An approver token (`ferry approve`) may do
//! the same by task id, and nothing else.
//!
//! The [`Ledger`] keeps what waits, one entry per task: the secret, the page's anti-forgery
//! nonce, the ticket, the conversation, the deadline, the review and the task's event sink
//! (through which the decision's outcome reaches the task, its streams and push). Nothing of
//! it is logged: the link's secret never appears in a log line.

pub mod page;

use crate::pool::ConversationKey;
pub use crate::report::ApprovalRecord;
use crate::report::FormReport;
use ferry_agent::EventSink;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// How long a decided entry is remembered, so that a second use of its link is told
/// "already used" instead of "unknown".
const DECIDED_MEMORY: Duration = Duration::from_secs(24 * 60 * 60);

/// Why a review link or an approver's request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApprovalError {
    /// No submit waits under this task and secret (or the secret is wrong: the two are not
    /// told apart).
    #[error("this review link is not valid: no submit waits for it")]
    Unknown,
    /// The link's time is over; the caller can have the form shown again for a new one.
    #[error("this review link has expired; nothing was submitted")]
    Expired,
    /// The link was used: a decision was taken.
    #[error("this review link was already used: the submit was {0}")]
    Used(&'static str),
    /// The approve request did not come from the review page (its nonce is missing or
    /// wrong, or it came from another site).
    #[error("this request did not come from the review page; nothing was decided")]
    Forged,
    /// The approver token is missing or wrong, or none is configured.
    #[error("the approver token is not valid")]
    NotAnApprover,
    /// The server does not ask people to approve submits.
    #[error("this server does not ask people to approve submits")]
    Off,
}

/// Who presents a decision.
#[derive(Debug, Clone, Copy)]
pub enum Credential<'a> {
    /// The review link's secret and the page's nonce.
    Link {
        /// From the link's path.
        secret: &'a str,
        /// From the page's form.
        nonce: &'a str,
    },
    /// The approver token (`ferry approve`).
    Approver {
        /// The bearer token presented.
        token: &'a str,
    },
}

/// What a person decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Submit the form as shown.
    Approve,
    /// Do not submit; why, in the person's words (may be empty).
    Reject {
        /// The reason given.
        reason: String,
    },
}

impl Decision {
    /// `approved` or `rejected`.
    pub fn word(&self) -> &'static str {
        match self {
            Decision::Approve => "approved",
            Decision::Reject { .. } => "rejected",
        }
    }
}

/// What a person sees before deciding: the site, the form, the picture, every field.
/// Website text in it is data: the page escapes every character of it.
#[derive(Debug, Clone)]
pub struct Review {
    /// The task the submit belongs to.
    pub task_id: String,
    /// The page's URL.
    pub url: String,
    /// The page's title.
    pub title: String,
    /// Where the form submits, and how (`POST https://…`).
    pub action: String,
    /// Method of the form (`get`, `post`).
    pub method: String,
    /// Every field of the form: label and value (secrets masked).
    pub fields: Vec<(String, String)>,
    /// What the report warned about.
    pub warnings: Vec<String>,
    /// Errors the page shows (form-wide and per field).
    pub errors: Vec<String>,
    /// The picture of the form as filled (PNG, secrets blanked).
    pub screenshot: Option<Vec<u8>>,
    /// The nonce the page's form must send back.
    pub nonce: String,
    /// How long the link stays valid from now.
    pub expires_in: Duration,
}

/// A submit waiting for a person.
pub(crate) struct Waiting {
    secret: String,
    /// The showing of the form this approval is for.
    pub ticket: u64,
    /// The conversation.
    pub key: ConversationKey,
    deadline: Instant,
    review: Review,
    /// Where the decision's outcome goes (over A2A); `None` over MCP.
    pub sink: Option<EventSink>,
}

enum Entry {
    Waiting(Box<Waiting>),
    Decided {
        secret: String,
        word: &'static str,
        at: Instant,
    },
}

/// The submits waiting for a person, by task.
#[derive(Default)]
pub(crate) struct Ledger {
    entries: Mutex<HashMap<String, Entry>>,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger").finish_non_exhaustive()
    }
}

/// What [`Ledger::offer`] needs to open (or keep) a link.
pub(crate) struct Offer<'a> {
    pub key: &'a ConversationKey,
    pub task_id: &'a str,
    pub ticket: u64,
    pub form: usize,
    pub report: &'a FormReport,
    pub sink: Option<EventSink>,
    pub ttl: Duration,
}

impl Ledger {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The secret of the link for `offer`'s showing: the one already open for it, or a new
    /// one (replacing any other of the task, and dropping those of the conversation's other
    /// tasks, whose submit no longer waits).
    pub(crate) fn offer(&self, offer: Offer<'_>) -> String {
        let now = Instant::now();
        let mut entries = self.lock();
        entries.retain(|task, entry| match entry {
            Entry::Waiting(w) => w.deadline > now && (w.key != *offer.key || task == offer.task_id),
            Entry::Decided { at, .. } => now.duration_since(*at) < DECIDED_MEMORY,
        });
        if let Some(Entry::Waiting(w)) = entries.get_mut(offer.task_id)
            && w.ticket == offer.ticket
        {
            w.sink = offer.sink.or(w.sink.take());
            return w.secret.clone();
        }
        let secret = random_secret();
        let waiting = Waiting {
            secret: secret.clone(),
            ticket: offer.ticket,
            key: offer.key.clone(),
            deadline: now + offer.ttl,
            review: review_of(offer.task_id, offer.report, offer.form, random_secret()),
            sink: offer.sink,
        };
        entries.insert(offer.task_id.to_owned(), Entry::Waiting(Box::new(waiting)));
        secret
    }

    /// Drops what waits in conversation `key` (its submit changed or is gone).
    pub(crate) fn withdraw(&self, key: &ConversationKey) {
        self.lock()
            .retain(|_, e| !matches!(e, Entry::Waiting(w) if w.key == *key));
    }

    /// Drops what waits for task `task_id` (canceled).
    pub(crate) fn withdraw_task(&self, task_id: &str) {
        let mut entries = self.lock();
        if matches!(entries.get(task_id), Some(Entry::Waiting(_))) {
            entries.remove(task_id);
        }
    }

    /// The review of task `task_id`'s waiting submit, for the holder of `secret` (or of the
    /// approver token, when `secret` is `None` and the caller checked the token).
    pub(crate) fn review(
        &self,
        task_id: &str,
        secret: Option<&str>,
    ) -> Result<Review, ApprovalError> {
        let now = Instant::now();
        let entries = self.lock();
        let waiting = find(&entries, task_id, secret, now)?;
        let mut review = waiting.review.clone();
        review.expires_in = waiting.deadline.saturating_duration_since(now);
        Ok(review)
    }

    /// Takes task `task_id`'s waiting submit for a decision: the link is used up whatever
    /// follows. `nonce` is checked for a link (`None`: the approver token, checked by the
    /// caller).
    pub(crate) fn take(
        &self,
        task_id: &str,
        secret: Option<&str>,
        nonce: Option<&str>,
        word: &'static str,
    ) -> Result<Box<Waiting>, ApprovalError> {
        let now = Instant::now();
        let mut entries = self.lock();
        let waiting = find(&entries, task_id, secret, now)?;
        if let Some(nonce) = nonce
            && !ferry_net::secret::constant_time_eq(
                nonce.as_bytes(),
                waiting.review.nonce.as_bytes(),
            )
        {
            return Err(ApprovalError::Forged);
        }
        let secret = waiting.secret.clone();
        let decided = Entry::Decided {
            secret,
            word,
            at: now,
        };
        match entries.insert(task_id.to_owned(), decided) {
            Some(Entry::Waiting(waiting)) => Ok(waiting),
            _ => Err(ApprovalError::Unknown),
        }
    }
}

/// The waiting entry of `task_id` that `secret` opens (any, for `None`).
fn find<'a>(
    entries: &'a HashMap<String, Entry>,
    task_id: &str,
    secret: Option<&str>,
    now: Instant,
) -> Result<&'a Waiting, ApprovalError> {
    let opens = |own: &str| {
        secret.is_none_or(|s| ferry_net::secret::constant_time_eq(s.as_bytes(), own.as_bytes()))
    };
    match entries.get(task_id) {
        Some(Entry::Waiting(w)) if opens(&w.secret) => {
            if w.deadline <= now {
                Err(ApprovalError::Expired)
            } else {
                Ok(w)
            }
        }
        Some(Entry::Decided {
            secret: own, word, ..
        }) if opens(own) => Err(ApprovalError::Used(word)),
        _ => Err(ApprovalError::Unknown),
    }
}

/// 256 random bits, as 64 hex digits (two v4 UUIDs: 244 random bits, from the OS's
/// generator through `uuid`'s).
fn random_secret() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

/// The review of `report`'s form `form`, as a person reads it, whose page sends `nonce` back.
fn review_of(task_id: &str, report: &FormReport, form: usize, nonce: String) -> Review {
    let summary = report.forms.iter().find(|f| f.index == form);
    let fields = report
        .fields
        .iter()
        .filter(|f| f.form == Some(form))
        .map(|f| (f.label.clone(), f.shown_value()))
        .collect();
    let mut errors = report.form_errors.clone();
    errors.extend(report.field_error_lines());
    Review {
        task_id: task_id.to_owned(),
        url: report.url.clone(),
        title: report.title.clone(),
        action: summary.map(|f| f.action.clone()).unwrap_or_default(),
        method: summary.map(|f| f.method.clone()).unwrap_or_default(),
        fields,
        warnings: report.warnings.clone(),
        errors,
        screenshot: report.screenshot.as_ref().map(|s| s.png.clone()),
        nonce,
        expires_in: Duration::ZERO,
    }
}

#[cfg(test)]
mod tests;
