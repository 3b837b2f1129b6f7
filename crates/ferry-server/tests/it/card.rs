//! The public agent card (§16 points 1–5, and 7–9 on the card): required fields, interfaces with
//! JSON-RPC first, no v0.3 leftovers, declared capabilities, the same card under each interface,
//! and HTTP caching (`Cache-Control: max-age`, `ETag`, `Last-Modified`, 304).

use crate::support::{DECLARED_EXTENSION, ScriptedAgent, TestServer, assert_wire_format};
use ferry_server::ServerConfig;
use reqwest::Method;
use reqwest::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, HeaderMap, LAST_MODIFIED};
use serde_json::Value;

const CARD: &str = "/.well-known/agent-card.json";

/// GETs a card path as a v1.0 client does (`A2A-Version: 1.0`); returns status, headers and
/// body text.
async fn get(
    srv: &TestServer,
    path: &str,
    if_none_match: Option<&str>,
) -> (u16, HeaderMap, String) {
    let mut headers: Vec<(&str, &str)> = if_none_match
        .map(|tag| ("if-none-match", tag))
        .into_iter()
        .collect();
    headers.push(("a2a-version", "1.0"));
    let response = srv.request(Method::GET, path, &headers, "").await;
    let (status, headers) = (response.status().as_u16(), response.headers().clone());
    (
        status,
        headers,
        response.text().await.expect("the card body"),
    )
}

/// GETs the card and parses it, checking 200, the content type and the wire format.
async fn card(srv: &TestServer) -> Value {
    let (status, headers, body) = get(srv, CARD, None).await;
    assert_eq!(status, 200);
    assert_eq!(headers[CONTENT_TYPE], "application/json");
    let card: Value = serde_json::from_str(&body).expect("the card is JSON");
    assert_wire_format(&card);
    card
}

fn header<'h>(headers: &'h HeaderMap, name: &reqwest::header::HeaderName) -> &'h str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("the card response has no {name}"))
}

/// Points 1 and 2: required fields; interfaces with a binding, a Major.Minor version, JSON-RPC first.
async fn required_fields_and_interfaces() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let card = card(&srv).await;
    for field in ["name", "description", "version"] {
        assert!(
            card[field].as_str().is_some_and(|s| !s.is_empty()),
            "{field} in {card}"
        );
    }
    for field in ["defaultInputModes", "defaultOutputModes", "skills"] {
        assert!(card[field].is_array(), "{field} in {card}");
    }
    assert!(card["capabilities"].is_object(), "capabilities in {card}");
    let interfaces = card["supportedInterfaces"]
        .as_array()
        .expect("supportedInterfaces");
    let summary: Vec<(&str, &str, &str)> = interfaces
        .iter()
        .map(|i| {
            let field = |k: &str| {
                i[k].as_str()
                    .unwrap_or_else(|| panic!("interface without {k}: {i}"))
            };
            (
                field("url"),
                field("protocolBinding"),
                field("protocolVersion"),
            )
        })
        .collect();
    let rpc = srv.url("/jsonrpc");
    let rest = srv.url("/rest");
    // gRPC has no path: its interface is the server's host:port.
    let grpc = srv.url("");
    let grpc = grpc.trim_start_matches("http://");
    let mut expected = vec![
        (rpc.as_str(), "JSONRPC", "1.0"),
        (rest.as_str(), "HTTP+JSON", "1.0"),
    ];
    // A server built without the `grpc` feature has no gRPC to list.
    if cfg!(feature = "grpc") {
        expected.push((grpc, "GRPC", "1.0"));
    }
    assert_eq!(summary, expected);
    assert!(
        interfaces.iter().all(|i| i.get("tenant").is_none()),
        "no tenant is advertised: {card}"
    );
}

/// Point 3: no v0.3-only field and no `stateTransitionHistory` for a v1.0 client; a request
/// without `A2A-Version` (v0.3's, by the spec) gets the dual card, with v0.3's members; both
/// say they vary by the header.
async fn no_v03_fields() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let card = card(&srv).await;
    for field in [
        "url",
        "protocolVersion",
        "preferredTransport",
        "additionalInterfaces",
        "supportsAuthenticatedExtendedCard",
        "kind",
    ] {
        assert!(card.get(field).is_none(), "v0.3 field {field} in {card}");
    }
    assert!(
        card["capabilities"].get("stateTransitionHistory").is_none(),
        "{card}"
    );
    let response = srv.request(Method::GET, CARD, &[], "").await;
    if !cfg!(feature = "v03") {
        // Without v0.3 there is one card, whoever asks.
        assert!(response.headers().get("vary").is_none());
        return;
    }
    assert_eq!(response.headers()["vary"], "A2A-Version");
    let dual: Value = response.json().await.expect("the dual card is JSON");
    assert_eq!(dual["protocolVersion"], "0.3.0", "{dual}");
    assert_eq!(dual["url"], card["supportedInterfaces"][0]["url"], "{dual}");
    let mut without = dual.as_object().cloned().expect("an object");
    assert!(ferry_proto::v03::strip_card_members(&mut without));
    assert_eq!(
        Value::Object(without),
        card,
        "the same card besides v0.3's members"
    );
}

