//! What a corpus reader writes around each document: nothing (bare documents), or the
//! action line a bulk request body needs before it.

use std::borrow::Cow;
use std::ops::Range;

/// What a document of a bulk body asks for: the engine's bulk verbs.
pub use engine::bulk::Verb;

/// An action line that [`ActionLines`] wrote: its verb, and where its `_id` (a JSON string,
/// quotes included) lies in the body. A generated `update` wraps its document as
/// `{"doc":<document>}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    pub verb: Verb,
    pub id: Option<Range<usize>>,
}

/// Writes the action line before each document of a bulk body: Elasticsearch's
/// `{"index":{}}`, or one with an id (Rally's id conflicts).
pub trait ActionLines: Send {
    fn write_action(&mut self, buf: &mut String) -> Action;

    /// The line every document gets, when it is always the same (an `index` without id):
    /// then documents are read straight into the body after it, with no copy.
    fn constant(&self) -> Option<&'static str> {
        None
    }
}

/// One (action, document) pair of a bulk batch, as ranges into its NDJSON body, so that a
/// backend that does not speak Elasticsearch's bulk format needs no parser for it. `index` and
/// `id` are JSON strings (quotes included); `document` is the line after the action (for an
/// update, the update body `{"doc":...}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchItem {
    pub verb: Verb,
    pub index: Option<Range<usize>>,
    pub id: Option<Range<usize>>,
    pub document: Range<usize>,
}

impl BatchItem {
    /// A JSON string of the body as text: borrowed unless it has escapes.
    pub fn text<'a>(body: &'a str, range: &Option<Range<usize>>) -> Option<Cow<'a, str>> {
        let token = body.get(range.clone()?)?;
        let inner = token.get(1..token.len().checked_sub(1)?)?;
        if inner.contains('\\') {
            serde_json::from_str::<String>(token).ok().map(Cow::Owned)
        } else {
            Some(Cow::Borrowed(inner))
        }
    }
}

/// The (action, document) pairs of a bulk batch.
#[derive(Debug, Clone, Copy)]
pub enum Pairs<'a> {
    /// Every document after the same action line without id (`index` or `create`): the
    /// body's lines, two by two.
    Each(Verb),
    /// One entry a document, as ranges of the body.
    Listed(&'a [BatchItem]),
}

/// One action and its document.
#[derive(Debug, PartialEq, Eq)]
pub struct Pair<'a> {
    pub verb: Verb,
    pub index: Option<Cow<'a, str>>,
    pub id: Option<Cow<'a, str>>,
    /// The document line (for an update, its update body), without the line break.
    pub document: &'a str,
}

impl<'a> Pairs<'a> {
    pub fn iter(self, body: &'a str) -> impl Iterator<Item = Pair<'a>> + 'a {
        let (listed, lines) = match self {
            Pairs::Listed(items) => (Some(items.iter()), None),
            Pairs::Each(verb) => (
                None,
                Some((verb, body.split_terminator('\n').skip(1).step_by(2))),
            ),
        };
        let listed = listed.into_iter().flatten().map(move |p| Pair {
            verb: p.verb,
            index: BatchItem::text(body, &p.index),
            id: BatchItem::text(body, &p.id),
            document: body.get(p.document.clone()).unwrap_or(""),
        });
        let lines = lines
            .into_iter()
            .flat_map(|(verb, docs)| docs.map(move |document| (verb, document)))
            .map(|(verb, document)| Pair {
                verb,
                index: None,
                id: None,
                document,
            });
        listed.chain(lines)
    }
}

