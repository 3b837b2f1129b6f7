//! `"auto": true` and saved profiles through the whole agent, in a real browser: fields found
//! by their `autocomplete` tokens and by what their labels mean in English, German, French
//! and Spanish; explicit values win; secrets are never filled; card numbers only from a
//! profile marked for cards; context notes stay in their conversation; profiles stay with
//! their caller.

use crate::agent::{shop_config, submitted, with_agent};
use crate::support::agent::{FormsServer, report, state};
use crate::support::site::TestSite;
use crate::support::{bounded, chromium_or_skip};
use ferry_server::{ScopedToken, ServerConfig};
use serde_json::{Map, Value, json};

/// Ada's profile: WHATWG names and one free label.
fn ada() -> Value {
    json!({
        "honorific-prefix": "Frau",
        "given-name": "Ada",
        "family-name": "Lovelace",
        "email": "ada@example.com",
        "tel": "+44 20 7946 0000",
        "street-address": "12 St James's Square\nFlat 3",
        "postal-code": "SW1Y 4JH",
        "address-level2": "London",
        "country": "FR",
        "bday": "1815-12-10",
        "organization": "Analytical Engines Ltd",
        "cc-name": "A. Lovelace",
        "cc-number": "4111 1111 1111 1111",
        "cc-exp": "12/30",
        "Mitgliedsnummer": "M-1815"
    })
}

/// Saves `values` as profile `name` (with `cards`) in a request of its own.
async fn save_profile(server: &FormsServer, name: &str, values: Value, cards: bool) {
    let answer = server
        .send(
            "profiles",
            None,
            json!({"profile": {"set": {"name": name, "values": values, "cards": cards}}}),
        )
        .await;
    let data = &answer["message"]["parts"][1]["data"];
    assert_eq!(data["saved"]["name"], name, "{answer}");
}

