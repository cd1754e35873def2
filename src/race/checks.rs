//! What is checked of a planned race before it starts: that the backend can run every
//! operation (or, with `--on-unsupported skip`, which tasks are left out), and that a sharded
//! race drives one system.

use super::RaceError;
use crate::backend::BackendKind;
use crate::plan::{self, Plan};

/// Operations the backend cannot run fail here, before anything is measured, not in every
/// trial; with `--on-unsupported skip` their tasks are left out instead, each named in what
/// the returned deviations say.
pub(super) fn check_supported(
    kind: BackendKind,
    plan: &mut Plan,
    on_unsupported: crate::track::OnUnsupported,
) -> Result<Vec<String>, RaceError> {
    let mut skipped: Vec<String> = Vec::new();
    // Indices whose create-index was left out, and why: what reads or writes them is left
    // out too, named for that reason, rather than failing with "no such index".
    let mut uncreated: Vec<(String, String)> = Vec::new();
    // The create-index specs of the tasks so far: later searches compile against them.
    let mut created: Vec<crate::ops::IndexSpec> = Vec::new();
    // Names a task that runs may have made an index of, by any way the engine makes one.
    let mut made: Vec<String> = Vec::new();
    for step in &mut plan.steps {
        let (plan::Step::Run { leaves }
        | plan::Step::Reset {
            operations: leaves, ..
        }) = step;
        let mut refused = None;
        leaves.retain(|leaf| {
            let check = kind.check(&leaf.spec).map_err(|why| {
                if let crate::ops::OpSpec::CreateIndex(specs) = &leaf.spec {
                    uncreated.extend(specs.iter().map(|s| (s.name.clone(), why.clone())));
                }
                why
            });
            if check.is_ok() {
                if let crate::ops::OpSpec::CreateIndex(specs) = &leaf.spec {
                    uncreated.retain(|(n, _)| !specs.iter().any(|s| s.name == *n));
                    created.extend(specs.iter().cloned());
                }
            }
            let check = check.and_then(|()| kind.check_against(&leaf.spec, &created));
            let check = check.and_then(|()| match on_unsupported {
                crate::track::OnUnsupported::Skip => not_created(&leaf.spec, &uncreated),
                crate::track::OnUnsupported::Fail => Ok(()),
            });
            let check = check.and_then(|()| match (kind, on_unsupported) {
                (BackendKind::Embedded, crate::track::OnUnsupported::Skip) => {
                    never_made(&leaf.spec, &made)
                }
                _ => Ok(()),
            });
            if check.is_ok() {
                made.extend(makes(&leaf.spec));
            }
            let Err(why) = check else {
                return true;
            };
            let what = format!(
                "operation `{}` ({}) of task `{}` cannot run on --backend {}: {why}",
                leaf.operation.name,
                leaf.op_type.name,
                leaf.task,
                kind.as_str()
            );
            match on_unsupported {
                crate::track::OnUnsupported::Fail => {
                    refused.get_or_insert(what);
                }
                crate::track::OnUnsupported::Skip => {
                    let note = format!("{what}; skipped (--on-unsupported skip)");
                    if !skipped.contains(&note) {
                        skipped.push(note);
                    }
                }
            }
            false
        });
        if let Some(what) = refused {
            return Err(RaceError::Unsupported(what));
        }
    }
    plan.steps.retain(|step| {
        let (plan::Step::Run { leaves }
        | plan::Step::Reset {
            operations: leaves, ..
        }) = step;
        !leaves.is_empty()
    });
    drop_unrun_results(plan);
    Ok(skipped)
}

/// A recall criterion (a threshold or a capacity search's `slo`) only on a vector search: any
/// other task has no ranked ids to check, and would fail or never judge it.
pub(super) fn check_recall_criteria(plan: &Plan, sharded: bool) -> Result<(), RaceError> {
    let is_recall =
        |t: &crate::thresholds::Threshold| matches!(t.metric, crate::thresholds::Metric::Recall(_));
    for step in &plan.steps {
        let (plan::Step::Run { leaves }
        | plan::Step::Reset {
            operations: leaves, ..
        }) = step;
        for leaf in leaves {
            let slot = leaf.result.and_then(|r| plan.results.get(r));
            if matches!(leaf.spec, crate::ops::OpSpec::VectorSearch(_)) {
                // Shards exchange each probe's timings and counts, not its recall.
                let sharded_goal = slot
                    .and_then(|s| s.capacity.as_ref())
                    .and_then(|c| c.slo.iter().find(|t| is_recall(t)));
                if let (true, Some(c)) = (sharded, sharded_goal) {
                    return Err(RaceError::Unsupported(format!(
                        "task `{}`: `{c}`: a sharded capacity search does not judge recall (its shards share each probe's timings and counts, not its recall); run it in one process",
                        leaf.task
                    )));
                }
                continue;
            }
            let criterion = slot
                .into_iter()
                .flat_map(|s| {
                    s.thresholds
                        .iter()
                        .chain(s.capacity.iter().flat_map(|c| &c.slo))
                })
                .find(|t| is_recall(t));
            if let Some(c) = criterion {
                return Err(RaceError::Unsupported(format!(
                    "task `{}`: `{c}`: only a vector-search measures recall (operation `{}` is a {})",
                    leaf.task, leaf.operation.name, leaf.op_type.name
                )));
            }
        }
    }
    Ok(())
}

