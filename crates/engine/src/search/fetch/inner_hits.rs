//! `inner_hits` of nested queries: for each hit, the objects of its nested field that match
//! the nested query's inner query, best first (ties in their order in the document), with
//! `_nested.offset`, their score and their source, as Elasticsearch shows them.

use crate::dsl::nested::InnerHitsPlan;
use serde_json::{json, Value};
use tantivy::query::{BooleanQuery, ConstScoreQuery, EnableScoring, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, Score, Searcher, TantivyDocument, Term};

/// One matching object: its score, offset and address in the store.
struct Found {
    score: Score,
    offset: u64,
    at: DocAddress,
}

/// The objects of the document with `seq_no` matching one plan, in inner hits order.
fn found(plan: &InnerHitsPlan, objects: &Searcher, seq_no: u64) -> tantivy::Result<Vec<Found>> {
    let own = TermQuery::new(
        Term::from_field_u64(plan.nested.mapping.seq_no, seq_no),
        IndexRecordOption::Basic,
    );
    let query = BooleanQuery::new(vec![
        (Occur::Must, plan.query.box_clone()),
        (
            Occur::Must,
            Box::new(ConstScoreQuery::new(Box::new(own), 0.0)),
        ),
    ]);
    let weight = query.weight(EnableScoring::enabled_from_searcher(objects))?;
    let mut out = Vec::new();
    for (ord, segment) in objects.segment_readers().iter().enumerate() {
        let offsets = segment.fast_fields().u64("_nested_offset")?;
        let alive = segment.alive_bitset();
        weight.for_each(segment, &mut |doc, score| {
            if alive.is_none_or(|a| a.is_alive(doc)) {
                out.push(Found {
                    score,
                    offset: offsets.first(doc).unwrap_or(0),
                    at: DocAddress::new(ord as u32, doc),
                });
            }
        })?;
    }
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.offset.cmp(&b.offset)));
    Ok(out)
}

/// `,"inner_hits":{..}` for the hit at `at` of index `index`.
pub fn render(
    plans: &[InnerHitsPlan],
    documents: &Searcher,
    at: DocAddress,
    index: &str,
) -> Result<String, String> {
    let mut shown = serde_json::Map::new();
    for plan in plans {
        let seq_no = {
            let segment = documents.segment_reader(at.segment_ord);
            let column = segment
                .fast_fields()
                .u64("_seq_no")
                .map_err(|e| e.to_string())?;
            column.first(at.doc_id).unwrap_or(u64::MAX)
        };
        let objects = plan.nested.views.searcher_for(documents)?;
        let all = found(plan, &objects, seq_no).map_err(|e| e.to_string())?;
        let mut hits = Vec::new();
        for f in all.iter().skip(plan.hits.from).take(plan.hits.size) {
            let mut hit = json!({
                "_index": index,
                "_id": Value::Null,
                "_nested": {"field": plan.nested.path, "offset": f.offset},
                "_score": f.score,
            });
            let doc: TantivyDocument = objects.doc(f.at).map_err(|e| e.to_string())?;
            use tantivy::schema::document::Value as _;
            if let Some(id) = doc
                .get_first(plan.nested.mapping.id)
                .and_then(|v| v.as_str())
            {
                hit["_id"] = json!(id);
            }
            if plan.hits.source {
                let source = doc
                    .get_first(plan.nested.mapping.source)
                    .and_then(|v| v.as_bytes())
                    .and_then(|b| plan.nested.object_of(b));
                if let Some(source) = source {
                    hit["_source"] = source;
                }
            }
            hits.push(hit);
        }
        shown.insert(
            plan.hits.name.clone(),
            json!({"hits": {
                "total": {"value": all.len(), "relation": "eq"},
                "max_score": all.first().map(|f| f.score),
                "hits": hits,
            }}),
        );
    }
    Ok(format!(r#","inner_hits":{}"#, Value::Object(shown)))
}
