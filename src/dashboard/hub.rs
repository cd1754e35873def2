//! What the dashboard knows of a race: its plan, the step running, every running task's
//! seconds so far (bounded), and, once it ends, its report. The driver publishes into it (a
//! lock held for a push, off the clients' loop); each browser reads through a bounded
//! broadcast channel and, when it falls behind, is sent the whole state again instead of
//! holding the driver up.

use crate::driver::{LiveSink, TaskView};
use crate::metrics::{LiveTotals, SecondPoint};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

/// Seconds of each task the dashboard keeps (a browser that connects late sees the last hour).
const KEPT_SECONDS: usize = 3_600;
/// Events a browser may fall behind by before it is sent the whole state again.
const QUEUE: usize = 256;

#[derive(Debug)]
pub struct Hub {
    state: Mutex<State>,
    events: broadcast::Sender<Arc<str>>,
}

#[derive(Debug, Default, Serialize)]
struct State {
    race: Value,
    steps: Vec<Vec<TaskView>>,
    current: Option<usize>,
    tasks: BTreeMap<String, TaskState>,
    /// The runner's CPU each second (cores), and the cores it may use.
    cpu: Vec<(u32, f64)>,
    cores: u32,
    /// When the hub was made: each second's CPU is placed by the time since.
    #[serde(skip)]
    started: Option<std::time::Instant>,
    finished: bool,
    #[serde(skip)]
    report: Option<Arc<str>>,
}

#[derive(Debug, Default, Serialize)]
struct TaskState {
    unit: String,
    target: Option<f64>,
    points: std::collections::VecDeque<SecondPoint>,
    operations: u64,
    units: u64,
    errors: BTreeMap<&'static str, u64>,
}

