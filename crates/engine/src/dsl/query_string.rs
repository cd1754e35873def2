//! `query_string`: Lucene's query syntax, as Elasticsearch reads it. Terms and phrases, each
//! on a `field:` or on the query's `fields`/`default_field` (`*`: every text and keyword
//! field, leniently); `AND`/`&&`, `OR`/`||`, `NOT`/`!`, `+`/`-`, parentheses, `^` boosts,
//! `*`/`?` wildcards, `[a TO b]`/`{a TO b}` ranges (`*` for an open end), `>`/`>=`/`<`/`<=`, and
//! `_exists_:field`. Fuzzy (`~`) and regular expressions (`/.../`) are refused. Each leaf is
//! compiled as the query DSL's own `match`, `match_phrase`, `range`, `exists` or `wildcard`.

use crate::dsl::QueryCompiler;
use crate::mapping::FieldType;
use serde_json::{json, Map, Value};
use tantivy::query::{BooleanQuery, BoostQuery, DisjunctionMaxQuery, EmptyQuery, Occur, Query};

/// Queries nest at most this deep (parentheses), so a hostile query cannot exhaust the stack.
const MAX_DEPTH: usize = 32;

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Phrase(String),
    Open,
    Close,
    Colon,
    And,
    Or,
    Not,
    Plus,
    Minus,
    Boost(f32),
    /// `[`/`{` a TO b `]`/`}`: the ends and whether each is inclusive.
    Range(String, String, bool, bool),
    /// `>`, `>=`, `<`, `<=` with their value.
    Compare(&'static str, String),
}

#[derive(Debug, Clone)]
enum Node {
    Term {
        field: Option<String>,
        text: String,
        phrase: bool,
    },
    Range {
        field: Option<String>,
        bounds: Map<String, Value>,
    },
    Exists(String),
    /// Clauses with their occurrence.
    Bool(Vec<(Occur, Node)>),
    Boosted(Box<Node>, f32),
}

impl Node {
    fn zone_ranges(&mut self, zone: &Value) {
        match self {
            Node::Range { bounds, .. } => {
                bounds.insert("time_zone".into(), zone.clone());
            }
            Node::Bool(items) => items.iter_mut().for_each(|(_, n)| n.zone_ranges(zone)),
            Node::Boosted(n, _) => n.zone_ranges(zone),
            Node::Term { .. } | Node::Exists(_) => {}
        }
    }
}

fn lex(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    // Lucene's term characters: `+`, `-` and escapes may sit inside a term.
    let special = |c: char| "()\":^[]{}!~/".contains(c) || c.is_whitespace();
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => i += 1,
            '(' => (out.push(Token::Open), i += 1).1,
            ')' => (out.push(Token::Close), i += 1).1,
            ':' => (out.push(Token::Colon), i += 1).1,
            '+' => (out.push(Token::Plus), i += 1).1,
            '-' => (out.push(Token::Minus), i += 1).1,
            '!' => (out.push(Token::Not), i += 1).1,
            '&' if chars.get(i + 1) == Some(&'&') => (out.push(Token::And), i += 2).1,
            '|' if chars.get(i + 1) == Some(&'|') => (out.push(Token::Or), i += 2).1,
            '~' => {
                return Err(
                    "fuzzy and proximity queries (`~`) are not run by the embedded engine".into(),
                )
            }
            '/' => {
                return Err(
                    "regular expressions (`/.../`) are not run by the embedded engine".into(),
                )
            }
            '^' => {
                let (t, next) = lex_boost(&chars, i)?;
                out.push(t);
                i = next;
            }
            '"' => {
                let (t, next) = lex_phrase(&chars, i)?;
                out.push(t);
                i = next;
            }
            '[' | '{' => {
                let (t, next) = lex_range(&chars, i)?;
                out.push(t);
                i = next;
            }
            '>' | '<' => {
                let eq = chars.get(i + 1) == Some(&'=');
                let op = match (c, eq) {
                    ('>', false) => "gt",
                    ('>', true) => "gte",
                    ('<', false) => "lt",
                    _ => "lte",
                };
                i += 1 + usize::from(eq);
                let start = i;
                while i < chars.len() && !special(chars[i]) {
                    i += 1;
                }
                out.push(Token::Compare(op, chars[start..i].iter().collect()));
            }
            _ => {
                let mut s = String::new();
                while i < chars.len() && !special(chars[i]) {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        i += 1;
                    }
                    s.push(chars[i]);
                    i += 1;
                }
                if s.is_empty() {
                    // A lone backslash at the end.
                    i += 1;
                    continue;
                }
                out.push(match s.as_str() {
                    "AND" => Token::And,
                    "OR" => Token::Or,
                    "NOT" => Token::Not,
                    _ => Token::Word(s),
                });
            }
        }
    }
    Ok(out)
}

