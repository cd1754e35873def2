//! Painless source into tokens: numbers, strings, names, operators, and `/regex/flags`
//! literals (a `/` where an operand is expected starts one, as Painless's lexer reads it).

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Num(f64, bool),
    Str(String),
    Ident(String),
    Op(&'static str),
    /// `/source/flags`.
    Regex(String, String),
}

/// Declaration types the subset knows (and any capitalised type name, such as
/// `ScriptDocValues.Geometry`).
pub const TYPES: [&str; 12] = [
    "void", "def", "int", "long", "double", "float", "boolean", "short", "byte", "char", "var",
    "String",
];

const OPS: [&str; 39] = [
    "==~", "=~", ">>>", "<<=", ">>=", "?.", "==", "!=", "<=", ">=", "&&", "||", "++", "--", "+=",
    "-=", "*=", "/=", "%=", "->", "::", "<<", ">>", "+", "-", "*", "/", "%", "<", ">", "=", "!",
    "?", ":", ".", ",", ";", "(", ")",
];
const SINGLE: [&str; 7] = ["[", "]", "{", "}", "&", "|", "~"];

pub fn lex(src: &str) -> Result<Vec<(Tok, usize)>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == '/' && operand_expected(&out) {
            let (tok, next) = lex_regex(&chars, i, src)?;
            i = next;
            out.push((tok, start));
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            let (tok, next) = lex_number(&chars, i, src)?;
            i = next;
            out.push((tok, start));
        } else if c == '"' || c == '\'' {
            i += 1;
            let mut s = String::new();
            while i < chars.len() && chars[i] != c {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    i += 1;
                    s.push(match chars[i] {
                        'n' => '\n',
                        't' => '\t',
                        other => other,
                    });
                } else {
                    s.push(chars[i]);
                }
                i += 1;
            }
            if i >= chars.len() {
                return Err(format!("a string is not closed (at {})", at(src, start)));
            }
            i += 1;
            out.push((Tok::Str(s), start));
        } else if c.is_alphabetic() || c == '_' || c == '$' {
            let mut s = String::new();
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$')
            {
                s.push(chars[i]);
                i += 1;
            }
            out.push((Tok::Ident(s), start));
        } else {
            let rest: String = chars[i..chars.len().min(i + 4)].iter().collect();
            let op = OPS
                .iter()
                .chain(SINGLE.iter())
                .find(|op| rest.starts_with(**op))
                .ok_or_else(|| format!("unexpected `{c}` (at {})", at(src, start)))?;
            i += op.chars().count();
            out.push((Tok::Op(op), start));
        }
    }
    Ok(out)
}

/// A number from `chars[i]`: its token and the position after it (`1`, `2.5`, `1e3`, `10L`,
/// `0.5d`, `0x1F`).
fn lex_number(chars: &[char], mut i: usize, src: &str) -> Result<(Tok, usize), String> {
    let start = i;
    let mut text = String::new();
    let mut float = false;
    while i < chars.len()
        && (chars[i].is_ascii_alphanumeric() || chars[i] == '.' || chars[i] == '_')
    {
        if chars[i] == '.' {
            // `1.foo()` is not a number's fraction.
            if !chars.get(i + 1).is_some_and(char::is_ascii_digit) {
                break;
            }
            float = true;
        }
        if matches!(chars[i], 'e' | 'E') && text.chars().all(|c| c.is_ascii_digit() || c == '.') {
            float = true;
            text.push(chars[i]);
            i += 1;
            if matches!(chars.get(i), Some('+' | '-')) {
                text.push(chars[i]);
                i += 1;
            }
            continue;
        }
        if chars[i] != '_' {
            text.push(chars[i]);
        }
        i += 1;
    }
    let (digits, suffix_float) = match text.chars().last() {
        Some('d' | 'D' | 'f' | 'F') => (&text[..text.len() - 1], true),
        Some('l' | 'L') => (&text[..text.len() - 1], false),
        _ => (text.as_str(), false),
    };
    let n = if let Some(hex) = digits.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).map(|n| n as f64).ok()
    } else {
        digits.parse::<f64>().ok()
    };
    let n = n.ok_or_else(|| format!("`{text}` is not a number (at {})", at(src, start)))?;
    Ok((Tok::Num(n, float || suffix_float), i))
}

/// `line:column` of a character offset.
pub fn at(src: &str, char_pos: usize) -> String {
    let before: String = src.chars().take(char_pos).collect();
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("{line}:{column}")
}

/// Whether the next token is an operand: at the start, or after an operator other than a
/// closing bracket (so `a / b` divides and `x ==~ /a/` reads a regex).
fn operand_expected(out: &[(Tok, usize)]) -> bool {
    match out.last() {
        None => true,
        Some((Tok::Op(op), _)) => !matches!(*op, ")" | "]"),
        Some(_) => false,
    }
}

/// A regex literal from `chars[i]` (the opening `/`): its token and the position after it.
fn lex_regex(chars: &[char], mut i: usize, src: &str) -> Result<(Tok, usize), String> {
    let start = i;
    i += 1;
    let mut source = String::new();
    loop {
        match chars.get(i) {
            None | Some('\n') => {
                return Err(format!("a regex is not closed (at {})", at(src, start)))
            }
            Some('/') => break,
            // `\/` is a slash in the pattern; other escapes stay for the regex.
            Some('\\') if chars.get(i + 1) == Some(&'/') => {
                source.push('/');
                i += 2;
            }
            Some('\\') => {
                source.push('\\');
                if let Some(c) = chars.get(i + 1) {
                    source.push(*c);
                }
                i += 2;
            }
            Some(c) => {
                source.push(*c);
                i += 1;
            }
        }
    }
    i += 1;
    let mut flags = String::new();
    while let Some(c) = chars.get(i).filter(|c| c.is_ascii_alphabetic()) {
        flags.push(*c);
        i += 1;
    }
    Ok((Tok::Regex(source, flags), i))
}
