//! Painless source into statements: Java-like declarations (`def x = 1;`, `double w = ...`),
//! assignments (`=`, `+=`...), `if`/`else`, `for`, `for (x : list)`, `while`, `return`, and
//! expressions with Java's precedence (ternary, `||`, `&&`, comparisons, `+ - * / %`, unary,
//! casts, calls, members, indexes, `new ArrayList()`). What is not in the subset is refused
//! naming it, with its line and column.

use super::ast::{BinOp, Catch, Expr, Function, Lambda, Regex, Stmt};
use super::lex::{at, lex, Tok, TYPES};
use std::sync::Arc;

/// Scripts nest at most this deep (a hostile script cannot exhaust the stack).
const MAX_DEPTH: usize = 64;
/// And are at most this long.
pub const MAX_SOURCE: usize = 64 * 1024;

/// A script: the functions it declares first, then its statements.
pub fn parse(src: &str) -> Result<(Vec<Function>, Vec<Stmt>), String> {
    if src.len() > MAX_SOURCE {
        return Err(format!("a script is at most {MAX_SOURCE} bytes"));
    }
    let toks = lex(src)?;
    let mut p = Parser {
        src,
        toks,
        i: 0,
        depth: 0,
    };
    let mut functions = Vec::new();
    while let Some(f) = p.function()? {
        if functions
            .iter()
            .any(|g: &Function| g.name == f.name && g.params.len() == f.params.len())
        {
            return Err(format!(
                "function `{}` with {} parameter(s) is declared twice",
                f.name,
                f.params.len()
            ));
        }
        functions.push(f);
    }
    let mut out = Vec::new();
    while p.i < p.toks.len() {
        out.push(p.stmt()?);
    }
    Ok((functions, out))
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<(Tok, usize)>,
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i).map(|t| &t.0)
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.i + k).map(|t| &t.0)
    }

    fn err(&self, what: &str) -> String {
        let pos = self
            .toks
            .get(self.i)
            .map_or(self.src.chars().count(), |t| t.1);
        let found = match self.peek() {
            None => "the end".to_string(),
            Some(Tok::Num(n, _)) => format!("`{n}`"),
            Some(Tok::Str(s)) => format!("\"{s}\""),
            Some(Tok::Ident(s)) => format!("`{s}`"),
            Some(Tok::Op(o)) => format!("`{o}`"),
            Some(Tok::Regex(r, f)) => format!("/{r}/{f}"),
        };
        format!("{what}, found {found} (at {})", at(self.src, pos))
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(o)) if *o == op)
    }

    fn eat(&mut self, op: &str) -> bool {
        if self.is_op(op) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, op: &str) -> Result<(), String> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(self.err(&format!("expected `{op}`")))
        }
    }

    fn ident(&mut self) -> Result<String, String> {
        match self.peek() {
            Some(Tok::Ident(s)) => {
                let s = s.clone();
                self.i += 1;
                Ok(s)
            }
            _ => Err(self.err("expected a name")),
        }
    }

    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, String>) -> Result<T, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err(&format!("the script nests deeper than {MAX_DEPTH}")));
        }
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// Whether a declaration starts here: a type (possibly dotted or generic) then a name.
    fn declaration_len(&self) -> Option<usize> {
        let Some(Tok::Ident(first)) = self.peek() else {
            return None;
        };
        if !TYPES.contains(&first.as_str()) && !first.starts_with(char::is_uppercase) {
            return None;
        }
        let mut k = 1;
        while matches!(self.peek_at(k), Some(Tok::Op(".")))
            && matches!(self.peek_at(k + 1), Some(Tok::Ident(_)))
        {
            k += 2;
        }
        // `List<String>`, `double[]`.
        if matches!(self.peek_at(k), Some(Tok::Op("<"))) {
            let mut depth = 0;
            loop {
                match self.peek_at(k) {
                    Some(Tok::Op("<")) => depth += 1,
                    Some(Tok::Op(">")) => depth -= 1,
                    Some(Tok::Op(">>")) => depth -= 2,
                    Some(Tok::Ident(_) | Tok::Op(",")) => {}
                    _ => return None,
                }
                k += 1;
                if depth <= 0 {
                    break;
                }
            }
        }
        while matches!(self.peek_at(k), Some(Tok::Op("[")))
            && matches!(self.peek_at(k + 1), Some(Tok::Op("]")))
        {
            k += 2;
        }
        matches!(self.peek_at(k), Some(Tok::Ident(_))).then_some(k)
    }

    fn block_or_stmt(&mut self) -> Result<Vec<Stmt>, String> {
        if self.eat("{") {
            let mut out = Vec::new();
            while !self.eat("}") {
                if self.peek().is_none() {
                    return Err(self.err("expected `}`"));
                }
                out.push(self.stmt()?);
            }
            Ok(out)
        } else {
            Ok(vec![self.stmt()?])
        }
    }

    fn stmt(&mut self) -> Result<Stmt, String> {
        self.nested(|p| p.stmt_inner())
    }

    fn stmt_inner(&mut self) -> Result<Stmt, String> {
        if self.eat(";") {
            return Ok(Stmt::Block(Vec::new()));
        }
        if self.is_op("{") {
            return Ok(Stmt::Block(self.block_or_stmt()?));
        }
        if let Some(Tok::Ident(word)) = self.peek().cloned() {
            match word.as_str() {
                "if" => {
                    self.i += 1;
                    self.expect("(")?;
                    let cond = self.expr()?;
                    self.expect(")")?;
                    let then = self.block_or_stmt()?;
                    let otherwise = if matches!(self.peek(), Some(Tok::Ident(w)) if w == "else") {
                        self.i += 1;
                        self.block_or_stmt()?
                    } else {
                        Vec::new()
                    };
                    return Ok(Stmt::If(cond, then, otherwise));
                }
                "return" => {
                    self.i += 1;
                    let value = if self.is_op(";") || self.is_op("}") || self.peek().is_none() {
                        None
                    } else {
                        Some(self.expr()?)
                    };
                    self.eat(";");
                    return Ok(Stmt::Return(value));
                }
                "while" => {
                    self.i += 1;
                    self.expect("(")?;
                    let cond = self.expr()?;
                    self.expect(")")?;
                    let body = self.block_or_stmt()?;
                    return Ok(Stmt::For(Vec::new(), Some(cond), Vec::new(), body));
                }
                "for" => return self.for_stmt(),
                "break" => {
                    self.i += 1;
                    self.eat(";");
                    return Ok(Stmt::Break);
                }
                "continue" => {
                    self.i += 1;
                    self.eat(";");
                    return Ok(Stmt::Continue);
                }
                "try" => return self.try_stmt(),
                "throw" => {
                    self.i += 1;
                    let e = self.expr()?;
                    self.eat(";");
                    return Ok(Stmt::Throw(e));
                }
                "do" | "switch" | "class" | "instanceof" | "finally" => {
                    return Err(
                        self.err(&format!("`{word}` is not in the engine's Painless subset"))
                    )
                }
                _ => {}
            }
        }
        let s = self.simple_stmt()?;
        if !self.eat(";") && !self.is_op("}") && self.peek().is_some() {
            return Err(self.err("expected `;`"));
        }
        Ok(s)
    }

    /// A function declared before the statements: `boolean name(def a, Map b) { ... }`.
    fn function(&mut self) -> Result<Option<Function>, String> {
        let Some(k) = self.declaration_len() else {
            return Ok(None);
        };
        if !matches!(self.peek_at(k + 1), Some(Tok::Op("("))) {
            return Ok(None);
        }
        let Some(Tok::Ident(returns)) = self.peek().cloned() else {
            return Ok(None);
        };
        self.i += k;
        let name = self.ident()?;
        self.expect("(")?;
        let mut params = Vec::new();
        while !self.eat(")") {
            if !params.is_empty() {
                self.expect(",")?;
            }
            let Some(k) = self.declaration_len() else {
                return Err(self.err("expected a parameter's type and name"));
            };
            let Some(Tok::Ident(kind)) = self.peek().cloned() else {
                return Err(self.err("expected a parameter's type"));
            };
            self.i += k;
            params.push((kind, self.ident()?));
        }
        if !self.is_op("{") {
            return Err(self.err("expected a function's body"));
        }
        let body = self.block_or_stmt()?;
        Ok(Some(Function {
            name,
            returns,
            params,
            body,
        }))
    }

    /// `try { ... } catch (Exception e) { ... }`, one catch or more (Painless has no `finally`).
    fn try_stmt(&mut self) -> Result<Stmt, String> {
        self.i += 1;
        if !self.is_op("{") {
            return Err(self.err("expected `{` after `try`"));
        }
        let body = self.block_or_stmt()?;
        let mut catches = Vec::new();
        while matches!(self.peek(), Some(Tok::Ident(w)) if w == "catch") {
            self.i += 1;
            self.expect("(")?;
            let class = self.ident()?;
            if !super::fault::is_exception_class(&class) {
                return Err(self.err(&format!(
                    "`catch ({class} ...)`: `{class}` is not an exception class of the engine's Painless subset"
                )));
            }
            let var = self.ident()?;
            self.expect(")")?;
            if !self.is_op("{") {
                return Err(self.err("expected `{` after `catch (...)`"));
            }
            catches.push(Catch {
                class,
                var,
                body: self.block_or_stmt()?,
            });
        }
        if catches.is_empty() {
            return Err(self.err("a `try` needs a `catch`"));
        }
        Ok(Stmt::Try(body, catches))
    }

    fn for_stmt(&mut self) -> Result<Stmt, String> {
        self.i += 1;
        self.expect("(")?;
        // `for (def x : list)`, `for (x in list)`.
        if let Some(k) = self.declaration_len() {
            if matches!(self.peek_at(k + 1), Some(Tok::Op(":"))) {
                self.i += k;
                let name = self.ident()?;
                self.expect(":")?;
                let list = self.expr()?;
                self.expect(")")?;
                return Ok(Stmt::ForEach(name, list, self.block_or_stmt()?));
            }
        }
        if matches!((self.peek(), self.peek_at(1)), (Some(Tok::Ident(_)), Some(Tok::Ident(w))) if w == "in")
        {
            let name = self.ident()?;
            self.i += 1;
            let list = self.expr()?;
            self.expect(")")?;
            return Ok(Stmt::ForEach(name, list, self.block_or_stmt()?));
        }
        let mut init = Vec::new();
        while !self.eat(";") {
            init.push(self.simple_stmt()?);
            self.eat(",");
        }
        let cond = if self.is_op(";") {
            None
        } else {
            Some(self.expr()?)
        };
        self.expect(";")?;
        let mut update = Vec::new();
        while !self.eat(")") {
            update.push(self.simple_stmt()?);
            self.eat(",");
        }
        Ok(Stmt::For(init, cond, update, self.block_or_stmt()?))
    }

    /// A declaration, an assignment, or an expression.
    fn simple_stmt(&mut self) -> Result<Stmt, String> {
        if let Some(k) = self.declaration_len() {
            let Some(Tok::Ident(kind)) = self.peek().cloned() else {
                unreachable!("a declaration starts with its type")
            };
            self.i += k;
            let name = self.ident()?;
            let value = if self.eat("=") {
                Some(self.expr()?)
            } else {
                None
            };
            return Ok(Stmt::Let(kind, name, value));
        }
        for (op, bin) in [("++", BinOp::Add), ("--", BinOp::Sub)] {
            if self.eat(op) {
                let target = self.expr()?;
                let value = Expr::Bin(bin, Box::new(target.clone()), Box::new(Expr::Int(1)));
                return Ok(Stmt::Assign(target, value));
            }
        }
        let target = self.expr()?;
        if self.is_op("->") {
            return Err(self.err("lambdas are not in the engine's Painless subset"));
        }
        for (op, bin) in [
            ("=", None),
            ("+=", Some(BinOp::Add)),
            ("-=", Some(BinOp::Sub)),
            ("*=", Some(BinOp::Mul)),
            ("/=", Some(BinOp::Div)),
            ("%=", Some(BinOp::Rem)),
        ] {
            if self.eat(op) {
                let value = self.expr()?;
                let value = match bin {
                    Some(b) => Expr::Bin(b, Box::new(target.clone()), Box::new(value)),
                    None => value,
                };
                return Ok(Stmt::Assign(target, value));
            }
        }
        for (op, bin) in [("++", BinOp::Add), ("--", BinOp::Sub)] {
            if self.eat(op) {
                let value = Expr::Bin(bin, Box::new(target.clone()), Box::new(Expr::Int(1)));
                return Ok(Stmt::Assign(target, value));
            }
        }
        Ok(Stmt::Expr(target))
    }

    pub fn expr(&mut self) -> Result<Expr, String> {
        self.nested(|p| p.ternary())
    }

    fn ternary(&mut self) -> Result<Expr, String> {
        let cond = self.binary(0)?;
        if self.eat("?") {
            let a = self.expr()?;
            self.expect(":")?;
            let b = self.expr()?;
            return Ok(Expr::If(Box::new(cond), Box::new(a), Box::new(b)));
        }
        Ok(cond)
    }

    fn binary(&mut self, level: usize) -> Result<Expr, String> {
        const LEVELS: [&[(&str, BinOp)]; 6] = [
            &[("||", BinOp::Or)],
            &[("&&", BinOp::And)],
            &[
                ("==~", BinOp::Matches),
                ("=~", BinOp::Find),
                ("==", BinOp::Eq),
                ("!=", BinOp::Ne),
            ],
            &[
                ("<=", BinOp::Le),
                (">=", BinOp::Ge),
                ("<", BinOp::Lt),
                (">", BinOp::Gt),
            ],
            &[("+", BinOp::Add), ("-", BinOp::Sub)],
            &[("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Rem)],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        'outer: loop {
            for (op, bin) in LEVELS[level] {
                if self.eat(op) {
                    let right = self.nested(|p| p.binary(level + 1))?;
                    left = Expr::Bin(*bin, Box::new(left), Box::new(right));
                    continue 'outer;
                }
            }
            if level == 3 && matches!(self.peek(), Some(Tok::Ident(w)) if w == "instanceof") {
                self.i += 1;
                let mut class = self.ident()?;
                while self.eat(".") {
                    class = format!("{class}.{}", self.ident()?);
                }
                super::val::Val::Null
                    .instance_of(&class)
                    .map_err(|e| self.err(&e))?;
                left = Expr::InstanceOf(Box::new(left), class);
                continue 'outer;
            }
            return Ok(left);
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat("-") {
            return Ok(Expr::Neg(Box::new(self.nested(|p| p.unary())?)));
        }
        if self.eat("+") {
            return self.nested(|p| p.unary());
        }
        if self.eat("!") {
            return Ok(Expr::Not(Box::new(self.nested(|p| p.unary())?)));
        }
        // A cast: `(double) x`, `(int) Math.floor(y)`.
        if self.is_op("(") {
            if let (Some(Tok::Ident(t)), Some(Tok::Op(")"))) = (self.peek_at(1), self.peek_at(2)) {
                // `(List) doc.f`: a capitalised type before an operand.
                let operand = matches!(
                    self.peek_at(3),
                    Some(Tok::Ident(_) | Tok::Num(..) | Tok::Str(_) | Tok::Op("("))
                );
                if TYPES.contains(&t.as_str()) || (t.starts_with(char::is_uppercase) && operand) {
                    let t = t.clone();
                    self.i += 3;
                    let inner = self.nested(|p| p.unary())?;
                    return Ok(Expr::Cast(t, Box::new(inner)));
                }
            }
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<Expr, String> {
        let mut e = self.primary()?;
        loop {
            if self.is_op(".") || self.is_op("?.") {
                let safe = self.eat("?.");
                if !safe {
                    self.i += 1;
                }
                let name = self.ident()?;
                let args = if self.eat("(") {
                    Some(self.args()?)
                } else {
                    None
                };
                e = match (safe, args) {
                    (true, args) => Expr::NullSafe(Box::new(e), name, args),
                    (false, Some(args)) => Expr::Method(Box::new(e), name, args),
                    (false, None) => Expr::Field(Box::new(e), name),
                };
            } else if self.eat("[") {
                let i = self.expr()?;
                self.expect("]")?;
                e = Expr::Index(Box::new(e), Box::new(i));
            } else {
                return Ok(e);
            }
        }
    }

    fn args(&mut self) -> Result<Vec<Expr>, String> {
        let mut out = Vec::new();
        while !self.eat(")") {
            if !out.is_empty() {
                self.expect(",")?;
            }
            if let Some(lambda) = self.lambda()? {
                out.push(lambda);
                continue;
            }
            out.push(self.expr()?);
        }
        Ok(out)
    }

    /// A lambda argument, if one starts here: `x -> ...`, `(a, b) -> ...`, `(def x) -> ...`,
    /// with an expression or a block for its body.
    fn lambda(&mut self) -> Result<Option<Expr>, String> {
        let mut params = Vec::new();
        let after = match (self.peek(), self.peek_at(1)) {
            (Some(Tok::Ident(name)), Some(Tok::Op("->"))) => {
                params.push(name.clone());
                2
            }
            (Some(Tok::Op("(")), _) => {
                // `(a, b) ->`, `(def a) ->`, `() ->`: names (typed or not) to a `)` then `->`.
                let mut k = 1;
                let mut names = Vec::new();
                loop {
                    match (self.peek_at(k), self.peek_at(k + 1)) {
                        (Some(Tok::Op(")")), _) => break,
                        (Some(Tok::Ident(_)), Some(Tok::Ident(n))) => {
                            names.push(n.clone());
                            k += 2;
                        }
                        (Some(Tok::Ident(n)), _) => {
                            names.push(n.clone());
                            k += 1;
                        }
                        _ => return Ok(None),
                    }
                    if matches!(self.peek_at(k), Some(Tok::Op(","))) {
                        k += 1;
                    }
                }
                if !matches!(self.peek_at(k + 1), Some(Tok::Op("->"))) {
                    return Ok(None);
                }
                params = names;
                k + 2
            }
            _ => return Ok(None),
        };
        self.i += after;
        let body = if self.is_op("{") {
            self.block_or_stmt()?
        } else {
            vec![Stmt::Return(Some(self.expr()?))]
        };
        Ok(Some(Expr::Lambda(Arc::new(Lambda { params, body }))))
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let Some(tok) = self.peek().cloned() else {
            return Err(self.err("expected an expression"));
        };
        self.i += 1;
        Ok(match tok {
            Tok::Num(n, true) => Expr::Float(n),
            Tok::Num(n, false) if n.fract() == 0.0 && n.abs() < 9.0e18 => Expr::Int(n as i64),
            Tok::Num(n, _) => Expr::Float(n),
            Tok::Str(s) => Expr::Str(s),
            Tok::Regex(source, flags) => {
                Expr::Regex(Arc::new(Regex::new(&source, &flags).map_err(|e| {
                    self.i -= 1;
                    self.err(&e)
                })?))
            }
            Tok::Op("(") => {
                let e = self.expr()?;
                self.expect(")")?;
                e
            }
            Tok::Op("[") => {
                // A list literal `[1, 2]` or a map literal `[:]`, `['a': 1]`.
                if self.eat(":") {
                    self.expect("]")?;
                    return Ok(Expr::MapLit(Vec::new()));
                }
                let mut items = Vec::new();
                let mut pairs = Vec::new();
                while !self.eat("]") {
                    if !(items.is_empty() && pairs.is_empty()) {
                        self.expect(",")?;
                    }
                    let k = self.expr()?;
                    if self.eat(":") {
                        pairs.push((k, self.expr()?));
                    } else {
                        items.push(k);
                    }
                }
                if pairs.is_empty() {
                    Expr::ListLit(items)
                } else {
                    Expr::MapLit(pairs)
                }
            }
            Tok::Ident(w) => match w.as_str() {
                "true" => Expr::Bool(true),
                "false" => Expr::Bool(false),
                "null" => Expr::Null,
                "new" => {
                    let t = self.ident()?;
                    if self.eat("<") {
                        while !self.eat(">") {
                            if self.peek().is_none() {
                                return Err(self.err("expected `>`"));
                            }
                            self.i += 1;
                        }
                    }
                    self.expect("(")?;
                    let args = self.args()?;
                    Expr::New(t, args)
                }
                _ if self.is_op("(") => {
                    self.i += 1;
                    Expr::Call(w, self.args()?)
                }
                _ => Expr::Var(w),
            },
            Tok::Op(o) => {
                self.i -= 1;
                return Err(self.err(&format!("`{o}` cannot start an expression")));
            }
        })
    }
}
