//! ferry's own routes beside the HTTP+JSON binding for a task's push deliveries (what
//! `ferry push-config deliveries` and `redeliver` call): behind the same front door, seen only
//! by callers who see the task.
//!
//! - `GET {rest}/tasks/{id}/pushNotificationDeliveries` → `{"deliveries": [...]}`
//! - `POST {rest}/tasks/{id}/pushNotificationDeliveries/{delivery}/redeliver` → `{}`

use crate::edge::call::call_context;
use crate::edge::response::{json, rest_error};
use crate::edge::service::AgentService;
use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use ferry_store::push::Delivery;
use std::sync::Arc;

/// One delivery as the route shows it.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Shown<'a> {
    id: &'a str,
    config_id: &'a str,
    seq: u64,
    status: &'static str,
    attempts: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_attempt_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    first_attempt_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    done_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_error: Option<&'a str>,
}

impl<'a> Shown<'a> {
    fn of(d: &'a Delivery) -> Self {
        let pending = d.status == ferry_store::push::DeliveryStatus::Pending;
        Shown {
            id: &d.id,
            config_id: &d.config_id,
            seq: d.seq,
            status: d.status.as_str(),
            attempts: d.attempts,
            next_attempt_ms: pending.then_some(d.due_ms),
            first_attempt_ms: d.first_attempt_ms,
            done_ms: d.done_ms,
            last_error: d.last_error.as_deref(),
        }
    }
}

/// The tenant a request names in its query (`?tenant=`), else none.
fn tenant(request: &Request) -> String {
    request
        .uri()
        .query()
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("tenant="))
        .unwrap_or_default()
        .to_owned()
}

/// `GET …/tasks/{id}/pushNotificationDeliveries`.
pub(crate) async fn list(
    State(app): State<Arc<AgentService>>,
    Path(task): Path<String>,
    request: Request,
) -> Response {
    let tenant = tenant(&request);
    let (parts, _) = request.into_parts();
    let call = call_context(tenant, Vec::new(), &parts);
    match app.handler.push_deliveries(&call, &task).await {
        Ok(deliveries) => {
            let shown: Vec<Shown<'_>> = deliveries.iter().map(Shown::of).collect();
            let body =
                serde_json::to_vec(&serde_json::json!({ "deliveries": shown })).unwrap_or_default();
            json(StatusCode::OK, body)
        }
        Err(e) => rest_error(&e, app.config.error_table, None),
    }
}

/// `POST …/tasks/{id}/pushNotificationDeliveries/{delivery}/redeliver`.
pub(crate) async fn redeliver(
    State(app): State<Arc<AgentService>>,
    Path((task, delivery)): Path<(String, String)>,
    request: Request,
) -> Response {
    let tenant = tenant(&request);
    let (parts, _) = request.into_parts();
    let call = call_context(tenant, Vec::new(), &parts);
    match app.handler.redeliver_push(&call, &task, &delivery).await {
        Ok(()) => json(StatusCode::OK, &b"{}"[..]),
        Err(e) => rest_error(&e, app.config.error_table, None),
    }
}
