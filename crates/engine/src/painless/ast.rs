//! A parsed Painless script.

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
            Expr::NullSafe(e, _, None) => e.walk(f),
            _ => {}
        }
    }
}

impl Stmt {
    /// Calls `f` on every expression of this statement and those inside it.
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        let all = |stmts: &[Stmt], f: &mut dyn FnMut(&Expr)| stmts.iter().for_each(|s| s.walk(f));
        match self {
            Stmt::Let(_, _, Some(e)) | Stmt::Expr(e) | Stmt::Return(Some(e)) => e.walk(f),
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
