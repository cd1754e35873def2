//! vector-search: kNN searches over a file of query vectors, each answer checked against the
//! true neighbours (a ground-truth file, or an exact search run before the task) so that
//! recall is measured on every operation, under load.

use super::{admin, OpSpec, OperationType, ParamError, Params, TrackContext};
use crate::units::ThroughputUnit;
use engine::vector::spec::{Similarity, VectorSpec};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub const VECTOR_SEARCH: OperationType = OperationType {
    name: "vector-search",
    unit: ThroughputUnit::Operations,
    sweepable: &["num-candidates", "k"],
    parse: |p, ctx| Ok(OpSpec::VectorSearch(parse(p, ctx)?)),
};

/// The most query vectors (and ground-truth lines) a file may hold.
pub const MAX_QUERIES: usize = 1_000_000;
/// The most ids a ground-truth line may hold.
const MAX_TRUE_IDS: usize = 10_000;
/// The largest file read whole (queries, ground truth).
const MAX_FILE_BYTES: u64 = 4 << 30;

/// Which query syntax the cluster speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// A top-level `knn` section.
    Elasticsearch,
    /// A `knn` query: `{"<field>": {"vector", "k", "method_parameters": {"ef_search"}}}`.
    OpenSearch,
}

/// The query vectors, one per line of their file.
#[derive(Debug)]
pub struct Queries {
    pub path: PathBuf,
    pub vectors: Vec<Vec<f32>>,
}

/// The true neighbours of each query, nearest first.
#[derive(Debug, Default)]
pub struct Truth {
    pub ids: Vec<Vec<String>>,
}

/// The true neighbours as the recall check reads them.
#[derive(Debug)]
pub struct TrueNeighbours {
    /// Per query: the hashes of its first k true ids, sorted.
    pub hashed: Vec<Box<[u64]>>,
}

impl Truth {
    pub fn for_k(&self, k: usize) -> TrueNeighbours {
        TrueNeighbours {
            hashed: self
                .ids
                .iter()
                .map(|ids| {
                    let mut h: Vec<u64> = ids
                        .iter()
                        .take(k)
                        .map(|id| id_hash(id.as_bytes()))
                        .collect();
                    h.sort_unstable();
                    h.dedup();
                    h.into_boxed_slice()
                })
                .collect(),
        }
    }
}

/// FNV-1a of an id's bytes: answers are checked against the truth without allocating.
pub fn id_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    })
}

#[derive(Debug, Clone)]
pub enum TruthSource {
    File(Arc<Truth>),
    /// Computed before the task by exact search over the indexed vectors.
    Exact,
}

#[derive(Debug, Clone)]
pub struct VectorSearchSpec {
    pub index: String,
    pub field: String,
    pub queries: Arc<Queries>,
    pub k: usize,
    pub num_candidates: usize,
    /// Query DSL the neighbours must match.
    pub filter: Option<Value>,
    pub truth: TruthSource,
    pub flavor: Flavor,
    /// The field's similarity, where the track's mapping (or `similarity`) names it: an
    /// exact search scores by it.
    pub similarity: Option<Similarity>,
    /// Set by the driver before the task: an exact ground truth's ids.
    pub exact: Option<Arc<Truth>>,
    /// The body of an exact search rather than a kNN one (the ground truth's own pass).
    pub exact_pass: bool,
}

fn read_capped(path: &Path, what: &str) -> Result<String, String> {
    let meta = std::fs::metadata(path)
        .map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{what} {} is {} bytes; at most {MAX_FILE_BYTES} are read",
            path.display(),
            meta.len()
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {what} {}: {e}", path.display()))
}

/// Each line a JSON array of `dims` finite numbers.
pub fn read_queries(path: &Path, dims: Option<usize>) -> Result<Queries, String> {
    let text = read_capped(path, "the queries file")?;
    let mut vectors: Vec<Vec<f32>> = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        if vectors.len() >= MAX_QUERIES {
            return Err(format!(
                "{}: more than {MAX_QUERIES} query vectors",
                path.display()
            ));
        }
        let at = |m: String| format!("{}:{}: {m}", path.display(), n + 1);
        let v: Value = serde_json::from_str(line).map_err(|e| {
            at(format!(
                "not a JSON array of numbers ({e}); NaN and infinities are not numbers"
            ))
        })?;
        let items = v
            .as_array()
            .ok_or_else(|| at("expected a JSON array of numbers".into()))?;
        let mut out = Vec::with_capacity(items.len());
        for x in items {
            let f = x.as_f64().map(|f| f as f32).filter(|f| f.is_finite());
            out.push(f.ok_or_else(|| at(format!("{x} is not a finite number")))?);
        }
        let want = dims.or(vectors.first().map(Vec::len));
        if let Some(d) = want.filter(|d| *d != out.len()) {
            return Err(at(format!(
                "the vector has {} dimensions; the field has {d}",
                out.len()
            )));
        }
        if out.is_empty() {
            return Err(at("an empty vector".into()));
        }
        vectors.push(out);
    }
    if vectors.is_empty() {
        return Err(format!("{} holds no query vectors", path.display()));
    }
    Ok(Queries {
        path: path.to_path_buf(),
        vectors,
    })
}

