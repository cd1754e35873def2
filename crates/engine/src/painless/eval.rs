//! Running a parsed Painless script: values as Painless has them (integers stay integers,
//! `int / int` divides as Java does, a string `+` anything concatenates), variables in nested
//! scopes, and what the context gives (`params`, `doc`, `_score`, functions) through [`Host`].
//! A run is bounded in steps, so a loop cannot hang a search.

use super::ast::{BinOp, Expr, Stmt};
use super::lib;
use serde_json::Value;

/// Statements and expressions one run may take.
const MAX_STEPS: u64 = 1_000_000;

#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Val>),
    /// In insertion order.
    Map(Vec<(String, Val)>),
    /// A field's values in one document (`doc['f']`).
    Doc(Vec<Val>),
    /// A date's value (epoch milliseconds, UTC), as Painless's `ZonedDateTime`.
    Date(i64),
    /// A geo point: latitude, longitude.
    Geo(f64, f64),
    /// A geo_shape's value as a script sees it (`ScriptDocValues.Geometry`).
    Shape(Box<ShapeVal>),
}

/// What a script reads of a shape: its box, centroid and highest dimension.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeVal {
    pub west: f64,
    pub east: f64,
    pub south: f64,
    pub north: f64,
    /// Latitude, longitude.
    pub centroid: (f64, f64),
    /// `POINT`, `LINE` or `POLYGON`.
    pub dimension: &'static str,
}

impl Val {
    pub fn from_json(v: &Value) -> Val {
        match v {
            Value::Null => Val::Null,
            Value::Bool(b) => Val::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Val::Int(i),
                None => Val::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => Val::Str(s.clone()),
            Value::Array(a) => Val::List(a.iter().map(Val::from_json).collect()),
            Value::Object(o) => Val::Map(
                o.iter()
                    .map(|(k, v)| (k.clone(), Val::from_json(v)))
                    .collect(),
            ),
        }
    }

    pub fn to_json(&self) -> Value {
        match self {
            Val::Null => Value::Null,
            Val::Bool(b) => Value::Bool(*b),
            Val::Int(i) => Value::from(*i),
            Val::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Val::Str(s) => Value::String(s.clone()),
            Val::List(l) | Val::Doc(l) => Value::Array(l.iter().map(Val::to_json).collect()),
            Val::Map(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()),
            Val::Date(ms) => Value::String(crate::zone::Zone::utc().format(*ms)),
            Val::Geo(lat, lon) => serde_json::json!({"lat": lat, "lon": lon}),
            Val::Shape(s) => serde_json::json!({"type": "envelope",
                "coordinates": [[s.west, s.north], [s.east, s.south]]}),
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Val::Int(i) => Some(*i as f64),
            Val::Float(f) => Some(*f),
            _ => None,
        }
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            Val::Null => "null",
            Val::Bool(_) => "boolean",
            Val::Int(_) => "long",
            Val::Float(_) => "double",
            Val::Str(_) => "String",
            Val::List(_) => "List",
            Val::Map(_) => "Map",
            Val::Doc(_) => "ScriptDocValues",
            Val::Date(_) => "ZonedDateTime",
            Val::Geo(..) => "GeoPoint",
            Val::Shape(_) => "GeoShapeValue",
        }
    }
}

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
}

impl Declared {
    fn of(kind: &str) -> Declared {
        match kind {
            "int" | "long" | "short" | "byte" => Declared::Whole,
            "double" | "float" => Declared::Real,
            _ => Declared::Any,
        }
    }

    fn coerce(self, v: Val) -> Val {
        match (self, v) {
            (Declared::Real, Val::Int(i)) => Val::Float(i as f64),
            (Declared::Whole, Val::Float(f)) => Val::Int(f as i64),
            (_, v) => v,
        }
    }
}

pub struct Run<'a> {
    /// Evaluating a Lucene expression: `doc['f']` is its value, functions are Math's.
    pub expression: bool,
    scopes: Vec<Vec<(String, Val, Declared)>>,
    host: &'a mut dyn Host,
    steps: u64,
}

impl<'a> Run<'a> {
    pub fn new(vars: Vec<(String, Val)>, host: &'a mut dyn Host) -> Run<'a> {
        Run {
            expression: false,
            scopes: vec![vars
                .into_iter()
                .map(|(n, v)| (n, v, Declared::Any))
                .collect()],
            host,
            steps: 0,
        }
    }

    /// Runs the statements: the value of a `return`, else of the last expression statement.
    pub fn script(&mut self, stmts: &[Stmt]) -> Result<Val, String> {
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

    fn step(&mut self) -> Result<(), String> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(format!("the script ran more than {MAX_STEPS} steps"));
        }
        Ok(())
    }

