//! The tables of capacity searches and ramps, for every format: each search's conclusion, its
//! probes, and a ramp's intended against achieved rate by stage and by second. Markdown and
//! HTML take the tables, CSV the rows, JSON the summaries (see `summary`).

use super::table::{Align, Cell, Table};
use super::Summary;
use crate::capacity::{CapacityRecord, ProbeVerdict};
use crate::results::{RateBySecond, TaskRecord};
use crate::track::rate::Ramp;
use crate::units::{format_number, ms};
use serde::Serialize;

/// Most seconds a ramp's per-second table shows in markdown and HTML (CSV and JSON have all).
const SECONDS_SHOWN: usize = 120;

/// One stage of a ramp, intended against achieved (means over its whole seconds).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StageSummary {
    pub stage: usize,
    pub from: f64,
    pub to: f64,
    pub start_s: f64,
    pub end_s: f64,
    /// Intended operations per second, mean over the stage's measured seconds.
    pub intended_per_second: f64,
    /// Achieved units per second over the same seconds; None when all were warmup.
    pub achieved_per_second: Option<f64>,
}

/// A ramp's stages, intended against achieved, from one trial's seconds.
pub fn stages(ramp: &Ramp, seconds: &RateBySecond) -> Vec<StageSummary> {
    let mut at = 0.0;
    let mut from = ramp.start;
    let mut out = Vec::new();
    for (i, s) in ramp.stages.iter().enumerate() {
        let end = at + s.duration.as_secs_f64();
        // The seconds whose middle lies in the stage, and measured.
        let inside: Vec<usize> = (0..seconds.intended.len())
            .filter(|k| (at..end).contains(&(*k as f64 + 0.5)))
            .collect();
        let measured: Vec<(f64, u64)> = inside
            .iter()
            .filter_map(|k| Some((seconds.intended[*k], seconds.achieved.get(*k).copied()??)))
            .collect();
        let n = measured.len() as f64;
        out.push(StageSummary {
            stage: i + 1,
            from,
            to: s.target,
            start_s: at,
            end_s: end,
            intended_per_second: if n > 0.0 {
                measured.iter().map(|m| m.0).sum::<f64>() / n
            } else {
                inside.iter().map(|k| seconds.intended[*k]).sum::<f64>()
                    / (inside.len().max(1) as f64)
            },
            achieved_per_second: (n > 0.0)
                .then(|| measured.iter().map(|m| m.1 as f64).sum::<f64>() / n),
        });
        at = end;
        from = s.target;
    }
    out
}

/// The searches' conclusions and their probes; the ramps by stage and by second.
pub fn tables(s: &Summary) -> Vec<Table> {
    let mut tables = Vec::new();
    let searches: Vec<(&TaskRecord, &str, &CapacityRecord)> = s
        .tasks
        .iter()
        .flat_map(|t| {
            t.record.trials.iter().filter_map(move |tr| {
                Some((t.record, t.sweep_label.as_str(), tr.capacity.as_ref()?))
            })
        })
        .collect();
    if !searches.is_empty() {
        tables.push(conclusions(&searches));
        tables.push(probes(&searches));
    }
    for t in &s.tasks {
        let Some(ramp) = &t.record.slot.ramp else {
            continue;
        };
        for tr in &t.record.trials {
            if let Some(seconds) = &tr.rate_by_second {
                tables.push(ramp_stages(t.task, tr.trial, ramp, seconds, t.record));
                if seconds.intended.len() <= SECONDS_SHOWN {
                    tables.push(ramp_seconds(t.task, tr.trial, seconds, t.record));
                }
            }
        }
    }
    tables
}

