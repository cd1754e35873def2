use crate::util::*;
use std::time::{Duration, Instant};

const LONG_TRACK: &str = "name: long
operations: [{name: nap, type: sleep, params: {duration: 1ms}}]
challenges:
  - name: c
    schedule:
      - {name: short, operation: nap, iterations: 20, trials: 3}
      - {name: long, operation: nap, time-period: 60s}
";

fn wait_for_trials(env: &Env, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(dir) = env.race_dirs().first() {
            if let Ok(text) = std::fs::read_to_string(dir.join("race.json")) {
                if let Ok(race) = serde_json::from_str::<serde_json::Value>(&text) {
                    let done: usize = race["tasks"].as_array().unwrap().iter().map(|t| t["trials"].as_array().unwrap().len()).sum();
                    if done >= n {
                        return;
                    }
                }
            }
        }
        assert!(Instant::now() < deadline, "the race never stored {n} trials");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn signal(pid: u32, sig: &str) {
    let status = std::process::Command::new("kill").args([sig, &pid.to_string()]).status().unwrap();
    assert!(status.success());
}

#[test]
fn ctrl_c_stops_within_a_second_and_keeps_what_was_measured() {
    let dir = track_dir(&[("track.yaml", LONG_TRACK)]);
    let env = Env::new();
    let mut child = env.command(&["race", "--track-path", dir.path().to_str().unwrap(), "--quiet"]).stdout(std::process::Stdio::piped()).spawn().unwrap();
    wait_for_trials(&env, 3);
    std::thread::sleep(Duration::from_millis(500)); // inside the 60 s task
    let sent = Instant::now();
    signal(child.id(), "-INT");
    let status = child.wait().unwrap();
    // Typically tens of milliseconds; the bound leaves room for a loaded CI machine.
    assert!(sent.elapsed() < Duration::from_secs(3), "took {:?} to stop", sent.elapsed());
    assert_eq!(status.code(), Some(130));
    let race = env.only_race();
    assert_eq!(race["status"], "interrupted");
    assert_eq!(tasks(&race, "short")[0]["trials"].as_array().unwrap().len(), 3);
    let long = &tasks(&race, "long")[0]["trials"][0];
    assert_eq!(long["interrupted"], true);
    assert!(long["operations"].as_u64().unwrap() > 10, "the partial trial's measurements are kept: {long}");
}

#[test]
fn sigkill_leaves_completed_trials_readable_and_marked_incomplete() {
    let dir = track_dir(&[("track.yaml", LONG_TRACK)]);
    let env = Env::new();
    let mut child = env.command(&["race", "--track-path", dir.path().to_str().unwrap(), "--quiet"]).spawn().unwrap();
    wait_for_trials(&env, 3);
    signal(child.id(), "-KILL");
    child.wait().unwrap();
    let race = env.only_race();
    assert_eq!(race["status"], "running", "the record says running: nobody could write otherwise");
    let shown = env.ok(&["show", "latest"]);
    assert!(shown.contains("incomplete: the runner was killed"), "{shown}");
    assert!(shown.contains("| short | - | 1 | - |"), "{shown}");
    let listed = env.ok(&["list", "races"]);
    assert!(listed.contains("incomplete"), "{listed}");
}
