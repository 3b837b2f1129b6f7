//! `ferry keygen` and `ferry card digest|canonicalize|sign|verify` as a user runs them, and the
//! signed card `ferry serve` publishes:
//!
//! | test | what it proves |
//! |------|----------------|
//! | `keygen_writes_private_public_and_jwk_for_every_algorithm` | ES256, ES384, EdDSA, RS256, PS256: `PREFIX.pem` (PKCS#8, mode 0600), `PREFIX.pub.pem`, `PREFIX.jwk.json` with the kid, the alg, the right `kty`/`crv` and no private member; the default kid is the prefix's file name |
//! | `sign_then_verify_round_trips_for_every_algorithm` | `card sign` → `card verify --key` (PEM and JWK) exits 0 and names kid, alg and profile, text and `-o json`; the card's members are kept |
//! | `tampered_cards_are_refused_with_a_message` | a changed field, a changed signature, a signature by another key, and a card without signatures each exit 1 with a message (and `verified:false` in JSON) |
//! | `verify_with_a_jwks_file` | `--jwks FILE` picks the key by kid among several; a JWKS without the kid is refused |
//! | `dash_reads_standard_input` | `-` works for `digest`, `canonicalize`, `sign` and `verify` and gives the same results as a file |
//! | `canonicalize_and_digest_match_the_spec_vector` | spec §6 self-generated vector: `canonicalize` prints exactly the canonical payload, `digest` prints `sha256:` + its SHA-256 (computed independently), `sign` with the vector's Ed25519 key reproduces its `protected` and `signature`, and `verify` with its JWK accepts it |
//! | `duplicate_member_names_are_refused` | a duplicate member (top level, nested, or spelled with an escape) makes `digest`, `canonicalize`, `sign` and `verify` exit 1 naming the duplicate |
//! | `usage_errors_exit_2` | `verify` without `--key`/`--jwks`, both at once, and an unknown `keygen --alg` are usage errors |
//! | `served_card_verifies_with_its_downloaded_jwks` | `ferry serve --sign-key --sign-kid`: the card at `/.well-known/agent-card.json` verifies with `card verify --jwks` of `/.well-known/jwks.json`; a tampered copy does not |
//! | `config_with_two_signing_keys_and_one_announced_key` | `signing_keys` (two) + `announced_keys` (one) in `--config`: two signatures (kids `a`, `b`), a JWKS of three keys (`a`, `b`, `c`), each signature verifies on its own, the announced key alone verifies nothing |
//! | `card_url_fetches_and_verifies_the_served_card` | `ferry card URL --allow-private` against that server: `--jwks URL` and `--key` verify, `-o json` reports the same digest as `card digest` of the downloaded file, `--expect-digest` with it passes; a wrong pin and a wrong key are each refused (exit 1); the loopback URL needs no `--allow-private` (the address rule of `ferry send`), a private one is refused without it |
//!
//! Everything runs the `ferry` binary built by cargo with a time limit, in scratch directories
//! under cargo's target tmpdir; HTTP uses the standard library (`support::http_get`).

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use support::{
    CARD_PATH, COMMAND_TIMEOUT, JWKS_PATH, Server, ferry, run_with_timeout, s, scratch_dir,
    signing_config, text, with_ext, write,
};

/// Every algorithm `ferry keygen` and `ferry card sign` support, with the JWK `kty`/`crv` they
/// must produce.
const ALGS: [(&str, &str, Option<&str>); 5] = [
    ("ES256", "EC", Some("P-256")),
    ("ES384", "EC", Some("P-384")),
    ("EdDSA", "OKP", Some("Ed25519")),
    ("RS256", "RSA", None),
    ("PS256", "RSA", None),
];

/// JWK members that belong to private keys only (RFC 7518 §6.2.2, §6.3.2, §6.4.1; RFC 8037).
const PRIVATE_MEMBERS: [&str; 8] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/// A small valid v1.0 card.
const CARD: &str = r#"{"name":"CLI Agent","description":"Exercises the card commands","version":"2.0.0","supportedInterfaces":[{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":false,"pushNotifications":false},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"s1","name":"Skill one","description":"Does one thing","tags":["one"]}]}"#;

