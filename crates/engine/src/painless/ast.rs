//! A parsed Painless script.

use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    /// `text =~ /re/`: whether the pattern is found in the text.
    Find,
    /// `text ==~ /re/`: whether the pattern matches all of the text.
    Matches,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Var(String),
    ListLit(Vec<Expr>),
    MapLit(Vec<(Expr, Expr)>),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    Cast(String, Box<Expr>),
    /// `name.field`: a static (`Math.PI`) or an object's field (`doc['f'].value`).
    Field(Box<Expr>, String),
    Index(Box<Expr>, Box<Expr>),
    /// `target.name(args)`: a static function (`Math.max`) or a method.
    Method(Box<Expr>, String, Vec<Expr>),
    /// A function of the context (`emit`, `cosineSimilarity`, `decayGeoGauss`...).
    Call(String, Vec<Expr>),
    New(String, Vec<Expr>),
    /// `base?.name` or `base?.name(args)`: null where `base` is null.
    NullSafe(Box<Expr>, String, Option<Vec<Expr>>),
    InstanceOf(Box<Expr>, String),
    Lambda(Arc<Lambda>),
    Regex(Arc<Regex>),
}

/// `x -> x * 2`, `(a, b) -> { ... }`.
#[derive(Debug, PartialEq)]
pub struct Lambda {
    pub params: Vec<String>,
    /// An expression body is one `return`.
    pub body: Vec<Stmt>,
}

/// A function the script declares before its statements.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub name: String,
    pub returns: String,
    /// Each parameter's declared type and name.
    pub params: Vec<(String, String)>,
    pub body: Vec<Stmt>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Catch {
    pub class: String,
    pub var: String,
    pub body: Vec<Stmt>,
}

/// A `/regex/flags` literal, compiled once as Java's `Pattern` reads it.
#[derive(Debug)]
pub struct Regex {
    pub source: String,
    pub flags: String,
    find: fancy_regex::Regex,
    whole: fancy_regex::Regex,
}

impl PartialEq for Regex {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source && self.flags == other.flags
    }
}

/// Backtracking steps one match may take (Painless bounds its regexes too; a pattern that
/// backtracks past this fails rather than stalling an ingest thread).
const REGEX_BACKTRACK_LIMIT: usize = 1_000_000;

impl Regex {
    pub fn new(source: &str, flags: &str) -> Result<Regex, String> {
        let mut inline = String::new();
        for f in flags.chars() {
            match f {
                'i' | 'm' | 's' | 'x' | 'U' => inline.push(if f == 'U' { 'u' } else { f }),
                'u' | 'c' => {}
                other => return Err(format!("regex flag `{other}` is not in the engine's Painless subset (i, m, s, x, u, U, c)")),
            }
        }
        let prefix = if inline.is_empty() {
            String::new()
        } else {
            format!("(?{inline})")
        };
        let build = |p: &str| {
            fancy_regex::RegexBuilder::new(p)
                .backtrack_limit(REGEX_BACKTRACK_LIMIT)
                .build()
                .map_err(|e| format!("regex /{source}/: {e}"))
        };
        Ok(Regex {
            source: source.to_string(),
            flags: flags.to_string(),
            find: build(&format!("{prefix}{source}"))?,
            whole: build(&format!(r"{prefix}\A(?:{source})\z"))?,
        })
    }

    /// The end of the first match at or after `from`, and its groups.
    pub fn find_at(
        &self,
        text: &str,
        from: usize,
    ) -> Result<Option<(usize, Vec<Option<String>>)>, String> {
        Self::groups(&self.find, text, from)
    }

    pub fn matches_whole(
        &self,
        text: &str,
    ) -> Result<Option<(usize, Vec<Option<String>>)>, String> {
        Self::groups(&self.whole, text, 0)
    }

    pub fn is_found(&self, text: &str) -> Result<bool, String> {
        self.find
            .is_match(text)
            .map_err(|e| format!("regex /{}/: {e}", self.source))
    }

