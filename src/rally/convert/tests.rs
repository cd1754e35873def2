//! The conversion, case by case.

use super::*;

fn convert_json(v: Value, on_unsupported: OnUnsupported) -> Result<Converted, TrackError> {
    convert(
        &v,
        Path::new("track.json"),
        "t",
        false,
        on_unsupported,
        None,
        &|_| Ok(json!({})),
        None,
    )
}

#[test]
fn refresh_and_force_merge_default_as_rallys() {
    let rally = json!({
        "data-streams": [{"name": "logs-a"}, {"name": "logs-b"}],
        "schedule": [{"operation": "refresh"}, {"operation": "force-merge"}]
    });
    let c = convert_json(rally, OnUnsupported::Fail).unwrap();
    let schedule = &c.track["challenges"][0]["schedule"];
    // Rally's refresh runner refreshes everything unless told; its force-merge source
    // defaults to the track's data streams.
    assert_eq!(schedule[0]["operation"]["params"]["index"], "_all");
    assert_eq!(schedule[1]["operation"]["params"]["index"], "logs-a,logs-b");
    let none = json!({"schedule": [{"operation": "refresh"}]});
    let c = convert_json(none, OnUnsupported::Fail).unwrap();
    assert_eq!(
        c.track["challenges"][0]["schedule"][0]["operation"]["params"]["index"],
        "_all"
    );
}

#[test]
fn an_index_body_that_renders_empty_is_no_body_as_in_rally() {
    let rally = json!({
        "indices": [{"name": "a", "body": ""}, {"name": "b", "body": "  "}],
        "schedule": [{"operation": "create-index"}]
    });
    let c = convert_json(rally, OnUnsupported::Fail).unwrap();
    assert_eq!(c.track["indices"], json!([{"name": "a"}, {"name": "b"}]));
}

#[test]
fn a_built_in_schedule_without_a_target_runs_unthrottled_as_in_rally() {
    let rally = json!({
        "indices": [{"name": "i"}],
        "schedule": [
            {"operation": {"operation-type": "search", "name": "s1"}, "schedule": "poisson", "iterations": 2},
            {"operation": {"operation-type": "search", "name": "s2"}, "schedule": "poisson", "target-throughput": 5, "iterations": 2}
        ]
    });
    let c = convert_json(rally, OnUnsupported::Fail).unwrap();
    let schedule = &c.track["challenges"][0]["schedule"];
    assert!(schedule[0].get("schedule").is_none(), "{}", schedule[0]);
    assert_eq!(schedule[1]["schedule"], "poisson");
}

#[test]
fn rallys_retry_parameters_become_the_tasks_retry() {
    let rally = json!({
        "indices": [{"name": "i"}],
        "operations": [{"name": "health", "operation-type": "cluster-health", "request-params": {"wait_for_status": "green"}, "retry-until-success": true}],
        "schedule": [
            {"operation": "health"},
            {"operation": "health", "name": "once", "retry-until-success": false},
            {"operation": {"operation-type": "refresh", "retries": 3, "retry-wait-period": 2, "retry-on-timeout": false}},
            {"operation": {"operation-type": "refresh", "retries": 0}, "name": "no-retry"}
        ]
    });
    let c = convert_json(rally, OnUnsupported::Fail).unwrap();
    let schedule = &c.track["challenges"][0]["schedule"];
    assert_eq!(schedule[0]["retry"], json!({"until-success": true}));
    // The task's own parameters over its operation's.
    assert!(schedule[1].get("retry").is_none(), "{}", schedule[1]);
    assert_eq!(
        schedule[2]["retry"],
        json!({"retries": 3, "wait-period": 2, "on-timeout": false})
    );
    assert!(schedule[3].get("retry").is_none(), "{}", schedule[3]);
    assert!(
        c.notes.iter().all(|n| !n.contains("retry")),
        "{:?}",
        c.notes
    );
}

#[test]
fn a_raw_request_path_with_a_query_string_becomes_request_params() {
    let rally = json!({
        "operations": [{"name": "r", "operation-type": "raw-request", "method": "GET",
            "path": "/_cluster/stats?include_remotes=true&q=a%20b+c&flag", "request-params": {"pretty": "true"}}],
        "schedule": [{"operation": "r"}]
    });
    let c = convert_json(rally, OnUnsupported::Fail).unwrap();
    let op = &c.track["operations"][0]["params"];
    assert_eq!(op["path"], "/_cluster/stats");
    assert_eq!(
        op["request-params"],
        json!({"pretty": "true", "include_remotes": "true", "q": "a b c", "flag": ""})
    );
    assert_eq!(percent_decode("%e2%82%ac%zz%"), "€%zz%");
}