/// Spec §6 self-generated vector: the card, its canonical payload, the SHA-256 of that payload
/// (computed with Python's `hashlib`, not with ferry), the Ed25519 key with seed bytes 0..31 as
/// PKCS#8 PEM, its public JWK, and the resulting `protected` and `signature`.
const SPEC_CARD: &str = r#"{"name":"Echo Agent","description":"Echoes text back","version":"1.0.0","supportedInterfaces":[{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":true,"pushNotifications":false},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"echo","name":"Echo","description":"Echo input","tags":["echo"]}]}"#;
/// The vector's canonical payload.
const SPEC_CANONICAL: &str = r#"{"capabilities":{"pushNotifications":false,"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"description":"Echoes text back","name":"Echo Agent","skills":[{"description":"Echo input","id":"echo","name":"Echo","tags":["echo"]}],"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"https://agent.example.com/a2a"}],"version":"1.0.0"}"#;
/// SHA-256 of [`SPEC_CANONICAL`].
const SPEC_SHA256: &str = "e09f569f9b9eedb53bf944e8bf2408bed70e4684d72e4527e9eda0f612268ceb";
/// The vector's private key.
const SPEC_SEED_PEM: &str = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f\n-----END PRIVATE KEY-----\n";
/// The vector's public JWK.
const SPEC_JWK: &str = r#"{"kty":"OKP","crv":"Ed25519","x":"A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg","kid":"test-key-1"}"#;
/// The vector's protected header.
const SPEC_PROTECTED: &str = "eyJhbGciOiJFZERTQSIsInR5cCI6IkpPU0UiLCJraWQiOiJ0ZXN0LWtleS0xIn0";
/// The vector's signature.
const SPEC_SIGNATURE: &str =
    "oxpi-pb114gY6MFt63puNlSQK9XN9McrQmzpAfyeSWUKZ6IKvZwNVd_q-dtIyvW-WylUTsWv1wqjNcQW5f-gBQ";

/// `ferry <args>` with a time limit.
fn run(args: &[&str]) -> Output {
    run_with_timeout(ferry().args(args), None, COMMAND_TIMEOUT)
}

/// `ferry <args>` with `input` on standard input.
fn run_stdin(args: &[&str], input: &[u8]) -> Output {
    run_with_timeout(ferry().args(args), Some(input), COMMAND_TIMEOUT)
}

/// Asserts exit 0 and returns stdout.
fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: expected exit 0, got {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Asserts exit `code` and that stderr contains `needle`; returns stdout.
fn fails(out: Output, code: i32, what: &str, needle: &str) -> String {
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{what}: expected exit {code}, got {}\nstdout:\n{}\nstderr:\n{stderr}",
        out.status,
        text(&out.stdout)
    );
    assert!(
        stderr.contains(needle),
        "{what}: expected {needle:?} on stderr:\n{stderr}"
    );
    text(&out.stdout)
}

/// Parses JSON text, with the text in the panic message.
fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

/// `ferry keygen --alg ALG --out DIR/key-KID --kid KID`; returns the prefix.
fn keygen(dir: &Path, alg: &str, kid: &str) -> PathBuf {
    let prefix = dir.join(format!("key-{kid}"));
    ok(
        run(&["keygen", "--alg", alg, "--out", s(&prefix), "--kid", kid]),
        &format!("keygen {alg}"),
    );
    prefix
}

/// `ferry card sign FILE --key PREFIX.pem --kid KID --alg ALG`; returns the signed card text.
fn sign(card: &Path, prefix: &Path, kid: &str, alg: &str) -> String {
    ok(
        run(&[
            "card",
            "sign",
            s(card),
            "--key",
            s(&with_ext(prefix, ".pem")),
            "--kid",
            kid,
            "--alg",
            alg,
        ]),
        &format!("card sign {alg}"),
    )
}

/// Replaces the one occurrence of `from` in `text` (asserting it is there).
fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert_eq!(
        text.matches(from).count(),
        1,
        "{from:?} must occur once in:\n{text}"
    );
    text.replacen(from, to, 1)
}

/// The decoded protected headers' `kid`s of a card's signatures, in order.
fn signature_kids(card: &Value) -> Vec<String> {
    card["signatures"]
        .as_array()
        .expect("the card has signatures")
        .iter()
        .map(|sig| {
            let protected = sig["protected"].as_str().expect("protected is a string");
            let header = json(&text(&base64url_decode(protected)));
            header["kid"]
                .as_str()
                .expect("the header has a kid")
                .to_owned()
        })
        .collect()
}

