//! Trace context across hops: every call runs in an `a2a.client` span, and every request the
//! client puts on the wire carries that span's W3C `traceparent` (and `tracestate`), so the
//! agent's spans join the caller's trace.
//!
//! The library installs nothing. It uses the propagator the program installed globally
//! (`opentelemetry::global::set_text_map_propagator`) and the OpenTelemetry layer of the
//! program's `tracing` subscriber (`tracing-opentelemetry`). Without that layer the current
//! span has no valid OpenTelemetry context and no header is added; without a propagator the
//! global default is a no-op that adds none either. Either way the cost is one look-up of
//! the current span per request.
//!
//! There is one rule, [`outgoing_headers`], and every request goes through it: the HTTP
//! bindings' requests when they are built, gRPC's metadata when a call is made.

use crate::endpoint::Binding;
use opentelemetry::Context;
use opentelemetry::propagation::{Injector, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The span of one call of `operation` to the interface at `host` (`port`). It names the
/// peer by host and port only: never the URL's path, query or user information, never a
/// header, so no credential reaches a log or a trace.
pub(crate) fn call_span(
    operation: &'static str,
    binding: Binding,
    host: &str,
    port: Option<u16>,
) -> tracing::Span {
    tracing::info_span!(
        "a2a.client",
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        operation,
        binding = binding.card_name(),
        server.address = host,
        server.port = port,
    )
}

/// Marks `span` (a [`call_span`]) failed, for the trace's error view.
pub(crate) fn failed(span: &tracing::Span) {
    span.record("otel.status_code", "ERROR");
}

/// The headers of one outgoing request: `base` and, when the current span has an
/// OpenTelemetry context, what the global propagator injects from it (`traceparent`,
/// `tracestate`). A header of `base` with the same name is replaced: the trace context is
/// the current span's, whatever the caller configured.
pub(crate) fn outgoing_headers(base: &HeaderMap) -> HeaderMap {
    let mut headers = base.clone();
    let cx = tracing::Span::current().context();
    if cx.span().span_context().is_valid() {
        opentelemetry::global::get_text_map_propagator(|p| inject(p, &cx, &mut headers));
    }
    headers
}

/// Writes what `propagator` makes of `cx` into `headers`.
fn inject(propagator: &dyn TextMapPropagator, cx: &Context, headers: &mut HeaderMap) {
    propagator.inject_context(cx, &mut HeaderInjector(headers));
}

/// A header map as a propagator's carrier; a name or value that is not a valid header is
/// left out.
struct HeaderInjector<'a>(&'a mut HeaderMap);

impl Injector for HeaderInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(key.as_bytes()),
            HeaderValue::from_str(&value),
        ) {
            self.0.insert(name, value);
        }
    }
}

#[cfg(test)]
mod tests {
    //! One test, in steps: the propagator is process-wide state, and "none installed" can
    //! only be observed before one is. No other test of this crate installs an OpenTelemetry
    //! layer, so none of them sees the propagator this one installs.

    use crate::{A2aClient, Binding, ClientOptions, Endpoint, RetryPolicy};
    use opentelemetry::trace::{TraceContextExt, TracerProvider};
    use opentelemetry_sdk::propagation::TraceContextPropagator;
    use opentelemetry_sdk::trace::SdkTracerProvider;
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::sync::mpsc;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    use tracing_subscriber::layer::SubscriberExt;

    /// A one-request-per-connection HTTP server on 127.0.0.1 that answers every request
    /// with a completed task and sends each request's head (lower-cased) to the channel.
    fn recording_server() -> (String, mpsc::Receiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    match stream.read(&mut byte) {
                        Ok(1) => head.push(byte[0]),
                        _ => break,
                    }
                }
                let body = r#"{"jsonrpc":"2.0","id":"1","result":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}"#;
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes());
                if tx
                    .send(String::from_utf8_lossy(&head).to_ascii_lowercase())
                    .is_err()
                {
                    return;
                }
            }
        });
        (url, rx)
    }

    /// The value of header `name` in a lower-cased request head.
    fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
        head.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == name).then(|| v.trim())
        })
    }

    #[test]
    fn traceparent_is_the_current_spans_when_a_propagator_is_installed_and_absent_otherwise() {
        let (url, heads) = recording_server();
        let client = A2aClient::with_http(
            reqwest::Client::new(),
            Endpoint {
                binding: Binding::JsonRpc,
                url,
                tenant: String::new(),
            },
            ClientOptions {
                retry: RetryPolicy {
                    retries: 0,
                    ..RetryPolicy::default()
                },
                ..ClientOptions::default()
            },
        );
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let get_task = |root: &tracing::Span| {
            use tracing::Instrument;
            let call = client.get_task("t1", None).instrument(root.clone());
            runtime.block_on(call).expect("the canned task");
            heads.recv().expect("the server saw the request")
        };

        // Neither an OpenTelemetry layer nor a propagator: the program did not ask for traces.
        let head = get_task(&tracing::info_span!("root"));
        assert_eq!(header(&head, "traceparent"), None, "{head}");

        let provider = SdkTracerProvider::builder().build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
        tracing::subscriber::with_default(subscriber, || {
            // A layer and a span, but the global propagator is still the no-op default.
            let root = tracing::info_span!("root");
            let head = get_task(&root);
            assert_eq!(header(&head, "traceparent"), None, "{head}");
            assert_eq!(header(&head, "tracestate"), None, "{head}");

            opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
            let root = tracing::info_span!("root");
            let trace_id = root.context().span().span_context().trace_id();
            let head = get_task(&root);
            let traceparent = header(&head, "traceparent").unwrap_or_else(|| panic!("{head}"));
            // version - trace id - parent (the call's own span, not the root) - flags
            let fields: Vec<&str> = traceparent.split('-').collect();
            assert_eq!(fields.len(), 4, "{traceparent}");
            assert_eq!(fields[0], "00");
            assert_eq!(fields[1], trace_id.to_string(), "the root span's trace");
            let root_id = root.context().span().span_context().span_id();
            assert_ne!(
                fields[2],
                root_id.to_string(),
                "the a2a.client span is the parent"
            );
            assert_eq!(fields[3], "01", "sampled");
            assert_eq!(
                header(&head, "a2a-version"),
                Some("1.0"),
                "the client's own headers stay"
            );
        });

        // A propagator but no layer (this thread's default subscriber again): nothing.
        let head = get_task(&tracing::info_span!("root"));
        assert_eq!(header(&head, "traceparent"), None, "{head}");
    }
}