#[test]
fn a_throughput_with_a_unit_is_requests_per_second_as_rallys_scheduler_throttles() {
    let size = Some(500.0);
    assert_eq!(
        requests_per_second(&json!("10 docs/s"), size),
        Ok(Some(json!(0.02)))
    );
    assert_eq!(
        requests_per_second(&json!("2.5 ops/s"), size),
        Ok(Some(json!(2.5)))
    );
    assert_eq!(requests_per_second(&json!(7), None), Ok(Some(json!(7))));
    assert_eq!(requests_per_second(&json!(0), None), Ok(None));
    assert_eq!(requests_per_second(&json!("0 ops/s"), None), Ok(None));
    let docs_on_search = requests_per_second(&json!("10 docs/s"), None).unwrap_err();
    assert!(docs_on_search.contains("not docs/s"), "{docs_on_search}");
    let bytes = requests_per_second(&json!("10 MB/s"), size).unwrap_err();
    assert!(bytes.contains("not MB/s"), "{bytes}");
    let junk = requests_per_second(&json!("fast"), size).unwrap_err();
    assert!(junk.contains("not a throughput"), "{junk}");
}

#[test]
fn a_raw_requests_ignore_is_our_ignore_status() {
    let rally = json!({
        "operations": [{"name": "r", "operation-type": "raw-request", "method": "DELETE", "path": "/_ingest/pipeline/p", "ignore": [400, 404]}],
        "schedule": [{"operation": "r"}]
    });
    let t = convert_json(rally, OnUnsupported::Fail).unwrap().track;
    assert_eq!(
        t["operations"][0]["params"]["ignore-status"],
        json!([400, 404])
    );
}

#[test]
fn a_docs_per_second_bulk_task_converts_to_requests_per_second() {
    let rally = json!({
        "indices": [{"name": "logs"}],
        "corpora": [{"name": "c", "documents": [{"source-file": "d.json", "document-count": 10}]}],
        "operations": [{"name": "b", "operation-type": "bulk", "bulk-size": 50}],
        "schedule": [
            {"operation": "b", "target-throughput": "100 docs/s"},
            {"operation": {"name": "i", "operation-type": "bulk", "bulk-size": 4}, "target-throughput": "2 docs/s"}
        ]
    });
    let t = convert_json(rally, OnUnsupported::Fail).unwrap().track;
    let schedule = t["challenges"][0]["schedule"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| t["schedule"].as_array().cloned().unwrap());
    assert_eq!(schedule[0]["target-throughput"], json!(2.0));
    assert_eq!(schedule[1]["target-throughput"], json!(0.5));
}

#[test]
fn action_line_corpora_conflicts_and_paged_searches_convert_as_they_are() {
    let rally = json!({
        "indices": [{"name": "logs"}],
        "corpora": [{"name": "c", "documents": [{"source-file": "d.json", "document-count": 10, "includes-action-and-meta-data": true}]}],
        "operations": [
            {"name": "b", "operation-type": "bulk", "bulk-size": 5, "conflicts": "sequential", "conflict-probability": 10, "on-conflict": "update", "recency": 0.2, "looped": true},
            {"name": "s", "operation-type": "scroll-search", "index": "logs", "pages": 4, "results-per-page": 100, "body": {"query": {"match_all": {}}}},
            {"name": "p", "operation-type": "paginated-search", "index": "logs", "pages": "all", "body": {"sort": ["_doc"]}}
        ],
        "schedule": [{"operation": "b", "iterations": 2}, {"operation": "s"}, {"operation": "p"}]
    });
    let t = convert_json(rally, OnUnsupported::Fail).unwrap().track;
    assert_eq!(
        t["corpora"][0]["documents"][0]["includes-action-and-meta-data"],
        true
    );
    assert_eq!(
        t["operations"][0]["params"],
        json!({"bulk-size": 5, "conflicts": "sequential", "conflict-probability": 10, "on-conflict": "update", "recency": 0.2, "looped": true, "action-lines": "rally", "split": "rally"})
    );
    assert_eq!(
        (
            t["operations"][1]["type"].as_str(),
            t["operations"][1]["params"]["pages"].as_u64()
        ),
        (Some("scroll-search"), Some(4))
    );
    assert_eq!(t["operations"][2]["params"]["pages"], "all");
}

