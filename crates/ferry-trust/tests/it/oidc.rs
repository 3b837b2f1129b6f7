//! An OpenID provider on 127.0.0.1 (discovery and key set served by a real HTTP server,
//! counting its answers): keys fetched on first use, a rotation picked up from the unknown
//! `kid`, unknown `kid`s refetching at most once per interval, a provider that names another
//! issuer refused, a private address refused unless allowed.

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use ferry_trust::jwt::{self, JwtError, Rules};
use ferry_trust::keys::{Algorithm, KeySet, PublicKey, SigningKey};
use ferry_trust::oidc::{OidcError, Provider, ProviderSettings};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What the test provider serves.
struct Published {
    issuer: Mutex<String>,
    keys: Mutex<Vec<PublicKey>>,
    jwks_fetches: AtomicUsize,
}

async fn discovery(State(p): State<Arc<Published>>) -> axum::Json<Value> {
    let issuer = p.issuer.lock().expect("lock").clone();
    axum::Json(json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks")}))
}

async fn jwks(State(p): State<Arc<Published>>) -> axum::Json<Value> {
    p.jwks_fetches.fetch_add(1, Ordering::SeqCst);
    let keys = p.keys.lock().expect("lock").clone();
    let public = KeySet::new(keys).expect("a set");
    let mut doc = public.to_jwks();
    // Providers publish encryption keys beside their signing keys: skipped, not refused.
    doc["keys"].as_array_mut().expect("keys").push(json!({
        "kty": "RSA", "use": "enc", "alg": "RSA-OAEP", "kid": "enc-1",
        "n": "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw",
        "e": "AQAB"
    }));
    axum::Json(doc)
}

/// A provider on 127.0.0.1 that publishes the public halves of `keys`; its issuer URL.
async fn serve(keys: &[&SigningKey]) -> (Arc<Published>, String) {
    let keys = keys.iter().map(|k| k.public_key()).collect();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let issuer = format!("http://{}", listener.local_addr().expect("addr"));
    let published = Arc::new(Published {
        issuer: Mutex::new(issuer.clone()),
        keys: Mutex::new(keys),
        jwks_fetches: AtomicUsize::new(0),
    });
    let app = Router::new()
        .route("/.well-known/openid-configuration", get(discovery))
        .route("/jwks", get(jwks))
        .with_state(published.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (published, issuer)
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0))
}

fn token(key: &SigningKey, issuer: &str) -> String {
    let claims = json!({"iss": issuer, "aud": "ferry", "sub": "ada", "exp": now() + 300});
    jwt::sign(key, &claims).expect("signs")
}

fn settings(issuer: &str, refetch_min_interval: Duration) -> ProviderSettings {
    ProviderSettings {
        allow_private: true,
        refetch_min_interval,
        ..ProviderSettings::new(issuer)
    }
}

fn key(kid: &str) -> SigningKey {
    SigningKey::generate(Algorithm::Es256, kid).expect("a key")
}

#[tokio::test]
async fn keys_are_fetched_once_and_a_rotation_is_picked_up() {
    let first = key("k1");
    let (published, issuer) = serve(&[&first]).await;
    let provider = Provider::new(settings(&issuer, Duration::ZERO)).expect("a provider");
    let rules = Rules::new(&issuer, "ferry");
    for _ in 0..3 {
        let claims = provider
            .verify(&token(&first, &issuer), &rules, now())
            .await
            .expect("valid");
        assert_eq!(claims.subject, "ada");
    }
    assert_eq!(
        published.jwks_fetches.load(Ordering::SeqCst),
        1,
        "the keys are kept between tokens"
    );
    // The provider rotates: a token of the new key makes the server fetch the keys again.
    let second = key("k2");
    published
        .keys
        .lock()
        .expect("lock")
        .push(second.public_key());
    let claims = provider
        .verify(&token(&second, &issuer), &rules, now())
        .await
        .expect("the new key is found");
    assert_eq!(claims.key_id.as_deref(), Some("k2"));
    assert_eq!(published.jwks_fetches.load(Ordering::SeqCst), 2);
}

/// Tokens naming keys the provider does not publish make the server fetch the keys again at
/// most once per interval, however many come.
#[tokio::test]
async fn unknown_keys_refetch_at_most_once_per_interval() {
    let known = key("k1");
    let (published, issuer) = serve(&[&known]).await;
    let provider = Provider::new(settings(&issuer, Duration::from_secs(3600))).expect("a provider");
    let rules = Rules::new(&issuer, "ferry");
    provider
        .verify(&token(&known, &issuer), &rules, now())
        .await
        .expect("valid");
    for n in 0..20 {
        let stranger = key(&format!("made-up-{n}"));
        let refused = provider
            .verify(&token(&stranger, &issuer), &rules, now())
            .await
            .expect_err("an unknown key");
        assert!(
            matches!(refused, OidcError::Token(JwtError::UnknownKey { .. })),
            "{refused}"
        );
        assert!(refused.is_token_refusal());
    }
    assert_eq!(
        published.jwks_fetches.load(Ordering::SeqCst),
        2,
        "the first unknown key fetches the keys again at once, the others within the interval do not"
    );
}

/// A discovery document that names another issuer is refused (the provider is not the one
/// configured), and so is a private address the settings do not allow.
#[tokio::test]
async fn a_provider_must_be_the_configured_issuer_where_it_may_be() {
    let signer = key("k1");
    let (published, issuer) = serve(&[&signer]).await;
    *published.issuer.lock().expect("lock") = "https://other.example".into();
    let provider = Provider::new(settings(&issuer, Duration::ZERO)).expect("a provider");
    let rules = Rules::new(&issuer, "ferry");
    let refused = provider
        .verify(&token(&signer, &issuer), &rules, now())
        .await
        .expect_err("another issuer's document");
    assert!(matches!(refused, OidcError::Discovery(_)), "{refused}");
    assert!(
        !refused.is_token_refusal(),
        "the provider failed, not the token"
    );
    let public_only = ProviderSettings::new(&issuer);
    let refused = Provider::new(public_only).expect_err("a loopback issuer needs allowing");
    assert!(matches!(refused, OidcError::Issuer { .. }), "{refused}");
}
