//! The vector queries compiled against a mapping: `knn` (query and top-level section) and
//! `script_score`.

use super::QueryCompiler;
use crate::dsl::ast::ScriptScoreAst;
use crate::dsl::knn::{KnnAst, KnnQuery};
use crate::dsl::scoring::FnQuery;
use crate::mapping::FieldType;
use crate::vector::spec::VectorSpec;
use std::sync::Arc;
use tantivy::query::{BooleanQuery, Occur, Query};

/// The vectors a kNN clause compared, summed over segments (a profiled search's
/// `vector_operations_count`).
pub type KnnVisits = Arc<std::sync::atomic::AtomicU64>;

impl QueryCompiler<'_> {
    /// A vector field of the mapping, and its place among the vector fields.
    fn vector_field(&self, name: &str) -> Result<(Arc<VectorSpec>, usize), String> {
        let f = self.field(name)?;
        match (&f.vector, f.kind) {
            (Some(spec), FieldType::DenseVector) => {
                let pos = self
                    .mapping
                    .vectors
                    .position(&f.name)
                    .ok_or_else(|| format!("`{name}` has no vectors"))?;
                Ok((spec.clone(), pos))
            }
            _ => Err(format!(
                "[knn] queries are only supported on [dense_vector] fields; `{name}` is a {:?} field",
                f.kind
            )),
        }
    }

    /// The `knn` query: its k (the search's size when not given) of the nearest documents.
    pub(super) fn knn_query(&self, ast: &KnnAst) -> Result<Box<dyn Query>, String> {
        let (_, candidates) = ast.sizes(self.size)?;
        // Without `k`, every candidate is a match and the search's size takes the best.
        let k = ast.k.unwrap_or(candidates);
        self.knn(ast, k, candidates, None)
    }

    /// The top-level `knn` section: each clause's k nearest, added to the query's matches
    /// with their scores summed, as Elasticsearch combines them.
    /// With `profile`, each clause's count of compared vectors is kept in the returned
    /// counters.
    pub fn top_level_knn(
        &self,
        knn: &serde_json::Value,
        query: Option<Box<dyn Query>>,
        profile: bool,
    ) -> Result<(Box<dyn Query>, Vec<KnnVisits>), String> {
        let mut visits = Vec::new();
        let clauses: Vec<&serde_json::Value> = match knn {
            serde_json::Value::Array(items) => items.iter().collect(),
            one => vec![one],
        };
        let mut should: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for c in clauses {
            let ast = KnnAst::parse(c)?;
            let (k, candidates) = ast.sizes(self.size)?;
            let counter = profile.then(KnnVisits::default);
            should.push((
                Occur::Should,
                self.knn(&ast, k, candidates, counter.clone())?,
            ));
            visits.extend(counter);
        }
        if let Some(q) = query {
            should.push((Occur::Should, q));
        }
        let query: Box<dyn Query> = match should.len() {
            1 => should
                .pop()
                .map(|(_, q)| q)
                .unwrap_or_else(|| Box::new(tantivy::query::EmptyQuery)),
            _ => Box::new(BooleanQuery::new(should)),
        };
        Ok((query, visits))
    }

    fn knn(
        &self,
        ast: &KnnAst,
        k: usize,
        candidates: usize,
        visits: Option<KnnVisits>,
    ) -> Result<Box<dyn Query>, String> {
        let (spec, position) = self.vector_field(&ast.field)?;
        if !spec.indexed {
            return Err(format!(
                "to perform knn search on field [{}], its mapping must have [index] set to [true]",
                ast.field
            ));
        }
        let vector = spec.read_query(&ast.field, &ast.vector)?;
        let filter = match ast.filter.as_slice() {
            [] => None,
            [one] => Some(self.compile(one)?),
            many => Some(Box::new(BooleanQuery::new(
                many.iter()
                    .map(|f| Ok((Occur::Must, self.compile(f)?)))
                    .collect::<Result<Vec<_>, String>>()?,
            )) as Box<dyn Query>),
        };
        // `similarity` is in the similarity's own terms (a distance for l2_norm): as a score.
        let min_score = ast.similarity.map(|s| spec.score(s));
        Ok(Box::new(KnnQuery {
            vectors: self.mapping.vectors.clone(),
            position,
            spec,
            vector: vector.into(),
            k,
            candidates,
            filter,
            min_score,
            boost: ast.boost,
            visits,
        }))
    }

    pub(super) fn script_score(&self, s: &ScriptScoreAst) -> Result<Box<dyn Query>, String> {
        let inner = self.compile(&s.query)?;
        let script = match &s.script {
            super::ast::ScoreScript::Vector(v) => v,
            super::ast::ScoreScript::Painless(p) => {
                let usage = super::doc_script::Use::Score {
                    min_score: s.min_score,
                };
                let func = self.doc_script(p, usage)?;
                let scored: Box<dyn Query> = Box::new(FnQuery::new(inner, Arc::new(func)));
                return Ok(match s.boost {
                    b if b == 1.0 => scored,
                    b => Box::new(tantivy::query::BoostQuery::new(scored, b)),
                });
            }
        };
        let mut reads = Vec::new();
        for (param, field) in script.vectors() {
            let (spec, position) = self.vector_field(&field)?;
            let q = script_vector(&spec, &param, &script.params[&param])?;
            reads.push((param, field, position, q.into()));
        }
        let func = super::script_fn::ScriptFn {
            script: script.clone(),
            vectors: self.mapping.vectors.clone(),
            reads,
            min_score: s.min_score,
        };
        let scored: Box<dyn Query> = Box::new(FnQuery::new(inner, Arc::new(func)));
        Ok(match s.boost {
            b if b == 1.0 => scored,
            b => Box::new(tantivy::query::BoostQuery::new(scored, b)),
        })
    }
}

/// A script's query vector: the field's dimensions, finite numbers (scripts do not ask unit
/// length or a non-zero magnitude, as knn does).
fn script_vector(
    spec: &VectorSpec,
    param: &str,
    v: &serde_json::Value,
) -> Result<Vec<f32>, String> {
    let items = v
        .as_array()
        .ok_or_else(|| format!("script param [{param}] must be a vector"))?;
    if items.len() != spec.dims {
        return Err(format!(
            "script param [{param}]: the query vector has a different number of dimensions [{}] than the document vectors [{}]",
            items.len(),
            spec.dims
        ));
    }
    items
        .iter()
        .map(|x| {
            x.as_f64()
                .map(|f| f as f32)
                .filter(|f| f.is_finite())
                .ok_or_else(|| format!("script param [{param}]: {x} is not a finite number"))
        })
        .collect()
}
