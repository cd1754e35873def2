//! The Painless subset the engine runs: scripts of `bucket_script`, `bucket_selector` and
//! `moving_fn` (and, through a [`Host`] giving `doc` and functions, of queries and fields).
//! A script is parsed once, when its request is checked, so a construct outside the subset is
//! refused before the race, naming it; a run is bounded in steps.

mod ast;
mod eval;
mod lib;
mod parse;

pub use eval::{Host, NoDoc, Val};
use serde_json::{Map, Value};

#[derive(Debug, Clone)]
pub struct Script {
    stmts: Vec<ast::Stmt>,
    /// The request's `params`.
    params: Map<String, Value>,
}

impl Script {
    /// A request's `script`: a source string, or `{source, lang, params}` (`lang` painless;
    /// a stored script `id` is refused by name).
    pub fn from_request(v: &Value) -> Result<Script, String> {
        let (source, params) = match v {
            Value::String(s) => (s.as_str(), Map::new()),
            Value::Object(o) => {
                if o.contains_key("id") {
                    return Err("stored scripts (`id`) are not run by the embedded engine".into());
                }
                if let Some(k) = o.keys().find(|k| {
                    !matches!(
                        k.as_str(),
                        "source" | "inline" | "lang" | "params" | "options"
                    )
                }) {
                    return Err(format!(
                        "script key `{k}` is not run by the embedded engine"
                    ));
                }
                match o.get("lang").and_then(Value::as_str) {
                    None | Some("painless") => {}
                    Some(other) => {
                        return Err(format!(
                            "script lang `{other}` is not run by the embedded engine (painless)"
                        ))
                    }
                }
                let source = o
                    .get("source")
                    .or_else(|| o.get("inline"))
                    .and_then(Value::as_str)
                    .ok_or("a script needs its `source`")?;
                let params = match o.get("params") {
                    None | Some(Value::Null) => Map::new(),
                    Some(Value::Object(p)) => p.clone(),
                    Some(other) => {
                        return Err(format!("script `params` is an object, got {other}"))
                    }
                };
                (source, params)
            }
            other => return Err(format!("a script is a string or an object, got {other}")),
        };
        let stmts = parse::parse(source).map_err(|e| format!("script `{}`: {e}", short(source)))?;
        Ok(Script { stmts, params })
    }

    /// Runs the script with `params` (the request's, then `extra` on top) and further
    /// variables (`values` of a moving_fn, `_score`...).
    pub fn run(&self, extra: &[(String, Val)], host: &mut dyn Host) -> Result<Val, String> {
        let mut params = Val::from_json(&Value::Object(self.params.clone()));
        let mut vars = Vec::new();
        for (k, v) in extra {
            match (k.strip_prefix("params."), &mut params) {
                (Some(name), Val::Map(m)) => {
                    m.retain(|(n, _)| n != name);
                    m.push((name.to_string(), v.clone()));
                }
                _ => vars.push((k.clone(), v.clone())),
            }
        }
        vars.push(("params".to_string(), params));
        eval::Run::new(vars, host).script(&self.stmts)
    }
}

fn short(source: &str) -> String {
    let one_line: String = source.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(60) {
        Some((i, _)) => format!("{}...", &one_line[..i]),
        None => one_line,
    }
}

#[cfg(test)]
mod tests;
