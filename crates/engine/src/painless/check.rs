//! A parsed script checked against the subset before it runs: every method name, static
//! and constructor it uses must be one the engine has, so a script outside the subset is
//! refused when its request (a pipeline, a query) is made, naming what is missing, not on
//! the thousandth document.

use super::ast::{Expr, Function, Stmt};
use super::lib::{CONSTRUCTORS, METHODS};

pub fn check(functions: &[Function], stmts: &[Stmt]) -> Result<(), String> {
    let mut bad: Option<String> = None;
    let mut visit = |e: &Expr| {
        if bad.is_some() {
            return;
        }
        bad = problem(e);
    };
    stmts.iter().for_each(|s| s.walk(&mut visit));
    for f in functions {
        f.body.iter().for_each(|s| s.walk(&mut visit));
    }
    bad.map_or(Ok(()), Err)
}

fn static_class(name: &str) -> Option<&'static [&'static str]> {
    super::lib::statics::STATICS
        .iter()
        .find(|(c, _)| *c == name)
        .map(|(_, members)| *members)
}

fn problem(e: &Expr) -> Option<String> {
    match e {
        Expr::Method(base, name, _) | Expr::Field(base, name) => {
            if let Expr::Var(class) = &**base {
                if let Some(members) = static_class(class) {
                    return (!members.contains(&name.as_str())).then(|| {
                        format!("`{class}.{name}` is not in the engine's Painless subset")
                    });
                }
                if class.starts_with(char::is_uppercase) {
                    return Some(format!(
                        "`{class}.{name}`: `{class}` is not a class of the engine's Painless subset"
                    ));
                }
            }
            match e {
                Expr::Method(..) => unknown_method(name),
                _ => None,
            }
        }
        Expr::NullSafe(_, name, Some(_)) => unknown_method(name),
        Expr::New(t, _) if !CONSTRUCTORS.contains(&t.as_str()) => Some(format!(
            "`new {t}(...)` is not in the engine's Painless subset"
        )),
        _ => None,
    }
}

fn unknown_method(name: &str) -> Option<String> {
    (!METHODS.contains(&name))
        .then(|| format!("method `{name}` is not in the engine's Painless subset for any class"))
}
