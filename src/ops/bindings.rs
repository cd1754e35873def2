//! Parameter bindings: the declarative stand-in for a Rally track.py param source. A search's
//! or a raw request's `body` names values with `${name}`, and `bindings` says how each value
//! is drawn; each call gets a body rendered before its intended start, off the measured path.
//!
//! ```yaml
//! params:
//!   body: {query: {bool: {must: [{match: {tag: "${tag}"}}], filter: [{terms: {name: ["...${terms}", "${salt}"]}}]}}}
//!   bindings:
//!     tag: {choice-file: queries.csv, column: 0}
//!     terms: {lines: terms.txt}
//!     salt: {int: [1, 1000], as: string}
//! ```
//!
//! A string that is exactly `"${name}"` becomes the value with its type (a number stays a
//! number); `${name}` inside a longer string is the value as text; an array element
//! `"...${name}"` spreads a list's items into the array. Each binding draws once per call,
//! from a generator seeded per client: a race draws the same values each time it runs.

use super::{ParamError, Params, TrackContext};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::Distribution;
use serde_json::Value;
use std::io::Write;
use std::sync::Arc;

/// At most this many values in a list or a file a binding draws from.
const MAX_VALUES: usize = 10_000_000;

/// A body with `${name}` slots and the generators that fill them.
#[derive(Debug)]
pub struct BoundBody {
    segments: Vec<Segment>,
    generators: Vec<(String, Generator)>,
}

#[derive(Debug)]
enum Segment {
    Literal(String),
    /// The value as JSON (a string quoted).
    Json(usize),
    /// The value's text inside a JSON string.
    Text(usize),
    /// A list's items, comma-separated, inside an array.
    Spread(usize),
}

#[derive(Debug)]
struct Generator {
    kind: GenKind,
    as_string: bool,
}

#[derive(Debug)]
enum GenKind {
    /// Values as JSON text (strings quoted) and as text inside a string.
    Choice(Vec<(String, String)>),
    /// The whole list, as comma-separated JSON items.
    List(String),
    Int(i64, i64),
    Float(f64, f64),
    Date {
        from_ms: i64,
        to_ms: i64,
        format: Vec<chrono::format::Item<'static>>,
    },
    Sequence {
        start: i64,
        step: i64,
    },
    Weighted {
        values: Vec<(String, String)>,
        cumulative: Vec<f64>,
    },
    Uuid,
    Zipf {
        values: Vec<(String, String)>,
        dist: rand_distr::Zipf<f64>,
    },
}

impl BoundBody {
    /// Reads `bindings` and the `${...}` slots of `body`. Every slot names a binding and every
    /// binding is used.
    pub fn parse(
        p: &Params,
        body: &Value,
        ctx: &TrackContext,
    ) -> Result<Option<Arc<BoundBody>>, ParamError> {
        let Some(spec) = p.get("bindings") else {
            return Ok(None);
        };
        let Value::Object(spec) = spec else {
            return Err(ParamError::new(
                "bindings",
                "expected a mapping of names to generators",
            ));
        };
        let mut generators = Vec::new();
        for (name, g) in spec {
            let generator = Generator::parse(g, ctx)
                .map_err(|m| ParamError::new("bindings", format!("`{name}`: {m}")))?;
            generators.push((name.clone(), generator));
        }
        let mut b = BoundBody {
            segments: Vec::new(),
            generators,
        };
        let mut literal = String::new();
        b.compile(body, &mut literal)
            .map_err(|m| ParamError::new("body", m))?;
        if !literal.is_empty() {
            b.segments.push(Segment::Literal(literal));
        }
        for (i, (name, _)) in b.generators.iter().enumerate() {
            let used = b.segments.iter().any(|s| matches!(s, Segment::Json(j) | Segment::Text(j) | Segment::Spread(j) if *j == i));
            if !used {
                return Err(ParamError::new(
                    "bindings",
                    format!("`{name}` is bound but the body never uses `${{{name}}}`"),
                ));
            }
        }
        Ok(Some(Arc::new(b)))
    }

    fn slot(&self, name: &str) -> Result<usize, String> {
        self.generators
            .iter()
            .position(|(n, _)| n == name)
            .ok_or_else(|| {
                let hint = crate::suggest::did_you_mean(
                    name,
                    self.generators.iter().map(|(n, _)| n.as_str()),
                );
                format!("`${{{name}}}` names no binding{hint}")
            })
    }

