//! `runner serve`: the embedded engine behind the Elasticsearch REST API.

use super::common::{cancel_on_signals, parse_positive_duration, runtime};
use super::CliError;
use clap::Args;
use std::path::Path;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where the engine keeps its indices: on disk under the results directory (memory stays
    /// flat as the corpus grows), or in RAM.
    #[arg(long, value_enum, default_value = "disk")]
    pub engine_storage: engine::storage::EngineStorage,
    /// Address to bind; loopback by default, as the server has no authentication.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// Port to listen on (0 picks a free one and prints it).
    #[arg(long, default_value_t = 9200)]
    pub port: u16,
    /// Answer _search and _bulk at once without doing any work, to measure a client alone.
    #[arg(long)]
    pub stub: bool,
    /// Write one line per request to stderr: method, path, status and time taken.
    #[arg(long)]
    pub log_requests: bool,
    /// Write every request whole to FILE (appended), one JSON line each: order, method,
    /// path, query, status and body (never headers), to compare two clients' requests.
    #[arg(long, value_name = "FILE")]
    pub record: Option<std::path::PathBuf>,
    /// Serve HTTPS with this PEM certificate chain (needs --tls-key).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,
    /// Open connections at most; at the cap the longest-idle one is closed for a new one.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_connections: u32,
    /// Request bytes all requests may hold together (received and decompressed); beyond it a
    /// request gets 429, as from Elasticsearch's in-flight requests breaker.
    #[arg(long, default_value = "256mb", value_parser = parse_byte_budget)]
    pub max_in_flight_bytes: u64,
    /// Time to send a request head, counted from when the server waits for one: closes
    /// slowloris connections and connections idle between requests.
    #[arg(long, default_value = "60s", value_parser = parse_positive_duration)]
    pub header_timeout: std::time::Duration,
    /// Time to send a whole request body once its head has arrived (408 after).
    #[arg(long, default_value = "60s", value_parser = parse_positive_duration)]
    pub body_timeout: std::time::Duration,
}

fn parse_byte_budget(text: &str) -> Result<u64, String> {
    crate::units::parse_bytes(text).map(|b| b.0)
}

pub fn run(args: ServeArgs, home: &Path) -> Result<u8, CliError> {
    let runtime = runtime()?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            Some(crate::backend::tls::server_config(cert, key).map_err(CliError::Usage)?)
        }
        _ => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let limits = crate::serve::Limits {
        max_connections: args.max_connections as usize,
        max_in_flight_bytes: usize::try_from(args.max_in_flight_bytes).unwrap_or(usize::MAX),
        header_timeout: args.header_timeout,
        body_timeout: args.body_timeout,
    };
    let opts = crate::serve::ServeOptions {
        addr: std::net::SocketAddr::new(args.host, args.port),
        stub: args.stub,
        log_requests: args.log_requests,
        record: args.record.clone(),
        tls,
        limits,
        storage: args.engine_storage,
        home: home.to_path_buf(),
    };
    let cancel = CancellationToken::new();
    let result = runtime.block_on(async {
        cancel_on_signals(&cancel, None);
        crate::serve::serve(opts.clone(), cancel.clone(), |addr| {
            let mode = if opts.stub {
                " (stub: _search and _bulk answered without work)"
            } else {
                ""
            };
            eprintln!("runner serve: listening on {scheme}://{addr}{mode}");
        })
        .await
    });
    result.map_err(|e| {
        CliError::Usage(format!("runner serve cannot listen on {}: {e}", opts.addr))
    })?;
    Ok(0)
}
