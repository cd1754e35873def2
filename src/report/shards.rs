//! A race merged from shards: which shards it holds, which are missing, and each shard's own
//! numbers beside the merged ones.

use super::table::{ms, Align, Table};
use super::Summary;
use crate::results::RaceRecord;
use crate::units::format_number;

/// Lines for the top of a report: what the race was merged from.
pub fn shard_lines(r: &RaceRecord) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(role) = &r.shard {
        lines.push(format!(
            "shard {} of {} of race {}: this load driver's part alone (clock offset {:.3} ms, round trip {:.3} ms to the rendezvous at {})",
            role.index, role.count, role.race, role.clock_offset_ms, role.round_trip_ms, role.coordinator
        ));
    }
    let Some(shards) = &r.shards else {
        return lines;
    };
    let merged: Vec<String> = shards
        .merged
        .iter()
        .map(|(i, host)| format!("{i} ({host})"))
        .collect();
    lines.push(format!(
        "merged from {} of {} shards: {}",
        shards.merged.len(),
        shards.count,
        merged.join(", ")
    ));
    for (i, why) in &shards.missing {
        lines.push(format!("incomplete: shard {i} is missing ({why}); its part of the load is not in these numbers"));
    }
    if !shards.barriers.is_empty() {
        let spread = shards
            .barriers
            .iter()
            .map(|b| b.arrival_spread_ms)
            .fold(0.0, f64::max);
        let after = shards
            .barriers
            .iter()
            .map(|b| b.start_after_ms)
            .fold(0.0, f64::max);
        let slack = shards
            .barriers
            .iter()
            .filter_map(|b| b.min_slack_ms)
            .reduce(f64::min);
        let heard = match slack {
            Some(s) if s >= 0.0 => format!("; every shard heard of each start at least {s:.1} ms ahead"),
            Some(s) => format!("; a shard heard of a start {:.1} ms late, and started that late (its latencies include it)", -s),
            None => String::new(),
        };
        lines.push(format!(
            "{} rendezvous: shards arrived at most {spread:.1} ms apart; each step started at most {after:.1} ms after the last arrival{heard}",
            shards.barriers.len()
        ));
    }
    lines
}

/// Each shard's part of each trial of a merged race.
pub fn shards_table(s: &Summary) -> Option<Table> {
    use Align::{Left as L, Right as R};
    s.race.shards.as_ref()?;
    let mut table = Table::new(
        "Shards (each load driver's own part of each trial)",
        &[
            ("Task", L),
            ("Sweep", L),
            ("Trial", R),
            ("Shard", R),
            ("Operations", R),
            ("Errors", R),
            ("Throughput", R),
            ("Unit", L),
            ("Service p50", R),
            ("Service p99", R),
            ("Latency p99", R),
        ],
    );
    let p = |v: Option<f64>| v.map_or_else(|| super::table::UNSUPPORTED.to_string(), ms);
    for t in &s.tasks {
        for tr in &t.record.trials {
            for sh in &tr.per_shard {
                table.row(vec![
                    t.record.slot.task.clone(),
                    t.sweep_label.clone(),
                    (tr.trial + 1).to_string(),
                    sh.shard.to_string(),
                    sh.operations.to_string(),
                    sh.errors.to_string(),
                    if sh.failure.is_some() {
                        "failed".into()
                    } else {
                        format_number(sh.throughput)
                    },
                    t.record.slot.throughput_unit.to_string(),
                    p(sh.service_time_ms.at(50.0)),
                    p(sh.service_time_ms.at(99.0)),
                    p(sh.latency_ms.at(99.0)),
                ]);
            }
        }
    }
    table.note = Some("The tables above merge the shards exactly: histograms added, counts summed, throughput over the union of the shards' measured windows on the shared clock.".into());
    (!table.rows.is_empty()).then_some(table)
}
