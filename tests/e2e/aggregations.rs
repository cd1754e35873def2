//! Aggregations on the embedded engine, in a race and behind `runner serve`'s REST API, with
//! the buckets Elasticsearch would return for the same documents.

use crate::elasticsearch::{serve, url};
use crate::util::*;
use std::collections::BTreeMap;

const CC: [&str; 4] = ["AT", "DE", "FR", "IT"];

fn doc(i: usize) -> (String, i64, u32) {
    (
        CC[(i * i) % 4].to_string(),
        ((i * 97) % 5000) as i64,
        1 + (i % 10) as u32,
    )
}

fn track() -> tempfile::TempDir {
    let track = "name: aggs
corpora: [{name: c, target-index: places, documents: [{source-file: docs.json}]}]
indices:
  - name: places
    body:
      mappings:
        properties:
          country_code: {type: text, fields: {raw: {type: keyword}}}
          population: {type: long}
          at: {type: date}
operations:
  - {name: delete, type: delete-index}
  - {name: create, type: create-index}
  - {name: bulk, type: bulk, params: {bulk-size: 50}}
  - {name: refresh, type: refresh}
  - name: country_agg
    type: search
    params:
      index: places
      body:
        size: 0
        track_total_hits: true
        aggs:
          country_population:
            terms: {field: country_code.raw}
            aggs: {sum_population: {sum: {field: population}}}
  - name: per_day
    type: search
    params:
      index: places
      body:
        query: {range: {population: {gte: 100}}}
        aggs: {days: {date_histogram: {field: at, calendar_interval: 1d, min_doc_count: 1}}}
challenges:
  - name: c
    schedule:
      - {operation: delete}
      - {operation: create}
      - {operation: bulk}
      - {operation: refresh}
      - {operation: country_agg, clients: 2, iterations: 50}
      - {operation: per_day, iterations: 20}
";
    let docs: String = (0..400)
        .map(|i| {
            let (cc, pop, day) = doc(i);
            format!("{{\"country_code\":\"{cc}\",\"population\":{pop},\"at\":\"2026-03-{day:02}T12:00:00Z\"}}\n")
        })
        .collect();
    track_dir(&[("track.yaml", track), ("docs.json", &docs)])
}

fn check_race(race: &serde_json::Value) {
    for task in ["country_agg", "per_day"] {
        let t = &tasks(race, task)[0]["trials"][0];
        assert_eq!(t["errors"], 0, "{task}: {t}");
        assert!(t["operations"].as_u64().unwrap() > 0, "{task}");
    }
    // A size-0 search still counts every hit.
    let agg = &tasks(race, "country_agg")[0]["trials"][0];
    assert_eq!(agg["hits"].as_u64(), Some(50 * 400));
}

