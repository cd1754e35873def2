//! The `nested` query. Its inner query runs on the store of the path's objects (see
//! [`crate::mapping::nested`]), so every field it reads must match inside one object, and
//! the objects' matches are joined to their documents ([`super::join`]). Its `inner_hits`
//! are compiled beside it, for the fetch phase to show each hit's matching objects.

use super::ast::QueryAst;
use super::QueryCompiler;
use crate::mapping::nested::NestedMapping;
use serde_json::Value;
use std::sync::Arc;
use tantivy::query::Query;

/// How a document scores from its matching objects' scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScoreMode {
    Avg,
    Max,
    Min,
    Sum,
    /// Every match scores 0.
    None,
}

impl ScoreMode {
    fn parse(v: Option<&Value>) -> Result<ScoreMode, String> {
        Ok(match v.map(|v| v.as_str().unwrap_or_default()) {
            None | Some("avg") => ScoreMode::Avg,
            Some("max") => ScoreMode::Max,
            Some("min") => ScoreMode::Min,
            Some("sum") => ScoreMode::Sum,
            Some("none") => ScoreMode::None,
            Some(_) => {
                return Err(format!(
                    "`nested` `score_mode` {} is none of avg, max, min, sum, none",
                    v.cloned().unwrap_or_default()
                ))
            }
        })
    }
}

/// Elasticsearch's `index.max_inner_result_window`: an inner hits' `from + size` at most.
pub const MAX_INNER_RESULT_WINDOW: usize = 100;

/// A nested query's `inner_hits`, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct InnerHitsAst {
    /// The key it is shown under (the path by default).
    pub name: String,
    pub from: usize,
    pub size: usize,
    /// `_source: false` leaves out each object's source.
    pub source: bool,
}

impl InnerHitsAst {
    fn parse(v: &Value, path: &str) -> Result<InnerHitsAst, String> {
        let obj = v.as_object().ok_or("`inner_hits` expects an object")?;
        if let Some(k) = obj
            .keys()
            .find(|k| !["name", "from", "size", "_source"].contains(&k.as_str()))
        {
            return Err(format!(
                "`inner_hits` option `{k}` is not run by the embedded engine (it runs name, from, size and _source true or false)"
            ));
        }
        let number = |key: &str, default: u64| match obj.get(key) {
            None => Ok(default),
            Some(v) => v.as_u64().ok_or_else(|| {
                format!("`inner_hits` `{key}` must be a non-negative integer, got {v}")
            }),
        };
        let (from, size) = (number("from", 0)?, number("size", 3)?);
        if from.saturating_add(size) > MAX_INNER_RESULT_WINDOW as u64 {
            return Err(format!(
                "Inner result window is too large, the inner hit definition's [{}]'s from + size must be less than or equal to: [{MAX_INNER_RESULT_WINDOW}] but was [{}]",
                obj.get("name").and_then(Value::as_str).unwrap_or(path),
                from.saturating_add(size)
            ));
        }
        let source = match obj.get("_source") {
            None | Some(Value::Bool(true)) => true,
            Some(Value::Bool(false)) => false,
            Some(other) => {
                return Err(format!(
                "`inner_hits` `_source` {other} is not run by the embedded engine (true or false)"
            ))
            }
        };
        Ok(InnerHitsAst {
            name: obj
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or(path)
                .to_string(),
            from: from as usize,
            size: size as usize,
            source,
        })
    }
}

/// A `nested` query, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct NestedAst {
    pub path: String,
    pub query: QueryAst,
    pub score_mode: ScoreMode,
    pub ignore_unmapped: bool,
    pub boost: f32,
    pub inner_hits: Option<InnerHitsAst>,
}