    fn flush(&mut self, literal: &mut String) {
        if !literal.is_empty() {
            self.segments
                .push(Segment::Literal(std::mem::take(literal)));
        }
    }

    fn compile(&mut self, v: &Value, literal: &mut String) -> Result<(), String> {
        match v {
            Value::Object(m) => {
                literal.push('{');
                for (k, (key, value)) in m.iter().enumerate() {
                    if k > 0 {
                        literal.push(',');
                    }
                    literal.push_str(&Value::String(key.clone()).to_string());
                    literal.push(':');
                    self.compile(value, literal)?;
                }
                literal.push('}');
            }
            Value::Array(a) => {
                literal.push('[');
                for (k, item) in a.iter().enumerate() {
                    if k > 0 {
                        literal.push(',');
                    }
                    match item
                        .as_str()
                        .and_then(|s| s.strip_prefix("...${"))
                        .and_then(|s| s.strip_suffix('}'))
                    {
                        Some(name) => {
                            let i = self.slot(name)?;
                            if !matches!(self.generators[i].1.kind, GenKind::List(_)) {
                                return Err(format!("`...${{{name}}}` spreads a list, and `{name}` is not a `lines` binding"));
                            }
                            self.flush(literal);
                            self.segments.push(Segment::Spread(i));
                        }
                        None => self.compile(item, literal)?,
                    }
                }
                literal.push(']');
            }
            Value::String(s) => match s
                .strip_prefix("${")
                .and_then(|r| r.strip_suffix('}'))
                .filter(|n| !n.contains("${"))
            {
                Some(name) => {
                    let i = self.slot(name)?;
                    self.flush(literal);
                    if matches!(self.generators[i].1.kind, GenKind::List(_)) {
                        // A list standing alone is an array.
                        self.segments.push(Segment::Literal("[".into()));
                        self.segments.push(Segment::Spread(i));
                        literal.push(']');
                    } else {
                        self.segments.push(Segment::Json(i));
                    }
                }
                None => {
                    literal.push('"');
                    let mut rest = s.as_str();
                    while let Some(open) = rest.find("${") {
                        let Some(close) = rest[open..].find('}') else {
                            break;
                        };
                        let name = &rest[open + 2..open + close];
                        push_escaped(literal, &rest[..open]);
                        let i = self.slot(name)?;
                        let g = &self.generators[i].1;
                        if matches!(g.kind, GenKind::List(_)) {
                            return Err(format!("`{name}` is a list: spread it as an array item `\"...${{{name}}}\"`"));
                        }
                        if g.has_structures() && !g.as_string {
                            return Err(format!("`{name}` draws objects or lists, which cannot stand inside a string"));
                        }
                        self.flush(literal);
                        self.segments.push(Segment::Text(i));
                        rest = &rest[open + close + 1..];
                    }
                    push_escaped(literal, rest);
                    literal.push('"');
                }
            },
            other => literal.push_str(&other.to_string()),
        }
        Ok(())
    }

