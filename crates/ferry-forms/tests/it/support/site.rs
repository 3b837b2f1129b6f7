//! A tiny HTTP/1.1 test web server for the forms tests.
//!
//! It serves the static pages of `tests/site` on `127.0.0.1:<random port>`, logs every
//! request (body included), and has a few dynamic routes:
//!
//! | route | answer |
//! |---|---|
//! | `POST /submit` (any query) | records the body; an HTML page titled "Thank you" listing the field names |
//! | `POST /submit?next=PATH` | records the body; `303` to `PATH` (a step of a multi-step flow) |
//! | `GET /slow` | headers and the start of a page, then nothing for up to 120 s |
//! | `GET /redirect?to=URL` | `302` to `URL` |
//! | `GET /set-cookie?name=value` | sets the cookie `name=value` (`Path=/`) |
//! | `GET /cookies` | a page whose body text is the request's `Cookie` header |
//! | `GET /` | an index of the pages |
//!
//! Requests may come directly (`GET /path`) or through a proxy in absolute form
//! (`GET http://host:port/path`); both are logged with the same `path`. Every answer closes
//! the connection (`Connection: close`), which keeps the parser trivial.

// Shared by several test modules; not every one uses every helper.
#![allow(dead_code)]

use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// The largest request head (request line + headers) accepted.
const MAX_HEAD: usize = 64 * 1024;
/// The largest request body accepted.
const MAX_BODY: usize = 16 * 1024 * 1024;
/// How long `/slow` holds its connection open.
const SLOW_HOLD: Duration = Duration::from_secs(120);
/// How long a connection may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// One request the site received.
#[derive(Debug, Clone)]
pub(crate) struct Logged {
    /// The `Host` header without the port, lowercased (for an absolute-form request without
    /// `Host`, the URL's host).
    pub host: String,
    /// `GET`, `POST`, …
    pub method: String,
    /// The path with its query string (`/submit?form=login`), also for absolute-form requests.
    pub path: String,
    /// The request body (decoded if it was chunked).
    pub body: Vec<u8>,
    /// The `Content-Type` header.
    pub content_type: Option<String>,
}

impl Logged {
    /// The path without its query string.
    pub(crate) fn route(&self) -> &str {
        self.path.split('?').next().unwrap_or_default()
    }
}

/// The running test site; the server stops when it is dropped.
pub(crate) struct TestSite {
    port: u16,
    log: Arc<Mutex<Vec<Logged>>>,
    /// Woken each time a request is logged.
    arrived: Arc<tokio::sync::Notify>,
    server: JoinHandle<()>,
}

impl TestSite {
    /// Starts the server on `127.0.0.1:0`.
    pub(crate) async fn start() -> TestSite {
        // Through ferry-forms by name: ferry-mcp's tests include this file too.
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ferry-forms/tests/site");
        Self::start_in(root).await
    }

    /// Starts the server on `127.0.0.1:0`, serving the files of `root` (the same routes).
    pub(crate) async fn start_in(root: PathBuf) -> TestSite {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the test site");
        let port = listener.local_addr().expect("local address").port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let arrived = Arc::new(tokio::sync::Notify::new());
        let server = tokio::spawn(serve(listener, root, log.clone(), arrived.clone()));
        TestSite {
            port,
            log,
            arrived,
            server,
        }
    }

    /// Returns once a request for `route` (the path without its query) on `host` has arrived:
    /// the event a test waits for instead of sleeping.
    pub(crate) async fn requested(&self, host: &str, route: &str) {
        self.until(|log| log.iter().any(|r| r.host == host && r.route() == route))
            .await;
    }

    /// Returns once `arrived` holds for the log of every request so far (checked again at each
    /// new request).
    pub(crate) async fn until(&self, arrived: impl Fn(&[Logged]) -> bool) {
        loop {
            let next = self.arrived.notified();
            tokio::pin!(next);
            // Registered before the check, so an arrival between the two is not missed.
            next.as_mut().enable();
            if arrived(&lock(&self.log)) {
                return;
            }
            next.await;
        }
    }

    /// The port it listens on.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// `http://{host}:{port}{path}`: any host name works when the browser resolves it here.
    pub(crate) fn url(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}{path}", self.port)
    }

    /// Every request so far, in arrival order.
    pub(crate) fn requests(&self) -> Vec<Logged> {
        lock(&self.log).clone()
    }

    /// The requests whose host is `host` (compared case-insensitively).
    pub(crate) fn requests_for(&self, host: &str) -> Vec<Logged> {
        let host = host.to_ascii_lowercase();
        lock(&self.log)
            .iter()
            .filter(|r| r.host == host)
            .cloned()
            .collect()
    }

    /// The parsed bodies of every `POST /submit`, in arrival order: urlencoded fields, or for
    /// multipart bodies `name=value` of fields and `name=filename` of files.
    pub(crate) fn submissions(&self) -> Vec<Vec<(String, String)>> {
        lock(&self.log)
            .iter()
            .filter(|r| r.method == "POST" && r.route() == "/submit")
            .map(|r| parse_form_body(r.content_type.as_deref(), &r.body))
            .collect()
    }
}