fn conclusions(searches: &[(&TaskRecord, &str, &CapacityRecord)]) -> Table {
    use Align::{Left as L, Right as R};
    let mut table = Table::new(
        "Capacity (the highest probed rate that held every SLO criterion)",
        &[
            ("Task", L),
            ("Sweep", L),
            ("Trial", R),
            ("SLO", L),
            ("Capacity ops/s", R),
            ("Achieved ops/s", R),
            ("Lowest failed ops/s", R),
            ("Unthrottled ops/s", R),
            ("Probes", R),
            ("Time s", R),
            ("Conclusion", L),
        ],
    );
    let rate = |v: Option<f64>| v.map_or("-".into(), format_number);
    for (task, sweep, c) in searches {
        let mut conclusion = c.conclusion.describe().to_string();
        if let Some(why) = &c.reason {
            conclusion = format!("{conclusion}: {why}");
        }
        table.row(vec![
            task.slot.task.clone(),
            sweep.to_string(),
            (c.trial + 1).to_string(),
            c.slo.join(", "),
            rate(c.capacity),
            rate(c.achieved),
            rate(c.failed_at),
            rate(c.unthrottled),
            c.probes.len().to_string(),
            format!("{:.0}", c.seconds),
            conclusion,
        ]);
    }
    table.note = Some("Latency counts from each operation's intended start, so a system behind schedule fails the goal. A probe within noise of a limit ran again (up to 3 runs; the majority decides). The task's other tables show the probe at the capacity.".into());
    table
}

fn probes(searches: &[(&TaskRecord, &str, &CapacityRecord)]) -> Table {
    use Align::{Left as L, Right as R};
    let mut table = Table::new(
        "Capacity probes",
        &[
            ("Task", L),
            ("Trial", R),
            ("Probe", R),
            ("Phase", L),
            ("Target ops/s", R),
            ("Achieved ops/s", R),
            ("Latency p50 ms", R),
            ("Latency p99 ms", R),
            ("Error rate", R),
            ("Late starts", R),
            ("Verdict", L),
        ],
    );
    for (task, _, c) in searches {
        for (i, p) in c.probes.iter().enumerate() {
            let (verdict, class) = match (p.verdict, p.within_noise) {
                (None, _) => ("calibration".to_string(), None),
                (Some(ProbeVerdict::Held), noise) => {
                    (format!("held{}", noisy(noise)), Some("better"))
                }
                (Some(ProbeVerdict::Failed), noise) => {
                    (format!("failed{}", noisy(noise)), Some("worse"))
                }
            };
            let mut row: Vec<Cell> = [
                task.slot.task.clone(),
                (c.trial + 1).to_string(),
                (i + 1).to_string(),
                format!("{:?}", p.phase).to_lowercase(),
                p.target.map_or("unthrottled".into(), format_number),
                format_number(p.achieved),
                ms(p.latency_ms.p50),
                ms(p.latency_ms.p99),
                format!("{:.2}%", p.error_rate * 100.0),
                p.late_starts.to_string(),
            ]
            .into_iter()
            .map(Cell::from)
            .collect();
            row.push(Cell {
                text: verdict,
                class,
            });
            table.rows.push(row);
        }
    }
    table
}

/// `0`, `30`, `12.5`: a stage boundary in seconds.
fn seconds_text(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}").trim_end_matches('0').to_string()
    }
}

fn noisy(within: bool) -> &'static str {
    if within {
        " (within noise)"
    } else {
        ""
    }
}

fn ramp_stages(
    task: &str,
    trial: u64,
    ramp: &Ramp,
    seconds: &RateBySecond,
    r: &TaskRecord,
) -> Table {
    use Align::{Left as L, Right as R};
    let unit = r.slot.throughput_unit.as_str();
    let mut table = Table::new(
        &format!(
            "Ramp of {task}, trial {}: intended and achieved rate by stage",
            trial + 1
        ),
        &[
            ("Stage", R),
            ("From ops/s", R),
            ("To ops/s", R),
            ("Seconds", L),
            ("Intended ops/s (mean)", R),
            (&format!("Achieved {unit} (mean)"), R),
            ("Achieved / intended", R),
        ],
    );
    for st in stages(ramp, seconds) {
        table.row(vec![
            st.stage.to_string(),
            crate::units::format_rate(st.from),
            crate::units::format_rate(st.to),
            format!("{}–{}", seconds_text(st.start_s), seconds_text(st.end_s)),
            format_number(st.intended_per_second),
            st.achieved_per_second
                .map_or("warmup".into(), format_number),
            match st.achieved_per_second {
                Some(a) if st.intended_per_second > 0.0 => {
                    format!("{:.1}%", 100.0 * a / st.intended_per_second)
                }
                _ => "-".into(),
            },
        ]);
    }
    table
}

