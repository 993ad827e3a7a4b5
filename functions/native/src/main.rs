//! `wikantik-native`: serve an index directory over HTTP on loopback.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use wikantik::auth::KeyRing;
use wikantik::mcp::McpConfig;
use wikantik::settings::RestConfig;
use wikantik::service::ServiceConfig;
use wikantik_native::server::{run, Host};
use wikantik_native::DirStore;

#[derive(Parser)]
#[command(name = "wikantik-native", version, about = "Serve a Wikantik index (REST and MCP) from a directory of shards")]
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
        /// Serve MCP without keys (anonymous callers see public pages). Without keys and
        /// without this flag, /knowledge-mcp fails closed with 503.
        #[arg(long, env = "WIKANTIK_MCP_ALLOW_UNRESTRICTED")]
        mcp_allow_unrestricted: bool,
        /// Extra allowed browser origins for MCP (comma-separated; loopback is always allowed).
        #[arg(long, env = "WIKANTIK_MCP_ALLOWED_ORIGINS", default_value = "")]
        mcp_allowed_origins: String,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Serve {
            index,
            addr,
            threads,
            pointer_ttl_secs,
            cache_mib,
            api_keys,
            deny_anonymous,
            mcp_allow_unrestricted,
            mcp_allowed_origins,
        } => {
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
            let mcp = match McpConfig::from_settings(Some(&api_keys), mcp_allow_unrestricted, Some(&mcp_allowed_origins)) {
                Ok(m) => m,
                Err(e) => {
                    eprintln!("error: MCP settings: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let config = ServiceConfig { rest: RestConfig { keys, deny_anonymous, ..RestConfig::default() }, mcp };
            let host = Arc::new(Host::new(DirStore::new(&index), config, pointer_ttl_secs * 1000, cache_mib << 20));
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
