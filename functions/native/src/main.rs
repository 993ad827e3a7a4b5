//! `wikantik-native`: serve an index directory over HTTP on loopback.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use wikantik::auth::KeyRing;
use wikantik::rest::RestConfig;
use wikantik_native::server::{run, Host};
use wikantik_native::DirStore;

#[derive(Parser)]
#[command(name = "wikantik-native", version, about = "Serve a Wikantik index (REST) from a directory of shards")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the index in DIR (what `index-builder build --out DIR` wrote).
    Serve {
        /// The index directory.
        #[arg(long, default_value = "index-out")]
        index: PathBuf,
        /// Address to listen on (loopback by default).
        #[arg(long, default_value = "127.0.0.1:8080")]
        addr: SocketAddr,
        /// Worker threads.
        #[arg(long, default_value_t = 4)]
        threads: usize,
        /// Re-read the pointer at most this often, in seconds.
        #[arg(long, default_value_t = 2)]
        pointer_ttl_secs: u64,
        /// Shard cache budget in MiB.
        #[arg(long, default_value_t = 256)]
        cache_mib: u64,
        /// API key hashes (see docs); also read from WIKANTIK_API_KEYS.
        #[arg(long, env = "WIKANTIK_API_KEYS", hide_env_values = true, default_value = "")]
        api_keys: String,
        /// Refuse anonymous REST reads (keys required).
        #[arg(long)]
        deny_anonymous: bool,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Serve { index, addr, threads, pointer_ttl_secs, cache_mib, api_keys, deny_anonymous } => {
            let keys = match KeyRing::parse(&api_keys) {
                Ok(k) => k,
                Err(e) => {
                    eprintln!("error: WIKANTIK_API_KEYS: {e}");
                    return ExitCode::FAILURE;
                }
            };
            if !addr.ip().is_loopback() {
                eprintln!("warning: listening on {addr}, which is not a loopback address");
            }
            let rest = RestConfig { keys, deny_anonymous, ..RestConfig::default() };
            let host = Arc::new(Host::new(DirStore::new(&index), rest, pointer_ttl_secs * 1000, cache_mib << 20));
            eprintln!("wikantik-native serving {} on http://{addr}", index.display());
            match run(host, addr, threads) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
