//! Bulk request bodies for the embedded engine: action lines (index, create, update, delete)
//! each followed by its document, as Elasticsearch reads them. The embedded backend's bulk
//! operation and `runner serve`'s `_bulk` both run them here, so they behave alike.

use super::index::IndexSettings;
use super::ingest::{IngestDoc, Pipelines};
use super::{EmbeddedIndex, State};
use serde::Deserialize;
use std::borrow::Cow;
use std::sync::Arc;

/// A bulk action's verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verb {
    Index,
    Create,
    Update,
    Delete,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Index => "index",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Delete => "delete",
        }
    }
}

/// One action of a bulk body.
pub struct Item<'a> {
    pub verb: Verb,
    /// The action's `_index`, else the request's.
    pub index: Option<Cow<'a, str>>,
    pub id: Option<Cow<'a, str>>,
    /// The document (index, create) or update body (update); none for delete.
    pub body: Option<&'a str>,
    /// The action's own ingest pipeline (its `pipeline`), over the request's.
    pub pipeline: Option<Cow<'a, str>>,
}

/// A body that cannot be read as bulk actions: the whole request fails, as in Elasticsearch.
#[derive(Debug)]
pub struct Malformed {
    pub line: usize,
    pub message: String,
}

/// What an item did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Done {
    Created,
    Updated,
    Deleted,
    /// A delete of an id that is not there (not an error in Elasticsearch).
    NotFound,
    /// A document an ingest pipeline dropped.
    Noop,
}

impl Done {
    pub fn as_str(self) -> &'static str {
        match self {
            Done::Created => "created",
            Done::Updated => "updated",
            Done::Deleted => "deleted",
            Done::NotFound => "not_found",
            Done::Noop => "noop",
        }
    }

    pub fn status(self) -> u16 {
        match self {
            Done::Created => 201,
            Done::Updated | Done::Deleted | Done::Noop => 200,
            Done::NotFound => 404,
        }
    }
}

/// Why one item failed; the others still run.
#[derive(Debug, Clone)]
pub struct ItemError {
    pub status: u16,
    pub kind: &'static str,
    pub reason: String,
}

impl ItemError {
    pub fn new(status: u16, kind: &'static str, reason: impl Into<String>) -> ItemError {
        ItemError {
            status,
            kind,
            reason: reason.into(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ActionLine<'a> {
    #[serde(borrow, default)]
    index: Option<Meta<'a>>,
    #[serde(borrow, default)]
    create: Option<Meta<'a>>,
    #[serde(borrow, default)]
    update: Option<Meta<'a>>,
    #[serde(borrow, default)]
    delete: Option<Meta<'a>>,
}

/// The metadata of an action; keys other than these (routing, version, ...) are accepted
/// and have no effect on one shard.
#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(borrow, default, rename = "_index")]
    index: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "_id")]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pipeline: Option<Cow<'a, str>>,
}

/// The actions of a bulk body, in order.
pub struct Items<'a> {
    lines: std::iter::Enumerate<std::str::Lines<'a>>,
}

pub fn items(body: &str) -> Items<'_> {
    Items {
        lines: body.lines().enumerate(),
    }
}

/// The actions of a batch the corpus feeder built, from its (action, document) pairs: no
/// action line is parsed.
impl<'a> Items<'a> {
    fn next_line(&mut self) -> Option<(usize, &'a str)> {
        self.lines
            .by_ref()
            .map(|(i, l)| (i + 1, l))
            .find(|(_, l)| !l.trim().is_empty())
    }
}

impl<'a> Iterator for Items<'a> {
    type Item = Result<Item<'a>, Malformed>;