/// Each line a JSON array of document ids (strings or integers), in query order.
pub fn read_truth(path: &Path, queries: usize, k: usize) -> Result<Truth, String> {
    let text = read_capped(path, "the ground-truth file")?;
    let mut ids = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        if ids.len() >= queries {
            break;
        }
        let at = |m: String| format!("{}:{}: {m}", path.display(), n + 1);
        let v: Value =
            serde_json::from_str(line).map_err(|e| at(format!("not a JSON array of ids ({e})")))?;
        let items = v
            .as_array()
            .ok_or_else(|| at("expected a JSON array of document ids".into()))?;
        if items.len() > MAX_TRUE_IDS {
            return Err(at(format!("{} ids; at most {MAX_TRUE_IDS}", items.len())));
        }
        let line_ids = items
            .iter()
            .map(|x| match x {
                Value::String(s) => Ok(s.clone()),
                Value::Number(n) if n.is_u64() || n.is_i64() => Ok(n.to_string()),
                other => Err(at(format!("{other} is not a document id"))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if line_ids.len() < k {
            return Err(at(format!("{} true neighbours; k is {k}", line_ids.len())));
        }
        ids.push(line_ids);
    }
    if ids.len() < queries {
        return Err(format!(
            "{} has {} lines of true neighbours for {queries} queries",
            path.display(),
            ids.len()
        ));
    }
    Ok(Truth { ids })
}

/// The field's mapping in the track's declaration of the index, if it declares it.
fn field_spec(ctx: &TrackContext, index: &str, field: &str) -> Option<Result<VectorSpec, String>> {
    let body = &ctx.indices.iter().find(|i| i.name == index)?.body;
    let mut def = body.pointer("/mappings/properties")?;
    let mut parts = field.split('.').peekable();
    while let Some(part) = parts.next() {
        def = def.get(part)?;
        if parts.peek().is_some() {
            def = def.get("properties")?;
        }
    }
    Some(VectorSpec::parse(def))
}

fn parse(p: &Params, ctx: &TrackContext) -> Result<VectorSearchSpec, ParamError> {
    let index = admin::single_index(p, ctx)?;
    let field = p.string("field")?.ok_or_else(|| {
        ParamError::new(
            "field",
            "vector-search needs the `field` holding the vectors",
        )
    })?;
    let mapped = field_spec(ctx, &index, &field)
        .transpose()
        .map_err(|e| ParamError::new("field", format!("index `{index}` field `{field}`: {e}")))?;
    let k = p.positive_int("k")?.unwrap_or(10) as usize;
    let num_candidates = p
        .positive_int("num-candidates")?
        .map_or_else(|| (k + k / 2).min(10_000), |n| n as usize);
    if k > 10_000 || num_candidates > 10_000 || num_candidates < k {
        return Err(ParamError::new("num-candidates", format!("k ({k}) and num-candidates ({num_candidates}) are at most 10,000, and num-candidates is at least k")));
    }
    let file = |key: &'static str| -> Result<Option<PathBuf>, ParamError> {
        Ok(p.string(key)?.map(|f| match ctx.dir {
            Some(dir) if Path::new(&f).is_relative() => dir.join(f),
            _ => PathBuf::from(f),
        }))
    };
    let queries_path = file("queries")?.ok_or_else(|| {
        ParamError::new(
            "queries",
            "vector-search needs `queries`: a file of query vectors, one JSON array per line",
        )
    })?;
    let queries = read_queries(&queries_path, mapped.as_ref().map(|s| s.dims))
        .map_err(|m| ParamError::new("queries", m))?;
    let truth = match p.get("ground-truth") {
        Some(Value::String(s)) if s == "exact" => TruthSource::Exact,
        Some(Value::String(_)) => {
            let path = file("ground-truth")?.unwrap_or_default();
            TruthSource::File(Arc::new(
                read_truth(&path, queries.vectors.len(), k)
                    .map_err(|m| ParamError::new("ground-truth", m))?,
            ))
        }
        None | Some(Value::Null) => return Err(ParamError::new("ground-truth", "vector-search measures recall: give `ground-truth` (a file of true neighbour ids, one JSON array per query) or `exact`")),
        Some(other) => {
            return Err(ParamError::new(
                "ground-truth",
                format!("expected a file name or `exact`, got {other}"),
            ))
        }
    };
    let flavor = match p.string("backend-flavor")?.as_deref() {
        None | Some("elasticsearch") => Flavor::Elasticsearch,
        Some("opensearch") => Flavor::OpenSearch,
        Some(other) => {
            return Err(ParamError::new(
                "backend-flavor",
                format!("`{other}` is not one of elasticsearch, opensearch"),
            ))
        }
    };
    let filter = match p.get("filter") {
        None | Some(Value::Null) => None,
        Some(f @ Value::Object(_)) => Some(f.clone()),
        Some(other) => {
            return Err(ParamError::new(
                "filter",
                format!("expected a query (a mapping), got {other}"),
            ))
        }
    };
    let similarity = match p.string("similarity")? {
        Some(s) => Some(
            VectorSpec::parse(&json!({"type": "dense_vector", "dims": 1, "similarity": s, "index_options": {"type": "hnsw"}}))
                .map_err(|e| ParamError::new("similarity", e))?
                .similarity,
        ),
        None => mapped.as_ref().map(|m| m.similarity),
    };
    if matches!(truth, TruthSource::Exact) && similarity.is_none() {
        return Err(ParamError::new("ground-truth", format!("an exact ground truth scores by the field's similarity, which the track does not declare for `{index}`.`{field}`: give `similarity`")));
    }
    Ok(VectorSearchSpec {
        index,
        field,
        queries: Arc::new(queries),
        k,
        num_candidates,
        filter,
        truth,
        flavor,
        similarity,
        exact: None,
        exact_pass: false,
    })
}

impl VectorSearchSpec {
    /// The true neighbours the answers are checked against, once known.
    pub fn truth(&self) -> Option<Arc<Truth>> {
        match &self.truth {
            TruthSource::File(t) => Some(t.clone()),
            TruthSource::Exact => self.exact.clone(),
        }
    }

    /// The same search made exact: its pass computes the ground truth.
    pub fn exact_variant(&self) -> VectorSearchSpec {
        VectorSearchSpec {
            exact_pass: true,
            ..self.clone()
        }
    }

    /// The request body of query `i`.
    pub fn body(&self, i: usize) -> Value {
        let q = &self.queries.vectors[i];
        if self.exact_pass {
            return self.exact_body(q);
        }
        match self.flavor {
            Flavor::Elasticsearch => {
                let mut knn = json!({"field": self.field, "query_vector": q, "k": self.k, "num_candidates": self.num_candidates});
                if let Some(f) = &self.filter {
                    knn["filter"] = f.clone();
                }
                json!({"knn": knn, "size": self.k, "_source": false})
            }
            Flavor::OpenSearch => {
                let mut inner = json!({"vector": q, "k": self.k, "method_parameters": {"ef_search": self.num_candidates}});
                if let Some(f) = &self.filter {
                    inner["filter"] = f.clone();
                }
                json!({"size": self.k, "_source": false, "query": {"knn": {self.field.clone(): inner}}})
            }
        }
    }

    /// A `script_score` ranking every (filtered) document by the field's similarity, with
    /// scores kept positive and in the same order.
    fn exact_body(&self, q: &[f32]) -> Value {
        let base = self
            .filter
            .clone()
            .unwrap_or_else(|| json!({"match_all": {}}));
        let script = match self.flavor {
            Flavor::OpenSearch => {
                let space = match self.similarity {
                    Some(Similarity::L2Norm) => "l2",
                    Some(Similarity::Cosine) => "cosinesimil",
                    _ => "innerproduct",
                };
                json!({"lang": "knn", "source": "knn_score", "params": {"field": self.field, "query_value": q, "space_type": space}})
            }
            Flavor::Elasticsearch => {
                let source = match self.similarity {
                    Some(Similarity::L2Norm) => "1 / (1 + l2norm(params.q, 'F'))",
                    Some(Similarity::Cosine) => "cosineSimilarity(params.q, 'F') + 1.0",
                    _ => "1 / (1 + Math.exp(-dotProduct(params.q, 'F')))",
                };
                json!({"source": source.replace('F', &self.field), "params": {"q": q}})
            }
        };
        json!({"size": self.k, "_source": false, "query": {"script_score": {"query": base, "script": script}}})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn bad_files_are_named_with_their_line() {
        let d = tempfile::tempdir().unwrap();
        let q = write(d.path(), "q.json", "[1, 2]\n[1, NaN]\n");
        assert!(read_queries(&q, None).unwrap_err().contains("q.json:2"));
        let q = write(d.path(), "q.json", "[1, 2]\n[1, 1e39]\n");
        assert!(read_queries(&q, None)
            .unwrap_err()
            .contains("not a finite number"));
        let q = write(d.path(), "q.json", "[1, 2]\n[1, 2, 3]\n");
        assert!(read_queries(&q, Some(2))
            .unwrap_err()
            .contains("3 dimensions"));
        let t = write(d.path(), "t.json", "[1, 2]\n");
        assert!(read_truth(&t, 2, 2)
            .unwrap_err()
            .contains("1 lines of true neighbours for 2 queries"));
        assert!(read_truth(&t, 1, 3).unwrap_err().contains("k is 3"));
        let t = read_truth(&write(d.path(), "t.json", "[\"a\", 7]\n"), 1, 1).unwrap();
        assert_eq!(t.ids[0], ["a", "7"]);
        assert_eq!(t.for_k(1).hashed[0].as_ref(), [id_hash(b"a")]);
    }
}
