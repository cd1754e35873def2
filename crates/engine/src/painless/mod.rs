//! The Painless subset the engine runs: scripts of `bucket_script`, `bucket_selector` and
//! `moving_fn` (and, through a [`Host`] giving `doc` and functions, of queries and fields).
//! A script is parsed once, when its request is checked, so a construct outside the subset is
//! refused before the race, naming it; a run is bounded in steps.

mod ast;
mod check;
mod eval;
mod fault;
mod lex;
mod lib;
mod objects;
mod parse;
mod val;

pub use eval::{Host, NoDoc};
pub use lib::text;
use serde_json::{Map, Value};
pub use val::{ShapeVal, Val};

/// Lucene expressions' functions (`lang: expression`), Math's of the same names.
pub const EXPRESSION_FUNCTIONS: [&str; 19] = [
    "abs", "ln", "log10", "sqrt", "cbrt", "exp", "pow", "min", "max", "floor", "ceil", "sin",
    "cos", "tan", "asin", "acos", "atan", "atan2", "hypot",
];

#[derive(Debug, Clone)]
pub struct Script {
    functions: Vec<ast::Function>,
    stmts: Vec<ast::Stmt>,
    /// `lang: expression`: one Lucene expression (a field's value is a number, 0 where the
    /// document has none; functions without `Math.`).
    expression: bool,
    /// The request's `params`: made into the script's map once per thread (see
    /// [`Script::params`]).
    params: Value,
    /// Tells this script's converted params apart in a thread's cache (clones share it, as
    /// they share the params).
    id: u64,
}

/// Scripts are equal when they say the same (their cache ids aside).
impl PartialEq for Script {
    fn eq(&self, other: &Self) -> bool {
        self.functions == other.functions
            && self.stmts == other.stmts
            && self.expression == other.expression
            && self.params == other.params
    }
}

/// Scripts whose converted params one thread keeps.
const PARAMS_CACHED: usize = 16;