/// `^2.5` after a term: its boost, and where the text goes on.
fn lex_boost(chars: &[char], i: usize) -> Result<(Token, usize), String> {
    let start = i + 1;
    let mut j = start;
    while j < chars.len() && (chars[j].is_ascii_digit() || chars[j] == '.') {
        j += 1;
    }
    let b: String = chars[start..j].iter().collect();
    let boost = b.parse().map_err(|_| format!("`^{b}` is not a boost"))?;
    Ok((Token::Boost(boost), j))
}

/// A quoted phrase (escapes kept literal), and where the text goes on.
fn lex_phrase(chars: &[char], i: usize) -> Result<(Token, usize), String> {
    let mut j = i + 1;
    let mut s = String::new();
    while j < chars.len() && chars[j] != '"' {
        if chars[j] == '\\' && j + 1 < chars.len() {
            j += 1;
        }
        s.push(chars[j]);
        j += 1;
    }
    if j >= chars.len() {
        return Err("a phrase's closing `\"` is missing".into());
    }
    Ok((Token::Phrase(s), j + 1))
}

/// `[a TO b]` or `{a TO b}` (either end inclusive or not), and where the text goes on.
fn lex_range(chars: &[char], i: usize) -> Result<(Token, usize), String> {
    let c = chars[i];
    let close = if c == '[' { [']', '}'] } else { ['}', ']'] };
    let end = chars[i..]
        .iter()
        .position(|x| close.contains(x))
        .map(|p| i + p)
        .ok_or("a range's closing `]` or `}` is missing")?;
    let inner: String = chars[i + 1..end].iter().collect();
    let parts: Vec<&str> = inner.split_whitespace().collect();
    let [a, "TO", b] = parts[..] else {
        return Err(format!("`{inner}` is not a range `a TO b`"));
    };
    let token = Token::Range(a.into(), b.into(), c == '[', chars[end] == ']');
    Ok((token, end + 1))
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    and_default: bool,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn starts_clause(&self) -> bool {
        !matches!(
            self.peek(),
            None | Some(Token::Close | Token::And | Token::Or)
        )
    }

    /// Clauses joined by OR (and, with OR the default, by nothing).
    fn or_expr(&mut self, depth: usize) -> Result<Node, String> {
        let mut items = vec![self.and_expr(depth)?];
        loop {
            match self.peek() {
                Some(Token::Or) => {
                    self.at += 1;
                }
                _ if !self.and_default && self.starts_clause() => {}
                _ => break,
            }
            items.push(self.and_expr(depth)?);
        }
        Ok(join(items, Occur::Should))
    }

    fn and_expr(&mut self, depth: usize) -> Result<Node, String> {
        let mut items = vec![self.unary(depth)?];
        loop {
            match self.peek() {
                Some(Token::And) => {
                    self.at += 1;
                }
                _ if self.and_default && self.starts_clause() => {}
                _ => break,
            }
            items.push(self.unary(depth)?);
        }
        Ok(join(items, Occur::Must))
    }

    fn unary(&mut self, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return Err(format!("the query nests deeper than {MAX_DEPTH}"));
        }
        match self.peek() {
            Some(Token::Not) | Some(Token::Minus) => {
                self.at += 1;
                Ok(Node::Bool(vec![(Occur::MustNot, self.unary(depth + 1)?)]))
            }
            Some(Token::Plus) => {
                self.at += 1;
                Ok(Node::Bool(vec![(Occur::Must, self.unary(depth + 1)?)]))
            }
            _ => self.primary(None, depth),
        }
    }

    fn primary(&mut self, field: Option<String>, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return Err(format!("the query nests deeper than {MAX_DEPTH}"));
        }
        let node = match self.next() {
            Some(Token::Open) => {
                let inner = self.with_field(field, depth)?;
                match self.next() {
                    Some(Token::Close) => inner,
                    _ => return Err("a `(` is not closed".into()),
                }
            }
            Some(Token::Word(w)) if self.peek() == Some(&Token::Colon) && field.is_none() => {
                self.at += 1;
                if w == "_exists_" {
                    match self.next() {
                        Some(Token::Word(f)) => Node::Exists(f),
                        _ => return Err("`_exists_:` names a field".into()),
                    }
                } else {
                    return self.primary(Some(w), depth + 1);
                }
            }
            Some(Token::Word(text)) => Node::Term {
                field,
                text,
                phrase: false,
            },
            Some(Token::Phrase(text)) => Node::Term {
                field,
                text,
                phrase: true,
            },
            Some(Token::Range(a, b, lo_in, hi_in)) => {
                let mut bounds = Map::new();
                if a != "*" {
                    bounds.insert(if lo_in { "gte" } else { "gt" }.into(), json!(a));
                }
                if b != "*" {
                    bounds.insert(if hi_in { "lte" } else { "lt" }.into(), json!(b));
                }
                Node::Range { field, bounds }
            }
            Some(Token::Compare(op, v)) => {
                let mut bounds = Map::new();
                bounds.insert(op.into(), json!(v));
                Node::Range { field, bounds }
            }
            other => return Err(format!("unexpected {}", describe(other.as_ref()))),
        };
        if let Some(Token::Boost(b)) = self.peek() {
            let b = *b;
            self.at += 1;
            return Ok(Node::Boosted(Box::new(node), b));
        }
        Ok(node)
    }

    /// A parenthesised group, every leaf on `field` when one is given (`title:(a OR b)`).
    fn with_field(&mut self, field: Option<String>, depth: usize) -> Result<Node, String> {
        let node = self.or_expr(depth + 1)?;
        Ok(match field {
            Some(f) => on_field(node, &f),
            None => node,
        })
    }
}

