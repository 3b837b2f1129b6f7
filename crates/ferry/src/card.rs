//! `ferry card …` and `ferry keygen`: card digests, canonical form, signing and verification
//! on the command line. `-` reads standard input where a FILE is taken.
//!
//! Exit codes: 0 when the command did its job (for `verify`: a signature verified), 1 when it
//! failed or the card did not verify, 2 for usage errors (clap).

use anyhow::{Context, bail};
use clap::{Args, Subcommand, ValueEnum};
use ferry_proto::AgentCard;
use ferry_trust::card::{self, Profile};
use ferry_trust::keys::{Algorithm, KeySet, PublicKey, SigningKey};
use ferry_trust::{jws, strict};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// `ferry card`: fetch and verify a remote card (`ferry card URL …`), or work on a card file.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct CardArgs {
    #[command(subcommand)]
    action: Option<CardAction>,
    #[command(flatten)]
    fetch: FetchArgs,
}

/// `ferry card URL`: fetch through the SSRF-safe client, check every expectation.
#[derive(Debug, Args)]
struct FetchArgs {
    /// An agent's base URL, or its card's URL (ending in .json).
    #[arg(required = true)]
    url: Option<String>,
    /// The pinned digest the card must have (`sha256:…`).
    #[arg(long, value_name = "sha256:HEX")]
    expect_digest: Option<String>,
    /// A trusted public key (PEM or JWK): a signature by it must verify.
    #[arg(long, value_name = "PUB.pem")]
    key: Option<PathBuf>,
    /// A trusted JWKS (https URL or file): a signature by one of its keys must verify.
    #[arg(long, value_name = "URL_OR_FILE")]
    jwks: Option<String>,
    /// Allow private and loopback addresses and plain http (local work and tests only).
    #[arg(long)]
    allow_private: bool,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    output: Output,
}

#[derive(Debug, Subcommand)]
enum CardAction {
    /// Print the card's `sha256:` digest (RFC 8785 form of the card without `signatures`).
    Digest {
        /// The card (JSON file, or - for standard input).
        file: PathBuf,
    },
    /// Print the card's RFC 8785 canonical bytes (without `signatures`) to standard output.
    Canonicalize {
        /// The card (JSON file, or - for standard input).
        file: PathBuf,
    },
    /// Sign a card and print the signed card (existing signatures are kept).
    Sign {
        /// The card (JSON file, or - for standard input).
        file: PathBuf,
        /// PKCS#8 PEM private key.
        #[arg(long)]
        key: PathBuf,
        /// Key id for the protected header.
        #[arg(long)]
        kid: String,
        /// Algorithm (guessed from the key when absent; RSA keys default to RS256).
        #[arg(long, value_enum)]
        alg: Option<AlgName>,
    },
    /// Verify a signed card against a public key or a JWKS; exit 0 only when a signature
    /// verifies.
    Verify {
        /// The card (JSON file, or - for standard input).
        file: PathBuf,
        /// PEM public key (or a JWK file).
        #[arg(long, conflicts_with = "jwks", required_unless_present = "jwks")]
        key: Option<PathBuf>,
        /// JWKS file.
        #[arg(long)]
        jwks: Option<PathBuf>,
        /// Canonicalization profile.
        #[arg(long, value_enum, default_value = "strict")]
        profile: ProfileName,
        /// Print the verdict as JSON.
        #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
        output: Output,
    },
}

/// Algorithms by their JWS names.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AlgName {
    /// ECDSA P-256 / SHA-256.
    #[value(name = "ES256")]
    Es256,
    /// ECDSA P-384 / SHA-384.
    #[value(name = "ES384")]
    Es384,
    /// Ed25519.
    #[value(name = "EdDSA")]
    EdDsa,
    /// RSASSA-PKCS1-v1_5 / SHA-256.
    #[value(name = "RS256")]
    Rs256,
    /// RSASSA-PSS / SHA-256.
    #[value(name = "PS256")]
    Ps256,
}

impl From<AlgName> for Algorithm {
    fn from(a: AlgName) -> Self {
        match a {
            AlgName::Es256 => Algorithm::Es256,
            AlgName::Es384 => Algorithm::Es384,
            AlgName::EdDsa => Algorithm::EdDsa,
            AlgName::Rs256 => Algorithm::Rs256,
            AlgName::Ps256 => Algorithm::Ps256,
        }
    }
}

/// Verification profiles.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum ProfileName {
    /// RFC 8785 of the card as received (the default).
    Strict,
    /// Also accept the official SDKs' canonical form (empty members dropped).
    #[value(name = "a2a-sdk-compat")]
    A2aSdkCompat,
}

/// Output formats.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum Output {
    /// Human-readable.
    Text,
    /// One JSON object.
    Json,
}

