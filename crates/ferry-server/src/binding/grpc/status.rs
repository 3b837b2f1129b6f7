//! A2A errors as gRPC statuses, for the gRPC binding and for the front door's refusals of gRPC
//! calls (the server hands [`refusal`] to the front door, which knows no binding): the spec's gRPC code (from the error table of `ferry-proto`),
//! the message, and `google.rpc.ErrorInfo` (reason, the A2A domain, metadata) with a
//! `google.rpc.BadRequest` for field violations and a `google.rpc.RetryInfo` for a wait, in
//! the status details (spec §7.1: gRPC MUST
//! carry ErrorInfo).

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::Response;
use ferry_proto::{A2aError, ERROR_DOMAIN, ErrorTable};
use std::collections::HashMap;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

/// The status for `error`, with its code from `table`.
pub(crate) fn status_of(error: &A2aError, table: ErrorTable) -> Status {
    let metadata: HashMap<String, String> = error
        .metadata
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut details = ErrorDetails::with_error_info(error.reason(), ERROR_DOMAIN, metadata);
    for (field, description) in &error.field_violations {
        details.add_bad_request_violation(field.clone(), description.clone());
    }
    // The wait a capacity refusal asks for, where gRPC clients look for it.
    if let Some(secs) = error.retry_after_secs() {
        details.set_retry_info(Some(std::time::Duration::from_secs(secs)));
    }
    Status::with_error_details(
        code_named(error.kind.grpc_status(table)),
        error.message.clone(),
        details,
    )
}

/// The front door's refusal of a gRPC call (its kinds' codes are the same in every table).
pub(crate) fn refusal(error: &A2aError) -> Response {
    refusal_in(error, ErrorTable::V1_0_1)
}

/// The answer that is only `error`'s status, with its code from `table`.
pub(crate) fn refusal_in(error: &A2aError, table: ErrorTable) -> Response {
    response_of(status_of(error, table))
}

/// `error`'s status as the trailers that end a stream already under way.
pub(crate) fn trailers_of(error: &A2aError, table: ErrorTable) -> HeaderMap {
    let mut trailers = HeaderMap::new();
    let status = status_of(error, table);
    if status.add_header(&mut trailers).is_err() {
        // A message that cannot be a header value: the code alone still says what happened.
        trailers.insert("grpc-status", HeaderValue::from(status.code() as i32));
    }
    trailers
}

/// A whole response that is only `status` (gRPC "trailers-only").
pub(crate) fn response_of(status: Status) -> Response {
    status.into_http::<tonic::body::Body>().map(Body::new)
}

/// The code a `google.rpc.Code` name stands for.
fn code_named(name: &str) -> Code {
    match name {
        "OK" => Code::Ok,
        "CANCELLED" => Code::Cancelled,
        "INVALID_ARGUMENT" => Code::InvalidArgument,
        "DEADLINE_EXCEEDED" => Code::DeadlineExceeded,
        "NOT_FOUND" => Code::NotFound,
        "ALREADY_EXISTS" => Code::AlreadyExists,
        "PERMISSION_DENIED" => Code::PermissionDenied,
        "RESOURCE_EXHAUSTED" => Code::ResourceExhausted,
        "FAILED_PRECONDITION" => Code::FailedPrecondition,
        "ABORTED" => Code::Aborted,
        "OUT_OF_RANGE" => Code::OutOfRange,
        "UNIMPLEMENTED" => Code::Unimplemented,
        "INTERNAL" => Code::Internal,
        "UNAVAILABLE" => Code::Unavailable,
        "DATA_LOSS" => Code::DataLoss,
        "UNAUTHENTICATED" => Code::Unauthenticated,
        _ => Code::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_proto::ErrorKind;

    #[test]
    fn every_kind_has_a_real_code() {
        for kind in ErrorKind::ALL {
            for table in [ErrorTable::V1_0_1, ErrorTable::V1_0_0] {
                let status = status_of(&A2aError::new(*kind, "x"), table);
                assert_ne!(status.code(), Code::Unknown, "{kind:?}");
                assert_ne!(status.code(), Code::Ok, "{kind:?}");
            }
        }
    }

    #[test]
    fn details_carry_the_reason_metadata_and_violations() {
        let error = A2aError::task_not_found("t-1");
        let status = status_of(&error, ErrorTable::V1_0_1);
        assert_eq!(status.code(), Code::NotFound);
        let info = status.get_details_error_info().expect("ErrorInfo");
        assert_eq!(info.reason, "TASK_NOT_FOUND");
        assert_eq!(info.domain, ERROR_DOMAIN);
        let invalid = A2aError::invalid_params("bad").with_violation("message.parts", "empty");
        let status = status_of(&invalid, ErrorTable::V1_0_1);
        assert_eq!(status.code(), Code::InvalidArgument);
        let bad = status.get_details_bad_request().expect("BadRequest");
        assert_eq!(bad.field_violations[0].field, "message.parts");
    }
}
