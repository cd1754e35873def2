//! `runner trend`: change points across the stored races of one track and challenge, and a CI
//! gate on the newest race.

use super::common::{emit_report, parse_tags, ReportArgs};
use super::list::RaceFilter;
use super::{CliError, EXIT_GATE_FAILED};
use crate::results::RaceStore;
use crate::trend::{TrendError, TrendMetric, TrendOptions};
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct TrendArgs {
    #[command(flatten)]
    filter: RaceFilter,
    /// Only races started on or after this day (YYYY-MM-DD) or instant (RFC 3339).
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    /// Only the newest N races of those matching.
    #[arg(long, value_name = "N")]
    last: Option<usize>,
    /// The metrics to follow (repeatable; default: throughput, service_time_p50,
    /// service_time_p99, latency_p99, error_rate, capacity).
    #[arg(long = "metric", value_enum)]
    metrics: Vec<TrendMetric>,
    /// A split is a change point when its t-test gives p at most this (Otava's default).
    #[arg(long, default_value_t = 0.001)]
    max_p: f64,
    /// Changes smaller than this many percent of the mean before them are within noise.
    #[arg(long, default_value_t = 5.0, value_name = "PERCENT")]
    noise_threshold: f64,
    /// Exit 3 when the newest race starts, or belongs to, a regression: a CI gate.
    #[arg(long, value_enum, value_name = "WHAT")]
    fail_on: Option<FailOn>,
    /// Also write an SVG chart of each series, with its change points, into this directory.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    #[command(flatten)]
    report: ReportArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Regression,
}

pub fn run(args: TrendArgs, home: &Path) -> Result<u8, CliError> {
    if !(0.0..100.0).contains(&args.noise_threshold) || !(0.0..1.0).contains(&args.max_p) {
        return Err(CliError::Usage(
            "--noise-threshold is a percentage from 0 to 100 and --max-p a probability below 1"
                .into(),
        ));
    }
    let races = load_races(&args.filter, args.since.as_deref(), args.last, home)?;
    let metrics = if args.metrics.is_empty() {
        TrendMetric::DEFAULT.to_vec()
    } else {
        args.metrics.clone()
    };
    let opts = TrendOptions {
        max_p: args.max_p,
        noise_threshold: args.noise_threshold / 100.0,
    };
    let trend = match crate::trend::trend(
        &races,
        &metrics,
        &describe(&args.filter, args.since.as_ref()),
        opts,
    ) {
        Ok(t) => t,
        // A CI gate's first runs have no history yet: nothing can have regressed.
        Err(e @ (TrendError::NoRace(_) | TrendError::TooFew { .. })) if args.fail_on.is_some() => {
            eprintln!("--fail-on regression: nothing to judge yet ({e}); the gate passes");
            return Ok(0);
        }
        Err(e) => return Err(CliError::Usage(e.to_string())),
    };
    for w in &trend.warnings {
        eprintln!("warning: {w}");
    }
    if let Some(dir) = &args.plot {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::Usage(format!("--plot {}: {e}", dir.display())))?;
        for p in crate::plot::trend_charts(&trend) {
            crate::results::write_atomic(&dir.join(&p.file), p.svg.as_bytes())?;
        }
    }
    emit_report(
        crate::report::render(args.report.report_format, &trend),
        args.report.report_file.as_deref(),
    )?;
    if args.fail_on == Some(FailOn::Regression) {
        let newest = trend.races.last().cloned().unwrap_or_default();
        let failing: Vec<String> = trend
            .series
            .iter()
            .filter_map(|s| {
                let c = s.newest_regression()?;
                Some(format!(
                    "{} [{}] {}: {:+.1}% (p = {:.1e}) from race {} on, through the newest race {}",
                    s.task, s.sweep, s.metric, c.change_percent, c.p_value, c.race, newest
                ))
            })
            .collect();
        if !failing.is_empty() {
            eprintln!(
                "--fail-on regression: the newest race is in a regression:\n  {}",
                failing.join("\n  ")
            );
            return Ok(EXIT_GATE_FAILED);
        }
    }
    Ok(0)
}

/// The stored races `filter` matches, from `since`, the newest `last` of them, oldest first.
pub(super) fn load_races(
    f: &RaceFilter,
    since: Option<&str>,
    last: Option<usize>,
    home: &Path,
) -> Result<Vec<(crate::results::RaceRecord, crate::results::RaceHistograms)>, CliError> {
    let since = since.map(super::common::parse_since).transpose()?;
    let tags = parse_tags(&f.user_tags)?;
    let store = RaceStore::new(home);
    let mut races = Vec::new();
    for id in store.ids() {
        let Ok(r) = store.load_record(&id) else {
            continue;
        };
        let keep = f.track.as_ref().is_none_or(|t| *t == r.track)
            && f.challenge.as_ref().is_none_or(|c| *c == r.challenge)
            && f.backend.as_ref().is_none_or(|b| *b == r.backend.kind)
            && tags.iter().all(|(k, v)| r.user_tags.get(k) == Some(v))
            && since.is_none_or(|s| r.started_at.at >= s);
        if keep {
            races.push(store.load(&id)?);
        }
    }
    // Ids are start times to the microsecond: they order races started within one second.
    races.sort_by(|(a, _), (b, _)| {
        (a.started_at.at, &a.race_id).cmp(&(b.started_at.at, &b.race_id))
    });
    if let Some(n) = last {
        let skip = races.len().saturating_sub(n);
        races.drain(..skip);
    }
    Ok(races)
}

/// `runner plot --trend`: each series' chart, with its change points, into `out`.
pub(super) fn plot(filter: &RaceFilter, out: &Path, home: &Path) -> Result<usize, CliError> {
    let races = load_races(filter, None, None, home)?;
    let opts = TrendOptions {
        max_p: 0.001,
        noise_threshold: 0.05,
    };
    let trend = crate::trend::trend(&races, &TrendMetric::DEFAULT, &describe(filter, None), opts)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    write_charts(&trend, out)
}

fn write_charts(trend: &crate::trend::Trend, dir: &Path) -> Result<usize, CliError> {
    std::fs::create_dir_all(dir).map_err(|e| CliError::Usage(format!("{}: {e}", dir.display())))?;
    let charts = crate::plot::trend_charts(trend);
    for p in &charts {
        crate::results::write_atomic(&dir.join(&p.file), p.svg.as_bytes())?;
    }
    Ok(charts.len())
}

/// The filter in words, for "no race matches ...".
fn describe(f: &RaceFilter, since: Option<&String>) -> String {
    let mut parts = Vec::new();
    for (k, v) in [
        ("--track", &f.track),
        ("--challenge", &f.challenge),
        ("--backend", &f.backend),
        ("--since", &since.cloned()),
    ] {
        if let Some(v) = v {
            parts.push(format!("{k} {v}"));
        }
    }
    parts.extend(f.user_tags.iter().map(|t| format!("--user-tag {t}")));
    if parts.is_empty() {
        "(no filter)".into()
    } else {
        parts.join(" ")
    }
}
