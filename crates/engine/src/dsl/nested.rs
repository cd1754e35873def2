//! The `nested` query on flattened objects. The engine stores a nested field's objects as
//! one document's arrays, so it cannot tell which values came from the same object. A
//! nested query whose inner query reads one field of the path matches exactly the documents
//! Elasticsearch matches (some object has a matching value), and runs; one that combines
//! several fields (each must match inside one object) is refused, naming them.

use serde_json::Value;

/// The inner query of a `nested` query body, when the engine's answer would be
/// Elasticsearch's; else why not.
pub fn inner(body: &Value) -> Result<&Value, String> {
    let obj = body.as_object().ok_or("`nested` expects an object")?;
    let path = obj
        .get("path")
        .and_then(Value::as_str)
        .ok_or("`nested` needs a `path`")?;
    let query = obj.get("query").ok_or("`nested` needs a `query`")?;
    if let Some(k) = obj.keys().find(|k| {
        ![
            "path",
            "query",
            "score_mode",
            "ignore_unmapped",
            "boost",
            "_name",
        ]
        .contains(&k.as_str())
    }) {
        return Err(format!(
            "`nested` `{k}` is not supported by the embedded backend{}",
            if k == "inner_hits" {
                " (nested objects are flattened here, so there are no inner hits to return)"
            } else {
                ""
            }
        ));
    }
    let mut fields = Vec::new();
    fields_of(query, &mut fields)?;
    fields.sort();
    fields.dedup();
    if fields.len() > 1 {
        return Err(format!(
            "a `nested` query on `{path}` that reads {} must match them inside one object, which the embedded engine cannot tell apart (nested objects are flattened here)",
            fields.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(query)
}

/// The fields a query reads, through `bool` and `constant_score`.
fn fields_of(q: &Value, out: &mut Vec<String>) -> Result<(), String> {
    let Some((kind, body)) = q.as_object().and_then(|o| o.iter().next()) else {
        return Ok(());
    };
    const OPTIONS: [&str; 3] = ["boost", "_name", "minimum_should_match"];
    match kind.as_str() {
        "bool" => {
            for clause in ["must", "filter", "should", "must_not"] {
                match body.get(clause) {
                    Some(Value::Array(a)) => {
                        for c in a {
                            fields_of(c, out)?;
                        }
                    }
                    Some(one) => fields_of(one, out)?,
                    None => {}
                }
            }
        }
        "constant_score" => {
            if let Some(f) = body.get("filter") {
                fields_of(f, out)?;
            }
        }
        "exists" => out.extend(
            body.get("field")
                .and_then(Value::as_str)
                .map(str::to_string),
        ),
        "multi_match" => out.extend(
            body.get("fields")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(|f| f.split('^').next().unwrap_or(f).to_string()),
        ),
        "match_all" | "match_none" => {}
        "nested" => {
            return Err(
                "a `nested` query inside a `nested` query is not supported by the embedded backend"
                    .into(),
            )
        }
        _ => out.extend(
            body.as_object()
                .into_iter()
                .flat_map(|o| o.keys())
                .filter(|k| !OPTIONS.contains(&k.as_str()))
                .cloned(),
        ),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn one_field_runs_and_several_are_named() {
        let one = json!({"path": "answers", "query": {"bool": {"filter": [{"range": {"answers.date": {"lte": "2012"}}}, {"exists": {"field": "answers.date"}}]}}});
        assert!(inner(&one).is_ok());
        let two = json!({"path": "answers", "query": {"bool": {"must": [{"term": {"answers.user": "u1"}}, {"range": {"answers.date": {"lte": "2012"}}}]}}});
        let e = inner(&two).unwrap_err();
        assert!(
            e.contains("`answers.date`, `answers.user`") && e.contains("inside one object"),
            "{e}"
        );
        let hits = json!({"path": "answers", "query": {"match_all": {}}, "inner_hits": {}});
        assert!(inner(&hits).unwrap_err().contains("inner hits"));
    }
}
