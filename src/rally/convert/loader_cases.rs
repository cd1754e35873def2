//! Cases of Rally's own loader tests (esrally's `tests/track/loader_test.py`) that concern the
//! track format, ported: the same track specifications, the same outcome (refused with
//! Rally's words where it refuses, read as it reads them where it accepts).

use super::*;

fn converted(v: Value) -> Result<Converted, TrackError> {
    convert(
        &v,
        Path::new("track.json"),
        "unittest",
        false,
        OnUnsupported::Fail,
        None,
        &|_| Ok(json!({})),
        None,
    )
}

fn refused(v: Value) -> String {
    match converted(v) {
        Ok(c) => panic!("accepted: {}", c.track),
        Err(e) => e.message,
    }
}

fn bulk_schedule() -> Value {
    json!([{"clients": 8, "operation": {"name": "index-append", "operation-type": "bulk", "bulk-size": 5000}}])
}

/// test_document_count_mandatory_if_file_present
#[test]
fn document_count_is_mandatory() {
    let e = refused(json!({
        "indices": [{"name": "test-index"}],
        "corpora": [{"name": "test", "base-url": "https://localhost/data",
            "documents": [{"source-file": "documents-main.json.bz2"}]}],
        "schedule": [{"operation": "refresh"}]
    }));
    assert!(
        e.contains("Mandatory element 'document-count' is missing."),
        "{e}"
    );
}

/// test_parse_invalid_data_streams_with_indices
#[test]
fn data_streams_and_indices_together_are_refused() {
    let e = refused(json!({
        "indices": [{"name": "index-historical"}],
        "data-streams": [{"name": "historical-data-stream"}],
        "corpora": [{"name": "test", "documents": [
            {"source-file": "documents-main.json.bz2", "document-count": 10}]}],
        "schedule": bulk_schedule()
    }));
    assert!(
        e.contains("indices and data-streams cannot both be specified"),
        "{e}"
    );
}

/// test_parse_invalid_data_streams_with_target_index
#[test]
fn a_target_index_beside_data_streams_is_refused() {
    let e = refused(json!({
        "data-streams": [{"name": "historical-data-stream"}],
        "corpora": [{"name": "test", "documents": [{"source-file": "documents-main.json.bz2",
            "document-count": 10, "target-index": "historical-index"}]}],
        "schedule": bulk_schedule()
    }));
    assert!(
        e.contains("target-index cannot be used when using data-streams"),
        "{e}"
    );
}

/// test_parse_invalid_no_data_stream_target
#[test]
fn several_data_streams_need_a_target() {
    let e = refused(json!({
        "data-streams": [{"name": "historical-data-stream"}, {"name": "historical-data-stream-2"}],
        "corpora": [{"name": "test", "documents": [
            {"source-file": "documents-main.json.bz2", "document-count": 10}]}],
        "schedule": bulk_schedule()
    }));
    assert!(
        e.contains(
            "Mandatory element 'target-data-stream' is missing in 'documents-main.json.bz2'"
        ),
        "{e}"
    );
}

/// test_parse_valid_without_indices: the track's only data stream is the corpus's target.
#[test]
fn the_only_data_stream_is_the_target() {
    let c = converted(json!({
        "data-streams": [{"name": "historical-data-stream"}],
        "corpora": [{"name": "test", "documents": [
            {"source-file": "documents-main.json.bz2", "document-count": 10}]}],
        "schedule": bulk_schedule()
    }))
    .unwrap();
    assert_eq!(
        c.track["corpora"][0]["documents"][0]["target-data-stream"],
        "historical-data-stream"
    );
}

/// test_rejects_corpus_target_type, test_rejects_document_target_type
#[test]
fn target_types_are_refused() {
    for corpus in [
        json!({"name": "test", "target-type": "docs", "documents": [{"source-file": "d.json", "document-count": 1}]}),
        json!({"name": "test", "documents": [{"source-file": "d.json", "document-count": 1, "target-type": "docs"}]}),
    ] {
        let e = refused(json!({
            "indices": [{"name": "test-index"}],
            "corpora": [corpus],
            "schedule": bulk_schedule()
        }));
        assert!(e.contains("which is no longer supported by Rally"), "{e}");
    }
}

/// test_not_more_than_one_default_challenge_possible
#[test]
fn two_default_challenges_are_refused() {
    let e = refused(json!({
        "indices": [{"name": "test-index"}],
        "operations": [{"name": "index-append", "operation-type": "bulk"}],
        "challenges": [
            {"name": "default-challenge", "default": true, "schedule": [{"operation": "index-append"}]},
            {"name": "another-challenge", "default": true, "schedule": [{"operation": "index-append"}]}]
    }));
    assert!(
        e.contains("Both 'default-challenge' and 'another-challenge' are defined as default challenges. Please define only one of them as default."),
        "{e}"
    );
}

