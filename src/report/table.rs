//! The summary as tables: one model of each table (title, columns, cells), rendered by the
//! markdown report and by report.html alike, so that the two cannot drift apart (as
//! hyperfine's markup exporters share one table).

use super::Summary;
use crate::metrics::PERCENTILES;
use crate::units::format_number;
use std::fmt::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A cell's text and, for HTML, an optional CSS class (a verdict's colour).
pub struct Cell {
    pub text: String,
    pub class: Option<&'static str>,
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell { text, class: None }
    }
}

pub struct Table {
    pub title: String,
    pub columns: Vec<(String, Align)>,
    pub rows: Vec<Vec<Cell>>,
    /// A line under the table (what a mark in it means).
    pub note: Option<String>,
}

/// The mark of a percentile too few samples support.
pub const UNSUPPORTED: &str = "—";
const UNSUPPORTED_NOTE: &str = "— : too few samples for this percentile (p50 needs 2, p90 10, p95 20, p99 100, p99.9 1,000, p99.99 10,000).";

impl Table {
    pub(super) fn new(title: &str, columns: &[(&str, Align)]) -> Table {
        Table {
            title: title.into(),
            columns: columns.iter().map(|(c, a)| (c.to_string(), *a)).collect(),
            rows: Vec::new(),
            note: None,
        }
    }

    pub(super) fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells.into_iter().map(Cell::from).collect());
    }

    /// `## title`, then a GitHub-flavoured table. A `|` or a line break in a cell would end
    /// the cell or the row, so they are escaped.
    pub fn markdown(&self, out: &mut String) {
        let _ = writeln!(out, "\n## {}\n", self.title);
        let heads: Vec<&str> = self.columns.iter().map(|(c, _)| c.as_str()).collect();
        let _ = writeln!(out, "| {} |", heads.join(" | "));
        let aligns: String = self
            .columns
            .iter()
            .map(|(_, a)| if *a == Align::Right { "--:|" } else { "---|" })
            .collect();
        let _ = writeln!(out, "|{aligns}");
        for row in &self.rows {
            let cells: Vec<String> = row
                .iter()
                .map(|c| c.text.replace('|', "\\|").replace('\n', " "))
                .collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        if let Some(note) = &self.note {
            let _ = writeln!(out, "\n{note}");
        }
    }

    /// `<h2>title</h2>` and the table; numbers are right-aligned by the `num` class.
    pub fn html(&self, out: &mut String) {
        let _ = writeln!(out, "<h2>{}</h2>", esc(&self.title));
        self.html_table(out);
    }

    /// The table alone, without its heading.
    pub fn html_table(&self, out: &mut String) {
        out.push_str("<table><thead><tr>");
        for (head, _) in &self.columns {
            let _ = write!(out, "<th>{}</th>", esc(head));
        }
        out.push_str("</tr></thead><tbody>\n");
        for row in &self.rows {
            out.push_str("<tr>");
            for (cell, (_, align)) in row.iter().zip(&self.columns) {
                let class = match (cell.class, align) {
                    (Some(c), _) => format!(" class=\"{c}\""),
                    (None, Align::Right) => " class=\"num\"".to_string(),
                    (None, Align::Left) => String::new(),
                };
                let _ = write!(out, "<td{class}>{}</td>", esc(&cell.text));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table>\n");
        if let Some(note) = &self.note {
            let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(note));
        }
    }
}

pub use crate::units::ms;

/// Escapes text for HTML and SVG, in element text and in quoted attributes alike.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Throughput, service time, latency and outcomes of every reported task.
pub fn summary_tables(s: &Summary) -> Vec<Table> {
    let mut tables = vec![throughput_table(s)];
    tables.extend(durations_table(s));
    tables.extend([
        percentile_table(s, "Service time (ms, all trials; call to response)", true),
        percentile_table(
            s,
            "Latency (ms, all trials; intended start to response)",
            false,
        ),
        outcomes_table(s),
    ]);
    if let Some(thresholds) = thresholds_table(s) {
        tables.push(thresholds);
    }
    tables.extend(super::capacity::tables(s));
    tables.extend(super::recall::tables(s));
    tables.extend(super::recall::runner_numbers_table(s));
    if let Some(hidden) = unreported_failures_table(s) {
        tables.push(hidden);
    }
    if let Some(runner) = runner_table(s) {
        tables.push(runner);
    }
    tables.extend(super::shards::shards_table(s));
    if let Some(server) = server_table(s) {
        tables.push(server);
    }
    tables
}

/// Throughput across trials per task and sweep point, and each trial's (tasks of one
/// operation have a duration, not a rate: they are in `durations_table`).
fn throughput_table(s: &Summary) -> Table {
    use Align::{Left as L, Right as R};
    let mut throughput = Table::new(
        "Throughput",
        &[
            ("Task", L),
            ("Sweep", L),
            ("Clients", R),
            ("Target", R),
            ("Min", R),
            ("Median", R),
            ("Mean", R),
            ("Max", R),
            ("Unit", L),
            ("Trials", R),
            ("Per trial", L),
        ],
    );
    for t in s.tasks.iter().filter(|t| t.duration_ms.is_none()) {
        let slot = &t.record.slot;
        let stats = t.throughput.unwrap_or_default();
        throughput.row(vec![
            slot.task.clone(),
            t.sweep_label.clone(),
            slot.clients.to_string(),
            match (&slot.capacity, &slot.ramp, slot.target_throughput) {
                (Some(_), _, _) => "max (capacity probe)".into(),
                (_, Some(_), _) => "ramp".into(),
                (_, _, Some(t)) => format_number(t.0),
                _ => "-".into(),
            },
            format_number(stats.min),
            format_number(stats.median),
            format_number(stats.mean),
            format_number(stats.max),
            slot.throughput_unit.to_string(),
            format!("{}/{}", t.completed_trials, slot.planned_trials),
            per_trial(t, |tr| format_number(tr.throughput)),
        ]);
    }
    throughput
}

/// A server's count or level: whole numbers as they are (`segments 4`), others to three
/// significant digits.
fn format_amount(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        crate::units::format_significant(v)
    }
}