impl Drop for TestSite {
    fn drop(&mut self) {
        self.server.abort();
    }
}

fn lock(log: &Mutex<Vec<Logged>>) -> MutexGuard<'_, Vec<Logged>> {
    log.lock().unwrap_or_else(|p| p.into_inner())
}

async fn serve(
    listener: TcpListener,
    root: PathBuf,
    log: Arc<Mutex<Vec<Logged>>>,
    arrived: Arc<tokio::sync::Notify>,
) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let (root, log, arrived) = (root.clone(), log.clone(), arrived.clone());
        tokio::spawn(async move {
            // A broken connection only ends that connection.
            let _ = handle(stream, &root, &log, &arrived).await;
        });
    }
}

/// A parsed request.
struct Request {
    method: String,
    /// Origin-form target: path and query.
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn route(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    /// The decoded query parameters.
    fn query(&self) -> Vec<(String, String)> {
        match self.target.split_once('?') {
            Some((_, query)) => url::form_urlencoded::parse(query.as_bytes())
                .into_owned()
                .collect(),
            None => Vec::new(),
        }
    }
}

async fn handle(
    mut stream: TcpStream,
    root: &Path,
    log: &Mutex<Vec<Logged>>,
    arrived: &tokio::sync::Notify,
) -> std::io::Result<()> {
    let Ok(request) = tokio::time::timeout(READ_TIMEOUT, read_request(&mut stream)).await else {
        return Ok(());
    };
    let (request, url_host) = match request? {
        Some(parsed) => parsed,
        None => return Ok(()),
    };
    let host = request
        .header("host")
        .map(strip_port)
        .or(url_host)
        .unwrap_or_default()
        .to_ascii_lowercase();
    lock(log).push(Logged {
        host,
        method: request.method.clone(),
        path: request.target.clone(),
        body: request.body.clone(),
        content_type: request.header("content-type").map(str::to_owned),
    });
    arrived.notify_waiters();
    respond(&mut stream, &request, root).await
}

/// Reads one request; `None` when the peer closed before sending one. Also returns the host
/// of an absolute-form target.
async fn read_request(
    stream: &mut TcpStream,
) -> std::io::Result<Option<(Request, Option<String>)>> {
    let mut buf = Vec::with_capacity(4096);
    let head_end = loop {
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            break end;
        }
        if buf.len() > MAX_HEAD {
            return Err(invalid("request head too large"));
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split_whitespace();
    let method = request_line.next().unwrap_or_default().to_owned();
    let raw_target = request_line.next().unwrap_or("/").to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let (target, url_host) = origin_form(&raw_target);
    let mut request = Request {
        method,
        target,
        headers,
        body: Vec::new(),
    };
    let mut rest = buf[head_end + 4..].to_vec();
    let chunked = request
        .header("transfer-encoding")
        .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
    if chunked {
        request.body = read_chunked(stream, rest).await?;
    } else if let Some(length) = request.header("content-length") {
        let length: usize = length.parse().map_err(|_| invalid("bad content-length"))?;
        if length > MAX_BODY {
            return Err(invalid("body too large"));
        }
        while rest.len() < length {
            let mut chunk = vec![0u8; (length - rest.len()).min(64 * 1024)];
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                break;
            }
            rest.extend_from_slice(&chunk[..n]);
        }
        rest.truncate(length);
        request.body = rest;
    }
    Ok(Some((request, url_host)))
}

/// Decodes a chunked body, `rest` being what was already read after the head.
async fn read_chunked(stream: &mut TcpStream, mut rest: Vec<u8>) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(end) = find(&rest, b"\r\n") {
                break end;
            }
            fill_more(stream, &mut rest).await?;
        };
        let size_text = String::from_utf8_lossy(&rest[..line_end]).into_owned();
        let size_hex = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_hex, 16).map_err(|_| invalid("bad chunk size"))?;
        rest.drain(..line_end + 2);
        if size == 0 {
            return Ok(body);
        }
        if body.len() + size > MAX_BODY {
            return Err(invalid("body too large"));
        }
        while rest.len() < size + 2 {
            fill_more(stream, &mut rest).await?;
        }
        body.extend_from_slice(&rest[..size]);
        rest.drain(..size + 2);
    }
}

