//! What a race shows on a terminal while it runs: one line for the whole race (step i of n,
//! elapsed, time left) and one per running task (its rate in the task's unit, the share of
//! the corpus done, errors, live p50/p99 latency). A ticker reads the clients' live counters
//! ten times a second, so clients never touch the terminal. Without a terminal, a line per
//! finished step says how far the race is.

use crate::metrics::{LiveGroup, LiveTotals};
use crate::plan::{Plan, Step};
use crate::units::{format_duration_short, format_significant};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The race as the progress shows it: every step's planned length, and where it is.
pub struct Board {
    multi: Option<MultiProgress>,
    overall: ProgressBar,
    state: Arc<Mutex<Overall>>,
    ticker: Option<tokio::task::JoinHandle<()>>,
    /// Say how far the race is after each step (no terminal, not quiet).
    log_steps: bool,
}

/// How far the race is.
struct Overall {
    started: Instant,
    /// The planned length of each counted step (None: it runs as fast as it can), in order.
    planned: Vec<Option<Duration>>,
    /// The counted step running now (0-based), and when it started.
    current: usize,
    current_since: Instant,
    /// What the running step's tasks say is left of it, from their measured rate.
    current_left: Option<Duration>,
}

impl Overall {
    /// The time left, and how many steps after this one have no planned length (they run as
    /// fast as they can, so their time cannot be told before they start).
    fn left(&self) -> (Option<Duration>, usize) {
        let running = match (
            self.planned.get(self.current).copied().flatten(),
            self.current_left,
        ) {
            (_, Some(measured)) => Some(measured),
            (Some(planned), None) => Some(planned.saturating_sub(self.current_since.elapsed())),
            (None, None) => None,
        };
        let after = self.planned.iter().skip(self.current + 1);
        let unknown = after.clone().filter(|p| p.is_none()).count();
        let known: Duration = after.flatten().sum();
        (running.map(|r| r + known), unknown)
    }

    fn line(&self) -> String {
        let n = self.planned.len();
        let step = (self.current + 1).min(n);
        let (left, unknown) = self.left();
        let left = match (left, unknown) {
            (Some(l), 0) => format!("about {} left", format_duration_short(l)),
            (Some(l), u) => format!(
                "at least {} left (+{u} step{} of unknown length)",
                format_duration_short(l),
                if u == 1 { "" } else { "s" }
            ),
            (None, _) => "time left unknown until this step's rate is measured".into(),
        };
        format!(
            "step {step}/{n} · {} elapsed · {left}",
            format_duration_short(self.started.elapsed())
        )
    }
}

/// The steps a user counts: those that run tasks (resets run before them, unnumbered).
fn counted_steps(plan: &Plan) -> Vec<Option<Duration>> {
    plan.steps
        .iter()
        .filter_map(|s| match s {
            Step::Run { leaves } => Some(crate::plan::step_duration(leaves)),
            Step::Reset { .. } => None,
        })
        .collect()
}

