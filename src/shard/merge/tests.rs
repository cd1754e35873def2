use super::*;
use crate::metrics::Percentiles;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

/// A shard's stored race with one task of one trial, as a shard writes it.
fn shard_race(
    index: u32,
    count: u32,
    samples: &[u64],
    window: (f64, f64),
    by_second: Vec<u64>,
) -> ShardRace {
    let mut service = new_histogram();
    let mut latency = new_histogram();
    for &us in samples {
        service.record(us).unwrap();
        latency.record(us + 50).unwrap();
    }
    let ms = |us: u64| us as f64 / 1000.0;
    let mean = samples.iter().map(|&u| ms(u)).sum::<f64>() / samples.len().max(1) as f64;
    let units: u64 = by_second.iter().sum();
    let trial = json!({
        "trial": 0, "started_at": "2026-12-05T05:56:24.888Z", "wall_seconds": window.1,
        "interrupted": false, "throughput": units as f64 / (window.1 - window.0),
        "measured_seconds": window.1 - window.0, "operations": samples.len(),
        "warmup_operations": 3, "successes": samples.len() - 1, "errors": 1,
        "errors_by_kind": {"timeout": 1}, "error_messages": {"timeout": format!("slow on {index}")},
        "error_rate": 0.0, "units": units, "requests": samples.len(), "hits": 2,
        "service_time_ms": Percentiles::from_histogram(&service, Some(mean)),
        "latency_ms": Percentiles::from_histogram(&latency, Some(mean + 0.05)),
        "throughput_per_second": [],
        "clock": {"origin_ns": 1_000_000_000_000u64, "window_s": [window.0, window.1], "units_by_second": by_second},
    });
    let race = json!({
        "format": 2, "race_id": format!("r/shard-{index}"), "status": "completed",
        "started_at": "2026-12-05T05:56:24Z", "track": "t", "track_path": "t.yaml",
        "challenge": "c", "test_mode": false, "params": {},
        "backend": {"kind": "embedded", "version": "1", "details": {}},
        "on_error": "continue", "host": HostInfo::current(),
        "shard": {"index": index, "count": count, "race": "r", "coordinator": "h:1",
                  "clock_offset_ms": 0.0, "round_trip_ms": 0.1},
        "tasks": [{"task": "get", "operation": "get", "operation_type": "kv-get", "sweep": {},
                   "clients": 8, "target_throughput": null, "schedule": "deterministic",
                   "throughput_unit": "ops/s", "planned_trials": 1, "trials": [trial]}],
    });
    let race: RaceRecord = serde_json::from_value(race).unwrap();
    let histograms = HistogramFile {
        format: FORMAT_VERSION,
        trials: vec![TrialHistograms {
            task_index: 0,
            trial: 0,
            service_time_us: encode_histogram(&service),
            latency_us: encode_histogram(&latency),
            parts: BTreeMap::new(),
        }],
    };
    ShardRace {
        host: format!("host-{index}"),
        race,
        histograms,
    }
}

#[test]
fn merged_percentiles_are_those_of_one_histogram_of_every_sample_bit_for_bit() {
    let mut rng = SmallRng::seed_from_u64(26);
    // Heavy-tailed samples, from 50 µs to ~10 s, dealt unevenly to 5 shards.
    let samples: Vec<u64> = (0..200_000)
        .map(|_| (50.0 * (1.0 / (1.0 - rng.random::<f64>() * 0.99999)).powf(1.3)) as u64)
        .collect();
    let mut dealt: Vec<Vec<u64>> = vec![Vec::new(); 5];
    for (i, s) in samples.iter().enumerate() {
        dealt[(i * 7 + i / 3) % 5].push(*s);
    }
    let shards = dealt
        .iter()
        .enumerate()
        .map(|(i, d)| shard_race(i as u32, 5, d, (0.0, 10.0), vec![d.len() as u64 / 10; 10]))
        .collect();
    let (race, histograms) = merge("r", shards, MergeContext::default()).unwrap();
    let mut one = new_histogram();
    for &s in &samples {
        one.record(s).unwrap();
    }
    let merged = &race.tasks[0].trials[0];
    let alone = Percentiles::from_histogram(&one, None);
    for p in [50.0, 90.0, 99.0, 99.9, 99.99, 100.0] {
        let (a, b) = (merged.service_time_ms.at(p).unwrap(), alone.at(p).unwrap());
        assert_eq!(a.to_bits(), b.to_bits(), "p{p}: merged {a} alone {b}");
    }
    // The stored merged histogram is that one histogram.
    let stored = decode_histogram(&histograms.trials[0].service_time_us).unwrap();
    assert_eq!(stored, one);
    assert_eq!(merged.operations, samples.len() as u64);
    assert_eq!(merged.errors, 5);
    assert_eq!(
        merged.errors_by_kind[&crate::results::ErrorKindRecord::Timeout],
        5
    );
    assert_eq!(
        merged.error_messages[&crate::results::ErrorKindRecord::Timeout],
        "slow on 0"
    );
    assert_eq!(merged.per_shard.len(), 5);
    let shares: u64 = merged.per_shard.iter().map(|s| s.operations).sum();
    assert_eq!(shares, samples.len() as u64);
    // The exact mean is the operation-weighted mean of the shards' exact means.
    let exact = samples.iter().map(|&u| u as f64 / 1000.0).sum::<f64>() / samples.len() as f64;
    assert!((merged.service_time_ms.mean - exact).abs() < 1e-9);
    assert_eq!(race.status, RaceStatus::Completed);
    assert_eq!(race.shards.as_ref().unwrap().merged.len(), 5);
}