#[test]
fn old_style_scrolls_and_the_request_cache_convert() {
    let rally = json!({
        "indices": [{"name": "i"}],
        "operations": [{"name": "s", "operation-type": "search", "pages": 25, "results-per-page": 1000, "cache": false, "detailed-results": true, "body": {"query": {"match_all": {}}}}],
        "schedule": [{"operation": "s"}]
    });
    let converted = convert_json(rally, OnUnsupported::Fail).unwrap();
    let op = &converted.track["operations"][0];
    assert_eq!(op["type"], "scroll-search");
    assert_eq!(
        op["params"]["request-params"],
        json!({"request_cache": "false"})
    );
    assert_eq!(op["params"]["pages"], 25);
    assert!(
        converted
            .notes
            .iter()
            .any(|n| n.contains("detailed-results")),
        "{:?}",
        converted.notes
    );
}

#[test]
fn a_plain_search_sends_results_per_page_as_its_size_as_rallys_query_runner_does() {
    let rally = json!({
        "indices": [{"name": "i"}],
        "operations": [
            {"name": "s", "operation-type": "search", "results-per-page": 50, "body": {"query": {"match_all": {}}, "size": 1}},
            {"name": "z", "operation-type": "search", "results-per-page": 0, "body": {"size": 1}}
        ],
        "schedule": [{"operation": "s"}, {"operation": "z"}]
    });
    let converted = convert_json(rally, OnUnsupported::Fail).unwrap();
    let ops = &converted.track["operations"];
    assert_eq!(ops[0]["type"], "search");
    assert_eq!(ops[0]["params"]["size"], 50);
    // Zero is no size to Rally (`if size:`): the body's own stays.
    assert!(ops[1]["params"].get("size").is_none(), "{}", ops[1]);
}

#[test]
fn only_the_challenge_raced_fails_on_a_task_that_cannot_run() {
    let rally = json!({
        "operations": [
            {"name": "nap", "operation-type": "sleep", "duration": 0},
            {"name": "custom", "operation-type": "my-custom-runner"}
        ],
        "challenges": [
            {"name": "plain", "default": true, "schedule": [{"operation": "nap"}]},
            {"name": "mixed", "schedule": [{"operation": "nap"}, {"operation": "custom"}]},
            {"name": "custom-only", "schedule": [{"operation": "custom"}]}
        ]
    });
    let convert_for = |wanted: Option<&str>| {
        convert(
            &rally,
            Path::new("track.json"),
            "t",
            false,
            OnUnsupported::Fail,
            wanted,
            &|_| Ok(json!({})),
            None,
        )
    };
    // The default challenge runs: the others lose what cannot run, with notes.
    let converted = convert_for(None).unwrap();
    let names: Vec<&str> = converted.track["challenges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["plain", "mixed"], "{:?}", converted.notes);
    let notes = converted.notes.join("\n");
    assert!(
        notes.contains("task `custom` skipped") && notes.contains("`custom-only` is left out"),
        "{notes}"
    );
    // Racing the challenge that holds it still fails, naming the task.
    let e = convert_for(Some("mixed")).unwrap_err();
    assert!(e.to_string().contains("task `custom`"), "{e}");
}

#[test]
fn point_in_time_is_named_as_unsupported_and_a_bulk_pipeline_is_kept() {
    let pit = json!({"name": "x", "operation-type": "paginated-search", "with-point-in-time-from": "open"});
    let rally =
        json!({"indices": [{"name": "i"}], "operations": [pit], "schedule": [{"operation": "x"}]});
    let e = convert_json(rally, OnUnsupported::Fail).unwrap_err();
    assert!(e.to_string().contains("point-in-time"), "{e}");
    let bulk = json!({"name": "x", "operation-type": "bulk", "pipeline": "p"});
    let rally = json!({"indices": [{"name": "i"}], "corpora": [{"name": "c", "documents": [{"source-file": "d.json", "document-count": 1}]}],
        "operations": [bulk], "schedule": [{"operation": "x"}]});
    let t = convert_json(rally, OnUnsupported::Fail).unwrap().track;
    assert_eq!(t["operations"][0]["params"]["pipeline"], "p");
}

mod test_mode_names {
    use super::test_mode_file;

    #[test]
    fn the_1k_file_is_named_as_rally_names_it() {
        for (source, rally) in [
            ("documents.json.bz2", "documents-1k.json.bz2"),
            (
                "documents-181998.unparsed.json.bz2",
                "documents-181998.unparsed-1k.json.bz2",
            ),
            ("documents.json", "documents-1k.json"),
            ("a.b.json", "a.b-1k.json"),
            ("logs.json.gz", "logs-1k.json.gz"),
            ("data.tar.gz", "data-1k.tar.gz"),
            ("dir.v2/documents", "dir.v2/documents-1k"),
            ("documents", "documents-1k"),
        ] {
            assert_eq!(test_mode_file(source), rally, "{source}");
        }
    }
}

#[test]
fn an_operation_no_raced_task_uses_may_name_a_corpus_the_track_lacks() {
    // As Rally, which builds param sources only for the tasks it runs: `elsewhere` names a
    // corpus that exists only under other track parameters.
    let rally = json!({
        "indices": [{"name": "a"}, {"name": "b"}],
        "corpora": [{"name": "docs", "documents": [
            {"source-file": "a.json", "document-count": 1, "target-index": "a"},
            {"source-file": "b.json", "document-count": 1, "target-index": "b"}]}],
        "operations": [
            {"name": "both", "operation-type": "bulk", "indices": ["a", "b"]},
            {"name": "elsewhere", "operation-type": "bulk", "corpora": ["gone"]},
            {"name": "some", "operation-type": "bulk", "corpora": ["gone", "docs"]}],
        "challenges": [
            {"name": "main", "default": true, "schedule": [{"operation": "both"}, {"operation": "some"}]},
            {"name": "other", "schedule": [{"operation": "elsewhere"}]}]
    });
    let c = convert_json(rally.clone(), OnUnsupported::Fail).unwrap();
    let ops = c.track["operations"].as_array().unwrap();
    // Rally keeps the documents targeting the bulk's indices, and ignores undeclared corpora.
    assert_eq!(ops[0]["params"]["indices"], json!(["a", "b"]));
    assert_eq!(ops[1]["params"]["corpus"], "docs");
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains("challenge `other` is left out") && n.contains("`gone`")),
        "{:?}",
        c.notes
    );
    let e = convert(
        &rally,
        Path::new("track.json"),
        "t",
        false,
        OnUnsupported::Skip,
        Some("other"),
        &|_| Ok(json!({})),
        None,
    )
    .unwrap_err();
    assert!(
        e.message
            .contains("bulk names corpora `gone`, none of which the track declares"),
        "{}",
        e.message
    );
}

