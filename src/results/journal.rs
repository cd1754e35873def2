//! Trials as they end: each is written once to `trials/<seq>.json` in the race directory, so
//! that storing a trial costs the same whatever came before it, and a race killed even with
//! SIGKILL keeps every completed trial. When the race ends, the trials are consolidated into
//! `race.json` and `histograms.json` and the directory is removed.

use super::model::{HistogramFile, RaceRecord, TrialHistograms, TrialRecord, FORMAT_VERSION};
use super::store::{write_atomic, StoreError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

pub const TRIALS_DIR: &str = "trials";

/// One trial as stored when it ended.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredTrial {
    pub format: u32,
    pub task_index: usize,
    pub record: TrialRecord,
    pub histograms: TrialHistograms,
}

impl StoredTrial {
    pub fn new(task_index: usize, record: TrialRecord, histograms: TrialHistograms) -> StoredTrial {
        StoredTrial {
            format: FORMAT_VERSION,
            task_index,
            record,
            histograms,
        }
    }
}

pub fn trial_path(race_dir: &Path, seq: usize) -> PathBuf {
    race_dir.join(TRIALS_DIR).join(format!("{seq:06}.json"))
}

pub fn append(race_dir: &Path, seq: usize, trial: &StoredTrial) -> Result<(), StoreError> {
    let bytes = serde_json::to_vec(trial).expect("a trial serialises");
    write_atomic(&trial_path(race_dir, seq), &bytes)
}

/// The trials stored one by one, in the order they ended; files that cannot be read are
/// named in the second list.
fn read_all(race_dir: &Path) -> (Vec<StoredTrial>, Vec<String>) {
    let dir = race_dir.join(TRIALS_DIR);
    let Ok(entries) = fs::read_dir(&dir) else {
        return (Vec::new(), Vec::new());
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    let mut trials = Vec::with_capacity(paths.len());
    let mut problems = Vec::new();
    for path in paths {
        match fs::read(&path)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<StoredTrial>(&b).map_err(|e| e.to_string()))
        {
            Ok(t) if t.format <= FORMAT_VERSION => trials.push(t),
            Ok(t) => problems.push(format!(
                "{}: format {} is newer than this runner understands",
                path.display(),
                t.format
            )),
            Err(e) => problems.push(format!("{}: {e}", path.display())),
        }
    }
    (trials, problems)
}

/// (task index, trial) of every trial a record holds.
fn trial_keys(race: &RaceRecord) -> BTreeSet<(usize, u64)> {
    race.tasks
        .iter()
        .enumerate()
        .flat_map(|(i, t)| t.trials.iter().map(move |tr| (i, tr.trial)))
        .collect()
}

/// Adds the trials stored one by one that `race` and `histograms` do not hold yet (a race
/// killed, or one whose consolidation could not be written). Returns what could not be read.
pub fn merge_into(
    race_dir: &Path,
    race: &mut RaceRecord,
    mut histograms: Option<&mut HistogramFile>,
) -> Vec<String> {
    let (trials, problems) = read_all(race_dir);
    if trials.is_empty() {
        return problems;
    }
    let held = trial_keys(race);
    let mut held_histograms: BTreeSet<(usize, u64)> = histograms
        .as_deref()
        .map(|h| h.trials.iter().map(|t| (t.task_index, t.trial)).collect())
        .unwrap_or_default();
    for t in trials {
        let Some(task) = race.tasks.get_mut(t.task_index) else {
            continue;
        };
        if !held.contains(&(t.task_index, t.record.trial)) {
            task.trials.push(t.record);
        }
        if let Some(h) = histograms.as_deref_mut() {
            if held_histograms.insert((t.histograms.task_index, t.histograms.trial)) {
                h.trials.push(t.histograms);
            }
        }
    }
    // A consolidation cut short can leave histograms of trials the record does not name: the
    // summaries cover exactly the trials shown.
    if let Some(h) = histograms {
        let named = trial_keys(race);
        h.trials
            .retain(|t| named.contains(&(t.task_index, t.trial)));
    }
    problems
}

