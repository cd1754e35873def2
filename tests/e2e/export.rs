//! `runner export`: Rally's metric documents written into `runner serve` and read back, and an
//! OpenMetrics file.

use crate::elasticsearch::{serve, url};
use crate::util::*;
use std::io::{Read, Write};

/// `POST path` with a JSON body on a fresh connection: the response body as JSON.
fn post(port: u16, path: &str, body: &str) -> serde_json::Value {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let req = format!("POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len());
    s.write_all(req.as_bytes()).unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let body = answer.split("\r\n\r\n").nth(1).unwrap();
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {answer}"))
}

#[test]
fn a_race_exported_as_rally_documents_reads_back_and_as_openmetrics() {
    let env = Env::new();
    let dir = track_dir(&[(
        "track.yaml",
        "name: t
operations: [{name: nap, type: sleep, params: {duration: 1ms}}]
challenges:
  - name: c
    schedule:
      - {name: nap, operation: nap, time-period: 3s, target-throughput: 200}
      - {name: once, operation: nap, iterations: 1}
",
    )]);
    env.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ]);
    let race = env.only_race();
    let id = race["race_id"].as_str().unwrap().to_string();
    let month = format!("{}-{}", &id[0..4], &id[4..6]);
    let server = serve(&env, &[]);
    let metrics_file = env.home.path().join("race.om");
    let out = env.run(&[
        "export",
        "latest",
        "--to",
        &url(server.port),
        "--openmetrics",
        metrics_file.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("rally-results-{month}")),
        "{stderr}"
    );

    let results = post(
        server.port,
        &format!("/rally-results-{month}/_search?size=100"),
        &format!(r#"{{"query":{{"term":{{"race-id":"{id}"}}}}}}"#),
    );
    let docs: Vec<&serde_json::Value> = results["hits"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| &h["_source"])
        .collect();
    let named = |task: &str, name: &str| {
        docs.iter()
            .find(|d| d["task"] == task && d["name"] == name)
            .copied()
    };
    let throughput = named("nap", "throughput").expect("a throughput result");
    // Shaped as Rally's results store writes them: the unit inside `value`, Rally's keys at
    // the top, runner's own under `meta`.
    assert_eq!(throughput["value"]["unit"], "ops/s", "{throughput}");
    assert!(throughput["rally-version"]
        .as_str()
        .unwrap()
        .starts_with("runner-"));
    assert!(
        throughput["distribution-flavor"].is_string(),
        "{throughput}"
    );
    assert_eq!(
        throughput["meta"]["operation-type"], "sleep",
        "{throughput}"
    );
    assert!(throughput.get("unit").is_none(), "{throughput}");
    assert!(
        (throughput["value"]["mean"].as_f64().unwrap() - 200.0).abs() < 20.0,
        "{throughput}"
    );
    let service = named("nap", "service_time").unwrap();
    assert!(
        service["value"]["99_0"].as_f64().is_some_and(|v| v > 0.0),
        "{service}"
    );
    assert!(
        service["value"].get("99_9").is_none(),
        "600 samples do not support p99.9: {service}"
    );
    assert!(
        named("once", "throughput").is_none(),
        "one operation has no throughput"
    );
    assert_eq!(named("once", "error_rate").unwrap()["value"]["single"], 0.0);
    // The embedded engine's CPU is the runner's own: no server CPU to carry (the race over
    // runner serve at the end does).
    assert!(named("nap", "server_cpu_time").is_none());
    for d in &docs {
        assert_eq!(d["track"], "t");
        assert_eq!(d["car"], "external");
    }
    let samples = post(
        server.port,
        &format!("/rally-metrics-{month}/_count"),
        r#"{"query":{"term":{"name":"throughput"}}}"#,
    );
    assert!(
        samples["count"].as_u64().unwrap() >= 2,
        "per-second throughput samples: {samples}"
    );
    // Exported again: the same documents, replaced, not added twice.
    let count = |index: &str| {
        post(server.port, &format!("/{index}-{month}/_count"), "{}")["count"]
            .as_u64()
            .unwrap()
    };
    let before = (count("rally-results"), count("rally-metrics"));
    env.ok(&["export", "latest", "--to", &url(server.port)]);
    assert_eq!((count("rally-results"), count("rally-metrics")), before);

    let om = std::fs::read_to_string(&metrics_file).unwrap();
    assert!(om.ends_with("# EOF\n"), "{om}");
    assert!(
        om.contains("# TYPE runner_service_time_seconds summary"),
        "{om}"
    );
    assert!(om.contains(&format!("runner_service_time_seconds{{race=\"{id}\",track=\"t\",challenge=\"c\",task=\"nap\",sweep=\"-\",quantile=\"0.99\"}}")), "{om}");
    assert!(
        !om.contains("quantile=\"0.999\"}"),
        "unsupported quantiles are left out: {om}"
    );
    assert!(
        om.contains("runner_service_time_seconds_count{race="),
        "{om}"
    );

    // Raced over runner serve, which reports its CPU: the results carry it under Rally's name.
    env.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &url(server.port),
    ]);
    env.ok(&["export", "latest", "--to", &url(server.port)]);
    let id = env.ok(&["show", "latest", "--report-format", "json"]);
    let id = serde_json::from_str::<serde_json::Value>(&id).unwrap()["race"]["race_id"]
        .as_str()
        .unwrap()
        .to_string();
    let cpu = post(
        server.port,
        &format!("/rally-results-{month}/_search"),
        &format!(
            r#"{{"query":{{"bool":{{"filter":[{{"term":{{"race-id":"{id}"}}}},{{"term":{{"name":"server_cpu_time"}}}}]}}}}}}"#
        ),
    );
    assert!(
        cpu["hits"]["total"]["value"].as_u64().unwrap() >= 1,
        "{cpu}"
    );

    // A cluster that is not there: exit 1, naming it.
    let out = env.run(&["export", "latest", "--to", "http://127.0.0.1:9"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot export to http://127.0.0.1:9"),
        "{stderr}"
    );
    assert!(
        stderr.contains("`--to`"),
        "the hint names the option: {stderr}"
    );
    let out = env.run(&["export", "latest"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `race --keep-samples`: each request's timings stored beside the race and exported as Rally
/// writes them, one `latency` and one `service_time` document per request, warmup ones marked.
#[test]
fn kept_samples_are_exported_one_document_per_request_and_metric() {
    let env = Env::new();
    let dir = track_dir(&[(
        "track.yaml",
        "name: t
operations: [{name: nap, type: sleep, params: {duration: 2ms}}]
challenges:
  - name: c
    schedule:
      - {name: nap, operation: nap, warmup: 10, iterations: 50}
",
    )]);
    let track = dir.path().to_str().unwrap();
    env.ok(&["race", "--track-path", track, "--quiet", "--keep-samples"]);
    let race = env.only_race();
    let id = race["race_id"].as_str().unwrap().to_string();
    let month = format!("{}-{}", &id[0..4], &id[4..6]);
    let kept = &race["tasks"][0]["trials"][0]["samples"];
    assert_eq!(kept["seen"], 60, "{kept}");
    assert_eq!(kept["kept"], 60, "{kept}");
    let csv = std::fs::read_to_string(
        env.home
            .path()
            .join("races")
            .join(&id)
            .join(kept["file"].as_str().unwrap()),
    )
    .unwrap();
    assert_eq!(csv.lines().count(), 61, "{csv}");

    let server = serve(&env, &[]);
    env.ok(&["export", "latest", "--to", &url(server.port)]);
    let count = |query: &str| {
        post(
            server.port,
            &format!("/rally-metrics-{month}/_count"),
            &format!(
                r#"{{"query":{{"bool":{{"filter":[{{"term":{{"race-id":"{id}"}}}},{query}]}}}}}}"#
            ),
        )["count"]
            .as_u64()
            .unwrap()
    };
    let latency = r#"{"term":{"name":"latency"}}"#;
    let service = r#"{"term":{"name":"service_time"}}"#;
    assert_eq!(count(latency), 60);
    assert_eq!(count(service), 60);
    assert_eq!(
        count(&format!(
            r#"{latency},{{"term":{{"sample-type":"warmup"}}}}"#
        )),
        10
    );
    // Every nap took its 2 ms: each document's value is in milliseconds.
    assert_eq!(
        count(&format!(r#"{service},{{"range":{{"value":{{"gte":2}}}}}}"#)),
        60
    );
    let one = post(
        server.port,
        &format!("/rally-metrics-{month}/_search?size=1"),
        &format!(
            r#"{{"query":{{"bool":{{"filter":[{{"term":{{"race-id":"{id}"}}}},{latency}]}}}}}}"#
        ),
    );
    let doc = &one["hits"]["hits"][0]["_source"];
    assert_eq!(doc["unit"], "ms", "{doc}");
    assert_eq!(doc["task"], "nap", "{doc}");
    assert_eq!(doc["meta"]["success"], true, "{doc}");
    assert!(doc["@timestamp"].is_i64(), "{doc}");
    // Exported again: replaced, not added.
    env.ok(&["export", "latest", "--to", &url(server.port)]);
    assert_eq!(count(latency), 60);

    // A smaller buffer keeps a uniform sample, and says so.
    env.ok(&[
        "race",
        "--track-path",
        track,
        "--quiet",
        "--keep-samples",
        "25",
    ]);
    let dirs = env.race_dirs();
    let last = dirs.iter().find(|d| !d.ends_with(&id)).unwrap();
    let last = read_json(&last.join("race.json"));
    let kept = &last["tasks"][0]["trials"][0]["samples"];
    assert_eq!(
        (kept["seen"].as_u64(), kept["kept"].as_u64()),
        (Some(60), Some(25)),
        "{kept}"
    );

    // Refused where it cannot be kept.
    let out = env.run(&[
        "race",
        "--track-path",
        track,
        "--keep-samples",
        "--shard",
        "0/2",
        "--coordinator",
        "127.0.0.1:9",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--keep-samples"));
    let out = env.run(&["race", "--track-path", track, "--keep-samples", "0"]);
    assert_eq!(out.status.code(), Some(2));
}
