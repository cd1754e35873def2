//! `script_fields`: each hit's value of a Painless script (the engine's subset) run on the
//! hit's source, `doc['f']` read by each field's type and `params._source` the source, shown
//! in the hit's `fields` as a list, as Elasticsearch shows it.

use crate::mapping::Mapping;
use crate::painless::Script;
use serde_json::{Map, Value};
use std::sync::Arc;

/// The most script fields one search takes.
const MAX_SCRIPT_FIELDS: usize = 100;

#[derive(Clone)]
pub(super) struct ScriptFields {
    fields: Vec<(String, Arc<Script>, bool)>,
    mapping: Arc<Mapping>,
}

/// The body's `script_fields`: none when absent or empty.
pub(super) fn compile(body: &Value, mapping: &Mapping) -> Result<Option<ScriptFields>, String> {
    let Some(spec) = body.get("script_fields") else {
        return Ok(None);
    };
    let spec = spec.as_object().ok_or("`script_fields` is an object")?;
    if spec.is_empty() {
        return Ok(None);
    }
    if spec.len() > MAX_SCRIPT_FIELDS {
        return Err(format!(
            "`script_fields` takes at most {MAX_SCRIPT_FIELDS} fields"
        ));
    }
    let mut fields = Vec::new();
    for (name, def) in spec {
        if let Some(k) = def.as_object().and_then(|o| {
            o.keys()
                .find(|k| !matches!(k.as_str(), "script" | "ignore_failure"))
        }) {
            return Err(format!(
                "script field [{name}] option `{k}` is not run by the embedded engine"
            ));
        }
        let script = def
            .get("script")
            .ok_or_else(|| format!("script field [{name}] needs its `script`"))?;
        let script =
            Script::from_request(script).map_err(|e| format!("script field [{name}]: {e}"))?;
        let ignore = def
            .get("ignore_failure")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        fields.push((name.clone(), Arc::new(script), ignore));
    }
    Ok(Some(ScriptFields {
        fields,
        mapping: Arc::new(mapping.clone()),
    }))
}

impl ScriptFields {
    /// Adds each script's value on the hit's source to its `fields`; a script that fails
    /// fails the search unless its field ignores failures.
    pub(super) fn render(
        &self,
        source: &Map<String, Value>,
        out: &mut Map<String, Value>,
    ) -> Result<(), String> {
        for (name, script, ignore) in &self.fields {
            match self.mapping.run_on_source(script, source) {
                Ok(v) => {
                    let shown = match v.to_json() {
                        Ok(Value::Array(items)) => items,
                        Ok(Value::Null) => Vec::new(),
                        Ok(one) => vec![one],
                        Err(e) if *ignore => {
                            let _ = e;
                            continue;
                        }
                        Err(e) => return Err(format!("script field [{name}]: {e}")),
                    };
                    out.insert(name.clone(), Value::Array(shown));
                }
                Err(_) if *ignore => {}
                Err(e) => return Err(format!("script field [{name}]: {e}")),
            }
        }
        Ok(())
    }
}
