//! Bulk request bodies for the embedded engine: action lines (index, create, update, delete)
//! each followed by its document, as Elasticsearch reads them. The embedded backend's bulk
//! operation and `runner serve`'s `_bulk` both run them here, so they behave alike.

use serde::Deserialize;
use std::borrow::Cow;

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
    /// What the write requires of the document as it is (optimistic concurrency).
    pub pre: Preconditions,
    /// `require_alias`: the target must be an alias, never a new index (None: as the
    /// request says).
    pub require_alias: Option<bool>,
}

impl<'a> Item<'a> {
    pub fn new(verb: Verb, id: Option<&'a str>, body: Option<&'a str>) -> Item<'a> {
        Item {
            verb,
            index: None,
            id: id.map(Cow::Borrowed),
            body,
            pipeline: None,
            pre: Preconditions::default(),
            require_alias: None,
        }
    }
}

/// Elasticsearch's optimistic concurrency control of one write: `if_seq_no` with
/// `if_primary_term`, or an external `version`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Preconditions {
    pub if_seq_no: Option<u64>,
    pub if_primary_term: Option<u64>,
    pub version: Option<u64>,
    pub version_type: VersionType,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum VersionType {
    #[default]
    Internal,
    External,
    ExternalGte,
}

impl VersionType {
    pub fn parse(text: &str) -> Result<VersionType, String> {
        match text {
            "internal" => Ok(VersionType::Internal),
            "external" => Ok(VersionType::External),
            "external_gte" => Ok(VersionType::ExternalGte),
            other => Err(format!(
                "No version type match [{other}] (internal, external, external_gte)"
            )),
        }
    }
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

/// The metadata of an action; keys other than these (routing, retry_on_conflict, ...) are
/// accepted and have no effect on one shard.
#[derive(Deserialize, Default)]
struct Meta<'a> {
    #[serde(borrow, default, rename = "_index")]
    index: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "_id")]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pipeline: Option<Cow<'a, str>>,
    #[serde(default)]
    if_seq_no: Option<u64>,
    #[serde(default)]
    if_primary_term: Option<u64>,
    #[serde(default)]
    version: Option<u64>,
    #[serde(borrow, default)]
    version_type: Option<Cow<'a, str>>,
    /// `index` with `op_type: create` is a `create`.
    #[serde(borrow, default)]
    op_type: Option<Cow<'a, str>>,
    #[serde(default)]
    require_alias: Option<bool>,
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
            (Verb::Index, Meta::default())
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
        let version_type = match meta.version_type.as_deref().map(VersionType::parse) {
            Some(Err(message)) => return Some(Err(Malformed { line, message })),
            Some(Ok(v)) => v,
            None => VersionType::Internal,
        };
        Some(Ok(Item {
            verb,
            index: meta.index,
            id: meta.id,
            body,
            pipeline: meta.pipeline,
            pre: Preconditions {
                if_seq_no: meta.if_seq_no,
                if_primary_term: meta.if_primary_term,
                version: meta.version,
                version_type,
            },
            require_alias: meta.require_alias,
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
        (Some((Verb::Index, meta)), None) => match meta.op_type.as_deref() {
            None | Some("index") => Ok((Verb::Index, meta)),
            Some("create") => Ok((Verb::Create, meta)),
            Some(other) => Err(format!(
                "opType must be 'create' or 'index', found: [{other}]"
            )),
        },
        (Some(one), None) => Ok(one),
        (None, _) if text.trim() == "{}" => {
            Err("expected FIELD_NAME but found [END_OBJECT]".into())
        }
        (None, _) => {
            Err("the action line names no action (index, create, update or delete)".into())
        }
        (Some(_), Some(_)) => Err("the action line names more than one action".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(err("{}\n").message.contains("found [END_OBJECT]"));
        assert!(err("{\"index\":null}\n")
            .message
            .contains("names no action"));
        assert!(err("not json\n").message.contains("not a bulk action line"));
    }
}
