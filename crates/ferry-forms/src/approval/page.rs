//! The review page a person approves a submit on, and the pages that answer a decision.
//!
//! Self-contained: no script at all, one stylesheet and one picture from the same server,
//! nothing from anywhere else ([`CONTENT_SECURITY_POLICY`] says so to the browser). Every
//! text from the website (labels, values, titles, errors, URLs) is escaped: it is data, and
//! the page says so.

use super::{ApprovalError, Review};
use std::fmt::Write as _;

/// The policy every approval page is served with: nothing runs, nothing loads from
/// elsewhere, the form posts only back here, no other site may frame it.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; img-src 'self'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Where the pages' stylesheet is served.
pub const STYLESHEET_PATH: &str = "/approvals/review.css";

/// The pages' stylesheet.
pub const STYLESHEET: &str = "\
body{font:16px/1.45 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:1.6rem}
.site{font-size:1.2rem;font-weight:600;word-break:break-all}
.untrusted{background:#fff7e0;border-left:4px solid #e0a800;padding:.4rem .8rem}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{width:40%;font-weight:500}td{word-break:break-word}
img{max-width:100%;border:1px solid #ccc}
.errors li{color:#a00}
form{margin-top:1.5rem}textarea{width:100%;min-height:4rem}
button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.8rem}
.approve{background:#1b6e2b;color:#fff;border:0}.reject{background:#fff;border:1px solid #a00;color:#a00}
";

/// Escapes `text` for HTML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// The page's head and opening, titled `title`.
fn open(title: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"referrer\" content=\"same-origin\"><meta name=\"viewport\" content=\"width=device-width\"><title>{}</title><link rel=\"stylesheet\" href=\"{STYLESHEET_PATH}\"></head><body>",
        escape(title)
    )
}

/// The review page of `review`, whose link's path is `path` (`/approvals/TASK/SECRET`): the
/// picture at `path/form.png`, the decision posted back to `path`.
pub fn review_html(review: &Review, path: &str) -> String {
    let mut out = open("Approve this form submit?");
    let minutes = review.expires_in.as_secs().div_ceil(60);
    let _ = write!(
        out,
        "<h1>A form is ready to be submitted</h1>\
         <p>An agent filled this form and asks to submit it. Nothing has been sent yet: it is sent only if you approve. This link works once, for about {minutes} more minute(s).</p>\
         <p class=\"site\">{}</p>\
         <p>Page: {}<br>The form sends its data to: <strong>{} {}</strong></p>\
         <p class=\"untrusted\">Everything below comes from the website and the calling agent: check it, do not follow instructions in it.</p>",
        escape(host_of(&review.url)),
        escape(&review.url),
        escape(&review.method.to_ascii_uppercase()),
        escape(&review.action),
    );
    if review.screenshot.is_some() {
        let _ = write!(
            out,
            "<h2>The form as filled</h2><img src=\"{}/form.png\" alt=\"The form as filled (secrets blanked)\">",
            escape(path)
        );
    }
    out.push_str("<h2>Fields and values</h2><table>");
    for (label, value) in &review.fields {
        let _ = write!(
            out,
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(label),
            escape(value)
        );
    }
    out.push_str("</table>");
    list(&mut out, "Errors the page shows", "errors", &review.errors);
    list(&mut out, "Warnings", "warnings", &review.warnings);
    let _ = write!(
        out,
        "<form method=\"post\" action=\"{}\">\
         <input type=\"hidden\" name=\"nonce\" value=\"{}\">\
         <p><label for=\"reason\">Reason (for a rejection, optional)</label><br><textarea id=\"reason\" name=\"reason\" maxlength=\"1000\"></textarea></p>\
         <button class=\"approve\" type=\"submit\" name=\"decision\" value=\"approve\">Approve and submit</button>\
         <button class=\"reject\" type=\"submit\" name=\"decision\" value=\"reject\">Reject</button>\
         </form></body></html>",
        escape(path),
        escape(&review.nonce),
    );
    out
}

/// A list under a heading, when it has items.
fn list(out: &mut String, heading: &str, class: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let _ = write!(out, "<h2>{}</h2><ul class=\"{class}\">", escape(heading));
    for item in items {
        let _ = write!(out, "<li>{}</li>", escape(item));
    }
    out.push_str("</ul>");
}

/// The page after a decision: `headline`, then `text` (the agent's account of what happened,
/// which may hold website text).
pub fn decided_html(headline: &str, text: &str) -> String {
    let mut out = open(headline);
    let _ = write!(
        out,
        "<h1>{}</h1><p class=\"untrusted\">{}</p><p>You can close this page.</p></body></html>",
        escape(headline),
        escape(text)
    );
    out
}

/// The page for a refused link or request.
pub fn refused_html(error: &ApprovalError) -> String {
    let mut out = open("Nothing was decided");
    let _ = write!(
        out,
        "<h1>Nothing was decided</h1><p>{}.</p></body></html>",
        escape(&error.to_string())
    );
    out
}

/// The host of `url`, shown large so that a person sees which site the form is on.
fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn review() -> Review {
        Review {
            task_id: "t-1".into(),
            url: "https://user@shop.test:8443/signup?x=1".into(),
            title: "Sign up".into(),
            action: "https://shop.test/submit".into(),
            method: "post".into(),
            fields: vec![
                (
                    "Name <b>".into(),
                    "Ada \"<script>alert(1)</script>\"".into(),
                ),
                ("Password".into(), "••••••".into()),
            ],
            warnings: vec!["it's slow".into()],
            errors: vec![],
            screenshot: Some(vec![1, 2, 3]),
            nonce: "n\"once".into(),
            expires_in: Duration::from_secs(61),
        }
    }

    #[test]
    fn website_text_is_escaped_everywhere() {
        let html = review_html(&review(), "/approvals/t-1/abc");
        assert!(!html.contains("<script>"), "{html}");
        assert!(!html.contains("<b>"), "{html}");
        assert!(html.contains("Ada &quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot;"));
        assert!(html.contains("it&#39;s slow"));
        assert!(html.contains("value=\"n&quot;once\""));
        assert!(html.contains("<p class=\"site\">shop.test:8443</p>"));
        assert!(html.contains("POST https://shop.test/submit"));
        assert!(html.contains("src=\"/approvals/t-1/abc/form.png\""));
        assert!(html.contains("about 2 more minute(s)"));
        // No script of its own, nothing from elsewhere.
        assert!(!html.contains("<script"));
        assert!(!html.contains("http://") && !html.contains("src=\"https"));
    }

    #[test]
    fn decision_pages_escape_what_they_repeat() {
        let html = decided_html("Submitted", "The page said <i>thanks</i>");
        assert!(html.contains("&lt;i&gt;thanks&lt;/i&gt;"));
        let html = refused_html(&ApprovalError::Expired);
        assert!(html.contains("expired"));
    }
}
