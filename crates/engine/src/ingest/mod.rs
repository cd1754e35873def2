//! Ingest pipelines, as Elasticsearch runs them before a document is indexed: put, got and
//! deleted by id (`_ingest/pipeline`), run by a bulk's `pipeline`, an index's
//! `index.default_pipeline` and `index.final_pipeline`, and by the `pipeline` processor.
//!
//! A pipeline is checked when it is put: a processor or option the engine does not run, or an
//! `if` condition or `script` outside the engine's Painless subset, is refused then, naming
//! it, never skipped at index time.

mod doc;
mod domain;
mod fingerprint;
mod grok;
mod kv;
mod processors;
mod uri_parts;
mod user_agent;

pub use doc::IngestDoc;

use processors::{Flow, Options, Processor};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Pipelines calling pipelines: deeper than this is a cycle or as good as one.
const MAX_DEPTH: usize = 16;
/// Processors in one pipeline body, bounded before they are built.
const MAX_PROCESSORS: usize = 1_000;

struct Step {
    kind: String,
    tag: Option<String>,
    /// The `if` condition: the processor runs where it returns true.
    condition: Option<Arc<crate::painless::Script>>,
    processor: Processor,
    ignore_failure: bool,
    on_failure: Vec<Step>,
    counts: Counts,
}

pub struct Pipeline {
    steps: Vec<Step>,
    on_failure: Vec<Step>,
    body: Value,
    counts: Counts,
}

/// Elasticsearch's ingest statistics of a pipeline, a processor or the whole node: documents
/// run, time spent, failures (counted as they happen; reset when a pipeline is replaced).
#[derive(Default)]
pub struct Counts {
    count: AtomicU64,
    nanos: AtomicU64,
    failed: AtomicU64,
}