    fn block(&mut self, stmts: &[Stmt]) -> Result<Flow, String> {
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

    fn stmt(&mut self, s: &Stmt) -> Result<Flow, String> {
        self.step()?;
        match s {
            Stmt::Let(kind, name, value) => {
                let declared = Declared::of(kind);
                let v = match value {
                    Some(e) => declared.coerce(self.eval(e)?),
                    None if declared == Declared::Any => Val::Null,
                    None => declared.coerce(Val::Int(0)),
                };
                self.scopes
                    .last_mut()
                    .expect("a scope")
                    .push((name.clone(), v, declared));
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
            Stmt::ForEach(name, list, body) => {
                let items = match self.eval(list)? {
                    Val::List(l) | Val::Doc(l) => l,
                    Val::Map(m) => m.into_iter().map(|(k, _)| Val::Str(k)).collect(),
                    other => return Err(format!("cannot loop over a {}", other.type_name())),
                };
                for item in items {
                    self.scopes.push(vec![(name.clone(), item, Declared::Any)]);
                    let flow = self.block(body);
                    self.scopes.pop();
                    match flow? {
                        Flow::Break => break,
                        Flow::Return(v) => return Ok(Flow::Return(v)),
                        Flow::Normal | Flow::Continue => {}
                    }
                }
            }
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
        }
        Ok(Flow::Normal)
    }

    fn for_loop(
        &mut self,
        init: &[Stmt],
        cond: Option<&Expr>,
        update: &[Stmt],
        body: &[Stmt],
    ) -> Result<Flow, String> {
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
        self.slot(name)
            .map(|(v, _)| std::mem::replace(v, Val::Null))
    }

    fn slot(&mut self, name: &str) -> Option<(&mut Val, Declared)> {
        self.scopes.iter_mut().rev().find_map(|s| {
            s.iter_mut()
                .rev()
                .find(|(n, _, _)| n == name)
                .map(|(_, v, d)| (v, *d))
        })
    }

    /// The variable and the entries below it that `target` names (`ctx.a['b'].c`).
    fn path(&mut self, target: &Expr) -> Result<(String, Vec<Val>), String> {
        match target {
            Expr::Var(name) => Ok((name.clone(), Vec::new())),
            Expr::Field(base, field) => {
                let (root, mut keys) = self.path(base)?;
                keys.push(Val::Str(field.clone()));
                Ok((root, keys))
            }
            Expr::Index(base, key) => {
                let (root, mut keys) = self.path(base)?;
                keys.push(self.eval(key)?);
                Ok((root, keys))
            }
            _ => Err(
                "the engine's Painless subset assigns to variables and their entries only".into(),
            ),
        }
    }

    /// The value at a path, to change in place.
    fn place(&mut self, root: &str, keys: &[Val]) -> Result<(&mut Val, Declared), String> {
        let (mut at, declared) = self
            .slot(root)
            .ok_or_else(|| format!("cannot assign to `{root}`, which is not declared"))?;
        for k in keys {
            at = lib::entry_mut(at, k)?;
        }
        Ok((at, declared))
    }

    fn assign(&mut self, target: &Expr, v: Val) -> Result<(), String> {
        let (root, mut keys) = self.path(target)?;
        match keys.pop() {
            None => {
                let (slot, declared) = self.place(&root, &[])?;
                *slot = declared.coerce(v);
                Ok(())
            }
            Some(last) => {
                let (slot, _) = self.place(&root, &keys)?;
                lib::set_index(slot, last, v)
            }
        }
    }

    fn truth(&mut self, e: &Expr) -> Result<bool, String> {
        match self.eval(e)? {
            Val::Bool(b) => Ok(b),
            other => Err(format!(
                "a condition must be a boolean, got a {}",
                other.type_name()
            )),
        }
    }

    pub fn eval(&mut self, e: &Expr) -> Result<Val, String> {
        self.step()?;
        Ok(match e {
            Expr::Null => Val::Null,
            Expr::Bool(b) => Val::Bool(*b),
            Expr::Int(i) => Val::Int(*i),
            Expr::Float(f) => Val::Float(*f),
            Expr::Str(s) => Val::Str(s.clone()),
            Expr::Var(name) => match self.var(name) {
                Some(v) => v.clone(),
                None => return Err(format!("variable `{name}` is not defined")),
            },
            Expr::ListLit(items) => Val::List(
                items
                    .iter()
                    .map(|i| self.eval(i))
                    .collect::<Result<_, _>>()?,
            ),
            Expr::MapLit(pairs) => {
                let mut m = Vec::new();
                for (k, v) in pairs {
                    let k = lib::key_text(&self.eval(k)?)?;
                    let v = self.eval(v)?;
                    m.retain(|(old, _): &(String, Val)| *old != k);
                    m.push((k, v));
                }
                Val::Map(m)
            }
            Expr::Neg(inner) => match self.eval(inner)? {
                Val::Int(i) => Val::Int(i.wrapping_neg()),
                Val::Float(f) => Val::Float(-f),
                other => return Err(format!("cannot negate a {}", other.type_name())),
            },
            Expr::Not(inner) => Val::Bool(!self.truth(inner)?),
            Expr::Bin(BinOp::And, a, b) => Val::Bool(self.truth(a)? && self.truth(b)?),
            Expr::Bin(BinOp::Or, a, b) => Val::Bool(self.truth(a)? || self.truth(b)?),
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
                let args: Vec<Val> = args
                    .iter()
                    .map(|a| self.eval(a))
                    .collect::<Result<_, _>>()?;
                lib::construct(t, &args)?
            }
        })
    }

    fn index(&mut self, base: &Expr, key: &Expr) -> Result<Val, String> {
        if matches!(base, Expr::Var(d) if d == "doc") && self.var("doc").is_none() {
            let field = lib::key_text(&self.eval(key)?)?;
            let values = self.host.doc(&field)?;
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

    fn field(&mut self, base: &Expr, name: &str) -> Result<Val, String> {
        if let Expr::Var(class) = base {
            if class == "doc" && self.var("doc").is_none() {
                return self.host.doc(name);
            }
            return match self.var(class) {
                None => lib::static_field(class, name),
                Some(v) => lib::field(v, name),
            };
        }
        let b = self.eval(base)?;
        lib::field(&b, name)
    }

    fn method(&mut self, base: &Expr, name: &str, args: &[Expr]) -> Result<Val, String> {
        let args: Vec<Val> = args
            .iter()
            .map(|a| self.eval(a))
            .collect::<Result<_, _>>()?;
        if let Expr::Var(class) = base {
            match self.var(class) {
                None if class == "doc" => {
                    let field = lib::key_text(args.first().ok_or("`doc.get` takes a field name")?)?;
                    return match name {
                        "get" => self.host.doc(&field),
                        "containsKey" => Ok(Val::Bool(self.host.maps(&field))),
                        other => Err(format!(
                            "`doc.{other}` is not in the engine's Painless subset"
                        )),
                    };
                }
                None => return lib::static_call(class, name, &args),
                Some(v) if !lib::mutates(name) => return lib::method(v, name, &args),
                Some(_) => {}
            }
        }
        // A method that changes its list or map changes it where it is.
        if lib::mutates(name) {
            if let Ok((root, keys)) = self.path(base) {
                let (slot, _) = self.place(&root, &keys)?;
                return lib::mutate(slot, name, &args);
            }
        }
        let b = self.eval(base)?;
        lib::method(&b, name, &args)
    }

    fn call(&mut self, name: &str, args: &[Expr]) -> Result<Val, String> {
        let args: Vec<Val> = args
            .iter()
            .map(|a| self.eval(a))
            .collect::<Result<_, _>>()?;
        if self.expression && super::EXPRESSION_FUNCTIONS.contains(&name) {
            let math = if name == "ln" { "log" } else { name };
            return lib::static_call("Math", math, &args);
        }
        match self.host.call(name, &args) {
            Some(r) => r,
            None => {
                return Err(format!(
                    "function `{name}` is not in the engine's Painless subset for this context"
                ))
            }
        }
    }

    fn null_safe(&mut self, base: &Expr, name: &str, args: Option<&[Expr]>) -> Result<Val, String> {
        let b = self.eval(base)?;
        if b == Val::Null {
            return Ok(Val::Null);
        }
        match args {
            None => lib::field(&b, name),
            Some(args) => {
                let args: Vec<Val> = args
                    .iter()
                    .map(|a| self.eval(a))
                    .collect::<Result<_, _>>()?;
                lib::method(&b, name, &args)
            }
        }
    }
}