/// Result slots whose every leaf was left out: a skipped task is named in the deviations, not
/// shown as a row of empty numbers. The leaves' indices follow the slots that stay.
fn drop_unrun_results(plan: &mut Plan) {
    let mut used = vec![false; plan.results.len()];
    for step in &plan.steps {
        let (plan::Step::Run { leaves }
        | plan::Step::Reset {
            operations: leaves, ..
        }) = step;
        for i in leaves.iter().filter_map(|l| l.result) {
            if let Some(u) = used.get_mut(i) {
                *u = true;
            }
        }
    }
    if used.iter().all(|u| *u) {
        return;
    }
    let mut next = 0;
    let new_index: Vec<Option<usize>> = used
        .iter()
        .map(|u| {
            u.then(|| {
                next += 1;
                next - 1
            })
        })
        .collect();
    for step in &mut plan.steps {
        let (plan::Step::Run { leaves }
        | plan::Step::Reset {
            operations: leaves, ..
        }) = step;
        for leaf in leaves.iter_mut() {
            leaf.result = leaf
                .result
                .and_then(|i| new_index.get(i).copied().flatten());
        }
    }
    let mut i = 0;
    plan.results.retain(|_| {
        i += 1;
        used[i - 1]
    });
}

/// Err when `spec` reads or writes an index whose create-index was left out.
fn not_created(spec: &crate::ops::OpSpec, uncreated: &[(String, String)]) -> Result<(), String> {
    for target in spec.target_indices() {
        for name in target.split(',') {
            if let Some((index, why)) = uncreated
                .iter()
                .find(|(n, _)| crate::ops::index_pattern_matches(name, n))
            {
                return Err(format!(
                    "index `{index}` is not created (its create-index is left out: {why})"
                ));
            }
        }
    }
    Ok(())
}

/// Index names a task may make: created indices, data streams (a bulk's `create` makes
/// one), and what a raw request PUTs.
fn makes(spec: &crate::ops::OpSpec) -> Vec<String> {
    use crate::ops::OpSpec;
    match spec {
        // An index, and the aliases its body names.
        OpSpec::CreateIndex(specs) => specs
            .iter()
            .flat_map(|s| {
                let aliases = s.body.get("aliases").and_then(|a| a.as_object());
                std::iter::once(s.name.clone())
                    .chain(aliases.into_iter().flat_map(|a| a.keys().cloned()))
            })
            .collect(),
        OpSpec::Bulk(b) if b.create => b
            .files
            .iter()
            .map(|f| f.target_index.clone())
            .chain([b.index.clone()])
            .collect(),
        OpSpec::RawRequest(r) => r.requests.iter().flat_map(raw_makes).collect(),
        _ => Vec::new(),
    }
}

/// What one REST call may make: an index or data stream it PUTs, an alias it adds (the
/// engine's route table says).
fn raw_makes(c: &crate::ops::RawCall) -> Vec<String> {
    engine::rest::effects(&c.method, &c.path, c.body.as_ref()).makes
}

/// Err when a task reads or writes, by name or pattern, an index no task that runs before it
/// makes: the embedded engine starts empty, so the call could only fail (typically a task a
/// track.py would have run, such as a downsample or the creation of data streams, was to make
/// it). Wildcards count only where the engine refuses to match nothing (`_settings`, blocks,
/// alias actions), as Elasticsearch does.
fn never_made(spec: &crate::ops::OpSpec, made: &[String]) -> Result<(), String> {
    use crate::ops::OpSpec;
    let names: Vec<String> = match spec {
        OpSpec::Bulk(b) if b.create => Vec::new(),
        OpSpec::RawRequest(r) => r.requests.iter().flat_map(raw_targets).collect(),
        other => other
            .target_indices()
            .iter()
            .flat_map(|t| t.split(','))
            .filter(|n| !n.contains('*') && *n != "_all")
            .map(str::to_string)
            .collect(),
    };
    let reached = |name: &str| {
        made.iter().any(|m| {
            m == name || (name.contains('*') && crate::ops::index_pattern_matches(name, m))
        })
    };
    match names.iter().find(|n| !n.is_empty() && !reached(n)) {
        Some(name) => Err(format!(
            "no task that runs before it makes index `{name}`, and the engine starts empty: the call could only fail"
        )),
        None => Ok(()),
    }
}

/// The indices a raw request needs to exist: those an alias action names, and the target of
/// a settings or block change (the engine's route table says).
fn raw_targets(c: &crate::ops::RawCall) -> Vec<String> {
    engine::rest::effects(&c.method, &c.path, c.body.as_ref()).needs
}

