//! `significant_terms` on a keyword field, at the top level of a request, as Elasticsearch
//! scores it: each term of the matching documents (the foreground) against the whole index
//! (the background: the term's document frequency and the index's document count, deleted
//! documents included, as Lucene's `docFreq` and `maxDoc` count them). JLH by default, or
//! `percentage`; terms below `min_doc_count` (3) or scoring 0 are left out, the best `size` (10)
//! are shown.

use crate::mapping::FieldType;
use crate::mapping::MappedField;
use crate::mapping::Mapping;
use serde_json::{json, Map, Value};

/// Joins a significant_terms' name in tantivy's request.
const MARK: char = '\u{6}';
/// Foreground terms counted per search, as tantivy's bucket limit allows.
const MAX_TERMS: u64 = 65_000;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Heuristic {
    Jlh,
    Percentage,
}

#[derive(Debug, Clone)]
pub struct Significant {
    name: String,
    column: String,
    /// The field, for its terms' background frequencies (a learned field's terms carry its
    /// JSON path).
    field: Option<MappedField>,
    size: usize,
    min_doc_count: u64,
    heuristic: Heuristic,
}

impl Significant {
    pub fn parse(
        name: &str,
        params: &Map<String, Value>,
        mapping: Option<&Mapping>,
        at: &str,
    ) -> Result<Significant, String> {
        let refuse = |m: String| format!("aggregation `{at}`: {m}");
        const KNOWN: [&str; 8] = [
            "field",
            "size",
            "min_doc_count",
            "shard_size",
            "shard_min_doc_count",
            "execution_hint",
            "jlh",
            "percentage",
        ];
        if let Some(k) = params.keys().find(|k| !KNOWN.contains(&k.as_str())) {
            return Err(refuse(format!(
                "`significant_terms` parameter `{k}` is not run by the embedded engine (it scores by jlh or percentage against the whole index)"
            )));
        }
        let field = params
            .get("field")
            .and_then(Value::as_str)
            .ok_or_else(|| refuse("`significant_terms` needs a `field`".into()))?;
        let (column, mapped) = match mapping.map(|m| m.field(field)) {
            None => (field.to_string(), None),
            Some(Some(f)) if f.kind == FieldType::Keyword => (f.name.clone(), Some(f.clone())),
            Some(_) => {
                return Err(refuse(format!(
                    "`significant_terms` runs on keyword fields here, and `{field}` is not one"
                )))
            }
        };
        let number = |k: &str, default: u64| -> Result<u64, String> {
            params.get(k).map_or(Ok(default), |v| {
                v.as_u64()
                    .ok_or_else(|| refuse(format!("`{k}` is a whole number")))
            })
        };
        Ok(Significant {
            name: name.to_string(),
            column,
            field: mapped,
            size: number("size", 10)?.min(MAX_TERMS) as usize,
            min_doc_count: number("min_doc_count", 3)?,
            heuristic: if params.contains_key("percentage") {
                Heuristic::Percentage
            } else {
                Heuristic::Jlh
            },
        })
    }

    pub fn marker(&self) -> String {
        format!("{}{MARK}", self.name)
    }

    /// tantivy's request: every foreground term with its document count.
    pub fn request(&self) -> Value {
        json!({"terms": {"field": self.column, "size": MAX_TERMS, "min_doc_count": 1}})
    }

    /// Elasticsearch's answer, from the foreground buckets tantivy counted.
    pub fn answer(
        &self,
        foreground: &Value,
        fg_size: u64,
        searcher: &tantivy::Searcher,
    ) -> tantivy::Result<Value> {
        let bg_size: u64 = searcher
            .segment_readers()
            .iter()
            .map(|r| r.max_doc() as u64)
            .sum();
        // A plan checked with no index has no field, and never runs.
        let field = self.field.as_ref();
        let mut scored = Vec::new();
        for b in foreground["buckets"].as_array().into_iter().flatten() {
            let (Some(key), Some(fg)) = (b["key"].as_str(), b["doc_count"].as_u64()) else {
                continue;
            };
            if fg < self.min_doc_count {
                continue;
            }
            let bg = match field {
                Some(f) => searcher.doc_freq(&f.text_term(key))?,
                None => 0,
            };
            let score = self.score(fg, fg_size, bg, bg_size);
            if score > 0.0 {
                scored.push((score, key.to_string(), fg, bg));
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.truncate(self.size);
        let buckets: Vec<Value> = scored
            .into_iter()
            .map(|(score, key, fg, bg)| {
                json!({"key": key, "doc_count": fg, "score": score, "bg_count": bg})
            })
            .collect();
        Ok(json!({"doc_count": fg_size, "bg_count": bg_size, "buckets": buckets}))
    }

    fn score(&self, fg: u64, fg_size: u64, bg: u64, bg_size: u64) -> f64 {
        if fg_size == 0 || bg_size == 0 || bg == 0 {
            return 0.0;
        }
        match self.heuristic {
            Heuristic::Percentage => fg as f64 / bg as f64,
            Heuristic::Jlh => {
                let fg_pct = fg as f64 / fg_size as f64;
                let bg_pct = bg as f64 / bg_size as f64;
                let abs = fg_pct - bg_pct;
                if abs <= 0.0 {
                    0.0
                } else {
                    abs * (fg_pct / bg_pct)
                }
            }
        }
    }
}