    /// One client's drawing state.
    pub fn client(self: &Arc<Self>, client: u64, clients: u64) -> BodyDraw {
        BodyDraw {
            body: self.clone(),
            rng: SmallRng::seed_from_u64(0x5EED_B1D5 ^ client.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            client,
            clients: clients.max(1),
            calls: 0,
            drawn: self
                .generators
                .iter()
                .map(|_| (Vec::new(), false))
                .collect(),
            out: Vec::new(),
        }
    }

    /// A body drawn once, for what is checked before a race.
    pub fn sample(self: &Arc<Self>) -> Value {
        let mut d = self.client(0, 1);
        serde_json::from_slice(d.render()).unwrap_or(Value::Null)
    }
}

impl Generator {
    fn parse(g: &Value, ctx: &TrackContext) -> Result<Generator, String> {
        let Value::Object(m) = g else {
            return Err(format!(
                "expected a mapping such as {{choice: [a, b]}}, got {g}"
            ));
        };
        let as_string = match m.get("as").and_then(Value::as_str) {
            None => false,
            Some("string") => true,
            Some(other) => {
                return Err(format!("`as: {other}`: the one conversion is `as: string`"))
            }
        };
        const KINDS: [&str; 10] = [
            "choice",
            "choice-file",
            "lines",
            "int",
            "float",
            "date",
            "sequence",
            "weighted",
            "uuid",
            "zipf",
        ];
        let kinds: Vec<&&str> = KINDS.iter().filter(|k| m.contains_key(**k)).collect();
        let [kind] = kinds.as_slice() else {
            return Err(format!("give exactly one of {}", KINDS.join(", ")));
        };
        let allowed: &[&str] = match **kind {
            "choice-file" => &["column"],
            "date" => &["format"],
            "zipf" => &["exponent"],
            _ => &[],
        };
        if let Some(k) = m
            .keys()
            .find(|k| k.as_str() != **kind && k.as_str() != "as" && !allowed.contains(&k.as_str()))
        {
            return Err(format!("`{k}` is not an option of `{kind}`"));
        }
        let v = &m[**kind];
        let kind = match **kind {
            "choice" => GenKind::Choice(values(list(v)?)?),
            "choice-file" => GenKind::Choice(values(read_lines(v, m.get("column"), ctx)?)?),
            "lines" => {
                let items = read_lines(v, None, ctx)?;
                GenKind::List(
                    items
                        .iter()
                        .map(Value::to_string)
                        .collect::<Vec<_>>()
                        .join(","),
                )
            }
            "int" => {
                let (lo, hi) = pair(v)?;
                match (lo.as_i64(), hi.as_i64()) {
                    (Some(lo), Some(hi)) if lo <= hi => GenKind::Int(lo, hi),
                    _ => {
                        return Err(format!(
                            "`int` takes [low, high] integers, low ≤ high; got {v}"
                        ))
                    }
                }
            }
            "float" => {
                let (lo, hi) = pair(v)?;
                match (lo.as_f64(), hi.as_f64()) {
                    (Some(lo), Some(hi)) if lo < hi && lo.is_finite() && hi.is_finite() => {
                        GenKind::Float(lo, hi)
                    }
                    _ => {
                        return Err(format!(
                            "`float` takes [low, high] numbers, low < high; got {v}"
                        ))
                    }
                }
            }
            "date" => date_kind(v, m)?,
            "sequence" => sequence_kind(v)?,
            "weighted" => weighted_kind(v)?,
            "uuid" => GenKind::Uuid,
            "zipf" => {
                let items = list(v)?;
                let exponent = m.get("exponent").and_then(Value::as_f64).unwrap_or(1.0);
                let dist = rand_distr::Zipf::new(items.len() as f64, exponent)
                    .map_err(|e| format!("`zipf`: {e} (exponent {exponent})"))?;
                GenKind::Zipf {
                    values: values(items)?,
                    dist,
                }
            }
            _ => unreachable!("listed above"),
        };
        Ok(Generator { kind, as_string })
    }
}

/// A `date` binding: [from, to] (YYYY-MM-DD or RFC 3339) and a strftime `format`.
fn date_kind(v: &Value, m: &serde_json::Map<String, Value>) -> Result<GenKind, String> {
    let (lo, hi) = pair(v)?;
    let ms = |d: &Value| -> Result<i64, String> {
        let s = d.as_str().ok_or_else(|| {
            format!("`date` takes [from, to] dates (YYYY-MM-DD or RFC 3339), got {d}")
        })?;
        chrono::DateTime::parse_from_rfc3339(s)
            .map(|t| t.timestamp_millis())
            .or_else(|_| {
                chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").map(|d| {
                    d.and_hms_opt(0, 0, 0)
                        .unwrap_or_default()
                        .and_utc()
                        .timestamp_millis()
                })
            })
            .map_err(|e| format!("`{s}` is not a date (YYYY-MM-DD or RFC 3339): {e}"))
    };
    let (from_ms, to_ms) = (ms(lo)?, ms(hi)?);
    if from_ms > to_ms {
        return Err(format!("`date`: {lo} is after {hi}"));
    }
    let format = m
        .get("format")
        .and_then(Value::as_str)
        .unwrap_or("%Y-%m-%dT%H:%M:%S%.3fZ");
    let items: Vec<chrono::format::Item<'static>> = chrono::format::StrftimeItems::new(format)
        .parse_to_owned()
        .map_err(|_| format!("`{format}` is not a date format (strftime's syntax)"))?;
    Ok(GenKind::Date {
        from_ms,
        to_ms,
        format: items,
    })
}

