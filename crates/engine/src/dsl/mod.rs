//! The subset of the Elasticsearch query DSL the embedded engine understands, compiled once
//! per task into a tantivy query: match_all, match, match_phrase, term, terms, range, bool,
//! constant_score.

pub mod ast;
pub(crate) mod doc_script;
pub(crate) mod functions;
pub(crate) mod geo;
mod geo_shape;
pub(crate) mod join;
pub(crate) mod knn;
pub mod nested;
pub(crate) mod percolate;
pub(crate) mod query_string;
pub(crate) mod scoring;
mod script_fn;
pub(crate) mod slice;
mod vector;

use crate::dsl::ast::{BoolAst, FunctionScoreAst, Leaf, QueryAst};
use crate::dsl::functions::FunctionScore;
use crate::dsl::functions::FunctionScoreFn;
use crate::dsl::scoring::FnQuery;
use crate::mapping::datemath;
use crate::mapping::datemath::Round;
use crate::mapping::FieldRef;
use crate::mapping::FieldType;
use crate::mapping::MappedField;
use crate::mapping::Mapping;
use serde_json::{Map, Value};
use std::ops::Bound;
use std::sync::Arc;
use tantivy::query::{
    AllQuery, BooleanQuery, BoostQuery, ConstScoreQuery, DisjunctionMaxQuery, EmptyQuery,
    ExistsQuery, Occur, PhraseQuery, Query, RangeQuery, RegexQuery, TermQuery,
};

/// `text` matched literally inside a regular expression.
fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if ".^$*+?()[]{}|\\#&~<>\"@-".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Why a query cannot run here, found with no index (before the race).
pub fn unsupported_query(q: &Value) -> Option<String> {
    QueryAst::parse(q).err()
}

use tantivy::schema::IndexRecordOption;
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Index, Term};

pub struct QueryCompiler<'a> {
    pub mapping: &'a Mapping,
    pub index: &'a Index,
    /// One index of a search over several: a query on a field it does not map matches none of
    /// its documents, as Elasticsearch answers (alone, the typo is named).
    pub unmapped_matches_none: bool,
    /// The search's `size`: a `knn` query's k when it names none.
    pub size: usize,
    /// Where the search's scripts keep a failure; None where scripts are not run (the
    /// queries of filter aggregations).
    pub script_errors: Option<doc_script::ErrorSlot>,
    /// Reads the documents' flattened copies of their nested objects' fields (a nested
    /// query run on the documents where that gives the same answer); else such a field
    /// matches nothing, as in Elasticsearch.
    pub flattened_objects: bool,
}

pub(crate) fn single_entry<'v>(
    v: &'v Value,
    what: &str,
) -> Result<(&'v String, &'v Value), String> {
    let obj = v
        .as_object()
        .ok_or_else(|| format!("`{what}` expects an object"))?;
    let mut it = obj.iter();
    match (it.next(), it.next()) {
        (Some(e), None) => Ok(e),
        _ => Err(format!("`{what}` expects exactly one field")),
    }
}

/// How [`QueryCompiler::field`] names a field only the nested objects have.
const INSIDE_NESTED: &str = "outside a `nested` query, ";

/// Whether a compile error is [`QueryCompiler::field`]'s: a field the index does not map.
fn is_unmapped(e: &str) -> bool {
    e.starts_with("field `") && e.contains("` is not in the index mapping")
}

/// What every term of `f` starts with, as a regex: nothing for a field of its own; for a
/// field dynamic mapping learned, its path inside the JSON field and the string type's tag
/// (the bytes tantivy writes before each such term's text).
fn term_prefix(f: &MappedField) -> String {
    if f.json_path.is_none() {
        return String::new();
    }
    let empty = f.text_term("");
    regex_escape(&String::from_utf8_lossy(empty.serialized_value_bytes()))
}