/// Tasks of one operation per trial (a create-index, a refresh): how long the operation took.
fn durations_table(s: &Summary) -> Option<Table> {
    use Align::{Left as L, Right as R};
    let mut table = Table::new(
        "Durations (tasks of one operation, ms)",
        &[
            ("Task", L),
            ("Sweep", L),
            ("Min", R),
            ("Median", R),
            ("Mean", R),
            ("Max", R),
            ("Trials", R),
            ("Per trial", L),
        ],
    );
    for t in &s.tasks {
        let Some(d) = t.duration_ms else { continue };
        table.row(vec![
            t.record.slot.task.clone(),
            t.sweep_label.clone(),
            ms(d.min),
            ms(d.median),
            ms(d.mean),
            ms(d.max),
            format!("{}/{}", t.completed_trials, t.record.slot.planned_trials),
            per_trial(t, |tr| ms(tr.service_time_ms.mean)),
        ]);
    }
    (!table.rows.is_empty()).then_some(table)
}

/// Each trial's value, in order (`*` marks one cut short), after the warmup trials' count.
fn per_trial(
    t: &super::TaskSummary,
    value: impl Fn(&crate::results::TrialRecord) -> String,
) -> String {
    let values: Vec<String> = t
        .record
        .trials
        .iter()
        .map(|tr| match (&tr.failure, tr.interrupted) {
            (Some(_), _) => "failed".into(),
            (None, true) => format!("{}*", value(tr)),
            (None, false) => value(tr),
        })
        .collect();
    match t.record.slot.warmup_trials {
        0 => values.join(", "),
        n => format!("(after {n} warmup) {}", values.join(", ")),
    }
}

