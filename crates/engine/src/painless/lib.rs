//! The classes and methods of the Painless subset: arithmetic and comparison as Java has them,
//! `Math`, `Double`/`Integer`/`Long`/`String` statics, `MovingFunctions`, and the methods of
//! strings, lists, maps, numbers and a field's doc values. Anything else is named in an error.

use super::ast::BinOp;
use super::eval::Val;

/// A string or list a script builds holds at most this many bytes or items (a hostile
/// script doubling one in a loop stops here, not at the machine's memory).
const MAX_LEN: usize = 1 << 20;

pub fn binary(op: BinOp, a: Val, b: Val) -> Result<Val, String> {
    use Val::*;
    if op == BinOp::Add {
        if let (Str(s), other) | (other, Str(s)) = (&a, &b) {
            let (l, r) = if matches!(a, Str(_)) {
                (s.clone(), text(other))
            } else {
                (text(other), s.clone())
            };
            if l.len() + r.len() > MAX_LEN {
                return Err(format!("a string of more than {MAX_LEN} bytes"));
            }
            return Ok(Str(l + &r));
        }
    }
    match op {
        BinOp::Eq => return Ok(Bool(equal(&a, &b))),
        BinOp::Ne => return Ok(Bool(!equal(&a, &b))),
        _ => {}
    }
    if let (Str(x), Str(y)) = (&a, &b) {
        return compare(op, x.cmp(y))
            .ok_or_else(|| format!("cannot apply an arithmetic operator to strings"));
    }
    match (&a, &b) {
        (Int(x), Int(y)) => {
            let (x, y) = (*x, *y);
            Ok(match op {
                BinOp::Add => Int(x.wrapping_add(y)),
                BinOp::Sub => Int(x.wrapping_sub(y)),
                BinOp::Mul => Int(x.wrapping_mul(y)),
                BinOp::Div if y == 0 => return Err("/ by zero".into()),
                BinOp::Div => Int(x.wrapping_div(y)),
                BinOp::Rem if y == 0 => return Err("/ by zero".into()),
                BinOp::Rem => Int(x.wrapping_rem(y)),
                _ => return compare(op, x.cmp(&y)).ok_or_else(|| "unknown operator".into()),
            })
        }
        _ => {
            let (Some(x), Some(y)) = (a.as_f64(), b.as_f64()) else {
                return Err(format!(
                    "cannot apply {op:?} to a {} and a {}",
                    a.type_name(),
                    b.type_name()
                ));
            };
            Ok(match op {
                BinOp::Add => Float(x + y),
                BinOp::Sub => Float(x - y),
                BinOp::Mul => Float(x * y),
                BinOp::Div => Float(x / y),
                BinOp::Rem => Float(x % y),
                BinOp::Lt => Bool(x < y),
                BinOp::Le => Bool(x <= y),
                BinOp::Gt => Bool(x > y),
                BinOp::Ge => Bool(x >= y),
                _ => return Err("unknown operator".into()),
            })
        }
    }
}

fn compare(op: BinOp, o: std::cmp::Ordering) -> Option<Val> {
    use std::cmp::Ordering::*;
    Some(Val::Bool(match op {
        BinOp::Lt => o == Less,
        BinOp::Le => o != Greater,
        BinOp::Gt => o == Greater,
        BinOp::Ge => o != Less,
        _ => return None,
    }))
}

fn equal(a: &Val, b: &Val) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// A value as `String.valueOf` writes it.
pub fn text(v: &Val) -> String {
    match v {
        Val::Null => "null".into(),
        Val::Bool(b) => b.to_string(),
        Val::Int(i) => i.to_string(),
        Val::Float(f) if f.fract() == 0.0 && f.abs() < 1e7 => format!("{f:.1}"),
        Val::Float(f) => f.to_string(),
        Val::Str(s) => s.clone(),
        other => other.to_json().to_string(),
    }
}

pub fn key_text(v: &Val) -> Result<String, String> {
    match v {
        Val::Str(s) => Ok(s.clone()),
        Val::Int(i) => Ok(i.to_string()),
        other => Err(format!("a key is a string, got a {}", other.type_name())),
    }
}

