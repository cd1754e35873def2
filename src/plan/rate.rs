//! How a task with a ramp or a capacity search is planned: its work is a time (the ramp's
//! stages, or one probe), and test mode runs it as a plain one-second unthrottled task.

use super::{Work, TEST_MODE_TIME};
use crate::track::rate::{CapacitySpec, Ramp};
use crate::track::{TaskSpec, Warmup};
use crate::units::OpsPerSec;
use std::time::Duration;

/// The work of a ramped or searching task; None for the others.
pub(super) fn special_work(task: &TaskSpec, test_mode: bool) -> Option<Work> {
    let work = if let Some(c) = &task.capacity {
        Work::Time {
            warmup: c.probe_warmup,
            measured: c.probe_time,
        }
    } else {
        let total = task.ramp.as_ref()?.total();
        let warmup = match task.warmup {
            Warmup::Time(w) => w.min(total),
            Warmup::Fraction(f) => total.mul_f64(f),
            _ => Duration::ZERO,
        };
        Work::Time {
            warmup,
            measured: total - warmup,
        }
    };
    Some(match (test_mode, work) {
        (true, Work::Time { measured, .. }) => Work::Time {
            warmup: Duration::ZERO,
            measured: measured.min(TEST_MODE_TIME),
        },
        (_, work) => work,
    })
}

/// The search and the ramp a task's leaves and results carry (none in test mode, which runs
/// the task unthrottled for a second, as it runs every target).
pub(super) fn special_target(
    task: &TaskSpec,
    test_mode: bool,
) -> (Option<CapacitySpec>, Option<Ramp>) {
    if test_mode {
        return (None, None);
    }
    (task.capacity.clone(), task.ramp.clone())
}

/// Whether the task follows a schedule of rates (a target, a ramp or a search's probes).
pub(super) fn throttled(task: &TaskSpec, target: Option<OpsPerSec>) -> bool {
    target.is_some() || task.capacity.is_some() || task.ramp.is_some()
}