/// A `sequence` binding: a start, or [start, step].
fn sequence_kind(v: &Value) -> Result<GenKind, String> {
    match v {
        Value::Number(n) => Ok(GenKind::Sequence {
            start: n.as_i64().ok_or("`sequence` starts at an integer")?,
            step: 1,
        }),
        Value::Array(_) => {
            let (a, b) = pair(v)?;
            match (a.as_i64(), b.as_i64()) {
                (Some(start), Some(step)) if step != 0 => Ok(GenKind::Sequence { start, step }),
                _ => {
                    return Err(format!(
                        "`sequence` takes a start or [start, step], step not 0; got {v}"
                    ))
                }
            }
        }
        _ => {
            return Err(format!(
                "`sequence` takes a start or [start, step], got {v}"
            ))
        }
    }
}

/// A `weighted` binding: [[value, weight], ...], weights positive.
fn weighted_kind(v: &Value) -> Result<GenKind, String> {
    let Value::Array(pairs) = v else {
        return Err(format!("`weighted` takes [[value, weight], ...], got {v}"));
    };
    let mut items = Vec::new();
    let mut cumulative = Vec::new();
    let mut total = 0.0;
    for p in pairs {
        let (value, w) = pair(p)?;
        let w = w
            .as_f64()
            .filter(|w| *w > 0.0 && w.is_finite())
            .ok_or_else(|| format!("`weighted`: a weight is a positive number, got {w}"))?;
        total += w;
        items.push(value.clone());
        cumulative.push(total);
    }
    if items.is_empty() {
        return Err("`weighted` needs at least one [value, weight]".into());
    }
    Ok(GenKind::Weighted {
        values: values(items)?,
        cumulative,
    })
}

fn list(v: &Value) -> Result<Vec<Value>, String> {
    match v {
        Value::Array(a) if !a.is_empty() && a.len() <= MAX_VALUES => Ok(a.clone()),
        _ => Err(format!("expected a non-empty list, got {v}")),
    }
}

fn pair(v: &Value) -> Result<(&Value, &Value), String> {
    match v.as_array().map(Vec::as_slice) {
        Some([a, b]) => Ok((a, b)),
        _ => Err(format!("expected a pair [a, b], got {v}")),
    }
}

/// Each value as its JSON text and its text inside a string.
fn values(items: Vec<Value>) -> Result<Vec<(String, String)>, String> {
    Ok(items
        .into_iter()
        .map(|v| {
            let json = v.to_string();
            let text = match &v {
                Value::String(s) => {
                    let mut t = String::new();
                    push_escaped(&mut t, s);
                    t
                }
                other => {
                    let mut t = String::new();
                    push_escaped(&mut t, &other.to_string());
                    t
                }
            };
            (json, text)
        })
        .collect())
}

/// The lines of a file in the track's directory (empty lines left out), or one column of
/// them (comma-separated, 0-based).
fn read_lines(v: &Value, column: Option<&Value>, ctx: &TrackContext) -> Result<Vec<Value>, String> {
    let name = v
        .as_str()
        .ok_or_else(|| format!("expected a file name, got {v}"))?;
    let dir = ctx
        .dir
        .ok_or("files are read from a track's directory, and this operation has none")?;
    let path = crate::files::resolve_inside(dir, name)
        .ok_or_else(|| format!("`{name}` is outside the track directory"))?;
    let text = crate::files::read_text(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let column = match column {
        None => None,
        Some(c) => Some(
            c.as_u64()
                .ok_or_else(|| format!("`column` is a 0-based column number, got {c}"))?
                as usize,
        ),
    };
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let value = match column {
            None => line.trim(),
            Some(c) => line
                .split(',')
                .nth(c)
                .ok_or_else(|| format!("{}:{}: no column {c}", path.display(), n + 1))?
                .trim(),
        };
        out.push(Value::String(value.to_string()));
        if out.len() > MAX_VALUES {
            return Err(format!(
                "{} has more than {MAX_VALUES} lines",
                path.display()
            ));
        }
    }
    if out.is_empty() {
        return Err(format!("{} has no lines", path.display()));
    }
    Ok(out)
}

fn push_escaped(out: &mut String, s: &str) {
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
}

/// One client's bodies, rendered into buffers it keeps: after the first calls, rendering
/// allocates nothing.
#[derive(Debug)]
pub struct BodyDraw {
    body: Arc<BoundBody>,
    rng: SmallRng,
    client: u64,
    clients: u64,
    calls: u64,
    /// Per binding: this call's value (JSON text, or a string's escaped text) and whether it
    /// is a string (quoted where the value stands alone).
    drawn: Vec<(Vec<u8>, bool)>,
    out: Vec<u8>,
}