pub fn cast(t: &str, v: Val) -> Result<Val, String> {
    let n = || {
        // A field's single value casts as the value (`(int) doc.population` of one value).
        let one = match &v {
            Val::Doc(values) if values.len() == 1 => &values[0],
            other => other,
        };
        one.as_f64()
            .ok_or_else(|| format!("cannot cast a {} to {t}", v.type_name()))
    };
    Ok(match t {
        "int" | "long" | "short" | "byte" | "Integer" | "Long" => Val::Int(n()? as i64),
        "double" | "float" | "Double" | "Float" => Val::Float(n()?),
        "List" | "ArrayList" => match v {
            Val::Doc(values) => Val::List(values),
            other => other,
        },
        _ => v,
    })
}

pub fn index(base: &Val, key: &Val) -> Result<Val, String> {
    match (base, key) {
        (Val::List(l) | Val::Doc(l), Val::Int(i)) => l
            .get(usize::try_from(*i).map_err(|_| format!("index {i} out of bounds"))?)
            .cloned()
            .ok_or_else(|| format!("index {i} out of bounds for length {}", l.len())),
        (Val::Map(m), k) => {
            let k = key_text(k)?;
            Ok(m.iter()
                .find(|(n, _)| *n == k)
                .map_or(Val::Null, |(_, v)| v.clone()))
        }
        (b, k) => Err(format!(
            "cannot index a {} by a {}",
            b.type_name(),
            k.type_name()
        )),
    }
}

/// The entry `key` of a list or map, to change in place (a missing map entry is null, as
/// `ctx.a.b = 1` on a null `ctx.a` fails in Painless).
pub fn entry_mut<'v>(slot: &'v mut Val, key: &Val) -> Result<&'v mut Val, String> {
    match (slot, key) {
        (Val::List(l), Val::Int(i)) => {
            let len = l.len();
            usize::try_from(*i)
                .ok()
                .and_then(|i| l.get_mut(i))
                .ok_or_else(|| format!("index {i} out of bounds for length {len}"))
        }
        (Val::Map(m), k) => {
            let k = key_text(k)?;
            m.iter_mut()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v)
                .ok_or_else(|| {
                    format!("cannot access `{k}` of a null value (it is not in the map)")
                })
        }
        (s, _) => Err(format!("cannot access an entry of a {}", s.type_name())),
    }
}

pub fn set_index(slot: &mut Val, key: Val, v: Val) -> Result<(), String> {
    match (slot, key) {
        (Val::List(l), Val::Int(i)) => {
            let len = l.len();
            let cell = usize::try_from(i)
                .ok()
                .and_then(|i| l.get_mut(i))
                .ok_or_else(|| format!("index {i} out of bounds for length {len}"))?;
            *cell = v;
            Ok(())
        }
        (Val::Map(m), k) => {
            let k = key_text(&k)?;
            match m.iter_mut().find(|(n, _)| *n == k) {
                Some(entry) => entry.1 = v,
                None => m.push((k, v)),
            }
            Ok(())
        }
        (s, _) => Err(format!("cannot set an entry of a {}", s.type_name())),
    }
}

/// `value.name`: a doc value's `value`/`empty`/`length`, or a map's entry.
pub fn field(base: &Val, name: &str) -> Result<Val, String> {
    match (base, name) {
        (Val::Doc(values), "value") => values
            .first()
            .cloned()
            .ok_or_else(|| "A document doesn't have a value for a field! Use doc[<field>].size()==0 to check if a document is missing a field!".into()),
        (Val::Doc(values), "empty") => Ok(Val::Bool(values.is_empty())),
        (Val::Doc(values), "values") => Ok(Val::List(values.clone())),
        (Val::Date(ms), "millis") => Ok(Val::Int(*ms)),
        (Val::Int(_) | Val::Float(_), "value") => Ok(base.clone()),
        (Val::Geo(lat, _), "lat") => Ok(Val::Float(*lat)),
        (Val::Geo(_, lon), "lon") => Ok(Val::Float(*lon)),
        (Val::Doc(values), "lat" | "lon") => field(
            values.first().ok_or("A document doesn't have a value for a field! Use doc[<field>].size()==0 to check if a document is missing a field!")?,
            name,
        ),
        (Val::List(l) | Val::Doc(l), "length") => Ok(Val::Int(l.len() as i64)),
        (Val::Map(_), k) => index(base, &Val::Str(k.into())),
        (b, n) => Err(format!("a {} has no field `{n}` in the engine's Painless subset", b.type_name())),
    }
}

