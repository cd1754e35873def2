//! The lines at the top of every report: how this race differs from the track, what it was
//! merged from, what failed outside the tables, warnings, and why it stopped. The markdown
//! summary and report.html show the same lines.

use super::Summary;
use crate::results::RaceStatus;

pub fn header_lines(s: &Summary) -> Vec<String> {
    let r = s.race;
    let mut lines: Vec<String> = r
        .deviations
        .iter()
        .map(|d| format!("this race differs from the track: {d}"))
        .collect();
    lines.extend(super::shards::shard_lines(r));
    if r.status == RaceStatus::Incomplete && r.shards.is_none() {
        lines.push("incomplete: the runner was killed during this race; the trials below are those stored before that.".into());
    }
    for failure in super::table::unreported_failures(s) {
        lines.push(format!("failed outside the report: {failure}"));
    }
    for warning in super::table::runner_warnings(s)
        .into_iter()
        .chain(super::table::server_warnings(s))
    {
        lines.push(format!("warning: {warning}"));
    }
    match (&r.stop_reason, r.status) {
        (Some(reason), RaceStatus::StoreFailed) => {
            lines.push(format!("not fully stored: {reason}"))
        }
        (Some(reason), _) => lines.push(format!("stopped early: {reason}")),
        (None, _) => {}
    }
    lines
}
