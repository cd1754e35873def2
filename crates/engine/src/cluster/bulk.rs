//! Running bulk items against the engine's indices: each item's index resolved (aliases, data
//! streams), its ingest pipelines run, then written.

use crate::bulk::{Done, Item, ItemError, Malformed, Verb};
use crate::cluster::State;
use crate::index::EmbeddedIndex;
use crate::index::IndexSettings;
use crate::index::{DocMeta, Written};
use crate::ingest::IngestDoc;
use crate::ingest::Pipelines;
use std::borrow::Cow;
use std::sync::Arc;

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
        mut report: impl FnMut(&str, Verb, Option<&str>, Result<Written, ItemError>),
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
            if item.require_alias == Some(true) && !self.is_alias(name) {
                report(name, item.verb, item.id.as_deref(), Err(ItemError::new(404, "index_not_found_exception", format!("no such index [{name}] and [require_alias] request flag is [true] and [{name}] is not an alias"))));
                continue;
            }
            if cache.as_ref().is_none_or(|(c, _)| c.name != name) {
                let found = match default_index.filter(|d| d.name == name) {
                    Some(d) => Ok(Some(d.clone())),
                    None => self.writable_index(name, item.verb),
                };
                let found = match found {
                    Ok(found) => found,
                    Err(e) => {
                        cache = None;
                        report(name, item.verb, item.id.as_deref(), Err(e));
                        continue;
                    }
                };
                cache = found.map(|i| {
                    let s = i.settings.read().unwrap_or_else(|p| p.into_inner()).clone();
                    (i, s)
                });
            }
            let Some((index, settings)) = &cache else {
                report(
                    name,
                    item.verb,
                    item.id.as_deref(),
                    Err(self.not_written(name, item.verb)),
                );
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
                // The concrete index, as Elasticsearch answers a write through an alias.
                report(&index.name, item.verb, item.id.as_deref(), result);
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
                // A pipeline's `drop`: nothing written.
                Ok(None) => report(name, item.verb, item.id.as_deref(), Ok(dropped(&item))),
                Ok(Some(done)) => {
                    let owned = Item {
                        verb: item.verb,
                        index: Some(Cow::Borrowed(done.index.name.as_str())),
                        id: done.id.as_deref().map(Cow::Borrowed),
                        body: Some(&done.body),
                        pipeline: None,
                        pre: item.pre,
                        require_alias: None,
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
    pub(crate) fn writable_index(
        &self,
        name: &str,
        verb: Verb,
    ) -> Result<Option<Arc<EmbeddedIndex>>, ItemError> {
        // An alias writes to its one index, or to its write index.
        let aliased = self
            .aliases
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .write_index(name)
            .map_err(|why| ItemError::new(400, "illegal_argument_exception", why))?
            .map(str::to_string);
        let name = aliased.as_deref().unwrap_or(name);
        let lookup = || {
            self.indices
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .get(name)
                .cloned()
        };
        Ok(lookup().or_else(|| self.auto_create(name, verb).then(lookup).flatten()))
    }

    pub(crate) fn is_alias(&self, name: &str) -> bool {
        self.aliases
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .targets(name)
            .is_some()
    }

    /// Whether a data stream template matches `name`.
    fn has_stream_template(&self, name: &str) -> bool {
        self.templates
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .data_stream_template(name)
            .is_some()
    }

    /// Why a write found no index to go to (after [`Self::auto_create`]).
    fn not_written(&self, name: &str, verb: Verb) -> ItemError {
        if let Err(why) = crate::names::check_index_name(name) {
            return ItemError::new(400, "invalid_index_name_exception", why);
        }
        if self.has_stream_template(name) && verb != Verb::Delete {
            return ItemError::new(400, "illegal_argument_exception", format!("only write ops with an op_type of create are allowed in data streams (index [{name}])"));
        }
        let why = self
            .auto_create_refusal(name)
            .filter(|_| verb != Verb::Delete)
            .unwrap_or_else(|| format!("no such index [{name}]"));
        ItemError::new(404, "index_not_found_exception", why)
    }

    /// Elasticsearch's `action.auto_create_index` (on by default): a write to a missing name
    /// creates it, as a data stream when a data stream template matches (`create` writes
    /// only), else as an index with the matching templates. A delete creates nothing.
    fn auto_create(&self, name: &str, verb: Verb) -> bool {
        let streams = self.has_stream_template(name);
        match verb {
            Verb::Delete => false,
            Verb::Create if streams => self.create_data_stream(name).is_ok(),
            // Only `create` writes into a data stream.
            _ if streams => false,
            _ => {
                crate::names::check_index_name(name).is_ok()
                    && self.auto_create_refusal(name).is_none()
                    && !matches!(
                        self.create_index(name, &serde_json::json!({})),
                        Err(super::CreateError::Mapping(_))
                    )
            }
        }
    }

    /// Why the cluster setting `action.auto_create_index` (transient over persistent) keeps
    /// `name` from being created by a write, in Elasticsearch's words: `false`, or a list of
    /// `+pattern`/`-pattern`s of which the first that matches decides (none matching refuses).
    fn auto_create_refusal(&self, name: &str) -> Option<String> {
        let settings = self
            .cluster_settings
            .read()
            .unwrap_or_else(|p| p.into_inner());
        let value = ["transient", "persistent"].iter().find_map(|scope| {
            let s = settings.get(scope)?;
            s.get("action.auto_create_index")
                .or_else(|| s.get("action")?.get("auto_create_index"))
                .cloned()
        })?;
        let text = match value {
            serde_json::Value::Bool(b) => b.to_string(),
            serde_json::Value::String(s) => s,
            _ => return None,
        };
        match text.as_str() {
            "true" => None,
            "false" => Some(format!(
                "no such index [{name}] and [action.auto_create_index] is [false]"
            )),
            patterns => {
                for p in patterns.split(',').map(str::trim) {
                    let (allow, pattern) = match p.strip_prefix('-') {
                        Some(rest) => (false, rest),
                        None => (true, p.strip_prefix('+').unwrap_or(p)),
                    };
                    if crate::names::simple_match(pattern, name) {
                        return (!allow).then(|| format!("no such index [{name}] and [action.auto_create_index] contains [{p}] which forbids automatic creation of the index"));
                    }
                }
                Some(format!("no such index [{name}] and [action.auto_create_index] ([{patterns}]) doesn't match"))
            }
        }
    }

    fn write(
        &self,
        index: &EmbeddedIndex,
        settings: &IndexSettings,
        item: &Item,
    ) -> Result<Written, ItemError> {
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
            ingest: Default::default(),
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
                index = self.writable_index(&doc.index, item.verb)?.ok_or_else(|| {
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

/// What a document an ingest pipeline dropped reports: a noop, no version.
fn dropped(item: &Item<'_>) -> Written {
    Written {
        id: item.id.as_deref().unwrap_or("").to_string(),
        done: Done::Noop,
        meta: DocMeta {
            version: 0,
            seq_no: 0,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bulk::items;

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
                        result.map(|w| w.id).unwrap_or_else(|e| e.kind.to_string())
                    ))
                },
            )
            .unwrap();
        out
    }

    #[test]
    fn a_body_runs_item_by_item() {
        let body = "{\"index\":{\"_index\":\"i\",\"_id\":\"1\"}}\n{\"a\":1}\n{\"create\":{\"_index\":\"i\",\"_id\":\"1\"}}\n{\"a\":2}\n{\"update\":{\"_index\":\"i\",\"_id\":\"1\"}}\n{\"doc\":{\"a\":3}}\n{\"index\":{\"_index\":\"nope\"}}\n{\"a\":4}\n{\"delete\":{\"_index\":\"gone\",\"_id\":\"1\"}}\n{\"index\":{\"_index\":\"Bad\"}}\n{\"a\":5}\n";
        let state = State::default();
        state
            .create_index("i", &serde_json::json!({}))
            .map_err(|_| ())
            .unwrap();
        let got = run(&state, items(body).collect());
        assert_eq!(
            got[..3],
            [
                "i index 1 1",
                "i create 1 version_conflict_engine_exception",
                "i update 1 1",
            ]
        );
        // A write creates its missing index (with a generated id of 20 characters); a delete
        // does not, and a name Elasticsearch would refuse is refused.
        let auto = got[3].strip_prefix("nope index - ").unwrap();
        assert_eq!(auto.len(), 20, "{auto}");
        assert_eq!(got[4], "gone delete 1 index_not_found_exception");
        assert_eq!(got[5], "Bad index - invalid_index_name_exception");
    }
}