impl NestedAst {
    pub fn parse(body: &Value) -> Result<NestedAst, String> {
        let obj = body.as_object().ok_or("`nested` expects an object")?;
        let path = obj
            .get("path")
            .and_then(Value::as_str)
            .ok_or("`nested` needs a `path`")?;
        let query = obj.get("query").ok_or("`nested` needs a `query`")?;
        const KEYS: [&str; 7] = [
            "path",
            "query",
            "score_mode",
            "ignore_unmapped",
            "boost",
            "_name",
            "inner_hits",
        ];
        if let Some(k) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(format!(
                "`nested` `{k}` is not supported by the embedded backend"
            ));
        }
        Ok(NestedAst {
            path: path.to_string(),
            query: QueryAst::parse(query)?,
            score_mode: ScoreMode::parse(obj.get("score_mode"))?,
            ignore_unmapped: obj.get("ignore_unmapped") == Some(&Value::Bool(true)),
            boost: obj.get("boost").and_then(Value::as_f64).unwrap_or(1.0) as f32,
            inner_hits: obj
                .get("inner_hits")
                .map(|h| InnerHitsAst::parse(h, path))
                .transpose()?,
        })
    }
}

/// A nested query's inner hits, compiled: the objects of each hit that match `query`.
#[derive(Clone)]
pub struct InnerHitsPlan {
    pub hits: InnerHitsAst,
    pub nested: Arc<NestedMapping>,
    pub query: Arc<dyn Query>,
}