impl QueryCompiler<'_> {
    /// A query given as JSON, parsed and compiled (queries the engine writes itself).
    pub fn compile_json(&self, q: &Value) -> Result<Box<dyn Query>, String> {
        self.compile(&QueryAst::parse(q)?)
    }

    pub fn compile(&self, q: &QueryAst) -> Result<Box<dyn Query>, String> {
        match q {
            QueryAst::Leaf(leaf, body) => self.leaf(*leaf, body),
            QueryAst::Bool(b) => self.bool_query(b),
            QueryAst::ConstantScore { filter, boost } => Ok(Box::new(ConstScoreQuery::new(
                self.compile(filter)?,
                *boost,
            ))),
            QueryAst::Nested(n) => self.nested_query(n),
            QueryAst::FunctionScore(f) => self.function_score(f),
            QueryAst::Knn(k) => self.knn_query(k),
            QueryAst::ScriptScore(s) => self.script_score(s),
            QueryAst::Script(script, boost) => {
                let func = self.doc_script(script, doc_script::Use::Filter)?;
                let q: Box<dyn Query> = Box::new(FnQuery::new(Box::new(AllQuery), Arc::new(func)));
                Ok(match *boost {
                    b if b == 1.0 => q,
                    b => Box::new(tantivy::query::BoostQuery::new(q, b)),
                })
            }
        }
    }

    /// A script reading documents, bound to this index's mapping.
    pub(crate) fn doc_script(
        &self,
        script: &Arc<crate::painless::Script>,
        usage: doc_script::Use,
    ) -> Result<doc_script::DocScript, String> {
        let slot = self
            .script_errors
            .clone()
            .ok_or("a script inside an aggregation's filter is not run by the embedded engine")?;
        doc_script::DocScript::compile(script.clone(), self.mapping, usage, slot)
    }

    fn leaf(&self, leaf: Leaf, body: &Value) -> Result<Box<dyn Query>, String> {
        match self.leaf_query(leaf, body) {
            Err(e) if self.unmapped_matches_none && is_unmapped(&e) => Ok(Box::new(EmptyQuery)),
            // Elasticsearch's documents do not hold their nested objects' fields.
            Err(e) if e.starts_with(INSIDE_NESTED) => Ok(Box::new(EmptyQuery)),
            other => other,
        }
    }

    fn leaf_query(&self, leaf: Leaf, body: &Value) -> Result<Box<dyn Query>, String> {
        match leaf {
            Leaf::MatchAll => Ok(Box::new(AllQuery)),
            Leaf::MatchNone => Ok(Box::new(EmptyQuery)),
            Leaf::Match => self.match_query(body, false),
            Leaf::MatchPhrase => self.match_query(body, true),
            Leaf::Term => {
                let (field, v) = single_entry(body, "term")?;
                let v = v.get("value").unwrap_or(v);
                self.term_query(&*self.field(field)?, v)
            }
            Leaf::Terms => self.terms_query(body),
            Leaf::Range => {
                let (field, bounds) = single_entry(body, "range")?;
                self.range_query(
                    &*self.field(field)?,
                    bounds
                        .as_object()
                        .ok_or("`range` expects bounds such as {\"gte\": 1}")?,
                )
            }
            Leaf::GeoDistance => self.geo_distance(body),
            Leaf::Exists => self.exists_query(body),
            Leaf::Prefix => self.prefix_query(body),
            Leaf::MultiMatch => self.multi_match(body),
            Leaf::QueryString => self.query_string(body),
            Leaf::Wildcard => self.wildcard(body),
            Leaf::GeoBoundingBox => self.geo_bounding_box(body),
            Leaf::GeoShape => self.geo_shape(body),
            Leaf::GeoPolygon => self.geo_polygon(body),
            Leaf::GeoGrid => self.geo_grid(body),
            Leaf::Ids => self.ids_query(body),
            Leaf::Percolate => self.percolate(body),
        }
    }

    /// `terms`: one field beside `boost`; every match scores `boost`, as Lucene's TermInSetQuery does under Elasticsearch's constant score.
    fn terms_query(&self, body: &Value) -> Result<Box<dyn Query>, String> {
        // One field beside the query's own options; every match scores `boost`, as
        // Lucene's TermInSetQuery does under Elasticsearch's constant score.
        let obj = body.as_object().ok_or("`terms` expects an object")?;
        let boost = obj.get("boost").and_then(Value::as_f64).unwrap_or(1.0) as f32;
        let mut fields = obj
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "boost" | "_name"));
        let (field, vs) = match (fields.next(), fields.next()) {
            (Some(one), None) => one,
            _ => return Err("`terms` expects exactly one field (beside `boost`)".into()),
        };
        let f = self.field(field)?;
        let items = vs.as_array().ok_or("`terms` expects a list of values")?;
        let subs = items
            .iter()
            .map(|v| Ok((Occur::Should, self.term_query(&f, v)?)))
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Box::new(ConstScoreQuery::new(
            Box::new(BooleanQuery::new(subs)),
            boost,
        )))
    }

    /// `ids`: the documents with these `_id`s, each scoring 1 (or `boost`).
    fn ids_query(&self, body: &Value) -> Result<Box<dyn Query>, String> {
        let values = body
            .get("values")
            .and_then(Value::as_array)
            .ok_or("`ids` needs `values`, a list of ids")?;
        let boost = body.get("boost").and_then(Value::as_f64).unwrap_or(1.0) as f32;
        let terms = values
            .iter()
            .map(|v| {
                let id = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    other => return Err(format!("`ids` values are ids, got {other}")),
                };
                Ok((
                    Occur::Should,
                    Box::new(TermQuery::new(
                        Term::from_field_text(self.mapping.id, &id),
                        IndexRecordOption::Basic,
                    )) as Box<dyn Query>,
                ))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Box::new(ConstScoreQuery::new(
            Box::new(BooleanQuery::new(terms)),
            boost,
        )))
    }

    /// `function_score` over its query (all documents without one).
    fn function_score(&self, f: &FunctionScoreAst) -> Result<Box<dyn Query>, String> {
        let inner = match &f.query {
            Some(q) => self.compile(q)?,
            None => Box::new(AllQuery),
        };
        let filter = |position: usize| match f.filters.get(position) {
            Some(Some(q)) => self.compile(q).map(Some),
            _ => Ok(None),
        };
        let script = |source: &Value| {
            let parsed = Arc::new(crate::painless::Script::from_request(source)?);
            self.doc_script(&parsed, doc_script::Use::Score { min_score: None })
        };
        let spec = FunctionScore::parse(&f.body, self.mapping, &filter, &script)?;
        Ok(Box::new(FnQuery::new(
            inner,
            Arc::new(FunctionScoreFn(Arc::new(spec))),
        )))
    }

    /// `exists`: a value in the field's column (any indexed term for a text field).
    fn exists_query(&self, body: &Value) -> Result<Box<dyn Query>, String> {
        let name = body
            .get("field")
            .and_then(Value::as_str)
            .ok_or("`exists` needs a `field`")?;
        let f = self.field(name)?;
        if f.json_path.is_some() {
            if f.kind == FieldType::Text {
                return Err(format!("`exists` on `{name}`, a text field mapped dynamically, is not run by the embedded engine (ask its `.keyword`)"));
            }
            return Ok(Box::new(ExistsQuery::new(f.name.clone(), true)));
        }
        Ok(match f.kind {
            // A text field has no column: any indexed term means a value.
            FieldType::Text => {
                Box::new(RegexQuery::from_pattern(".*", f.field).map_err(|e| e.to_string())?)
            }
            FieldType::GeoPoint => Box::new(ExistsQuery::new(format!("{}.lat", f.name), false)),
            FieldType::Range(_) => Box::new(ExistsQuery::new(format!("{}.gte", f.name), false)),
            _ => Box::new(ExistsQuery::new(f.name.clone(), false)),
        })
    }

    /// `prefix`, on keyword fields.
    fn prefix_query(&self, body: &Value) -> Result<Box<dyn Query>, String> {
        let (name, v) = single_entry(body, "prefix")?;
        let f = self.field(name)?;
        if f.kind != FieldType::Keyword {
            return Err(format!(
                "`prefix` on `{name}`: the embedded backend runs it on keyword fields"
            ));
        }
        let prefix = v
            .get("value")
            .unwrap_or(v)
            .as_str()
            .ok_or("`prefix` takes a string")?;
        let pattern = format!("{}{}.*", term_prefix(&f), regex_escape(prefix));
        Ok(Box::new(
            RegexQuery::from_pattern(&pattern, f.field).map_err(|e| e.to_string())?,
        ))
    }

    pub(crate) fn field(&self, name: &str) -> Result<FieldRef<'_>, String> {
        if let Some(path) = self
            .mapping
            .nested_only(name)
            .filter(|_| !self.flattened_objects)
        {
            // `leaf` recognises this message: such a query matches no document.
            return Err(format!(
                "{INSIDE_NESTED}`{name}` is a field of the nested `{path}`"
            ));
        }
        // `is_unmapped` recognises this message.
        self.mapping.field_or_unseen(name).ok_or_else(|| {
            let hint = crate::util::did_you_mean(
                name,
                self.mapping.fields.iter().map(|f| f.name.as_str()),
            );
            format!("field `{name}` is not in the index mapping{hint}")
        })
    }

    fn analyzer(&self, f: &MappedField) -> Result<TextAnalyzer, String> {
        self.index
            .tokenizer_for_field(f.field)
            .map_err(|e| e.to_string())
    }

    fn tokens(&self, f: &MappedField, text: &str) -> Result<Vec<Term>, String> {
        if f.kind == FieldType::Keyword {
            return Ok(vec![f.text_term(text)]);
        }
        let mut analyzer = self.analyzer(f)?;
        let mut stream = analyzer.token_stream(text);
        let mut terms = Vec::new();
        while stream.advance() {
            terms.push(f.text_term(&stream.token().text));
        }
        Ok(terms)
    }

    fn match_query(&self, body: &Value, phrase: bool) -> Result<Box<dyn Query>, String> {
        let (field, spec) = single_entry(body, if phrase { "match_phrase" } else { "match" })?;
        let f = self.field(field)?;
        let (text, operator, slop) = match spec {
            Value::Object(o) => (
                o.get("query").ok_or("needs a `query`")?.clone(),
                o.get("operator")
                    .and_then(Value::as_str)
                    .unwrap_or("or")
                    .to_ascii_lowercase(),
                o.get("slop").and_then(Value::as_u64).unwrap_or(0) as u32,
            ),
            other => (other.clone(), "or".to_string(), 0),
        };
        if !matches!(f.kind, FieldType::Text | FieldType::Keyword) {
            return self.term_query(&f, &text);
        }
        let text = match &text {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let terms = self.tokens(&f, &text)?;
        let option = if f.kind == FieldType::Text {
            IndexRecordOption::WithFreqs
        } else {
            IndexRecordOption::Basic
        };
        match terms.len() {
            0 => Ok(Box::new(EmptyQuery)),
            1 => Ok(Box::new(TermQuery::new(
                terms.into_iter().next().expect("one term"),
                option,
            ))),
            _ if phrase => {
                let positioned = terms.into_iter().enumerate().collect();
                Ok(Box::new(PhraseQuery::new_with_offset_and_slop(
                    positioned, slop,
                )))
            }
            _ => {
                let occur = if operator == "and" {
                    Occur::Must
                } else {
                    Occur::Should
                };
                let subs = terms
                    .into_iter()
                    .map(|t| (occur, Box::new(TermQuery::new(t, option)) as Box<dyn Query>))
                    .collect();
                Ok(Box::new(BooleanQuery::new(subs)))
            }
        }
    }

    fn term(&self, f: &MappedField, v: &Value) -> Result<Term, String> {
        f.value_term(v)
    }

    fn term_query(&self, f: &MappedField, v: &Value) -> Result<Box<dyn Query>, String> {
        if let FieldType::Range(_) = f.kind {
            return crate::mapping::ranges::term_query(f, v);
        }
        // An ip term may be a CIDR block: every address in it matches, as in Elasticsearch.
        if let (FieldType::Ip, Some(cidr)) = (f.kind, v.as_str().filter(|s| s.contains('/'))) {
            let (first, last) = crate::mapping::ip_block(cidr)?;
            return Ok(Box::new(RangeQuery::new(
                Bound::Included(Term::from_field_ip_addr(f.field, first)),
                Bound::Included(Term::from_field_ip_addr(f.field, last)),
            )));
        }
        // A date equals a millisecond: a range of one on its column (the inverted index keeps
        // whole seconds only).
        if f.kind == FieldType::Date && f.json_path.is_none() {
            let at = self.term(f, v)?;
            return Ok(Box::new(RangeQuery::new(
                Bound::Included(at.clone()),
                Bound::Included(at),
            )));
        }
        Ok(Box::new(TermQuery::new(
            self.term(f, v)?,
            IndexRecordOption::Basic,
        )))
    }

    fn range_query(
        &self,
        f: &MappedField,
        bounds: &Map<String, Value>,
    ) -> Result<Box<dyn Query>, String> {
        if let FieldType::Range(_) = f.kind {
            return crate::mapping::ranges::range_query(f, bounds);
        }
        let mut lower = Bound::Unbounded;
        let mut upper = Bound::Unbounded;
        let is_date = f.kind == FieldType::Date;
        // A bound's own `format` reads its dates instead of the field's.
        let formats = match bounds.get("format").and_then(Value::as_str) {
            Some(text) if is_date => Some(crate::mapping::dates::DateFormats::parse(text)?),
            _ => None,
        };
        // Dates without an offset of their own are read on the zone's clock (numbers are
        // instants); Elasticsearch ignores a time_zone on other fields.
        let zone = match is_date {
            true => crate::zone::Zone::of_param(bounds.get("time_zone"))
                .map_err(|e| format!("range: {e}"))?,
            false => crate::zone::Zone::utc(),
        };
        let now = chrono::Utc::now();
        // Date math (`now-1d/d`, `2024-01-01||+1M`) rounds up for `gt` and `lte`, as in
        // Elasticsearch; `now` is when the search is compiled (once per task in a race).
        let bound = |v: &Value, round| -> Result<Term, String> {
            match (is_date, v.as_str()) {
                (true, Some(text))
                    if formats.is_some()
                        || datemath::is_math(v)
                        || !zone.is_utc()
                        || round == Round::Up =>
                {
                    let read = formats
                        .as_ref()
                        .or(f.dates.as_ref())
                        .cloned()
                        .unwrap_or_default();
                    Ok(f.date_term(datemath::eval_in(text, &read, now, round, &zone)?))
                }
                _ => self.term(f, v),
            }
        };
        for (k, v) in bounds {
            match k.as_str() {
                "gte" => lower = Bound::Included(bound(v, Round::Down)?),
                "gt" => lower = Bound::Excluded(bound(v, Round::Up)?),
                "lte" => upper = Bound::Included(bound(v, Round::Up)?),
                "lt" => upper = Bound::Excluded(bound(v, Round::Down)?),
                "format" | "boost" | "time_zone" => {}
                other => {
                    return Err(format!(
                        "range bound `{other}` is not one of gte, gt, lte, lt"
                    ))
                }
            }
        }
        if matches!((&lower, &upper), (Bound::Unbounded, Bound::Unbounded)) {
            return Err("`range` needs at least one of gte, gt, lte, lt".into());
        }
        Ok(Box::new(RangeQuery::new(lower, upper)))
    }

    /// `wildcard`: `*` any run of characters, `?` one, over a keyword's values or a text's
    /// tokens (lower-cased, as the default analyzer writes them).
    fn wildcard(&self, body: &Value) -> Result<Box<dyn Query>, String> {
        let (name, v) = single_entry(body, "wildcard")?;
        let f = self.field(name)?;
        let pattern = v
            .get("value")
            .or_else(|| v.get("wildcard"))
            .unwrap_or(v)
            .as_str()
            .ok_or("`wildcard` takes a string")?;
        let insensitive = v.get("case_insensitive") == Some(&Value::Bool(true));
        let pattern = match f.kind {
            FieldType::Text => pattern.to_lowercase(),
            FieldType::Keyword if !insensitive => pattern.to_string(),
            FieldType::Keyword => {
                return Err(format!(
                "`wildcard` on `{name}` with case_insensitive is not run by the embedded engine"
            ))
            }
            _ => {
                return Err(format!(
                    "`wildcard` on `{name}`: the embedded engine runs it on text and keyword fields"
                ))
            }
        };
        let mut regex = term_prefix(&f);
        for c in pattern.chars() {
            match c {
                '*' => regex.push_str(".*"),
                '?' => regex.push('.'),
                c => regex.push_str(&regex_escape(&c.to_string())),
            }
        }
        Ok(Box::new(
            RegexQuery::from_pattern(&regex, f.field).map_err(|e| e.to_string())?,
        ))
    }

    /// `best_fields` (the best field's score, plus `tie_breaker` × the others'), `most_fields`
    /// (their sum) and `phrase`, over fields with optional `^boost`s.
    fn multi_match(&self, body: &Value) -> Result<Box<dyn Query>, String> {
        let obj = body.as_object().ok_or("`multi_match` expects an object")?;
        let text = obj.get("query").ok_or("`multi_match` needs a `query`")?;
        let fields = obj.get("fields").and_then(Value::as_array).ok_or(
            "`multi_match` needs `fields` (the embedded backend has no default field list)",
        )?;
        let kind = obj
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("best_fields");
        let phrase = match kind {
            "best_fields" | "most_fields" => false,
            "phrase" => true,
            other => return Err(format!("multi_match type `{other}` is not run by the embedded backend (best_fields, most_fields, phrase)")),
        };
        let mut per_field = Vec::new();
        for f in fields {
            let spec = f.as_str().ok_or("`fields` are names")?;
            let (name, boost) = match spec.split_once('^') {
                Some((n, b)) => (
                    n,
                    b.parse::<f32>()
                        .map_err(|_| format!("`{spec}`: a boost is a number"))?,
                ),
                None => (spec, 1.0),
            };
            let mut one = Map::new();
            let mut inner = Map::new();
            inner.insert("query".into(), text.clone());
            if let Some(op) = obj.get("operator") {
                inner.insert("operator".into(), op.clone());
            }
            one.insert(name.to_string(), Value::Object(inner));
            let q = self.match_query(&Value::Object(one), phrase)?;
            per_field.push(if boost == 1.0 {
                q
            } else {
                Box::new(BoostQuery::new(q, boost)) as Box<dyn Query>
            });
        }
        let tie = obj
            .get("tie_breaker")
            .and_then(Value::as_f64)
            .unwrap_or(0.0) as f32;
        Ok(if kind == "most_fields" {
            Box::new(BooleanQuery::new(
                per_field.into_iter().map(|q| (Occur::Should, q)).collect(),
            ))
        } else {
            Box::new(DisjunctionMaxQuery::with_tie_breaker(per_field, tie))
        })
    }

    fn bool_query(&self, b: &BoolAst) -> Result<Box<dyn Query>, String> {
        let mut subs: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let mut shoulds = 0usize;
        for (occur, clause) in &b.clauses {
            if *occur == Occur::Should {
                shoulds += 1;
            }
            subs.push((*occur, self.compile(clause)?));
        }
        if let Some(msm) = b.minimum_should_match {
            if msm as usize > 1 || (msm == 1 && subs.iter().any(|(o, _)| *o != Occur::Should)) {
                let (should, rest): (Vec<_>, Vec<_>) =
                    subs.into_iter().partition(|(o, _)| *o == Occur::Should);
                let should_q = BooleanQuery::with_minimum_required_clauses(
                    should,
                    (msm as usize).min(shoulds),
                );
                let mut all = rest;
                all.push((Occur::Must, Box::new(should_q)));
                return Ok(Box::new(BooleanQuery::new(all)));
            }
        }
        if subs.is_empty() {
            return Ok(Box::new(AllQuery));
        }
        if subs.iter().all(|(o, _)| *o == Occur::MustNot) {
            subs.push((Occur::Must, Box::new(AllQuery)));
        }
        Ok(Box::new(BooleanQuery::new(subs)))
    }
}
