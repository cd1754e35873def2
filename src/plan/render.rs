//! `runner plan` as text: the steps in order, each leaf with what it will do.

use super::{sweep_label, Leaf, Plan, Step, Work};
use crate::track::ScheduleKind;
use std::fmt::Write;

fn describe(leaf: &Leaf) -> String {
    let mut s = format!("{} ({})", leaf.operation.name, leaf.operation.kind);
    let _ = write!(
        s,
        ", {} client{}",
        leaf.clients,
        if leaf.clients == 1 { "" } else { "s" }
    );
    match leaf.work {
        Work::Iterations { warmup, measured } => {
            if warmup > 0 {
                let _ = write!(s, ", {warmup} warmup + {measured} iterations");
            } else {
                let _ = write!(
                    s,
                    ", {measured} iteration{}",
                    if measured == 1 { "" } else { "s" }
                );
            }
        }
        Work::Time { warmup, measured } => {
            let _ = write!(
                s,
                ", {:.1}s warmup + {:.1}s measured",
                warmup.as_secs_f64(),
                measured.as_secs_f64()
            );
        }
        Work::Corpus {
            warmup_fraction,
            warmup_time,
            warmup_requests,
        } => {
            let _ = write!(s, ", whole corpus");
            if let Some(limit) = leaf.document_limit {
                let _ = write!(s, " (first {limit} documents)");
            }
            if warmup_fraction > 0.0 {
                let _ = write!(s, ", first {:.0}% as warmup", warmup_fraction * 100.0);
            }
            if !warmup_time.is_zero() {
                let _ = write!(s, ", first {:.1}s as warmup", warmup_time.as_secs_f64());
            }
            if warmup_requests > 0 {
                let _ = write!(s, ", first {warmup_requests} requests as warmup");
            }
        }
    }
    if let Some(c) = &leaf.capacity {
        let slo: Vec<String> = c.slo.iter().map(ToString::to_string).collect();
        let _ = write!(
            s,
            " per probe, {} probes searching the highest rate that holds {} (within {:.1}%, at most {} probes)",
            if leaf.schedule == ScheduleKind::Poisson { "poisson" } else { "deterministic" },
            slo.join(", "),
            c.precision * 100.0,
            c.max_probes
        );
        return s;
    }
    if let Some(r) = &leaf.ramp {
        let rates: Vec<String> = std::iter::once(r.start)
            .chain(r.stages.iter().map(|st| st.target))
            .map(crate::units::format_rate)
            .collect();
        let _ = write!(
            s,
            ", {} ramp {} ops/s over {} stage{}",
            if leaf.schedule == ScheduleKind::Poisson {
                "poisson"
            } else {
                "deterministic"
            },
            rates.join(" → "),
            r.stages.len(),
            if r.stages.len() == 1 { "" } else { "s" }
        );
        return s;
    }
    match (leaf.target_throughput, leaf.schedule) {
        (Some(t), ScheduleKind::Poisson) => {
            let _ = write!(s, ", poisson at {t} ops/s");
        }
        (Some(t), _) => {
            let _ = write!(s, ", target {t} ops/s");
        }
        (None, _) => s.push_str(", unthrottled"),
    }
    if let crate::ops::OpSpec::Bulk(bulk) = &leaf.spec {
        if leaf.operation.params.contains_key("bulk-size") {
            let _ = write!(s, ", bulk-size {}", bulk.bulk_size.0);
        }
    }
    s
}

pub fn render_text(plan: &Plan) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "track {} · challenge {}{}",
        plan.track,
        plan.challenge,
        if plan.test_mode { " · test mode" } else { "" }
    );
    let runs = plan
        .steps
        .iter()
        .filter(|s| matches!(s, Step::Run { .. }))
        .count();
    let _ = writeln!(
        out,
        "{} steps, {} runs, {} task × sweep points\n",
        plan.steps.len(),
        runs,
        plan.results.len()
    );
    for (i, step) in plan.steps.iter().enumerate() {
        match step {
            Step::Reset { before, operations } => {
                let names: Vec<_> = operations
                    .iter()
                    .map(|l| l.operation.name.as_str())
                    .collect();
                let _ = writeln!(
                    out,
                    "{:>4}. reset before {before}: {}",
                    i + 1,
                    names.join(", ")
                );
            }
            Step::Run { leaves } if leaves.len() == 1 => {
                let l = &leaves[0];
                let slot = &plan.results[l.result.unwrap_or(0)];
                let (what, of) = if l.warmup_trial {
                    ("warmup trial", slot.warmup_trials)
                } else {
                    ("trial", slot.planned_trials)
                };
                let _ = writeln!(
                    out,
                    "{:>4}. {} [{}] {what} {}/{of}: {}",
                    i + 1,
                    l.task,
                    sweep_label(&slot.sweep),
                    l.trial + 1,
                    describe(l)
                );
            }
            Step::Run { leaves } => {
                let _ = writeln!(out, "{:>4}. parallel:", i + 1);
                for l in leaves {
                    let slot = &plan.results[l.result.unwrap_or(0)];
                    let _ = writeln!(
                        out,
                        "        - {} trial {}/{}: {}",
                        l.task,
                        l.trial + 1,
                        slot.planned_trials,
                        describe(l)
                    );
                }
            }
        }
    }
    out
}