/// test_at_least_one_default_challenge
#[test]
fn several_challenges_need_a_default() {
    let e = refused(json!({
        "indices": [{"name": "test-index"}],
        "operations": [{"name": "index-append", "operation-type": "bulk"}],
        "challenges": [
            {"name": "challenge", "schedule": [{"operation": "index-append"}]},
            {"name": "another-challenge", "schedule": [{"operation": "index-append"}]}]
    }));
    assert!(
        e.contains("No default challenge specified. Please edit the track and add \"default\": true to one of the challenges challenge, another-challenge."),
        "{e}"
    );
}

/// test_selects_sole_challenge_implicitly_as_default
#[test]
fn a_sole_challenge_is_the_default() {
    let c = converted(json!({
        "indices": [{"name": "test-index"}],
        "operations": [{"name": "index-append", "operation-type": "bulk"}],
        "challenges": [{"name": "challenge", "schedule": [{"operation": "index-append"}]}]
    }))
    .unwrap();
    let challenges = c.track["challenges"].as_array().unwrap();
    assert_eq!(challenges.len(), 1);
    assert_eq!(challenges[0]["default"], true, "{}", c.track);
}

/// test_parallel_tasks_with_completed_by_set_no_task_matches
#[test]
fn completed_by_must_name_a_task_of_the_block() {
    let e = refused(json!({
        "indices": [{"name": "test-index"}],
        "operations": [{"name": "index-1", "operation-type": "bulk"}, {"name": "index-2", "operation-type": "bulk"}],
        "challenges": [{"name": "default-challenge", "schedule": [{"parallel": {
            "completed-by": "non-existing-task",
            "tasks": [{"operation": "index-1"}, {"operation": "index-2"}]}}]}]
    }));
    assert!(
        e.contains("'parallel' element for challenge 'default-challenge' is marked with 'completed-by' with task name 'non-existing-task' but no task with this name exists."),
        "{e}"
    );
}

/// test_parallel_tasks_with_completed_by_set_multiple_tasks_match
#[test]
fn completed_by_must_name_one_task() {
    let e = refused(json!({
        "indices": [{"name": "test-index"}],
        "operations": [{"name": "index-1", "operation-type": "bulk"}],
        "challenges": [{"name": "default-challenge", "schedule": [{"parallel": {
            "completed-by": "index-1",
            "tasks": [{"operation": "index-1"}, {"operation": "index-1"}]}}]}]
    }));
    assert!(
        e.contains("'parallel' element for challenge 'default-challenge' contains multiple tasks with the name 'index-1' marked with 'completed-by' but only task is allowed to match."),
        "{e}"
    );
}

/// test_parse_duplicate_implicit_task_names
#[test]
fn tasks_named_alike_by_their_operation_are_refused() {
    let e = refused(json!({
        "operations": [{"name": "search", "operation-type": "search", "index": "_all"}],
        "challenge": {"name": "default-challenge", "schedule": [
            {"operation": "search", "clients": 1}, {"operation": "search", "clients": 2}]}
    }));
    assert!(
        e.contains("Challenge 'default-challenge' contains multiple tasks with the name 'search'. Please use the task's name property to assign a unique name for each task."),
        "{e}"
    );
}