impl QueryCompiler<'_> {
    /// The path's objects' mapping, or why the query cannot run (None: it matches nothing).
    fn nested_path(&self, n: &NestedAst) -> Result<Option<&Arc<NestedMapping>>, String> {
        if let Some(m) = self.mapping.nested.iter().find(|m| m.path == n.path) {
            return Ok(Some(m));
        }
        if let Some(outer) = self
            .mapping
            .nested
            .iter()
            .find(|m| n.path.starts_with(&format!("{}.", m.path)))
        {
            return Err(format!(
                "a `nested` query on `{}`, a nested field inside the nested field `{}`, is not run by the embedded engine (only top-level nested fields are)",
                n.path, outer.path
            ));
        }
        if n.ignore_unmapped || self.unmapped_matches_none {
            return Ok(None);
        }
        Err(format!(
            "[nested] failed to find nested object under path [{}]",
            n.path
        ))
    }

    /// The inner query, compiled against the objects' mapping.
    fn nested_inner(&self, nested: &NestedMapping, q: &QueryAst) -> Result<Box<dyn Query>, String> {
        let index = nested.views.index(&nested.mapping.schema);
        let inner = QueryCompiler {
            mapping: &nested.mapping,
            index: &index,
            unmapped_matches_none: self.unmapped_matches_none,
            size: self.size,
            script_errors: self.script_errors.clone(),
            flattened_objects: false,
        };
        inner.compile(q)
    }

    pub(crate) fn nested_query(&self, n: &NestedAst) -> Result<Box<dyn Query>, String> {
        let Some(nested) = self.nested_path(n)? else {
            return Ok(Box::new(tantivy::query::EmptyQuery));
        };
        if let Some(same) = self.on_flattened_copy(n, nested)? {
            return Ok(same);
        }
        let inner = self.nested_inner(nested, &n.query)?;
        let join: Box<dyn Query> = Box::new(super::join::NestedJoin::new(
            nested.clone(),
            inner,
            n.score_mode,
            self.mapping.seq_no,
        ));
        Ok(match n.boost == 1.0 {
            true => join,
            false => Box::new(tantivy::query::BoostQuery::new(join, n.boost)),
        })
    }

    /// The query on the documents' flattened copy of the objects' fields, where it gives the
    /// join's answer: a `range` or `exists` on one field matches a document exactly when one
    /// of its objects matches, and scores 1 (0 with `score_mode: none`), which is what avg,
    /// max, min and none make of its objects' scores of 1. Summed, the score would count
    /// them, so `sum` joins.
    fn on_flattened_copy(
        &self,
        n: &NestedAst,
        nested: &NestedMapping,
    ) -> Result<Option<Box<dyn Query>>, String> {
        use super::ast::Leaf;
        let QueryAst::Leaf(leaf @ (Leaf::Range | Leaf::Exists), body) = &n.query else {
            return Ok(None);
        };
        let field = match leaf {
            Leaf::Exists => body.get("field").and_then(Value::as_str),
            _ => body
                .as_object()
                .and_then(|o| o.keys().next())
                .map(String::as_str),
        };
        let inside = field.is_some_and(|f| f.starts_with(&format!("{}.", nested.path)));
        if !inside || n.score_mode == ScoreMode::Sum || nested.in_parent {
            return Ok(None);
        }
        let flattened = QueryCompiler {
            flattened_objects: true,
            ..self.clone_settings()
        };
        let q = flattened.compile(&n.query)?;
        let score = match n.score_mode {
            ScoreMode::None => 0.0,
            _ => n.boost,
        };
        Ok(Some(Box::new(tantivy::query::ConstScoreQuery::new(
            q, score,
        ))))
    }

    fn clone_settings(&self) -> QueryCompiler<'_> {
        QueryCompiler {
            mapping: self.mapping,
            index: self.index,
            unmapped_matches_none: self.unmapped_matches_none,
            size: self.size,
            script_errors: self.script_errors.clone(),
            flattened_objects: self.flattened_objects,
        }
    }

    /// The inner hits a query asks for, in the order its nested queries are written; two of
    /// one name are refused, as Elasticsearch refuses them.
    pub fn inner_hits(&self, q: &QueryAst) -> Result<Vec<InnerHitsPlan>, String> {
        let mut out = Vec::new();
        self.collect_inner_hits(q, &mut out)?;
        Ok(out)
    }

    fn collect_inner_hits(&self, q: &QueryAst, out: &mut Vec<InnerHitsPlan>) -> Result<(), String> {
        match q {
            QueryAst::Nested(n) => {
                let Some(hits) = &n.inner_hits else {
                    return Ok(());
                };
                let Some(nested) = self.nested_path(n)? else {
                    return Ok(());
                };
                if out.iter().any(|p| p.hits.name == hits.name) {
                    return Err(format!(
                        "[inner_hits] already contains an entry for key [{}]",
                        hits.name
                    ));
                }
                out.push(InnerHitsPlan {
                    hits: hits.clone(),
                    nested: nested.clone(),
                    query: Arc::from(self.nested_inner(nested, &n.query)?),
                });
            }
            QueryAst::Bool(b) => {
                for (_, c) in &b.clauses {
                    self.collect_inner_hits(c, out)?;
                }
            }
            QueryAst::ConstantScore { filter, .. } => self.collect_inner_hits(filter, out)?,
            QueryAst::FunctionScore(f) => {
                if let Some(q) = &f.query {
                    self.collect_inner_hits(q, out)?;
                }
            }
            QueryAst::ScriptScore(s) => self.collect_inner_hits(&s.query, out)?,
            QueryAst::Leaf(..) | QueryAst::Knn(_) | QueryAst::Script(..) => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn options_are_read_and_the_rest_named() {
        let n = NestedAst::parse(&json!({"path": "answers", "score_mode": "max", "query": {"match_all": {}}, "inner_hits": {"size": 5}})).unwrap();
        assert_eq!(n.score_mode, ScoreMode::Max);
        assert_eq!(n.inner_hits.as_ref().unwrap().name, "answers");
        assert_eq!(n.inner_hits.as_ref().unwrap().size, 5);
        let e = NestedAst::parse(
            &json!({"path": "a", "query": {"match_all": {}}, "inner_hits": {"sort": ["a.b"]}}),
        )
        .unwrap_err();
        assert!(e.contains("`sort`"), "{e}");
        let e = NestedAst::parse(
            &json!({"path": "a", "query": {"match_all": {}}, "inner_hits": {"size": 101}}),
        )
        .unwrap_err();
        assert!(e.contains("[100] but was [101]"), "{e}");
        let e = NestedAst::parse(
            &json!({"path": "a", "query": {"match_all": {}}, "score_mode": "median"}),
        )
        .unwrap_err();
        assert!(e.contains("score_mode"), "{e}");
    }
}

#[cfg(test)]
mod joined;
