//! The common part of a turn's report, and the proxy's refusals.

use super::scope::Scope;
use crate::config::FormsConfig;
use crate::inspection::Inspection;
use crate::report::{BlockedRequest, FieldSummary, FormReport, FormSummary, MAX_BLOCKED_REPORTED};
use crate::session::Session;
use ferry_browser::Allowlist;

/// The report's common part: page, forms, fields of `scope`, blocked requests.
pub(super) fn build_report(
    session: &Session,
    mark: usize,
    inspection: &Inspection,
    scope: &Scope,
    warnings: Vec<String>,
) -> FormReport {
    let main = inspection.main();
    let forms = inspection
        .forms()
        .into_iter()
        .enumerate()
        .map(|(index, (frame, form))| FormSummary::new(index, form, inspection.frame_label(frame)))
        .collect();
    let show_validity = !matches!(scope, Scope::All);
    let fields = inspection
        .fields()
        .into_iter()
        .filter(|(_, form, _)| scope.contains(*form))
        .map(|(_, form, f)| FieldSummary::new(f, form, show_validity && !f.empty))
        .collect();
    FormReport {
        url: main.map(|m| m.url.clone()).unwrap_or_default(),
        title: main.map(|m| m.title.clone()).unwrap_or_default(),
        forms,
        fields,
        form_errors: inspection.form_errors(),
        blocked: blocked(session, mark),
        blocked_more: blocked_more(session, mark),
        warnings,
        ..FormReport::default()
    }
}

/// The requests the proxy refused since `mark`: the first [`MAX_BLOCKED_REPORTED`].
pub(super) fn blocked(session: &Session, mark: usize) -> Vec<BlockedRequest> {
    session
        .blocked_since(mark)
        .into_iter()
        .take(MAX_BLOCKED_REPORTED)
        .map(|b| BlockedRequest {
            url: b.target,
            reason: b.reason.to_string(),
        })
        .collect()
}

/// How many refusals since `mark` the report leaves out of `blocked`.
pub(super) fn blocked_more(session: &Session, mark: usize) -> usize {
    session
        .refusals_since(mark)
        .saturating_sub(MAX_BLOCKED_REPORTED)
}

/// The allowlist's verdict on a URL before the browser is asked to open it.
pub(super) fn refuse_host(config: &FormsConfig, url: &url::Url) -> Option<String> {
    let host = url.host_str()?;
    if config.allow_domains.is_empty() {
        return None;
    }
    let allowed = Allowlist::new(&config.allow_domains)
        .map(|list| list.allows(host))
        .unwrap_or(false);
    (!allowed).then(|| format!("blocked: {url}: {host} is not on the allowlist"))
}

/// Why the proxy refused the page's own host during this turn, if it did.
pub(super) fn blocked_reason(session: &Session, mark: usize, url: &url::Url) -> Option<String> {
    let host = url
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']');
    session
        .blocked_since(mark)
        .into_iter()
        .find(|b| b.host.eq_ignore_ascii_case(host))
        .map(|b| format!("blocked: {url}: {}", b.reason))
}
