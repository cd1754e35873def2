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
