//! `highlight`: the query's terms marked in fragments of text and keyword values, cut as
//! Elasticsearch's unified highlighter cuts them (the sentence around a match, bounded to
//! about `fragment_size` characters), the best `number_of_fragments` in the order of the text.

use crate::mapping::FieldType;
use crate::mapping::MappedField;
use crate::mapping::Mapping;
use crate::search::fetch::collect;
use crate::search::fetch::matching;
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use tantivy::query::Query;
use tantivy::tokenizer::TextAnalyzer;
use tantivy::Term;

/// Highlighting is bounded: fragments per field, and characters a fragment.
const MAX_FRAGMENTS: usize = 100;
const MAX_FRAGMENT_SIZE: usize = 10_000;

/// A candidate fragment: its matches, the value it is cut from, and where.
struct Fragment {
    value: usize,
    start: usize,
    end: usize,
    marks: Vec<(usize, usize)>,
}

#[derive(Clone)]
pub(crate) struct Highlight {
    pre: String,
    post: String,
    html: bool,
    by_score: bool,
    fields: Vec<HighlightField>,
}

#[derive(Clone)]
struct HighlightField {
    name: String,
    field: MappedField,
    analyzer: Option<TextAnalyzer>,
    /// The query's terms on this field, as the analyzer writes them.
    terms: HashSet<String>,
    fragment_size: usize,
    /// 0: the whole value, highlighted.
    fragments: usize,
    no_match_size: usize,
}

fn number(v: Option<&Value>, default: usize, what: &str, max: usize) -> Result<usize, String> {
    match v {
        None => Ok(default),
        Some(v) => v
            .as_u64()
            .map(|n| n as usize)
            .filter(|n| *n <= max)
            .ok_or_else(|| format!("highlight `{what}` is a whole number up to {max}")),
    }
}

fn tag(v: Option<&Value>, default: &str) -> Result<String, String> {
    match v {
        None => Ok(default.to_string()),
        Some(Value::Array(a)) if a.len() == 1 => a[0]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| "highlight tags are strings".to_string()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!(
            "highlight tags {other}: the embedded engine takes one pre and one post tag"
        )),
    }
}

/// The highlight options the engine runs.
const KNOWN: [&str; 11] = [
    "fields",
    "pre_tags",
    "post_tags",
    "fragment_size",
    "number_of_fragments",
    "order",
    "type",
    "encoder",
    "require_field_match",
    "no_match_size",
    "tags_schema",
];

