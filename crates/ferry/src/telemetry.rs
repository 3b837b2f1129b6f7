//! What every command tells the world about itself: log lines on stderr and, when asked,
//! its spans exported to an OpenTelemetry collector.
//!
//! The log is what it always was: `RUST_LOG` sets the level (the command's default
//! otherwise), text lines with [`PlainFields`](crate::log_fields::PlainFields) or one JSON
//! object per line, colour only for a person.
//!
//! Spans are exported only when an endpoint is configured, and then over OTLP/HTTP with
//! JSON encoding, in batches, from the SDK's own thread. Nothing of OpenTelemetry is set up
//! otherwise: no exporter, no thread, no propagator, and the subscriber is the one the log
//! always had. When exporting, the W3C Trace Context propagator is installed globally, so
//! the server continues the traces of its callers and the client's calls carry theirs.
//!
//! Configuration, the standard variables where there is one:
//!
//! | setting | meaning |
//! |---|---|
//! | `--otlp-endpoint URL` | the collector's base URL; spans go to `URL/v1/traces` |
//! | `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` | without the flag: the traces URL, used as it is |
//! | `OTEL_EXPORTER_OTLP_ENDPOINT` | without either: a base URL, as the flag |
//! | `OTEL_SDK_DISABLED=true` | export nothing, whatever the above say |
//! | `OTEL_SERVICE_NAME` | the `service.name` of the spans (default: `ferry` for `serve`, `ferry-client` for the calling commands) |
//! | `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TRACES_HEADERS` | headers of the export requests (`k=v,k2=v2`: a collector's API key) |
//! | `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_BSP_*`, `OTEL_RESOURCE_ATTRIBUTES` | as the SDK reads them |
//!
//! The spans exported are those at INFO and above, whatever `RUST_LOG` says about the log:
//! a quiet log (`ferry send` logs warnings only) still exports its calls.
//!
//! [`TelemetryGuard`] flushes the spans not yet exported when it is dropped: a command
//! holds it until it ends, so a `ferry send` that exits, and a `ferry serve` stopped by
//! SIGTERM, export their last spans first.

use anyhow::Context as _;
use clap::Args;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Subscriber;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Log line format.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// The flag of every command that says where spans go (see the module's table for the
/// environment variables).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct OtlpSettings {
    /// Export spans to this OpenTelemetry collector (OTLP/HTTP, JSON; spans go to
    /// URL/v1/traces). Default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, then
    /// OTEL_EXPORTER_OTLP_ENDPOINT; none: no export. OTEL_SDK_DISABLED=true turns it off,
    /// OTEL_SERVICE_NAME names the process.
    #[arg(long, global = true, value_name = "URL")]
    otlp_endpoint: Option<String>,
}

/// Which kind of command is running: it decides the log's default level and the default
/// service name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// `ferry serve`: logs at info, service `ferry`.
    Server,
    /// The calling commands (`send`, `task`, `push-config`): warnings only (stdout is the
    /// answer, stderr is for trouble), service `ferry-client`.
    Client,
}

impl Role {
    fn default_log_level(self) -> &'static str {
        match self {
            Role::Server => "info",
            Role::Client => "warn",
        }
    }

    fn default_service_name(self) -> &'static str {
        match self {
            Role::Server => "ferry",
            Role::Client => "ferry-client",
        }
    }
}

/// Holds the span exporter of a command, when there is one; dropping it exports the spans
/// still queued (waiting a few seconds at most for the collector) and stops the exporter.
/// Drop it after everything that makes spans has ended: at the end of the command, after
/// its async runtime.
#[derive(Debug)]
#[must_use = "dropping the guard stops the export of spans"]
pub(crate) struct TelemetryGuard {
    provider: Option<SdkTracerProvider>,
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(e) = provider.shutdown()
        {
            tracing::warn!(error = %e, "spans not exported at exit");
        }
    }
}

/// Sets up the log and, when configured, the export of spans, for the whole process (call
/// it once, before any span is made).
pub(crate) fn init(
    format: LogFormat,
    otlp: &OtlpSettings,
    role: Role,
) -> anyhow::Result<TelemetryGuard> {
    let env = |name: &str| std::env::var(name).ok();
    let Some(endpoint) = traces_endpoint(otlp.otlp_endpoint.as_deref(), env) else {
        // Exactly the log of before: one filter for the whole subscriber, nothing else.
        tracing_subscriber::registry()
            .with(log_filter(role, false))
            .with(log_layer(format))
            .try_init()
            .context("installing the log")?;
        return Ok(TelemetryGuard { provider: None });
    };
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpJson)
        .with_endpoint(endpoint.as_str())
        .build()
        .with_context(|| format!("setting up the span export to {endpoint}"))?;
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource(role))
        .build();
    let tracer = provider.tracer("ferry");
    // Each layer has its own filter: RUST_LOG decides the log, not what is exported. The
    // SDK's own events never become span events (they are logged, as warnings).
    // The server core's own spans are at DEBUG (a log at INFO does not pay for them); the
    // export takes them.
    let spans = Targets::new()
        .with_default(LevelFilter::INFO)
        .with_target(ferry_server::SPAN_TARGET, LevelFilter::DEBUG)
        .with_target("opentelemetry", LevelFilter::OFF);
    tracing_subscriber::registry()
        .with(log_layer(format).with_filter(log_filter(role, true)))
        .with(
            tracing_opentelemetry::layer()
                .with_tracer(tracer)
                .with_filter(spans),
        )
        .try_init()
        .context("installing the log")?;
    opentelemetry::global::set_text_map_propagator(
        opentelemetry_sdk::propagation::TraceContextPropagator::new(),
    );
    tracing::debug!(%endpoint, "exporting spans");
    Ok(TelemetryGuard {
        provider: Some(provider),
    })
}