#[test]
fn aggregations_run_on_the_embedded_engine_and_behind_runner_serve() {
    let dir = track();
    let path = dir.path().to_str().unwrap();
    let env = Env::new();
    env.ok(&["race", "--quiet", "--track-path", path]);
    check_race(&env.only_race());

    let over_http = Env::new();
    let server = serve(&over_http, &[]);
    over_http.ok(&[
        "race",
        "--quiet",
        "--track-path",
        path,
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &url(server.port),
    ]);
    check_race(&over_http.only_race());

    // The response is Elasticsearch's: buckets by doc_count, each with its sub-aggregation.
    let body = r#"{"size":0,"aggs":{"by":{"terms":{"field":"country_code.raw"},"aggs":{"pop":{"sum":{"field":"population"}}}}}}"#;
    let reply: serde_json::Value =
        serde_json::from_str(&http_body(server.port, "POST", "/places/_search", body)).unwrap();
    assert_eq!(reply["hits"]["total"]["value"], 400);
    assert_eq!(reply["hits"]["hits"].as_array().unwrap().len(), 0);
    let mut want: BTreeMap<String, (u64, i64)> = BTreeMap::new();
    for i in 0..400 {
        let (cc, pop, _) = doc(i);
        let e = want.entry(cc).or_default();
        e.0 += 1;
        e.1 += pop;
    }
    let mut want: Vec<_> = want.into_iter().collect();
    want.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(&b.0)));
    let buckets = reply["aggregations"]["by"]["buckets"].as_array().unwrap();
    let got: Vec<(String, u64, i64)> = buckets
        .iter()
        .map(|b| {
            (
                b["key"].as_str().unwrap().to_string(),
                b["doc_count"].as_u64().unwrap(),
                b["pop"]["value"].as_f64().unwrap() as i64,
            )
        })
        .collect();
    let want: Vec<(String, u64, i64)> = want.into_iter().map(|(k, (n, s))| (k, n, s)).collect();
    assert_eq!(got, want);
    // A scroll's first page carries the aggregations, as Elasticsearch's does.
    let first: serde_json::Value = serde_json::from_str(&http_body(
        server.port,
        "POST",
        "/places/_search?scroll=1m",
        r#"{"size":100,"aggs":{"by":{"terms":{"field":"country_code.raw"}}}}"#,
    ))
    .unwrap();
    assert!(first["_scroll_id"].is_string(), "{first}");
    assert_eq!(
        first["aggregations"]["by"]["buckets"]
            .as_array()
            .map(Vec::len),
        Some(want.len()),
        "{first}"
    );
    // filter and filters, in Elasticsearch's shape, behind the REST API too.
    let reply: serde_json::Value = serde_json::from_str(&http_body(
        server.port,
        "POST",
        "/places/_search",
        r#"{"size":0,"aggs":{"at":{"filter":{"term":{"country_code.raw":"AT"}}},"by":{"filters":{"filters":{"de":{"term":{"country_code.raw":"DE"}},"big":{"range":{"population":{"gte":2500}}}}}}}}"#,
    ))
    .unwrap();
    let count =
        |f: &dyn Fn(&(String, i64, u32)) -> bool| (0..400).map(doc).filter(|d| f(d)).count();
    let aggs = &reply["aggregations"];
    assert_eq!(aggs["at"]["doc_count"], count(&|d| d.0 == "AT"), "{reply}");
    assert_eq!(
        aggs["by"]["buckets"]["de"]["doc_count"],
        count(&|d| d.0 == "DE"),
        "{reply}"
    );
    assert_eq!(
        aggs["by"]["buckets"]["big"]["doc_count"],
        count(&|d| d.1 >= 2500),
        "{reply}"
    );
    // date_range in Elasticsearch's shape: keys and bounds as strings, gaps left out.
    let reply: serde_json::Value = serde_json::from_str(&http_body(
        server.port,
        "POST",
        "/places/_search",
        r#"{"size":0,"aggs":{"r":{"date_range":{"field":"at","ranges":[{"from":"2026-03-03","to":"2026-03-06"},{"from":"2026-03-08"}]}}}}"#,
    ))
    .unwrap();
    let buckets = reply["aggregations"]["r"]["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 2, "{reply}");
    assert_eq!(
        buckets[0]["key"],
        "2026-03-03T00:00:00.000Z-2026-03-06T00:00:00.000Z"
    );
    assert_eq!(
        buckets[0]["doc_count"],
        count(&|d| (3..6).contains(&d.2)),
        "{reply}"
    );
    assert_eq!(buckets[1]["key"], "2026-03-08T00:00:00.000Z-*");
    assert_eq!(buckets[1]["doc_count"], count(&|d| d.2 >= 8), "{reply}");
    // What the engine lacks is a 400 naming it, as a bad request to Elasticsearch is.
    let refused = http_body(
        server.port,
        "POST",
        "/places/_search",
        r#"{"aggs":{"s":{"significant_text":{"field":"country_code"}}}}"#,
    );
    assert!(
        refused.contains("significant_text") && refused.contains("error"),
        "{refused}"
    );
}
