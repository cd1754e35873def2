//! Vector search: `dense_vector` (and OpenSearch's `knn_vector`) fields, an HNSW graph per
//! segment, kNN search, and the vector functions of `script_score`.

pub mod hnsw;
pub mod points;
pub mod script;
pub mod segments;
pub mod spec;