pub fn static_field(class: &str, name: &str) -> Result<Val, String> {
    Ok(match (class, name) {
        ("Math", "PI") => Val::Float(std::f64::consts::PI),
        ("Math", "E") => Val::Float(std::f64::consts::E),
        ("Double", "MAX_VALUE") => Val::Float(f64::MAX),
        ("Double", "MIN_VALUE") => Val::Float(f64::MIN_POSITIVE),
        ("Double", "NaN") => Val::Float(f64::NAN),
        ("Double", "POSITIVE_INFINITY") => Val::Float(f64::INFINITY),
        ("Double", "NEGATIVE_INFINITY") => Val::Float(f64::NEG_INFINITY),
        ("Integer", "MAX_VALUE") => Val::Int(i32::MAX as i64),
        ("Integer", "MIN_VALUE") => Val::Int(i32::MIN as i64),
        ("Long", "MAX_VALUE") => Val::Int(i64::MAX),
        ("Long", "MIN_VALUE") => Val::Int(i64::MIN),
        _ => {
            return Err(format!(
            "`{class}.{name}` is not in the engine's Painless subset (or `{class}` is not defined)"
        ))
        }
    })
}

/// A static method's name (`Math.log`), written out only into an error.
struct What<'a>(&'a str, &'a str);

impl std::fmt::Display for What<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.0, self.1)
    }
}

/// `N` numeric arguments (no allocation: this runs for every document a script scores).
fn nums<const N: usize>(args: &[Val], what: &What) -> Result<[f64; N], String> {
    if args.len() != N {
        return Err(format!(
            "`{what}` takes {N} argument(s), got {}",
            args.len()
        ));
    }
    let mut out = [0.0; N];
    for (o, a) in out.iter_mut().zip(args) {
        *o = a
            .as_f64()
            .ok_or_else(|| format!("`{what}` takes numbers, got a {}", a.type_name()))?;
    }
    Ok(out)
}

pub fn static_call(class: &str, name: &str, args: &[Val]) -> Result<Val, String> {
    let what = &What(class, name);
    match class {
        "Math" => math(name, args, what),
        "MovingFunctions" => moving(name, args, what),
        "Double" | "Float"
            if name == "parseDouble" || name == "parseFloat" || name == "valueOf" =>
        {
            match args {
                [Val::Str(s)] => s
                    .trim()
                    .parse::<f64>()
                    .map(Val::Float)
                    .map_err(|_| format!("NumberFormatException: `{s}`")),
                [v] => Ok(Val::Float(nums::<1>(std::slice::from_ref(v), what)?[0])),
                _ => Err(format!("`{what}` takes one argument")),
            }
        }
        "Double" if name == "isNaN" => Ok(Val::Bool(nums::<1>(args, what)?[0].is_nan())),
        "Double" if name == "isInfinite" => Ok(Val::Bool(nums::<1>(args, what)?[0].is_infinite())),
        "Integer" | "Long" if matches!(name, "parseInt" | "parseLong" | "valueOf") => match args {
            [Val::Str(s)] => s
                .trim()
                .parse::<i64>()
                .map(Val::Int)
                .map_err(|_| format!("NumberFormatException: `{s}`")),
            [Val::Int(i)] => Ok(Val::Int(*i)),
            _ => Err(format!("`{what}` takes a string")),
        },
        "String" if name == "valueOf" => match args {
            [v] => Ok(Val::Str(text(v))),
            _ => Err(format!("`{what}` takes one argument")),
        },
        _ => Err(format!(
            "`{what}` is not in the engine's Painless subset (or `{class}` is not defined)"
        )),
    }
}