impl Highlight {
    pub(crate) fn compile(
        h: &Value,
        mapping: &Mapping,
        index: &tantivy::Index,
        query: &dyn Query,
    ) -> Result<Highlight, String> {
        let obj = h.as_object().ok_or("`highlight` is an object")?;
        if let Some(k) = obj.keys().find(|k| !KNOWN.contains(&k.as_str())) {
            return Err(format!(
                "highlight option `{k}` is not run by the embedded engine"
            ));
        }
        if obj.get("require_field_match") == Some(&Value::Bool(false)) {
            return Err(
                "highlight `require_field_match: false` is not run by the embedded engine".into(),
            );
        }
        let styled = obj.get("tags_schema").and_then(Value::as_str) == Some("styled");
        let pre = tag(
            obj.get("pre_tags"),
            if styled {
                "<em class=\"hlt1\">"
            } else {
                "<em>"
            },
        )?;
        let post = tag(obj.get("post_tags"), "</em>")?;
        // The query's terms, per tantivy field and JSON path.
        let mut terms: Vec<Term> = Vec::new();
        query.query_terms(&mut |t, _| terms.push(t.clone()));
        let entries: Vec<(String, Value)> = match obj.get("fields") {
            Some(Value::Object(m)) => m.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_object)
                .flat_map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())))
                .collect(),
            _ => return Err("highlight needs `fields`".into()),
        };
        let mut fields = Vec::new();
        for (pattern, opts) in entries {
            fields.extend(Self::fields_for(
                &pattern, &opts, obj, mapping, index, &terms,
            )?);
        }
        Ok(Highlight {
            pre,
            post,
            html: obj.get("encoder").and_then(Value::as_str) == Some("html"),
            by_score: obj.get("order").and_then(Value::as_str) == Some("score"),
            fields,
        })
    }

    /// The fields a `fields` entry's pattern matches (text and keyword ones), each with its
    /// options or the request's.
    fn fields_for(
        pattern: &str,
        opts: &Value,
        obj: &Map<String, Value>,
        mapping: &Mapping,
        index: &tantivy::Index,
        terms: &[Term],
    ) -> Result<Vec<HighlightField>, String> {
        let mut fields = Vec::new();
        let opt = |k: &str| opts.get(k).or_else(|| obj.get(k));
        if let Some(k) = opts
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
            .find(|k| !KNOWN.contains(&k.as_str()))
        {
            return Err(format!(
                "highlight option `{k}` of `{pattern}` is not run by the embedded engine"
            ));
        }
        for (name, f) in matching(mapping, &pattern) {
            if !matches!(f.kind, FieldType::Text | FieldType::Keyword) {
                continue;
            }
            let analyzer = match f.kind {
                FieldType::Text => Some(
                    index
                        .tokenizer_for_field(f.field)
                        .map_err(|e| e.to_string())?,
                ),
                _ => None,
            };
            let mine: HashSet<String> = terms.iter().filter_map(|t| term_text(t, &f)).collect();
            fields.push(HighlightField {
                name,
                analyzer,
                terms: mine,
                fragment_size: number(
                    opt("fragment_size"),
                    100,
                    "fragment_size",
                    MAX_FRAGMENT_SIZE,
                )?
                .max(1),
                fragments: number(
                    opt("number_of_fragments"),
                    5,
                    "number_of_fragments",
                    MAX_FRAGMENTS,
                )?,
                no_match_size: number(opt("no_match_size"), 0, "no_match_size", MAX_FRAGMENT_SIZE)?,
                field: f,
            });
        }
        Ok(fields)
    }

    /// The hit's `highlight`: per field with a match, its fragments.
    pub(crate) fn render(&self, obj: &Map<String, Value>) -> Option<Value> {
        let mut marked = Map::new();
        let mut values = Vec::new();
        for hf in &self.fields {
            values.clear();
            collect(obj, &hf.field, &mut values);
            let texts: Vec<String> = values
                .iter()
                .filter_map(|v| match v {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(_) | Value::Bool(_) => Some(v.to_string()),
                    _ => None,
                })
                .collect();
            let fragments = self.fragments(hf, &texts);
            if !fragments.is_empty() {
                marked.insert(hf.name.clone(), json!(fragments));
            }
        }
        (!marked.is_empty()).then_some(Value::Object(marked))
    }

    /// The fragments of one field's values, marked.
    fn fragments(&self, hf: &HighlightField, texts: &[String]) -> Vec<String> {
        let mut candidates: Vec<Fragment> = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            let marks = self.marks(hf, text);
            if marks.is_empty() {
                continue;
            }
            if hf.fragments == 0 {
                candidates.push(Fragment {
                    value: i,
                    start: 0,
                    end: text.len(),
                    marks,
                });
                continue;
            }
            let mut next = 0;
            while next < marks.len() {
                let start = sentence_start(text, marks[next].0, hf.fragment_size);
                let end = sentence_end(text, start, marks[next].1, hf.fragment_size);
                let inside: Vec<(usize, usize)> = marks[next..]
                    .iter()
                    .take_while(|m| m.1 <= end)
                    .copied()
                    .collect();
                next += inside.len().max(1);
                candidates.push(Fragment {
                    value: i,
                    start,
                    end,
                    marks: inside,
                });
            }
        }
        if candidates.is_empty() {
            return match (hf.no_match_size, texts.first()) {
                (0, _) | (_, None) => Vec::new(),
                (n, Some(t)) => vec![self.escape(&t[..word_end(t, n.min(t.len()))])],
            };
        }
        if hf.fragments > 0 {
            // The best fragments (most matches), then (unless `order: score`) in the order
            // of the text.
            candidates.sort_by(|a, b| {
                b.marks
                    .len()
                    .cmp(&a.marks.len())
                    .then((a.value, a.start).cmp(&(b.value, b.start)))
            });
            candidates.truncate(hf.fragments);
            if !self.by_score {
                candidates.sort_by_key(|c| (c.value, c.start));
            }
        }
        candidates
            .into_iter()
            .map(|c| {
                let text = &texts[c.value];
                let mut out = String::new();
                let mut at = c.start;
                for (s, e) in c
                    .marks
                    .into_iter()
                    .filter(|m| m.0 >= c.start && m.1 <= c.end)
                {
                    out.push_str(&self.escape(&text[at..s]));
                    out.push_str(&self.pre);
                    out.push_str(&self.escape(&text[s..e]));
                    out.push_str(&self.post);
                    at = e;
                }
                out.push_str(&self.escape(&text[at..c.end]));
                out
            })
            .collect()
    }

    /// Byte ranges of the value's tokens that are query terms.
    fn marks(&self, hf: &HighlightField, text: &str) -> Vec<(usize, usize)> {
        if hf.terms.is_empty() {
            return Vec::new();
        }
        let Some(analyzer) = &hf.analyzer else {
            // A keyword: the whole value, when it is a term of the query.
            return if hf.terms.contains(text) {
                vec![(0, text.len())]
            } else {
                Vec::new()
            };
        };
        let mut analyzer = analyzer.clone();
        let mut stream = analyzer.token_stream(text);
        let mut marks = Vec::new();
        while stream.advance() {
            let t = stream.token();
            if hf.terms.contains(&t.text)
                && text.is_char_boundary(t.offset_from)
                && text.is_char_boundary(t.offset_to)
            {
                marks.push((t.offset_from, t.offset_to));
            }
        }
        marks
    }

    fn escape(&self, s: &str) -> String {
        if !self.html {
            return s.to_string();
        }
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#x27;")
    }
}