impl Counts {
    fn record(&self, started: Instant, ok: bool) {
        self.count.fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.nanos.fetch_add(nanos, Ordering::Relaxed);
        if !ok {
            self.failed.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// As `_nodes/stats` shows them.
    pub fn json(&self) -> Value {
        serde_json::json!({
            "count": self.count.load(Ordering::Relaxed),
            "time_in_millis": self.nanos.load(Ordering::Relaxed) / 1_000_000,
            "current": 0,
            "failed": self.failed.load(Ordering::Relaxed),
        })
    }
}

#[derive(Default)]
pub struct Pipelines {
    by_id: BTreeMap<String, Arc<Pipeline>>,
    /// Every document a pipeline was run on (the node's `ingest.total`).
    total: Arc<Counts>,
}

impl Pipelines {
    /// Checks and stores a pipeline; an error says what the engine does not run.
    pub fn put(&mut self, id: &str, body: Value) -> Result<(), String> {
        let pipeline = Pipeline::parse(&body)?;
        self.by_id.insert(id.to_string(), Arc::new(pipeline));
        Ok(())
    }

    pub fn get(&self, id: &str) -> Option<Arc<Pipeline>> {
        self.by_id.get(id).cloned()
    }

    /// The bodies of the pipelines `ids` names (a comma list with `*` wildcards; all when None).
    pub fn bodies(&self, ids: Option<&str>) -> Map<String, Value> {
        self.by_id
            .iter()
            .filter(|(id, _)| ids.is_none_or(|ids| matches_any(ids, id)))
            .map(|(id, p)| (id.clone(), p.body.clone()))
            .collect()
    }

    /// Deletes the pipelines `ids` names; how many there were.
    pub fn delete(&mut self, ids: &str) -> usize {
        let before = self.by_id.len();
        self.by_id.retain(|id, _| !matches_any(ids, id));
        before - self.by_id.len()
    }

    /// Runs pipeline `id` on `doc`: Ok(false) when a processor dropped it.
    pub fn run(&self, id: &str, doc: &mut IngestDoc) -> Result<bool, String> {
        let started = Instant::now();
        let result = self.run_at(id, doc, 0);
        self.total.record(started, result.is_ok());
        result
    }

    /// The node's ingest statistics: the total, and each pipeline's with its processors'.
    pub fn stats(&self) -> Value {
        let pipelines: Map<String, Value> = self
            .by_id
            .iter()
            .map(|(id, p)| {
                let mut stats = p.counts.json();
                stats["processors"] = p
                    .steps
                    .iter()
                    .map(|s| serde_json::json!({ &s.kind: { "type": s.kind, "stats": s.counts.json() } }))
                    .collect();
                (id.clone(), stats)
            })
            .collect();
        serde_json::json!({ "total": self.total.json(), "pipelines": pipelines })
    }

    fn run_at(&self, id: &str, doc: &mut IngestDoc, depth: usize) -> Result<bool, String> {
        if depth >= MAX_DEPTH {
            return Err(format!(
                "pipelines call each other more than {MAX_DEPTH} deep (a cycle?) at [{id}]"
            ));
        }
        let Some(pipeline) = self.get(id) else {
            return Err(format!("pipeline with id [{id}] does not exist"));
        };
        let started = Instant::now();
        let result = match self.run_steps(&pipeline.steps, doc, id, depth) {
            Ok(kept) => Ok(kept),
            Err(e) if pipeline.on_failure.is_empty() => Err(e),
            // The pipeline's own handlers take the failure (with `_ingest.on_failure_*`
            // telling them what failed); the document is then indexed.
            Err(_) => {
                let handled = self.run_steps(&pipeline.on_failure, doc, id, depth);
                forget_failure(doc);
                handled
            }
        };
        pipeline.counts.record(started, result.is_ok());
        result
    }

    fn run_steps(
        &self,
        steps: &[Step],
        doc: &mut IngestDoc,
        id: &str,
        depth: usize,
    ) -> Result<bool, String> {
        for step in steps {
            if let Some(cond) = &step.condition {
                match cond.run_ctx(doc.ctx(), doc.now_ms()) {
                    Ok((crate::painless::Val::Bool(true), _)) => {}
                    Ok((crate::painless::Val::Bool(false), _)) => continue,
                    Ok((other, _)) => {
                        return Err(format!(
                            "processor [{}]: its `if` condition returned a {}, not a boolean",
                            step.kind,
                            other.type_name()
                        ))
                    }
                    Err(e) => return Err(format!("processor [{}]: `if`: {e}", step.kind)),
                }
            }
            let started = Instant::now();
            let flow = match &step.processor {
                Processor::Foreach(each) => {
                    self.run_foreach(each, doc, id, depth)
                        .map(|kept| match kept {
                            true => Flow::Next,
                            false => Flow::Drop,
                        })
                }
                other => other.run(doc),
            };
            let ran = match flow {
                Ok(Flow::Next) => Ok(true),
                Ok(Flow::Drop) => return Ok(false),
                Ok(Flow::Call(name, ignore_missing)) => {
                    if ignore_missing && self.get(&name).is_none() {
                        Ok(true)
                    } else {
                        self.run_at(&name, doc, depth + 1)
                    }
                }
                Err(e) => {
                    if !step.ignore_failure {
                        note_failure(doc, step, id, &e);
                    }
                    Err(format!("processor [{}]: {e}", step.kind))
                }
            };
            step.counts.record(started, ran.is_ok());
            match ran {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(_) if step.ignore_failure => {}
                Err(_) if !step.on_failure.is_empty() => {
                    let kept = self.run_steps(&step.on_failure, doc, id, depth)?;
                    forget_failure(doc);
                    if !kept {
                        return Ok(false);
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }
}

/// A `foreach`: its processor, run on each element of a list (each entry of an object)
/// as `_ingest._value` (and `_ingest._key`), the element then replaced by what it left.
pub struct Foreach {
    field: String,
    ignore_missing: bool,
    step: Box<Step>,
}

impl Foreach {
    pub(crate) fn parse(o: &mut Options) -> Result<Foreach, String> {
        let field = o.required("field")?;
        let ignore_missing = o.flag("ignore_missing", false)?;
        let inner = o
            .take("processor")
            .ok_or("[processor] required property is missing (processor [foreach])")?;
        Ok(Foreach {
            field,
            ignore_missing,
            step: Box::new(step(&inner)?),
        })
    }
}

impl Pipelines {
    fn run_foreach(
        &self,
        each: &Foreach,
        doc: &mut IngestDoc,
        id: &str,
        depth: usize,
    ) -> Result<bool, String> {
        let value = match doc.get(&each.field) {
            Some(v) if !v.is_null() => v.into_owned(),
            _ if each.ignore_missing => return Ok(true),
            _ => {
                return Err(format!(
                    "field [{}] not present as part of path [{}]",
                    each.field, each.field
                ))
            }
        };
        let saved = (doc.remove("_ingest._value"), doc.remove("_ingest._key"));
        let entries: Vec<(Option<String>, Value)> = match value {
            Value::Array(a) => a.into_iter().map(|v| (None, v)).collect(),
            Value::Object(m) => m.into_iter().map(|(k, v)| (Some(k), v)).collect(),
            other => {
                return Err(format!(
                    "field [{}] of type [{}] cannot be cast to a list or a map",
                    each.field,
                    crate::ingest::doc::kind(&other)
                ))
            }
        };
        let is_map = entries.first().is_some_and(|(k, _)| k.is_some());
        let mut list = Vec::new();
        let mut map = serde_json::Map::new();
        for (key, v) in entries {
            doc.set("_ingest._value", v)?;
            if let Some(k) = &key {
                doc.set("_ingest._key", Value::from(k.clone()))?;
            }
            if !self.run_steps(std::slice::from_ref(&each.step), doc, id, depth)? {
                return Ok(false);
            }
            let after = doc.remove("_ingest._value").unwrap_or(Value::Null);
            match key {
                Some(_) => {
                    let k = doc
                        .remove("_ingest._key")
                        .and_then(|k| k.as_str().map(str::to_string));
                    map.insert(k.unwrap_or_default(), after);
                }
                None => list.push(after),
            }
        }
        for (path, v) in [("_ingest._value", saved.0), ("_ingest._key", saved.1)] {
            if let Some(v) = v {
                doc.set(path, v)?;
            }
        }
        doc.set(
            &each.field,
            if is_map {
                Value::Object(map)
            } else {
                Value::Array(list)
            },
        )?;
        Ok(true)
    }
}

fn matches_any(patterns: &str, id: &str) -> bool {
    patterns
        .split(',')
        .any(|p| crate::names::index_pattern_matches(p, id))
}

impl Pipeline {
    fn parse(body: &Value) -> Result<Pipeline, String> {
        let Some(map) = body.as_object() else {
            return Err("a pipeline body is a JSON object".into());
        };
        for key in map.keys() {
            if ![
                "description",
                "processors",
                "on_failure",
                "version",
                "_meta",
                "deprecated",
            ]
            .contains(&key.as_str())
            {
                return Err(format!("pipeline [{key}] is not a pipeline option"));
            }
        }
        let steps = match map.get("processors") {
            Some(v) => parse_steps(v, "processors")?,
            None => return Err("[processors] required property is missing".into()),
        };
        let on_failure = match map.get("on_failure") {
            Some(v) => parse_steps(v, "on_failure")?,
            None => Vec::new(),
        };
        Ok(Pipeline {
            steps,
            on_failure,
            body: body.clone(),
            counts: Counts::default(),
        })
    }
}

fn parse_steps(v: &Value, key: &str) -> Result<Vec<Step>, String> {
    let Some(list) = v.as_array() else {
        return Err(format!("[{key}] is a list of processors"));
    };
    if list.len() > MAX_PROCESSORS {
        return Err(format!(
            "[{key}] lists {} processors; the engine takes at most {MAX_PROCESSORS}",
            list.len()
        ));
    }
    list.iter().map(step).collect()
}

/// What failed, for the `on_failure` handlers: Elasticsearch's `_ingest.on_failure_message`,
/// `_processor_type`, `_processor_tag` and `_pipeline`.
fn note_failure(doc: &mut IngestDoc, step: &Step, pipeline: &str, message: &str) {
    let m = &mut doc.ingest;
    m.insert("on_failure_message".into(), Value::from(message));
    m.insert(
        "on_failure_processor_type".into(),
        Value::from(step.kind.as_str()),
    );
    match &step.tag {
        Some(tag) => m.insert("on_failure_processor_tag".into(), Value::from(tag.as_str())),
        None => m.remove("on_failure_processor_tag"),
    };
    m.insert("on_failure_pipeline".into(), Value::from(pipeline));
}

/// The failure's metadata is the handlers' only: gone once they have run.
fn forget_failure(doc: &mut IngestDoc) {
    for key in [
        "on_failure_message",
        "on_failure_processor_type",
        "on_failure_processor_tag",
        "on_failure_pipeline",
    ] {
        doc.ingest.remove(key);
    }
}

fn step(v: &Value) -> Result<Step, String> {
    let one = v.as_object().filter(|m| m.len() == 1);
    let Some((kind, config)) = one.and_then(|m| m.iter().next()) else {
        return Err(format!(
            "a processor is an object with one key, its type, got {v}"
        ));
    };
    let Some(config) = config.as_object() else {
        return Err(format!("processor [{kind}]: its options are an object"));
    };
    let mut o = Options::new(kind, config.clone());
    let tag = o.take("tag").and_then(|t| t.as_str().map(str::to_string));
    o.take("description");
    let condition = match o.take("if") {
        Some(cond) => Some(Arc::new(
            crate::painless::Script::for_ingest(&cond)
                .map_err(|e| format!("processor [{kind}]: `if`: {e}"))?,
        )),
        None => None,
    };
    let ignore_failure = o.flag("ignore_failure", false)?;
    let on_failure = match o.take("on_failure") {
        Some(v) => parse_steps(&v, "on_failure")?,
        None => Vec::new(),
    };
    let processor = Processor::parse(&mut o)?;
    o.finish()?;
    Ok(Step {
        kind: kind.clone(),
        tag,
        condition,
        processor,
        ignore_failure,
        on_failure,
        counts: Counts::default(),
    })
}

#[cfg(test)]
mod failure_tests;
#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::doc::doc;
    use serde_json::json;

    fn with(pipelines: &[(&str, Value)]) -> Pipelines {
        let mut p = Pipelines::default();
        for (id, body) in pipelines {
            p.put(id, body.clone()).unwrap();
        }
        p
    }

    #[test]
    fn processors_change_the_document_in_order() {
        let p = with(&[(
            "p",
            json!({"processors": [
                {"set": {"field": "@timestamp", "value": "{{{_ingest.timestamp}}}"}},
                {"rename": {"field": "msg", "target_field": "message"}},
                {"lowercase": {"field": "message"}},
                {"convert": {"field": "n", "type": "integer"}},
                {"split": {"field": "tags", "separator": ",\\s*"}},
                {"append": {"field": "tags", "value": ["c", "a"], "allow_duplicates": false}},
                {"join": {"field": "tags", "separator": "+", "target_field": "joined"}},
                {"gsub": {"field": "path", "pattern": "/+", "replacement": "/"}},
                {"date": {"field": "when", "formats": ["UNIX", "dd/MM/yyyy"], "target_field": "day"}},
                {"json": {"field": "raw", "add_to_root": true}},
                {"remove": {"field": ["raw", "gone"], "ignore_missing": true}},
                {"set": {"field": "kept", "value": 1, "override": false}},
                {"trim": {"field": "pad"}}
            ]}),
        )]);
        let mut d = doc(
            json!({"msg": "HeLLo", "n": "42", "tags": "a, b", "path": "a//b///c",
            "when": "05/12/2026", "raw": "{\"x\": {\"y\": 1}}", "kept": 0, "pad": "  p  "}),
        );
        assert!(p.run("p", &mut d).unwrap());
        assert_eq!(
            Value::Object(d.source),
            json!({"n": 42, "tags": ["a", "b", "c"], "path": "a/b/c", "when": "05/12/2026",
                "kept": 0, "pad": "p", "@timestamp": "2026-12-05T10:00:00.000Z", "message": "hello",
                "joined": "a+b+c", "day": "2026-12-05T00:00:00.000Z", "x": {"y": 1}})
        );
    }

    #[test]
    fn if_conditions_and_script_processors_run_painless_on_ctx() {
        let p = with(&[(
            "p",
            json!({"processors": [
                {"set": {"field": "kind", "value": "big", "if": "ctx.size != null && ctx.size > 100"}},
                {"set": {"field": "kind", "value": "small", "if": "ctx.kind == null"}},
                {"script": {"lang": "painless", "params": {"t": "x"}, "source": "ctx.total = ctx.a + ctx.b; ctx.tags.add(params.t); if (ctx.user?.name != null) { ctx.user.name = ctx.user.name.toUpperCase(); } ctx.remove('a'); ctx._index = 'logs-' + ctx.kind;"}},
                {"set": {"field": "seen", "value": true, "if": {"source": "ctx.nope?.deeper?.value == null"}}},
            ]}),
        )]);
        let mut d =
            doc(json!({"size": 500, "a": 2, "b": 3.5, "tags": ["t"], "user": {"name": "ann"}}));
        assert!(p.run("p", &mut d).unwrap());
        assert_eq!(
            Value::Object(d.source),
            json!({"size": 500, "b": 3.5, "tags": ["t", "x"], "user": {"name": "ANN"}, "kind": "big", "total": 5.5, "seen": true})
        );
        assert_eq!(d.index, "logs-big");
        let mut small = doc(json!({"a": 1, "b": 1, "tags": []}));
        assert!(p.run("p", &mut small).unwrap());
        assert_eq!(small.source["kind"], "small");
        assert_eq!(small.source["total"], 2);
        // A condition that is not a boolean fails the document, as in Elasticsearch.
        let bad = with(&[(
            "b",
            json!({"processors": [{"set": {"field": "k", "value": 1, "if": "ctx.a"}}]}),
        )]);
        let e = bad.run("b", &mut doc(json!({"a": 1}))).unwrap_err();
        assert!(e.contains("not a boolean"), "{e}");
    }

    #[test]
    fn failures_are_handled_ignored_or_reported() {
        let p = with(&[
            (
                "handled",
                json!({"processors": [
                    {"rename": {"field": "nope", "target_field": "x", "on_failure": [{"set": {"field": "err", "value": true}}]}},
                    {"convert": {"field": "s", "type": "integer", "ignore_failure": true}},
                    {"fail": {"message": "stop {{s}}"}}
                ], "on_failure": [{"set": {"field": "pipeline_failed", "value": true}}]}),
            ),
            (
                "strict",
                json!({"processors": [{"convert": {"field": "s", "type": "long"}}]}),
            ),
        ]);
        let mut d = doc(json!({"s": "abc"}));
        assert!(p.run("handled", &mut d).unwrap());
        assert_eq!(
            Value::Object(d.source),
            json!({"s": "abc", "err": true, "pipeline_failed": true})
        );
        let e = p.run("strict", &mut doc(json!({"s": "abc"}))).unwrap_err();
        assert!(
            e.contains("processor [convert]") && e.contains("[abc]"),
            "{e}"
        );
    }

    #[test]
    fn pipelines_call_pipelines_reroute_drop_and_set_ids() {
        let p = with(&[
            (
                "outer",
                json!({"processors": [{"pipeline": {"name": "inner"}}, {"reroute": {"destination": "logs-{{kind}}"}}]}),
            ),
            (
                "inner",
                json!({"processors": [{"fingerprint": {"fields": ["kind"], "target_field": "_id", "method": "SHA-256"}}]}),
            ),
            (
                "dropper",
                json!({"processors": [{"drop": {}}, {"fail": {"message": "never"}}]}),
            ),
            (
                "loop",
                json!({"processors": [{"pipeline": {"name": "loop"}}]}),
            ),
        ]);
        let mut d = doc(json!({"kind": "web"}));
        assert!(p.run("outer", &mut d).unwrap());
        assert_eq!(d.index, "logs-web");
        assert_eq!(d.id.as_ref().map(String::len), Some(44));
        assert!(!p.run("dropper", &mut doc(json!({}))).unwrap());
        let cycle = p.run("loop", &mut doc(json!({}))).unwrap_err();
        assert!(cycle.contains("deep"), "{cycle}");
        assert!(p
            .run("missing", &mut doc(json!({})))
            .unwrap_err()
            .contains("does not exist"));
    }

    #[test]
    fn what_the_engine_does_not_run_is_refused_when_put() {
        let refused = |body: Value| Pipelines::default().put("x", body).unwrap_err();
        assert!(
            refused(json!({"processors": [{"inference": {"model_id": "m"}}]}))
                .contains("No processor type exists with name [inference]")
        );
        assert!(refused(
            json!({"processors": [{"set": {"field": "a", "value": 1, "if": "ctx.list.stream().reduce(0, (a, b) -> a + b) > 1"}}]})
        )
        .contains("`if`: script"));
        assert!(refused(
            json!({"processors": [{"set": {"field": "a", "value": 1, "colour": "red"}}]})
        )
        .contains("colour"));
        assert!(refused(
            json!({"processors": [{"fingerprint": {"fields": ["a"], "method": "MD5"}}]})
        )
        .contains("MD5"));
        assert!(refused(json!({"description": "no processors"})).contains("[processors] required"));
        assert!(refused(json!({"processors": [{"set": {}, "remove": {}}]})).contains("one key"));
    }

    #[test]
    fn ids_are_listed_and_deleted_by_pattern() {
        let mut p = with(&[
            ("a-1", json!({"processors": []})),
            ("a-2", json!({"processors": []})),
            ("b", json!({"processors": []})),
        ]);
        assert_eq!(p.bodies(Some("a-*")).len(), 2);
        assert_eq!(p.bodies(None).len(), 3);
        assert_eq!(p.delete("a-*,zzz"), 2);
        assert_eq!(p.bodies(None).keys().collect::<Vec<_>>(), vec!["b"]);
    }
}