impl Hub {
    /// A hub for a race: `race` describes it (id, track, challenge, backend), `steps` are its
    /// counted steps' tasks.
    pub fn new(race: Value, steps: Vec<Vec<TaskView>>) -> Arc<Hub> {
        Arc::new(Hub {
            state: Mutex::new(State {
                race,
                steps,
                started: Some(std::time::Instant::now()),
                ..Default::default()
            }),
            events: broadcast::channel(QUEUE).0,
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn publish(&self, kind: &str, data: &Value) {
        // No browser connected is not an error: the state keeps what a later one is sent.
        let _ = self.events.send(sse(kind, data).into());
    }

    /// The whole state as one event: what a browser is sent when it connects or falls behind.
    pub fn snapshot(&self) -> Arc<str> {
        let state = self.state();
        sse(
            "snapshot",
            &serde_json::to_value(&*state).unwrap_or(Value::Null),
        )
        .into()
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Arc<str>> {
        self.events.subscribe()
    }

    /// A stored trial's seconds, for a race served after it ran (`show --dashboard`).
    pub fn replay(&self, task: &str, unit: &str, points: &[SecondPoint]) {
        let mut state = self.state();
        let t = state.tasks.entry(task.to_string()).or_default();
        t.unit = unit.to_string();
        for p in points.iter().rev().take(KEPT_SECONDS).rev() {
            t.operations += p.operations;
            t.units += p.units;
            t.points.push_back(p.clone());
        }
    }

    /// The race ended: its report, which the page shows from now on.
    pub fn finish(&self, report_html: String) {
        {
            let mut state = self.state();
            state.finished = true;
            state.current = None;
            state.report = Some(report_html.into());
        }
        self.publish("done", &json!({}));
    }

    pub fn report(&self) -> Option<Arc<str>> {
        self.state().report.clone()
    }
}

/// One server-sent event.
fn sse(kind: &str, data: &Value) -> String {
    format!("event: {kind}\ndata: {data}\n\n")
}

impl LiveSink for Hub {
    fn race_started(&self, race: Value, steps: Vec<Vec<TaskView>>) {
        {
            let mut state = self.state();
            state.race = race;
            state.steps = steps;
        }
        let snapshot = self.snapshot();
        let _ = self.events.send(snapshot);
    }

    fn step_started(&self, step: usize, tasks: &[TaskView]) {
        {
            let mut state = self.state();
            state.current = Some(step);
            for t in tasks {
                let task = state.tasks.entry(t.label.clone()).or_default();
                task.unit = t.unit.to_string();
                task.target = t.target;
            }
        }
        self.publish("step", &json!({"step": step, "tasks": tasks}));
    }

    fn second(&self, task: &str, point: &SecondPoint, totals: &LiveTotals, cpu: f64, cores: u32) {
        let errors: BTreeMap<&'static str, u64> = totals
            .errors_by_kind()
            .map(|(k, n)| (k.as_str(), n))
            .collect();
        let event = {
            let mut state = self.state();
            // Parallel tasks each report the same second's CPU (the process's): kept once.
            let clock = state.started.map_or(0, |s| s.elapsed().as_secs() as u32);
            if state.cpu.last().is_none_or(|(at, _)| *at != clock) {
                state.cpu.push((clock, cpu));
                if state.cpu.len() > KEPT_SECONDS {
                    state.cpu.remove(0);
                }
            }
            state.cores = cores;
            let t = state.tasks.entry(task.to_string()).or_default();
            t.points.push_back(point.clone());
            if t.points.len() > KEPT_SECONDS {
                t.points.pop_front();
            }
            (t.operations, t.units) = (totals.operations, totals.units);
            t.errors = errors.clone();
            json!({
                "task": task,
                "point": point,
                "operations": totals.operations,
                "units": totals.units,
                "errors": errors,
                "cpu": [clock, cpu],
                "cores": cores,
            })
        };
        self.publish("tick", &event);
    }

    fn step_ended(&self, step: usize) {
        self.publish("step-end", &json!({ "step": step }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::LiveGroup;

    fn view(label: &str) -> TaskView {
        TaskView {
            label: label.into(),
            unit: "ops/s",
            total_operations: None,
            total_units: None,
            planned: None,
            target: Some(100.0),
        }
    }

    #[test]
    fn a_browser_that_does_not_read_never_holds_the_driver_and_is_resent_the_state() {
        let hub = Hub::new(Value::Null, Vec::new());
        hub.race_started(json!({"id": "r"}), vec![vec![view("t")]]);
        let mut stuck = hub.subscribe();
        hub.step_started(0, &[view("t")]);
        let groups = [LiveGroup::new()];
        let mut totals = LiveTotals::default();
        // Far more seconds than the queue holds: each publish returns at once.
        for s in 1..=(QUEUE as u32 * 4) {
            groups[0].record(std::time::Duration::from_millis(2), 1, None, false);
            totals.read(&groups);
            let point = totals.point(s, None);
            hub.second("t", &point, &totals, 0.5, 2);
        }
        // The stuck reader lost the oldest events; it is told so, and the server then sends it
        // the whole state, which holds every second kept.
        assert!(matches!(
            stuck.try_recv(),
            Err(broadcast::error::TryRecvError::Lagged(_))
        ));
        let snapshot = hub.snapshot();
        let data: Value = serde_json::from_str(
            snapshot
                .lines()
                .nth(1)
                .unwrap()
                .trim_start_matches("data: "),
        )
        .unwrap();
        assert_eq!(
            data["tasks"]["t"]["points"].as_array().unwrap().len(),
            QUEUE * 4
        );
        assert_eq!(data["tasks"]["t"]["operations"], QUEUE as u64 * 4);
        assert_eq!(data["current"], 0);
        assert_eq!(data["race"]["id"], "r");
    }

    #[test]
    fn the_finished_race_serves_its_report() {
        let hub = Hub::new(Value::Null, Vec::new());
        assert!(hub.report().is_none());
        let mut rx = hub.subscribe();
        hub.finish("<html>report</html>".into());
        assert_eq!(hub.report().as_deref(), Some("<html>report</html>"));
        assert!(rx.try_recv().unwrap().starts_with("event: done\n"));
        assert!(hub.snapshot().contains("\"finished\":true"));
    }
}