/// test_parallel_tasks_with_default_clients_does_not_propagate: a block's `clients` bounds the
/// block; each task has one client.
#[test]
fn a_blocks_clients_do_not_propagate_to_its_tasks() {
    let c = converted(json!({
        "indices": [{"name": "test-index"}],
        "operations": [{"name": "index-1", "operation-type": "bulk"}],
        "challenges": [{"name": "default-challenge", "schedule": [{"parallel": {
            "warmup-time-period": 2400, "time-period": 36000, "clients": 2,
            "tasks": [
                {"name": "index-1-1", "operation": "index-1"},
                {"name": "index-1-2", "operation": "index-1"},
                {"name": "index-1-3", "operation": "index-1"},
                {"name": "index-1-4", "operation": "index-1"}]}}]}]
    }))
    .unwrap();
    let tasks = c.track["challenges"][0]["schedule"][0]["parallel"]["tasks"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(tasks.len(), 4);
    for t in tasks {
        assert!(t.get("clients").is_none_or(|c| c == 1), "{t}");
    }
}

/// SearchParamSource's `get_target`: a search naming no index reaches the track's only index
/// (or only data stream); with several, Rally refuses it.
#[test]
fn a_search_naming_no_index_reaches_the_only_one() {
    let one = converted(json!({
        "indices": [{"name": "logs"}],
        "schedule": [{"operation": {"name": "q", "operation-type": "search", "body": {}}}]
    }))
    .unwrap();
    assert_eq!(
        one.track["challenges"][0]["schedule"][0]["operation"]["params"]["index"],
        "logs"
    );
    let lists = converted(json!({
        "indices": [{"name": "a"}, {"name": "b"}],
        "schedule": [{"operation": {"name": "q", "operation-type": "search", "index": ["a", "b"]}}]
    }))
    .unwrap();
    assert_eq!(
        lists.track["challenges"][0]["schedule"][0]["operation"]["params"]["index"],
        "a,b"
    );
    let e = refused(json!({
        "indices": [{"name": "a"}, {"name": "b"}],
        "schedule": [{"operation": {"name": "q", "operation-type": "search"}}]
    }));
    assert!(
        e.contains("'index' or 'data-stream' is mandatory and is missing for operation 'q'"),
        "{e}"
    );
}

/// `_create_index_template`'s `template-path`: the template is found in its file at that
/// dot-separated path (k8s_metrics' files hold `{"index_template": {...}}`).
#[test]
fn a_templates_body_is_found_at_its_template_path() {
    let rally = json!({
        "indices": [{"name": "a"}],
        "composable-templates": [{"name": "t", "index-pattern": "t-*", "template": "t.json", "template-path": "index_template"}],
        "schedule": [{"operation": {"operation-type": "create-composable-template"}}]
    });
    let c = convert(
        &rally,
        Path::new("track.json"),
        "unittest",
        false,
        OnUnsupported::Fail,
        None,
        &|_| {
            Ok(json!({"name": "t", "index_template": {"index_patterns": ["t-*"], "template": {}}}))
        },
        None,
    )
    .unwrap();
    let body = &c.track["challenges"][0]["schedule"][0]["operation"]["params"]["body"];
    assert_eq!(body, &json!({"index_patterns": ["t-*"], "template": {}}));
}

fn one_task(task: Value) -> Value {
    json!({
        "indices": [{"name": "test-index"}],
        "operations": [{"name": "index-append", "operation-type": "bulk", "bulk-size": 5000}],
        "challenge": {"name": "default-challenge", "schedule": [task]}
    })
}

/// test_parse_with_mixed_warmup_iterations_and_measurement,
/// test_parse_with_mixed_warmup_time_period_and_iterations, test_ramp_up_but_no_warmup,
/// test_warmup_shorter_than_ramp_up, test_parse_with_mixed_iterations_and_ramp_up
#[test]
fn iterations_and_time_periods_are_not_mixed_and_a_ramp_up_needs_its_warmup() {
    for (task, words) in [
        (
            json!({"operation": "index-append", "warmup-iterations": 3, "time-period": 60}),
            "Operation 'index-append' in challenge 'default-challenge' defines 3 warmup iterations and a time period of 60 seconds but mixing time periods and iterations is not allowed.",
        ),
        (
            json!({"operation": "index-append", "warmup-time-period": 20, "iterations": 1000}),
            "Operation 'index-append' in challenge 'default-challenge' defines a warmup time period of 20 seconds and 1000 iterations but mixing time periods and iterations is not allowed.",
        ),
        (
            json!({"operation": "index-append", "time-period": 120, "ramp-up-time-period": 60}),
            "Operation 'index-append' in challenge 'default-challenge' defines a ramp-up time period of 60 seconds but no warmup-time-period.",
        ),
        (
            json!({"operation": "index-append", "time-period": 120, "ramp-up-time-period": 60, "warmup-time-period": 59}),
            "The warmup-time-period of operation 'index-append' in challenge 'default-challenge' is 59 seconds but must be greater than or equal to the ramp-up-time-period of 60 seconds.",
        ),
        (
            json!({"operation": "index-append", "iterations": 10, "ramp-up-time-period": 60}),
            "Operation 'index-append' in challenge 'default-challenge' defines a ramp-up time period of 60 seconds as well as None warmup iterations and 10 iterations but mixing time periods and iterations is not allowed.",
        ),
    ] {
        let e = refused(one_task(task));
        assert!(e.contains(words), "{e}");
    }
    converted(one_task(json!({"operation": "index-append", "time-period": 120, "ramp-up-time-period": 60, "warmup-time-period": 60}))).unwrap();
}

/// test_parse_challenge_and_challenges_are_defined
#[test]
fn challenge_and_challenges_together_are_refused() {
    let e = refused(json!({"challenge": {"name": "a", "schedule": []}, "challenges": []}));
    assert!(
        e.contains("Multiple out of 'challenge', 'challenges' or 'schedule' are defined but only one of them is allowed."),
        "{e}"
    );
}
