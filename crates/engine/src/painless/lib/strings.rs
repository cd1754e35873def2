//! A `String`'s methods, as Java's (indexes count characters).

use super::MAX_LEN;
use crate::painless::fault::Fault;
use crate::painless::val::Val;

/// A string's method; None when strings have no such method here.
pub fn method(s: &str, name: &str, args: &[Val]) -> Option<Result<Val, Fault>> {
    use Val::*;
    let s_arg = |i: usize| match args.get(i) {
        Some(Str(s)) => Ok(s.as_str()),
        Some(Null) => Err(Fault::npe(format!("`{name}` of null"))),
        _ => Err(Fault::cast(format!("`{name}` takes a string"))),
    };
    let v = (|| -> Result<Val, Fault> {
        Ok(match (name, args.len()) {
            ("length", 0) => Int(s.chars().count() as i64),
            ("isEmpty", 0) => Bool(s.is_empty()),
            ("isBlank", 0) => Bool(s.trim().is_empty()),
            ("toLowerCase", 0) => Str(s.to_lowercase()),
            ("toUpperCase", 0) => Str(s.to_uppercase()),
            // Java's trim drops characters up to the space; strip drops Unicode whitespace.
            ("trim", 0) => Str(s.trim_matches(|c: char| c <= ' ').to_string()),
            ("strip", 0) => Str(s.trim().to_string()),
            ("contains", 1) => Bool(s.contains(s_arg(0)?)),
            ("startsWith", 1) => Bool(s.starts_with(s_arg(0)?)),
            ("endsWith", 1) => Bool(s.ends_with(s_arg(0)?)),
            ("equalsIgnoreCase", 1) => Bool(match args.first() {
                Some(Str(o)) => s.to_lowercase() == o.to_lowercase(),
                _ => false,
            }),
            ("indexOf", 1) => Int(s
                .find(s_arg(0)?)
                .map_or(-1, |i| s[..i].chars().count() as i64)),
            ("lastIndexOf", 1) => Int(s
                .rfind(s_arg(0)?)
                .map_or(-1, |i| s[..i].chars().count() as i64)),
            ("splitOnToken", 1) => {
                // Elasticsearch's augmentation: an empty token, or one longer than the
                // text, gives the text alone; empty parts are kept.
                let token = s_arg(0)?;
                if token.is_empty() || token.len() > s.len() {
                    return Ok(Val::list(vec![Str(s.to_string())]));
                }
                Val::list(s.split(token).map(|p| Str(p.to_string())).collect())
            }
            ("compareTo", 1) => Int(match s.cmp(s_arg(0)?) {
                std::cmp::Ordering::Less => -1,
                std::cmp::Ordering::Equal => 0,
                std::cmp::Ordering::Greater => 1,
            }),
            ("hashCode", 0) => Int(java_hash(s)),
            _ => return built(s, name, args),
        })
    })();
    match v {
        Err(Fault::Halt(e)) if e.is_empty() => None,
        other => Some(other),
    }
}

/// A string's methods that build another from it.
fn built(s: &str, name: &str, args: &[Val]) -> Result<Val, Fault> {
    use Val::*;
    let s_arg = |i: usize| match args.get(i) {
        Some(Str(s)) => Ok(s.as_str()),
        Some(Null) => Err(Fault::npe(format!("`{name}` of null"))),
        _ => Err(Fault::cast(format!("`{name}` takes a string"))),
    };
    let i_arg = |i: usize| match args.get(i) {
        Some(Int(n)) => Ok(*n),
        _ => Err(Fault::cast(format!("`{name}` takes a whole number"))),
    };
    let bounds = |what: String| Fault::thrown("StringIndexOutOfBoundsException", what);
    Ok(match (name, args.len()) {
        ("concat", 1) => {
            let more = s_arg(0)?;
            if s.len() + more.len() > MAX_LEN {
                return Err(Fault::halt(format!(
                    "a string of more than {MAX_LEN} bytes"
                )));
            }
            Str(format!("{s}{more}"))
        }
        ("repeat", 1) => {
            let n = usize::try_from(i_arg(0)?).map_err(|_| Fault::arg("count is negative"))?;
            if s.len().saturating_mul(n) > MAX_LEN {
                return Err(Fault::halt(format!(
                    "a string of more than {MAX_LEN} bytes"
                )));
            }
            Str(s.repeat(n))
        }
        ("replace", 2) => {
            let (from, to) = (s_arg(0)?, s_arg(1)?);
            // Each match may grow the text: bounded before it is built.
            if s.matches(from).count().saturating_mul(to.len()) + s.len() > MAX_LEN {
                return Err(Fault::halt(format!(
                    "a string of more than {MAX_LEN} bytes"
                )));
            }
            Str(s.replace(from, to))
        }
        ("charAt", 1) => {
            let i = i_arg(0)?;
            Str(usize::try_from(i)
                .ok()
                .and_then(|i| s.chars().nth(i))
                .ok_or_else(|| bounds(format!("index {i}, length {}", s.chars().count())))?
                .to_string())
        }
        ("substring", 1 | 2) => {
            let chars: Vec<char> = s.chars().collect();
            let from = i_arg(0)?;
            let to = if args.len() > 1 {
                i_arg(1)?
            } else {
                chars.len() as i64
            };
            if from < 0 || from > to || to > chars.len() as i64 {
                return Err(bounds(format!(
                    "begin {from}, end {to}, length {}",
                    chars.len()
                )));
            }
            Str(chars[from as usize..to as usize].iter().collect())
        }
        _ => return Err(Fault::halt(String::new())),
    })
}

/// Java's `String.hashCode`: `s[0]*31^(n-1) + ... + s[n-1]` over UTF-16 units, as an int.
fn java_hash(s: &str) -> i64 {
    s.encode_utf16()
        .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(u as i32)) as i64
}
