//! The Painless a `script_score` over vectors is written in: arithmetic on numbers, `params`,
//! `_score`, `Math.*`, `sigmoid`/`saturation`, and the vector functions (`cosineSimilarity`,
//! `dotProduct`, `l1norm`, `l2norm`) of a query vector and a field. Parsed once, before the
//! race; anything else is refused, naming the construct.

use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Num(f64),
    Param(String),
    Score,
    Neg(Box<Expr>),
    Bin(char, Box<Expr>, Box<Expr>),
    Math(MathFn, Vec<Expr>),
    /// A vector function: of a query vector (a param's name) and a field.
    Vector(VectorFn, String, String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VectorFn {
    Cosine,
    Dot,
    L1,
    L2,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MathFn {
    Max,
    Min,
    Sqrt,
    Log,
    Log10,
    Exp,
    Abs,
    Pow,
    Sigmoid,
    Saturation,
}

impl MathFn {
    fn parse(name: &str) -> Option<(MathFn, usize)> {
        Some(match name {
            "Math.max" => (MathFn::Max, 2),
            "Math.min" => (MathFn::Min, 2),
            "Math.sqrt" => (MathFn::Sqrt, 1),
            "Math.log" => (MathFn::Log, 1),
            "Math.log10" => (MathFn::Log10, 1),
            "Math.exp" => (MathFn::Exp, 1),
            "Math.abs" => (MathFn::Abs, 1),
            "Math.pow" => (MathFn::Pow, 2),
            "sigmoid" => (MathFn::Sigmoid, 3),
            "saturation" => (MathFn::Saturation, 2),
            _ => return None,
        })
    }

    fn apply(self, a: &[f64]) -> f64 {
        match self {
            MathFn::Max => a[0].max(a[1]),
            MathFn::Min => a[0].min(a[1]),
            MathFn::Sqrt => a[0].sqrt(),
            MathFn::Log => a[0].ln(),
            MathFn::Log10 => a[0].log10(),
            MathFn::Exp => a[0].exp(),
            MathFn::Abs => a[0].abs(),
            MathFn::Pow => a[0].powf(a[1]),
            MathFn::Sigmoid => a[0].powf(a[2]) / (a[1].powf(a[2]) + a[0].powf(a[2])),
            MathFn::Saturation => a[0] / (a[1] + a[0]),
        }
    }
}

/// A parsed script with its params.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    pub expr: Expr,
    pub params: Map<String, Value>,
}

const SUBSET: &str = "the embedded engine runs arithmetic, params, _score, Math.*, sigmoid, saturation, and cosineSimilarity/dotProduct/l1norm/l2norm of a query vector and a field";

impl Script {
    /// A `script` object (`source`, `params`, `lang`) or a bare source string.
    pub fn parse(v: &Value) -> Result<Script, String> {
        let (source, params) = match v {
            Value::String(s) => (s.as_str(), Map::new()),
            Value::Object(o) => {
                if let Some(lang) = o.get("lang").and_then(Value::as_str) {
                    if lang != "painless" {
                        return Err(format!(
                            "script lang [{lang}] is not run by the embedded engine (painless)"
                        ));
                    }
                }
                if o.contains_key("id") {
                    return Err("stored scripts (`id`) are not run by the embedded engine".into());
                }
                let source = o
                    .get("source")
                    .and_then(Value::as_str)
                    .ok_or("a script needs a `source`")?;
                let params = o
                    .get("params")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                (source, params)
            }
            other => return Err(format!("a script is an object or a string, got {other}")),
        };
        let mut p = Parser {
            s: source.trim().trim_end_matches(';').as_bytes(),
            at: 0,
            source,
            depth: 0,
        };
        let expr = p.expr()?;
        p.skip_ws();
        if p.at < p.s.len() {
            return Err(p.refuse());
        }
        let script = Script { expr, params };
        script.check_params(&script.expr)?;
        Ok(script)
    }

    fn check_params(&self, e: &Expr) -> Result<(), String> {
        match e {
            Expr::Param(p) => match self.params.get(p) {
                Some(v) if v.is_number() => Ok(()),
                Some(_) => Err(format!(
                    "script param [{p}] is used as a number but is not one"
                )),
                None => Err(format!("script param [{p}] is not in `params`")),
            },
            Expr::Vector(_, p, _) => match self.params.get(p) {
                Some(Value::Array(_)) => Ok(()),
                _ => Err(format!(
                    "script param [{p}] must be a vector (an array of numbers)"
                )),
            },
            Expr::Neg(a) => self.check_params(a),
            Expr::Bin(_, a, b) => self.check_params(a).and(self.check_params(b)),
            Expr::Math(_, args) => args.iter().try_for_each(|a| self.check_params(a)),
            Expr::Num(_) | Expr::Score => Ok(()),
        }
    }

    /// The vector fields the script reads, with the param holding each query vector.
    pub fn vectors(&self) -> Vec<(String, String)> {
        fn walk(e: &Expr, out: &mut Vec<(String, String)>) {
            match e {
                Expr::Vector(_, p, f) => {
                    if !out.iter().any(|(pp, ff)| pp == p && ff == f) {
                        out.push((p.clone(), f.clone()))
                    }
                }
                Expr::Neg(a) => walk(a, out),
                Expr::Bin(_, a, b) => {
                    walk(a, out);
                    walk(b, out)
                }
                Expr::Math(_, args) => args.iter().for_each(|a| walk(a, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        walk(&self.expr, &mut out);
        out
    }
}

/// What a script reads of one document.
pub trait DocValues {
    fn number(&self, param: &str) -> f64;
    /// The vector function of the query vector in `param` and the document's `field`; None
    /// when the document has no vector there.
    fn vector(&self, f: VectorFn, param: &str, field: &str) -> Option<f64>;
}

pub fn eval(e: &Expr, score: f64, doc: &dyn DocValues) -> Option<f64> {
    Some(match e {
        Expr::Num(n) => *n,
        Expr::Param(p) => doc.number(p),
        Expr::Score => score,
        Expr::Neg(a) => -eval(a, score, doc)?,
        Expr::Bin(op, a, b) => {
            let (x, y) = (eval(a, score, doc)?, eval(b, score, doc)?);
            match op {
                '+' => x + y,
                '-' => x - y,
                '*' => x * y,
                _ => x / y,
            }
        }
        Expr::Math(f, args) => {
            let mut vals = [0f64; 3];
            for (slot, a) in vals.iter_mut().zip(args) {
                *slot = eval(a, score, doc)?;
            }
            f.apply(&vals[..args.len()])
        }
        Expr::Vector(f, p, field) => doc.vector(*f, p, field)?,
    })
}

/// A vector function over two vectors of the same length.
pub fn vector_fn(f: VectorFn, q: &[f32], v: &[f32]) -> f64 {
    use super::points::{dot, l2_squared};
    match f {
        VectorFn::Dot => dot(q, v) as f64,
        VectorFn::Cosine => {
            let n = (dot(q, q) * dot(v, v)).sqrt();
            if n > 0.0 {
                (dot(q, v) / n) as f64
            } else {
                0.0
            }
        }
        VectorFn::L1 => q.iter().zip(v).map(|(a, b)| (a - b).abs() as f64).sum(),
        VectorFn::L2 => (l2_squared(q, v) as f64).sqrt(),
    }
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
    source: &'a str,
    /// How deep the expression being read is nested: bounded, so that a hostile script
    /// cannot exhaust the stack.
    depth: usize,
}

/// The deepest nesting of parentheses, signs and calls a script may have.
const MAX_DEPTH: usize = 64;

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.at < self.s.len() && self.s[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.at).copied()
    }

    fn refuse(&self) -> String {
        let rest = String::from_utf8_lossy(&self.s[self.at.min(self.s.len())..]);
        let near: String = rest.chars().take(30).collect();
        format!(
            "script `{}`: `{near}` is outside the Painless the embedded engine runs ({SUBSET})",
            self.source
        )
    }

    fn expr(&mut self) -> Result<Expr, String> {
        let mut left = self.term()?;
        while let Some(op @ (b'+' | b'-')) = self.peek() {
            self.at += 1;
            left = Expr::Bin(op as char, Box::new(left), Box::new(self.term()?));
        }
        Ok(left)
    }

    fn term(&mut self) -> Result<Expr, String> {
        let mut left = self.factor()?;
        while let Some(op @ (b'*' | b'/')) = self.peek() {
            self.at += 1;
            left = Expr::Bin(op as char, Box::new(left), Box::new(self.factor()?));
        }
        Ok(left)
    }

    fn factor(&mut self) -> Result<Expr, String> {
        if self.depth >= MAX_DEPTH {
            return Err(format!(
                "script `{}`: nested more than {MAX_DEPTH} deep",
                self.source
            ));
        }
        self.depth += 1;
        let factor = self.factor_inner();
        self.depth -= 1;
        factor
    }

    fn factor_inner(&mut self) -> Result<Expr, String> {
        match self.peek() {
            Some(b'-') => {
                self.at += 1;
                Ok(Expr::Neg(Box::new(self.factor()?)))
            }
            Some(b'(') => {
                self.at += 1;
                let e = self.expr()?;
                self.expect(b')')?;
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() || c == b'.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => self.name(),
            _ => Err(self.refuse()),
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.peek() == Some(c) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.refuse())
        }
    }

    fn number(&mut self) -> Result<Expr, String> {
        let start = self.at;
        while self.at < self.s.len()
            && (self.s[self.at].is_ascii_digit() || b".eE".contains(&self.s[self.at]))
        {
            self.at += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.at]).unwrap_or_default();
        // Painless's float and double suffixes.
        if self.at < self.s.len() && b"fFdD".contains(&self.s[self.at]) {
            self.at += 1;
        }
        text.parse().map(Expr::Num).map_err(|_| self.refuse())
    }

    fn ident(&mut self) -> String {
        let start = self.at;
        while self.at < self.s.len()
            && (self.s[self.at].is_ascii_alphanumeric() || b"_.".contains(&self.s[self.at]))
        {
            self.at += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.at]).into_owned()
    }

    fn name(&mut self) -> Result<Expr, String> {
        let start = self.at;
        let name = self.ident();
        if name == "_score" {
            return Ok(Expr::Score);
        }
        if let Some(p) = name.strip_prefix("params.") {
            return Ok(Expr::Param(p.to_string()));
        }
        let vector = match name.as_str() {
            "cosineSimilarity" => Some(VectorFn::Cosine),
            "dotProduct" => Some(VectorFn::Dot),
            "l1norm" => Some(VectorFn::L1),
            "l2norm" => Some(VectorFn::L2),
            _ => None,
        };
        if let Some(f) = vector {
            self.expect(b'(')?;
            self.skip_ws();
            let param = self.ident();
            let Some(param) = param.strip_prefix("params.").map(str::to_string) else {
                self.at = start;
                return Err(self.refuse());
            };
            self.expect(b',')?;
            let field = self.field()?;
            self.expect(b')')?;
            return Ok(Expr::Vector(f, param, field));
        }
        let Some((f, arity)) = MathFn::parse(&name) else {
            self.at = start;
            return Err(self.refuse());
        };
        self.expect(b'(')?;
        let mut args = vec![self.expr()?];
        while self.peek() == Some(b',') {
            self.at += 1;
            args.push(self.expr()?);
        }
        self.expect(b')')?;
        if args.len() != arity {
            return Err(format!(
                "script `{}`: {name} takes {arity} arguments, not {}",
                self.source,
                args.len()
            ));
        }
        Ok(Expr::Math(f, args))
    }

    /// `'field'`, `"field"` or `doc['field']`.
    fn field(&mut self) -> Result<String, String> {
        if self.peek() == Some(b'd') {
            let save = self.at;
            if self.ident() != "doc" {
                self.at = save;
                return Err(self.refuse());
            }
            self.expect(b'[')?;
            let f = self.quoted()?;
            self.expect(b']')?;
            return Ok(f);
        }
        self.quoted()
    }

    fn quoted(&mut self) -> Result<String, String> {
        let Some(q @ (b'\'' | b'"')) = self.peek() else {
            return Err(self.refuse());
        };
        self.at += 1;
        let start = self.at;
        while self.at < self.s.len() && self.s[self.at] != q {
            self.at += 1;
        }
        let f = String::from_utf8_lossy(&self.s[start..self.at]).into_owned();
        self.expect(q)?;
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct One;
    impl DocValues for One {
        fn number(&self, _: &str) -> f64 {
            2.0
        }
        fn vector(&self, f: VectorFn, _: &str, _: &str) -> Option<f64> {
            Some(vector_fn(f, &[1.0, 0.0], &[0.0, 1.0]))
        }
    }

    #[test]
    fn runs_the_scripts_vector_tracks_write() {
        for (src, want) in [
            ("cosineSimilarity(params.query, 'vector') + 1.0", 1.0),
            ("dotProduct(params.query, doc['vector']) * params.w", 0.0),
            (
                "1 / (1 + l2norm(params.query, 'vector'))",
                1.0 / (1.0 + 2f64.sqrt()),
            ),
            ("Math.max(l1norm(params.query, \"vector\"), 0.5) - -1;", 3.0),
            ("sigmoid(_score, 2, 1)", 0.6),
        ] {
            let s = Script::parse(&json!({"source": src, "params": {"query": [1, 0], "w": 3}}))
                .unwrap();
            let got = eval(&s.expr, 3.0, &One).unwrap();
            assert!((got - want).abs() < 1e-9, "{src}: {got}");
        }
    }

    #[test]
    fn refuses_what_it_does_not_run_naming_it() {
        for (src, named) in [
            ("doc['price'].value * 2", "doc['price'].value"),
            (
                "cosineSimilarity(params.q, 'v') + decayNumericGauss(1, 2, 3, 4, 5)",
                "decayNumericGauss",
            ),
            ("if (x) { return 1 }", "if (x)"),
        ] {
            let e = Script::parse(&json!({"source": src, "params": {"q": [1]}})).unwrap_err();
            assert!(e.contains(named), "{src}: {e}");
        }
        assert!(Script::parse(&json!({"source": "params.missing"}))
            .unwrap_err()
            .contains("missing"));
        let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(Script::parse(&json!({ "source": deep }))
            .unwrap_err()
            .contains("nested more than"));
        assert!(Script::parse(&json!({"source": "1", "lang": "expression"}))
            .unwrap_err()
            .contains("expression"));
    }
}