/// The start of the sentence holding `at`, no further back than `limit` bytes (then at a
/// word's start).
fn sentence_start(text: &str, at: usize, limit: usize) -> usize {
    let floor = at.saturating_sub(limit);
    let head = &text[..at];
    let sentence = head
        .rmatch_indices(['.', '!', '?'])
        .map(|(i, p)| i + p.len())
        .find(|&i| text[i..].starts_with(char::is_whitespace))
        .map_or(0, |i| i + text[i..].len() - text[i..].trim_start().len());
    if sentence >= floor {
        return sentence;
    }
    // Too long a sentence: the first word starting at or after the floor.
    let mut i = floor;
    while !text.is_char_boundary(i) {
        i += 1;
    }
    match text[i..at].find(char::is_whitespace) {
        Some(w) => i + w + 1,
        None => at,
    }
}

/// The end of the sentence begun at `start` that holds the match ending at `end`, within
/// about `limit` bytes of `start` (then at a word's end).
fn sentence_end(text: &str, start: usize, end: usize, limit: usize) -> usize {
    let stop = text[end..]
        .match_indices(['.', '!', '?'])
        .map(|(i, p)| end + i + p.len())
        .find(|&i| i == text.len() || text[i..].starts_with(char::is_whitespace))
        .unwrap_or(text.len());
    if stop <= start + limit {
        stop
    } else {
        word_end(text, (start + limit).max(end).min(text.len()))
    }
}

/// Forward from `at` to the end of the word it is in.
fn word_end(text: &str, mut at: usize) -> usize {
    while at < text.len() && !text.is_char_boundary(at) {
        at += 1;
    }
    match text[at..].find(char::is_whitespace) {
        Some(i) => at + i,
        None => text.len(),
    }
}

/// A query term's text, when it is a string term of `f` (at its JSON path, for a learned
/// field).
fn term_text(t: &Term, f: &MappedField) -> Option<String> {
    if t.field() != f.field {
        return None;
    }
    let Some(path) = &f.json_path else {
        return t.value().as_str().map(str::to_string);
    };
    let prefix = Term::from_field_json_path(f.field, path, true);
    let rest = t
        .serialized_value_bytes()
        .strip_prefix(prefix.serialized_value_bytes())?;
    let (&typ, text) = rest.split_first()?;
    if typ != tantivy::schema::Type::Str.to_code() {
        return None;
    }
    std::str::from_utf8(text).ok().map(str::to_string)
}
