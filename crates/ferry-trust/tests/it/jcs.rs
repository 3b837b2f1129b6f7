//! RFC 8785 against outside answers: cyberphone's testdata, the RFC tables, the tricky cases
//! and the ES6 number sequence with its published SHA-256.

use crate::support::{read, read_json};
use aws_lc_rs::digest::{Context, SHA256, digest};
use ferry_trust::jcs::{canonicalize, format_number};
use ferry_trust::strict::{self, Limits};

/// The JCS suites include integers beyond 2^53, which the card policy refuses.
fn lax() -> Limits {
    Limits {
        allow_unsafe_integers: true,
        max_bytes: usize::MAX,
        ..Limits::default()
    }
}

fn canonical_text(input: &[u8]) -> Result<Vec<u8>, strict::JsonError> {
    Ok(canonicalize(&strict::parse_with(input, &lax())?))
}

#[test]
fn cyberphone_testdata_byte_for_byte() {
    for name in [
        "arrays",
        "french",
        "structures",
        "unicode",
        "values",
        "weird",
    ] {
        let input = read(&format!("jcs/cyberphone/input/{name}.json"));
        let want = read(&format!("jcs/cyberphone/output/{name}.json"));
        let hex = String::from_utf8(read(&format!("jcs/cyberphone/outhex/{name}.txt")))
            .expect("hex text");
        let want_from_hex: Vec<u8> = hex
            .split_whitespace()
            .map(|h| u8::from_str_radix(h, 16).expect("hex byte"))
            .collect();
        assert_eq!(want, want_from_hex, "{name}: output and outhex disagree");
        let got = canonical_text(&input).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want),
            "{name}"
        );
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn rfc8785_sorting_example() {
    let input = read("jcs/rfc8785/sec-3.2.3-sorting.input.json");
    let want = read("jcs/rfc8785/sec-3.2.3-sorting.output.json");
    let got = canonical_text(&input).expect("valid");
    // Tolerate a trailing newline in the expected file.
    assert_eq!(got, want.trim_ascii_end());
}

#[test]
fn rfc8785_appendix_b_numbers() {
    let table = String::from_utf8(read("jcs/rfc8785/appendix-b-numbers.csv")).expect("text");
    let mut rows = 0;
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (hex, want) = line.split_once(',').expect("hex,expected");
        let f = f64::from_bits(u64::from_str_radix(hex, 16).expect("hex"));
        if want == "ERROR" {
            assert!(!f.is_finite(), "{line}");
            // A non-finite double has no JSON form: it cannot even become a Value.
            assert!(serde_json::Number::from_f64(f).is_none(), "{line}");
        } else {
            let mut buf = ryu_js::Buffer::new();
            assert_eq!(format_number(f, &mut buf), want, "{line}");
            let v = serde_json::Value::from(f);
            assert_eq!(canonicalize(&v), want.as_bytes(), "{line}");
        }
        rows += 1;
    }
    assert!(rows >= 20, "only {rows} rows");
}

#[test]
fn tricky_cases_including_every_must_reject() {
    let doc = read_json("jcs/tricky-cases.json");
    let cases = doc["cases"].as_array().expect("cases");
    let (mut ok, mut rejected) = (0, 0);
    for case in cases {
        let id = case["id"].as_str().expect("id");
        let input = case["input"].as_str().expect("input").as_bytes();
        if case["expected_error"] == true {
            // Refused under the lax JCS policy, and so also under the card policy.
            let lax = strict::parse_with(input, &lax());
            assert!(lax.is_err(), "{id}: accepted {lax:?}");
            assert!(strict::parse(input).is_err(), "{id}");
            rejected += 1;
            continue;
        }
        let want = case["expected"].as_str().expect("expected");
        let want_hex = case["expected_utf8_hex"].as_str().expect("hex");
        let got = canonical_text(input).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(String::from_utf8_lossy(&got), want, "{id}");
        let mut got_hex = String::new();
        for b in &got {
            got_hex.push_str(&format!("{b:02x}"));
        }
        assert_eq!(got_hex, want_hex, "{id}");
        ok += 1;
    }
    assert_eq!((ok, rejected), (45, 13));
}

/// The upstream generator: 168 static values, 2,000 subnormal-boundary values, then
/// doubles read from a SHA-256 chain (skipping ±0, NaN and ±Inf).
fn es6_numbers() -> impl Iterator<Item = u64> {
    let statics: Vec<u64> = String::from_utf8(read("jcs/es6numbers/static-u64.txt"))
        .expect("text")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| u64::from_str_radix(l.trim().trim_start_matches("0x"), 16).expect("hex"))
        .collect();
    assert_eq!(statics.len(), 168);
    let boundary = (0..2000u64).map(|i| 0x0010_0000_0000_0000 + i);
    let mut block = [0u8; 32];
    let chain = std::iter::from_fn(move || {
        let d = digest(&SHA256, &block);
        block.copy_from_slice(d.as_ref());
        let words: Vec<u64> = block
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        Some(words)
    })
    .flatten()
    .filter(|&bits| {
        let f = f64::from_bits(bits);
        f.is_finite() && f != 0.0
    });
    statics.into_iter().chain(boundary).chain(chain)
}

/// SHA-256 of the first `n` lines, each formatted by [`canonicalize`]: `<hex bits>,<JCS number>\n`.
fn es6_hash(n: usize) -> String {
    let mut ctx = Context::new(&SHA256);
    for bits in es6_numbers().take(n) {
        // Through the full serializer, not only ryu-js: this is the path cards take.
        let v = serde_json::Value::from(f64::from_bits(bits));
        ctx.update(format!("{bits:x},").as_bytes());
        ctx.update(&canonicalize(&v));
        ctx.update(b"\n");
    }
    let mut hex = String::new();
    for b in ctx.finish().as_ref() {
        hex.push_str(&format!("{b:02x}"));
    }
    hex
}

fn published(n: usize) -> String {
    let table = String::from_utf8(read("jcs/es6numbers/published-sha256.txt")).expect("text");
    table
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| {
            let mut f = l.split_whitespace();
            let hash = f.next()?;
            (f.next()?.parse::<usize>().ok()? == n).then(|| hash.to_owned())
        })
        .unwrap_or_else(|| panic!("no published hash for {n} lines"))
}

#[test]
fn es6_numbers_first_10000_lines_match_the_file() {
    let file = String::from_utf8(read("jcs/es6numbers/es6testfile-first10000.txt")).expect("text");
    let mut buf = ryu_js::Buffer::new();
    let mut count = 0;
    for (line, bits) in file.lines().zip(es6_numbers()) {
        let (hex, want) = line.split_once(',').expect("hex,number");
        assert_eq!(u64::from_str_radix(hex, 16).expect("hex"), bits, "{line}");
        let v = serde_json::Value::from(f64::from_bits(bits));
        assert_eq!(canonicalize(&v), want.as_bytes(), "{line}");
        assert_eq!(format_number(f64::from_bits(bits), &mut buf), want);
        count += 1;
    }
    assert_eq!(count, 10_000);
    assert_eq!(es6_hash(10_000), published(10_000));
}

#[test]
fn es6_numbers_one_million_match_the_published_sha256() {
    assert_eq!(es6_hash(1_000_000), published(1_000_000));
}
