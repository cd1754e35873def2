//! The summary printed at the end of a race and by `runner show`.

use super::table::ms;
use super::{Render, Summary};
use crate::units::format_number;
use std::fmt::Write;

pub struct Markdown;

impl Render<Summary<'_>> for Markdown {
    fn render(&self, s: &Summary) -> String {
        let r = s.race;
        let mut out = String::new();
        let _ = writeln!(out, "# Race {}: {}\n", r.race_id, r.backend.system());
        let _ = writeln!(
            out,
            "track **{}** · challenge **{}** · backend **{}** · status **{}**{}",
            r.track,
            r.challenge,
            r.backend.kind,
            r.status.as_str(),
            if r.test_mode { " · test mode" } else { "" }
        );
        let _ = writeln!(
            out,
            "started {} · host {} ({} cpus) · runner {}",
            r.started_at, r.host.hostname, r.host.cpus, r.host.runner_version
        );
        for line in super::header::header_lines(s) {
            let _ = writeln!(out, "\n> {line}");
        }
        for table in super::table::summary_tables(s) {
            table.markdown(&mut out);
        }
        bulk_runs(&mut out, s);
        key_value_views(&mut out, s);
        let mut notes = Vec::new();
        for t in &s.tasks {
            for tr in &t.record.trials {
                if let Some(f) = &tr.failure {
                    notes.push(format!(
                        "- {} [{}] trial {}: failed: {f}",
                        t.record.slot.task,
                        t.sweep_label,
                        tr.trial + 1
                    ));
                }
                for (kind, msg) in &tr.error_messages {
                    notes.push(format!(
                        "- {} [{}] trial {}: first {kind} error: {msg}",
                        t.record.slot.task,
                        t.sweep_label,
                        tr.trial + 1
                    ));
                }
            }
        }
        if s.tasks
            .iter()
            .any(|t| t.record.trials.iter().any(|tr| tr.interrupted))
        {
            notes.push("- `*` marks a trial cut short (Ctrl-C or an abort); it is left out of the throughput statistics.".into());
        }
        if !notes.is_empty() {
            let _ = writeln!(out, "\n## Notes\n");
            notes.dedup();
            for n in notes.iter().take(50) {
                let _ = writeln!(out, "{n}");
            }
        }
        out
    }
}

/// Bulk tasks run by run, as the bulk indexer benchmark prints them: documents, requests,
/// time and docs/s of each recorded trial, then min/max/mean.
fn bulk_runs(out: &mut String, s: &Summary) {
    let bulk: Vec<_> = s
        .tasks
        .iter()
        .filter(|t| {
            t.record.slot.throughput_unit == crate::units::ThroughputUnit::Documents
                && !t.record.trials.is_empty()
        })
        .collect();
    if bulk.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## Bulk runs (measured part of each trial)\n\n```");
    for t in bulk {
        let r = t.record;
        let warmup = match r.slot.warmup_trials {
            0 => String::new(),
            1 => " · after 1 warmup run, not recorded".to_string(),
            n => format!(" · after {n} warmup runs, not recorded"),
        };
        let _ = writeln!(
            out,
            "{} [{}] · {} client{}{warmup}",
            r.slot.task,
            t.sweep_label,
            r.slot.clients,
            if r.slot.clients == 1 { "" } else { "s" }
        );
        for tr in &r.trials {
            let state = match (&tr.failure, tr.interrupted) {
                (Some(_), _) => " · failed".to_string(),
                (None, true) if tr.interrupted_operations > 0 => {
                    format!(
                        " · cut short ({} in flight dropped)",
                        tr.interrupted_operations
                    )
                }
                (None, true) => " · cut short".to_string(),
                _ => String::new(),
            };
            let skipped = if tr.warmup_units > 0 {
                format!(" (+{} warmup docs)", tr.warmup_units)
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  {:>3}) {} docs{skipped} · {} requests · {:.2} s · {} {} · {} errors{state}",
                tr.trial + 1,
                tr.units,
                tr.operations,
                tr.measured_seconds,
                format_number(tr.throughput),
                r.slot.throughput_unit,
                tr.errors
            );
        }
        match (t.throughput, t.duration_ms) {
            (Some(th), _) => {
                let _ = writeln!(
                    out,
                    "  min {} · max {} · mean {} {}",
                    format_number(th.min),
                    format_number(th.max),
                    format_number(th.mean),
                    r.slot.throughput_unit
                );
            }
            (None, Some(d)) => {
                let _ = writeln!(
                    out,
                    "  one operation: {} ms (min {} · max {})",
                    super::table::ms(d.mean),
                    super::table::ms(d.min),
                    super::table::ms(d.max)
                );
            }
            (None, None) => {}
        }
    }
    let _ = writeln!(out, "```");
}

