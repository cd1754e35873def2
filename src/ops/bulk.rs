//! bulk: index a corpus in requests of `bulk-size` documents (or `flush-bytes` bytes).

use super::{ParamError, Params, TrackContext};
use crate::track::DocumentSet;
use crate::units::{parse_bytes, BulkSize, Bytes};
use serde_json::Value;

/// The action line before every document of a bulk request body. `flush-bytes` counts it, so
/// that the threshold means the request size Elasticsearch receives, on every backend.
pub const BULK_ACTION_LINE: &str = "{\"index\":{}}\n";

#[derive(Debug, Clone)]
pub struct BulkSpec {
    pub index: String,
    pub corpus: String,
    pub files: Vec<DocumentSet>,
    pub bulk_size: BulkSize,
    /// Send a request once its NDJSON body (action lines included) reaches this many bytes,
    /// even below `bulk_size` documents.
    pub flush_bytes: Option<Bytes>,
    /// Index only this share of the corpus, in percent (Rally's `ingest-percentage`).
    pub ingest_percentage: Option<f64>,
}

pub fn parse(p: &Params, ctx: &TrackContext) -> Result<BulkSpec, ParamError> {
    let corpus_name = p.string("corpus")?;
    let (corpus, files) = match corpus_name {
        Some(name) => ctx.corpora.iter().find(|(n, _)| *n == name).ok_or_else(|| {
            let hint = crate::track::did_you_mean(&name, ctx.corpora.iter().map(|(n, _)| n.as_str()));
            ParamError::new("corpus", format!("corpus `{name}` is not declared under `corpora`{hint}"))
        })?,
        None => match ctx.corpora {
            [only] => only,
            [] => return Err(ParamError::new("corpus", "the track declares no corpora to index")),
            _ => return Err(ParamError::new("corpus", "the track has several corpora; name one with `corpus`")),
        },
    };
    let mut files = files.clone();
    if let Some(index) = p.string("index")? {
        files.iter_mut().for_each(|f| f.target_index = index.clone());
    }
    let index = files.first().map(|f| f.target_index.clone()).unwrap_or_default();
    if files.iter().any(|f| f.target_index != index) {
        return Err(ParamError::new("index", "the corpus targets several indices; name one with `index`"));
    }
    let bulk_size = BulkSize(p.positive_int("bulk-size")?.unwrap_or(5000));
    let flush_bytes = match p.get("flush-bytes") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_u64().is_some_and(|v| v > 0) => Some(Bytes(n.as_u64().unwrap_or(1))),
        Some(Value::String(s)) => Some(parse_bytes(s).map_err(|m| ParamError::new("flush-bytes", m))?),
        Some(other) => return Err(ParamError::new("flush-bytes", format!("expected a size such as 5mb, got {other}"))),
    };
    let ingest_percentage = match p.get("ingest-percentage") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_f64() {
            Some(pct) if pct > 0.0 && pct <= 100.0 => Some(pct),
            _ => return Err(ParamError::new("ingest-percentage", format!("expected a percentage above 0 and at most 100, got {v}"))),
        },
    };
    Ok(BulkSpec { index, corpus: corpus.clone(), files, bulk_size, flush_bytes, ingest_percentage })
}