/// Each field's current value, by its `name` attribute.
fn values(report: &Value) -> Map<String, Value> {
    report["fields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| Some((f["name"].as_str()?.to_owned(), f["value"].clone())))
        .collect()
}

/// Asserts the page's fields hold `expected` (name → value) and that `empty` are empty.
fn assert_fields(report: &Value, expected: &[(&str, &str)], empty: &[&str]) {
    let got = values(report);
    for (name, value) in expected {
        assert_eq!(
            got.get(*name),
            Some(&json!(value)),
            "field {name}: {report}"
        );
    }
    for name in empty {
        assert_eq!(
            got.get(*name),
            Some(&json!("")),
            "field {name} must stay empty: {report}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn autocomplete_tokens_decide_and_secrets_and_cards_stay_empty() {
    with_agent("auto::tokens", shop_config, |site, server| async move {
        save_profile(&server, "home", ada(), false).await;
        let url = site.url("shop.test", "/autofill-en.html");
        let result = server
            .send("en-1", None, json!({"url": url, "auto": true}))
            .await;
        assert_eq!(state(&result), "TASK_STATE_COMPLETED", "{result}");
        let first = report(&result);
        assert_fields(
            &first,
            &[
                ("a", "Ada"),
                ("b", "Lovelace"),
                ("c", "ada@example.com"),
                ("d", "+44 20 7946 0000"),
                ("e", "12 St James's Square"),
                ("f", "SW1Y 4JH"),
                ("g", "London"),
                ("h", "Analytical Engines Ltd"),
                ("ccname", "A. Lovelace"),
            ],
            &["pw", "otp", "ccnum", "ccexp", "csc", "note"],
        );
        let autofilled = first["autofilled"].as_object().expect("autofilled");
        assert_eq!(autofilled.len(), 9, "{first}");
        assert!(autofilled.values().all(|from| from == "profile:home"));
        assert_eq!(autofilled["Your details (1)"], "profile:home");

        // The same values from a profile marked for cards: number and expiry too, never the CVC.
        save_profile(&server, "home", ada(), true).await;
        let result = server
            .send("en-2", None, json!({"url": url, "auto": true}))
            .await;
        let cards = report(&result);
        assert_fields(
            &cards,
            &[("ccnum", "4111 1111 1111 1111"), ("ccexp", "12/30")],
            &["pw", "otp", "csc"],
        );
        assert!(site.submissions().is_empty(), "auto never submits");
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labels_mean_their_purpose_in_german_french_and_spanish() {
    with_agent("auto::languages", shop_config, |site, server| async move {
        save_profile(&server, "default", ada(), false).await;
        let de = server
            .send(
                "de",
                None,
                json!({"url": site.url("shop.test", "/autofill-de.html"), "auto": true}),
            )
            .await;
        assert_fields(
            &report(&de),
            &[
                ("anrede", "Frau"),
                ("vorname", "Ada"),
                ("nachname", "Lovelace"),
                ("mail", "ada@example.com"),
                ("tel", "+44 20 7946 0000"),
                ("strasse", "12 St James's Square, Flat 3"),
                ("plz", "SW1Y 4JH"),
                ("ort", "London"),
                ("geburtsdatum", "1815-12-10"),
                ("mitgliedsnummer", "M-1815"),
            ],
            &["passwort", "farbe"],
        );
        assert_eq!(report(&de)["missing"], json!([]), "{de}");

        let fr = server
            .send(
                "fr",
                None,
                json!({"url": site.url("shop.test", "/autofill-fr.html"), "auto": true}),
            )
            .await;
        assert_fields(
            &report(&fr),
            &[
                ("champ1", "Ada"),
                ("champ2", "Lovelace"),
                ("c", "ada@example.com"),
                ("t", "+44 20 7946 0000"),
                ("a", "12 St James's Square, Flat 3"),
                ("cp", "SW1Y 4JH"),
                ("v", "London"),
                ("p", "FR"),
                ("s", "Analytical Engines Ltd"),
            ],
            &["mdp", "cv"],
        );

        let es = server
            .send(
                "es",
                None,
                json!({"url": site.url("shop.test", "/autofill-es.html"), "auto": true}),
            )
            .await;
        assert_fields(
            &report(&es),
            &[
                ("nombre", "Ada"),
                ("apellidos", "Lovelace"),
                ("correo", "ada@example.com"),
                ("movil", "+44 20 7946 0000"),
                ("direccion", "12 St James's Square, Flat 3"),
                ("cp", "SW1Y 4JH"),
                ("ciudad", "London"),
                ("empresa", "Analytical Engines Ltd"),
            ],
            &["codigo"],
        );
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explicit_values_win_and_notes_stay_in_their_conversation() {
    with_agent("auto::context", shop_config, |site, server| async move {
        save_profile(&server, "default", ada(), false).await;
        let en = site.url("shop.test", "/autofill-en.html");
        let de = site.url("shop.test", "/autofill-de.html");
        // An explicit value wins over the profile, and the conversation notes it.
        let first = server
            .send(
                "work",
                None,
                json!({"url": en, "values": {"Contact": "ada@work.example"}, "auto": true}),
            )
            .await;
        let first = report(&first);
        assert_fields(&first, &[("c", "ada@work.example"), ("a", "Ada")], &[]);
        assert!(
            first["autofilled"].get("Contact").is_none(),
            "the explicit value is not auto-filled: {first}"
        );
        // A later form of the same conversation takes the noted value before the profile…
        let later = server
            .send("work", None, json!({"url": de, "auto": true}))
            .await;
        let later = report(&later);
        assert_fields(&later, &[("mail", "ada@work.example"), ("vorname", "Ada")], &[]);
        assert_eq!(later["autofilled"]["E-Mail-Adresse"], "context", "{later}");
        assert_eq!(later["autofilled"]["Vorname"], "profile:default", "{later}");
        // …and another conversation never sees it.
        let other = server.send("home", None, json!({"url": de, "auto": true})).await;
        let other = report(&other);
        assert_fields(&other, &[("mail", "ada@example.com")], &[]);
        assert_eq!(other["autofilled"]["E-Mail-Adresse"], "profile:default");

        // Auto fills toward a submit like explicit values do: the confirmation still decides.
        let submit = server
            .send(
                "submit",
                None,
                json!({"url": de, "auto": true, "values": {"Passwort": "not from a profile"}, "submit": true}),
            )
            .await;
        assert_eq!(state(&submit), "TASK_STATE_INPUT_REQUIRED", "{submit}");
        assert_eq!(report(&submit)["pendingSubmit"], true, "{submit}");
        let task = crate::support::agent::task_id(&submit);
        let done = server
            .send("submit", Some(&task), json!({"confirm": true}))
            .await;
        assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
        let posted = submitted(&site);
        assert!(posted.contains(&("nachname".into(), "Lovelace".into())), "{posted:?}");
        assert!(posted.contains(&("passwort".into(), "not from a profile".into())));
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_with_several_profiles_names_one_or_says_which() {
    with_agent("auto::several", shop_config, |site, server| async move {
        save_profile(&server, "home", json!({"given-name": "Ada"}), false).await;
        save_profile(&server, "work", json!({"given-name": "Countess"}), false).await;
        let de = site.url("shop.test", "/autofill-de.html");
        let unnamed = report(
            &server
                .send("s1", None, json!({"url": de, "auto": true}))
                .await,
        );
        assert_fields(&unnamed, &[], &["vorname"]);
        let warnings = unnamed["warnings"].to_string();
        assert!(warnings.contains("home, work"), "{unnamed}");
        let named = report(
            &server
                .send(
                    "s2",
                    None,
                    json!({"url": de, "auto": true, "profile": "work"}),
                )
                .await,
        );
        assert_fields(&named, &[("vorname", "Countess")], &[]);
        assert_eq!(named["autofilled"]["Vorname"], "profile:work");
        // A profile that does not exist is the request's error, named.
        let missing = server
            .send_raw(
                "s3",
                None,
                json!({"url": de, "auto": true, "profile": "gone"}),
            )
            .await;
        assert!(
            missing["error"]["message"].to_string().contains("gone"),
            "{missing}"
        );
        server
    })
    .await;
}

/// A server whose two callers are Alice and Bob (a scoped token each), which also lets
/// anonymous callers in.
async fn two_callers(site: &TestSite) -> FormsServer {
    let token = |token: &str, caller: &str| ScopedToken {
        token: token.into(),
        agents: vec![String::new()],
        read_only: false,
        caller: Some(caller.into()),
        admin: false,
    };
    FormsServer::start_with(
        shop_config(site),
        ServerConfig {
            token: Some("operator-token".into()),
            allow_anonymous: true,
            scoped_tokens: vec![token("alice-token", "alice"), token("bob-token", "bob")],
            ..ServerConfig::default()
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_callers_never_see_each_others_profiles() {
    if !chromium_or_skip("auto::callers") {
        return;
    }
    bounded(async {
        let site = TestSite::start().await;
        let server = two_callers(&site).await;
        let set =
            json!({"profile": {"set": {"name": "default", "values": {"given-name": "Alice"}}}});
        let saved = server.send_as("alice-token", "a", set).await;
        assert_eq!(
            saved["result"]["message"]["parts"][1]["data"]["saved"]["version"], 1,
            "{saved}"
        );
        // Bob has no such profile, lists none, and cannot delete Alice's.
        for command in [json!({"get": "default"}), json!({"delete": "default"})] {
            let refused = server
                .send_as("bob-token", "b", json!({"profile": command}))
                .await;
            assert_eq!(refused["error"]["code"], -32602, "{refused}");
            assert!(
                refused["error"]["message"]
                    .to_string()
                    .contains("no profile named"),
                "{refused}"
            );
        }
        let listed = server
            .send_as("bob-token", "b", json!({"profile": {"list": true}}))
            .await;
        assert_eq!(
            listed["result"]["message"]["parts"][1]["data"],
            json!({"profiles": []})
        );
        // The same contextId: Bob's auto fills nothing of Alice's; Alice's fills hers.
        let de = site.url("shop.test", "/autofill-de.html");
        let bob = server
            .send_as("bob-token", "shared-ctx", json!({"url": de, "auto": true}))
            .await;
        assert_fields(&report(&bob["result"]), &[], &["vorname"]);
        let alice = server
            .send_as(
                "alice-token",
                "shared-ctx",
                json!({"url": de, "auto": true}),
            )
            .await;
        assert_fields(&report(&alice["result"]), &[("vorname", "Alice")], &[]);
        // An anonymous caller is nobody's: no profiles, and auto uses its conversation alone.
        let anonymous = server
            .send_anonymous("anon", json!({"profile": {"list": true}}))
            .await;
        assert_eq!(anonymous["error"]["code"], -32600, "{anonymous}");
        assert!(
            anonymous.to_string().contains("UNAUTHENTICATED"),
            "{anonymous}"
        );
        let auto = server
            .send_anonymous("anon", json!({"url": de, "auto": true}))
            .await;
        let auto = report(&auto["result"]);
        assert_fields(&auto, &[], &["vorname"]);
        assert!(
            auto["warnings"].to_string().contains("call with a token"),
            "{auto}"
        );
        server.agent().pool().shutdown().await;
    })
    .await;
}
