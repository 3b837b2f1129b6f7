//! `CardFetcher` against a local HTTPS server on 127.0.0.1 (test CA from rcgen): every
//! loopback form refused under the public-only policy; with `allow_private`, a valid card
//! verifies and each bad card or bad transport is refused with its own error.

use crate::support::https::{Reply, TestServer};
use ferry_net::{IpPolicy, Range, Refusal, SafeClient};
use ferry_trust::fetch::{CardFetcher, CardFetcherBuilder, Expect, FetchError, RedirectError};
use ferry_trust::jws::JwsError;
use ferry_trust::keys::{Algorithm, KeySet, PublicKey, SigningKey};
use std::net::IpAddr;
use std::time::Duration;

const CARD: &str = r#"{"name":"Echo Agent","description":"Echoes text back","version":"1.0.0","supportedInterfaces":[{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":true,"pushNotifications":false},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"echo","name":"Echo","description":"Echo input","tags":["echo"]}]}"#;

fn loopback() -> IpAddr {
    IpAddr::from([127, 0, 0, 1])
}

/// A fetcher trusting only the server's CA, with `card.test` pinned to 127.0.0.1.
fn fetcher(server: &TestServer, policy: IpPolicy) -> CardFetcherBuilder {
    CardFetcher::builder().net(
        SafeClient::builder()
            .policy(policy)
            .add_root_certificate(server.ca_der.clone())
            .only_given_roots(true)
            .resolve_fixed("card.test", vec![loopback()]),
    )
}

fn open_fetcher(server: &TestServer) -> CardFetcher {
    fetcher(server, IpPolicy::public_only().allow_private(true))
        .build()
        .expect("fetcher")
}

/// The card signed with `key` (spec §8.4 payload), as served bytes.
fn signed_card(key: &SigningKey, jku: Option<&str>) -> Vec<u8> {
    let card: ferry_proto::AgentCard = serde_json::from_str(CARD).expect("card");
    let signed = ferry_trust::jws::sign_card(&card, key, jku).expect("sign");
    serde_json::to_vec(&signed).expect("encode")
}

fn digest_of(bytes: &[u8]) -> String {
    let value = ferry_trust::strict::parse(bytes).expect("parse");
    ferry_trust::card::digest(&value).expect("digest")
}

#[tokio::test]
async fn every_loopback_form_is_refused_without_allow_private() {
    let server = TestServer::start().await;
    server.route("/card.json", Reply::json(CARD));
    let fetcher = fetcher(&server, IpPolicy::public_only())
        .build()
        .expect("fetcher");
    for host in [
        "127.0.0.1",
        "localhost",
        "2130706433",
        "0x7f.1",
        "127.1",
        "[::ffff:127.0.0.1]",
        "[::1]",
        "card.test",
    ] {
        let url = server.url(host, "/card.json");
        match fetcher.fetch(&url, &Expect::default()).await {
            Err(FetchError::BlockedAddress { addr, refusal, .. }) => {
                assert!(addr.is_loopback(), "{host}: {addr}");
                assert_eq!(refusal, Refusal::Range(Range::Loopback), "{host}");
            }
            other => panic!("{host}: expected BlockedAddress, got {other:?}"),
        }
    }
    assert_eq!(
        server.hits("/card.json"),
        0,
        "no request reached the server"
    );
}

