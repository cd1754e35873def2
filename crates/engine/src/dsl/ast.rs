//! A query's JSON parsed once into a tree, with no index: every query type named, compound
//! queries (`bool`, `constant_score`, `nested`, `function_score`) opened, and anything the
//! engine does not run refused here, naming it. The pre-race check is this parse; execution
//! compiles the same tree against an index's mapping (`QueryCompiler::compile`), where what
//! only a mapping decides (a field's type, a value that does not fit it) is checked.

use crate::dsl::single_entry;
use serde_json::{Map, Value};
use tantivy::query::Occur;

/// Leaf query types: their bodies are read against the mapping when compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leaf {
    MatchAll,
    MatchNone,
    Match,
    MatchPhrase,
    MultiMatch,
    QueryString,
    Term,
    Terms,
    Range,
    Exists,
    Prefix,
    Wildcard,
    GeoDistance,
    GeoBoundingBox,
    GeoShape,
    GeoPolygon,
    GeoGrid,
    Ids,
    Percolate,
}

/// Every leaf by its DSL name: the one list of them.
const LEAVES: [(&str, Leaf); 19] = [
    ("ids", Leaf::Ids),
    ("match_all", Leaf::MatchAll),
    ("match_none", Leaf::MatchNone),
    ("match", Leaf::Match),
    ("match_phrase", Leaf::MatchPhrase),
    ("multi_match", Leaf::MultiMatch),
    ("query_string", Leaf::QueryString),
    ("term", Leaf::Term),
    ("terms", Leaf::Terms),
    ("range", Leaf::Range),
    ("exists", Leaf::Exists),
    ("prefix", Leaf::Prefix),
    ("wildcard", Leaf::Wildcard),
    ("geo_distance", Leaf::GeoDistance),
    ("geo_bounding_box", Leaf::GeoBoundingBox),
    ("geo_shape", Leaf::GeoShape),
    ("geo_polygon", Leaf::GeoPolygon),
    ("geo_grid", Leaf::GeoGrid),
    ("percolate", Leaf::Percolate),
];

/// Compound query types, opened by the parse.
const COMPOUNDS: [&str; 7] = [
    "bool",
    "constant_score",
    "nested",
    "function_score",
    "knn",
    "script_score",
    "script",
];

/// One query, parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum QueryAst {
    Leaf(Leaf, Value),
    Bool(BoolAst),
    ConstantScore {
        filter: Box<QueryAst>,
        boost: f32,
    },
    /// The inner query runs on the path's objects, joined to their documents.
    Nested(Box<crate::dsl::nested::NestedAst>),
    FunctionScore(FunctionScoreAst),
    /// The k nearest documents to a vector (Elasticsearch's or OpenSearch's `knn` query).
    Knn(Box<crate::dsl::knn::KnnAst>),
    /// The matches of `query`, scored by a script.
    ScriptScore(ScriptScoreAst),
    /// The documents for which a script returns true, and its `boost`.
    Script(std::sync::Arc<crate::painless::Script>, f32),
}

