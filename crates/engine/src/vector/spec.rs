//! A vector field's mapping: Elasticsearch's `dense_vector` and OpenSearch's `knn_vector`, read
//! and validated as each engine does, and a document's vector checked against it.

use serde_json::Value;

/// Elasticsearch's largest `dims`.
pub const MAX_DIMS: usize = 4096;

/// Elasticsearch's largest `num_candidates` (and `k`).
pub const MAX_CANDIDATES: usize = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Similarity {
    Cosine,
    DotProduct,
    L2Norm,
    MaxInnerProduct,
}

impl Similarity {
    fn parse(s: &str) -> Option<Similarity> {
        Some(match s {
            "cosine" => Similarity::Cosine,
            "dot_product" => Similarity::DotProduct,
            "l2_norm" => Similarity::L2Norm,
            "max_inner_product" => Similarity::MaxInnerProduct,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Similarity::Cosine => "cosine",
            Similarity::DotProduct => "dot_product",
            Similarity::L2Norm => "l2_norm",
            Similarity::MaxInnerProduct => "max_inner_product",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element {
    Float,
    /// Integers in [-128, 127].
    Byte,
}

/// How the field's vectors are searched: a graph (HNSW) or a scan, over the vectors as given
/// or scalar-quantized to 7 bits (Elasticsearch's `int8_*`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexOptions {
    pub graph: bool,
    pub int8: bool,
    pub m: usize,
    pub ef_construction: usize,
    /// The int8 quantiles' confidence interval (Elasticsearch: 1 - 1/(dims + 1) by default).
    pub confidence_interval: Option<f32>,
}

/// How a raw similarity becomes `_score`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scoring {
    Elasticsearch,
    /// OpenSearch's faiss and nmslib engines: cosine scores `2 - (1 - cos)`.
    OpenSearchCosinePlusOne,
}

#[derive(Debug, Clone, PartialEq)]
pub struct VectorSpec {
    pub dims: usize,
    pub element: Element,
    pub similarity: Similarity,
    /// `index: false`: kept for scripts, not searchable by `knn`.
    pub indexed: bool,
    pub options: IndexOptions,
    pub scoring: Scoring,
}

fn bad(m: impl Into<String>) -> String {
    m.into()
}

impl VectorSpec {
    /// A `dense_vector` or `knn_vector` field's definition; errors name the parameter.
    pub fn parse(def: &Value) -> Result<VectorSpec, String> {
        match def.get("type").and_then(Value::as_str) {
            Some("knn_vector") => Self::parse_opensearch(def),
            _ => Self::parse_elasticsearch(def),
        }
    }

    fn parse_elasticsearch(def: &Value) -> Result<VectorSpec, String> {
        for key in def.as_object().into_iter().flat_map(|o| o.keys()) {
            if ![
                "type",
                "dims",
                "element_type",
                "similarity",
                "index",
                "index_options",
            ]
            .contains(&key.as_str())
            {
                return Err(format!("unknown parameter [{key}] on a dense_vector field"));
            }
        }
        let dims = dims(def.get("dims"), "dims")?;
        let element = match def.get("element_type").and_then(Value::as_str) {
            None | Some("float") => Element::Float,
            Some("byte") => Element::Byte,
            Some(other) => {
                return Err(format!(
                    "element_type [{other}] is not run by the embedded engine (float, byte)"
                ))
            }
        };
        let indexed = match def.get("index") {
            None => true,
            Some(Value::Bool(b)) => *b,
            Some(other) => return Err(format!("[index] must be a boolean, got {other}")),
        };
        let similarity = match def.get("similarity") {
            None => Similarity::Cosine,
            Some(v) => v.as_str().and_then(Similarity::parse).ok_or_else(|| {
                format!("unknown similarity {v} (cosine, dot_product, l2_norm, max_inner_product)")
            })?,
        };
        if !indexed && def.get("similarity").is_some() {
            return Err(bad(
                "Field [similarity] can only be specified for a field of type [dense_vector] when it is indexed",
            ));
        }
        let options = match def.get("index_options") {
            None => IndexOptions {
                graph: true,
                int8: element == Element::Float,
                m: 16,
                ef_construction: 100,
                confidence_interval: None,
            },
            Some(o) => {
                if !indexed {
                    return Err(bad(
                        "[index_options] cannot be set on a dense_vector field that is not indexed",
                    ));
                }
                es_index_options(o, element)?
            }
        };
        Ok(VectorSpec {
            dims,
            element,
            similarity,
            indexed,
            options,
            scoring: Scoring::Elasticsearch,
        })
    }

    fn parse_opensearch(def: &Value) -> Result<VectorSpec, String> {
        let dims = dims(def.get("dimension"), "dimension")?;
        let element = match def.get("data_type").and_then(Value::as_str) {
            None | Some("float") => Element::Float,
            Some("byte") => Element::Byte,
            Some(other) => {
                return Err(format!(
                    "data_type [{other}] is not run by the embedded engine (float, byte)"
                ))
            }
        };
        if let Some(mode) = def.get("mode").or(def.get("compression_level")) {
            return Err(format!(
                "knn_vector `mode`/`compression_level` {mode} is not run by the embedded engine"
            ));
        }
        let method = def.get("method");
        let space = method
            .and_then(|m| m.get("space_type"))
            .or(def.get("space_type"))
            .and_then(Value::as_str)
            .unwrap_or("l2");
        let similarity = match space {
            "l2" => Similarity::L2Norm,
            "cosinesimil" => Similarity::Cosine,
            "innerproduct" => Similarity::MaxInnerProduct,
            other => {
                return Err(format!(
                    "knn_vector space_type [{other}] is not run by the embedded engine (l2, cosinesimil, innerproduct)"
                ))
            }
        };
        let name = method
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("hnsw");
        if name != "hnsw" {
            return Err(format!(
                "knn_vector method [{name}] is not run by the embedded engine (hnsw)"
            ));
        }
        let engine = method
            .and_then(|m| m.get("engine"))
            .and_then(Value::as_str)
            .unwrap_or("faiss");
        let params = method.and_then(|m| m.get("parameters"));
        if let Some(enc) = params.and_then(|p| p.get("encoder")) {
            return Err(format!(
                "knn_vector encoder {enc} is not run by the embedded engine"
            ));
        }
        let int = |key: &str, default: usize| -> Result<usize, String> {
            match params.and_then(|p| p.get(key)) {
                None => Ok(default),
                Some(v) => v
                    .as_u64()
                    .filter(|n| *n >= 2 && *n <= 3200)
                    .map(|n| n as usize)
                    .ok_or_else(|| format!("knn_vector method parameter [{key}] {v} is not an integer in [2, 3200]")),
            }
        };
        Ok(VectorSpec {
            dims,
            element,
            similarity,
            indexed: true,
            options: IndexOptions {
                graph: true,
                int8: false,
                m: int("m", 16)?,
                ef_construction: int("ef_construction", 100)?,
                confidence_interval: None,
            },
            scoring: if engine == "lucene" || similarity != Similarity::Cosine {
                Scoring::Elasticsearch
            } else {
                Scoring::OpenSearchCosinePlusOne
            },
        })
    }

    /// A document's value for this field: `dims` finite numbers (integers in [-128, 127] for
    /// bytes), unit length for `dot_product` on floats, not zero for `cosine`; as
    /// Elasticsearch refuses them.
    pub fn read(&self, field: &str, v: &Value) -> Result<Vec<f32>, String> {
        let items = v.as_array().ok_or_else(|| {
            format!("failed to parse field [{field}] of type [dense_vector]: expected an array of numbers, got {v}")
        })?;
        if items.len() != self.dims {
            return Err(format!(
                "The [dense_vector] field [{field}] in doc has a different number of dimensions [{}] than defined in the mapping [{}]",
                items.len(),
                self.dims
            ));
        }
        self.read_numbers(field, items)
    }

    /// A query vector for this field, under the same rules as a document's.
    pub fn read_query(&self, field: &str, v: &Value) -> Result<Vec<f32>, String> {
        let items = v
            .as_array()
            .ok_or_else(|| format!("the query vector for [{field}] must be an array of numbers"))?;
        if items.len() != self.dims {
            return Err(format!(
                "The query vector has a different number of dimensions [{}] than the document vectors [{}].",
                items.len(),
                self.dims
            ));
        }
        self.read_numbers(field, items)
    }

    fn read_numbers(&self, field: &str, items: &[Value]) -> Result<Vec<f32>, String> {
        let mut out = Vec::with_capacity(items.len());
        for x in items {
            let f = x
                .as_f64()
                .ok_or_else(|| format!("[{field}]: a vector's elements are numbers, got {x}"))?;
            if !f.is_finite() || !(f as f32).is_finite() {
                return Err(format!(
                    "[{field}]: the vector contains a non-finite value [{f}]"
                ));
            }
            if self.element == Element::Byte && (f.fract() != 0.0 || !(-128.0..=127.0).contains(&f))
            {
                return Err(format!(
                    "element_type [byte] vectors only support integers between [-128, 127] but found [{f}] in [{field}]"
                ));
            }
            out.push(f as f32);
        }
        let squared: f32 = out.iter().map(|x| x * x).sum();
        match self.similarity {
            Similarity::DotProduct
                if self.element == Element::Float && (squared - 1.0).abs() > 1e-3 =>
            {
                Err(format!(
                    "The [dot_product] similarity can only be used with unit-length vectors. Preview of invalid vector in [{field}]: magnitude {}",
                    squared.sqrt()
                ))
            }
            Similarity::Cosine if squared == 0.0 => Err(format!(
                "The [cosine] similarity does not support vectors with zero magnitude (field [{field}])"
            )),
            _ => Ok(out),
        }
    }

    /// `_score` of a raw similarity (cosine, dot product, or the L2 distance).
    pub fn score(&self, raw: f32) -> f32 {
        match (self.similarity, self.element) {
            (Similarity::L2Norm, _) => 1.0 / (1.0 + raw * raw),
            (Similarity::Cosine, _) if self.scoring == Scoring::OpenSearchCosinePlusOne => {
                1.0 + raw
            }
            (Similarity::Cosine, _) | (Similarity::DotProduct, Element::Float) => {
                ((1.0 + raw) / 2.0).max(0.0)
            }
            (Similarity::DotProduct, Element::Byte) => 0.5 + raw / (32768.0 * self.dims as f32),
            (Similarity::MaxInnerProduct, _) if raw < 0.0 => 1.0 / (1.0 - raw),
            (Similarity::MaxInnerProduct, _) => raw + 1.0,
        }
    }
}

fn dims(v: Option<&Value>, key: &str) -> Result<usize, String> {
    match v {
        None => Err(format!(
            "a vector field without [{key}] takes its dimensions from the first document in Elasticsearch; the embedded engine needs [{key}] in the mapping"
        )),
        Some(v) => v
            .as_u64()
            .map(|n| n as usize)
            .filter(|n| (1..=MAX_DIMS).contains(n))
            .ok_or_else(|| format!("[{key}] must be an integer in [1, {MAX_DIMS}], got {v}")),
    }
}

fn es_index_options(o: &Value, element: Element) -> Result<IndexOptions, String> {
    let kind = o
        .get("type")
        .and_then(Value::as_str)
        .ok_or("[index_options] requires field [type] to be configured")?;
    let (graph, int8) = match kind {
        "hnsw" => (true, false),
        "int8_hnsw" => (true, true),
        "flat" => (false, false),
        "int8_flat" => (false, true),
        other => {
            return Err(format!(
                "index_options type [{other}] is not run by the embedded engine (hnsw, int8_hnsw, flat, int8_flat)"
            ))
        }
    };
    if int8 && element == Element::Byte {
        return Err(format!(
            "[element_type] cannot be [byte] when using index type [{kind}]"
        ));
    }
    for (key, v) in o.as_object().into_iter().flatten() {
        match key.as_str() {
            "type" | "m" | "ef_construction" if graph || key == "type" => {}
            "confidence_interval" if int8 => {}
            "on_disk_rescore" if v == &Value::Bool(false) => {}
            other => {
                return Err(format!(
                "index_options [{other}] {v} is not run by the embedded engine for type [{kind}]"
            ))
            }
        }
    }
    let int = |key: &str, default: usize, max: usize| -> Result<usize, String> {
        match o.get(key) {
            None => Ok(default),
            Some(v) => v
                .as_u64()
                .filter(|n| *n >= 2 && *n as usize <= max)
                .map(|n| n as usize)
                .ok_or_else(|| {
                    format!("[index_options.{key}] must be an integer in [2, {max}], got {v}")
                }),
        }
    };
    let confidence_interval = match o.get("confidence_interval") {
        None => None,
        Some(v) => Some(
            v.as_f64()
                .filter(|c| *c == 0.0 || (0.9..=1.0).contains(c))
                .map(|c| c as f32)
                .ok_or_else(|| {
                    format!("[confidence_interval] must be 0 or in [0.90, 1.0], got {v}")
                })?,
        ),
    };
    Ok(IndexOptions {
        graph,
        int8,
        m: int("m", 16, 512)?,
        ef_construction: int("ef_construction", 100, 3200)?,
        confidence_interval,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_dense_vector_as_elasticsearch_does() {
        let s = VectorSpec::parse(&json!({"type": "dense_vector", "dims": 3})).unwrap();
        assert_eq!(s.similarity, Similarity::Cosine);
        assert!(
            s.options.graph && s.options.int8,
            "8.14+: int8_hnsw by default"
        );
        let s = VectorSpec::parse(&json!({"type": "dense_vector", "dims": 2, "similarity": "dot_product", "index_options": {"type": "hnsw", "m": 32, "ef_construction": 200}})).unwrap();
        assert_eq!(
            (s.options.m, s.options.ef_construction, s.options.int8),
            (32, 200, false)
        );
        for bad in [
            json!({"type": "dense_vector"}),
            json!({"type": "dense_vector", "dims": 5000}),
            json!({"type": "dense_vector", "dims": 3, "similarity": "manhattan"}),
            json!({"type": "dense_vector", "dims": 3, "index_options": {"type": "bbq_hnsw"}}),
            json!({"type": "dense_vector", "dims": 3, "element_type": "byte", "index_options": {"type": "int8_hnsw"}}),
            json!({"type": "dense_vector", "dims": 3, "index": false, "similarity": "cosine"}),
        ] {
            assert!(VectorSpec::parse(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reads_knn_vector_as_opensearch_does() {
        let s = VectorSpec::parse(&json!({"type": "knn_vector", "dimension": 4, "method": {"name": "hnsw", "space_type": "cosinesimil", "engine": "faiss", "parameters": {"m": 24}}})).unwrap();
        assert_eq!(
            (s.dims, s.similarity, s.options.m),
            (4, Similarity::Cosine, 24)
        );
        assert_eq!(s.score(0.5), 1.5);
        let l2 = VectorSpec::parse(&json!({"type": "knn_vector", "dimension": 4})).unwrap();
        assert_eq!(l2.similarity, Similarity::L2Norm);
    }

    #[test]
    fn refuses_vectors_elasticsearch_refuses() {
        let s = VectorSpec::parse(
            &json!({"type": "dense_vector", "dims": 2, "similarity": "dot_product"}),
        )
        .unwrap();
        assert!(s.read("v", &json!([0.6, 0.8])).is_ok());
        assert!(s
            .read("v", &json!([1.0, 1.0]))
            .unwrap_err()
            .contains("unit-length"));
        assert!(s
            .read("v", &json!([1.0]))
            .unwrap_err()
            .contains("different number of dimensions"));
        let c = VectorSpec::parse(&json!({"type": "dense_vector", "dims": 2})).unwrap();
        assert!(c
            .read("v", &json!([0.0, 0.0]))
            .unwrap_err()
            .contains("zero magnitude"));
        assert!(c
            .read("v", &json!([1e39, 0.0]))
            .unwrap_err()
            .contains("non-finite"));
        let b = VectorSpec::parse(&json!({"type": "dense_vector", "dims": 2, "element_type": "byte", "similarity": "l2_norm"})).unwrap();
        assert!(b.read("v", &json!([1.5, 0])).is_err());
        assert!(b.read("v", &json!([-128, 127])).is_ok());
    }

    #[test]
    fn scores_as_elasticsearch_documents_them() {
        let spec = |sim: &str, el: &str| {
            VectorSpec::parse(&json!({"type": "dense_vector", "dims": 4, "similarity": sim, "element_type": el, "index_options": {"type": "hnsw"}})).unwrap()
        };
        assert_eq!(spec("l2_norm", "float").score(2.0), 0.2);
        assert_eq!(spec("cosine", "float").score(0.5), 0.75);
        assert_eq!(spec("dot_product", "float").score(-0.5), 0.25);
        assert_eq!(spec("dot_product", "byte").score(32768.0 * 4.0 / 2.0), 1.0);
        assert_eq!(spec("max_inner_product", "float").score(-1.0), 0.5);
        assert_eq!(spec("max_inner_product", "float").score(3.0), 4.0);
    }
}