thread_local! {
    static PARAMS: std::cell::RefCell<Vec<(u64, Val)>> = const { std::cell::RefCell::new(Vec::new()) };
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
                    None | Some("painless" | "expression") => {}
                    Some(other) => {
                        return Err(format!(
                            "script lang `{other}` is not run by the embedded engine (painless, expression)"
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
        let expression = v.get("lang").and_then(Value::as_str) == Some("expression");
        let (functions, stmts) =
            parse::parse(source).map_err(|e| format!("script `{}`: {e}", short(source)))?;
        check::check(&functions, &stmts).map_err(|e| format!("script `{}`: {e}", short(source)))?;
        if expression && !matches!(stmts.as_slice(), [ast::Stmt::Expr(_)]) {
            return Err(format!(
                "script `{}`: a Lucene expression is one expression",
                short(source)
            ));
        }
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Ok(Script {
            functions,
            stmts,
            params: Value::Object(params),
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            expression,
        })
    }

    /// Runs the script with `params` (the request's, then `extra` on top) and further
    /// variables (`values` of a moving_fn, `_score`...).
    pub fn run(&self, extra: &[(String, Val)], host: &mut dyn Host) -> Result<Val, String> {
        let params = self.params();
        let mut vars = Vec::new();
        for (k, v) in extra {
            match (k.strip_prefix("params."), &params) {
                (Some(name), Val::Map(m)) => {
                    m.remove(name);
                    m.put(name.to_string(), v.clone())
                        .map_err(|e| e.to_string())?;
                }
                _ => vars.push((k.clone(), v.clone())),
            }
        }
        vars.push(("params".to_string(), params));
        let mut run = eval::Run::new(vars, &self.functions, host);
        run.expression = self.expression;
        run.script(&self.stmts).map_err(|e| e.to_string())
    }

    /// An ingest script (a `script` processor, an `if`): its context functions are
    /// `metadata()` only, checked now rather than on a document.
    pub fn for_ingest(v: &Value) -> Result<Script, String> {
        let script = Script::from_request(v)?;
        if let Some(c) = script
            .calls()
            .into_iter()
            .find(|c| !INGEST_FUNCTIONS.contains(&c.as_str()))
        {
            return Err(format!(
                "function `{c}` is not in an ingest script's context (it has {})",
                INGEST_FUNCTIONS.join(", ")
            ));
        }
        Ok(script)
    }

    pub fn is_expression(&self) -> bool {
        self.expression
    }

    /// Runs the script on an ingest document's `ctx` (a map): its result, and `ctx` as the
    /// script left it.
    ///
    /// `metadata()` gives the ingest metadata (`now`: when the pipeline started, epoch ms).
    pub fn run_ctx(&self, ctx: Val, now_ms: i64) -> Result<(Val, Val), String> {
        let vars = vec![
            ("params".to_string(), self.params()),
            ("ctx".to_string(), ctx),
        ];
        let mut host = Ingest { now_ms };
        let mut run = eval::Run::new(vars, &self.functions, &mut host);
        let out = run.script(&self.stmts).map_err(|e| e.to_string())?;
        let ctx = run.take("ctx").unwrap_or(Val::Null);
        Ok((out, ctx))
    }

    /// The params as the script sees them: converted from JSON once per thread, not per run
    /// (a script scoring every document would pay it per document). Like Elasticsearch's,
    /// one map serves the script's runs, so a run that changes it changes it for the next.
    fn params(&self) -> Val {
        PARAMS.with(|cache| {
            let mut cache = cache.borrow_mut();
            if let Some((_, v)) = cache.iter().find(|(id, _)| *id == self.id) {
                return v.clone();
            }
            let v = Val::from_json(&self.params);
            if cache.len() >= PARAMS_CACHED {
                cache.remove(0);
            }
            cache.push((self.id, v.clone()));
            v
        })
    }

    /// The context functions the script calls (those it declares itself aside).
    pub fn calls(&self) -> Vec<String> {
        let mut calls = Vec::new();
        let mut visit = |e: &ast::Expr| {
            if let ast::Expr::Call(name, args) = e {
                let own = self
                    .functions
                    .iter()
                    .any(|f| f.name == *name && f.params.len() == args.len());
                if !own && !calls.contains(name) {
                    calls.push(name.clone());
                }
            }
        };
        self.stmts.iter().for_each(|s| s.walk(&mut visit));
        for f in &self.functions {
            f.body.iter().for_each(|s| s.walk(&mut visit));
        }
        calls
    }
}

impl Script {
    /// The fields the script reads from the document (`doc['f']`, `doc.get('f')`,
    /// `doc.containsKey('f')`), each named by a string written out; and the context functions
    /// it calls.
    pub fn reads(&self) -> Result<(Vec<String>, Vec<String>), String> {
        use ast::Expr;
        let mut fields: Vec<String> = Vec::new();
        let mut calls: Vec<String> = Vec::new();
        let mut bad = None;
        let is_doc = |e: &Expr| matches!(e, Expr::Var(d) if d == "doc");
        let mut visit = |e: &Expr| {
            let field_access;
            let key = match e {
                Expr::Field(base, name) if is_doc(base) => {
                    field_access = Expr::Str(name.clone());
                    Some(&field_access)
                }
                Expr::Index(base, key) if is_doc(base) => Some(&**key),
                Expr::Method(base, m, args)
                    if is_doc(base) && matches!(m.as_str(), "get" | "containsKey") =>
                {
                    args.first()
                }
                Expr::Call(name, args)
                    if !self
                        .functions
                        .iter()
                        .any(|f| f.name == *name && f.params.len() == args.len()) =>
                {
                    calls.push(name.clone());
                    None
                }
                _ => None,
            };
            match key {
                Some(Expr::Str(f)) if !fields.contains(f) => fields.push(f.clone()),
                Some(Expr::Str(_)) | None => {}
                Some(_) => {
                    bad.get_or_insert("`doc[...]` with a field name computed at run time is not in the engine's Painless subset (write the name out)".to_string());
                }
            }
        };
        self.stmts.iter().for_each(|s| s.walk(&mut visit));
        for f in &self.functions {
            f.body.iter().for_each(|s| s.walk(&mut visit));
        }
        bad.map_or(Ok((fields, calls)), Err)
    }
}

/// An ingest script's context: `metadata()`.
struct Ingest {
    now_ms: i64,
}

/// The functions an ingest script's context has.
pub const INGEST_FUNCTIONS: [&str; 1] = ["metadata"];

impl Host for Ingest {
    fn call(&mut self, name: &str, args: &[Val]) -> Option<Result<Val, String>> {
        match (name, args) {
            ("metadata", []) => Some(Ok(Val::map(vec![("now".into(), Val::Date(self.now_ms))]))),
            _ => None,
        }
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
