//! `percolator` fields: a document's query, kept whole (its JSON, in a bytes column) with the
//! terms a percolated document must hold for the query to match it, as Elasticsearch's
//! `QueryAnalyzer` extracts them. A `percolate` search then tests only the queries whose terms
//! the document has (or whose terms could not be extracted), each exactly (`dsl::percolate`).

use super::{lookup, FieldType, MappedField, Mapping};
use serde_json::Value;
use tantivy::TantivyDocument;

/// Separates a field's name from its term in an extracted term.
const SEPARATOR: char = '\u{1f}';
/// The term of a query whose terms could not be extracted: every percolation tests it.
pub const ANY: &str = "\u{1f}any";

/// An extracted term: the field's name and the term's text.
pub fn term_key(field: &str, term: &str) -> String {
    format!("{field}{SEPARATOR}{term}")
}

/// The analyzers of the engine's text fields (tantivy's own, as every index registers them).
fn analyzers() -> &'static tantivy::tokenizer::TokenizerManager {
    static MANAGER: std::sync::OnceLock<tantivy::tokenizer::TokenizerManager> =
        std::sync::OnceLock::new();
    MANAGER.get_or_init(tantivy::tokenizer::TokenizerManager::default)
}

impl Mapping {
    /// A text field's terms of `text`, as its analyzer makes them; a keyword's, the value.
    pub(crate) fn analyzed(&self, f: &MappedField, text: &str) -> Vec<String> {
        if f.kind == FieldType::Keyword {
            return vec![text.to_string()];
        }
        let entry = self.schema.get_field_entry(f.field);
        let name = match entry.field_type() {
            tantivy::schema::FieldType::Str(o) => {
                o.get_indexing_options().map(|i| i.tokenizer().to_string())
            }
            _ => None,
        };
        let Some(mut analyzer) = name.and_then(|n| analyzers().get(&n)) else {
            return Vec::new();
        };
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        while stream.advance() {
            out.push(stream.token().text.clone());
        }
        out
    }

    /// Indexes a percolator value: the query and its extracted terms.
    pub(super) fn add_percolator_query(
        &self,
        doc: &mut TantivyDocument,
        f: &MappedField,
        query: &Value,
    ) -> Result<(), String> {
        if query.is_null() {
            return Ok(());
        }
        // The query's types are checked when a `percolate` runs it (a query that cannot run
        // fails that search); its fields here, as Elasticsearch checks them when it is indexed.
        self.check_fields(query)?;
        doc.add_bytes(f.field, query.to_string().as_bytes());
        let extracted = f
            .second
            .expect("a percolator field has its extracted terms");
        match self.extract(query) {
            Some(terms) => terms.iter().for_each(|t| doc.add_text(extracted, t)),
            None => doc.add_text(extracted, ANY),
        }
        Ok(())
    }

    /// Every field a stored query's leaves name is mapped, as Elasticsearch requires of a
    /// percolator query when it is indexed.
    fn check_fields(&self, query: &Value) -> Result<(), String> {
        const LEAVES: [&str; 9] = [
            "term",
            "terms",
            "match",
            "match_phrase",
            "range",
            "prefix",
            "wildcard",
            "fuzzy",
            "regexp",
        ];
        match query {
            Value::Object(o) => {
                for (k, v) in o {
                    if LEAVES.contains(&k.as_str()) {
                        if let Some(name) = v.as_object().and_then(|f| f.keys().next()) {
                            if self.field(name).is_none() {
                                return Err(format!("No field mapping can be found for the field with name [{name}]"));
                            }
                        }
                    } else if k == "exists" {
                        if let Some(name) = v.get("field").and_then(Value::as_str) {
                            if self.field(name).is_none() {
                                return Err(format!("No field mapping can be found for the field with name [{name}]"));
                            }
                        }
                    } else {
                        self.check_fields(v)?;
                    }
                }
                Ok(())
            }
            Value::Array(items) => items.iter().try_for_each(|i| self.check_fields(i)),
            _ => Ok(()),
        }
    }

    /// Terms one of which a document must hold for `query` to match it; None when the query
    /// cannot be narrowed so (a range, a wildcard, a negation...).
    fn extract(&self, query: &Value) -> Option<Vec<String>> {
        let (kind, body) = query.as_object().filter(|o| o.len() == 1)?.iter().next()?;
        match kind.as_str() {
            "term" | "terms" | "match" | "match_phrase" => self.leaf_terms(kind, body),
            "constant_score" => self.extract(body.get("filter")?),
            "dis_max" => self.union(body.get("queries")?.as_array()?),
            "bool" => self.bool_terms(body),
            _ => None,
        }
    }

    fn union(&self, queries: &[Value]) -> Option<Vec<String>> {
        let mut all = Vec::new();
        for q in queries {
            all.extend(self.extract(q)?);
        }
        (!all.is_empty()).then_some(all)
    }

    /// A conjunction needs any one of its clauses' terms (the fewest are the best filter); a
    /// disjunction, one of every clause's.
    fn bool_terms(&self, body: &Value) -> Option<Vec<String>> {
        let clauses = |k: &str| -> Vec<Value> {
            match body.get(k) {
                Some(Value::Array(a)) => a.clone(),
                Some(one) => vec![one.clone()],
                None => Vec::new(),
            }
        };
        let required: Vec<Value> = [clauses("must"), clauses("filter")].concat();
        if !required.is_empty() {
            return required
                .iter()
                .filter_map(|q| self.extract(q))
                .min_by_key(Vec::len);
        }
        let should = clauses("should");
        let at_most_one = match body.get("minimum_should_match") {
            None => true,
            Some(v) => v.as_u64().is_some_and(|n| n <= 1) || v.as_str() == Some("1"),
        };
        match at_most_one && !should.is_empty() {
            true => self.union(&should),
            false => None,
        }
    }

    fn leaf_terms(&self, kind: &str, body: &Value) -> Option<Vec<String>> {
        let (name, spec) = body.as_object().filter(|o| o.len() == 1)?.iter().next()?;
        let f = self.field(name)?;
        if !matches!(f.kind, FieldType::Text | FieldType::Keyword) || f.json_path.is_some() {
            return None;
        }
        let text = |v: &Value| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        };
        let terms: Vec<String> = match kind {
            "term" => vec![text(spec.get("value").unwrap_or(spec))?],
            "terms" => spec.as_array()?.iter().map(text).collect::<Option<_>>()?,
            _ => self.analyzed(&f, &text(spec.get("query").unwrap_or(spec))?),
        };
        let keys: Vec<String> = terms.iter().map(|t| term_key(&f.name, t)).collect();
        (!keys.is_empty()).then_some(keys)
    }

    /// The extracted terms a percolated document holds: each text or keyword field's terms
    /// of its values.
    pub(crate) fn document_terms(&self, doc: &serde_json::Map<String, Value>) -> Vec<String> {
        let mut out = Vec::new();
        let mut values = Vec::new();
        for f in &self.fields {
            if !matches!(f.kind, FieldType::Text | FieldType::Keyword) {
                continue;
            }
            values.clear();
            lookup(doc, &f.path, &mut values);
            for v in &values {
                let items: Vec<&Value> = match v {
                    Value::Array(a) => a.iter().collect(),
                    one => vec![*one],
                };
                for item in items {
                    let text = match item {
                        Value::String(s) => s.clone(),
                        Value::Number(_) | Value::Bool(_) => item.to_string(),
                        _ => continue,
                    };
                    out.extend(self.analyzed(f, &text).iter().map(|t| term_key(&f.name, t)));
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }
}
