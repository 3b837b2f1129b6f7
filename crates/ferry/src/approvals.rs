//! The review pages of `--approval human`, and the approver's API behind `ferry approve`.
//!
//! Served under `/approvals` as capability routes (the front door's `Host`/`Origin` checks,
//! limits and rate apply; no server token; the path's secret never logged):
//!
//! | route | who | answer |
//! |---|---|---|
//! | `GET /approvals/{task}/{secret}` | the link's holder | the review page |
//! | `GET /approvals/{task}/{secret}/form.png` | the link's holder | the picture of the form |
//! | `POST /approvals/{task}/{secret}` | the review page's form | the decision (once) |
//! | `GET /approvals/review.css` | anyone | the pages' stylesheet |
//! | `GET /approvals/tasks/{task}` | the approver token | the review as JSON |
//! | `POST /approvals/tasks/{task}` | the approver token | the decision, as JSON |
//!
//! A decision posted from the page must carry the page's nonce, and come from the page's
//! own origin (`Origin` and `Sec-Fetch-Site`, when the browser sends them): a page on
//! another site cannot decide for the person.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use ferry_forms::FormsAgent;
use ferry_forms::approval::{ApprovalError, Credential, Decision, Review, page};
use serde_json::{Value, json};
use std::sync::Arc;

/// The prefix of every approval route.
pub(crate) const PREFIX: &str = "/approvals";

/// The longest reason a person may give (characters).
const MAX_REASON: usize = 1000;

/// The forms agents whose submits people approve here.
type Agents = Arc<Vec<FormsAgent>>;

/// The routes, for the forms agents of the server that ask people (`--approval human`).
pub(crate) fn routes(agents: Vec<FormsAgent>) -> Router {
    Router::new()
        .route(page::STYLESHEET_PATH, get(stylesheet))
        .route(
            "/approvals/tasks/{task}",
            get(approver_review).post(approver_decide),
        )
        .route(
            "/approvals/{task}/{secret}",
            get(review_page).post(page_decide),
        )
        .route("/approvals/{task}/{secret}/form.png", get(picture))
        .with_state(Arc::new(agents))
}

/// The agent holding task `task`'s waiting submit for `credential`, or the refusal to show.
fn holder<'a>(
    agents: &'a [FormsAgent],
    task: &str,
    credential: Credential<'_>,
) -> Result<(&'a FormsAgent, Review), ApprovalError> {
    let mut refusal = ApprovalError::Unknown;
    for agent in agents {
        match agent.review(task, credential) {
            Ok(review) => return Ok((agent, review)),
            Err(ApprovalError::Unknown | ApprovalError::Off) => {}
            Err(other) => refusal = other,
        }
    }
    Err(refusal)
}

async fn stylesheet() -> Response {
    let mut response = page::STYLESHEET.into_response();
    set(
        &mut response,
        header::CONTENT_TYPE,
        "text/css; charset=utf-8",
    );
    guarded(response)
}

/// The review the link `/approvals/{task}/{secret}` opens.
fn linked_review(agents: &[FormsAgent], task: &str, secret: &str) -> Result<Review, ApprovalError> {
    let link = Credential::Link { secret, nonce: "" };
    holder(agents, task, link).map(|(_, review)| review)
}

async fn review_page(
    State(agents): State<Agents>,
    Path((task, secret)): Path<(String, String)>,
) -> Response {
    match linked_review(&agents, &task, &secret) {
        Ok(review) => html(
            StatusCode::OK,
            page::review_html(&review, &format!("{PREFIX}/{task}/{secret}")),
        ),
        Err(e) => refused_page(&e),
    }
}

async fn picture(
    State(agents): State<Agents>,
    Path((task, secret)): Path<(String, String)>,
) -> Response {
    match linked_review(&agents, &task, &secret) {
        Ok(Review {
            screenshot: Some(png),
            ..
        }) => {
            let mut response = png.into_response();
            set(&mut response, header::CONTENT_TYPE, "image/png");
            guarded(response)
        }
        Ok(_) => guarded(StatusCode::NOT_FOUND.into_response()),
        Err(e) => refused_page(&e),
    }
}