#[test]
fn throughput_runs_over_the_union_of_the_windows_on_the_shared_clock() {
    // Shard 0 measured [0, 4) s, shard 1 [1, 6) s: 6 s of union, not 9 (a sum) or 5 (a mean).
    let a = shard_race(0, 2, &[100; 40], (0.0, 4.0), vec![10, 10, 10, 10]);
    let b = shard_race(1, 2, &[100; 50], (1.0, 6.0), vec![0, 10, 10, 10, 10, 10]);
    let (race, _) = merge("r", vec![b, a], MergeContext::default()).unwrap();
    let t = &race.tasks[0].trials[0];
    assert_eq!(t.units, 90);
    assert!((t.measured_seconds - 6.0).abs() < 1e-12);
    assert!((t.throughput - 15.0).abs() < 1e-12);
    assert_eq!(t.throughput_per_second, vec![10, 20, 20, 20, 10, 10]);
    // Disjoint windows leave their gap out.
    assert!((union_length(vec![(0.0, 1.0), (3.0, 4.0), (0.5, 1.5)]) - 2.5).abs() < 1e-12);
}

#[test]
fn a_missing_shard_is_named_and_the_race_is_incomplete() {
    let a = shard_race(0, 3, &[100; 10], (0.0, 1.0), vec![10]);
    let c = shard_race(2, 3, &[100; 10], (0.0, 1.0), vec![10]);
    let ctx = MergeContext {
        missing: BTreeMap::from([(1, "left the race: its connection closed".to_string())]),
        ..MergeContext::default()
    };
    let (race, _) = merge("r", vec![a, c], ctx).unwrap();
    assert_eq!(race.status, RaceStatus::Incomplete);
    let reason = race.stop_reason.unwrap();
    assert!(
        reason.contains("shard 1 is missing: left the race"),
        "{reason}"
    );
    let summary = race.shards.unwrap();
    assert_eq!(
        summary.merged.keys().copied().collect::<Vec<_>>(),
        vec![0, 2]
    );
    assert_eq!(summary.missing.keys().copied().collect::<Vec<_>>(), vec![1]);
}

#[test]
fn races_that_are_not_shards_of_one_race_are_refused() {
    let a = shard_race(0, 2, &[100], (0.0, 1.0), vec![1]);
    let mut b = shard_race(1, 2, &[100], (0.0, 1.0), vec![1]);
    b.race.challenge = "other".into();
    let e = merge("r", vec![a, b], MergeContext::default()).unwrap_err();
    assert!(e.to_string().contains("challenges"), "{e}");
    let mut whole = shard_race(0, 2, &[100], (0.0, 1.0), vec![1]);
    whole.race.shard = None;
    assert!(matches!(
        merge("r", vec![whole], MergeContext::default()),
        Err(MergeError::NotAShard(_))
    ));
    assert!(matches!(
        merge("r", vec![], MergeContext::default()),
        Err(MergeError::Nothing)
    ));
}

#[test]
fn a_histogram_beyond_the_runners_range_is_an_error_not_a_panic() {
    let a = shard_race(0, 2, &[100; 10], (0.0, 1.0), vec![10]);
    let mut b = shard_race(1, 2, &[100; 10], (0.0, 1.0), vec![10]);
    // What a corrupted file or a hostile peer could send: values past the highest trackable.
    let mut wide = hdrhistogram::Histogram::<u64>::new_with_bounds(1, u64::MAX / 4, 3).unwrap();
    wide.record(u64::MAX / 8).unwrap();
    b.histograms.trials[0].service_time_us = encode_histogram(&wide);
    match merge("r", vec![a, b], MergeContext::default()) {
        Err(MergeError::Histogram { shard: 1, .. }) => {}
        Err(e) => panic!("unexpected error: {e}"),
        Ok(_) => panic!("a histogram beyond the range merged"),
    }
}