/// Point 4: security requirements only name declared schemes, each scheme one oneof member.
async fn security_is_consistent() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let card = card(&srv).await;
    let schemes = card
        .get("securitySchemes")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (name, scheme) in &schemes {
        assert_eq!(
            scheme.as_object().map(|o| o.len()),
            Some(1),
            "scheme {name} has one wrapper key: {scheme}"
        );
    }
    for requirement in card
        .get("securityRequirements")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for (name, scopes) in requirement["schemes"]
            .as_object()
            .expect("requirement.schemes")
        {
            assert!(
                schemes.contains_key(name),
                "requirement names undeclared scheme {name}"
            );
            assert!(
                scopes.get("list").is_none_or(Value::is_array),
                "scopes use {{\"list\":[…]}}: {scopes}"
            );
        }
    }
}

/// Capabilities say what the server implements: streaming as the agent declares, push (the
/// store keeps configs), no extended card; declared and configured-required extensions.
async fn capabilities_match_the_server() {
    let config = ServerConfig {
        required_extensions: vec!["urn:ferry:test:required".into()],
        ..ServerConfig::default()
    };
    let (srv, _) = TestServer::scripted_with(config).await;
    let caps = card(&srv).await["capabilities"].clone();
    assert_eq!(caps["streaming"], true);
    assert_eq!(caps["pushNotifications"], true, "{caps}");
    assert_ne!(
        caps.get("extendedAgentCard"),
        Some(&Value::Bool(true)),
        "{caps}"
    );
    let extensions: Vec<(&str, bool)> = caps["extensions"]
        .as_array()
        .expect("extensions")
        .iter()
        .map(|e| {
            (
                e["uri"].as_str().expect("uri"),
                e.get("required") == Some(&Value::Bool(true)),
            )
        })
        .collect();
    assert_eq!(
        extensions,
        [
            (DECLARED_EXTENSION, false),
            ("urn:ferry:test:required", true)
        ]
    );

    let srv = TestServer::start(ScriptedAgent::without_streaming()).await;
    assert_eq!(card(&srv).await["capabilities"]["streaming"], false);
}

/// The card is also served under each interface's base URL, byte for byte.
async fn served_under_each_interface() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let (_, _, root) = get(&srv, CARD, None).await;
    for base in ["/jsonrpc", "/rest"] {
        let (status, headers, body) = get(&srv, &format!("{base}{CARD}"), None).await;
        assert_eq!(status, 200, "{base}");
        assert_eq!(headers[CONTENT_TYPE], "application/json", "{base}");
        assert_eq!(body, root, "{base}");
    }
}

/// Point 5: caching headers, and 304 (empty) on a matching `If-None-Match`.
async fn caching_headers() {
    let config = ServerConfig {
        card_max_age_secs: 60,
        ..ServerConfig::default()
    };
    let srv = TestServer::with_config(ferry_agents::EchoAgent, config).await;
    let (_, headers, _) = get(&srv, CARD, None).await;
    let cache_control = header(&headers, &CACHE_CONTROL);
    assert!(
        cache_control.split(',').any(|d| d.trim() == "max-age=60"),
        "{cache_control}"
    );
    let etag = header(&headers, &ETAG).to_owned();
    assert!(
        etag.len() > 2 && etag.starts_with('"') && etag.ends_with('"'),
        "a strong quoted ETag: {etag}"
    );
    let last_modified = header(&headers, &LAST_MODIFIED).to_owned();
    assert!(
        last_modified.ends_with(" GMT") && last_modified.len() == 29,
        "an IMF-fixdate: {last_modified}"
    );

    for tag in [
        etag.clone(),
        format!("W/{etag}"),
        format!("\"other\", {etag}"),
        "*".to_owned(),
    ] {
        let (status, headers, body) = get(&srv, CARD, Some(&tag)).await;
        assert_eq!(status, 304, "If-None-Match: {tag}");
        assert!(body.is_empty(), "a 304 has no body");
        assert_eq!(header(&headers, &ETAG), etag);
        assert_eq!(header(&headers, &LAST_MODIFIED), last_modified);
    }
    let (status, headers, body) = get(&srv, CARD, Some("\"stale\"")).await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, &ETAG), etag, "the ETag is stable");
    assert!(serde_json::from_str::<Value>(&body).is_ok());
}

scenarios!(once:
    required_fields_and_interfaces,
    no_v03_fields,
    security_is_consistent,
    capabilities_match_the_server,
    served_under_each_interface,
    caching_headers,
);