    fn next(&mut self) -> Option<Self::Item> {
        let (line, text) = self.next_line()?;
        // The action line of documents without ids, by far the most common, is not parsed.
        let (verb, meta) = if text == "{\"index\":{}}" {
            (
                Verb::Index,
                Meta {
                    index: None,
                    id: None,
                    pipeline: None,
                },
            )
        } else {
            match parse_action(text) {
                Ok(a) => a,
                Err(message) => return Some(Err(Malformed { line, message })),
            }
        };
        let body = match verb {
            Verb::Delete => None,
            _ => match self.next_line() {
                Some((_, doc)) => Some(doc),
                None => {
                    return Some(Err(Malformed {
                        line,
                        message: format!("the `{}` action has no document after it", verb.as_str()),
                    }))
                }
            },
        };
        Some(Ok(Item {
            verb,
            index: meta.index,
            id: meta.id,
            body,
            pipeline: meta.pipeline,
        }))
    }
}

fn parse_action(text: &str) -> Result<(Verb, Meta<'_>), String> {
    let a: ActionLine =
        serde_json::from_str(text).map_err(|e| format!("not a bulk action line ({e})"))?;
    let mut found = [
        (Verb::Index, a.index),
        (Verb::Create, a.create),
        (Verb::Update, a.update),
        (Verb::Delete, a.delete),
    ]
    .into_iter()
    .filter_map(|(v, m)| m.map(|m| (v, m)));
    match (found.next(), found.next()) {
        (Some(one), None) => Ok(one),
        (None, _) => {
            Err("the action line names no action (index, create, update or delete)".into())
        }
        (Some(_), Some(_)) => Err("the action line names more than one action".into()),
    }
}

