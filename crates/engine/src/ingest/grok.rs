//! The `grok` processor: each pattern expanded (`%{NAME:field:type}`, the built-in patterns
//! of [`patterns`] and the processor's `pattern_definitions`) into one regular expression,
//! with Elasticsearch's (Joni's Ruby) syntax read as such: `^` and `$` at line ends,
//! `(?m)` making `.` match newlines, `(?<a.b>...)` and `(?'a.b'...)` capturing into dotted
//! fields. The first pattern that matches sets the fields it captured.

mod patterns;

use crate::ingest::doc::IngestDoc;
use crate::ingest::processors::Options;
use serde_json::Value;
use std::collections::HashMap;

/// How deep patterns may name patterns, and how long one may grow expanded.
const MAX_DEPTH: usize = 64;
const MAX_EXPANDED: usize = 256 * 1024;
/// Steps of backtracking a match may take before it fails, as Elasticsearch's watchdog
/// interrupts a runaway match.
const BACKTRACK_LIMIT: usize = 1_000_000;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Type {
    Text,
    Int,
    Long,
    Float,
    Double,
    Boolean,
}

/// One named capture: its group in the expanded expression, its field, its type.
#[derive(Debug, Clone)]
struct Capture {
    group: String,
    field: String,
    ty: Type,
}

struct Compiled {
    regex: fancy_regex::Regex,
    captures: Vec<Capture>,
}

pub struct Grok {
    field: String,
    patterns: Vec<Compiled>,
    ignore_missing: bool,
    trace_match: bool,
}

impl Grok {
    pub fn parse(o: &mut Options) -> Result<Grok, String> {
        let field = o.required("field")?;
        let patterns = o.strings("patterns")?;
        let mut defs: HashMap<String, String> = HashMap::new();
        match o.take("pattern_definitions") {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => {
                for (k, v) in m {
                    let v = v
                        .as_str()
                        .ok_or_else(|| format!("[pattern_definitions] [{k}] must be a string"))?;
                    defs.insert(k, v.to_string());
                }
            }
            Some(other) => {
                return Err(format!(
                    "[pattern_definitions] must be an object, got {other}"
                ))
            }
        }
        match o.string("ecs_compatibility")?.as_deref() {
            None | Some("disabled") => {}
            Some(other) => {
                return Err(format!("[ecs_compatibility] [{other}] is not run by the embedded engine (it has the legacy patterns: `disabled`)"))
            }
        }
        let compiled = patterns
            .iter()
            .map(|p| compile(p, &defs))
            .collect::<Result<_, _>>()?;
        Ok(Grok {
            field,
            patterns: compiled,
            ignore_missing: o.flag("ignore_missing", false)?,
            trace_match: o.flag("trace_match", false)?,
        })
    }

    pub fn run(&self, doc: &mut IngestDoc) -> Result<(), String> {
        let Some(text) = doc.text_of(&self.field, self.ignore_missing)? else {
            return Ok(());
        };
        for (index, p) in self.patterns.iter().enumerate() {
            let found = p.regex.captures(&text).map_err(|e| {
                format!(
                    "grok pattern matching was interrupted ({e}) on field [{}]",
                    self.field
                )
            })?;
            let Some(found) = found else { continue };
            for c in &p.captures {
                if let Some(m) = found.name(&c.group) {
                    doc.set(&c.field, typed(m.as_str(), c.ty)?)?;
                }
            }
            if self.trace_match {
                doc.set("_ingest._grok_match_index", Value::from(index.to_string()))?;
            }
            return Ok(());
        }
        Err(format!(
            "Provided Grok expressions do not match field value: [{text}]"
        ))
    }
}

/// A captured text as its capture's type, as Elasticsearch converts it.
fn typed(text: &str, ty: Type) -> Result<Value, String> {
    let bad = |what: &str| format!("For input string: \"{text}\" (not {what})");
    Ok(match ty {
        Type::Text => Value::from(text),
        Type::Int => Value::from(text.parse::<i32>().map_err(|_| bad("an int"))?),
        Type::Long => Value::from(text.parse::<i64>().map_err(|_| bad("a long"))?),
        // A float keeps a float's digits ("0.1", not 0.10000000149011612).
        Type::Float => {
            let f: f32 = text.trim().parse().map_err(|_| bad("a float"))?;
            serde_json::Number::from_f64(f.to_string().parse().unwrap_or(f64::from(f)))
                .map_or(Value::Null, Value::Number)
        }
        Type::Double => {
            let f: f64 = text.trim().parse().map_err(|_| bad("a double"))?;
            serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
        }
        Type::Boolean => Value::Bool(text.eq_ignore_ascii_case("true")),
    })
}

