//! esrally's race flags that have no meaning in runner: each is taken (hidden from help) so
//! that a Rally user's command line is answered with why and what to do instead, exit 2,
//! rather than clap's bare "unexpected argument".

use super::CliError;
use clap::Args;

#[derive(Debug, Args, Clone, Default)]
pub struct RallyOnlyFlags {
    #[arg(long, hide = true, value_name = "X")]
    car: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    car_params: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    elasticsearch_plugins: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    plugin_params: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    revision: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    distribution_repository: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    runtime_jdk: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    team_path: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    team_repository: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    team_revision: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    source_build_method: Option<String>,
    #[arg(long, hide = true)]
    preserve_install: bool,
    #[arg(long, hide = true, value_name = "X")]
    load_driver_hosts: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    telemetry: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    telemetry_params: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    report_numbers_align: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    show_in_report: Option<String>,
    #[arg(long, hide = true)]
    enable_driver_profiling: bool,
    #[arg(long, hide = true)]
    enable_assertions: bool,
    #[arg(long, hide = true)]
    kill_running_processes: bool,
}

impl RallyOnlyFlags {
    /// The first esrally flag given that runner has no use for, named with what to do instead.
    pub fn check(&self) -> Result<(), CliError> {
        let provisioning = "runner never provisions Elasticsearch: race a cluster that is running (--target-hosts HOST:PORT, esrally's --pipeline benchmark-only), or drop it to race the embedded engine";
        let given: [(bool, &str, &str); 20] = [
            (self.car.is_some(), "--car", provisioning),
            (self.car_params.is_some(), "--car-params", provisioning),
            (self.elasticsearch_plugins.is_some(), "--elasticsearch-plugins", provisioning),
            (self.plugin_params.is_some(), "--plugin-params", provisioning),
            (self.revision.is_some(), "--revision", provisioning),
            (self.distribution_repository.is_some(), "--distribution-repository", provisioning),
            (self.runtime_jdk.is_some(), "--runtime-jdk", provisioning),
            (self.team_path.is_some(), "--team-path", provisioning),
            (self.team_repository.is_some(), "--team-repository", provisioning),
            (self.team_revision.is_some(), "--team-revision", provisioning),
            (self.source_build_method.is_some(), "--source-build-method", provisioning),
            (self.preserve_install, "--preserve-install", provisioning),
            (self.load_driver_hosts.is_some(), "--load-driver-hosts", "runner spreads a race over load drivers with its own launcher: --shard I/N under mpirun, Slurm or Kubernetes (docs/shards.md)"),
            (self.telemetry.is_some(), "--telemetry", "runner reads the server's statistics (_nodes/stats) around every trial without asking; esrally's telemetry devices are not run"),
            (self.telemetry_params.is_some(), "--telemetry-params", "esrally's telemetry devices are not run; runner reads _nodes/stats around every trial"),
            (self.report_numbers_align.is_some(), "--report-numbers-align", "runner's markdown report aligns numbers right; drop it"),
            (self.show_in_report.is_some(), "--show-in-report", "runner's report shows every percentile the samples support; drop it"),
            (self.enable_driver_profiling, "--enable-driver-profiling", "not run; BENCHMARKS.md measures the driver's own cost"),
            (self.enable_assertions, "--enable-assertions", "a task's `assertions` are not run (each is named when the track loads); drop it"),
            (self.kill_running_processes, "--kill-running-processes", "runner never kills other processes; several runners may race at once"),
        ];
        match given.iter().find(|(set, _, _)| *set) {
            Some((_, flag, why)) => Err(CliError::Usage(format!(
                "{flag} is esrally's and has no meaning here: {why}"
            ))),
            None => Ok(()),
        }
    }
}