#[test]
fn a_data_stream_target_wins_over_an_index_as_in_rally() {
    let rally = json!({
        "data-streams": [{"name": "logs-x"}],
        "corpora": [{"name": "logs", "target-index": "ignored", "documents": [
            {"source-file": "d.json", "document-count": 1, "target-data-stream": "logs-x"}]}],
        "schedule": [{"operation": {"operation-type": "bulk"}}]
    });
    let c = convert_json(rally, OnUnsupported::Fail).unwrap();
    let doc = &c.track["corpora"][0]["documents"][0];
    assert_eq!(doc["target-data-stream"], "logs-x");
    assert!(doc.get("target-index").is_none(), "{doc}");
}

/// Rally's TestModeTrackProcessor: no warmup time, time periods cut to 10 s, iterations and
/// warmup iterations to one a client, targets lifted.
#[test]
fn test_mode_shrinks_as_rallys_track_processor_does() {
    let rally = json!({
        "indices": [{"name": "i"}],
        "operations": [{"name": "s", "operation-type": "search", "body": {}}],
        "schedule": [
            {"operation": "s", "name": "long", "clients": 2, "warmup-time-period": 30, "time-period": 120, "target-throughput": 5},
            {"operation": "s", "name": "short", "time-period": 4},
            {"operation": "s", "name": "counted", "clients": 4, "warmup-iterations": 50, "iterations": 100}
        ]
    });
    let c = convert(
        &rally,
        Path::new("track.json"),
        "t",
        true,
        OnUnsupported::Fail,
        None,
        &|_| Ok(json!({})),
        None,
    )
    .unwrap();
    let schedule = &c.track["challenges"][0]["schedule"];
    assert_eq!(schedule[0]["time-period"], "10s", "{}", schedule[0]);
    assert!(schedule[0].get("warmup").is_none(), "{}", schedule[0]);
    assert!(
        schedule[0].get("target-throughput").is_none(),
        "{}",
        schedule[0]
    );
    assert_eq!(schedule[1]["time-period"], "4s", "{}", schedule[1]);
    // Per client at most as many as there are clients, then counted over all four.
    assert_eq!(schedule[2]["iterations"], 16, "{}", schedule[2]);
    assert_eq!(schedule[2]["warmup"], 16, "{}", schedule[2]);
}