    pub fn is_whole(&self, text: &str) -> Result<bool, String> {
        self.whole
            .is_match(text)
            .map_err(|e| format!("regex /{}/: {e}", self.source))
    }

    pub fn group_count(&self) -> usize {
        self.find.captures_len().saturating_sub(1)
    }

    pub fn group_index(&self, name: &str) -> Option<usize> {
        self.find.capture_names().position(|n| n == Some(name))
    }

    fn groups(
        re: &fancy_regex::Regex,
        text: &str,
        from: usize,
    ) -> Result<Option<(usize, Vec<Option<String>>)>, String> {
        let Some(c) = re
            .captures_from_pos(text, from)
            .map_err(|e| format!("regex: {e}"))?
        else {
            return Ok(None);
        };
        let end = c.get(0).map_or(from, |m| m.end());
        Ok(Some((
            end,
            c.iter()
                .map(|g| g.map(|m| m.as_str().to_string()))
                .collect(),
        )))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// A declaration: its type name (`def`, `double`...), its name and value.
    Let(String, String, Option<Expr>),
    Assign(Expr, Expr),
    Expr(Expr),
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    /// init; condition; update; body (`while` has no init or update).
    For(Vec<Stmt>, Option<Expr>, Vec<Stmt>, Vec<Stmt>),
    ForEach(String, Expr, Vec<Stmt>),
    Return(Option<Expr>),
    Break,
    Continue,
    Block(Vec<Stmt>),
    Try(Vec<Stmt>, Vec<Catch>),
    Throw(Expr),
}

impl Expr {
    /// Calls `f` on this expression and every one inside it.
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match self {
            Expr::ListLit(items) | Expr::Call(_, items) | Expr::New(_, items) => {
                items.iter().for_each(|e| e.walk(f))
            }
            Expr::MapLit(pairs) => pairs.iter().for_each(|(k, v)| {
                k.walk(f);
                v.walk(f);
            }),
            Expr::Neg(e) | Expr::Not(e) | Expr::Cast(_, e) | Expr::Field(e, _) => e.walk(f),
            Expr::Bin(_, a, b) | Expr::Index(a, b) => {
                a.walk(f);
                b.walk(f);
            }
            Expr::If(a, b, c) => {
                a.walk(f);
                b.walk(f);
                c.walk(f);
            }
            Expr::Method(e, _, args) | Expr::NullSafe(e, _, Some(args)) => {
                e.walk(f);
                args.iter().for_each(|a| a.walk(f));
            }
            Expr::NullSafe(e, _, None) | Expr::InstanceOf(e, _) => e.walk(f),
            Expr::Lambda(l) => l.body.iter().for_each(|s| s.walk(f)),
            _ => {}
        }
    }
}

impl Stmt {
    /// Calls `f` on every expression of this statement and those inside it.
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        let all = |stmts: &[Stmt], f: &mut dyn FnMut(&Expr)| stmts.iter().for_each(|s| s.walk(f));
        match self {
            Stmt::Let(_, _, Some(e)) | Stmt::Expr(e) | Stmt::Return(Some(e)) | Stmt::Throw(e) => {
                e.walk(f)
            }
            Stmt::Try(body, catches) => {
                all(body, f);
                catches.iter().for_each(|c| all(&c.body, f));
            }
            Stmt::Assign(a, b) => {
                a.walk(f);
                b.walk(f);
            }
            Stmt::If(c, a, b) => {
                c.walk(f);
                all(a, f);
                all(b, f);
            }
            Stmt::For(init, cond, update, body) => {
                all(init, f);
                if let Some(c) = cond {
                    c.walk(f);
                }
                all(update, f);
                all(body, f);
            }
            Stmt::ForEach(_, e, body) => {
                e.walk(f);
                all(body, f);
            }
            Stmt::Block(b) => all(b, f),
            _ => {}
        }
    }
}