impl State {
    /// Runs the actions of a bulk body ([`items`], or items a caller made from its own batches): `report` gets each
    /// item's index name, verb, id and result, in order. Items of indices that do not exist
    /// fail alone (no dynamic index creation here, except data streams). Documents go through
    /// their ingest pipelines: the action's, else the request's `pipeline`, else the index's
    /// default one, then its final one.
    pub fn bulk<'a>(
        &self,
        default_index: Option<&Arc<EmbeddedIndex>>,
        pipeline: Option<&str>,
        actions: impl Iterator<Item = Result<Item<'a>, Malformed>>,
        mut report: impl FnMut(&str, Verb, Option<&str>, Result<(String, Done), ItemError>),
    ) -> Result<(), Malformed> {
        // The index of the last item and its settings, read once per switch of index.
        let mut cache: Option<(Arc<EmbeddedIndex>, IndexSettings)> = None;
        let mut ingest = None;
        for item in actions {
            let item = item?;
            let name = item
                .index
                .as_deref()
                .or(default_index.map(|d| d.name.as_str()))
                .unwrap_or("");
            if cache.as_ref().is_none_or(|(c, _)| c.name != name) {
                cache = match default_index.filter(|d| d.name == name) {
                    Some(d) => Some(d.clone()),
                    None => self.writable_index(name, item.verb),
                }
                .map(|i| {
                    let s = i.settings.read().unwrap_or_else(|p| p.into_inner()).clone();
                    (i, s)
                });
            }
            let Some((index, settings)) = &cache else {
                report(name, item.verb, item.id.as_deref(), Err(ItemError::new(404, "index_not_found_exception", format!("no such index [{name}] (a write creates no index here, except a data stream its template makes: create the index first)"))));
                continue;
            };
            let first = item
                .pipeline
                .as_deref()
                .or(pipeline)
                .or(settings.default_pipeline.as_deref())
                .filter(|p| *p != "_none");
            let ingests = matches!(item.verb, Verb::Index | Verb::Create)
                && (first.is_some() || settings.final_pipeline.is_some());
            if !ingests {
                let result = self.write(index, settings, &item);
                report(name, item.verb, item.id.as_deref(), result);
                continue;
            }
            let pipelines = ingest.get_or_insert_with(|| {
                (
                    self.pipelines.read().unwrap_or_else(|p| p.into_inner()),
                    chrono::Utc::now()
                        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
                        .to_string(),
                )
            });
            match self.ingest(&pipelines.0, &pipelines.1, &item, (index, settings), first) {
                Ok(None) => report(
                    name,
                    item.verb,
                    item.id.as_deref(),
                    Ok((item.id.as_deref().unwrap_or("").to_string(), Done::Noop)),
                ),
                Ok(Some(done)) => {
                    let owned = Item {
                        verb: item.verb,
                        index: Some(Cow::Borrowed(done.index.name.as_str())),
                        id: done.id.as_deref().map(Cow::Borrowed),
                        body: Some(&done.body),
                        pipeline: None,
                    };
                    let result = self.write(&done.index, &done.settings, &owned);
                    report(&done.index.name, item.verb, owned.id.as_deref(), result);
                }
                Err(e) => report(name, item.verb, item.id.as_deref(), Err(e)),
            }
        }
        Ok(())
    }

    /// The index a write to `name` goes to: a `create` into a name a data stream template
    /// matches makes the data stream.
    pub(super) fn writable_index(&self, name: &str, verb: Verb) -> Option<Arc<EmbeddedIndex>> {
        // An alias writes to its one index, or to its write index.
        let aliased = self
            .aliases
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .write_index(name)
            .ok()
            .flatten()
            .map(str::to_string);
        let name = aliased.as_deref().unwrap_or(name);
        let lookup = || {
            self.indices
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .get(name)
                .cloned()
        };
        lookup().or_else(|| {
            (verb == Verb::Create && self.create_data_stream(name).is_ok())
                .then(lookup)
                .flatten()
        })
    }

    fn write(
        &self,
        index: &EmbeddedIndex,
        settings: &IndexSettings,
        item: &Item,
    ) -> Result<(String, Done), ItemError> {
        if let Some(why) = settings.write_refusal(&index.name) {
            return Err(ItemError::new(403, "cluster_block_exception", why));
        }
        if self.is_data_stream(&index.name) {
            data_stream_write(item)?;
        }
        index.apply(item)
    }

    /// Runs a document's pipelines; None when one dropped it. A pipeline that sends it to
    /// another index (`_index`, `reroute`) runs that index's default pipeline next, as
    /// Elasticsearch does, and the final pipeline is the last index's.
    fn ingest(
        &self,
        pipelines: &Pipelines,
        timestamp: &str,
        item: &Item,
        (index, settings): (&Arc<EmbeddedIndex>, &IndexSettings),
        first: Option<&str>,
    ) -> Result<Option<Ingested>, ItemError> {
        let failed = |m: String| ItemError::new(400, "illegal_argument_exception", m);
        let source = match item.body.map(serde_json::from_str::<serde_json::Value>) {
            Some(Ok(serde_json::Value::Object(m))) => m,
            _ => {
                return Err(ItemError::new(
                    400,
                    "mapper_parsing_exception",
                    "the document is not a JSON object",
                ))
            }
        };
        let mut doc = IngestDoc {
            source,
            index: index.name.clone(),
            id: item.id.as_deref().map(str::to_string),
            timestamp: timestamp.to_string(),
        };
        let (mut index, mut settings) = (index.clone(), settings.clone());
        let mut visited = vec![index.name.clone()];
        let mut next = first.map(str::to_string);
        while let Some(p) = next.take() {
            if !pipelines.run(&p, &mut doc).map_err(failed)? {
                return Ok(None);
            }
            if doc.index != index.name {
                if visited.contains(&doc.index) {
                    return Err(failed(format!(
                        "index cycle detected: {} -> {}",
                        visited.join(" -> "),
                        doc.index
                    )));
                }
                index = self.writable_index(&doc.index, item.verb).ok_or_else(|| {
                    ItemError::new(
                        404,
                        "index_not_found_exception",
                        format!(
                            "no such index [{}] (the pipeline sent the document there)",
                            doc.index
                        ),
                    )
                })?;
                settings = index
                    .settings
                    .read()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone();
                visited.push(index.name.clone());
                next = settings.default_pipeline.clone();
            }
        }
        if let Some(f) = settings.final_pipeline.clone() {
            if !pipelines.run(&f, &mut doc).map_err(failed)? {
                return Ok(None);
            }
            if doc.index != index.name {
                return Err(failed(format!(
                    "final pipeline [{f}] can't change the target index"
                )));
            }
        }
        let body = serde_json::to_string(&doc.source).map_err(|e| failed(e.to_string()))?;
        Ok(Some(Ingested {
            index,
            settings,
            id: doc.id,
            body,
        }))
    }
}

