//! Running a parsed Painless script: values as Painless has them (integers stay integers,
//! `int / int` divides as Java does, a string `+` anything concatenates, lists and maps are
//! references), variables in nested scopes, the script's own functions, `try`/`catch`, and
//! what the context gives (`params`, `doc`, `_score`, functions) through [`Host`]. A run is
//! bounded in steps and in call depth, so a loop or a recursion cannot hang or overflow.

mod higher;

use super::ast::{Expr, Function, Lambda, Stmt};
use super::fault::Fault;
use super::lib;
use super::objects::{obj, Obj};
pub use super::val::Val;

/// Statements and expressions one run may take.
const MAX_STEPS: u64 = 1_000_000;
/// Function and lambda calls nested at once (each takes stack; Java's own limit is its
/// thread's stack).
const MAX_CALL_DEPTH: usize = 48;

/// What a script's context gives it besides `params`.
pub trait Host {
    /// `doc['field']`: the document's values of the field.
    fn doc(&mut self, field: &str) -> Result<Val, String> {
        Err(format!("`doc['{field}']` has no document in this context"))
    }
    /// `doc.containsKey('field')`: whether the index maps the field.
    fn maps(&self, field: &str) -> bool {
        let _ = field;
        false
    }
    /// A function of the context (`emit`, vector functions...); None when it is not one.
    fn call(&mut self, name: &str, args: &[Val]) -> Option<Result<Val, String>> {
        let _ = (name, args);
        None
    }
}

/// A host with no document: bucket scripts, moving functions, ingest conditions.
pub struct NoDoc;
impl Host for NoDoc {}

enum Flow {
    Normal,
    Return(Val),
    Break,
    Continue,
}

/// A variable's declared type: a primitive number type keeps its values that type.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Declared {
    Any,
    Whole,
    Real,
    Boolean,
    Void,
}

impl Declared {
    fn of(kind: &str) -> Declared {
        match kind {
            "int" | "long" | "short" | "byte" => Declared::Whole,
            "double" | "float" => Declared::Real,
            "boolean" => Declared::Boolean,
            "void" => Declared::Void,
            _ => Declared::Any,
        }
    }

    fn coerce(self, v: Val) -> Result<Val, Fault> {
        Ok(match (self, v) {
            (Declared::Real, Val::Int(i)) => Val::Float(i as f64),
            (Declared::Whole, Val::Float(f)) => Val::Int(f as i64),
            (Declared::Whole | Declared::Real | Declared::Boolean, Val::Null) => {
                return Err(Fault::npe("null where a primitive is declared"))
            }
            (Declared::Boolean, v @ Val::Bool(_)) => v,
            (Declared::Boolean, other) => {
                return Err(Fault::cast(format!(
                    "cannot cast a {} to boolean",
                    other.type_name()
                )))
            }
            (Declared::Void, _) => Val::Null,
            (_, v) => v,
        })
    }
}

type Scope = Vec<(String, Val, Declared)>;

pub struct Run<'a> {
    /// Evaluating a Lucene expression: `doc['f']` is its value, functions are Math's.
    pub expression: bool,
    scopes: Vec<Scope>,
    host: &'a mut dyn Host,
    functions: &'a [Function],
    steps: u64,
    calls: usize,
}