async fn fill_more(stream: &mut TcpStream, buf: &mut Vec<u8>) -> std::io::Result<()> {
    let mut chunk = [0u8; 4096];
    let n = stream.read(&mut chunk).await?;
    if n == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    buf.extend_from_slice(&chunk[..n]);
    Ok(())
}

/// `http://host:port/path?q` → (`/path?q`, `Some(host)`); an origin-form target is kept.
fn origin_form(target: &str) -> (String, Option<String>) {
    let lower = target.to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return (target.to_owned(), None);
    }
    match url::Url::parse(target) {
        Ok(url) => {
            let mut path = url.path().to_owned();
            if let Some(query) = url.query() {
                path.push('?');
                path.push_str(query);
            }
            (path, url.host_str().map(str::to_owned))
        }
        Err(_) => ("/".to_owned(), None),
    }
}

/// `example.com:8080` → `example.com`; `[::1]:80` → `[::1]`.
fn strip_port(host: &str) -> String {
    if host.starts_with('[') {
        return host.split_inclusive(']').next().unwrap_or(host).to_owned();
    }
    host.split(':').next().unwrap_or(host).to_owned()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn invalid(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned())
}

// ---- Responses ------------------------------------------------------------------------------

async fn respond(stream: &mut TcpStream, request: &Request, root: &Path) -> std::io::Result<()> {
    match (request.method.as_str(), request.route()) {
        // A step of a multi-step flow: recorded, then on to the next step (POST, redirect, GET).
        ("POST", "/submit") if query_value(request, "next").is_some() => {
            let next = query_value(request, "next").unwrap_or_else(|| "/".to_owned());
            let page = html_page(
                "See other",
                &format!("<a href=\"{0}\">{0}</a>", escape(&next)),
            );
            send_html(
                stream,
                "303 See Other",
                &[("Location", next.as_str())],
                &page,
            )
            .await
        }
        ("POST", "/submit") => {
            let fields = parse_form_body(request.header("content-type"), &request.body);
            let items: String = fields
                .iter()
                .map(|(name, _)| format!("<li>{}</li>", escape(name)))
                .collect();
            let page = html_page("Thank you", &format!("<h1>Thank you</h1><ul>{items}</ul>"));
            send_html(stream, "200 OK", &[], &page).await
        }
        ("GET", "/slow") => slow(stream).await,
        ("GET", "/redirect") => {
            let to = query_value(request, "to").unwrap_or_else(|| "/".to_owned());
            let page = html_page("Redirect", &format!("<a href=\"{0}\">{0}</a>", escape(&to)));
            let headers = [("Location", to.as_str())];
            send_html(stream, "302 Found", &headers, &page).await
        }
        ("GET", "/set-cookie") => {
            let cookies: Vec<String> = request
                .query()
                .into_iter()
                .map(|(name, value)| format!("{name}={value}; Path=/"))
                .collect();
            let headers: Vec<(&str, &str)> =
                cookies.iter().map(|c| ("Set-Cookie", c.as_str())).collect();
            let page = html_page("Cookie set", "<p>Cookie set.</p>");
            send_html(stream, "200 OK", &headers, &page).await
        }
        ("GET", "/cookies") => {
            let cookie = request.header("cookie").unwrap_or_default();
            // In the title too, where a forms report shows it.
            let page = html_page(&format!("Cookies: {}", escape(cookie)), &escape(cookie));
            send_html(stream, "200 OK", &[], &page).await
        }
        ("GET", "/") => {
            let page = html_page("Test site", &index(root));
            send_html(stream, "200 OK", &[], &page).await
        }
        ("GET", path) => match static_file(root, path) {
            Some((bytes, content_type)) => send(stream, "200 OK", content_type, &[], &bytes).await,
            None => {
                let page = html_page("Not found", "<h1>Not found</h1>");
                send_html(stream, "404 Not Found", &[], &page).await
            }
        },
        _ => {
            let page = html_page("Method not allowed", "<h1>Method not allowed</h1>");
            send_html(stream, "405 Method Not Allowed", &[], &page).await
        }
    }
}

fn query_value(request: &Request, name: &str) -> Option<String> {
    request
        .query()
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

/// An HTML answer.
async fn send_html(
    stream: &mut TcpStream,
    status: &str,
    headers: &[(&str, &str)],
    page: &str,
) -> std::io::Result<()> {
    send(
        stream,
        status,
        "text/html; charset=utf-8",
        headers,
        page.as_bytes(),
    )
    .await
}

async fn send(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body).await?;
    stream.flush().await?;
    stream.shutdown().await
}

