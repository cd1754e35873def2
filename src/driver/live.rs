//! What the driver tells a live view (the dashboard) as a race runs: each step's tasks as it
//! starts, and each second of every running task, from the sampler's thread (never from a
//! client's loop).

use super::progress::{Board, Progress, TaskView};
use super::telemetry::{Sampler, Watch};
use crate::metrics::{LiveGroup, LiveTotals, SecondPoint};
use crate::ops::PayloadSource;
use crate::plan::{Leaf, Plan};
use std::sync::Arc;

/// Where a race's live view goes. Calls come from the driver and from the sampler's thread
/// once a second per running task: an implementation must not block for long (a slow
/// viewer drops what it cannot take).
pub trait LiveSink: Send + Sync + std::fmt::Debug {
    /// The race starts: what it is (id, track, challenge, backend) and its counted steps.
    fn race_started(&self, race: serde_json::Value, steps: Vec<Vec<TaskView>>);
    /// A counted step starts (`step` from 0) with these tasks.
    fn step_started(&self, step: usize, tasks: &[TaskView]);
    /// One second of a running task: the second, its totals so far, and the runner's CPU in
    /// that second out of `cores`.
    fn second(&self, task: &str, point: &SecondPoint, totals: &LiveTotals, cpu: f64, cores: u32);
    fn step_ended(&self, step: usize);
}

/// A leaf as this process runs it: its share of the iterations, when it has a fixed number.
pub(super) fn shard_view(plan: &Plan, leaf: &Leaf, slice: super::Slice) -> TaskView {
    let mut view = task_view(plan, leaf);
    if let crate::plan::Work::Iterations { warmup, measured } = leaf.work {
        view.total_operations =
            Some(slice.share(warmup, leaf.clients) + slice.share(measured, leaf.clients));
    }
    view
}

/// Starts watching a leaf's clients: its progress line, and the sampler that keeps its
/// timeline and hands each second to the live view.
pub(super) fn watch(
    live: Option<&Arc<dyn LiveSink>>,
    view: TaskView,
    groups: Vec<Arc<LiveGroup>>,
    (board, lead): (Option<&Board>, bool),
) -> (Progress, Sampler) {
    let publish = live.cloned().map(|live| {
        let (task, cores) = (view.label.clone(), super::telemetry::cores_available());
        Box::new(move |point: &_, totals: &_, cpu| live.second(&task, point, totals, cpu, cores))
            as super::telemetry::Publish
    });
    let progress = Progress::start(board, view, groups.clone(), lead);
    (progress, Sampler::start(Some(Watch { groups, publish })))
}

/// A leaf as its progress line and the dashboard show it.
pub(super) fn task_view(plan: &Plan, leaf: &Leaf) -> TaskView {
    let unit = leaf
        .result
        .map_or("ops/s", |r| plan.results[r].throughput_unit.as_str());
    TaskView {
        label: super::trial_label(plan, leaf),
        unit,
        total_operations: match leaf.work {
            crate::plan::Work::Iterations { warmup, measured } => Some(warmup + measured),
            _ => None,
        },
        total_units: declared_documents(leaf),
        planned: crate::plan::leaf_duration(leaf),
        target: leaf.target_throughput.map(|t| t.0),
    }
}

pub(super) fn task_views(plan: &Plan, leaves: &[Leaf]) -> Vec<TaskView> {
    leaves.iter().map(|l| task_view(plan, l)).collect()
}

/// The plan's counted steps (those that run tasks), each with its tasks.
pub fn plan_views(plan: &Plan) -> Vec<Vec<TaskView>> {
    plan.steps
        .iter()
        .filter_map(|s| match s {
            crate::plan::Step::Run { leaves } => Some(task_views(plan, leaves)),
            crate::plan::Step::Reset { .. } => None,
        })
        .collect()
}

/// The documents a bulk task will index, when its corpus declares its size (Rally's
/// `document-count`): the share of the corpus done is shown against it.
fn declared_documents(leaf: &Leaf) -> Option<u64> {
    let PayloadSource::Corpus(bulk) = leaf.spec.payload_source() else {
        return None;
    };
    if bulk.looped || !matches!(leaf.work, crate::plan::Work::Corpus { .. }) {
        return None;
    }
    let declared: u64 = bulk
        .files
        .iter()
        .map(|f| f.document_count)
        .sum::<Option<u64>>()?;
    let limited = leaf.document_limit.map_or(declared, |l| declared.min(l));
    Some(match bulk.ingest_percentage {
        Some(pct) => (limited as f64 * pct / 100.0).floor() as u64,
        None => limited,
    })
}
