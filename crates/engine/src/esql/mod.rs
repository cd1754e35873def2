//! ES|QL (`POST /_query`): the subset real tracks send, run on the engine's indices and
//! answered in ES|QL's shape (`columns` with their types, then `values` by row, or by column
//! with `columnar`). FROM reads the documents (a WHERE right after it has its full-text
//! conditions, `MATCH`, `MATCH_PHRASE`, `QSTR` and the `:` operator, run as queries); every
//! other command runs on the rows in memory. What the subset lacks is refused before anything
//! runs, naming the command or function.

mod exec;
mod func;
mod parse;
mod spatial;
mod stats;
mod value;

use crate::error::{Error, ErrorKind};
use exec::Table;
use parse::{Command, Expr};
use serde_json::{json, Value};

fn bad(m: impl Into<String>) -> Error {
    Error::new(ErrorKind::BadRequest, m.into())
}

/// The request body's keys the engine runs.
const BODY_KEYS: [&str; 4] = ["query", "columnar", "filter", "version"];

/// Reads and checks a request's query: what `run` would refuse, said before a race.
pub fn check(body: &Value) -> Result<(), String> {
    plan(body).map(|_| ())
}

struct Plan {
    commands: Vec<Command>,
    pushed: Option<Value>,
    columnar: bool,
}