/// Removes the trials stored one by one, once consolidated.
pub fn remove(race_dir: &Path) {
    let _ = fs::remove_dir_all(race_dir.join(TRIALS_DIR));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{RaceStatus, RaceStore};

    const RACE: &str = r#"{"format": 1, "race_id": "r1", "status": "running", "started_at": "2026-12-05T05:56:24Z", "finished_at": null, "pid": 1, "track": "t", "track_path": "t/track.yaml", "challenge": "c", "test_mode": false, "params": {}, "backend": {"kind": "embedded", "version": "x", "details": {}}, "target_hosts": [], "on_error": "continue", "user_tags": {}, "host": {"hostname": "vm", "os": "linux", "arch": "x86_64", "cpus": 2, "memory_bytes": 1, "runner_version": "0.1.0"}, "tasks": [{"task": "a", "operation": "nap", "operation_type": "sleep", "sweep": {}, "clients": 1, "target_throughput": null, "schedule": "unthrottled", "throughput_unit": "ops/s", "planned_trials": 3, "trials": []}]}"#;
    const TRIAL: &str = r#"{"trial": 0, "started_at": "2026-12-05T05:56:24.888Z", "wall_seconds": 0.1, "interrupted": false, "throughput": 10.0, "measured_seconds": 0.1, "operations": 1, "warmup_operations": 0, "successes": 1, "errors": 0, "errors_by_kind": {}, "error_rate": 0.0, "units": 1, "hits": 0, "service_time_ms": {"count": 1, "min": 1.0, "mean": 1.0, "stddev": 0.0, "p50": 1.0, "p90": 1.0, "p95": 1.0, "p99": 1.0, "p99.9": 1.0, "p99.99": 1.0, "p100": 1.0}, "latency_ms": {"count": 1, "min": 1.0, "mean": 1.0, "stddev": 0.0, "p50": 1.0, "p90": 1.0, "p95": 1.0, "p99": 1.0, "p99.9": 1.0, "p99.99": 1.0, "p100": 1.0}, "throughput_per_second": [1]}"#;

    fn trial(n: u64) -> StoredTrial {
        let mut record: TrialRecord = serde_json::from_str(TRIAL).unwrap();
        record.trial = n;
        let h = crate::metrics::encode_histogram(&crate::metrics::new_histogram());
        let histograms = TrialHistograms {
            task_index: 0,
            trial: n,
            service_time_us: h.clone(),
            latency_us: h,
            parts: Default::default(),
        };
        StoredTrial::new(0, record, histograms)
    }

    #[test]
    fn each_trial_is_one_file_merged_on_read_and_consolidated_at_the_end() {
        let home = tempfile::tempdir().unwrap();
        let store = RaceStore::new(home.path());
        let mut race: RaceRecord = serde_json::from_str(RACE).unwrap();
        store.begin(&race).unwrap();
        let dir = store.race_dir("r1");
        let index_before = fs::read(dir.join("race.json")).unwrap();
        let mut sizes = Vec::new();
        for n in 0..3 {
            store.append_trial("r1", n as usize, &trial(n)).unwrap();
            sizes.push(fs::metadata(trial_path(&dir, n as usize)).unwrap().len());
        }
        // Storing a trial rewrites nothing that came before it.
        assert_eq!(fs::read(dir.join("race.json")).unwrap(), index_before);
        assert!(sizes.windows(2).all(|w| w[0] == w[1]), "{sizes:?}");
        // As a killed race is read: the trials come from their files.
        let (read, histograms) = store.load("r1").unwrap();
        assert_eq!(read.tasks[0].trials.len(), 3);
        assert!(histograms.problems.is_empty(), "{:?}", histograms.problems);
        assert_eq!(histograms.merged(0).unwrap().0.len(), 0);
        // The end consolidates and removes the files; nothing is counted twice.
        race.tasks[0].trials = (0..3).map(|n| trial(n).record).collect();
        race.status = RaceStatus::Completed;
        let file = HistogramFile {
            format: FORMAT_VERSION,
            trials: (0..3).map(|n| trial(n).histograms).collect(),
        };
        store.finish(&race, &file, None).unwrap();
        assert!(!dir.join(TRIALS_DIR).exists());
        let names: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names.len(),
            2,
            "race.json and histograms.json only, no reserve or temp file: {names:?}"
        );
        append(&dir, 0, &trial(1)).unwrap();
        assert_eq!(
            store.load_record("r1").unwrap().tasks[0].trials.len(),
            3,
            "a trial already consolidated is not added twice"
        );
    }

    #[test]
    fn an_unreadable_trial_file_is_named() {
        let home = tempfile::tempdir().unwrap();
        let store = RaceStore::new(home.path());
        let race: RaceRecord = serde_json::from_str(RACE).unwrap();
        store.begin(&race).unwrap();
        let dir = store.race_dir("r1");
        store.append_trial("r1", 0, &trial(0)).unwrap();
        fs::write(trial_path(&dir, 1), b"{\"format\": 1, \"task_ind").unwrap();
        let (read, histograms) = store.load("r1").unwrap();
        assert_eq!(read.tasks[0].trials.len(), 1);
        assert_eq!(histograms.problems.len(), 1);
        assert!(
            histograms.problems[0].contains("000001.json"),
            "{:?}",
            histograms.problems
        );
    }
}