/// The log's filter: `RUST_LOG`, else the role's level. While exporting, the SDK's own
/// chatter stays out of the default log (its warnings are kept).
fn log_filter(role: Role, exporting: bool) -> EnvFilter {
    EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        let level = role.default_log_level();
        if exporting {
            EnvFilter::new(format!("{level},opentelemetry=warn"))
        } else {
            EnvFilter::new(level)
        }
    })
}

/// The log lines, on stderr: text with [`crate::log_fields::PlainFields`], or JSON.
fn log_layer<S>(format: LogFormat) -> Box<dyn Layer<S> + Send + Sync>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    let layer = tracing_subscriber::fmt::layer()
        .with_ansi(colour_on_stderr())
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => layer.fmt_fields(crate::log_fields::PlainFields).boxed(),
        LogFormat::Json => layer.json().boxed(),
    }
}

/// Colour in the log only for a person: stderr is a terminal and `NO_COLOR` is not set
/// (no-color.org). Escape codes in a log file or a collector are noise, and writing them
/// costs: every request's span fields were wrapped in them.
fn colour_on_stderr() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The spans' resource: the SDK's defaults and `OTEL_RESOURCE_ATTRIBUTES` /
/// `OTEL_SERVICE_NAME`, with the role's service name when neither names the service.
fn resource(role: Role) -> Resource {
    let service = opentelemetry::Key::from_static_str("service.name");
    let detected = Resource::builder().build();
    let named = detected
        .get(&service)
        .is_some_and(|name| !name.as_str().starts_with("unknown_service"));
    let builder = Resource::builder().with_attribute(opentelemetry::KeyValue::new(
        "service.version",
        env!("CARGO_PKG_VERSION"),
    ));
    if named {
        builder.build()
    } else {
        builder
            .with_service_name(role.default_service_name())
            .build()
    }
}

/// Where spans go, if anywhere: the flag (a base URL), else
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (as it is), else `OTEL_EXPORTER_OTLP_ENDPOINT` (a
/// base URL); nowhere when `OTEL_SDK_DISABLED` is `true`. Empty values count as unset. A
/// base URL that already ends in `/v1/traces` is taken as it is.
fn traces_endpoint(flag: Option<&str>, env: impl Fn(&str) -> Option<String>) -> Option<String> {
    let set = |v: Option<String>| v.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    if set(env("OTEL_SDK_DISABLED")).is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return None;
    }
    let base = |url: String| {
        let url = url.trim_end_matches('/');
        if url.ends_with("/v1/traces") {
            url.to_owned()
        } else {
            format!("{url}/v1/traces")
        }
    };
    set(flag.map(str::to_owned))
        .map(base)
        .or_else(|| set(env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")))
        .or_else(|| set(env("OTEL_EXPORTER_OTLP_ENDPOINT")).map(base))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn endpoint(flag: Option<&str>, vars: &[(&str, &str)]) -> Option<String> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        traces_endpoint(flag, |name| vars.get(name).cloned())
    }

    #[test]
    fn nothing_configured_exports_nothing() {
        assert_eq!(endpoint(None, &[]), None);
        assert_eq!(
            endpoint(Some(""), &[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")]),
            None
        );
    }

    #[test]
    fn the_flag_and_the_general_variable_are_base_urls() {
        let traces = Some("http://127.0.0.1:4318/v1/traces".to_owned());
        assert_eq!(endpoint(Some("http://127.0.0.1:4318"), &[]), traces);
        assert_eq!(endpoint(Some("http://127.0.0.1:4318/"), &[]), traces);
        assert_eq!(
            endpoint(Some("http://127.0.0.1:4318/v1/traces"), &[]),
            traces
        );
        assert_eq!(
            endpoint(
                None,
                &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")]
            ),
            traces
        );
        assert_eq!(
            endpoint(
                None,
                &[("OTEL_EXPORTER_OTLP_ENDPOINT", "https://c.example/otlp/")]
            ),
            Some("https://c.example/otlp/v1/traces".to_owned())
        );
    }

    #[test]
    fn the_traces_variable_is_taken_as_it_is_and_the_flag_wins() {
        let vars = [
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://a.example/spans",
            ),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://b.example"),
        ];
        assert_eq!(
            endpoint(None, &vars),
            Some("http://a.example/spans".to_owned())
        );
        assert_eq!(
            endpoint(Some("http://c.example"), &vars),
            Some("http://c.example/v1/traces".to_owned())
        );
    }

    #[test]
    fn the_sdk_disabled_variable_wins_over_everything() {
        let on = [("OTEL_SDK_DISABLED", "TRUE")];
        assert_eq!(endpoint(Some("http://c.example"), &on), None);
        let off = [("OTEL_SDK_DISABLED", "false")];
        assert_eq!(
            endpoint(Some("http://c.example"), &off),
            Some("http://c.example/v1/traces".to_owned())
        );
    }
}
