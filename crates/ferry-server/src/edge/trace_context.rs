//! The caller's trace: a request that carries W3C trace context (`traceparent`, and
//! `tracestate`) is served in a span that continues the caller's trace, so a client's call,
//! this server's request, the agent's turn and the calls the agent makes in it are one trace.
//!
//! The server installs nothing. It uses the propagator the program installed globally
//! (`opentelemetry::global::set_text_map_propagator`) and the OpenTelemetry layer of the
//! program's `tracing` subscriber. Without them nothing happens, and a request without
//! `traceparent` costs one header look-up.
//!
//! The headers come from any client. The propagator accepts only a well-formed
//! `traceparent` (and ignores the rest): the worst a caller can do is put its own spans and
//! ours in one trace, which is what the header is for.

use axum::http::HeaderMap;
use opentelemetry::propagation::Extractor;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The header that carries the caller's span (W3C Trace Context).
const TRACEPARENT: &str = "traceparent";

/// Makes the caller's span, named by `headers`, the parent of `span` (the front door's
/// `request` span). Call it right after creating the span and before it is first entered
/// or instrumented: an OpenTelemetry span's parent is fixed once the span has started.
/// Without a `traceparent`, a propagator or an OpenTelemetry layer it does nothing, and
/// the span starts a trace of its own as before.
pub(crate) fn adopt_parent(span: &tracing::Span, headers: &HeaderMap) {
    if !headers.contains_key(TRACEPARENT) {
        return;
    }
    let parent =
        opentelemetry::global::get_text_map_propagator(|p| p.extract(&HeaderExtractor(headers)));
    // LayerNotFound (no OpenTelemetry layer), SpanDisabled (filtered out) and AlreadyStarted
    // (a caller's mistake, shown by the trace itself) all leave the span a root: serving the
    // request matters more than its trace.
    let _ = span.set_parent(parent);
}

/// A request's headers as a propagator's carrier; a value that is not visible ASCII reads
/// as absent.
struct HeaderExtractor<'a>(&'a HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn the_extractor_reads_headers_by_lower_case_name() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "traceparent",
            HeaderValue::from_static("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
        );
        headers.insert("tracestate", HeaderValue::from_static("congo=t61rcWkgMzE"));
        let carrier = HeaderExtractor(&headers);
        assert_eq!(
            carrier.get("traceparent"),
            Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        );
        assert_eq!(carrier.get("tracestate"), Some("congo=t61rcWkgMzE"));
        assert_eq!(carrier.get("baggage"), None);
        let mut keys = carrier.keys();
        keys.sort_unstable();
        assert_eq!(keys, ["traceparent", "tracestate"]);
    }

    #[test]
    fn without_an_opentelemetry_layer_nothing_happens() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "traceparent",
            HeaderValue::from_static("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
        );
        let span = tracing::info_span!("request");
        adopt_parent(&span, &headers);
        adopt_parent(&span, &HeaderMap::new());
        // No layer keeps a context for the span: the caller's trace was read and dropped, and
        // the span holds nothing that would tie it to a trace.
        use opentelemetry::trace::TraceContextExt;
        let context = span.context();
        assert!(
            !context.span().span_context().is_valid(),
            "without a layer the request span belongs to no trace"
        );
        assert!(!context.has_active_span());
    }

    #[test]
    fn with_a_propagator_and_a_layer_the_request_span_continues_the_callers_trace() {
        use opentelemetry::trace::{TraceContextExt, TracerProvider};
        use tracing_subscriber::layer::SubscriberExt;
        // Process-wide; no other test of this crate installs an OpenTelemetry layer, so no
        // other test sees it.
        opentelemetry::global::set_text_map_propagator(
            opentelemetry_sdk::propagation::TraceContextPropagator::new(),
        );
        let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
        tracing::subscriber::with_default(subscriber, || {
            let mut headers = HeaderMap::new();
            headers.insert(
                "traceparent",
                HeaderValue::from_static("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
            );
            let span = tracing::info_span!("request");
            adopt_parent(&span, &headers);
            let cx = span.context();
            let ours = cx.span().span_context().clone();
            assert_eq!(
                ours.trace_id().to_string(),
                "4bf92f3577b34da6a3ce929d0e0e4736"
            );
            assert_ne!(
                ours.span_id().to_string(),
                "00f067aa0ba902b7",
                "a span of its own"
            );

            let lone = tracing::info_span!("request");
            adopt_parent(&lone, &HeaderMap::new());
            let lone = lone.context().span().span_context().trace_id();
            assert_ne!(lone, ours.trace_id(), "no traceparent: a trace of its own");
        });
    }
}
