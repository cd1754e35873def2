//! Capacity under an SLO and ramping arrival rates, with the real binary: a search against a
//! system whose limit is known exactly (4 clients sleeping 10 ms can serve at most 400 ops/s),
//! in one process and across two shards, and a ramp whose intended operations are known to
//! the operation. Rates are checked only against what is physically impossible (more than the
//! clients can do), never against timings the machine may miss.

use crate::util::*;
use std::process::Stdio;

/// 4 clients of a 10 ms sleep, searched for the highest rate with p99 below 20 ms.
const SEARCH: &str = "name: cap
operations: [{name: nap, type: sleep, params: {duration: 10ms}}]
challenges:
  - name: search
    schedule:
      - operation: nap
        clients: 4
        target-throughput: max
        slo: {latency.p99: \"< 20ms\", error_rate: \"< 1%\"}
        probe-time: 1s
        probe-warmup: 500ms
        precision: 5%
";

/// The most 4 clients sleeping 10 ms can do, with room for the histograms' rounding.
const LIMIT: f64 = 400.0 * 1.03;

fn search_record(race: &serde_json::Value) -> &serde_json::Value {
    let trial = &tasks(race, "nap")[0]["trials"][0];
    let c = &trial["capacity"];
    assert!(c.is_object(), "the trial holds its search: {trial}");
    c
}

#[test]
fn a_capacity_search_brackets_a_known_limit_and_every_report_shows_it() {
    let (env, out) = race_track(SEARCH, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let race = env.only_race();
    let c = search_record(&race);
    let probes = c["probes"].as_array().unwrap();
    assert_eq!(probes[0]["phase"], "calibrate", "{c}");
    assert!(probes[0]["target"].is_null());
    assert!(probes.len() >= 3, "{c}");
    let conclusion = c["conclusion"].as_str().unwrap();
    assert!(
        ["found", "driver-limited", "max-probes"].contains(&conclusion),
        "{conclusion}: {c}"
    );
    // A loaded machine may start the first probes late (and rightly call them the driver's
    // limit) before any rate holds: then nothing is bracketed, and the search says why.
    let Some(capacity) = c["capacity"].as_f64() else {
        assert!(
            ["driver-limited", "max-probes"].contains(&conclusion),
            "no rate held, yet {conclusion}: {c}"
        );
        assert!(probes[1..].iter().all(|p| p["verdict"] != "held"), "{c}");
        return;
    };
    // Nothing above what the clients can physically do holds, nor is reached unthrottled.
    assert!(
        capacity <= LIMIT,
        "capacity {capacity} above 400 ops/s: {c}"
    );
    assert!(c["unthrottled"].as_f64().unwrap() <= LIMIT);
    for p in probes {
        assert!(p["achieved"].as_f64().unwrap() <= LIMIT, "{p}");
    }
    let failed = c["failed_at"].as_f64().expect("a rate failed");
    assert!(failed > capacity);
    if conclusion == "found" {
        assert!((failed - capacity) / failed <= 0.05 + 1e-9, "{c}");
    }
    // Every probe was judged on both criteria, and held ones held both.
    for p in &probes[1..] {
        let criteria = p["criteria"].as_array().unwrap();
        assert_eq!(criteria.len(), 2, "{p}");
        if p["verdict"] == "held" && !p["within_noise"].as_bool().unwrap() {
            assert!(criteria.iter().all(|k| k["held"] == true), "{p}");
        }
    }
    // The trial's own numbers are the probe at the capacity's.
    let trial = &tasks(&race, "nap")[0]["trials"][0];
    let at_capacity = probes
        .iter()
        .rev()
        .find(|p| p["target"].as_f64() == Some(capacity) && p["verdict"] == "held")
        .expect("a held probe at the capacity");
    assert_eq!(trial["operations"], at_capacity["operations"]);

    let md = env.ok(&["show", "latest"]);
    assert!(md.contains("## Capacity (the highest probed rate"), "{md}");
    assert!(md.contains("## Capacity probes"), "{md}");
    assert!(md.contains("max (capacity probe)"), "{md}");
    let csv = env.ok(&["show", "latest", "--report-format", "csv"]);
    assert!(
        csv.lines()
            .any(|l| l.contains(",capacity,") && l.ends_with(",ops/s")),
        "{csv}"
    );
    assert!(csv.contains(",probe_1_achieved,"), "{csv}");
    let json: serde_json::Value =
        serde_json::from_str(&env.ok(&["show", "latest", "--report-format", "json"])).unwrap();
    assert_eq!(
        json["tasks"][0]["capacity"]["median"].as_f64(),
        Some(capacity)
    );

    // The curve, with the SLO line and the capacity marked.
    let plots = tempfile::tempdir().unwrap();
    env.ok(&["plot", "latest", "--out", plots.path().to_str().unwrap()]);
    let svg = std::fs::read_to_string(plots.path().join("capacity-nap.svg")).unwrap();
    assert!(svg.contains("SLO latency.p99 &lt; 20ms"), "{svg}");
    assert!(svg.contains("capacity "), "{svg}");

    // Compared with itself: the same bracket, within noise.
    let cmp = env.ok(&["compare", "latest", "latest"]);
    assert!(cmp.contains("| capacity (ops/s) |"), "{cmp}");
    assert!(cmp.contains("capacity: baseline in ["), "{cmp}");
}

#[test]
fn a_ramp_intends_its_stages_and_reports_each_second() {
    // 0 → 1,000 ops/s over 2 s: 1,000 operations, 250 intended in the first second.
    let track = "name: ramp
operations: [{name: nap, type: sleep, params: {duration: 1ms}}]
challenges:
  - name: ramp
    schedule:
      - operation: nap
        clients: 20
        schedule: poisson
        target-throughput: {stages: [{duration: 2s, target: 1000}]}
";
    let (env, out) = race_track(track, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let race = env.only_race();
    let t = &tasks(&race, "nap")[0];
    assert_eq!(t["ramp"]["stages"][0]["target"], 1000.0);
    let seconds = &t["trials"][0]["rate_by_second"];
    let intended: Vec<f64> = seconds["intended"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(intended.len(), 2);
    assert!((intended[0] - 250.0).abs() < 1e-6 && (intended[1] - 750.0).abs() < 1e-6);
    // Every measured operation that ended within the ramp is counted in its second (those still
    // running at its end, at most a few per client, are not).
    let achieved: u64 = seconds["achieved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap_or(0))
        .sum();
    let operations = t["trials"][0]["operations"].as_u64().unwrap();
    assert!(
        achieved <= operations && achieved * 10 >= operations * 8,
        "{achieved} of {operations}"
    );
    let md = env.ok(&["show", "latest"]);
    assert!(md.contains("intended and achieved rate by stage"), "{md}");
    assert!(md.contains("second by second"), "{md}");
    assert!(md.contains("| nap | - | 20 | ramp |"), "{md}");
    let plots = tempfile::tempdir().unwrap();
    env.ok(&["plot", "latest", "--out", plots.path().to_str().unwrap()]);
    assert!(plots.path().join("ramp-nap.svg").is_file());
}

#[test]
fn a_search_across_two_shards_takes_the_same_steps_on_both() {
    let dir = track_dir(&[("track.yaml", SEARCH)]);
    let env = Env::new();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let coordinator = format!("127.0.0.1:{port}");
    let path = dir.path().to_str().unwrap();
    let shards: Vec<_> = (0..2)
        .map(|i| {
            let shard = format!("{i}/2");
            env.command(&[
                "race",
                "--quiet",
                "--track-path",
                path,
                "--shard",
                &shard,
                "--coordinator",
                &coordinator,
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("runner starts")
        })
        .collect();
    for child in shards {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let dirs: Vec<_> = env
        .race_dirs()
        .into_iter()
        .filter(|d| d.join("race.json").is_file())
        .collect();
    assert_eq!(dirs.len(), 1);
    let merged = read_json(&dirs[0].join("race.json"));
    let c = search_record(&merged);
    assert!(c["capacity"].as_f64().unwrap() <= LIMIT, "{c}");
    // Each shard judged the merged probes, so both ran the same rates and reached the same end.
    let targets = |race: &serde_json::Value| -> Vec<serde_json::Value> {
        search_record(race)["probes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["target"].clone())
            .collect()
    };
    let s0 = read_json(&dirs[0].join("shard-0/race.json"));
    let s1 = read_json(&dirs[0].join("shard-1/race.json"));
    assert_eq!(targets(&s0), targets(&s1));
    assert_eq!(
        search_record(&s0)["capacity"],
        search_record(&s1)["capacity"]
    );
    // The probes stored on each shard are the merged ones, not the shard's own part.
    let both = c["probes"][0]["operations"].as_u64().unwrap();
    let one = s0["tasks"][0]["trials"][0]["capacity"]["probes"][0]["operations"]
        .as_u64()
        .unwrap();
    assert_eq!(both, one, "each shard stores the merged probe");
}