/// `ferry keygen`.
#[derive(Debug, Args)]
pub(crate) struct KeygenArgs {
    /// Algorithm of the new key.
    #[arg(long, value_enum)]
    alg: AlgName,
    /// Writes PREFIX.pem (private, mode 0600), PREFIX.pub.pem and PREFIX.jwk.json (public).
    #[arg(long)]
    out: PathBuf,
    /// Key id put in the JWK (default: the file name of PREFIX).
    #[arg(long)]
    kid: Option<String>,
}

/// Reads a FILE argument (`-` is standard input), at most the card size limit.
fn read_input(path: &Path) -> anyhow::Result<Vec<u8>> {
    let limit = strict::Limits::default().max_bytes;
    let mut bytes = Vec::new();
    if path == Path::new("-") {
        std::io::stdin()
            .take(limit as u64 + 1)
            .read_to_end(&mut bytes)
            .context("reading standard input")?;
    } else {
        std::fs::File::open(path)
            .with_context(|| format!("opening {}", path.display()))?
            .take(limit as u64 + 1)
            .read_to_end(&mut bytes)
            .with_context(|| format!("reading {}", path.display()))?;
    }
    Ok(bytes)
}

fn read_card(path: &Path) -> anyhow::Result<serde_json::Value> {
    let bytes = read_input(path)?;
    strict::parse(&bytes).with_context(|| format!("{} is not a card ferry accepts", path.display()))
}

/// Runs `ferry card …`.
pub(crate) fn run(args: CardArgs) -> anyhow::Result<()> {
    let Some(action) = args.action else {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        return runtime.block_on(fetch(args.fetch));
    };
    match action {
        CardAction::Digest { file } => {
            println!("{}", card::digest(&read_card(&file)?)?);
            Ok(())
        }
        CardAction::Canonicalize { file } => {
            let payload = card::payload(&read_card(&file)?, Profile::Strict)?;
            std::io::stdout()
                .write_all(payload.canonical())
                .context("writing standard output")?;
            Ok(())
        }
        CardAction::Sign {
            file,
            key,
            kid,
            alg,
        } => {
            let value = read_card(&file)?;
            let typed: AgentCard =
                serde_json::from_value(value).context("the file is not an A2A v1.0 agent card")?;
            let key = load_private_key(&key, &kid, alg.map(Algorithm::from))?;
            let signed = jws::sign_card(&typed, &key, None)?;
            println!("{}", serde_json::to_string_pretty(&signed)?);
            Ok(())
        }
        CardAction::Verify {
            file,
            key,
            jwks,
            profile,
            output,
        } => {
            let value = read_card(&file)?;
            let keys = match (key, jwks) {
                (Some(k), _) => pinned_key_set(load_public_key(&k)?, &value)?,
                (None, Some(j)) => KeySet::from_jwks(&read_input(&j)?)?,
                (None, None) => bail!("give --key or --jwks"),
            };
            let profiles: &[Profile] = match profile {
                ProfileName::Strict => &[Profile::Strict],
                ProfileName::A2aSdkCompat => &[Profile::Strict, Profile::A2aSdkCompat],
            };
            let digest = card::digest(&value)?;
            match jws::verify_card(&value, &keys, profiles) {
                Ok(v) => {
                    match output {
                        Output::Text => println!(
                            "verified: signature {} by key {:?} ({}, profile {})\ndigest: {digest}",
                            v.signature_index(),
                            v.key_id(),
                            v.alg(),
                            v.profile()
                        ),
                        Output::Json => println!(
                            "{}",
                            serde_json::json!({"verified": true, "keyId": v.key_id(), "alg": v.alg().name(),
                                "profile": v.profile().name(), "signatureIndex": v.signature_index(), "digest": digest})
                        ),
                    }
                    Ok(())
                }
                Err(e) => {
                    if let Output::Json = output {
                        println!(
                            "{}",
                            serde_json::json!({"verified": false, "error": e.to_string(), "digest": digest})
                        );
                    }
                    bail!("the card did not verify: {e}")
                }
            }
        }
    }
}