fn on_field(node: Node, f: &str) -> Node {
    match node {
        Node::Term {
            field: None,
            text,
            phrase,
        } => Node::Term {
            field: Some(f.into()),
            text,
            phrase,
        },
        Node::Range {
            field: None,
            bounds,
        } => Node::Range {
            field: Some(f.into()),
            bounds,
        },
        Node::Bool(items) => Node::Bool(
            items
                .into_iter()
                .map(|(o, n)| (o, on_field(n, f)))
                .collect(),
        ),
        Node::Boosted(n, b) => Node::Boosted(Box::new(on_field(*n, f)), b),
        other => other,
    }
}

/// Items of an AND (or OR) list: `+x`/`-x` keep their occurrence, the others take `occur`.
fn join(items: Vec<Node>, occur: Occur) -> Node {
    if items.len() == 1 {
        return items.into_iter().next().expect("one item");
    }
    Node::Bool(
        items
            .into_iter()
            .map(|n| match n {
                Node::Bool(mut one) if one.len() == 1 && one[0].0 != Occur::Should => one.remove(0),
                n => (occur, n),
            })
            .collect(),
    )
}

fn describe(t: Option<&Token>) -> String {
    match t {
        None => "end of query".into(),
        Some(t) => format!("{t:?}"),
    }
}