/// Service time or latency percentiles, all trials merged.
fn percentile_table(s: &Summary, title: &str, service: bool) -> Table {
    use Align::{Left as L, Right as R};
    let mut columns = vec![("Task", L), ("Sweep", L), ("Mean", R)];
    columns.extend(PERCENTILES.iter().map(|(label, _)| (*label, R)));
    let mut table = Table::new(title, &columns);
    for t in &s.tasks {
        let p = if service {
            &t.service_time_ms
        } else {
            &t.latency_ms
        };
        let mut row = vec![
            t.record.slot.task.clone(),
            t.sweep_label.clone(),
            if p.count > 0 { ms(p.mean) } else { "-".into() },
        ];
        let shown = p.shown();
        if p.count > 0 && shown.iter().any(Option::is_none) {
            table.note = Some(UNSUPPORTED_NOTE.into());
        }
        row.extend(
            shown
                .iter()
                .map(|v| v.map_or_else(|| UNSUPPORTED.to_string(), ms)),
        );
        table.row(row);
    }
    table
}

/// Operations, successes, errors by kind, units and hits.
fn outcomes_table(s: &Summary) -> Table {
    use Align::{Left as L, Right as R};
    let mut outcomes = Table::new(
        "Outcomes",
        &[
            ("Task", L),
            ("Sweep", L),
            ("Operations", R),
            ("Successes", R),
            ("Errors", R),
            ("Error rate", R),
            ("Errors by kind", L),
            ("Units", R),
            ("Hits", R),
        ],
    );
    for t in &s.tasks {
        let kinds: Vec<String> = t
            .errors_by_kind
            .iter()
            .map(|(k, n)| format!("{k}: {n}"))
            .collect();
        outcomes.row(vec![
            t.record.slot.task.clone(),
            t.sweep_label.clone(),
            t.operations.to_string(),
            t.successes.to_string(),
            t.errors.to_string(),
            format!("{:.2}%", t.error_rate * 100.0),
            if kinds.is_empty() {
                "-".into()
            } else {
                kinds.join(", ")
            },
            t.units.to_string(),
            t.hits.to_string(),
        ]);
    }
    outcomes
}

/// Tasks left out of the report (Rally's administrative operations) whose operations failed:
/// a create-index that failed makes every later number meaningless, so it is shown in every
/// report, and it fails the race's exit code.
pub fn unreported_failures(s: &Summary) -> Vec<String> {
    s.race
        .tasks
        .iter()
        .filter(|t| !t.slot.reported)
        .filter_map(|t| {
            let errors: u64 = t.trials.iter().map(|tr| tr.errors).sum();
            let operations: u64 = t.trials.iter().map(|tr| tr.operations).sum();
            let first = t
                .trials
                .iter()
                .find_map(|tr| tr.error_messages.iter().next())
                .map(|(kind, m)| format!(" ({}: {m})", kind.as_str()));
            (errors > 0).then(|| {
                format!(
                    "{}: {errors} of {operations} operations failed{}",
                    t.slot.task,
                    first.unwrap_or_default()
                )
            })
        })
        .collect()
}

fn unreported_failures_table(s: &Summary) -> Option<Table> {
    let failures = unreported_failures(s);
    if failures.is_empty() {
        return None;
    }
    let mut table = Table::new(
        "Failed outside the report (administrative tasks)",
        &[("Task: what failed", Align::Left)],
    );
    for f in failures {
        table.row(vec![f]);
    }
    table.note = Some("These tasks are left out of the tables above, as Rally leaves administrative operations out; their failures make the race exit 1.".into());
    Some(table)
}