/// A script_score's script: the vector functions' subset (read straight from the vectors),
/// else Painless reading documents.
#[derive(Debug, Clone, PartialEq)]
pub enum ScoreScript {
    Vector(std::sync::Arc<crate::vector::script::Script>),
    Painless(std::sync::Arc<crate::painless::Script>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ScriptScoreAst {
    pub query: Box<QueryAst>,
    pub script: ScoreScript,
    pub min_score: Option<f32>,
    pub boost: f32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BoolAst {
    /// In the body's order; `filter` is a `must` here (scores are not asked of filters).
    pub clauses: Vec<(Occur, QueryAst)>,
    pub minimum_should_match: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FunctionScoreAst {
    /// The body, for the functions' own parameters (read against the mapping).
    pub body: Map<String, Value>,
    pub query: Option<Box<QueryAst>>,
    /// Each function's `filter`, by the function's position (a function written at the top
    /// level is position 0).
    pub filters: Vec<Option<QueryAst>>,
}

/// The query types the engine runs, for messages.
pub fn query_types() -> String {
    LEAVES
        .iter()
        .map(|(name, _)| *name)
        .chain(COMPOUNDS)
        .collect::<Vec<_>>()
        .join(", ")
}

impl QueryAst {
    /// Parses one query; an error names what the engine does not run.
    pub fn parse(q: &Value) -> Result<QueryAst, String> {
        let (kind, body) = single_entry(q, "query")?;
        if let Some((_, leaf)) = LEAVES.iter().find(|(name, _)| name == kind) {
            return Ok(QueryAst::Leaf(*leaf, body.clone()));
        }
        match kind.as_str() {
            "bool" => parse_bool(body.as_object().ok_or("`bool` expects an object")?),
            "constant_score" => {
                let filter = body
                    .get("filter")
                    .ok_or("`constant_score` needs a `filter`")?;
                Ok(QueryAst::ConstantScore {
                    filter: Box::new(QueryAst::parse(filter)?),
                    // Every match scores `boost` (1 by default), whatever its filter scores.
                    boost: body.get("boost").and_then(Value::as_f64).unwrap_or(1.0) as f32,
                })
            }
            "nested" => Ok(QueryAst::Nested(Box::new(
                crate::dsl::nested::NestedAst::parse(body)?,
            ))),
            "function_score" => parse_function_score(body),
            "knn" => Ok(QueryAst::Knn(Box::new(crate::dsl::knn::KnnAst::parse(
                body,
            )?))),
            "script_score" => parse_script_score(body),
            "script" => {
                let obj = body.as_object().ok_or("`script` expects an object")?;
                if let Some(k) = obj
                    .keys()
                    .find(|k| !matches!(k.as_str(), "script" | "boost" | "_name"))
                {
                    return Err(format!(
                        "script query parameter [{k}] is not run by the embedded engine"
                    ));
                }
                let script = obj
                    .get("script")
                    .ok_or("a `script` query needs its `script`")?;
                Ok(QueryAst::Script(
                    std::sync::Arc::new(crate::painless::Script::from_request(script)?),
                    obj.get("boost").and_then(Value::as_f64).unwrap_or(1.0) as f32,
                ))
            }
            other => Err(format!(
                "query type `{other}` is not supported by the embedded backend (supported: {})",
                query_types()
            )),
        }
    }
}

fn parse_bool(body: &Map<String, Value>) -> Result<QueryAst, String> {
    let mut clauses = Vec::new();
    for (clause, v) in body {
        let occur = match clause.as_str() {
            "must" | "filter" => Occur::Must,
            "should" => Occur::Should,
            "must_not" => Occur::MustNot,
            "minimum_should_match" | "boost" => continue,
            other => {
                return Err(format!(
                    "bool clause `{other}` is not one of must, filter, should, must_not"
                ))
            }
        };
        match v {
            Value::Array(items) => {
                for item in items {
                    clauses.push((occur, QueryAst::parse(item)?));
                }
            }
            one => clauses.push((occur, QueryAst::parse(one)?)),
        }
    }
    Ok(QueryAst::Bool(BoolAst {
        clauses,
        minimum_should_match: body.get("minimum_should_match").and_then(Value::as_u64),
    }))
}

/// The vector functions' subset where the script is in it, else Painless reading documents
/// (a script calling vector functions outside that subset gets the subset's message).
fn score_script(script: &Value) -> Result<ScoreScript, String> {
    let vector = match crate::vector::script::Script::parse(script) {
        Ok(v) => return Ok(ScoreScript::Vector(std::sync::Arc::new(v))),
        Err(e) => e,
    };
    let painless = crate::painless::Script::from_request(script)?;
    let (_, calls) = painless.reads()?;
    let known = |c: &str| {
        crate::dsl::doc_script::FUNCTIONS.contains(&c)
            || (painless.is_expression() && crate::painless::EXPRESSION_FUNCTIONS.contains(&c))
    };
    if calls.iter().any(|c| !known(c)) {
        return Err(vector);
    }
    Ok(ScoreScript::Painless(std::sync::Arc::new(painless)))
}

fn parse_script_score(body: &Value) -> Result<QueryAst, String> {
    let obj = body.as_object().ok_or("`script_score` expects an object")?;
    for key in obj.keys() {
        if !["query", "script", "min_score", "boost", "_name"].contains(&key.as_str()) {
            return Err(format!(
                "script_score parameter [{key}] is not run by the embedded engine"
            ));
        }
    }
    let query = obj.get("query").ok_or("`script_score` needs a `query`")?;
    let script = obj.get("script").ok_or("`script_score` needs a `script`")?;
    Ok(QueryAst::ScriptScore(ScriptScoreAst {
        query: Box::new(QueryAst::parse(query)?),
        script: score_script(script)?,
        min_score: obj
            .get("min_score")
            .and_then(Value::as_f64)
            .map(|m| m as f32),
        boost: obj.get("boost").and_then(Value::as_f64).unwrap_or(1.0) as f32,
    }))
}

fn parse_function_score(body: &Value) -> Result<QueryAst, String> {
    let obj = body
        .as_object()
        .ok_or("`function_score` expects an object")?;
    let functions: Vec<&Value> = match obj.get("functions") {
        Some(Value::Array(list)) => list.iter().collect(),
        Some(_) => return Err("function_score `functions` is a list".into()),
        None => vec![body],
    };
    // Scripts are checked here, before the race; bound to the index when compiled.
    for f in &functions {
        if let Some(s) = f.get("script_score") {
            let source = s
                .get("script")
                .ok_or("function_score `script_score` needs a `script`")?;
            crate::painless::Script::from_request(source)?;
        }
    }
    let filters = functions
        .iter()
        .map(|f| f.get("filter").map(QueryAst::parse).transpose())
        .collect::<Result<_, _>>()?;
    Ok(QueryAst::FunctionScore(FunctionScoreAst {
        body: obj.clone(),
        query: obj
            .get("query")
            .map(|q| QueryAst::parse(q).map(Box::new))
            .transpose()?,
        filters,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compounds_are_opened_and_leaves_kept() {
        let q = QueryAst::parse(&json!({"bool": {
            "must": {"match": {"name": "a"}},
            "filter": [{"term": {"cc": "AT"}}, {"constant_score": {"filter": {"exists": {"field": "x"}}, "boost": 2}}],
            "minimum_should_match": 1
        }}))
        .unwrap();
        let QueryAst::Bool(b) = q else {
            panic!("a bool")
        };
        assert_eq!(b.minimum_should_match, Some(1));
        assert_eq!(b.clauses.len(), 3);
        assert!(matches!(
            &b.clauses[0],
            (Occur::Must, QueryAst::Leaf(Leaf::Match, _))
        ));
        assert!(matches!(
            &b.clauses[2].1,
            QueryAst::ConstantScore { boost, .. } if *boost == 2.0
        ));
    }

    #[test]
    fn what_is_not_run_is_named_however_deep() {
        let deep = json!({"bool": {"should": [{"nested": {"path": "p", "query": {"bool": {"must": {"more_like_this": {}}}}}}]}});
        let e = QueryAst::parse(&deep).unwrap_err();
        assert!(e.contains("`more_like_this` is not supported"), "{e}");
        assert!(e.contains("match_phrase"), "names what runs: {e}");
        let scripted = json!({"function_score": {"functions": [{"filter": {"match_all": {}}}, {"script_score": {"script": "try {}"}}]}});
        assert!(QueryAst::parse(&scripted).unwrap_err().contains("`try`"));
        let in_filter =
            json!({"function_score": {"functions": [{"filter": {"script": {}}, "weight": 2}]}});
        assert!(QueryAst::parse(&in_filter)
            .unwrap_err()
            .contains("needs its `script`"));
        let clause = json!({"bool": {"must_also": []}});
        assert!(QueryAst::parse(&clause).unwrap_err().contains("must_also"));
    }

    #[test]
    fn function_filters_keep_their_positions() {
        let q = json!({"function_score": {"query": {"match_all": {}}, "functions": [
            {"weight": 2},
            {"filter": {"term": {"cc": "AT"}}, "weight": 3}
        ]}});
        let QueryAst::FunctionScore(f) = QueryAst::parse(&q).unwrap() else {
            panic!("a function_score")
        };
        assert!(f.query.is_some());
        assert_eq!(f.filters.len(), 2);
        assert!(f.filters[0].is_none());
        assert!(matches!(f.filters[1], Some(QueryAst::Leaf(Leaf::Term, _))));
    }
}