impl QueryCompiler<'_> {
    pub(crate) fn query_string(&self, body: &Value) -> Result<Box<dyn Query>, String> {
        const KNOWN: [&str; 12] = [
            "query",
            "fields",
            "default_field",
            "default_operator",
            "analyze_wildcard",
            "lenient",
            "boost",
            "allow_leading_wildcard",
            "_name",
            "type",
            "tie_breaker",
            "time_zone",
        ];
        let obj = body.as_object().ok_or("`query_string` expects an object")?;
        if let Some(k) = obj.keys().find(|k| !KNOWN.contains(&k.as_str())) {
            return Err(format!(
                "query_string option `{k}` is not run by the embedded engine"
            ));
        }
        if let Some(t) = obj
            .get("type")
            .and_then(Value::as_str)
            .filter(|t| *t != "best_fields")
        {
            return Err(format!(
                "query_string type `{t}` is not run by the embedded engine (best_fields)"
            ));
        }
        // Its ranges read dates on the zone's clock, as a range query's `time_zone`.
        let zone = obj.get("time_zone").filter(|z| !z.is_null());
        if let Some(z) = zone {
            crate::zone::Zone::of_param(Some(z)).map_err(|e| format!("query_string: {e}"))?;
        }
        let text = obj
            .get("query")
            .and_then(Value::as_str)
            .ok_or("`query_string` needs a `query`")?;
        let and_default = obj
            .get("default_operator")
            .and_then(Value::as_str)
            .is_some_and(|o| o.eq_ignore_ascii_case("and"));
        let mut parser = Parser {
            tokens: lex(text)?,
            at: 0,
            and_default,
        };
        if parser.tokens.is_empty() {
            return Ok(Box::new(EmptyQuery));
        }
        let mut node = parser.or_expr(0)?;
        if parser.at < parser.tokens.len() {
            return Err(format!(
                "query_string `{text}`: unexpected {}",
                describe(parser.peek())
            ));
        }
        if let Some(z) = zone {
            node.zone_ranges(z);
        }
        let defaults: Vec<String> = match (obj.get("fields"), obj.get("default_field")) {
            (Some(Value::Array(fs)), _) => fs
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            (_, Some(Value::String(f))) => vec![f.clone()],
            _ => vec!["*".into()],
        };
        let lenient = obj.get("lenient").and_then(Value::as_bool).unwrap_or(false);
        let q = self
            .node(&node, &defaults, lenient, and_default)
            .map_err(|e| format!("query_string `{text}`: {e}"))?;
        Ok(match obj.get("boost").and_then(Value::as_f64) {
            Some(b) if b != 1.0 => Box::new(BoostQuery::new(q, b as f32)),
            _ => q,
        })
    }

    /// The fields a leaf searches: its own, or the defaults, wildcards resolved (leniently
    /// when a pattern names them).
    fn leaf_fields(&self, field: Option<&String>, defaults: &[String]) -> Vec<(String, bool)> {
        let patterns: Vec<&String> = match field {
            Some(f) => vec![f],
            None => defaults.iter().collect(),
        };
        let mut out = Vec::new();
        for p in patterns {
            let (name, _) = p.split_once('^').unwrap_or((p, ""));
            if name.contains('*') {
                for f in self.mapping.fields.iter().filter(|f| {
                    matches!(f.kind, FieldType::Text | FieldType::Keyword)
                        && crate::names::simple_match(name, &f.name)
                }) {
                    out.push((f.name.clone(), true));
                }
            } else {
                out.push((name.to_string(), false));
            }
        }
        out
    }

    fn node(
        &self,
        node: &Node,
        defaults: &[String],
        lenient: bool,
        and_default: bool,
    ) -> Result<Box<dyn Query>, String> {
        let per_field = |field: Option<&String>,
                         leaf: &dyn Fn(&str) -> Value|
         -> Result<Box<dyn Query>, String> {
            let mut alts: Vec<Box<dyn Query>> = Vec::new();
            for (name, from_pattern) in self.leaf_fields(field, defaults) {
                match self.compile_json(&leaf(&name)) {
                    Ok(q) => alts.push(q),
                    // A value that does not fit a field (text on a number) is skipped where
                    // the field came from a pattern, or when lenient.
                    Err(_) if from_pattern || lenient => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(match alts.len() {
                0 => Box::new(EmptyQuery),
                1 => alts.pop().expect("one"),
                _ => Box::new(DisjunctionMaxQuery::new(alts)),
            })
        };
        let operator = if and_default { "and" } else { "or" };
        match node {
            Node::Term {
                field,
                text,
                phrase: true,
            } => per_field(field.as_ref(), &|f| json!({"match_phrase": {f: text}})),
            Node::Term {
                field,
                text,
                phrase: false,
            } if text.contains(['*', '?']) => {
                if text == "*" {
                    return per_field(field.as_ref(), &|f| json!({"exists": {"field": f}}));
                }
                per_field(
                    field.as_ref(),
                    &|f| json!({"wildcard": {f: {"value": text}}}),
                )
            }
            Node::Term {
                field,
                text,
                phrase: false,
            } => per_field(
                field.as_ref(),
                &|f| json!({"match": {f: {"query": text, "operator": operator}}}),
            ),
            Node::Range { field, bounds } => {
                per_field(field.as_ref(), &|f| json!({"range": {f: bounds}}))
            }
            Node::Exists(f) => self.compile_json(&json!({"exists": {"field": f}})),
            Node::Boosted(n, b) => Ok(Box::new(BoostQuery::new(
                self.node(n, defaults, lenient, and_default)?,
                *b,
            ))),
            Node::Bool(items) => {
                let mut subs: Vec<(Occur, Box<dyn Query>)> = items
                    .iter()
                    .map(|(o, n)| Ok((*o, self.node(n, defaults, lenient, and_default)?)))
                    .collect::<Result<_, String>>()?;
                if subs.iter().all(|(o, _)| *o == Occur::MustNot) {
                    subs.push((Occur::Must, Box::new(tantivy::query::AllQuery)));
                }
                Ok(Box::new(BooleanQuery::new(subs)))
            }
        }
    }
}

#[cfg(test)]
mod tests;
