//! `ferry login URL`: sign in at the agent's OpenID provider with the device flow, for the
//! calls that follow with the same `--client-id` (see [`crate::tokens`]).

use anyhow::Context;
use clap::Args;
use ferry_client::oauth::DeviceCode;

/// `ferry login URL`: sign in at the agent's OpenID provider with the device flow.
#[derive(Debug, Args)]
pub(crate) struct LoginArgs {
    /// The agent's base URL (its card names the provider).
    url: String,
    #[command(flatten)]
    flags: crate::call::ClientFlags,
}

/// Runs `ferry login`: reads the card, asks the provider for a device code, shows where to
/// approve it, waits for the approval and keeps the token (and its refresh token) for the
/// calls that follow with the same `--client-id`.
pub(crate) fn run(args: LoginArgs, otlp: &crate::telemetry::OtlpSettings) -> anyhow::Result<()> {
    let root = || tracing::info_span!("ferry.login", otel.status_code = tracing::field::Empty);
    crate::call::run_command(otlp, root, async move {
        let (_client, card) = crate::call::connect_anonymously(&args.flags, &args.url).await?;
        let tls = crate::call::client_tls(&args.flags)?;
        let tokens = args
            .flags
            .oauth
            .tokens(&tls)?
            .context("--client-id (or FERRY_CLIENT_ID) names the client to sign in as")?;
        tokens.login(&card, show_device_code).await?;
        eprintln!("Signed in; the token is kept for the calls that follow.");
        Ok(())
    })
}

/// Tells the person where to approve this device: the lines a script can read on stdout.
fn show_device_code(code: &DeviceCode) {
    let open = code
        .verification_uri_complete
        .as_deref()
        .unwrap_or(&code.verification_uri);
    eprintln!("To sign in, open the page below and confirm the code.");
    // Nothing sensible to do if stdout is gone: the person can still not approve.
    let _ = crate::out(format_args!("open: {open}"));
    let _ = crate::out(format_args!("code: {}", code.user_code));
}
