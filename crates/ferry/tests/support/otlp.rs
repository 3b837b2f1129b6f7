//! An OpenTelemetry collector for tests: an OTLP/HTTP receiver on 127.0.0.1 that accepts
//! JSON-encoded `POST /v1/traces` bodies and hands their spans to the test, and a graceful
//! stop for `ferry serve` (SIGTERM: the server flushes its spans before it exits).
//!
//! A test waits for spans on the receiver's channel (with a deadline for the failure
//! message), never by sleeping.

use super::{Server, read_log};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::{Command, ExitStatus};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// One exported span, as far as the tests look at it.
#[derive(Debug, Clone)]
pub(crate) struct ExportedSpan {
    /// The `service.name` of the process that exported it.
    pub service: String,
    /// The span's name (`request`, `a2a.client`, …).
    pub name: String,
    /// 32 hex digits.
    pub trace_id: String,
    /// 16 hex digits.
    pub span_id: String,
    /// 16 hex digits; empty for a root span.
    pub parent_span_id: String,
    /// The span's attributes, every value as text.
    pub attributes: BTreeMap<String, String>,
}

impl ExportedSpan {
    /// The attribute `key` as text, if the span has it.
    pub(crate) fn attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

/// What the receiver got: the spans of one `POST /v1/traces`, or why its body was refused.
type Export = Result<Vec<ExportedSpan>, String>;

/// A running receiver; it lives as long as the test process.
pub(crate) struct OtlpReceiver {
    /// `http://127.0.0.1:PORT`: what `--otlp-endpoint` takes.
    pub url: String,
    exports: mpsc::Receiver<Export>,
    /// Every span received so far.
    spans: Vec<ExportedSpan>,
}

impl OtlpReceiver {
    /// Starts a receiver on a free port, served from a thread of its own.
    pub(crate) fn start() -> OtlpReceiver {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the receiver");
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener");
        let url = format!("http://{}", listener.local_addr().expect("its address"));
        let (tx, exports) = mpsc::channel::<Export>();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("the receiver's runtime");
            runtime.block_on(async move {
                let listener =
                    tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
                while let Ok((stream, _)) = listener.accept().await {
                    let tx = tx.clone();
                    tokio::spawn(async move {
                        let service = hyper::service::service_fn(move |request| {
                            let tx = tx.clone();
                            async move { Ok::<_, hyper::Error>(receive(request, &tx).await) }
                        });
                        // A client that goes away mid-request is not the test's concern.
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
            });
        });
        OtlpReceiver {
            url,
            exports,
            spans: Vec::new(),
        }
    }

    /// Waits until `done` holds for the spans received so far, and returns them; panics
    /// after `timeout` (or when a body was not OTLP JSON) with what did arrive.
    pub(crate) fn spans_until(
        &mut self,
        timeout: Duration,
        done: impl Fn(&[ExportedSpan]) -> bool,
    ) -> &[ExportedSpan] {
        let deadline = Instant::now() + timeout;
        while !done(&self.spans) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.exports.recv_timeout(left) {
                Ok(Ok(spans)) => self.spans.extend(spans),
                Ok(Err(why)) => panic!("the receiver got a body it cannot read: {why}"),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => panic!(
                    "the spans awaited did not arrive within {timeout:?}; received:\n{}",
                    describe(&self.spans)
                ),
            }
        }
        &self.spans
    }
}

/// Answers one request to the receiver: the spans of a `POST /v1/traces` go to `tx` before
/// the answer, so an exporter that got its answer has delivered.
async fn receive(request: Request<Incoming>, tx: &mpsc::Sender<Export>) -> Response<Full<Bytes>> {
    let traces = request.method() == hyper::Method::POST && request.uri().path() == "/v1/traces";
    let json = request
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) => {
            let _ = tx.send(Err(format!("reading the body: {e}")));
            return answer(400);
        }
    };
    if !traces {
        return answer(404);
    }
    let export = if json {
        serde_json::from_slice::<Value>(&body)
            .map_err(|e| format!("not JSON: {e}"))
            .and_then(|v| spans_of(&v))
    } else {
        Err("not application/json (the exporter must use http-json)".to_owned())
    };
    let _ = tx.send(export);
    answer(200)
}

fn answer(status: u16) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from_static(b"{}")))
        .expect("a valid response")
}

/// The spans of an `ExportTraceServiceRequest` in OTLP's JSON encoding (ids in hex).
fn spans_of(request: &Value) -> Export {
    let list = |v: &Value, key: &str| v.get(key).and_then(Value::as_array).cloned();
    let mut spans = Vec::new();
    for resource_spans in list(request, "resourceSpans").ok_or("no resourceSpans")? {
        let resource = resource_spans.get("resource").cloned().unwrap_or_default();
        let service = attributes(&resource)
            .remove("service.name")
            .unwrap_or_default();
        for scope in list(&resource_spans, "scopeSpans").unwrap_or_default() {
            for span in list(&scope, "spans").unwrap_or_default() {
                let text = |key: &str| {
                    span.get(key)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                };
                spans.push(ExportedSpan {
                    service: service.clone(),
                    name: text("name"),
                    trace_id: text("traceId"),
                    span_id: text("spanId"),
                    parent_span_id: text("parentSpanId"),
                    attributes: attributes(&span),
                });
            }
        }
    }
    Ok(spans)
}

/// The `attributes` of an OTLP object, values as text (`intValue` is a JSON string or
/// number in OTLP/JSON).
fn attributes(object: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for kv in object
        .get("attributes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(key) = kv.get("key").and_then(Value::as_str) else {
            continue;
        };
        let value = kv.get("value").and_then(Value::as_object);
        let text = value
            .and_then(|v| v.values().next())
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .unwrap_or_default();
        out.insert(key.to_owned(), text);
    }
    out
}

/// One line per span, for failure messages.
pub(crate) fn describe(spans: &[ExportedSpan]) -> String {
    spans
        .iter()
        .map(|s| {
            format!(
                "  {:<9} {:<14} trace {} span {} parent {:<16} {:?}\n",
                s.service, s.name, s.trace_id, s.span_id, s.parent_span_id, s.attributes
            )
        })
        .collect()
}

/// Stops a `ferry serve` with SIGTERM and waits for its clean exit (it exports its last
/// spans on the way out); panics when it does not exit within 30 s.
pub(crate) fn stop_gracefully(server: &mut Server) -> ExitStatus {
    let pid = server.child.id().to_string();
    let sent = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "SIGTERM to {pid}");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = server.child.try_wait().expect("wait for the server") {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "the server did not exit after SIGTERM; output:\n{}",
            read_log(&server.log)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