fn math(name: &str, args: &[Val], what: &What) -> Result<Val, String> {
    // abs, max and min keep integers integers, as Java's overloads do.
    if let ("abs", [Val::Int(i)]) = (name, args) {
        return Ok(Val::Int(i.wrapping_abs()));
    }
    if let ("max" | "min", [Val::Int(a), Val::Int(b)]) = (name, args) {
        return Ok(Val::Int(if name == "max" { *a.max(b) } else { *a.min(b) }));
    }
    let one =
        |f: fn(f64) -> f64| -> Result<Val, String> { Ok(Val::Float(f(nums::<1>(args, what)?[0]))) };
    let two = |f: fn(f64, f64) -> f64| -> Result<Val, String> {
        let v = nums::<2>(args, what)?;
        Ok(Val::Float(f(v[0], v[1])))
    };
    match name {
        "abs" => one(f64::abs),
        "sqrt" => one(f64::sqrt),
        "cbrt" => one(f64::cbrt),
        "log" => one(f64::ln),
        "log10" => one(f64::log10),
        "log1p" => one(f64::ln_1p),
        "exp" => one(f64::exp),
        "expm1" => one(f64::exp_m1),
        "floor" => one(f64::floor),
        "ceil" => one(f64::ceil),
        "rint" => one(f64::round_ties_even),
        "signum" => one(f64::signum),
        "sin" => one(f64::sin),
        "cos" => one(f64::cos),
        "tan" => one(f64::tan),
        "asin" => one(f64::asin),
        "acos" => one(f64::acos),
        "atan" => one(f64::atan),
        "sinh" => one(f64::sinh),
        "cosh" => one(f64::cosh),
        "tanh" => one(f64::tanh),
        "toRadians" => one(f64::to_radians),
        "toDegrees" => one(f64::to_degrees),
        "max" => two(f64::max),
        "min" => two(f64::min),
        "pow" => two(f64::powf),
        "atan2" => two(f64::atan2),
        "hypot" => two(f64::hypot),
        // Java rounds half up: floor(x + 0.5), as a long.
        "round" => Ok(Val::Int((nums::<1>(args, what)?[0] + 0.5).floor() as i64)),
        _ => Err(format!("`{what}` is not in the engine's Painless subset")),
    }
}

/// A moving_fn window's values, as Elasticsearch's `MovingFunctions` take them (NaN skipped).
fn window(args: &[Val], what: &What) -> Result<Vec<f64>, String> {
    match args.first() {
        Some(Val::List(l)) => Ok(l
            .iter()
            .filter_map(Val::as_f64)
            .filter(|v| !v.is_nan())
            .collect()),
        _ => Err(format!("`{what}` takes the window's `values` first")),
    }
}

fn moving(name: &str, args: &[Val], what: &What) -> Result<Val, String> {
    let v = window(args, what)?;
    let param = |i: usize| {
        args.get(i)
            .and_then(Val::as_f64)
            .ok_or_else(|| format!("`{what}` needs argument {}", i + 1))
    };
    let n = v.len() as f64;
    Ok(Val::Float(match name {
        "max" => v.iter().copied().fold(f64::NAN, |m, x| if m.is_nan() || x > m { x } else { m }),
        "min" => v.iter().copied().fold(f64::NAN, |m, x| if m.is_nan() || x < m { x } else { m }),
        "sum" => v.iter().sum(),
        "unweightedAvg" if v.is_empty() => f64::NAN,
        "unweightedAvg" => v.iter().sum::<f64>() / n,
        "stdDev" if v.is_empty() => f64::NAN,
        "stdDev" => {
            let avg = param(1)?;
            (v.iter().map(|x| (x - avg).powi(2)).sum::<f64>() / n).sqrt()
        }
        "linearWeightedAvg" if v.is_empty() => f64::NAN,
        "linearWeightedAvg" => {
            let weighted: f64 = v.iter().enumerate().map(|(i, x)| x * (i + 1) as f64).sum();
            weighted / (n * (n + 1.0) / 2.0)
        }
        "ewma" => {
            let alpha = param(1)?;
            v.iter().copied().reduce(|avg, x| x * alpha + avg * (1.0 - alpha)).unwrap_or(f64::NAN)
        }
        _ => return Err(format!("`{what}` is not in the engine's Painless subset (max, min, sum, unweightedAvg, linearWeightedAvg, ewma, stdDev)")),
    }))
}

pub fn mutates(name: &str) -> bool {
    matches!(
        name,
        "add" | "put" | "remove" | "clear" | "addAll" | "putAll"
    )
}