impl Board {
    pub fn new(plan: &Plan, visible: bool, log_steps: bool) -> Board {
        let multi = visible.then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
        let state = Arc::new(Mutex::new(Overall {
            started: Instant::now(),
            planned: counted_steps(plan),
            current: 0,
            current_since: Instant::now(),
            current_left: None,
        }));
        let overall = match &multi {
            Some(m) => m.add(ProgressBar::with_draw_target(
                None,
                ProgressDrawTarget::hidden(),
            )),
            None => ProgressBar::hidden(),
        };
        overall.set_style(
            ProgressStyle::with_template("{msg}").unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let ticker = multi.is_some().then(|| {
            let (bar, state) = (overall.clone(), state.clone());
            tokio::spawn(async move {
                loop {
                    let line = lock(&state).line();
                    bar.set_message(line);
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            })
        });
        Board {
            multi,
            overall,
            state,
            ticker,
            log_steps,
        }
    }

    /// A counted step starts (`counted`: its place among them, from 0).
    pub fn step_started(&self, counted: usize) {
        let mut s = lock(&self.state);
        s.current = counted;
        s.current_since = Instant::now();
        s.current_left = None;
    }

    /// A counted step ended: without a terminal, one line says how far the race is.
    pub fn step_ended(&self) {
        if self.log_steps {
            let mut s = lock(&self.state);
            s.current += 1;
            s.current_since = Instant::now();
            s.current_left = None;
            let done = s.current.min(s.planned.len());
            let line = if done < s.planned.len() {
                format!("progress: {} done; next {}", plural_steps(done), s.line())
            } else {
                format!(
                    "progress: all {} done in {}",
                    plural_steps(done),
                    format_duration_short(s.started.elapsed())
                )
            };
            eprintln!("{line}");
        }
    }

    fn visible(&self) -> bool {
        self.multi.is_some()
    }
}

fn plural_steps(n: usize) -> String {
    format!("{n} step{}", if n == 1 { "" } else { "s" })
}

impl Drop for Board {
    fn drop(&mut self) {
        if let Some(t) = self.ticker.take() {
            t.abort();
        }
        self.overall.finish_and_clear();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What a running task's line (and the dashboard) needs to know of it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TaskView {
    pub label: String,
    /// The task's unit, as a rate (`docs/s`).
    pub unit: &'static str,
    /// Operations it will do, warmup included, when it does a fixed number.
    pub total_operations: Option<u64>,
    /// Units (documents) it will do, when known: the corpus's declared size.
    pub total_units: Option<u64>,
    /// How long it should run by its plan, when that is fixed.
    #[serde(rename = "planned_s", serialize_with = "seconds")]
    pub planned: Option<Duration>,
    /// The rate it is asked to keep (ops/s), if any.
    pub target: Option<f64>,
}

fn seconds<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    d.map(|d| d.as_secs_f64()).serialize(s)
}

/// One running task's line.
pub struct Progress {
    bar: ProgressBar,
    ticker: Option<tokio::task::JoinHandle<()>>,
}

impl Progress {
    pub fn start(
        board: Option<&Board>,
        view: TaskView,
        groups: Vec<Arc<LiveGroup>>,
        lead: bool,
    ) -> Progress {
        let Some(board) = board.filter(|b| b.visible()) else {
            return Progress {
                bar: ProgressBar::hidden(),
                ticker: None,
            };
        };
        let bar = match &board.multi {
            None => ProgressBar::hidden(),
            Some(multi) => multi.add(ProgressBar::with_draw_target(
                None,
                ProgressDrawTarget::hidden(),
            )),
        };
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_message(view.label.clone());
        let ticker = board.visible().then(|| {
            let (bar, state) = (bar.clone(), board.state.clone());
            tokio::spawn(async move {
                let mut line = TaskLine::new(view);
                loop {
                    let left = line.tick(&groups);
                    bar.set_message(line.text.clone());
                    bar.tick();
                    if lead {
                        lock(&state).current_left = left;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            })
        });
        Progress { bar, ticker }
    }

    pub fn finish(self) {
        if let Some(t) = self.ticker {
            t.abort();
        }
        self.bar.finish_and_clear();
    }
}

/// A running task's line, from its counters: rates over the last second or so.
struct TaskLine {
    view: TaskView,
    started: Instant,
    now: LiveTotals,
    /// Totals a second ago or more, and when they were read: the window of the rates shown.
    window: std::collections::VecDeque<(Instant, LiveTotals)>,
    text: String,
}

impl TaskLine {
    fn new(view: TaskView) -> TaskLine {
        TaskLine {
            text: view.label.clone(),
            view,
            started: Instant::now(),
            now: LiveTotals::default(),
            window: Default::default(),
        }
    }

    /// Reads the counters and writes the line; returns the time left by the measured rate.
    fn tick(&mut self, groups: &[Arc<LiveGroup>]) -> Option<Duration> {
        let at = Instant::now();
        self.now.read(groups);
        self.window.push_back((at, self.now.clone()));
        while self.window.len() > 2 && at.duration_since(self.window[1].0) >= Duration::from_secs(1)
        {
            self.window.pop_front();
        }
        let (since, earlier) = &self.window[0];
        let seconds = at.duration_since(*since).as_secs_f64();
        let recent = self.now.since(earlier);
        let mut parts = vec![self.view.label.clone()];
        if seconds >= 0.5 {
            parts.push(format!(
                "{} {}",
                format_significant(recent.units as f64 / seconds),
                self.view.unit
            ));
        }
        let (done, total) = match (self.view.total_units, self.view.total_operations) {
            (Some(total), _) => (self.now.units, total),
            (None, Some(total)) => (self.now.operations, total),
            (None, None) => (0, 0),
        };
        if total > 0 {
            parts.push(format!(
                "{:.0}% done",
                100.0 * done.min(total) as f64 / total as f64
            ));
        }
        let errors = self.now.error_count();
        parts.push(match errors {
            0 => "no errors".into(),
            n => format!("{n} errors"),
        });
        if let (Some(p50), Some(p99)) = (recent.latency_ms(0.5), recent.latency_ms(0.99)) {
            parts.push(format!(
                "latency p50 {} p99 {} ms",
                format_significant(p50),
                format_significant(p99)
            ));
        }
        parts.push(format_duration_short(self.started.elapsed()));
        self.text = parts.join(" · ");
        self.left(done, total)
    }

    /// The time left: by the plan when it is fixed, else by the rate so far.
    fn left(&self, done: u64, total: u64) -> Option<Duration> {
        let elapsed = self.started.elapsed();
        if let Some(planned) = self.view.planned {
            return Some(planned.saturating_sub(elapsed));
        }
        if total == 0 || done == 0 || elapsed < Duration::from_secs(1) {
            return None;
        }
        let rate = done as f64 / elapsed.as_secs_f64();
        Some(Duration::from_secs_f64(
            (total.saturating_sub(done) as f64 / rate).min(1e7),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overall(planned: Vec<Option<Duration>>, current: usize, left: Option<Duration>) -> Overall {
        Overall {
            started: Instant::now(),
            planned,
            current,
            current_since: Instant::now(),
            current_left: left,
        }
    }

    #[test]
    fn time_left_adds_the_plan_and_says_what_it_cannot_know() {
        let s = |n| Some(Duration::from_secs(n));
        let o = overall(vec![s(10), None, s(5)], 0, None);
        let (left, unknown) = o.left();
        assert_eq!(unknown, 1);
        assert!((14..=15).contains(&left.unwrap().as_secs()), "{left:?}");
        assert!(
            o.line().starts_with("step 1/3 · 0s elapsed · at least 1"),
            "{}",
            o.line()
        );
        assert!(
            o.line().ends_with("left (+1 step of unknown length)"),
            "{}",
            o.line()
        );
        // The running step has no planned length: its measured rate says what is left.
        let o = overall(vec![s(10), None, s(5)], 1, s(20));
        assert_eq!(o.left(), (s(25), 0));
        assert_eq!(o.line(), "step 2/3 · 0s elapsed · about 25s left");
        let o = overall(vec![None], 0, None);
        assert_eq!(o.left(), (None, 0));
        assert!(o.line().contains("time left unknown"));
    }

    #[test]
    fn a_task_line_shows_its_rate_share_errors_and_latency() {
        let groups = vec![LiveGroup::new()];
        let mut line = TaskLine::new(TaskView {
            label: "index".into(),
            unit: "docs/s",
            total_operations: None,
            total_units: Some(1000),
            planned: None,
            target: None,
        });
        line.tick(&groups);
        for _ in 0..50 {
            groups[0].record(Duration::from_millis(20), 5, None, false);
        }
        groups[0].record(
            Duration::from_millis(900),
            0,
            Some((crate::backend::ErrorKind::Timeout, 1)),
            false,
        );
        // The rate needs half a second of window: backdate the first reading.
        line.window[0].0 -= Duration::from_secs(1);
        line.tick(&groups);
        let text = &line.text;
        assert!(text.starts_with("index · "), "{text}");
        assert!(
            text.contains(" docs/s · 25% done · 1 errors · latency p50 20"),
            "{text}"
        );
        let p99: f64 = text
            .split(" p99 ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            (870.0..=930.0).contains(&p99),
            "the slow one is the p99: {text}"
        );
    }
}
