//! The HTTP+JSON bindings' reading of a request's path and query string (v1.0's and
//! v0.3's alike): percent-decoded segments, query pairs, integer parameters.

use ferry_proto::{A2aError, ListTaskPushNotificationConfigsRequest};

/// Splits a path into percent-decoded segments.
pub(crate) fn segments(path: &str) -> Result<Vec<String>, A2aError> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            percent_decode(s).ok_or_else(|| {
                A2aError::invalid_params(format!(
                    "path segment {s:?} is not valid percent-encoded UTF-8"
                ))
            })
        })
        .collect()
}

pub(crate) fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Reads `pageSize` and `pageToken` of a push-config listing from the query string.
pub(crate) fn page_query(
    query: &str,
    req: &mut ListTaskPushNotificationConfigsRequest,
) -> Result<(), A2aError> {
    for (k, v) in query_pairs(query) {
        if is_key(&k, "pageSize") {
            req.page_size = parse_int("pageSize", &v)?;
        } else if is_key(&k, "pageToken") {
            req.page_token = v;
        }
    }
    Ok(())
}

pub(crate) fn query_pairs(query: &str) -> impl Iterator<Item = (String, String)> + '_ {
    query.split('&').filter(|kv| !kv.is_empty()).map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        let decode = |s: &str| percent_decode(&s.replace('+', " ")).unwrap_or_else(|| s.to_owned());
        (decode(k), decode(v))
    })
}

/// Matches a query key in camelCase or its snake_case proto name (the same respelling as
/// JSON bodies: `ferry_proto::camel_case`).
pub(crate) fn is_key(key: &str, camel: &str) -> bool {
    ferry_proto::camel_case(key) == camel
}

pub(crate) fn bad_query(name: &str, value: &str, why: &str) -> A2aError {
    A2aError::invalid_params(format!(
        "query parameter {name}={value:?} is invalid: {why}"
    ))
    .with_violation(name, why)
}

pub(crate) fn parse_int(name: &str, value: &str) -> Result<i32, A2aError> {
    value
        .trim()
        .parse()
        .map_err(|_| bad_query(name, value, "not an integer"))
}