pub fn mutate(slot: &mut Val, name: &str, args: &[Val]) -> Result<Val, String> {
    match (slot, name, args) {
        (Val::List(l), "add", [v]) => {
            l.push(v.clone());
            Ok(Val::Bool(true))
        }
        (Val::List(l), "addAll", [Val::List(more)]) => {
            if l.len() + more.len() > MAX_LEN {
                return Err(format!("a list of more than {MAX_LEN} items"));
            }
            l.extend(more.iter().cloned());
            Ok(Val::Bool(true))
        }
        (Val::List(l), "remove", [Val::Int(i)]) => {
            let i = usize::try_from(*i)
                .ok()
                .filter(|i| *i < l.len())
                .ok_or("index out of bounds")?;
            Ok(l.remove(i))
        }
        (Val::List(l), "clear", []) => {
            l.clear();
            Ok(Val::Null)
        }
        (m @ Val::Map(_), "put", [k, v]) => {
            let old = index(m, k)?;
            set_index(m, k.clone(), v.clone())?;
            Ok(old)
        }
        (Val::Map(m), "remove", [k]) => {
            let k = key_text(k)?;
            let old = m.iter().position(|(n, _)| *n == k).map(|i| m.remove(i).1);
            Ok(old.unwrap_or(Val::Null))
        }
        (Val::Map(m), "clear", []) => {
            m.clear();
            Ok(Val::Null)
        }
        (s, n, _) => Err(format!(
            "a {} has no method `{n}` with these arguments in the engine's Painless subset",
            s.type_name()
        )),
    }
}

pub fn method(base: &Val, name: &str, args: &[Val]) -> Result<Val, String> {
    if let Str(s) = base {
        if let Some(v) = string_method(s, name, args) {
            return v;
        }
    }
    use Val::*;
    Ok(match (base, name) {
        (List(l) | Doc(l), "size") => Int(l.len() as i64),
        (List(l) | Doc(l), "isEmpty") => Bool(l.is_empty()),
        (List(l) | Doc(l), "contains") => {
            Bool(args.first().is_some_and(|a| l.iter().any(|v| equal(v, a))))
        }
        (List(_) | Doc(_), "get") => index(base, args.first().ok_or("`get` takes an index")?)?,
        (Doc(_), "getValue") => field(base, "value")?,
        (List(l), "indexOf") => Int(args
            .first()
            .and_then(|a| l.iter().position(|v| equal(v, a)))
            .map_or(-1, |i| i as i64)),
        (Map(m), "size") => Int(m.len() as i64),
        (Map(m), "isEmpty") => Bool(m.is_empty()),
        (Map(m), "containsKey") => {
            Bool(m.iter().any(|(k, _)| Some(&Str(k.clone())) == args.first()))
        }
        (Map(_), "get") => index(base, args.first().ok_or("`get` takes a key")?)?,
        (Map(m), "getOrDefault") => {
            let k = key_text(args.first().ok_or("`getOrDefault` takes a key")?)?;
            m.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| args.get(1).cloned().unwrap_or(Null))
        }
        (Map(m), "keySet") => List(m.iter().map(|(k, _)| Str(k.clone())).collect()),
        (Map(m), "values") => List(m.iter().map(|(_, v)| v.clone()).collect()),
        (Int(i), "intValue" | "longValue") => Int(*i),
        (Int(i), "doubleValue" | "floatValue") => Float(*i as f64),
        (Float(f), "intValue" | "longValue") => Int(*f as i64),
        (Float(f), "doubleValue" | "floatValue") => Float(*f),
        (Float(f), "isNaN") => Bool(f.is_nan()),
        (Date(ms), "getMillis" | "toEpochMilli") => Int(*ms),
        (Date(_), "toInstant") => base.clone(),
        (Shape(s), "getMercatorWidth") => Float(
            crate::geo::column::mercator(s.east, 0.0).0
                - crate::geo::column::mercator(s.west, 0.0).0,
        ),
        (Shape(s), "getMercatorHeight") => Float(
            crate::geo::column::mercator(0.0, s.north).1
                - crate::geo::column::mercator(0.0, s.south).1,
        ),
        (Shape(s), "getCentroid") => Geo(s.centroid.0, s.centroid.1),
        (Shape(s), "getDimensionalType") => Str(s.dimension.to_string()),
        (
            Doc(_),
            "getMercatorWidth" | "getMercatorHeight" | "getCentroid" | "getDimensionalType",
        ) => method(&field(base, "value")?, name, args)?,
        (Geo(lat, _), "getLat") => Float(*lat),
        (Geo(_, lon), "getLon") => Float(*lon),
        (Doc(_), "getLat" | "getLon") => method(&field(base, "value")?, name, args)?,
        (Date(ms), "isAfter") => Bool(matches!(args.first(), Some(Date(o)) if ms > o)),
        (Date(ms), "isBefore") => Bool(matches!(args.first(), Some(Date(o)) if ms < o)),
        (Date(ms), part) if part.starts_with("get") => date_part(*ms, part)?,
        (v, "toString") => Str(text(v)),
        (v, "equals") => Bool(args.first().is_some_and(|a| equal(v, a))),
        (b, n) if mutates(n) => {
            return Err(format!(
                "`{n}` changes a {}, which the engine's Painless subset allows on variables only",
                b.type_name()
            ))
        }
        (b, n) => {
            return Err(format!(
                "a {} has no method `{n}` in the engine's Painless subset",
                b.type_name()
            ))
        }
    })
}

