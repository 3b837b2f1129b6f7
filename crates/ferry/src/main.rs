//! `ferry`: serve agents over A2A v1.0, and measure them.
//!
//! The binary only wires crates together: flags become a `ServerConfig`, an agent is picked by
//! name, logs go to stderr, and the one line a script needs (`agent card: URL`) goes to stdout.

mod bench;
mod card;
mod serve;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// mimalloc instead of glibc malloc: the request path allocates and frees many small objects
/// (tasks, events, evicted tasks); glibc's free and consolidation took a quarter of the CPU
/// time under load (see the benchmark notes in README.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// ferry: a fast, strict A2A v1.0 server, client and forms agent.
#[derive(Debug, Parser)]
#[command(name = "ferry", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve a built-in agent over A2A v1.0 (JSON-RPC and HTTP+JSON).
    Serve(Box<serve::ServeArgs>),
    /// Card digests, canonical form, signing and verification.
    Card(card::CardArgs),
    /// Generate a signing key pair (PREFIX.pem, PREFIX.pub.pem, PREFIX.jwk.json).
    Keygen(card::KeygenArgs),
    /// Load-test a running A2A server: SendMessage requests/s with latency percentiles, and
    /// streams/s.
    Bench(bench::BenchArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(args) => serve::run(*args),
        Command::Bench(args) => bench::run(args),
        Command::Card(args) => card::run(args),
        Command::Keygen(args) => card::keygen(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ferry: {e:#}");
            ExitCode::FAILURE
        }
    }
}
