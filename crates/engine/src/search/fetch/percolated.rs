//! What a `percolate` search adds to each hit: `_percolator_document_slot` (which of the
//! percolated documents its stored query matches) and the highlighting of those documents
//! with that query (keyed `<slot>_<field>` when several documents were given), as
//! Elasticsearch's percolator fetch sub-phases add them.

use crate::dsl::percolate::Percolated;
use crate::mapping::Mapping;
use serde_json::{Map, Value};
use std::sync::Arc;

/// Every `percolate` query of a search body, wherever it sits in the query.
pub(super) fn percolates(body: &Value, mapping: &Mapping) -> Result<Vec<Arc<Percolated>>, String> {
    let mut out = Vec::new();
    let mut stack = vec![body.get("query").unwrap_or(&Value::Null)];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(o) => {
                for (k, inner) in o {
                    match k.as_str() {
                        "percolate" => out.push(Arc::new(Percolated::build(mapping, inner)?)),
                        _ => stack.push(inner),
                    }
                }
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    Ok(out)
}

/// One hit's slots and highlights, from its stored query (read from its `_source`).
pub(super) fn render(
    percolates: &[Arc<Percolated>],
    highlight: Option<&Value>,
    source: &Map<String, Value>,
    fields: &mut Map<String, Value>,
    marked: &mut Map<String, Value>,
) {
    for p in percolates {
        let Some(stored) = at_path(source, &p.field) else {
            continue;
        };
        let Ok(query) = p.compile(stored.to_string().as_bytes()) else {
            continue;
        };
        let Ok(Some((slots, _))) = p.matches(query.as_ref()) else {
            continue;
        };
        let key = match &p.name {
            Some(name) => format!("_percolator_document_slot_{name}"),
            None => "_percolator_document_slot".to_string(),
        };
        fields.insert(key, Value::from(slots.clone()));
        let Some(h) = highlight else { continue };
        let (mapping, memory) = p.memory();
        let Ok(compiled) = super::highlight::Highlight::compile(h, mapping, memory, query.as_ref())
        else {
            continue;
        };
        for slot in slots {
            let Some(Value::Object(found)) = compiled.render(&p.docs[slot as usize]) else {
                continue;
            };
            for (field, fragments) in found {
                let key = match (p.several, &p.name) {
                    (false, None) => field,
                    (false, Some(name)) => format!("{name}_{field}"),
                    (true, None) => format!("{slot}_{field}"),
                    (true, Some(name)) => format!("{name}_{slot}_{field}"),
                };
                marked.insert(key, fragments);
            }
        }
    }
}

/// The value at a dotted path of the source.
fn at_path<'a>(source: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    if let Some(v) = source.get(path) {
        return Some(v);
    }
    let (head, rest) = path.split_once('.')?;
    at_path(source.get(head)?.as_object()?, rest)
}