/// `ferry card URL`: fetches, verifies, prints the card's essentials and the verdict.
async fn fetch(args: FetchArgs) -> anyhow::Result<()> {
    use ferry_trust::fetch::{CardFetcher, Expect};
    let url = args.url.context("a URL is required")?;
    let card_url = ferry_proto::card_url(&url);
    let mut expect = Expect {
        digest: args.expect_digest.clone(),
        ..Expect::default()
    };
    if let Some(path) = &args.key {
        expect.public_key = Some(load_public_key(path)?);
    }
    match args.jwks.as_deref() {
        Some(j) if j.starts_with("https://") || j.starts_with("http://") => {
            expect.jwks_url = Some(url::Url::parse(j).context("--jwks is not a URL")?);
        }
        Some(file) => expect.keys = Some(KeySet::from_jwks(&read_input(Path::new(file))?)?),
        None => {}
    }
    // The address rule of every command: the URL given may name this machine.
    let given = url::Url::parse(&card_url).with_context(|| format!("{card_url} is not a URL"))?;
    let net = ferry_net::SafeClientBuilder::for_given_url(&given, args.allow_private);
    let fetcher = CardFetcher::builder().net(net).build()?;
    let verified = fetcher
        .fetch(&card_url, &expect)
        .await
        .with_context(|| format!("refused {card_url}"))?;
    let card = verified.card();
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
    match args.output {
        Output::Json => println!(
            "{}",
            serde_json::json!({"url": card_url, "name": card["name"], "interfaces": card["supportedInterfaces"],
                "skills": card["skills"], "digest": verified.digest(), "signed": verified.signed(),
                "verified": verified.verified(), "keyId": verified.key_id()})
        ),
        Output::Text => {
            println!("{} — {}", text(&card["name"]), text(&card["description"]));
            for i in card["supportedInterfaces"].as_array().into_iter().flatten() {
                println!(
                    "  interface {} {} {}",
                    text(&i["protocolBinding"]),
                    text(&i["protocolVersion"]),
                    text(&i["url"])
                );
            }
            for skill in card["skills"].as_array().into_iter().flatten() {
                println!("  skill {}: {}", text(&skill["id"]), text(&skill["name"]));
            }
            println!("digest: {}", verified.digest());
            let verdict = match (verified.verified(), verified.signed()) {
                (true, _) => format!(
                    "signature verified (key {:?})",
                    verified.key_id().unwrap_or_default()
                ),
                (false, true) => "signed, signature not checked (give --key or --jwks)".to_owned(),
                (false, false) => "not signed".to_owned(),
            };
            let pinned = if args.expect_digest.is_some() {
                "; digest matches the pin"
            } else {
                ""
            };
            println!("verdict: {verdict}{pinned}");
        }
    }
    Ok(())
}

/// Loads a PKCS#8 private key, trying the likely algorithms when none is given.
fn load_private_key(path: &Path, kid: &str, alg: Option<Algorithm>) -> anyhow::Result<SigningKey> {
    let pem = read_input(path)?;
    let candidates = match alg {
        Some(a) => vec![a],
        None => vec![
            Algorithm::EdDsa,
            Algorithm::Es256,
            Algorithm::Es384,
            Algorithm::Rs256,
        ],
    };
    let mut last = None;
    for a in candidates {
        match SigningKey::from_pkcs8_pem(&pem, a, kid) {
            Ok(k) => return Ok(k),
            Err(e) => last = Some(e),
        }
    }
    match last {
        Some(e) => {
            Err(e).with_context(|| format!("{} is not a usable private key", path.display()))
        }
        None => bail!("no algorithm to try"),
    }
}

/// A key given by file is trusted under whatever `kid` the card's signatures name (a PEM key
/// has none of its own); a JWK with its own `kid` keeps it.
fn pinned_key_set(key: PublicKey, card: &serde_json::Value) -> anyhow::Result<KeySet> {
    if key.kid().is_some() {
        return Ok(KeySet::new(vec![key])?);
    }
    let mut kids: Vec<String> = card
        .get("signatures")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.get("protected")?.as_str())
        .filter_map(|p| jws::parse_protected(p).ok()?.kid().map(str::to_owned))
        .collect();
    kids.sort();
    kids.dedup();
    if kids.is_empty() {
        bail!("the card has no signature with a kid");
    }
    Ok(KeySet::new(
        kids.into_iter()
            .map(|kid| key.clone().with_kid(kid))
            .collect(),
    )?)
}

/// Loads a PEM public key or a JWK.
fn load_public_key(path: &Path) -> anyhow::Result<PublicKey> {
    let bytes = read_input(path)?;
    let key = if bytes.trim_ascii_start().starts_with(b"{") {
        PublicKey::from_jwk_bytes(&bytes)
    } else {
        PublicKey::from_pem(&bytes)
    };
    key.with_context(|| format!("{} is not a public key (PEM or JWK)", path.display()))
}

/// Runs `ferry keygen`.
pub(crate) fn keygen(args: KeygenArgs) -> anyhow::Result<()> {
    let kid = match args.kid {
        Some(k) => k,
        None => args
            .out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "key-1".into()),
    };
    let key = SigningKey::generate(args.alg.into(), kid)?;
    let with_ext = |ext: &str| {
        let mut p = args.out.clone().into_os_string();
        p.push(ext);
        PathBuf::from(p)
    };
    let private = with_ext(".pem");
    write_private(&private, key.to_pkcs8_pem()?.as_bytes())?;
    std::fs::write(with_ext(".pub.pem"), key.public_key_pem()?)
        .context("writing the public key")?;
    let jwk = serde_json::to_string_pretty(&key.public_key().to_jwk())?;
    std::fs::write(with_ext(".jwk.json"), jwk + "\n").context("writing the JWK")?;
    eprintln!(
        "wrote {} (private), {}.pub.pem and {}.jwk.json (public); kid {:?}, alg {}",
        private.display(),
        args.out.display(),
        args.out.display(),
        key.kid(),
        key.alg()
    );
    Ok(())
}

/// Writes a private key readable by its owner only.
fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut f = options
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    f.write_all(bytes)
        .with_context(|| format!("writing {}", path.display()))
}