/// The server's side of each task: its CPU, what its counters grew by, and its levels at the
/// end (of the task's last trial that read them); None when the backend reports nothing.
fn server_table(s: &Summary) -> Option<Table> {
    use Align::{Left as L, Right as R};
    let mut table = Table::new(
        "Server (its own statistics over the trial)",
        &[
            ("Task", L),
            ("Sweep", L),
            ("CPU cores", R),
            ("Counters (growth)", L),
            ("Levels (at the end)", L),
        ],
    );
    let mut errors = Vec::new();
    for t in &s.tasks {
        if let Some(e) = t
            .record
            .trials
            .iter()
            .find_map(|tr| tr.server_stats_error.as_ref())
        {
            errors.push(format!("{}: {e}", t.record.slot.task));
        }
        let Some(u) = t
            .record
            .trials
            .iter()
            .rev()
            .find_map(|tr| tr.server.as_ref())
        else {
            continue;
        };
        let list = |m: &std::collections::BTreeMap<String, f64>, skip: &str| {
            m.iter()
                .filter(|(k, _)| *k != skip)
                .map(|(k, v)| format!("{k} {}", format_amount(*v)))
                .collect::<Vec<_>>()
                .join(" · ")
        };
        table.row(vec![
            t.record.slot.task.clone(),
            t.sweep_label.clone(),
            u.cpu_cores()
                .map_or_else(|| "-".into(), |c| format!("{c:.2}")),
            list(&u.deltas, "cpu_ms"),
            list(&u.gauges, ""),
        ]);
    }
    if table.rows.is_empty() && errors.is_empty() {
        return None;
    }
    let mut notes = server_warnings(s);
    if !errors.is_empty() {
        notes.push(format!(
            "Server statistics could not be read: {}.",
            errors.join("; ")
        ));
    }
    if !notes.is_empty() {
        table.note = Some(notes.join(" "));
    }
    Some(table)
}

/// Latency far above service time while the server was nearly idle: the wait was in the
/// client or the network, not the server.
pub fn server_warnings(s: &Summary) -> Vec<String> {
    s.tasks
        .iter()
        .filter_map(|t| {
            let cores = t.record.trials.iter().filter_map(|tr| tr.server.as_ref()?.cpu_cores()).fold(None, |m: Option<f64>, c| Some(m.map_or(c, |m| m.max(c))))?;
            let (latency, service) = (t.latency_ms.at(99.0)?, t.service_time_ms.at(99.0)?);
            (cores < 0.2 && latency > 2.0 * service && latency - service > 1.0).then(|| {
                format!(
                    "{} [{}]: latency p99 {} ms against service time p99 {} ms while the server used {cores:.2} cores: the wait was in the client or the network, not the server.",
                    t.record.slot.task,
                    t.sweep_label,
                    ms(latency),
                    ms(service)
                )
            })
        })
        .collect()
}

/// Each threshold of each task with its measured value and verdict; None without thresholds.
fn thresholds_table(s: &Summary) -> Option<Table> {
    use crate::thresholds::Verdict;
    use Align::{Left as L, Right as R};
    let mut table = Table::new(
        "Thresholds",
        &[
            ("Task", L),
            ("Sweep", L),
            ("Threshold", L),
            ("Value", R),
            ("Result", L),
        ],
    );
    for t in &s.tasks {
        for j in &t.thresholds {
            let (result, class) = match (&j.verdict, &j.reason) {
                (Verdict::Pass, _) => ("pass".to_string(), "better"),
                (Verdict::Fail, _) => ("FAIL".to_string(), "worse"),
                (Verdict::CannotJudge, reason) => (
                    format!("FAIL (cannot judge: {})", reason.as_deref().unwrap_or("?")),
                    "worse",
                ),
            };
            let mut row: Vec<Cell> = [
                t.record.slot.task.clone(),
                t.sweep_label.clone(),
                j.threshold.clone(),
                j.value.clone().unwrap_or_else(|| "-".into()),
            ]
            .into_iter()
            .map(Cell::from)
            .collect();
            row.push(Cell {
                text: result,
                class: Some(class),
            });
            table.rows.push(row);
        }
    }
    if table.rows.is_empty() {
        return None;
    }
    if !s.thresholds_pass() {
        table.note = Some("A threshold failed: `runner race` exits 3.".into());
    }
    Some(table)
}

/// When the runner used more than this share of its cores in a second, the numbers may
/// measure the client rather than the system.
const SATURATED: f64 = 0.8;

/// The runner's busiest trial of each task: where its own CPU use was highest.
fn busiest<'a>(t: &'a super::TaskSummary) -> Option<&'a crate::results::DriverRecord> {
    t.record
        .trials
        .iter()
        .filter_map(|tr| tr.driver.as_ref())
        .max_by(|a, b| a.peak_share().total_cmp(&b.peak_share()))
}

/// One line per task where the runner came near its cores, or where the track's param source
/// kept calls waiting (every report shows them).
pub fn runner_warnings(s: &Summary) -> Vec<String> {
    let mut lines = param_source_warnings(s);
    lines.extend(cpu_warnings(s));
    lines.extend(partial_search_warnings(s));
    lines
}

