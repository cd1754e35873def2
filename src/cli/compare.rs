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
    /// One contender, or several: each compared with the baseline, side by side.
    #[arg(required = true, num_args = 1..)]
    contenders: Vec<String>,
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
    let opts = crate::compare::CompareOptions {
        noise_threshold: args.noise_threshold / 100.0,
        alpha: args.alpha,
    };
    let mut pairs = Vec::new();
    for given in &args.contenders {
        let c = store.load_record(&store.resolve(given)?)?;
        pairs.push(crate::compare::compare(&b, &c, opts));
    }
    let text = match pairs.as_slice() {
        [one] => {
            for w in &one.warnings {
                eprintln!("warning: {w}");
            }
            crate::report::render(args.report.report_format, one)
        }
        _ => crate::report::render(
            args.report.report_format,
            &crate::compare::Comparisons {
                baseline: b.race_id.clone(),
                pairs: pairs.clone(),
            },
        ),
    };
    emit_report(text, args.report.report_file.as_deref())?;
    let failing = |v: Verdict| match args.fail_on {
        Some(FailOn::Worse) => v == Verdict::Regression,
        Some(FailOn::LikelyWorse) => matches!(v, Verdict::Regression | Verdict::UnjudgedRegression),
        None => false,
    };
    let mut worse: Vec<String> = Vec::new();
    for p in &pairs {
        for t in &p.tasks {
            for m in t.metrics.iter().filter(|m| failing(m.verdict)) {
                worse.push(format!(
                    "{} [{}] {} (contender {})",
                    t.task, t.sweep, m.metric, p.contender
                ));
            }
        }
    }
    if !worse.is_empty() {
        eprintln!("--fail-on: worse in {}", worse.join(", "));
        return Ok(EXIT_GATE_FAILED);
    }
    Ok(0)
}