impl<'a> Run<'a> {
    pub fn new(
        vars: Vec<(String, Val)>,
        functions: &'a [Function],
        host: &'a mut dyn Host,
    ) -> Run<'a> {
        super::val::reset_cycle_budget();
        Run {
            expression: false,
            scopes: vec![vars
                .into_iter()
                .map(|(n, v)| (n, v, Declared::Any))
                .collect()],
            host,
            functions,
            steps: 0,
            calls: 0,
        }
    }

    /// Runs the statements: the value of a `return`, else of the last expression statement.
    pub fn script(&mut self, stmts: &[Stmt]) -> Result<Val, Fault> {
        let mut last = Val::Null;
        for s in stmts {
            if let Stmt::Expr(e) = s {
                last = self.eval(e)?;
                continue;
            }
            match self.stmt(s)? {
                Flow::Return(v) => return Ok(v),
                Flow::Normal => last = Val::Null,
                Flow::Break | Flow::Continue => {
                    return Err("`break` or `continue` outside a loop".into())
                }
            }
        }
        Ok(last)
    }

    fn step(&mut self) -> Result<(), Fault> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(Fault::halt(format!(
                "the script ran more than {MAX_STEPS} steps"
            )));
        }
        Ok(())
    }

    fn block(&mut self, stmts: &[Stmt]) -> Result<Flow, Fault> {
        self.scopes.push(Vec::new());
        let mut flow = Ok(Flow::Normal);
        for s in stmts {
            match self.stmt(s) {
                Ok(Flow::Normal) => {}
                other => {
                    flow = other;
                    break;
                }
            }
        }
        self.scopes.pop();
        flow
    }

    fn declare(&mut self, name: &str, v: Val, declared: Declared) {
        self.scopes
            .last_mut()
            .expect("a scope")
            .push((name.to_string(), v, declared));
    }

    fn stmt(&mut self, s: &Stmt) -> Result<Flow, Fault> {
        self.step()?;
        match s {
            Stmt::Let(kind, name, value) => {
                let declared = Declared::of(kind);
                let v = match value {
                    Some(e) => declared.coerce(self.eval(e)?)?,
                    None => match declared {
                        Declared::Whole => Val::Int(0),
                        Declared::Real => Val::Float(0.0),
                        Declared::Boolean => Val::Bool(false),
                        Declared::Any | Declared::Void => Val::Null,
                    },
                };
                self.declare(name, v, declared);
            }
            Stmt::Assign(target, value) => {
                let v = self.eval(value)?;
                self.assign(target, v)?;
            }
            Stmt::Expr(e) => {
                self.eval(e)?;
            }
            Stmt::If(cond, then, otherwise) => {
                return match self.truth(cond)? {
                    true => self.block(then),
                    false => self.block(otherwise),
                };
            }
            Stmt::For(init, cond, update, body) => {
                self.scopes.push(Vec::new());
                let r = self.for_loop(init, cond.as_ref(), update, body);
                self.scopes.pop();
                return r;
            }
            Stmt::ForEach(name, list, body) => return self.for_each(name, list, body),
            Stmt::Return(v) => {
                let v = match v {
                    Some(e) => self.eval(e)?,
                    None => Val::Null,
                };
                return Ok(Flow::Return(v));
            }
            Stmt::Break => return Ok(Flow::Break),
            Stmt::Continue => return Ok(Flow::Continue),
            Stmt::Block(b) => return self.block(b),
            Stmt::Try(body, catches) => return self.try_catch(body, catches),
            Stmt::Throw(e) => return Err(self.throw(e)?),
        }
        Ok(Flow::Normal)
    }

    /// A `try`: a thrown exception that a `catch` names (or a superclass of it) runs that
    /// catch; a halt passes every catch.
    fn try_catch(&mut self, body: &[Stmt], catches: &[super::ast::Catch]) -> Result<Flow, Fault> {
        let depth = self.scopes.len();
        let calls = self.calls;
        let fault = match self.block(body) {
            Err(fault) => fault,
            ok => return ok,
        };
        // A fault may leave inner scopes (a loop's, a function's) behind: back to the try's.
        self.scopes.truncate(depth);
        self.calls = calls;
        let Some(c) = catches.iter().find(|c| fault.caught_by(&c.class)) else {
            return Err(fault);
        };
        let Fault::Thrown { class, message } = fault else {
            return Err(fault);
        };
        self.scopes.push(vec![(
            c.var.clone(),
            obj(Obj::Exception { class, message }),
            Declared::Any,
        )]);
        let flow = self.block(&c.body);
        self.scopes.truncate(depth);
        flow
    }

    fn throw(&mut self, e: &Expr) -> Result<Fault, Fault> {
        match self.eval(e)? {
            Val::Obj(o) => match &*o {
                Obj::Exception { class, message } => Ok(Fault::thrown(class, message.clone())),
                other => Err(Fault::cast(format!(
                    "`throw` takes an exception, got a {}",
                    other.class()
                ))),
            },
            Val::Null => Err(Fault::npe("`throw null`")),
            other => Err(Fault::cast(format!(
                "`throw` takes an exception, got a {}",
                other.type_name()
            ))),
        }
    }

    fn for_each(&mut self, name: &str, list: &Expr, body: &[Stmt]) -> Result<Flow, Fault> {
        let items = match self.eval(list)? {
            // The items as the loop starts: a change the body makes is not looped over.
            Val::List(l) => l.snapshot(),
            Val::Doc(l) => l,
            Val::Map(m) => {
                m.0.borrow()
                    .iter()
                    .map(|(k, _)| Val::Str(k.clone()))
                    .collect()
            }
            Val::Obj(o) => match o.items()? {
                Val::List(l) => l.snapshot(),
                _ => Vec::new(),
            },
            Val::Null => return Err(Fault::npe("cannot loop over null")),
            other => {
                return Err(Fault::cast(format!(
                    "cannot loop over a {}",
                    other.type_name()
                )))
            }
        };
        for item in items {
            self.scopes
                .push(vec![(name.to_string(), item, Declared::Any)]);
            let flow = self.block(body);
            self.scopes.pop();
            match flow? {
                Flow::Break => break,
                Flow::Return(v) => return Ok(Flow::Return(v)),
                Flow::Normal | Flow::Continue => {}
            }
        }
        Ok(Flow::Normal)
    }

    fn for_loop(
        &mut self,
        init: &[Stmt],
        cond: Option<&Expr>,
        update: &[Stmt],
        body: &[Stmt],
    ) -> Result<Flow, Fault> {
        for s in init {
            self.stmt(s)?;
        }
        loop {
            self.step()?;
            if let Some(c) = cond {
                if !self.truth(c)? {
                    return Ok(Flow::Normal);
                }
            }
            match self.block(body)? {
                Flow::Break => return Ok(Flow::Normal),
                Flow::Return(v) => return Ok(Flow::Return(v)),
                Flow::Normal | Flow::Continue => {}
            }
            for s in update {
                self.stmt(s)?;
            }
        }
    }

    fn var(&self, name: &str) -> Option<&Val> {
        self.scopes.iter().rev().find_map(|s| {
            s.iter()
                .rev()
                .find(|(n, _, _)| n == name)
                .map(|(_, v, _)| v)
        })
    }

    /// A variable of the script's context, as the script left it.
    pub fn take(&mut self, name: &str) -> Option<Val> {
        self.scopes.iter_mut().rev().find_map(|s| {
            s.iter_mut()
                .rev()
                .find(|(n, _, _)| n == name)
                .map(|(_, v, _)| std::mem::replace(v, Val::Null))
        })
    }

    fn assign(&mut self, target: &Expr, v: Val) -> Result<(), Fault> {
        match target {
            Expr::Var(name) => {
                let slot = self.scopes.iter_mut().rev().find_map(|s| {
                    s.iter_mut()
                        .rev()
                        .find(|(n, _, _)| n == name)
                        .map(|(_, v, d)| (v, *d))
                });
                let Some((slot, declared)) = slot else {
                    return Err(format!("cannot assign to `{name}`, which is not declared").into());
                };
                *slot = declared.coerce(v)?;
                Ok(())
            }
            // The list or map is changed where it is: every name reaching it sees the change.
            Expr::Field(base, name) => {
                let b = self.eval(base)?;
                lib::set_index(&b, Val::Str(name.clone()), v)
            }
            Expr::Index(base, key) => {
                let b = self.eval(base)?;
                let k = self.eval(key)?;
                lib::set_index(&b, k, v)
            }
            _ => Err(
                "the engine's Painless subset assigns to variables and their entries only".into(),
            ),
        }
    }

    fn truth(&mut self, e: &Expr) -> Result<bool, Fault> {
        match self.eval(e)? {
            Val::Bool(b) => Ok(b),
            Val::Null => Err(Fault::npe("a condition is null")),
            other => Err(Fault::cast(format!(
                "a condition must be a boolean, got a {}",
                other.type_name()
            ))),
        }
    }

    pub fn eval(&mut self, e: &Expr) -> Result<Val, Fault> {
        self.step()?;
        Ok(match e {
            Expr::Null => Val::Null,
            Expr::Bool(b) => Val::Bool(*b),
            Expr::Int(i) => Val::Int(*i),
            Expr::Float(f) => Val::Float(*f),
            Expr::Str(s) => Val::Str(s.clone()),
            Expr::Var(name) => match self.var(name) {
                Some(v) => v.clone(),
                None => return Err(format!("variable `{name}` is not defined").into()),
            },
            Expr::ListLit(items) => Val::list(self.eval_all(items)?),
            Expr::MapLit(pairs) => {
                let m = super::val::MapRef::default();
                for (k, v) in pairs {
                    let k = lib::key_text(&self.eval(k)?)?;
                    let v = self.eval(v)?;
                    m.put(k, v)?;
                }
                Val::Map(m)
            }
            Expr::Neg(inner) => match self.eval(inner)? {
                Val::Int(i) => Val::Int(i.wrapping_neg()),
                Val::Float(f) => Val::Float(-f),
                Val::Null => return Err(Fault::npe("cannot negate null")),
                other => {
                    return Err(Fault::cast(format!(
                        "cannot negate a {}",
                        other.type_name()
                    )))
                }
            },
            Expr::Not(inner) => Val::Bool(!self.truth(inner)?),
            Expr::Bin(super::ast::BinOp::And, a, b) => Val::Bool(self.truth(a)? && self.truth(b)?),
            Expr::Bin(super::ast::BinOp::Or, a, b) => Val::Bool(self.truth(a)? || self.truth(b)?),
            Expr::Bin(op, a, b) => {
                let (a, b) = (self.eval(a)?, self.eval(b)?);
                lib::binary(*op, a, b)?
            }
            Expr::If(c, a, b) => match self.truth(c)? {
                true => self.eval(a)?,
                false => self.eval(b)?,
            },
            Expr::Cast(t, inner) => lib::cast(t, self.eval(inner)?)?,
            Expr::Index(base, key) => return self.index(base, key),
            Expr::Field(base, name) => return self.field(base, name),
            Expr::Method(base, name, args) => return self.method(base, name, args),
            Expr::Call(name, args) => return self.call(name, args),
            Expr::NullSafe(base, name, args) => return self.null_safe(base, name, args.as_deref()),
            Expr::New(t, args) => {
                let args = self.eval_all(args)?;
                lib::construct(t, &args)?
            }
            Expr::InstanceOf(inner, class) => Val::Bool(self.eval(inner)?.instance_of(class)?),
            Expr::Lambda(l) => obj(Obj::Lambda(l.clone())),
            Expr::Regex(r) => obj(Obj::Pattern(r.clone())),
        })
    }

    fn eval_all(&mut self, items: &[Expr]) -> Result<Vec<Val>, Fault> {
        items.iter().map(|i| self.eval(i)).collect()
    }

    fn index(&mut self, base: &Expr, key: &Expr) -> Result<Val, Fault> {
        if matches!(base, Expr::Var(d) if d == "doc") && self.var("doc").is_none() {
            let field = lib::key_text(&self.eval(key)?)?;
            let values = self.host.doc(&field).map_err(Fault::arg)?;
            if self.expression {
                // A Lucene expression reads a field's (first) value, 0 when it has none.
                return Ok(match values {
                    Val::Doc(v) => v.into_iter().next().unwrap_or(Val::Float(0.0)),
                    other => other,
                });
            }
            return Ok(values);
        }
        let k = self.eval(key)?;
        // A variable is read in place, not copied (`params.x` per document).
        if let Expr::Var(name) = base {
            if let Some(v) = self.var(name) {
                return lib::index(v, &k);
            }
        }
        let b = self.eval(base)?;
        lib::index(&b, &k)
    }

    fn field(&mut self, base: &Expr, name: &str) -> Result<Val, Fault> {
        if let Expr::Var(class) = base {
            if class == "doc" && self.var("doc").is_none() {
                return self.host.doc(name).map_err(Fault::arg);
            }
            return match self.var(class) {
                None => lib::static_field(class, name),
                Some(v) => lib::field(v, name),
            };
        }
        let b = self.eval(base)?;
        lib::field(&b, name)
    }

    fn method(&mut self, base: &Expr, name: &str, args: &[Expr]) -> Result<Val, Fault> {
        if let Expr::Var(class) = base {
            if self.var(class).is_none() {
                let args = self.eval_all(args)?;
                if class == "doc" {
                    let field = lib::key_text(args.first().ok_or("`doc.get` takes a field name")?)?;
                    return match name {
                        "get" => self.host.doc(&field).map_err(Fault::arg),
                        "containsKey" => Ok(Val::Bool(self.host.maps(&field))),
                        other => Err(format!(
                            "`doc.{other}` is not in the engine's Painless subset"
                        )
                        .into()),
                    };
                }
                return lib::static_call(class, name, &args);
            }
        }
        let b = self.eval(base)?;
        let args = self.eval_all(args)?;
        self.call_method(&b, name, args)
    }

    /// A method on a value: one taking a lambda runs here, the others in `lib`.
    fn call_method(&mut self, b: &Val, name: &str, args: Vec<Val>) -> Result<Val, Fault> {
        let lambda = args
            .iter()
            .any(|a| matches!(a, Val::Obj(o) if matches!(**o, Obj::Lambda(_))));
        if lambda {
            return self.higher(b, name, args);
        }
        lib::method(b, name, &args)
    }

    fn call(&mut self, name: &str, args: &[Expr]) -> Result<Val, Fault> {
        let args = self.eval_all(args)?;
        if self.expression && super::EXPRESSION_FUNCTIONS.contains(&name) {
            let math = if name == "ln" { "log" } else { name };
            return lib::static_call("Math", math, &args);
        }
        let functions = self.functions;
        if let Some(f) = functions
            .iter()
            .find(|f| f.name == name && f.params.len() == args.len())
        {
            return self.call_function(f, args);
        }
        match self.host.call(name, &args) {
            Some(r) => r.map_err(Fault::arg),
            None => Err(format!(
                "function `{name}` is not in the engine's Painless subset for this context"
            )
            .into()),
        }
    }

    fn enter(&mut self) -> Result<(), Fault> {
        self.calls += 1;
        if self.calls > MAX_CALL_DEPTH {
            return Err(Fault::halt(format!(
                "calls nest more than {MAX_CALL_DEPTH} deep"
            )));
        }
        Ok(())
    }

    /// A function of the script: its own scope (it sees only its parameters, as in
    /// Painless), its declared return type.
    fn call_function(&mut self, f: &Function, args: Vec<Val>) -> Result<Val, Fault> {
        self.enter()?;
        let mut scope = Vec::with_capacity(args.len());
        for ((kind, name), v) in f.params.iter().zip(args) {
            let declared = Declared::of(kind);
            scope.push((name.clone(), declared.coerce(v)?, declared));
        }
        let outer = std::mem::replace(&mut self.scopes, vec![scope]);
        let flow = self.block(&f.body);
        self.scopes = outer;
        self.calls -= 1;
        let out = match flow? {
            Flow::Return(v) => v,
            Flow::Normal => Val::Null,
            Flow::Break | Flow::Continue => {
                return Err("`break` or `continue` outside a loop".into())
            }
        };
        Declared::of(&f.returns).coerce(out)
    }

    /// A lambda, its parameters bound over the scopes where it is called (which are those
    /// where it was written: the subset passes lambdas only to the method called there).
    fn call_lambda(&mut self, f: &Lambda, args: Vec<Val>) -> Result<Val, Fault> {
        if f.params.len() != args.len() {
            return Err(Fault::arg(format!(
                "a lambda of {} parameter(s) called with {}",
                f.params.len(),
                args.len()
            )));
        }
        self.enter()?;
        let depth = self.scopes.len();
        self.scopes.push(
            f.params
                .iter()
                .cloned()
                .zip(args)
                .map(|(n, v)| (n, v, Declared::Any))
                .collect(),
        );
        let flow = self.block(&f.body);
        self.scopes.truncate(depth);
        self.calls -= 1;
        match flow? {
            Flow::Return(v) => Ok(v),
            Flow::Normal => Ok(Val::Null),
            Flow::Break | Flow::Continue => Err("`break` or `continue` outside a loop".into()),
        }
    }

    fn null_safe(&mut self, base: &Expr, name: &str, args: Option<&[Expr]>) -> Result<Val, Fault> {
        let b = self.eval(base)?;
        if b == Val::Null {
            return Ok(Val::Null);
        }
        match args {
            None => lib::field(&b, name),
            Some(args) => {
                let args = self.eval_all(args)?;
                self.call_method(&b, name, args)
            }
        }
    }
}
