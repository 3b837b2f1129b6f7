//! How text log lines write their fields: `name=value`, like tracing-subscriber's default, with
//! two differences.
//!
//! - Plain text goes straight into the line. The default sends every value through
//!   `core::fmt`, quoting and escaping each `&str`; the request span's three fields (id,
//!   method, path) cost 3 % of a SendMessage's instructions that way, on every request.
//!   A value that is one word of printable characters is written as it is; anything else is
//!   quoted and escaped (`text="two words"`).
//! - Control characters are escaped everywhere, the message included (`\u{1b}`, `\u{a}`):
//!   values carry text from clients and websites, which must not drive the reader's terminal
//!   or forge a log line with a newline.

use std::fmt::{self, Write};
use tracing::field::{Field, Visit};
use tracing_subscriber::field::{MakeVisitor, VisitFmt, VisitOutput};
use tracing_subscriber::fmt::format::Writer;

/// The field formatter of `--log-format text`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PlainFields;

impl<'w> MakeVisitor<Writer<'w>> for PlainFields {
    type Visitor = FieldWriter<'w>;

    fn make_visitor(&self, target: Writer<'w>) -> FieldWriter<'w> {
        FieldWriter {
            out: target,
            empty: true,
            result: Ok(()),
        }
    }
}

/// Writes one span's or event's fields.
pub(crate) struct FieldWriter<'w> {
    out: Writer<'w>,
    empty: bool,
    result: fmt::Result,
}

impl FieldWriter<'_> {
    /// Starts a field: false when it is not written (log metadata the line shows already, or
    /// an earlier write failed).
    fn start(&mut self, name: &str) -> bool {
        if self.result.is_err() || name.starts_with("log.") {
            return false;
        }
        if !self.empty {
            self.result = self.out.write_char(' ');
        }
        self.empty = false;
        if name != "message" {
            let name = name.strip_prefix("r#").unwrap_or(name);
            self.result = self
                .result
                .and_then(|()| self.out.write_str(name))
                .and_then(|()| self.out.write_char('='));
        }
        self.result.is_ok()
    }

    fn write_escaped(&mut self, value: fmt::Arguments<'_>) {
        self.result = Escaping(&mut self.out).write_fmt(value);
    }
}

impl Visit for FieldWriter<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if !self.start(field.name()) {
            return;
        }
        if field.name() == "message" {
            self.write_escaped(format_args!("{value}"));
        } else if is_word(value) {
            self.result = self.out.write_str(value);
        } else {
            // Debug quotes the value and escapes its control characters.
            self.result = write!(self.out, "{value:?}");
        }
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        if !self.start(field.name()) {
            return;
        }
        self.write_escaped(format_args!("{value}"));
        let mut source = value.source();
        if source.is_none() || self.result.is_err() {
            return;
        }
        self.result = write!(self.out, " {}.sources=[", field.name());
        let mut first = true;
        while let Some(error) = source {
            if !first {
                self.result = self.result.and_then(|()| self.out.write_str(", "));
            }
            first = false;
            if self.result.is_ok() {
                self.write_escaped(format_args!("{error}"));
            }
            source = error.source();
        }
        self.result = self.result.and_then(|()| self.out.write_char(']'));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.start(field.name()) {
            self.write_escaped(format_args!("{value:?}"));
        }
    }
}

impl VisitOutput<fmt::Result> for FieldWriter<'_> {
    fn finish(self) -> fmt::Result {
        self.result
    }
}

impl VisitFmt for FieldWriter<'_> {
    fn writer(&mut self) -> &mut dyn Write {
        &mut self.out
    }
}

/// One word of printable ASCII, safe to write without quotes (other text is quoted).
fn is_word(value: &str) -> bool {
    !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\')
}

/// Passes text on with its control characters (tab aside) escaped as `\u{…}`.
struct Escaping<'a, W: Write>(&'a mut W);

impl<W: Write> Write for Escaping<'_, W> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        let mut rest = text;
        while let Some((at, c)) = rest
            .char_indices()
            .find(|&(_, c)| c.is_control() && c != '\t')
        {
            self.0.write_str(&rest[..at])?;
            write!(self.0, "{}", c.escape_unicode())?;
            rest = &rest[at + c.len_utf8()..];
        }
        self.0.write_str(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::PlainFields;
    use std::io;
    use std::sync::{Arc, Mutex};

    /// What `f` logs (trimmed) under a text subscriber with [`PlainFields`].
    fn logged(f: impl FnOnce()) -> String {
        #[derive(Clone, Default)]
        struct Buffer(Arc<Mutex<Vec<u8>>>);
        impl io::Write for Buffer {
            fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
                self.0.lock().expect("buffer").extend_from_slice(bytes);
                Ok(bytes.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .without_time()
            .with_target(false)
            .fmt_fields(PlainFields)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::with_default(subscriber, f);
        let bytes = buffer.0.lock().expect("buffer").clone();
        String::from_utf8(bytes).expect("utf-8").trim().to_owned()
    }

    #[test]
    fn words_plain_other_text_quoted() {
        let out = logged(|| {
            let span = tracing::info_span!("request", id = "r-1", path = "/jsonrpc");
            let _in = span.enter();
            tracing::info!(text = "two words", empty = "", n = 3, "done");
        });
        assert_eq!(
            out,
            "INFO request{id=r-1 path=/jsonrpc}: done text=\"two words\" empty=\"\" n=3"
        );
    }

    #[test]
    fn control_characters_are_escaped_everywhere() {
        let out = logged(|| {
            let shown = String::from("red\u{1b}[31m");
            tracing::warn!(page = %shown, quoted = "a\nb", "line\nforged");
        });
        assert_eq!(
            out,
            "WARN line\\u{a}forged page=red\\u{1b}[31m quoted=\"a\\nb\""
        );
    }

    #[test]
    fn errors_list_their_sources() {
        #[derive(Debug)]
        struct Outer(io::Error);
        impl std::fmt::Display for Outer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("outer")
            }
        }
        impl std::error::Error for Outer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let out = logged(|| {
            let e = Outer(io::Error::other("inner"));
            tracing::error!(error = &e as &(dyn std::error::Error + 'static), "failed");
        });
        assert_eq!(out, "ERROR failed error=outer error.sources=[inner]");
    }
}
