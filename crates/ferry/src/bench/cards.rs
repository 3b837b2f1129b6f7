//! `ferry bench --mode verify-es256|verify-eddsa|canonicalize`: card-trust throughput on one
//! core, no server needed. The card is a typical ~2 KiB agent card (eight skills, two
//! interfaces, a provider), signed once; the loop strictly parses and verifies it (or, for
//! `canonicalize`, strictly parses it and computes its RFC 8785 form).

use ferry_proto::{AgentCapabilities, AgentCard, AgentInterface, AgentProvider, AgentSkill};
use ferry_trust::card::Profile;
use ferry_trust::keys::{Algorithm, KeySet, SigningKey};
use std::time::{Duration, Instant};

/// A typical agent card of about 2 KiB.
fn typical_card() -> AgentCard {
    let skill = |i: usize| AgentSkill {
        id: format!("skill-{i}"),
        name: format!("Skill number {i}"),
        description: "Does one focused thing well, with a description of useful length.".into(),
        tags: vec!["forms".into(), "automation".into()],
        examples: vec![format!("Please do thing {i} for me")],
        input_modes: Vec::new(),
        output_modes: Vec::new(),
        security_requirements: Vec::new(),
    };
    let interface = |binding: &str, path: &str| AgentInterface {
        url: format!("https://agents.example.com/{path}"),
        protocol_binding: binding.into(),
        tenant: String::new(),
        protocol_version: "1.0".into(),
    };
    AgentCard {
        name: "Benchmark Agent".into(),
        description: "An agent card of typical size, used to measure verification speed.".into(),
        supported_interfaces: vec![
            interface("JSONRPC", "jsonrpc"),
            interface("HTTP+JSON", "rest"),
        ],
        provider: Some(AgentProvider {
            url: "https://example.com".into(),
            organization: "Example Inc.".into(),
        }),
        version: "1.2.3".into(),
        documentation_url: Some("https://docs.example.com/agent".into()),
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(false),
            ..Default::default()
        },
        security_schemes: Default::default(),
        security_requirements: Vec::new(),
        default_input_modes: vec!["text/plain".into(), "application/json".into()],
        default_output_modes: vec!["text/plain".into(), "application/json".into()],
        skills: (0..8).map(skill).collect(),
        signatures: Vec::new(),
        icon_url: None,
    }
}

/// Runs `f` repeatedly for `duration`; returns the number of runs.
fn repeat(duration: Duration, mut f: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<u64> {
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < duration {
        for _ in 0..64 {
            f()?;
        }
        n += 64;
    }
    Ok(n)
}

/// Measures verification (with `alg`) or canonicalization (`alg` = `None`).
pub(crate) fn run(alg: Option<Algorithm>, duration: Duration, json: bool) -> anyhow::Result<()> {
    let card = typical_card();
    let (bytes, keys, name) = match alg {
        Some(alg) => {
            let key = SigningKey::generate(alg, "bench")?;
            let signed = ferry_trust::jws::sign_card(&card, &key, None)?;
            (
                serde_json::to_vec(&signed)?,
                Some(KeySet::new(vec![key.public_key()])?),
                format!("verify-{}", alg.name()),
            )
        }
        None => (serde_json::to_vec(&card)?, None, "canonicalize".to_owned()),
    };
    let mut canonical_bytes = 0usize;
    let runs = repeat(duration, || {
        let value = ferry_trust::strict::parse(&bytes)?;
        match &keys {
            Some(keys) => {
                ferry_trust::jws::verify_card(&value, keys, &[Profile::Strict])?;
            }
            None => canonical_bytes = ferry_trust::jcs::canonicalize(&value).len(),
        }
        Ok(())
    })?;
    let per_sec = runs as f64 / duration.as_secs_f64();
    let mb_per_sec = per_sec * canonical_bytes as f64 / 1e6;
    if json {
        println!(
            "{}",
            serde_json::json!({"mode": name, "cardBytes": bytes.len(), "perSecond": per_sec, "canonicalMBPerSecond": mb_per_sec})
        );
    } else if keys.is_some() {
        println!(
            "{name}: {per_sec:.0} cards/s (strict parse + verify, {} byte card, one core)",
            bytes.len()
        );
    } else {
        println!(
            "{name}: {per_sec:.0} cards/s, {mb_per_sec:.1} MB/s of canonical output (strict parse + RFC 8785, {} byte card)",
            bytes.len()
        );
    }
    Ok(())
}
