//! `runner k8s-job`: the Kubernetes manifests of a sharded race.

use super::common::out;
use super::CliError;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct K8sJobArgs {
    /// The track directory (or file) to ship in a ConfigMap (at most ~900 KB: corpora go in
    /// the image or a volume).
    #[arg(long, value_name = "DIR", conflicts_with = "track")]
    pub track_path: Option<PathBuf>,
    /// A built-in track, instead of --track-path.
    #[arg(long, value_name = "NAME")]
    pub track: Option<String>,
    /// Shards (pods): the Job's completions and parallelism.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub shards: u32,
    /// The container image holding `runner`.
    #[arg(long)]
    pub image: String,
    /// The Job's (and Service's) name.
    #[arg(long, default_value = "runner-race")]
    pub name: String,
    /// The Kubernetes namespace of the Job, Service and ConfigMap (default: none written, the
    /// one kubectl applies them in).
    #[arg(long, value_name = "NAME")]
    pub namespace: Option<String>,
    /// Shard 0's rendezvous port.
    #[arg(long, default_value_t = crate::shard::DEFAULT_PORT)]
    pub port: u16,
    /// A PersistentVolumeClaim for /results (default: an emptyDir; shard 0 logs the report).
    #[arg(long, value_name = "PVC")]
    pub results_claim: Option<String>,
    /// Write here instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// More `runner race` arguments, after `--` (`-- --challenge quick --backend elasticsearch`).
    #[arg(last = true, value_name = "RACE ARGS")]
    pub race_args: Vec<String>,
}

pub fn run(args: K8sJobArgs) -> Result<u8, CliError> {
    let spec = crate::shard::k8s::JobSpec {
        name: args.name,
        namespace: args.namespace,
        image: args.image,
        shards: args.shards,
        port: args.port,
        track_path: args.track_path,
        track: args.track,
        results_claim: args.results_claim,
        race_args: args.race_args,
    };
    let text = crate::shard::k8s::manifests(&spec).map_err(CliError::Usage)?;
    match &args.out {
        Some(path) => crate::results::write_report(path, &text)?,
        None => out(&text),
    }
    Ok(0)
}