/// Sends headers and the start of a page, then holds the connection without finishing.
async fn slow(stream: &mut TcpStream) -> std::io::Result<()> {
    let start = "<!doctype html><html><head><title>Slow</title></head><body><p>Loading";
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 100000\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n";
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(start.as_bytes()).await?;
    stream.flush().await?;
    tokio::time::sleep(SLOW_HOLD).await;
    Ok(())
}

fn static_file(root: &Path, path: &str) -> Option<(Vec<u8>, &'static str)> {
    let relative = Path::new(path.trim_start_matches('/'));
    // Only plain names: no `..`, no absolute paths.
    if !relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
    {
        return None;
    }
    let file = root.join(relative);
    let bytes = std::fs::read(&file).ok()?;
    let content_type = match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("json") => "application/json",
        Some("txt" | "md") => "text/plain; charset=utf-8",
        Some("png") => "image/png",
        Some("pdf") => "application/pdf",
        _ => "application/octet-stream",
    };
    Some((bytes, content_type))
}

fn index(root: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.ends_with(".html"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let items: String = names
        .iter()
        .map(|n| format!("<li><a href=\"/{0}\">{0}</a></li>", escape(n)))
        .collect();
    format!("<ul>{items}</ul>")
}

fn html_page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{}</title></head><body>{body}</body></html>",
        escape(title)
    )
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

// ---- Form bodies ----------------------------------------------------------------------------

/// Fields of a urlencoded or multipart body (files as `name=filename`).
fn parse_form_body(content_type: Option<&str>, body: &[u8]) -> Vec<(String, String)> {
    let content_type = content_type.unwrap_or_default();
    if content_type
        .to_ascii_lowercase()
        .starts_with("multipart/form-data")
    {
        if let Some(boundary) = param(content_type, "boundary") {
            return parse_multipart(body, &boundary);
        }
        return Vec::new();
    }
    url::form_urlencoded::parse(body).into_owned().collect()
}

/// A `key=value` parameter of a header value (`multipart/form-data; boundary=x`).
fn param(header: &str, key: &str) -> Option<String> {
    header.split(';').skip(1).find_map(|part| {
        let (k, v) = part.trim().split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case(key)
            .then(|| v.trim().trim_matches('"').to_owned())
    })
}

fn parse_multipart(body: &[u8], boundary: &str) -> Vec<(String, String)> {
    let delimiter = format!("--{boundary}");
    let mut fields = Vec::new();
    let mut rest = body;
    // Skip the preamble up to the first delimiter.
    let Some(start) = find(rest, delimiter.as_bytes()) else {
        return fields;
    };
    rest = &rest[start + delimiter.len()..];
    loop {
        if rest.starts_with(b"--") {
            break;
        }
        let Some(part_end) = find(rest, format!("\r\n{delimiter}").as_bytes()) else {
            break;
        };
        let part = rest[..part_end]
            .strip_prefix(b"\r\n")
            .unwrap_or(&rest[..part_end]);
        if let Some(field) = multipart_field(part) {
            fields.push(field);
        }
        rest = &rest[part_end + 2 + delimiter.len()..];
    }
    fields
}

fn multipart_field(part: &[u8]) -> Option<(String, String)> {
    let head_end = find(part, b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&part[..head_end]);
    let content = &part[head_end + 4..];
    let disposition = head.split("\r\n").find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("content-disposition")
            .then(|| value.trim().to_owned())
    })?;
    let name = param(&disposition, "name")?;
    let value = match param(&disposition, "filename") {
        Some(filename) => filename,
        None => String::from_utf8_lossy(content).into_owned(),
    };
    Some((name, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_multipart_fields_and_files() {
        let body = b"--XX\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHello\r\n--XX\r\nContent-Disposition: form-data; name=\"cv\"; filename=\"cv.pdf\"\r\nContent-Type: application/pdf\r\n\r\n%PDF\r\n--XX--\r\n";
        let fields = parse_form_body(Some("multipart/form-data; boundary=XX"), body);
        assert_eq!(
            fields,
            vec![
                ("title".to_owned(), "Hello".to_owned()),
                ("cv".to_owned(), "cv.pdf".to_owned())
            ]
        );
    }

    #[test]
    fn normalises_absolute_form_targets() {
        assert_eq!(
            origin_form("http://Example.test:8080/a/b?c=d"),
            ("/a/b?c=d".to_owned(), Some("example.test".to_owned()))
        );
        assert_eq!(origin_form("/x"), ("/x".to_owned(), None));
        assert_eq!(strip_port("Host.Test:123"), "Host.Test");
    }
}
