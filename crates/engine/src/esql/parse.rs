//! ES|QL text read into commands and expressions: the processing commands the engine runs
//! (FROM, WHERE, EVAL, STATS ... BY, SORT, LIMIT, KEEP, DROP, RENAME), expressions with
//! ES|QL's operators (`==`, `AND`, `LIKE`, `IS NULL`, `::` casts, the `:` match operator,
//! time spans such as `10 DAYS`) and function calls. Anything else is refused, naming it and
//! where it stands.

use super::value::V;

/// The deepest an expression may nest.
const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Ident(String),
    Str(String),
    Int(i64),
    Float(f64),
    Op(&'static str),
}

const OPS: [&str; 19] = [
    "==", "!=", "<=", ">=", "::", "|", ",", "(", ")", "<", ">", "+", "-", "*", "/", "%", "=", ":",
    ".",
];

/// The text as tokens, each with its byte offset.
pub fn lex(text: &str) -> Result<Vec<(Tok, usize)>, String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c == b'"' {
            let triple = text[i..].starts_with("\"\"\"");
            let (open, close) = if triple { (3, "\"\"\"") } else { (1, "\"") };
            let mut s = String::new();
            i += open;
            loop {
                if i >= b.len() {
                    return Err(format!("a string opened at {start} is not closed"));
                }
                if text[i..].starts_with(close) {
                    i += close.len();
                    break;
                }
                if !triple && b[i] == b'\\' && i + 1 < b.len() {
                    s.push(match b[i + 1] {
                        b'n' => '\n',
                        b't' => '\t',
                        b'r' => '\r',
                        other => other as char,
                    });
                    i += 2;
                    continue;
                }
                let ch = text[i..].chars().next().expect("in bounds");
                s.push(ch);
                i += ch.len_utf8();
            }
            out.push((Tok::Str(s), start));
        } else if c == b'`' {
            let end = text[i + 1..]
                .find('`')
                .ok_or_else(|| format!("a quoted name opened at {start} is not closed"))?;
            out.push((Tok::Ident(text[i + 1..i + 1 + end].to_string()), start));
            i += end + 2;
        } else if c.is_ascii_digit() {
            while i < b.len()
                && (b[i].is_ascii_digit() || b[i] == b'.' || b[i] == b'e' || b[i] == b'E')
            {
                if (b[i] == b'e' || b[i] == b'E')
                    && i + 1 < b.len()
                    && (b[i + 1] == b'-' || b[i + 1] == b'+')
                {
                    i += 1;
                }
                i += 1;
            }
            let n = &text[start..i];
            out.push((
                match n.parse::<i64>() {
                    Ok(v) => Tok::Int(v),
                    Err(_) => Tok::Float(n.parse().map_err(|_| format!("`{n}` is not a number"))?),
                },
                start,
            ));
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'@' {
            while i < b.len()
                && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'@' | b'.' | b'-'))
            {
                // A `-` is part of a name only inside an index pattern (`logs-*`), told by
                // what follows it.
                if b[i] == b'-'
                    && !(i + 1 < b.len() && (b[i + 1].is_ascii_alphanumeric() || b[i + 1] == b'*'))
                {
                    break;
                }
                i += 1;
            }
            out.push((Tok::Ident(text[start..i].to_string()), start));
        } else if let Some(op) = OPS.iter().find(|op| text[i..].starts_with(**op)) {
            out.push((Tok::Op(op), start));
            i += op.len();
        } else {
            return Err(format!("unexpected `{}` at {start}", c as char));
        }
    }
    Ok(out)
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Lit(V),
    Col(String),
    /// A function call; `COUNT(*)` has the argument `Star`.
    Call(String, Vec<Expr>),
    Star,
    Bin(&'static str, Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    Cast(Box<Expr>, String),
    IsNull(Box<Expr>, bool),
    Like(Box<Expr>, String, bool),
    In(Box<Expr>, Vec<Expr>, bool),
    /// A time span: an amount and its unit (`10 DAYS`).
    Span(i64, String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    From {
        patterns: String,
        metadata: Vec<String>,
    },
    Where(Expr),
    /// Each column's name and expression.
    Eval(Vec<(String, Expr)>),
    Stats {
        aggs: Vec<(String, Expr)>,
        by: Vec<(String, Expr)>,
    },
    /// Each key: its expression, descending, nulls first.
    Sort(Vec<(Expr, bool, bool)>),
    Limit(usize),
    Keep(Vec<String>),
    Drop(Vec<String>),
    Rename(Vec<(String, String)>),
}

impl Expr {
    /// Calls `f` with this expression and each one inside it, outermost first.
    pub fn visit(&self, f: &mut dyn FnMut(&Expr) -> Result<(), String>) -> Result<(), String> {
        f(self)?;
        match self {
            Expr::Call(_, args) => args.iter().try_for_each(|a| a.visit(f)),
            Expr::Bin(_, a, b) => {
                a.visit(f)?;
                b.visit(f)
            }
            Expr::Not(a)
            | Expr::Neg(a)
            | Expr::Cast(a, _)
            | Expr::IsNull(a, _)
            | Expr::Like(a, ..) => a.visit(f),
            Expr::In(a, items, _) => {
                a.visit(f)?;
                items.iter().try_for_each(|i| i.visit(f))
            }
            Expr::Lit(_) | Expr::Col(_) | Expr::Star | Expr::Span(..) => Ok(()),
        }
    }
}

impl Command {
    /// The expressions the command evaluates.
    pub fn exprs(&self) -> Vec<&Expr> {
        match self {
            Command::Where(e) => vec![e],
            Command::Eval(list) => list.iter().map(|(_, e)| e).collect(),
            Command::Stats { aggs, by } => aggs.iter().chain(by).map(|(_, e)| e).collect(),
            Command::Sort(keys) => keys.iter().map(|(e, _, _)| e).collect(),
            _ => Vec::new(),
        }
    }
}

struct Parser<'t> {
    toks: Vec<(Tok, usize)>,
    at: usize,
    text: &'t str,
    depth: usize,
}