fn ramp_seconds(task: &str, trial: u64, seconds: &RateBySecond, r: &TaskRecord) -> Table {
    use Align::Right as R;
    let unit = r.slot.throughput_unit.as_str();
    let mut table = Table::new(
        &format!("Ramp of {task}, trial {}: second by second", trial + 1),
        &[
            ("Second", R),
            ("Intended ops", R),
            (&format!("Achieved {unit}"), R),
        ],
    );
    for (k, intended) in seconds.intended.iter().enumerate() {
        table.row(vec![
            k.to_string(),
            format_number(*intended),
            seconds
                .achieved
                .get(k)
                .copied()
                .flatten()
                .map_or("warmup".into(), |a| a.to_string()),
        ]);
    }
    table
}

/// CSV rows of a trial's search and ramp: `capacity`, and per probe `probe_<n>_*`; per second
/// `intended_second_<k>` and `achieved_second_<k>`.
pub fn trial_rows(tr: &crate::results::TrialRecord, row: &mut dyn FnMut(String, f64, &str)) {
    if let Some(c) = &tr.capacity {
        for (name, v) in [
            ("capacity", c.capacity),
            ("capacity_achieved", c.achieved),
            ("capacity_lowest_failed", c.failed_at),
            ("capacity_unthrottled", c.unthrottled),
        ] {
            if let Some(v) = v {
                row(name.into(), v, "ops/s");
            }
        }
        row("capacity_probes".into(), c.probes.len() as f64, "count");
        row("capacity_seconds".into(), c.seconds, "s");
        for (i, p) in c.probes.iter().enumerate() {
            let n = i + 1;
            if let Some(t) = p.target {
                row(format!("probe_{n}_target"), t, "ops/s");
            }
            row(format!("probe_{n}_achieved"), p.achieved, "ops/s");
            row(format!("probe_{n}_latency_p50"), p.latency_ms.p50, "ms");
            row(format!("probe_{n}_latency_p99"), p.latency_ms.p99, "ms");
            row(format!("probe_{n}_error_rate"), p.error_rate, "ratio");
            if let Some(v) = p.verdict {
                row(
                    format!("probe_{n}_held"),
                    f64::from(u8::from(v == ProbeVerdict::Held)),
                    "bool",
                );
            }
        }
    }
    if let Some(seconds) = &tr.rate_by_second {
        for (k, intended) in seconds.intended.iter().enumerate() {
            row(format!("intended_second_{k}"), *intended, "ops");
            if let Some(Some(a)) = seconds.achieved.get(k) {
                row(format!("achieved_second_{k}"), *a as f64, "units");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::track::rate::Stage;
    use std::time::Duration;

    #[test]
    fn stages_average_the_seconds_they_hold() {
        let ramp = Ramp {
            start: 0.0,
            stages: vec![
                Stage {
                    duration: Duration::from_secs(2),
                    target: 100.0,
                },
                Stage {
                    duration: Duration::from_secs(2),
                    target: 100.0,
                },
            ],
        };
        let seconds = RateBySecond {
            intended: ramp.intended_per_second(),
            achieved: vec![None, Some(74), Some(100), Some(98)],
        };
        let st = stages(&ramp, &seconds);
        assert_eq!(st.len(), 2);
        // The first stage's first second was warmup: only its second one counts.
        assert_eq!(st[0].achieved_per_second, Some(74.0));
        assert!((st[0].intended_per_second - 75.0).abs() < 1e-9);
        assert_eq!(st[1].achieved_per_second, Some(99.0));
        assert!((st[1].intended_per_second - 100.0).abs() < 1e-9);
    }
}
