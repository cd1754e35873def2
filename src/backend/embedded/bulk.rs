//! Bulk request bodies for the embedded engine: action lines (index, create, update, delete)
//! each followed by its document, as Elasticsearch reads them. The embedded backend's bulk
//! operation and `runner serve`'s `_bulk` both run them here, so they behave alike.

use super::{EmbeddedIndex, State};
use crate::corpus::Pairs;
pub use crate::corpus::Verb;
use serde::Deserialize;
use std::borrow::Cow;
use std::sync::Arc;

/// One action of a bulk body.
pub struct Item<'a> {
    pub verb: Verb,
    /// The action's `_index`, else the request's.
    pub index: Option<Cow<'a, str>>,
    pub id: Option<Cow<'a, str>>,
    /// The document (index, create) or update body (update); none for delete.
    pub body: Option<&'a str>,
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
}

impl Done {
    pub fn as_str(self) -> &'static str {
        match self {
            Done::Created => "created",
            Done::Updated => "updated",
            Done::Deleted => "deleted",
            Done::NotFound => "not_found",
        }
    }

    pub fn status(self) -> u16 {
        match self {
            Done::Created => 201,
            Done::Updated | Done::Deleted => 200,
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
pub fn batch_items<'a>(
    body: &'a str,
    pairs: Pairs<'a>,
) -> impl Iterator<Item = Result<Item<'a>, Malformed>> + 'a {
    pairs.iter(body).map(|p| {
        Ok(Item {
            verb: p.verb,
            index: p.index,
            id: p.id,
            body: (p.verb != Verb::Delete).then_some(p.document),
        })
    })
}

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
    /// Runs the actions of a bulk body ([`items`] or [`batch_items`]): `report` gets each
    /// item's index name, verb, id and result, in order. Items of indices that do not exist
    /// fail alone (no dynamic mapping here).
    pub fn bulk<'a>(
        &self,
        default_index: Option<&Arc<EmbeddedIndex>>,
        actions: impl Iterator<Item = Result<Item<'a>, Malformed>>,
        mut report: impl FnMut(&str, Verb, Option<&str>, Result<(String, Done), ItemError>),
    ) -> Result<(), Malformed> {
        let mut cache: Option<Arc<EmbeddedIndex>> = None;
        let lookup = |name: &str| {
            self.indices
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .get(name)
                .cloned()
        };
        for item in actions {
            let item = item?;
            let index = match item.index.as_deref() {
                None => default_index.cloned(),
                Some(name) if cache.as_ref().is_some_and(|c| c.name == name) => cache.clone(),
                Some(name) if default_index.is_some_and(|d| d.name == name) => {
                    default_index.cloned()
                }
                Some(name) => {
                    cache = lookup(name);
                    cache.clone()
                }
            };
            let name = item
                .index
                .as_deref()
                .or(default_index.map(|d| d.name.as_str()))
                .unwrap_or("");
            let index = match index {
                // A `create` into a name a data stream template matches makes the data stream.
                None if item.verb == Verb::Create && self.create_data_stream(name).is_ok() => {
                    cache = lookup(name);
                    cache.clone()
                }
                other => other,
            };
            let result = match index {
                None => Err(ItemError::new(404, "index_not_found_exception", format!("no such index [{name}] (a write creates no index here, except a data stream its template makes: create the index first)"))),
                Some(index) if self.is_data_stream(&index.name) => {
                    data_stream_write(&item).and_then(|()| index.apply(&item))
                }
                Some(index) => index.apply(&item),
            };
            report(name, item.verb, item.id.as_deref(), result);
        }
        Ok(())
    }
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
            .bulk(None, actions.into_iter(), |index, verb, id, result| {
                out.push(format!(
                    "{index} {} {} {}",
                    verb.as_str(),
                    id.unwrap_or("-"),
                    result
                        .map(|(id, _)| id)
                        .unwrap_or_else(|e| e.kind.to_string())
                ))
            })
            .unwrap();
        out
    }

    #[test]
    fn a_batch_runs_from_its_pairs_as_from_its_body() {
        // The same bulk body, once parsed as Elasticsearch reads it and once from the pairs the
        // corpus reader recorded, against two fresh engines: the outcomes are the same.
        let body = "{\"index\":{\"_index\":\"i\",\"_id\":\"1\"}}\n{\"a\":1}\n{\"create\":{\"_index\":\"i\",\"_id\":\"1\"}}\n{\"a\":2}\n{\"update\":{\"_index\":\"i\",\"_id\":\"1\"}}\n{\"doc\":{\"a\":3}}\n{\"index\":{\"_index\":\"nope\"}}\n{\"a\":4}\n";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.json");
        std::fs::write(&path, body).unwrap();
        let mut set = crate::corpus::DocumentSet::file(path, "");
        set.with_actions = true;
        let mut reader = crate::corpus::CorpusReader::open(vec![set], None)
            .unwrap()
            .with_framing(crate::corpus::Framing::Bulk(Box::new(NoActions)));
        let (mut batch, mut pairs) = (String::new(), Vec::new());
        assert_eq!(
            reader.fill_items(&mut batch, &mut pairs, 10, None).unwrap(),
            4
        );
        assert_eq!(batch, body);
        let engines = [State::default(), State::default()];
        for e in &engines {
            e.create_index("i", &serde_json::json!({}))
                .map_err(|_| ())
                .unwrap();
        }
        let parsed = run(&engines[0], items(body).collect());
        let paired = run(
            &engines[1],
            batch_items(&batch, Pairs::Listed(&pairs)).collect(),
        );
        assert_eq!(parsed, paired);
        assert_eq!(
            parsed,
            vec![
                "i index 1 1",
                "i create 1 version_conflict_engine_exception",
                "i update 1 1",
                "nope index - index_not_found_exception"
            ]
        );
    }

    /// Framing for files that bring their own action lines.
    struct NoActions;

    impl crate::corpus::ActionLines for NoActions {
        fn write_action(&mut self, _buf: &mut String) -> crate::corpus::Action {
            unreachable!("the file has its own action lines")
        }
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