/// The commands of a query, FROM first.
pub fn parse(text: &str) -> Result<Vec<Command>, String> {
    let mut p = Parser {
        toks: lex(text)?,
        at: 0,
        text,
        depth: 0,
    };
    let mut out = Vec::new();
    loop {
        out.push(p.command(out.is_empty())?);
        if p.peek().is_none() {
            return Ok(out);
        }
        p.expect("|")?;
    }
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|(t, _)| t)
    }
    fn offset(&self) -> usize {
        self.toks.get(self.at).map_or(self.text.len(), |(_, o)| *o)
    }
    fn err(&self, what: &str) -> String {
        let near: String = self.text[self.offset()..].chars().take(30).collect();
        format!("{what} at {} (near `{near}`)", self.offset())
    }
    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(o)) if *o == op)
    }
    fn eat(&mut self, op: &str) -> bool {
        let yes = self.is_op(op);
        self.at += usize::from(yes);
        yes
    }
    fn expect(&mut self, op: &str) -> Result<(), String> {
        match self.eat(op) {
            true => Ok(()),
            false => Err(self.err(&format!("expected `{op}`"))),
        }
    }
    fn keyword(&self, k: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(w)) if w.eq_ignore_ascii_case(k))
    }
    fn eat_keyword(&mut self, k: &str) -> bool {
        let yes = self.keyword(k);
        self.at += usize::from(yes);
        yes
    }
    fn ident(&mut self) -> Result<String, String> {
        match self.peek().cloned() {
            Some(Tok::Ident(w)) => {
                self.at += 1;
                Ok(w)
            }
            _ => Err(self.err("expected a name")),
        }
    }
    /// A name pattern (`message*`, `*`): a name or `*`s run together.
    fn pattern(&mut self) -> Result<String, String> {
        let mut s = String::new();
        let mut end = None;
        // Names and `*`s written together, with no space between.
        while let Some((t, at)) = self.toks.get(self.at).cloned() {
            if end.is_some_and(|e| e != at) {
                break;
            }
            let len = match &t {
                Tok::Ident(w) if self.text[at..].starts_with(w.as_str()) => {
                    s.push_str(w);
                    w.len()
                }
                Tok::Op("*") => {
                    s.push('*');
                    1
                }
                _ => break,
            };
            end = Some(at + len);
            self.at += 1;
        }
        match s.is_empty() {
            true => Err(self.err("expected a column name or pattern")),
            false => Ok(s),
        }
    }

    fn command(&mut self, first: bool) -> Result<Command, String> {
        let name = self.ident()?.to_ascii_uppercase();
        if first != (name == "FROM") {
            return Err(match first {
                true => format!("the embedded engine's ES|QL starts with FROM, got `{name}`"),
                false => "FROM comes first, once".into(),
            });
        }
        Ok(match name.as_str() {
            "FROM" => self.from()?,
            "WHERE" => Command::Where(self.expr()?),
            "EVAL" => Command::Eval(self.assignments(true)?),
            "STATS" => {
                let aggs = match self.keyword("BY") {
                    true => Vec::new(),
                    false => self.assignments(true)?,
                };
                let by = match self.eat_keyword("BY") {
                    true => self.assignments(true)?,
                    false => Vec::new(),
                };
                Command::Stats { aggs, by }
            }
            "SORT" => {
                let mut keys = Vec::new();
                loop {
                    let e = self.expr()?;
                    let desc = match self.eat_keyword("DESC") {
                        true => true,
                        false => {
                            self.eat_keyword("ASC");
                            false
                        }
                    };
                    let nulls_first = match self.eat_keyword("NULLS") {
                        true if self.eat_keyword("FIRST") => true,
                        true if self.eat_keyword("LAST") => false,
                        true => return Err(self.err("expected FIRST or LAST")),
                        // Nulls are larger than any value.
                        false => desc,
                    };
                    keys.push((e, desc, nulls_first));
                    if !self.eat(",") {
                        break;
                    }
                }
                Command::Sort(keys)
            }
            "LIMIT" => match self.peek().cloned() {
                Some(Tok::Int(n)) if n >= 0 => {
                    self.at += 1;
                    Command::Limit(n as usize)
                }
                _ => return Err(self.err("LIMIT takes a whole number")),
            },
            "KEEP" | "DROP" => {
                let mut names = vec![self.pattern()?];
                while self.eat(",") {
                    names.push(self.pattern()?);
                }
                match name.as_str() {
                    "KEEP" => Command::Keep(names),
                    _ => Command::Drop(names),
                }
            }
            "RENAME" => {
                let mut pairs = Vec::new();
                loop {
                    let old = self.ident()?;
                    if !self.eat_keyword("AS") {
                        return Err(self.err("expected AS"));
                    }
                    pairs.push((old, self.ident()?));
                    if !self.eat(",") {
                        break;
                    }
                }
                Command::Rename(pairs)
            }
            other => {
                return Err(format!(
                    "ES|QL command `{other}` is not run by the embedded engine (it runs FROM, WHERE, EVAL, STATS ... BY, SORT, LIMIT, KEEP, DROP, RENAME)"
                ))
            }
        })
    }

    fn from(&mut self) -> Result<Command, String> {
        let mut patterns = vec![self.pattern()?];
        while self.eat(",") {
            patterns.push(self.pattern()?);
        }
        let mut metadata = Vec::new();
        if self.eat_keyword("METADATA") {
            metadata.push(self.ident()?);
            while self.eat(",") {
                metadata.push(self.ident()?);
            }
        }
        if let Some(m) = metadata
            .iter()
            .find(|m| !matches!(m.as_str(), "_source" | "_id" | "_index"))
        {
            return Err(format!(
                "METADATA `{m}` is not run by the embedded engine (_source, _id, _index)"
            ));
        }
        Ok(Command::From {
            patterns: patterns.join(","),
            metadata,
        })
    }

    /// `name = expr` or a bare expression (named by its text), comma-separated.
    fn assignments(&mut self, bare: bool) -> Result<Vec<(String, Expr)>, String> {
        let mut out = Vec::new();
        loop {
            let named = matches!(self.peek(), Some(Tok::Ident(_)))
                && matches!(self.toks.get(self.at + 1), Some((Tok::Op("="), _)));
            if named {
                let name = self.ident()?;
                self.expect("=")?;
                out.push((name, self.expr()?));
            } else if bare {
                let start = self.offset();
                let e = self.expr()?;
                let name = self.text[start..self.offset()].trim().to_string();
                out.push((name, e));
            }
            if !self.eat(",") {
                return Ok(out);
            }
        }
    }

    fn expr(&mut self) -> Result<Expr, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err(&format!("the expression nests deeper than {MAX_DEPTH}")));
        }
        let e = self.or();
        self.depth -= 1;
        e
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut left = self.and()?;
        while self.eat_keyword("OR") {
            left = Expr::Bin("OR", Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut left = self.not()?;
        while self.eat_keyword("AND") {
            left = Expr::Bin("AND", Box::new(left), Box::new(self.not()?));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Expr, String> {
        match self.eat_keyword("NOT") {
            true => Ok(Expr::Not(Box::new(self.not()?))),
            false => self.comparison(),
        }
    }

    fn comparison(&mut self) -> Result<Expr, String> {
        let left = self.additive()?;
        for op in ["==", "!=", "<=", ">=", "<", ">"] {
            if self.eat(op) {
                return Ok(Expr::Bin(op, Box::new(left), Box::new(self.additive()?)));
            }
        }
        if self.eat(":") {
            let right = self.additive()?;
            return Ok(Expr::Call("MATCH".into(), vec![left, right]));
        }
        let negated = self.eat_keyword("NOT");
        if self.eat_keyword("LIKE") || self.eat_keyword("RLIKE") {
            let rlike = matches!(self.toks.get(self.at - 1), Some((Tok::Ident(w), _)) if w.eq_ignore_ascii_case("RLIKE"));
            if rlike {
                return Err(self.err("RLIKE is not run by the embedded engine (LIKE is)"));
            }
            return match self.peek().cloned() {
                Some(Tok::Str(p)) => {
                    self.at += 1;
                    Ok(Expr::Like(Box::new(left), p, negated))
                }
                _ => Err(self.err("LIKE takes a string pattern")),
            };
        }
        if self.eat_keyword("IN") {
            self.expect("(")?;
            let mut items = vec![self.expr()?];
            while self.eat(",") {
                items.push(self.expr()?);
            }
            self.expect(")")?;
            return Ok(Expr::In(Box::new(left), items, negated));
        }
        if negated {
            return Err(self.err("expected LIKE or IN after NOT"));
        }
        if self.eat_keyword("IS") {
            let not = self.eat_keyword("NOT");
            if !self.eat_keyword("NULL") {
                return Err(self.err("expected NULL"));
            }
            return Ok(Expr::IsNull(Box::new(left), !not));
        }
        Ok(left)
    }

    fn additive(&mut self) -> Result<Expr, String> {
        let mut left = self.multiplicative()?;
        loop {
            let op = if self.eat("+") {
                "+"
            } else if self.eat("-") {
                "-"
            } else {
                return Ok(left);
            };
            left = Expr::Bin(op, Box::new(left), Box::new(self.multiplicative()?));
        }
    }

    fn multiplicative(&mut self) -> Result<Expr, String> {
        let mut left = self.unary()?;
        loop {
            let op = ["*", "/", "%"].into_iter().find(|op| self.eat(op));
            let Some(op) = op else { return Ok(left) };
            left = Expr::Bin(op, Box::new(left), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat("-") {
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        let mut e = self.primary()?;
        while self.eat("::") {
            e = Expr::Cast(Box::new(e), self.ident()?.to_ascii_lowercase());
        }
        Ok(e)
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let Some(tok) = self.peek().cloned() else {
            return Err(self.err("expected an expression"));
        };
        self.at += 1;
        Ok(match tok {
            Tok::Str(s) => Expr::Lit(V::Str(s)),
            Tok::Int(n) => match self.peek().cloned() {
                Some(Tok::Ident(unit)) if is_time_unit(&unit) => {
                    self.at += 1;
                    Expr::Span(n, unit.to_ascii_lowercase())
                }
                _ => Expr::Lit(V::Long(n)),
            },
            Tok::Float(x) => Expr::Lit(V::Double(x)),
            Tok::Op("(") => {
                let e = self.expr()?;
                self.expect(")")?;
                e
            }
            Tok::Op("*") => Expr::Star,
            Tok::Ident(w) if self.is_op("(") => {
                self.at += 1;
                let mut args = Vec::new();
                if !self.eat(")") {
                    args.push(self.expr()?);
                    while self.eat(",") {
                        args.push(self.expr()?);
                    }
                    self.expect(")")?;
                }
                Expr::Call(w.to_ascii_uppercase(), args)
            }
            Tok::Ident(w) if w.eq_ignore_ascii_case("true") => Expr::Lit(V::Bool(true)),
            Tok::Ident(w) if w.eq_ignore_ascii_case("false") => Expr::Lit(V::Bool(false)),
            Tok::Ident(w) if w.eq_ignore_ascii_case("null") => Expr::Lit(V::Null),
            Tok::Ident(w) => Expr::Col(w),
            Tok::Op(op) => {
                self.at -= 1;
                return Err(self.err(&format!("unexpected `{op}`")));
            }
        })
    }
}

fn is_time_unit(w: &str) -> bool {
    matches!(
        w.to_ascii_lowercase().trim_end_matches('s'),
        "millisecond"
            | "second"
            | "minute"
            | "hour"
            | "day"
            | "week"
            | "month"
            | "quarter"
            | "year"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shared_tracks_queries_parse() {
        for q in [
            "FROM osm* | WHERE ST_Intersects(shape, TO_GEOSHAPE(\"BBOX((-0.1, 15.0, 61.0, 48.0))\")) | LIMIT 10",
            "FROM osmgeopoints | EVAL distance = ST_Distance(location, TO_GEOPOINT(\"POINT(7.0 55.0)\")), loc = location::string | WHERE distance <= 400000 | SORT distance ASC, loc ASC | LIMIT 10",
            "FROM logs-* METADATA _source | WHERE event.dataset == \"kafka.log\" AND message LIKE \"Connection * disconnected\" | SORT @timestamp DESC | LIMIT 500 | KEEP _source",
            "FROM logs-* | EVAL every10days = DATE_TRUNC(10 DAYS, @timestamp) | STATS min=MIN(log.offset), max=MAX(log.offset), avg=AVG(log.offset) BY every10days | SORT every10days",
            "FROM gharchive* | WHERE type== \"PushEvent\" | STATS push_count = COUNT(payload.push_id) BY repo.name | SORT push_count DESC | LIMIT 10",
            "FROM logs-* | EVAL compression = rally.doc_size::DOUBLE / rally.message_size | STATS AVG(compression)",
            "FROM logs-* METADATA _source | WHERE event.dataset: \"apache.access\" AND http.response.status_code: 404 | SORT @timestamp DESC",
        ] {
            parse(q).unwrap_or_else(|e| panic!("{q}: {e}"));
        }
        let stats = parse("FROM x | STATS AVG(compression)").unwrap();
        assert_eq!(
            stats[1],
            Command::Stats {
                aggs: vec![(
                    "AVG(compression)".into(),
                    Expr::Call("AVG".into(), vec![Expr::Col("compression".into())])
                )],
                by: vec![]
            }
        );
        let e = parse("FROM x | MV_EXPAND y").unwrap_err();
        assert!(e.contains("`MV_EXPAND` is not run"), "{e}");
        assert!(parse("FROM x | WHERE (((").is_err());
    }
}