/// A document after its pipelines: where it goes, and its new id and source.
struct Ingested {
    index: Arc<EmbeddedIndex>,
    settings: IndexSettings,
    id: Option<String>,
    body: String,
}

/// A data stream takes `create` actions only, of documents with an `@timestamp`.
fn data_stream_write(item: &Item) -> Result<(), ItemError> {
    if item.verb != Verb::Create {
        return Err(ItemError::new(
            400,
            "illegal_argument_exception",
            format!(
                "only write ops with an op_type of create are allowed in data streams (this is `{}`)",
                item.verb.as_str()
            ),
        ));
    }
    let has_timestamp = item
        .body
        .and_then(|b| serde_json::from_str::<serde_json::Value>(b).ok())
        .is_some_and(|d| d.get("@timestamp").is_some_and(|t| !t.is_null()));
    if !has_timestamp {
        return Err(ItemError::new(
            400,
            "mapper_parsing_exception",
            "data stream timestamp field [@timestamp] is missing",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a bulk run reports, item by item.
    fn run(state: &State, actions: Vec<Result<Item<'_>, Malformed>>) -> Vec<String> {
        let mut out = Vec::new();
        state
            .bulk(
                None,
                None,
                actions.into_iter(),
                |index, verb, id, result| {
                    out.push(format!(
                        "{index} {} {} {}",
                        verb.as_str(),
                        id.unwrap_or("-"),
                        result
                            .map(|(id, _)| id)
                            .unwrap_or_else(|e| e.kind.to_string())
                    ))
                },
            )
            .unwrap();
        out
    }

    #[test]
    fn a_body_runs_item_by_item() {
        let body = "{\"index\":{\"_index\":\"i\",\"_id\":\"1\"}}\n{\"a\":1}\n{\"create\":{\"_index\":\"i\",\"_id\":\"1\"}}\n{\"a\":2}\n{\"update\":{\"_index\":\"i\",\"_id\":\"1\"}}\n{\"doc\":{\"a\":3}}\n{\"index\":{\"_index\":\"nope\"}}\n{\"a\":4}\n";
        let state = State::default();
        state
            .create_index("i", &serde_json::json!({}))
            .map_err(|_| ())
            .unwrap();
        assert_eq!(
            run(&state, items(body).collect()),
            vec![
                "i index 1 1",
                "i create 1 version_conflict_engine_exception",
                "i update 1 1",
                "nope index - index_not_found_exception"
            ]
        );
    }

    #[test]
    fn actions_are_read_with_their_documents() {
        let body = "{\"index\":{}}\n{\"a\":1}\n\n{\"update\":{\"_id\":\"7\",\"_index\":\"x\",\"retry_on_conflict\":3}}\n{\"doc\":{\"a\":2}}\n{\"delete\":{\"_id\":\"8\"}}\n{\"create\":{\"_id\":\"9\"}}\n{\"a\":3}\n";
        let got: Vec<(Verb, Option<String>, Option<String>, Option<&str>)> = items(body)
            .map(|i| i.unwrap())
            .map(|i| {
                (
                    i.verb,
                    i.index.map(|s| s.into_owned()),
                    i.id.map(|s| s.into_owned()),
                    i.body,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (Verb::Index, None, None, Some("{\"a\":1}")),
                (
                    Verb::Update,
                    Some("x".into()),
                    Some("7".into()),
                    Some("{\"doc\":{\"a\":2}}")
                ),
                (Verb::Delete, None, Some("8".into()), None),
                (Verb::Create, None, Some("9".into()), Some("{\"a\":3}")),
            ]
        );
    }

    #[test]
    fn malformed_bodies_name_the_line() {
        let err = |body: &str| items(body).find_map(Result::err).unwrap();
        assert_eq!(
            err("{\"index\":{}}\n{\"a\":1}\n{\"upsert\":{}}\n{}").line,
            3
        );
        assert!(err("{\"index\":{}}\n").message.contains("no document"));
        assert!(err("{}\n").message.contains("names no action"));
        assert!(err("not json\n").message.contains("not a bulk action line"));
    }
}
