//! `ferry`: serve agents over A2A v1.0, and measure them.
//!
//! The binary only wires crates together: flags become a `ServerConfig`, an agent is picked by
//! name, logs go to stderr, and the one line a script needs (`agent card: URL`) goes to stdout.

mod acts_pass;
mod allocator;
mod approvals;
mod approve;
mod bench;
mod call;
mod card;
mod forms_args;
mod hosting;
mod log_fields;
mod login;
mod mcp;
mod profile;
mod serve;
mod stores;
mod telemetry;
mod tokens;
mod webhook;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// ferry: a fast, strict A2A v1.0 server, client and forms agent.
#[derive(Debug, Parser)]
#[command(name = "ferry", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Where spans go (every command that makes them: serve, send, task, push-config).
    #[command(flatten)]
    otlp: telemetry::OtlpSettings,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve a built-in agent over A2A v1.0 (JSON-RPC and HTTP+JSON).
    Serve(Box<serve::ServeArgs>),
    /// Send a message to an A2A agent (blocking by default; --stream, --async).
    Send(Box<call::SendArgs>),
    /// Get, list, cancel or follow an agent's tasks.
    Task(Box<call::TaskArgs>),
    /// Manage a task's push-notification configs.
    PushConfig(Box<call::PushArgs>),
    /// Sign in at an agent's OpenID provider (device flow) for the calls that follow.
    Login(Box<login::LoginArgs>),
    /// Receive an agent's push notifications (`listen`), checking their token and signature.
    Webhook(Box<webhook::WebhookArgs>),
    /// Serve the forms agent over MCP on stdin/stdout (for a coding agent to start).
    Mcp(Box<mcp::McpArgs>),
    /// Manage your saved profiles on a forms agent (what `"auto": true` fills from).
    Profile(Box<profile::ProfileArgs>),
    /// Approve or reject a forms agent's waiting submit (`--approval human`) with the
    /// approver token (FERRY_APPROVER_TOKEN); shows what would be sent first.
    Approve(Box<approve::ApproveArgs>),
    /// Print a shell completion script.
    Completion {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Card digests, canonical form, signing and verification.
    Card(card::CardArgs),
    /// Generate a signing key pair (PREFIX.pem, PREFIX.pub.pem, PREFIX.jwk.json).
    Keygen(card::KeygenArgs),
    /// Load-test a running A2A server: SendMessage requests/s with latency percentiles, and
    /// streams/s.
    Bench(bench::BenchArgs),
}

fn main() -> ExitCode {
    allocator::avoid_huge_pages();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(args) => serve::run(*args, &cli.otlp),
        Command::Bench(args) => bench::run(args),
        Command::Card(args) => card::run(args),
        Command::Send(args) => call::send(*args, &cli.otlp),
        Command::Task(args) => call::task(*args, &cli.otlp),
        Command::PushConfig(args) => call::push(*args, &cli.otlp),
        Command::Login(args) => login::run(*args, &cli.otlp),
        Command::Webhook(args) => webhook::run(*args),
        Command::Mcp(args) => mcp::run(*args, &cli.otlp),
        Command::Profile(args) => profile::run(*args, &cli.otlp),
        Command::Approve(args) => approve::run(*args),
        Command::Completion { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cmd, "ferry", &mut script);
            // A closed pipe (`| head`) is not an error worth reporting.
            let _ = std::io::Write::write_all(&mut std::io::stdout(), &script);
            Ok(())
        }
        Command::Keygen(args) => card::keygen(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ferry: {e:#}");
            ExitCode::from(exit_code(&e))
        }
    }
}

/// The exit code for a failure: 3 unreachable, 4 authentication refused, 5 timeout, else 1.
fn exit_code(e: &anyhow::Error) -> u8 {
    use ferry_client::ClientError;
    match e.chain().find_map(|c| c.downcast_ref::<ClientError>()) {
        Some(ClientError::Unreachable(_) | ClientError::Blocked { .. }) => 3,
        Some(ClientError::Auth { .. }) => 4,
        Some(ClientError::Timeout) => 5,
        _ => 1,
    }
}

/// Writes one line to standard output. A closed pipe (`ferry send … | head`) ends the program
/// quietly with exit 0 instead of a panic.
pub(crate) fn out(line: impl std::fmt::Display) -> anyhow::Result<()> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match writeln!(stdout, "{line}") {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        result => Ok(result?),
    }
}