/// A string's methods; None when it has no such method here.
fn string_method(s: &str, name: &str, args: &[Val]) -> Option<Result<Val, String>> {
    use Val::*;
    let s_arg = |i: usize| match args.get(i) {
        Some(Str(s)) => Ok(s.as_str()),
        _ => Err(format!("`{name}` takes a string")),
    };
    let i_arg = |i: usize| match args.get(i) {
        Some(Int(n)) => Ok(*n),
        _ => Err(format!("`{name}` takes a whole number")),
    };
    let v = (|| -> Result<Val, String> {
        Ok(match name {
            "length" => Int(s.chars().count() as i64),
            "isEmpty" => Bool(s.is_empty()),
            "toLowerCase" => Str(s.to_lowercase()),
            "toUpperCase" => Str(s.to_uppercase()),
            "trim" => Str(s.trim().to_string()),
            "contains" => Bool(s.contains(s_arg(0)?)),
            "startsWith" => Bool(s.starts_with(s_arg(0)?)),
            "endsWith" => Bool(s.ends_with(s_arg(0)?)),
            "equalsIgnoreCase" => Bool(s.eq_ignore_ascii_case(s_arg(0)?)),
            "indexOf" => Int(s
                .find(s_arg(0)?)
                .map_or(-1, |i| s[..i].chars().count() as i64)),
            "replace" => {
                let (from, to) = (s_arg(0)?, s_arg(1)?);
                // Each match may grow the text: bounded before it is built.
                if s.matches(from).count().saturating_mul(to.len()) + s.len() > MAX_LEN {
                    return Err(format!("a string of more than {MAX_LEN} bytes"));
                }
                Str(s.replace(from, to))
            }
            "charAt" => Str(s
                .chars()
                .nth(i_arg(0)? as usize)
                .ok_or("index out of bounds")?
                .to_string()),
            "substring" => {
                let chars: Vec<char> = s.chars().collect();
                let from = i_arg(0)? as usize;
                let to = if args.len() > 1 {
                    i_arg(1)? as usize
                } else {
                    chars.len()
                };
                if from > to || to > chars.len() {
                    return Err(format!(
                        "substring({from}, {to}) out of bounds for length {}",
                        chars.len()
                    ));
                }
                Str(chars[from..to].iter().collect())
            }
            "splitOnToken" => List(s.split(s_arg(0)?).map(|p| Str(p.to_string())).collect()),
            "compareTo" => Int(s.cmp(s_arg(0)?) as i64),
            _ => return Err(String::new()),
        })
    })();
    match v {
        Err(e) if e.is_empty() => None,
        other => Some(other),
    }
}

/// A date's calendar part, in UTC.
fn date_part(ms: i64, part: &str) -> Result<Val, String> {
    use chrono::{Datelike, Timelike};
    let t = chrono::DateTime::from_timestamp_millis(ms).ok_or("the date is out of range")?;
    Ok(Val::Int(match part {
        "getYear" => t.year() as i64,
        "getMonthValue" => t.month() as i64,
        "getDayOfMonth" => t.day() as i64,
        "getDayOfYear" => t.ordinal() as i64,
        "getHour" => t.hour() as i64,
        "getMinute" => t.minute() as i64,
        "getSecond" => t.second() as i64,
        "getNano" => t.nanosecond() as i64,
        _ => {
            return Err(format!(
                "a ZonedDateTime has no method `{part}` in the engine's Painless subset"
            ))
        }
    }))
}

pub fn construct(t: &str, args: &[Val]) -> Result<Val, String> {
    match (t, args) {
        ("ArrayList" | "LinkedList" | "HashSet", []) => Ok(Val::List(Vec::new())),
        ("ArrayList" | "LinkedList" | "HashSet", [Val::List(l)]) => Ok(Val::List(l.clone())),
        ("HashMap" | "LinkedHashMap" | "TreeMap", []) => Ok(Val::Map(Vec::new())),
        _ => Err(format!(
            "`new {t}(...)` is not in the engine's Painless subset"
        )),
    }
}