/// Unpadded base64url decoding (enough for protected headers).
fn base64url_decode(input: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'-' => 62,
            b'_' => 63,
            _ => panic!("not base64url: {input:?}"),
        }
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for &c in input.as_bytes() {
        acc = (acc << 6) | value(c);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

#[test]
fn keygen_writes_private_public_and_jwk_for_every_algorithm() {
    let dir = scratch_dir("keygen");
    for (alg, kty, crv) in ALGS {
        let kid = format!("kid-{alg}");
        let prefix = keygen(&dir, alg, &kid);
        let private = with_ext(&prefix, ".pem");
        let public = with_ext(&prefix, ".pub.pem");
        let jwk_path = with_ext(&prefix, ".jwk.json");

        let private_pem = std::fs::read_to_string(&private).expect("PREFIX.pem exists");
        assert!(
            private_pem.starts_with("-----BEGIN PRIVATE KEY-----"),
            "{alg}: PKCS#8 PEM expected:\n{private_pem}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&private)
                .expect("stat PREFIX.pem")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{alg}: private key mode {mode:o}");
        }
        let public_pem = std::fs::read_to_string(&public).expect("PREFIX.pub.pem exists");
        assert!(
            public_pem.starts_with("-----BEGIN PUBLIC KEY-----"),
            "{alg}: SPKI PEM expected:\n{public_pem}"
        );
        assert!(!public_pem.contains("PRIVATE"), "{alg}: {public_pem}");

        let jwk = json(&std::fs::read_to_string(&jwk_path).expect("PREFIX.jwk.json exists"));
        assert_eq!(jwk["kid"], kid.as_str(), "{alg}: {jwk}");
        assert_eq!(jwk["alg"], alg, "{alg}: {jwk}");
        assert_eq!(jwk["kty"], kty, "{alg}: {jwk}");
        match crv {
            Some(crv) => assert_eq!(jwk["crv"], crv, "{alg}: {jwk}"),
            None => assert!(
                jwk["n"].is_string() && jwk["e"] == "AQAB",
                "{alg}: RSA modulus and exponent expected: {jwk}"
            ),
        }
        let object = jwk.as_object().expect("a JWK is an object");
        for member in PRIVATE_MEMBERS {
            assert!(
                !object.contains_key(member),
                "{alg}: the public JWK carries private member {member:?}: {jwk}"
            );
        }
    }
    // Without --kid the kid is the prefix's file name.
    let prefix = dir.join("default-kid");
    ok(
        run(&["keygen", "--alg", "EdDSA", "--out", s(&prefix)]),
        "keygen without --kid",
    );
    let jwk = json(
        &std::fs::read_to_string(with_ext(&prefix, ".jwk.json")).expect("PREFIX.jwk.json exists"),
    );
    assert_eq!(jwk["kid"], "default-kid", "{jwk}");
}

#[test]
fn sign_then_verify_round_trips_for_every_algorithm() {
    let dir = scratch_dir("round-trip");
    let card = write(&dir, "card.json", CARD);
    for (alg, _, _) in ALGS {
        let kid = format!("rt-{alg}");
        let prefix = keygen(&dir, alg, &kid);
        let signed = sign(&card, &prefix, &kid, alg);
        let value = json(&signed);
        assert_eq!(signature_kids(&value), [kid.as_str()], "{alg}: {signed}");
        assert_eq!(value["name"], "CLI Agent", "{alg}: members are kept");
        assert_eq!(value["capabilities"]["streaming"], false, "{alg}: {signed}");
        let signed_path = write(&dir, &format!("signed-{alg}.json"), &signed);

        for key in [".pub.pem", ".jwk.json"] {
            let shown = ok(
                run(&[
                    "card",
                    "verify",
                    s(&signed_path),
                    "--key",
                    s(&with_ext(&prefix, key)),
                ]),
                &format!("verify {alg} with {key}"),
            );
            assert!(
                shown.contains(&format!("by key {kid:?} ({alg}, profile strict)")),
                "{alg} {key}: {shown}"
            );
        }
        let verdict = json(&ok(
            run(&[
                "card",
                "verify",
                s(&signed_path),
                "--key",
                s(&with_ext(&prefix, ".pub.pem")),
                "-o",
                "json",
            ]),
            &format!("verify {alg} -o json"),
        ));
        assert_eq!(verdict["verified"], true, "{verdict}");
        assert_eq!(verdict["alg"], alg, "{verdict}");
        assert_eq!(verdict["keyId"], kid.as_str(), "{verdict}");
        assert_eq!(verdict["profile"], "strict", "{verdict}");
        // The digest ignores `signatures`: the same as the unsigned card's.
        let digest = ok(run(&["card", "digest", s(&card)]), "digest");
        assert_eq!(verdict["digest"], digest.trim(), "{verdict}");
    }
}

#[test]
fn tampered_cards_are_refused_with_a_message() {
    let dir = scratch_dir("tampered");
    let card = write(&dir, "card.json", CARD);
    let prefix = keygen(&dir, "ES256", "t");
    let other = keygen(&dir, "ES256", "other");
    let signed = sign(&card, &prefix, "t", "ES256");
    let key = with_ext(&prefix, ".pub.pem");
    let verify = |name: &str, body: &str, key: &Path| {
        let path = write(&dir, name, body);
        run(&["card", "verify", s(&path), "--key", s(key)])
    };

    let field = replace_once(&signed, "Does one thing", "Does two things");
    fails(
        verify("field.json", &field, &key),
        1,
        "a changed field",
        "the card did not verify",
    );
    for profile in ["strict", "a2a-sdk-compat"] {
        let path = write(&dir, "field.json", &field);
        let stdout = fails(
            run(&[
                "card",
                "verify",
                s(&path),
                "--key",
                s(&key),
                "--profile",
                profile,
                "-o",
                "json",
            ]),
            1,
            &format!("a changed field, {profile}, -o json"),
            "did not verify",
        );
        let verdict = json(&stdout);
        assert_eq!(verdict["verified"], false, "{verdict}");
        assert!(verdict["error"].is_string(), "{verdict}");
    }

    let value = json(&signed);
    let sig = value["signatures"][0]["signature"]
        .as_str()
        .expect("a signature string");
    // Flip the first character of the signature to another base64url character.
    let flipped = if sig.starts_with('A') { "B" } else { "A" };
    let bad_sig = replace_once(&signed, sig, &format!("{flipped}{}", &sig[1..]));
    fails(
        verify("sig.json", &bad_sig, &key),
        1,
        "a changed signature",
        "did not verify",
    );
    fails(
        verify("other.json", &signed, &with_ext(&other, ".pub.pem")),
        1,
        "another key",
        "did not verify",
    );
    fails(
        verify("unsigned.json", CARD, &key),
        1,
        "no signatures",
        "signature",
    );
    // The untouched card still verifies: the refusals above are about the changes.
    ok(verify("good.json", &signed, &key), "the untouched card");
}

#[test]
fn verify_with_a_jwks_file() {
    let dir = scratch_dir("jwks");
    let card = write(&dir, "card.json", CARD);
    let signer = keygen(&dir, "EdDSA", "signer");
    let other = keygen(&dir, "RS256", "other");
    let signed = write(
        &dir,
        "signed.json",
        &sign(&card, &signer, "signer", "EdDSA"),
    );
    let jwk = |p: &Path| std::fs::read_to_string(with_ext(p, ".jwk.json")).expect("read a JWK");

    let both = write(
        &dir,
        "both.jwks.json",
        &format!("{{\"keys\":[{},{}]}}", jwk(&other), jwk(&signer)),
    );
    let shown = ok(
        run(&["card", "verify", s(&signed), "--jwks", s(&both)]),
        "verify --jwks with the signer's key second",
    );
    assert!(shown.contains("by key \"signer\" (EdDSA"), "{shown}");

    let without = write(
        &dir,
        "other.jwks.json",
        &format!("{{\"keys\":[{}]}}", jwk(&other)),
    );
    fails(
        run(&["card", "verify", s(&signed), "--jwks", s(&without)]),
        1,
        "a JWKS without the signer's kid",
        "did not verify",
    );
}

#[test]
fn dash_reads_standard_input() {
    let dir = scratch_dir("stdin");
    let card = write(&dir, "card.json", CARD);
    let prefix = keygen(&dir, "ES384", "stdin");
    let from_file = ok(run(&["card", "digest", s(&card)]), "digest FILE");
    let from_stdin = ok(
        run_stdin(&["card", "digest", "-"], CARD.as_bytes()),
        "digest -",
    );
    assert_eq!(from_stdin, from_file);
    assert!(from_file.starts_with("sha256:"), "{from_file}");
    assert_eq!(
        ok(
            run_stdin(&["card", "canonicalize", "-"], CARD.as_bytes()),
            "canonicalize -"
        ),
        ok(
            run(&["card", "canonicalize", s(&card)]),
            "canonicalize FILE"
        )
    );

    let signed = ok(
        run_stdin(
            &[
                "card",
                "sign",
                "-",
                "--key",
                s(&with_ext(&prefix, ".pem")),
                "--kid",
                "stdin",
            ],
            CARD.as_bytes(),
        ),
        "sign -",
    );
    let shown = ok(
        run_stdin(
            &[
                "card",
                "verify",
                "-",
                "--key",
                s(&with_ext(&prefix, ".pub.pem")),
            ],
            signed.as_bytes(),
        ),
        "verify -",
    );
    assert!(shown.contains("(ES384, profile strict)"), "{shown}");
    let tampered = replace_once(&signed, "CLI Agent", "CLI Agent 2");
    fails(
        run_stdin(
            &[
                "card",
                "verify",
                "-",
                "--key",
                s(&with_ext(&prefix, ".pub.pem")),
            ],
            tampered.as_bytes(),
        ),
        1,
        "verify - of a tampered card",
        "did not verify",
    );
}

#[test]
fn canonicalize_and_digest_match_the_spec_vector() {
    let dir = scratch_dir("spec-vector");
    let card = write(&dir, "card.json", SPEC_CARD);
    let out = run(&["card", "canonicalize", s(&card)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        SPEC_CANONICAL,
        "canonicalize must print exactly the spec's canonical payload (no trailing newline)"
    );
    let digest = ok(run(&["card", "digest", s(&card)]), "digest");
    assert_eq!(digest, format!("sha256:{SPEC_SHA256}\n"));

    let key = write(&dir, "seed.pem", SPEC_SEED_PEM);
    let signed = json(&ok(
        run(&[
            "card",
            "sign",
            s(&card),
            "--key",
            s(&key),
            "--kid",
            "test-key-1",
        ]),
        "sign with the vector's key",
    ));
    assert_eq!(
        signed["signatures"][0]["protected"], SPEC_PROTECTED,
        "{signed}"
    );
    assert_eq!(
        signed["signatures"][0]["signature"], SPEC_SIGNATURE,
        "{signed}"
    );

    // The vector as published: the card plus its signature, verified with its JWK.
    let mut vector = json(SPEC_CARD);
    vector["signatures"] =
        serde_json::json!([{ "protected": SPEC_PROTECTED, "signature": SPEC_SIGNATURE }]);
    let vector_path = write(&dir, "vector.json", &vector.to_string());
    let jwk = write(&dir, "spec.jwk.json", SPEC_JWK);
    let shown = ok(
        run(&["card", "verify", s(&vector_path), "--key", s(&jwk)]),
        "verify the spec vector",
    );
    assert!(
        shown.contains(&format!("digest: sha256:{SPEC_SHA256}")),
        "{shown}"
    );
}

#[test]
fn duplicate_member_names_are_refused() {
    let dir = scratch_dir("duplicates");
    let prefix = keygen(&dir, "EdDSA", "dup");
    let cases = [
        (
            "top",
            replace_once(
                CARD,
                r#""version":"2.0.0""#,
                r#""version":"2.0.0","version":"2.0.1""#,
            ),
        ),
        (
            "nested",
            replace_once(CARD, r#""id":"s1""#, r#""id":"s1","id":"s2""#),
        ),
        (
            "escaped",
            replace_once(
                CARD,
                r#""name":"CLI Agent""#,
                r#""name":"CLI Agent","n\u0061me":"X""#,
            ),
        ),
    ];
    for (name, body) in cases {
        let path = write(&dir, &format!("{name}.json"), &body);
        for args in [
            vec!["card", "digest", s(&path)],
            vec!["card", "canonicalize", s(&path)],
            vec![
                "card",
                "sign",
                s(&path),
                "--key",
                s(&with_ext(&prefix, ".pem")),
                "--kid",
                "dup",
            ],
            vec![
                "card",
                "verify",
                s(&path),
                "--key",
                s(&with_ext(&prefix, ".pub.pem")),
            ],
        ] {
            let stdout = fails(
                run(&args),
                1,
                &format!("{name} duplicate, {}", args[1]),
                "duplicate member",
            );
            assert!(stdout.is_empty(), "{name} {}: printed {stdout}", args[1]);
        }
    }
}

#[test]
fn usage_errors_exit_2() {
    let dir = scratch_dir("usage");
    let card = write(&dir, "card.json", CARD);
    fails(
        run(&["card", "verify", s(&card)]),
        2,
        "verify without a key",
        "--key",
    );
    fails(
        run(&[
            "card",
            "verify",
            s(&card),
            "--key",
            "a.pem",
            "--jwks",
            "b.json",
        ]),
        2,
        "verify with --key and --jwks",
        "cannot be used with",
    );
    fails(
        run(&["keygen", "--alg", "HS256", "--out", s(&dir.join("k"))]),
        2,
        "keygen --alg HS256",
        "invalid value",
    );
    assert!(
        !dir.join("k.pem").exists(),
        "no key file after a usage error"
    );
}

/// GETs the served card and JWKS and writes them to `dir`.
fn download(server: &Server, dir: &Path) -> (PathBuf, Value, PathBuf, Value) {
    let card = server.get_ok(CARD_PATH);
    let jwks = server.get_ok(JWKS_PATH);
    let card_path = dir.join("served-card.json");
    let jwks_path = dir.join("served-jwks.json");
    std::fs::write(&card_path, &card).expect("write the served card");
    std::fs::write(&jwks_path, &jwks).expect("write the served JWKS");
    (card_path, json(&text(&card)), jwks_path, json(&text(&jwks)))
}

/// The `kid`s of a JWKS, in order.
fn jwks_kids(jwks: &Value) -> Vec<String> {
    jwks["keys"]
        .as_array()
        .expect("a JWKS has keys")
        .iter()
        .map(|k| k["kid"].as_str().expect("every key has a kid").to_owned())
        .collect()
}

#[test]
fn served_card_verifies_with_its_downloaded_jwks() {
    let dir = scratch_dir("serve-signed");
    let prefix = keygen(&dir, "ES256", "unused-name");
    let server = Server::start_signed(&prefix, "served-kid");
    let (card_path, card, jwks_path, jwks) = download(&server, &dir);
    assert_eq!(signature_kids(&card), ["served-kid"], "{card}");
    assert_eq!(jwks_kids(&jwks), ["served-kid"], "{jwks}");
    for key in jwks["keys"].as_array().expect("keys") {
        for member in PRIVATE_MEMBERS {
            assert!(key.get(member).is_none(), "private {member:?} in {key}");
        }
    }
    let shown = ok(
        run(&["card", "verify", s(&card_path), "--jwks", s(&jwks_path)]),
        "verify the served card with the served JWKS",
    );
    assert!(
        shown.contains("by key \"served-kid\" (ES256, profile strict)"),
        "{shown}"
    );
    // The key ferry keygen wrote is the one the server signs with.
    ok(
        run(&[
            "card",
            "verify",
            s(&card_path),
            "--key",
            s(&with_ext(&prefix, ".pub.pem")),
        ]),
        "verify the served card with the keygen public key",
    );
    let tampered = write(
        &dir,
        "tampered.json",
        &replace_once(
            &text(&server.get_ok(CARD_PATH)),
            r#""version":"0.1.0""#,
            r#""version":"0.1.1""#,
        ),
    );
    fails(
        run(&["card", "verify", s(&tampered), "--jwks", s(&jwks_path)]),
        1,
        "a tampered served card",
        "did not verify",
    );
}

#[test]
fn config_with_two_signing_keys_and_one_announced_key() {
    let dir = scratch_dir("serve-config");
    let a = keygen(&dir, "ES256", "a");
    let b = keygen(&dir, "EdDSA", "b");
    let c = keygen(&dir, "PS256", "c");
    let config = signing_config(&dir, &[(&a, "a"), (&b, "b")], &[(&c, "c")]);
    let server = Server::start([
        "--agent",
        "echo",
        "--bind",
        "127.0.0.1:0",
        "--config",
        s(&config),
    ]);
    let (card_path, card, jwks_path, jwks) = download(&server, &dir);
    assert_eq!(signature_kids(&card), ["a", "b"], "{card}");
    let mut kids = jwks_kids(&jwks);
    kids.sort();
    assert_eq!(kids, ["a", "b", "c"], "{jwks}");
    ok(
        run(&["card", "verify", s(&card_path), "--jwks", s(&jwks_path)]),
        "verify the two-signature card with the served JWKS",
    );

    // Each signature verifies on its own.
    for (i, kid) in ["a", "b"].iter().enumerate() {
        let mut one = card.clone();
        one["signatures"] = Value::Array(vec![card["signatures"][i].clone()]);
        let path = write(&dir, &format!("only-{kid}.json"), &one.to_string());
        let shown = ok(
            run(&["card", "verify", s(&path), "--jwks", s(&jwks_path)]),
            &format!("the signature by {kid} alone"),
        );
        assert!(shown.contains(&format!("by key {kid:?}")), "{shown}");
    }
    // The announced key signs nothing: a JWKS of it alone verifies no signature.
    let announced_only = Value::Array(
        jwks["keys"]
            .as_array()
            .expect("keys")
            .iter()
            .filter(|k| k["kid"] == "c")
            .cloned()
            .collect(),
    );
    let path = write(
        &dir,
        "announced.jwks.json",
        &serde_json::json!({ "keys": announced_only }).to_string(),
    );
    fails(
        run(&["card", "verify", s(&card_path), "--jwks", s(&path)]),
        1,
        "only the announced key",
        "did not verify",
    );
}

#[test]
fn card_url_fetches_and_verifies_the_served_card() {
    let dir = scratch_dir("card-url");
    let prefix = keygen(&dir, "EdDSA", "url");
    let other = keygen(&dir, "EdDSA", "other");
    let server = Server::start_signed(&prefix, "url");
    let base = server.base_url.as_str();
    let jwks_url = format!("{base}{JWKS_PATH}");
    let shown = ok(
        run(&["card", base, "--allow-private", "--jwks", &jwks_url]),
        "ferry card URL --jwks URL",
    );
    assert!(
        shown.contains("verdict: signature verified (key \"url\")"),
        "{shown}"
    );

    // The digest of the fetch is the digest of the same card as a file.
    let (card_path, _, _, _) = download(&server, &dir);
    let digest = ok(
        run(&["card", "digest", s(&card_path)]),
        "digest of the file",
    );
    let digest = digest.trim();
    let verdict = json(&ok(
        run(&[
            "card",
            base,
            "--allow-private",
            "--key",
            s(&with_ext(&prefix, ".pub.pem")),
            "--expect-digest",
            digest,
            "-o",
            "json",
        ]),
        "ferry card URL --key --expect-digest -o json",
    ));
    assert_eq!(verdict["verified"], true, "{verdict}");
    assert_eq!(verdict["keyId"], "url", "{verdict}");
    assert_eq!(verdict["digest"], digest, "{verdict}");

    let wrong = format!("sha256:{}", "0".repeat(64));
    fails(
        run(&["card", base, "--allow-private", "--expect-digest", &wrong]),
        1,
        "a wrong pinned digest",
        &format!("expected {wrong}"),
    );
    fails(
        run(&[
            "card",
            base,
            "--allow-private",
            "--key",
            s(&with_ext(&other, ".pub.pem")),
        ]),
        1,
        "another key",
        "signature",
    );
    // The address rule of every command (as `ferry send`): a URL that names this machine needs
    // no flag; a private address does, and is refused before any connection.
    let local = ok(
        run(&["card", base, "--jwks", &jwks_url]),
        "ferry card on loopback without --allow-private",
    );
    assert!(
        local.contains("verdict: signature verified (key \"url\")"),
        "{local}"
    );
    fails(
        run(&["card", "http://10.0.0.5:8765"]),
        1,
        "a private address without --allow-private",
        "is not allowed",
    );
}