impl BodyDraw {
    /// The next call's body.
    pub fn render(&mut self) -> &[u8] {
        let Self {
            body,
            rng,
            client,
            clients,
            calls,
            drawn,
            out,
        } = self;
        for ((_, g), (buf, is_string)) in body.generators.iter().zip(drawn.iter_mut()) {
            buf.clear();
            *is_string = g.draw(rng, *client, *clients, *calls, buf);
        }
        *calls += 1;
        out.clear();
        for s in &body.segments {
            match s {
                Segment::Literal(l) => out.extend_from_slice(l.as_bytes()),
                Segment::Json(i) => {
                    let (buf, is_string) = &drawn[*i];
                    if *is_string {
                        out.push(b'"');
                        out.extend_from_slice(buf);
                        out.push(b'"');
                    } else {
                        out.extend_from_slice(buf);
                    }
                }
                Segment::Text(i) | Segment::Spread(i) => out.extend_from_slice(&drawn[*i].0),
            }
        }
        &self.out
    }
}

impl Generator {
    fn has_structures(&self) -> bool {
        match &self.kind {
            GenKind::Choice(v)
            | GenKind::Weighted { values: v, .. }
            | GenKind::Zipf { values: v, .. } => {
                v.iter().any(|(json, _)| json.starts_with(['{', '[']))
            }
            _ => false,
        }
    }

    /// Writes this call's value into `buf`; true when it is a string (`buf` holds its escaped
    /// text, unquoted).
    fn draw(
        &self,
        rng: &mut SmallRng,
        client: u64,
        clients: u64,
        call: u64,
        buf: &mut Vec<u8>,
    ) -> bool {
        let string = match &self.kind {
            GenKind::Choice(values) => {
                return self.pick(&values[rng.random_range(0..values.len())], buf)
            }
            GenKind::List(items) => {
                buf.extend_from_slice(items.as_bytes());
                false
            }
            GenKind::Int(lo, hi) => {
                let _ = write!(buf, "{}", rng.random_range(*lo..=*hi));
                false
            }
            GenKind::Float(lo, hi) => {
                let _ = write!(buf, "{}", rng.random_range(*lo..*hi));
                false
            }
            GenKind::Date {
                from_ms,
                to_ms,
                format,
            } => {
                let ms = rng.random_range(*from_ms..=*to_ms);
                if let Some(t) = chrono::DateTime::from_timestamp_millis(ms) {
                    let _ = write!(buf, "{}", t.format_with_items(format.iter()));
                }
                true
            }
            GenKind::Sequence { start, step } => {
                // Unique across the task's clients: client c takes c, c + clients, ...
                let n = call.wrapping_mul(clients).wrapping_add(client) as i64;
                let _ = write!(buf, "{}", start.wrapping_add(n.wrapping_mul(*step)));
                false
            }
            GenKind::Weighted { values, cumulative } => {
                let total = cumulative.last().copied().unwrap_or(1.0);
                let r = rng.random_range(0.0..total);
                let i = cumulative
                    .partition_point(|c| *c <= r)
                    .min(values.len() - 1);
                return self.pick(&values[i], buf);
            }
            GenKind::Uuid => {
                let mut b: [u8; 16] = rng.random();
                b[6] = (b[6] & 0x0f) | 0x40;
                b[8] = (b[8] & 0x3f) | 0x80;
                for (i, byte) in b.iter().enumerate() {
                    if matches!(i, 4 | 6 | 8 | 10) {
                        buf.push(b'-');
                    }
                    let _ = write!(buf, "{byte:02x}");
                }
                true
            }
            GenKind::Zipf { values, dist } => {
                let rank = dist.sample(rng) as usize;
                return self.pick(&values[rank.clamp(1, values.len()) - 1], buf);
            }
        };
        string || self.as_string
    }

    fn pick(&self, (json, text): &(String, String), buf: &mut Vec<u8>) -> bool {
        let is_string = json.starts_with('"');
        if is_string || self.as_string {
            buf.extend_from_slice(text.as_bytes());
            true
        } else {
            buf.extend_from_slice(json.as_bytes());
            false
        }
    }
}

#[cfg(test)]
mod tests;