/// The verb and the `_index` and `_id` strings (as ranges of `line`) of an action line from a
/// corpus file, or None when it is not one action object.
pub fn parse_action_line(line: &str) -> Option<(Verb, Option<Range<usize>>, Option<Range<usize>>)> {
    #[derive(serde::Deserialize)]
    struct Meta<'a> {
        #[serde(borrow, default, rename = "_index")]
        index: Option<&'a serde_json::value::RawValue>,
        #[serde(borrow, default, rename = "_id")]
        id: Option<&'a serde_json::value::RawValue>,
    }
    let map: std::collections::BTreeMap<&str, Meta<'_>> = serde_json::from_str(line).ok()?;
    let mut entries = map.into_iter();
    let (verb, meta) = match (entries.next(), entries.next()) {
        (Some(one), None) => one,
        _ => return None,
    };
    let verb = match verb {
        "index" => Verb::Index,
        "create" => Verb::Create,
        "update" => Verb::Update,
        "delete" => Verb::Delete,
        _ => return None,
    };
    // `_index` and `_id` are strings; their place in `line` comes from the borrowed slice.
    let range = |raw: Option<&serde_json::value::RawValue>| -> Option<Option<Range<usize>>> {
        let Some(token) = raw.map(|r| r.get()) else {
            return Some(None);
        };
        token.starts_with('"').then(|| {
            let start = token.as_ptr() as usize - line.as_ptr() as usize;
            Some(start..start + token.len())
        })
    };
    Some((verb, range(meta.index)?, range(meta.id)?))
}

/// What a reader hands out: bare documents, or a bulk body with an action line before each.
pub enum Framing {
    /// One document a line (counting, checking).
    Documents,
    /// Action line, document line, ...; files with their own action lines keep them.
    Bulk(Box<dyn ActionLines>),
}

/// A bulk request body given whole (a track's Python draws it): each action line and the
/// document after it (none after a `delete`) as [`BatchItem`]s, and the number of actions.
/// Lines are `\n`-separated; blank lines are passed over, as Elasticsearch passes them.
pub fn frame_bulk_body(body: &str) -> Result<(Vec<BatchItem>, u64), String> {
    let mut items = Vec::new();
    let mut lines = body
        .split_terminator('\n')
        .scan(0usize, |at, line| {
            let start = *at;
            *at += line.len() + 1;
            Some((start, line))
        })
        .filter(|(_, l)| !l.trim().is_empty())
        .enumerate();
    while let Some((n, (start, line))) = lines.next() {
        let (verb, index, id) =
            parse_action_line(line.trim_end_matches('\r')).ok_or_else(|| {
                format!(
                "line {} of the bulk body is no action line (index, create, update or delete): {}",
                n + 1,
                line.chars().take(120).collect::<String>()
            )
            })?;
        let shift = |r: Option<Range<usize>>| r.map(|r| start + r.start..start + r.end);
        let document = if verb == Verb::Delete {
            start + line.len()..start + line.len()
        } else {
            let (_, (doc_start, doc)) = lines.next().ok_or_else(|| {
                format!(
                    "the bulk body ends after the action on line {} with no document",
                    n + 1
                )
            })?;
            doc_start..doc_start + doc.trim_end_matches('\r').len()
        };
        items.push(BatchItem {
            verb,
            index: shift(index),
            id: shift(id),
            document,
        });
    }
    let count = items.len() as u64;
    Ok((items, count))
}

#[cfg(test)]
mod body_tests {
    use super::*;

    #[test]
    fn a_whole_body_is_framed_pair_by_pair_and_deletes_take_no_document() {
        let body = "{\"index\":{\"_index\":\"a\",\"_id\":\"1\"}}\n{\"n\":1}\n\n{\"delete\":{\"_id\":\"2\"}}\n{\"create\":{}}\n{\"n\":3}\n";
        let (items, count) = frame_bulk_body(body).unwrap();
        assert_eq!(count, 3);
        let pairs: Vec<Pair> = Pairs::Listed(&items).iter(body).collect();
        assert_eq!(pairs[0].index.as_deref(), Some("a"));
        assert_eq!(pairs[0].id.as_deref(), Some("1"));
        assert_eq!(pairs[0].document, "{\"n\":1}");
        assert_eq!((pairs[1].verb, pairs[1].document), (Verb::Delete, ""));
        assert_eq!(
            (pairs[2].verb, pairs[2].document),
            (Verb::Create, "{\"n\":3}")
        );
        let e = frame_bulk_body("{\"n\":1}\n").unwrap_err();
        assert!(e.contains("line 1") && e.contains("no action line"), "{e}");
        let e = frame_bulk_body("{\"index\":{}}\n").unwrap_err();
        assert!(e.contains("no document"), "{e}");
    }
}