#[tokio::test]
async fn a_redirect_to_loopback_is_refused() {
    // The public-only policy, with the server's exact address standing in for a public
    // host; its redirects point at other loopback addresses.
    let server = TestServer::start().await;
    let port = server.addr.port();
    server.route("/card.json", Reply::json(CARD));
    server.route(
        "/to-v4",
        Reply::Redirect(format!("https://127.0.0.2:{port}/card.json")),
    );
    server.route(
        "/to-mapped",
        Reply::Redirect(format!("https://[::ffff:127.0.0.1]:{port}/card.json")),
    );
    server.route(
        "/to-decimal",
        Reply::Redirect(format!("https://2130706434:{port}/card.json")),
    );
    let policy = IpPolicy::public_only().allow_ip(loopback());
    let fetcher = fetcher(&server, policy).build().expect("fetcher");
    let ok = fetcher
        .fetch(&server.url("127.0.0.1", "/card.json"), &Expect::default())
        .await;
    assert!(ok.is_ok(), "the exempt address itself is reachable: {ok:?}");
    for (path, refused) in [("/to-v4", "127.0.0.2"), ("/to-decimal", "127.0.0.2")] {
        let err = fetcher
            .fetch(&server.url("127.0.0.1", path), &Expect::default())
            .await
            .expect_err("refused");
        assert!(
            matches!(&err, FetchError::BlockedAddress { addr, .. } if addr.to_string() == refused),
            "{path}: {err:?}"
        );
    }
    // `::ffff:127.0.0.1` *is* the exempt address, so it fails as another host instead.
    let err = fetcher
        .fetch(&server.url("127.0.0.1", "/to-mapped"), &Expect::default())
        .await
        .expect_err("refused");
    assert!(
        matches!(err, FetchError::Redirect(RedirectError::CrossHost { .. })),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_valid_card_verifies_against_its_digest_key_and_jwks() {
    let server = TestServer::start().await;
    let key = SigningKey::generate(Algorithm::EdDsa, "card-key-1").expect("key");
    let card = signed_card(&key, None);
    let digest = digest_of(&card);
    server.route("/card.json", Reply::json(card));
    let jwks = KeySet::new(vec![key.public_key()]).expect("set").to_jwks();
    server.route("/jwks.json", Reply::json(jwks.to_string()));
    let fetcher = open_fetcher(&server);
    let url = server.url("card.test", "/card.json");

    let by_digest = fetcher
        .fetch(
            &url,
            &Expect {
                digest: Some(digest.to_uppercase().replace("SHA256:", "sha256:")),
                ..Expect::default()
            },
        )
        .await
        .expect("digest");
    assert_eq!(by_digest.digest(), digest);
    assert!(by_digest.signed() && !by_digest.verified());
    assert_eq!(by_digest.key_id(), None);
    assert_eq!(by_digest.card()["name"], "Echo Agent");
    assert!(by_digest.card().get("signatures").is_none());

    let pem_key = PublicKey::from_pem(key.public_key_pem().expect("pem").as_bytes()).expect("pem");
    for public_key in [key.public_key(), pem_key] {
        let v = fetcher
            .fetch(
                &url,
                &Expect {
                    digest: Some(digest.clone()),
                    public_key: Some(public_key),
                    jwks_url: None,
                    keys: None,
                },
            )
            .await
            .expect("key");
        assert!(v.verified());
        assert_eq!(v.key_id(), Some("card-key-1"));
    }

    let jwks_url = server.url("localhost", "/jwks.json").parse().expect("url");
    let v = fetcher
        .fetch(
            &url,
            &Expect {
                jwks_url: Some(jwks_url),
                ..Expect::default()
            },
        )
        .await
        .expect("jwks");
    assert!(v.verified());
    assert_eq!(v.key_id(), Some("card-key-1"));
}

#[tokio::test]
async fn tampered_unsigned_and_mismatched_cards_are_refused() {
    let server = TestServer::start().await;
    let key = SigningKey::generate(Algorithm::Es256, "k1").expect("key");
    let card = String::from_utf8(signed_card(&key, None)).expect("utf8");
    server.route(
        "/tampered.json",
        Reply::json(card.replace("Echo Agent", "Evil Agent")),
    );
    server.route("/unsigned.json", Reply::json(CARD));
    let fetcher = open_fetcher(&server);
    let with_key = Expect {
        public_key: Some(key.public_key()),
        ..Expect::default()
    };

    let err = fetcher
        .fetch(&server.url("127.0.0.1", "/tampered.json"), &with_key)
        .await
        .expect_err("tampered");
    assert!(
        matches!(&err, FetchError::Signature(JwsError::NoValidSignature { failures })
            if failures.iter().all(|(_, e)| *e == JwsError::BadSignature)),
        "{err:?}"
    );
    let err = fetcher
        .fetch(&server.url("127.0.0.1", "/unsigned.json"), &with_key)
        .await
        .expect_err("unsigned");
    assert_eq!(err, FetchError::Signature(JwsError::Unsigned));

    let expected = digest_of(CARD.as_bytes());
    let err = fetcher
        .fetch(
            &server.url("127.0.0.1", "/tampered.json"),
            &Expect {
                digest: Some(expected.clone()),
                ..Expect::default()
            },
        )
        .await
        .expect_err("mismatch");
    assert!(
        matches!(&err, FetchError::DigestMismatch { expected: e, actual } if *e == expected && *actual != expected),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_jku_in_the_header_is_never_followed() {
    let server = TestServer::start().await;
    let key = SigningKey::generate(Algorithm::EdDsa, "k1").expect("key");
    let jwks = KeySet::new(vec![key.public_key()]).expect("set").to_jwks();
    server.route("/jwks.json", Reply::json(jwks.to_string()));
    let jku = server.url("127.0.0.1", "/jwks.json");
    server.route("/card.json", Reply::json(signed_card(&key, Some(&jku))));
    let other = SigningKey::generate(Algorithm::EdDsa, "k1").expect("other key");
    let err = open_fetcher(&server)
        .fetch(
            &server.url("127.0.0.1", "/card.json"),
            &Expect {
                public_key: Some(other.public_key()),
                ..Expect::default()
            },
        )
        .await
        .expect_err("wrong key");
    assert!(matches!(err, FetchError::Signature(_)), "{err:?}");
    assert_eq!(server.hits("/jwks.json"), 0);
}

#[tokio::test]
async fn oversize_cards_are_refused_whatever_the_length_header_says() {
    let server = TestServer::start().await;
    let big = format!(r#"{{"name":"{}"}}"#, "a".repeat(300 * 1024));
    server.route(
        "/streamed.json",
        Reply::Unsized("application/json", big.clone().into_bytes()),
    );
    server.route("/declared.json", Reply::json(big));
    let fetcher = open_fetcher(&server);
    let err = fetcher
        .fetch(
            &server.url("127.0.0.1", "/streamed.json"),
            &Expect::default(),
        )
        .await
        .expect_err("streamed");
    assert_eq!(
        err,
        FetchError::TooLarge {
            limit: 256 * 1024,
            declared: None
        }
    );
    let err = fetcher
        .fetch(
            &server.url("127.0.0.1", "/declared.json"),
            &Expect::default(),
        )
        .await
        .expect_err("declared");
    assert!(
        matches!(err, FetchError::TooLarge { limit: 262_144, declared: Some(n) } if n > 300 * 1024),
        "{err:?}"
    );
    // A card just under the limit passes.
    let fits = format!(r#"{{"name":"{}"}}"#, "a".repeat(200 * 1024));
    server.route(
        "/fits.json",
        Reply::Unsized("application/json", fits.into_bytes()),
    );
    fetcher
        .fetch(&server.url("127.0.0.1", "/fits.json"), &Expect::default())
        .await
        .expect("fits");
}

#[tokio::test]
async fn a_stalled_server_times_out() {
    let server = TestServer::start().await;
    server.route("/slow.json", Reply::Stall);
    let limit = Duration::from_millis(300);
    let fetcher = fetcher(&server, IpPolicy::public_only().allow_private(true))
        .timeout(limit)
        .build()
        .expect("fetcher");
    let err = fetcher
        .fetch(&server.url("127.0.0.1", "/slow.json"), &Expect::default())
        .await
        .expect_err("slow");
    assert_eq!(err, FetchError::Timeout { limit });
}

#[tokio::test]
async fn redirects_stay_on_the_host_and_stop_after_three() {
    let server = TestServer::start().await;
    let port = server.addr.port();
    server.route("/card.json", Reply::json(CARD));
    server.route("/r1", Reply::Redirect("/card.json".into()));
    server.route("/r2", Reply::Redirect("r1".into()));
    server.route(
        "/r3",
        Reply::Redirect(format!("https://localhost:{port}/r2")),
    );
    server.route("/r4", Reply::Redirect("/r3".into()));
    server.route(
        "/cross",
        Reply::Redirect(format!("https://127.0.0.1:{port}/card.json")),
    );
    server.route(
        "/other-port",
        Reply::Redirect(format!(
            "https://localhost:{}/card.json",
            port.wrapping_add(1)
        )),
    );
    server.route("/empty", Reply::Redirect(String::new()));
    let fetcher = open_fetcher(&server);

    let ok = fetcher
        .fetch(&server.url("localhost", "/r3"), &Expect::default())
        .await
        .expect("three redirects");
    assert_eq!(ok.card()["name"], "Echo Agent");
    let err = fetcher
        .fetch(&server.url("localhost", "/r4"), &Expect::default())
        .await
        .expect_err("four");
    assert_eq!(
        err,
        FetchError::Redirect(RedirectError::TooMany { limit: 3 })
    );
    for path in ["/cross", "/other-port"] {
        let err = fetcher
            .fetch(&server.url("localhost", path), &Expect::default())
            .await
            .expect_err("cross");
        assert!(
            matches!(err, FetchError::Redirect(RedirectError::CrossHost { .. })),
            "{path}: {err:?}"
        );
    }
}

#[tokio::test]
async fn non_json_duplicate_keys_and_bad_status_are_refused() {
    let server = TestServer::start().await;
    server.route("/page.html", Reply::Body("text/html", CARD.into()));
    server.route("/untyped", Reply::Body("text/plain", CARD.into()));
    server.route(
        "/dup.json",
        Reply::json(r#"{"name":"Echo","skills":[{"id":"a","id":"b"}]}"#),
    );
    server.route("/trailing.json", Reply::json(r#"{"name":"Echo"} {}"#));
    server.route("/array.json", Reply::json("[1]"));
    let fetcher = open_fetcher(&server);
    let fetch = |path: &'static str| fetch_path(&fetcher, &server, path);

    assert_eq!(
        fetch("/page.html").await,
        Err(FetchError::NotJson {
            content_type: Some("text/html".into())
        })
    );
    assert!(matches!(
        fetch("/untyped").await,
        Err(FetchError::NotJson { .. })
    ));
    assert_eq!(
        fetch("/dup.json").await,
        Err(FetchError::DuplicateKey {
            name: "id".into(),
            at: "/skills/0".into()
        })
    );
    assert!(matches!(
        fetch("/trailing.json").await,
        Err(FetchError::Strict(_))
    ));
    assert!(matches!(
        fetch("/array.json").await,
        Err(FetchError::Card(_))
    ));
    assert_eq!(
        fetch("/missing.json").await,
        Err(FetchError::Status {
            status: 404,
            url: server.url("127.0.0.1", "/missing.json")
        })
    );
}

#[tokio::test]
async fn plain_http_and_untrusted_certificates_are_refused() {
    let server = TestServer::start().await;
    server.route("/card.json", Reply::json(CARD));
    let fetcher = open_fetcher(&server);
    let http = format!("http://127.0.0.1:{}/card.json", server.addr.port());
    assert_eq!(
        fetcher.fetch(&http, &Expect::default()).await,
        Err(FetchError::SchemeNotAllowed {
            scheme: "http".into()
        })
    );
    // A client that trusts another CA.
    let stranger = TestServer::start().await;
    let fetcher = fetcher_trusting(&stranger.ca_der);
    let err = fetcher
        .fetch(&server.url("127.0.0.1", "/card.json"), &Expect::default())
        .await
        .expect_err("untrusted");
    assert!(matches!(err, FetchError::Tls { .. }), "{err:?}");
}

fn fetcher_trusting(ca_der: &[u8]) -> CardFetcher {
    CardFetcher::builder()
        .net(
            SafeClient::builder()
                .allow_private(true)
                .add_root_certificate(ca_der.to_vec())
                .only_given_roots(true),
        )
        .build()
        .expect("fetcher")
}

/// Fetches `path` from the server at 127.0.0.1 with no expectations.
async fn fetch_path(
    fetcher: &CardFetcher,
    server: &TestServer,
    path: &str,
) -> Result<ferry_trust::fetch::Verified, FetchError> {
    fetcher
        .fetch(&server.url("127.0.0.1", path), &Expect::default())
        .await
}

#[tokio::test]
async fn the_jwks_is_fetched_under_the_same_rules() {
    let server = TestServer::start().await;
    let port = server.addr.port();
    let key = SigningKey::generate(Algorithm::Es384, "k1").expect("key");
    server.route("/card.json", Reply::json(signed_card(&key, None)));
    let jwks = KeySet::new(vec![key.public_key()]).expect("set").to_jwks();
    server.route(
        "/jwks.html",
        Reply::Body("text/html", jwks.to_string().into()),
    );
    let fetcher = fetcher(&server, IpPolicy::public_only().allow_ip(loopback()))
        .build()
        .expect("fetcher");
    let card_url = server.url("127.0.0.1", "/card.json");
    let expect = |jwks: String| Expect {
        jwks_url: Some(jwks.parse().expect("url")),
        ..Expect::default()
    };

    let err = fetcher
        .fetch(
            &card_url,
            &expect(format!("https://127.0.0.2:{port}/jwks.json")),
        )
        .await
        .expect_err("blocked jwks");
    assert!(
        matches!(&err, FetchError::Jwks { error, .. }
            if matches!(**error, FetchError::BlockedAddress { .. })),
        "{err:?}"
    );
    let err = fetcher
        .fetch(&card_url, &expect(server.url("127.0.0.1", "/jwks.html")))
        .await
        .expect_err("html jwks");
    assert!(
        matches!(&err, FetchError::Jwks { error, .. }
            if matches!(**error, FetchError::NotJson { .. })),
        "{err:?}"
    );
}
