//! Key-value operations beyond get/put: mixes, incr, generic commands, zipfian keys, and the
//! redis-benchmark / metrics-timer views, on the embedded store and on a real redis-server.

use crate::redis::{host, server};
use crate::util::*;
use std::process::Command;

/// Runs on both backends: every custom command here is one the embedded store knows.
const OPS_TRACK: &str = r#"
name: kv-ops
operations:
  - name: count
    type: incr
    params: { keyspace: 10, key-size: 8 }
  - name: set-strings
    type: command
    params: { command: "SET s:{key} {value}", keyspace: 5, key-size: 8, value-size: 3 }
  - name: incr-strings
    type: command
    params: { command: [INCR, "s:{key}"], keyspace: 5, key-size: 8 }
challenges:
  - name: all
    default: true
    schedule:
      - { operation: count, clients: 4, iterations: 1000 }
      - { operation: set-strings, clients: 2, iterations: 50 }
      - { operation: incr-strings, clients: 1, iterations: 20 }
"#;

fn trial<'a>(race: &'a serde_json::Value, task: &str) -> &'a serde_json::Value {
    &tasks(race, task)[0]["trials"][0]
}

fn check_ops_race(race: &serde_json::Value) {
    let count = trial(race, "count");
    assert_eq!(
        (count["errors"].as_u64(), count["requests"].as_u64()),
        (Some(0), Some(1000)),
        "{count}"
    );
    assert_eq!(count["commands"]["incr"]["requests"], 1000);
    assert_eq!(trial(race, "set-strings")["errors"], 0);
    // INCR of a string value is the server's error reply, counted by kind with its message.
    let incr = trial(race, "incr-strings");
    assert_eq!(incr["errors_by_kind"]["error-reply"], 20, "{incr}");
    assert!(
        incr["error_messages"]["error-reply"]
            .as_str()
            .unwrap()
            .contains("not an integer"),
        "{incr}"
    );
    let info = &tasks(race, "incr-strings")[0]["key_value"];
    assert_eq!(info["commands"], "INCR");
}

#[test]
fn incr_and_generic_commands_on_the_embedded_store() {
    let env = Env::new();
    let dir = track_dir(&[("track.yaml", OPS_TRACK)]);
    env.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ]);
    check_ops_race(&env.only_race());
}

#[test]
fn a_command_the_embedded_store_lacks_fails_before_the_race() {
    let env = Env::new();
    let dir = track_dir(&[(
        "track.yaml",
        &OPS_TRACK.replace("SET s:{key} {value}", "HSET h:{key} f {value}"),
    )]);
    let out = env.run(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("operation `set-strings`")
            && stderr.contains("does not implement `HSET`")
            && stderr.contains("--backend redis"),
        "{stderr}"
    );
    assert!(
        env.race_dirs().is_empty(),
        "nothing is stored for a race that cannot start"
    );
}