/// `0.1`, `2`, `1500`: a bound as redis-benchmark prints it.
fn bound(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Key-value tasks read the way redis-benchmark and a metrics library's timer print them.
fn key_value_views(out: &mut String, s: &Summary) {
    let kv: Vec<_> = s
        .tasks
        .iter()
        .filter_map(|t| t.key_value.as_ref().map(|v| (t, v)))
        .collect();
    if kv.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n## Key-value: redis-benchmark view (all trials; latency from intended start)\n"
    );
    for (t, v) in &kv {
        redis_benchmark_view(out, t, v);
    }
    let _ = writeln!(
        out,
        "## Key-value: timer view (ms, all trials; latency from intended start)\n"
    );
    let _ = writeln!(out, "| Task | Sweep | Timer | Count | Mean rate (ops/s) | Min | Max | Mean | Stddev | Median | 75% | 95% | 98% | 99% | 99.9% |");
    let _ = writeln!(
        out,
        "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    );
    let pct = |v: Option<f64>| v.map_or_else(|| super::table::UNSUPPORTED.to_string(), ms);
    for (t, v) in &kv {
        for tm in &v.timers {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                t.record.slot.task,
                t.sweep_label,
                tm.name,
                tm.count,
                format_number(tm.mean_rate),
                ms(tm.min_ms),
                ms(tm.max_ms),
                ms(tm.mean_ms),
                ms(tm.stddev_ms),
                pct(tm.median_ms),
                pct(tm.p75_ms),
                pct(tm.p95_ms),
                pct(tm.p98_ms),
                pct(tm.p99_ms),
                pct(tm.p99_9_ms)
            );
        }
    }
}

/// One task as redis-benchmark prints it: requests, clients, payload, the mix achieved and the
/// cumulative latency distribution.
fn redis_benchmark_view(out: &mut String, t: &super::summary::TaskSummary, v: &super::kv::KvViews) {
    let rb = &v.redis_benchmark;
    let i = &v.info;
    let _ = writeln!(
        out,
        "```\n====== {} · {} [{}] ======",
        t.record.slot.task, i.commands, t.sweep_label
    );
    let _ = writeln!(
        out,
        "  {} requests completed in {:.2} seconds",
        rb.requests, rb.seconds
    );
    let _ = writeln!(out, "  {} parallel clients", rb.clients);
    let _ = writeln!(out, "  {} bytes payload", rb.payload_bytes);
    let _ = writeln!(out, "  keep alive: 1");
    let batching = if i.transaction {
        "transaction"
    } else {
        "pipeline"
    };
    if v.requests_by_command.len() > 1 {
        let total: u64 = v.requests_by_command.values().sum();
        let split: Vec<String> = v
            .requests_by_command
            .iter()
            .map(|(c, n)| format!("{c} {:.2}%", *n as f64 * 100.0 / total.max(1) as f64))
            .collect();
        let _ = writeln!(out, "  mix achieved: {}", split.join(" / "));
    }
    let _ = writeln!(
        out,
        "  {}-byte keys, keyspace {} ({}), {} {} per operation\n",
        i.key_size,
        i.keyspace,
        i.key_distribution,
        i.commands_per_operation,
        if i.commands_per_operation == 1 {
            "command".to_string()
        } else {
            format!("commands ({batching})")
        }
    );
    for line in &rb.cumulative {
        let _ = writeln!(
            out,
            "{:.2}% <= {} milliseconds",
            line.percent,
            bound(line.le_ms)
        );
    }
    let _ = writeln!(
        out,
        "{:.2} requests per second\n```\n",
        rb.requests_per_second
    );
}