/// One pattern as a regular expression with its captures.
fn compile(pattern: &str, defs: &HashMap<String, String>) -> Result<Compiled, String> {
    let mut captures = Vec::new();
    let mut stack = Vec::new();
    let body = expand(pattern, defs, &mut captures, &mut stack)?;
    // Ruby's `^` and `$` are at every line's start and end.
    let regex = fancy_regex::RegexBuilder::new(&format!("(?m){body}"))
        .backtrack_limit(BACKTRACK_LIMIT)
        .build()
        .map_err(|e| {
            format!("grok pattern [{pattern}] is not a regular expression the engine reads: {e}")
        })?;
    Ok(Compiled { regex, captures })
}

/// `pattern` with its pattern names expanded, its named groups renamed `gN` (noted in
/// `captures`) and Ruby's flags written as the regex crate's.
fn expand(
    pattern: &str,
    defs: &HashMap<String, String>,
    captures: &mut Vec<Capture>,
    stack: &mut Vec<String>,
) -> Result<String, String> {
    if stack.len() > MAX_DEPTH {
        return Err(format!(
            "grok patterns name each other more than {MAX_DEPTH} deep"
        ));
    }
    let mut out = String::with_capacity(pattern.len());
    let mut rest = pattern;
    while let Some(c) = rest.chars().next() {
        if out.len() > MAX_EXPANDED {
            return Err(format!("grok pattern expands past {MAX_EXPANDED} bytes"));
        }
        if c == '\\' {
            let len = rest[1..].chars().next().map_or(0, char::len_utf8) + 1;
            out.push_str(&rest[..len.min(rest.len())]);
            rest = &rest[len.min(rest.len())..];
        } else if let Some(after) = rest.strip_prefix("%{") {
            let end = after
                .find('}')
                .ok_or_else(|| format!("grok pattern [{pattern}]: `%{{` is not closed"))?;
            let reference = &after[..end];
            out.push_str(&reference_expanded(reference, defs, captures, stack)?);
            rest = &after[end + 1..];
        } else if let Some((name, after)) = named_group(rest) {
            let group = format!("g{}", captures.len());
            captures.push(Capture {
                group: group.clone(),
                field: name.to_string(),
                ty: Type::Text,
            });
            out.push_str(&format!("(?P<{group}>"));
            rest = after;
        } else if let Some(after) = rest.strip_prefix("(?") {
            // Inline flags: Ruby's `m` is the regex crate's `s` (`.` matches newlines).
            let flags: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphabetic() || *c == '-')
                .collect();
            if !flags.is_empty() && matches!(after[flags.len()..].chars().next(), Some(')' | ':')) {
                out.push_str("(?");
                out.push_str(&flags.replace('m', "s"));
                rest = &after[flags.len()..];
            } else {
                out.push_str("(?");
                rest = after;
            }
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    Ok(out)
}

/// `NAME`, `NAME:field` or `NAME:field:type`, expanded.
fn reference_expanded(
    reference: &str,
    defs: &HashMap<String, String>,
    captures: &mut Vec<Capture>,
    stack: &mut Vec<String>,
) -> Result<String, String> {
    let mut parts = reference.splitn(3, ':');
    let name = parts.next().unwrap_or_default();
    let field = parts.next().filter(|f| !f.is_empty());
    let ty = match parts.next() {
        None | Some("string") => Type::Text,
        Some("int") => Type::Int,
        Some("long") => Type::Long,
        Some("float") => Type::Float,
        Some("double") => Type::Double,
        Some("boolean") => Type::Boolean,
        Some(other) => {
            return Err(format!(
                "grok: unknown capture type [{other}] in %{{{reference}}}"
            ))
        }
    };
    let def = defs
        .get(name)
        .map(String::as_str)
        .or_else(|| patterns::builtin().get(name).map(String::as_str))
        .ok_or_else(|| format!("Unable to find pattern [{name}] in Grok's pattern dictionary"))?;
    if stack.iter().any(|s| s == name) {
        return Err(format!(
            "circular reference in pattern [{}][{name}]",
            stack.join("=>")
        ));
    }
    stack.push(name.to_string());
    let inner = expand(def, defs, captures, stack);
    stack.pop();
    let inner = inner?;
    Ok(match field {
        None => format!("(?:{inner})"),
        Some(field) => {
            let group = format!("g{}", captures.len());
            captures.push(Capture {
                group: group.clone(),
                field: field.to_string(),
                ty,
            });
            format!("(?P<{group}>{inner})")
        }
    })
}

/// A named group's opening, `(?<name>` or `(?'name'` (not a lookbehind), with its name and
/// what follows it.
fn named_group(s: &str) -> Option<(&str, &str)> {
    let (after, close) = if let Some(a) = s.strip_prefix("(?<") {
        (a, '>')
    } else if let Some(a) = s.strip_prefix("(?'") {
        (a, '\'')
    } else if let Some(a) = s.strip_prefix("(?P<") {
        (a, '>')
    } else {
        return None;
    };
    if after.starts_with('=') || after.starts_with('!') {
        return None;
    }
    let end = after.find(close)?;
    let name = &after[..end];
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '@' | '-'));
    ok.then(|| (name, &after[end + 1..]))
}

#[cfg(test)]
mod tests;