/// The shards of a race drive one system: an in-process engine is one per shard, so a
/// sharded race on it would race N small systems and merge them as one. Only a track that
/// does nothing but sleep (the driver alone, as in a simulation) may shard on it.
pub(super) fn check_shardable(kind: BackendKind, plan: &Plan) -> Result<(), RaceError> {
    if kind != BackendKind::Embedded {
        return Ok(());
    }
    let leaves = plan.steps.iter().flat_map(|step| match step {
        plan::Step::Run { leaves }
        | plan::Step::Reset {
            operations: leaves, ..
        } => leaves.iter(),
    });
    for leaf in leaves {
        if !matches!(leaf.spec, crate::ops::OpSpec::Sleep(_)) {
            return Err(RaceError::Unsupported(format!(
                "task `{}` cannot run sharded on --backend embedded: every shard would race its \
                 own in-process engine. Serve one engine (`runner serve`) and race it with \
                 --backend elasticsearch --target-hosts, or race a redis or Elasticsearch server",
                leaf.task
            )));
        }
    }
    Ok(())
}

/// Rally's bulks whose corpus cannot be cut per esrally worker, said as deviations: a file
/// with no declared document count (Rally requires one) has no slices to cut, so the task's
/// clients read the corpus as one queue.
pub(super) fn uncut_rally_bulks(plan: &Plan) -> Vec<String> {
    let mut notes = Vec::new();
    for step in &plan.steps {
        let plan::Step::Run { leaves } = step else {
            continue;
        };
        for leaf in leaves {
            let crate::ops::OpSpec::Bulk(bulk) = &leaf.spec else {
                continue;
            };
            if leaf.corpus_parts.is_empty() {
                continue;
            }
            if let Some(file) = bulk.files.iter().find(|f| f.document_count.is_none()) {
                let note = format!(
                    "task `{}`: `{}` declares no document count, so its corpus is read as one queue by all clients, not cut per load-driver worker as esrally cuts it",
                    leaf.task,
                    file.describe().display()
                );
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use crate::ops::index_pattern_matches as wildcard_match;

    #[test]
    fn index_patterns_match_as_elasticsearch_does() {
        assert!(wildcard_match("osm*", "osmpolygons"));
        assert!(wildcard_match("*", "a"));
        assert!(wildcard_match("a*b*c", "a-x-b-y-c"));
        assert!(!wildcard_match("osm*", "geonames"));
        assert!(!wildcard_match("queries", "queries2"));
        assert!(wildcard_match("d*", "dé"));
    }
}

#[cfg(test)]
mod made_tests {
    use super::{makes, never_made, raw_targets};
    use crate::ops::{OpSpec, RawCall, RawRequestSpec, StatusSet};
    use serde_json::{json, Value};

    fn raw(method: &str, path: &str, body: Option<Value>) -> RawCall {
        RawCall {
            method: method.into(),
            path: path.into(),
            body,
            request_params: Vec::new(),
            poll: None,
            if_found: false,
            destructive: false,
            cursor_pages: 1,
        }
    }

    fn spec(calls: Vec<RawCall>) -> OpSpec {
        OpSpec::RawRequest(RawRequestSpec {
            requests: calls,
            ignore_status: StatusSet::default(),
            bound: None,
        })
    }

    #[test]
    fn what_raw_requests_make_and_need() {
        let aliases = raw(
            "POST",
            "/_aliases",
            Some(json!({"actions": [
                {"add": {"indices": ["a", "b"], "alias": "x"}},
                {"add": {"index": "c", "aliases": ["y", "z"]}},
                {"remove": {"index": "d", "alias": "w"}}
            ]})),
        );
        assert_eq!(raw_targets(&aliases), vec!["a", "b", "c", "d"]);
        let made = makes(&spec(vec![
            aliases,
            raw("PUT", "/logs", None),
            raw("PUT", "/_data_stream/ds", None),
            raw("PUT", "/logs/_alias/al", None),
            raw("PUT", "/logs/_settings", None),
            raw(
                "PUT",
                "/_index_template/t",
                Some(json!({"template": {"aliases": {"ta": {}}}})),
            ),
            raw(
                "PUT",
                "/_template/legacy",
                Some(json!({"aliases": {"la": {}}})),
            ),
        ]));
        assert_eq!(made, vec!["x", "y", "z", "logs", "ds", "al", "ta", "la"]);
        assert_eq!(
            raw_targets(&raw("PUT", "/l-*,m/_settings", None)),
            vec!["l-*", "m"]
        );
        assert!(raw_targets(&raw("GET", "/l-*/_stats", None)).is_empty());
        // A settings change on a pattern that matches something made is fine; else it is not.
        let settings = spec(vec![raw("PUT", "/logs-*/_settings", None)]);
        assert!(never_made(&settings, &["logs-a".into()]).is_ok());
        let refused = never_made(&settings, &["other".into()]).unwrap_err();
        assert!(refused.contains("`logs-*`"), "{refused}");
    }
}