fn plan(body: &Value) -> Result<Plan, String> {
    let obj = body
        .as_object()
        .ok_or("an ES|QL request body is an object")?;
    if let Some(k) = obj.keys().find(|k| !BODY_KEYS.contains(&k.as_str())) {
        return Err(format!(
            "ES|QL request key [{k}] is not run by the embedded engine ({})",
            BODY_KEYS.join(", ")
        ));
    }
    let text = obj
        .get("query")
        .and_then(Value::as_str)
        .ok_or("an ES|QL request needs its `query`")?;
    let mut commands = parse::parse(text)?;
    for c in &commands {
        each_call(c, &mut |name| func::check_function(name))?;
    }
    let mut pushed: Vec<Value> = obj.get("filter").cloned().into_iter().collect();
    if let Some(Command::Where(cond)) = commands.get(1).cloned() {
        let mut rest = Vec::new();
        for conjunct in conjuncts(cond) {
            match full_text(&conjunct)? {
                Some(q) => pushed.push(q),
                None => rest.push(conjunct),
            }
        }
        match rest
            .into_iter()
            .reduce(|a, b| Expr::Bin("AND", Box::new(a), Box::new(b)))
        {
            Some(cond) => commands[1] = Command::Where(cond),
            None => {
                commands.remove(1);
            }
        }
    }
    // Full-text functions anywhere else cannot run as queries.
    for c in commands.iter().skip(1) {
        each_call(c, &mut |name| {
            match func::FULL_TEXT.contains(&name) {
            true => Err(format!("[{name}] function is only run in a WHERE directly after FROM, and not under OR or NOT, by the embedded engine")),
            false => Ok(()),
        }
        })?;
    }
    let pushed = match pushed.len() {
        0 => None,
        1 => pushed.pop(),
        _ => Some(json!({"bool": {"filter": pushed}})),
    };
    Ok(Plan {
        commands,
        pushed,
        columnar: obj
            .get("columnar")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}

fn conjuncts(e: Expr) -> Vec<Expr> {
    match e {
        Expr::Bin("AND", a, b) => [conjuncts(*a), conjuncts(*b)].concat(),
        other => vec![other],
    }
}

/// A full-text condition as the query it runs as.
fn full_text(e: &Expr) -> Result<Option<Value>, String> {
    let Expr::Call(name, args) = e else {
        return Ok(None);
    };
    let lit = |i: usize| match args.get(i) {
        Some(Expr::Lit(v)) => Ok(v.to_json()),
        _ => Err(format!(
            "[{name}] takes a literal as its argument {}",
            i + 1
        )),
    };
    let field = || match args.first() {
        Some(Expr::Col(f)) => Ok(f.clone()),
        _ => Err(format!("[{name}] takes a field first")),
    };
    Ok(Some(match name.as_str() {
        "MATCH" => json!({"match": {field()?: lit(1)?}}),
        "MATCH_PHRASE" => json!({"match_phrase": {field()?: lit(1)?}}),
        "QSTR" => json!({"query_string": {"query": lit(0)?}}),
        "KQL" => return Err(
            "ES|QL `KQL` is not run by the embedded engine (the `kql` query is out of its reach)"
                .into(),
        ),
        _ => return Ok(None),
    }))
}

/// Calls `f` with the name of every function the command calls.
fn each_call(c: &Command, f: &mut dyn FnMut(&str) -> Result<(), String>) -> Result<(), String> {
    c.exprs().into_iter().try_for_each(|e| {
        e.visit(&mut |x| match x {
            Expr::Call(name, _) => f(name),
            _ => Ok(()),
        })
    })
}

/// The columns FROM needs to read: with a STATS or a KEEP, only those the query names (and
/// those KEEP's patterns match); otherwise every one, as the answer shows them all.
fn needed_columns(commands: &[Command]) -> Option<(Vec<String>, Vec<String>)> {
    if !commands
        .iter()
        .any(|c| matches!(c, Command::Stats { .. } | Command::Keep(_)))
    {
        return None;
    }
    let (mut names, mut patterns) = (Vec::new(), Vec::new());
    for c in commands {
        for e in c.exprs() {
            // Infallible: the visitor only collects.
            let _ = e.visit(&mut |x| {
                if let Expr::Col(n) = x {
                    names.push(n.clone());
                }
                Ok(())
            });
        }
        match c {
            Command::Keep(p) => patterns.extend(p.iter().cloned()),
            Command::Rename(pairs) => names.extend(pairs.iter().map(|(old, _)| old.clone())),
            _ => {}
        }
    }
    Some((names, patterns))
}

/// Runs a request on the engine's indices.
pub fn run(engine: &crate::cluster::Engine, body: &Value) -> Result<Value, Error> {
    let started = std::time::Instant::now();
    let plan = plan(body).map_err(bad)?;
    let Some(Command::From { patterns, metadata }) = plan.commands.first() else {
        return Err(bad("an ES|QL query starts with FROM"));
    };
    // `FROM x | LIMIT n` reads n documents only.
    let cap = match plan.commands.get(1) {
        Some(Command::Limit(n)) => Some((*n).min(exec::MAX_LIMIT)),
        None => Some(exec::DEFAULT_LIMIT),
        _ => None,
    };
    let needed = needed_columns(&plan.commands);
    let keep = |name: &str| {
        needed.as_ref().is_none_or(|(names, patterns)| {
            names.iter().any(|n| n == name)
                || patterns.iter().any(|p| crate::names::simple_match(p, name))
        })
    };
    let mut table: Table = exec::from(engine, patterns, metadata, plan.pushed.clone(), cap, &keep)?;
    for c in &plan.commands[1..] {
        table = table.run(c)?;
    }
    if !plan.commands.iter().any(|c| matches!(c, Command::Limit(_))) {
        table.rows.truncate(exec::DEFAULT_LIMIT);
    }
    let columns: Vec<Value> = table
        .columns
        .iter()
        .map(|c| json!({"name": c.name, "type": c.ty.name()}))
        .collect();
    let values: Vec<Value> = match plan.columnar {
        false => table
            .rows
            .iter()
            .map(|r| Value::Array(r.iter().map(value::V::to_json).collect()))
            .collect(),
        true => (0..table.columns.len())
            .map(|i| Value::Array(table.rows.iter().map(|r| r[i].to_json()).collect()))
            .collect(),
    };
    Ok(json!({
        "took": started.elapsed().as_millis() as u64,
        "is_partial": false,
        "columns": columns,
        "values": values,
    }))
}

#[cfg(test)]
mod tests;