async fn page_decide(
    State(agents): State<Agents>,
    Path((task, secret)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !from_own_page(&headers) {
        return refused_page(&ApprovalError::Forged);
    }
    let form: Vec<(String, String)> = url::form_urlencoded::parse(&body).into_owned().collect();
    let field = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let Some(decision) = decision(field("decision"), field("reason")) else {
        return refused_page(&ApprovalError::Forged);
    };
    let link = Credential::Link {
        secret: &secret,
        nonce: field("nonce").unwrap_or_default(),
    };
    let agent = match holder(&agents, &task, link) {
        Ok((agent, _)) => agent,
        Err(e) => return refused_page(&e),
    };
    match agent
        .decide(&task, link, decision, "a person on the review page")
        .await
    {
        Ok(outcome) => {
            let headline = if outcome.submitted() {
                "Approved: the form was submitted"
            } else if outcome.approval_decision() == Some("rejected") {
                "Rejected: nothing was submitted"
            } else {
                "Approved, but the form was not submitted"
            };
            html(
                StatusCode::OK,
                page::decided_html(headline, outcome.message()),
            )
        }
        Err(e) => refused_page(&e),
    }
}

/// Whether a decision comes from the review page itself: no other origin, no other site.
/// Browsers send `Origin` with every POST (and `Sec-Fetch-Site`); a request without them is
/// not a browser's, and its nonce decides.
fn from_own_page(headers: &HeaderMap) -> bool {
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    let site_ok = text(header::HeaderName::from_static("sec-fetch-site"))
        .is_none_or(|site| site == "same-origin");
    let origin_ok = match (text(header::ORIGIN), text(header::HOST)) {
        (None, _) => true,
        (Some(origin), Some(host)) => origin
            .split_once("://")
            .is_some_and(|(_, authority)| authority.eq_ignore_ascii_case(host)),
        (Some(_), None) => false,
    };
    site_ok && origin_ok
}

/// The decision of a form's or JSON body's fields.
fn decision(decision: Option<&str>, reason: Option<&str>) -> Option<Decision> {
    match decision? {
        "approve" => Some(Decision::Approve),
        "reject" => Some(Decision::Reject {
            reason: reason
                .unwrap_or_default()
                .chars()
                .take(MAX_REASON)
                .collect(),
        }),
        _ => None,
    }
}

/// The bearer token of a request.
fn bearer(headers: &HeaderMap) -> &str {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default()
        .trim()
}

async fn approver_review(
    State(agents): State<Agents>,
    Path(task): Path<String>,
    headers: HeaderMap,
) -> Response {
    let approver = Credential::Approver {
        token: bearer(&headers),
    };
    match holder(&agents, &task, approver) {
        Ok((_, review)) => json_answer(StatusCode::OK, review_json(&review)),
        Err(e) => json_refusal(&e),
    }
}

async fn approver_decide(
    State(agents): State<Agents>,
    Path(task): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let approver = Credential::Approver {
        token: bearer(&headers),
    };
    let asked: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let Some(decision) = decision(asked["decision"].as_str(), asked["reason"].as_str()) else {
        let why =
            "send {\"decision\": \"approve\"} or {\"decision\": \"reject\", \"reason\": \"…\"}";
        return json_answer(StatusCode::BAD_REQUEST, json!({"error": why}));
    };
    let agent = match holder(&agents, &task, approver) {
        Ok((agent, _)) => agent,
        Err(e) => return json_refusal(&e),
    };
    match agent
        .decide(&task, approver, decision, "the approver token")
        .await
    {
        Ok(outcome) => json_answer(
            StatusCode::OK,
            json!({
                "task": task,
                "decision": outcome.approval_decision(),
                "submitted": outcome.submitted(),
                "message": outcome.message(),
            }),
        ),
        Err(e) => json_refusal(&e),
    }
}

/// The review as the approver's command shows it (the picture left out).
fn review_json(review: &Review) -> Value {
    json!({
        "task": review.task_id,
        "url": review.url,
        "title": review.title,
        "action": review.action,
        "method": review.method,
        "fields": review.fields.iter().map(|(label, value)| json!({"label": label, "value": value})).collect::<Vec<_>>(),
        "warnings": review.warnings,
        "errors": review.errors,
        "expiresInSeconds": review.expires_in.as_secs(),
        "untrusted": true,
    })
}

/// The HTTP status of a refusal.
fn status_of(error: &ApprovalError) -> StatusCode {
    match error {
        ApprovalError::Unknown | ApprovalError::Off => StatusCode::NOT_FOUND,
        ApprovalError::Expired | ApprovalError::Used(_) => StatusCode::GONE,
        ApprovalError::Forged => StatusCode::FORBIDDEN,
        ApprovalError::NotAnApprover => StatusCode::UNAUTHORIZED,
    }
}

fn refused_page(error: &ApprovalError) -> Response {
    html(status_of(error), page::refused_html(error))
}

fn json_refusal(error: &ApprovalError) -> Response {
    json_answer(status_of(error), json!({"error": error.to_string()}))
}

fn json_answer(status: StatusCode, body: Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    set(&mut response, header::CONTENT_TYPE, "application/json");
    guarded(response)
}

fn html(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    set(
        &mut response,
        header::CONTENT_TYPE,
        "text/html; charset=utf-8",
    );
    guarded(response)
}

/// The headers of every approval answer: the page's policy, never cached, never framed, no
/// Referer that would carry the link to another site (`same-origin`, not `no-referrer`:
/// under `no-referrer` Chromium sends the page's own form post with `Origin: null`, which
/// the front door rightly refuses).
fn guarded(mut response: Response) -> Response {
    set(
        &mut response,
        header::CONTENT_SECURITY_POLICY,
        page::CONTENT_SECURITY_POLICY,
    );
    set(&mut response, header::CACHE_CONTROL, "no-store");
    set(&mut response, header::REFERRER_POLICY, "same-origin");
    set(&mut response, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(&mut response, header::X_FRAME_OPTIONS, "DENY");
    response
}

fn set(response: &mut Response, name: header::HeaderName, value: &'static str) {
    response
        .headers_mut()
        .insert(name, HeaderValue::from_static(value));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn only_the_pages_own_origin_decides() {
        let host = ("host", "127.0.0.1:8080");
        assert!(from_own_page(&headers(&[host])));
        assert!(from_own_page(&headers(&[
            host,
            ("origin", "http://127.0.0.1:8080"),
            ("sec-fetch-site", "same-origin"),
        ])));
        assert!(!from_own_page(&headers(&[
            host,
            ("origin", "http://evil.test")
        ])));
        assert!(!from_own_page(&headers(&[host, ("origin", "null")])));
        assert!(!from_own_page(&headers(&[
            host,
            ("sec-fetch-site", "cross-site")
        ])));
        assert!(!from_own_page(&headers(&[
            host,
            ("sec-fetch-site", "same-site")
        ])));
    }

    #[test]
    fn decisions_are_read_strictly() {
        assert_eq!(decision(Some("approve"), None), Some(Decision::Approve));
        let long = "x".repeat(2 * MAX_REASON);
        assert_eq!(
            decision(Some("reject"), Some(&long)),
            Some(Decision::Reject {
                reason: "x".repeat(MAX_REASON)
            })
        );
        assert_eq!(decision(Some("yes"), None), None);
        assert_eq!(decision(None, None), None);
    }
}