/// Tasks whose searches were answered by only some shards: successes, as Rally counts them,
/// but not the whole answer.
fn partial_search_warnings(s: &Summary) -> Vec<String> {
    s.tasks
        .iter()
        .filter_map(|t| {
            let partial: u64 = t.record.trials.iter().map(|tr| tr.partial_searches).sum();
            (partial > 0).then(|| format!(
                "{} [{}]: {partial} searches were answered by only some of their shards (`_shards.failed` above 0); they count as successes, as in Rally, but are partial results.",
                t.record.slot.task, t.sweep_label
            ))
        })
        .collect()
}

/// Tasks whose param source (the track's Python) fell behind: calls waited for their params.
fn param_source_warnings(s: &Summary) -> Vec<String> {
    s.tasks
        .iter()
        .filter_map(|t| {
            let p = t
                .record
                .trials
                .iter()
                .filter_map(|tr| tr.driver.as_ref()?.param_source.as_ref())
                .max_by_key(|p| p.waits)
                .filter(|p| p.waits > 0)?;
            let asked = match p.target_per_second {
                Some(t) => format!("against the {} ops/s asked", crate::units::format_number(t)),
                None => "for an unthrottled task".into(),
            };
            Some(format!(
                "{} [{}]: the param source `{}` kept {} calls waiting ({:.3} s in all): it drew {:.0} params/s {asked}; the driver, not the system, set the pace there.",
                t.record.slot.task, t.sweep_label, p.source, p.waits, p.wait_seconds, p.draws_per_second
            ))
        })
        .collect()
}

fn cpu_warnings(s: &Summary) -> Vec<String> {
    s.tasks
        .iter()
        .filter_map(|t| {
            let d = busiest(t).filter(|d| d.peak_share() > SATURATED)?;
            Some(format!(
                "{} [{}]: the runner used {:.2} of its {} cores in its busiest second ({:.0}%): the client may be the bottleneck{}.",
                t.record.slot.task,
                t.sweep_label,
                d.peak_cpu_cores,
                d.cores_available,
                d.peak_share() * 100.0,
                if s.race.backend.kind == "embedded" { " (the embedded engine runs in this process too)" } else { "" }
            ))
        })
        .collect()
}

/// The runner's own CPU and memory by task (its busiest trial); None for races stored before
/// the runner sampled itself.
fn runner_table(s: &Summary) -> Option<Table> {
    use Align::{Left as L, Right as R};
    let mut table = Table::new(
        "Runner (this process: CPU and memory while the task ran)",
        &[
            ("Task", L),
            ("Sweep", L),
            ("CPU cores (mean)", R),
            ("CPU cores (busiest second)", R),
            ("Cores available", R),
            ("Peak RSS MB", R),
        ],
    );
    for t in &s.tasks {
        let Some(d) = busiest(t) else { continue };
        table.row(vec![
            t.record.slot.task.clone(),
            t.sweep_label.clone(),
            format!("{:.2}", d.cpu_cores),
            format!("{:.2}", d.peak_cpu_cores),
            d.cores_available.to_string(),
            (d.peak_rss_bytes >> 20).to_string(),
        ]);
    }
    if table.rows.is_empty() {
        return None;
    }
    let warnings = runner_warnings(s);
    if !warnings.is_empty() {
        table.note = Some(format!("Warning: {}", warnings.join(" ")));
    }
    Some(table)
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::DriverRecord;

    #[test]
    fn a_runner_near_its_cores_is_warned_about() {
        let busy = DriverRecord {
            cpu_cores: 1.5,
            cores_available: 2,
            peak_cpu_cores: 1.9,
            ..DriverRecord::default()
        };
        let calm = DriverRecord {
            cpu_cores: 0.3,
            cores_available: 2,
            peak_cpu_cores: 0.5,
            ..DriverRecord::default()
        };
        assert!(busy.peak_share() > SATURATED);
        assert!(calm.peak_share() < SATURATED);
        assert_eq!(DriverRecord::default().peak_share(), 0.0);
    }
}
