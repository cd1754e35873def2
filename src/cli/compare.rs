//! `runner compare`: two stored races, judged better, worse or noise.

use super::common::{emit_report, ReportArgs};
use super::{CliError, EXIT_GATE_FAILED};
use crate::compare::Verdict;
use crate::results::RaceStore;
use clap::{Args, ValueEnum};
use std::path::Path;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Race id, unique prefix, `latest` or `latest~N`.
    baseline: String,
    contender: String,
    /// Relative differences below this many percent count as noise.
    #[arg(long, default_value_t = 5.0, value_name = "PERCENT")]
    noise_threshold: f64,
    /// Significance level of the Mann-Whitney U test (needs >= 3 trials in each race).
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    /// Exit 3 when a metric is `worse` (significant, beyond the noise threshold), or with
    /// `likely-worse` also when too few trials leave a regression unjudged: a CI gate.
    #[arg(long, value_enum, value_name = "WHAT")]
    fail_on: Option<FailOn>,
    #[command(flatten)]
    report: ReportArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Worse,
    LikelyWorse,
}

pub fn run(args: CompareArgs, home: &Path) -> Result<u8, CliError> {
    if !(0.0..100.0).contains(&args.noise_threshold) || !(0.0..=1.0).contains(&args.alpha) {
        return Err(CliError::Usage(
            "--noise-threshold is a percentage from 0 to 100 and --alpha a probability from 0 to 1"
                .into(),
        ));
    }
    let store = RaceStore::new(home);
    let b = store.load_record(&store.resolve(&args.baseline)?)?;
    let c = store.load_record(&store.resolve(&args.contender)?)?;
    let opts = crate::compare::CompareOptions {
        noise_threshold: args.noise_threshold / 100.0,
        alpha: args.alpha,
    };
    let comparison = crate::compare::compare(&b, &c, opts);
    for w in &comparison.warnings {
        eprintln!("warning: {w}");
    }
    emit_report(
        crate::report::render(args.report.report_format, &comparison),
        args.report.report_file.as_deref(),
    )?;
    let failing = |v: Verdict| match args.fail_on {
        Some(FailOn::Worse) => v == Verdict::Regression,
        Some(FailOn::LikelyWorse) => matches!(v, Verdict::Regression | Verdict::UnjudgedRegression),
        None => false,
    };
    let worse: Vec<String> = comparison
        .tasks
        .iter()
        .flat_map(|t| {
            t.metrics
                .iter()
                .filter(|m| failing(m.verdict))
                .map(move |m| format!("{} [{}] {}", t.task, t.sweep, m.metric))
        })
        .collect();
    if !worse.is_empty() {
        eprintln!("--fail-on: worse in {}", worse.join(", "));
        return Ok(EXIT_GATE_FAILED);
    }
    Ok(0)
}