#[test]
fn kv_mix_splits_commands_and_prints_both_views() {
    let env = Env::new();
    let out = env.ok(&[
        "race",
        "--track",
        "kv-mix",
        "--quiet",
        "--track-params",
        "requests=2000,trials=1",
    ]);
    let race = env.only_race();
    let t = trial(&race, "get-put-mix");
    let (gets, puts) = (
        t["commands"]["get"]["requests"].as_u64().unwrap(),
        t["commands"]["put"]["requests"].as_u64().unwrap(),
    );
    assert_eq!(gets + puts, 1800, "{t}");
    assert!((100..300).contains(&gets), "about 10% gets: {gets}");
    // One command an operation: each command is timed on its own too.
    assert_eq!(
        t["commands"]["get"]["latency_ms"]["count"].as_u64(),
        Some(gets)
    );
    for needle in [
        "====== get-put-mix · GET 10% / SET 90%",
        "1800 requests completed in",
        "8 parallel clients",
        "16 bytes payload",
        "100.00% <= ",
        "requests per second",
        "| get-put-mix | - | get | ",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    let json = env.ok(&["show", "latest", "--report-format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let views = &v["tasks"][0]["key_value"];
    assert_eq!(views["timers"].as_array().unwrap().len(), 3, "{views}");
    assert_eq!(views["redis_benchmark"]["requests"], 1800);
}

#[test]
fn kv_mix_with_batching_counts_requests_per_command() {
    let env = Env::new();
    env.ok(&[
        "race",
        "--track",
        "kv-mix",
        "--challenge",
        "batching-on",
        "--quiet",
        "--track-params",
        "requests=2000,batch=10,trials=1,key_distribution=zipfian",
    ]);
    let race = env.only_race();
    let task = &tasks(&race, "get-put-mix")[0];
    assert_eq!(task["key_value"]["key_distribution"], "zipfian(0.99)");
    assert_eq!(task["key_value"]["commands_per_operation"], 10);
    let t = &task["trials"][0];
    assert_eq!(
        (t["operations"].as_u64(), t["requests"].as_u64()),
        (Some(180), Some(1800))
    );
    let c = &t["commands"];
    assert_eq!(
        c["get"]["requests"].as_u64().unwrap() + c["put"]["requests"].as_u64().unwrap(),
        1800
    );
    assert!(
        c["get"].get("latency_ms").is_none(),
        "a batch of mixed commands has no per-command time"
    );
}

fn redis_cli(port: u16, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .arg("-p")
        .arg(port.to_string())
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn incr_and_generic_commands_on_redis() {
    let Some(srv) = server(&[]) else { return };
    let env = Env::new();
    let dir = track_dir(&[("track.yaml", &OPS_TRACK.replace("- { operation: incr-strings", "- { operation: hash-set, clients: 3, iterations: 300 }\n      - { operation: incr-strings").replace("operations:\n", "operations:\n  - name: hash-set\n    type: command\n    params: { command: \"HSET h:{key} field {value}\", keyspace: 50, key-size: 8, value-size: 4 }\n"))]);
    env.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--backend",
        "redis",
        "--target-hosts",
        &host(&srv),
        "--quiet",
    ]);
    let race = env.only_race();
    check_ops_race(&race);
    // The server holds what was sent: 1,000 increments over ten counters, hashes of 4-byte values.
    let counters = redis_cli(
        srv.port,
        &[
            "MGET", "k0000000", "k0000001", "k0000002", "k0000003", "k0000004", "k0000005",
            "k0000006", "k0000007", "k0000008", "k0000009",
        ],
    );
    let total: u64 = counters
        .lines()
        .map(|l| l.trim().parse::<u64>().unwrap_or(0))
        .sum();
    assert_eq!(total, 1000, "{counters}");
    assert_eq!(
        redis_cli(srv.port, &["HSTRLEN", "h:k0000001", "field"]),
        "4"
    );
    assert_eq!(trial(&race, "hash-set")["errors"], 0);
}

#[test]
fn kv_mix_on_redis_writes_mostly_puts_and_zipfian_keys_concentrate() {
    let Some(srv) = server(&[]) else { return };
    let env = Env::new();
    let h = host(&srv);
    env.ok(&[
        "race",
        "--track",
        "kv-mix",
        "--backend",
        "redis",
        "--target-hosts",
        &h,
        "--quiet",
        "--track-params",
        "requests=4000,trials=1",
    ]);
    let uniform: u64 = redis_cli(srv.port, &["DBSIZE"]).parse().unwrap();
    redis_cli(srv.port, &["FLUSHALL"]);
    env.ok(&[
        "race",
        "--track",
        "kv-mix",
        "--backend",
        "redis",
        "--target-hosts",
        &h,
        "--quiet",
        "--track-params",
        "requests=4000,trials=1,key_distribution=zipfian",
    ]);
    let zipfian: u64 = redis_cli(srv.port, &["DBSIZE"]).parse().unwrap();
    // ~3,600 puts over 100,000 keys: nearly all distinct when uniform; under zipf(0.99) the hot
    // keys take a large share (seeded, so these counts are the same every run: 3,529 and 1,898).
    assert!(uniform > 3000, "{uniform}");
    assert!(
        zipfian * 10 < uniform * 7,
        "zipfian {zipfian} vs uniform {uniform}"
    );
    let race = read_json(&env.race_dirs()[1].join("race.json"));
    let t = trial(&race, "get-put-mix");
    assert_eq!(t["errors"], 0);
    assert!(
        t["hits"].as_u64().unwrap() > 0,
        "gets of hot keys find what puts wrote"
    );
}
