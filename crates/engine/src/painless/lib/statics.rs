//! The statics of the subset: `Math`, `MovingFunctions`, number and string parsing,
//! `Objects`, `Collectors` and `DateTimeFormatter` constants.

use super::text;
use crate::painless::fault::Fault;
use crate::painless::objects::{formatter, obj, Obj};
use crate::painless::val::Val;

pub fn static_field(class: &str, name: &str) -> Result<Val, Fault> {
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
        ("DateTimeFormatter", f) if formatter(f).is_some() => formatter(f).unwrap_or(Val::Null),
        _ => {
            return Err(format!(
            "`{class}.{name}` is not in the engine's Painless subset (or `{class}` is not defined)"
        )
            .into())
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
fn nums<const N: usize>(args: &[Val], what: &What) -> Result<[f64; N], Fault> {
    if args.len() != N {
        return Err(Fault::arg(format!(
            "`{what}` takes {N} argument(s), got {}",
            args.len()
        )));
    }
    let mut out = [0.0; N];
    for (o, a) in out.iter_mut().zip(args) {
        *o = a.as_f64().ok_or_else(|| {
            Fault::cast(format!("`{what}` takes numbers, got a {}", a.type_name()))
        })?;
    }
    Ok(out)
}

pub fn static_call(class: &str, name: &str, args: &[Val]) -> Result<Val, Fault> {
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
                    .map_err(|_| Fault::number(format!("For input string: \"{s}\""))),
                [v] => Ok(Val::Float(nums::<1>(std::slice::from_ref(v), what)?[0])),
                _ => Err(format!("`{what}` takes one argument").into()),
            }
        }
        "Double" if name == "isNaN" => Ok(Val::Bool(nums::<1>(args, what)?[0].is_nan())),
        "Double" if name == "isInfinite" => Ok(Val::Bool(nums::<1>(args, what)?[0].is_infinite())),
        "Integer" | "Long" if matches!(name, "parseInt" | "parseLong" | "valueOf") => {
            match args {
                // Java's parse takes no spaces, and an int's range is 32 bits.
                [Val::Str(s)] => s
                    .parse::<i64>()
                    .ok()
                    .filter(|n| class == "Long" || i32::try_from(*n).is_ok())
                    .map(Val::Int)
                    .ok_or_else(|| Fault::number(format!("For input string: \"{s}\""))),
                [Val::Int(i)] => Ok(Val::Int(*i)),
                [Val::Null] => Err(Fault::number("Cannot parse null string: null")),
                _ => Err(format!("`{what}` takes a string").into()),
            }
        }
        "Integer" | "Long" | "Double" | "Boolean" if name == "toString" => match args {
            [v] => Ok(Val::Str(text(v))),
            _ => Err(format!("`{what}` takes one argument").into()),
        },
        "Boolean" if name == "parseBoolean" || name == "valueOf" => match args {
            [Val::Str(s)] => Ok(Val::Bool(s.eq_ignore_ascii_case("true"))),
            [Val::Null] => Ok(Val::Bool(false)),
            [Val::Bool(b)] => Ok(Val::Bool(*b)),
            _ => Err(format!("`{what}` takes a string").into()),
        },
        "String" if name == "valueOf" => match args {
            [v] => Ok(Val::Str(text(v))),
            _ => Err(format!("`{what}` takes one argument").into()),
        },
        "String" if name == "join" => match args {
            [Val::Str(sep), Val::List(items)] => {
                let parts: Vec<String> = items.0.borrow().iter().map(text).collect();
                Ok(Val::Str(parts.join(sep)))
            }
            _ => Err(format!("`{what}` takes a separator and a list").into()),
        },
        "Objects" => match (name, args) {
            ("equals", [a, b]) => Ok(Val::Bool(crate::painless::val::equal(a, b)?)),
            ("isNull", [a]) => Ok(Val::Bool(*a == Val::Null)),
            ("nonNull", [a]) => Ok(Val::Bool(*a != Val::Null)),
            _ => Err(format!("`{what}` is not in the engine's Painless subset").into()),
        },
        "Collectors" => match (name, args) {
            ("toList", []) => Ok(obj(Obj::Collector(false))),
            ("toSet", []) => Ok(obj(Obj::Collector(true))),
            _ => Err(
                format!("`{what}` is not in the engine's Painless subset (toList, toSet)").into(),
            ),
        },
        _ => Err(format!(
            "`{what}` is not in the engine's Painless subset (or `{class}` is not defined)"
        )
        .into()),
    }
}

fn math(name: &str, args: &[Val], what: &What) -> Result<Val, Fault> {
    // abs, max and min keep integers integers, as Java's overloads do.
    if let ("abs", [Val::Int(i)]) = (name, args) {
        return Ok(Val::Int(i.wrapping_abs()));
    }
    if let ("max" | "min", [Val::Int(a), Val::Int(b)]) = (name, args) {
        return Ok(Val::Int(if name == "max" { *a.max(b) } else { *a.min(b) }));
    }
    let one =
        |f: fn(f64) -> f64| -> Result<Val, Fault> { Ok(Val::Float(f(nums::<1>(args, what)?[0]))) };
    let two = |f: fn(f64, f64) -> f64| -> Result<Val, Fault> {
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
        _ => Err(format!("`{what}` is not in the engine's Painless subset").into()),
    }
}

/// A moving_fn window's values, as Elasticsearch's `MovingFunctions` take them (NaN skipped).
fn window(args: &[Val], what: &What) -> Result<Vec<f64>, Fault> {
    match args.first() {
        Some(Val::List(l)) => Ok(l
            .0
            .borrow()
            .iter()
            .filter_map(Val::as_f64)
            .filter(|v| !v.is_nan())
            .collect()),
        _ => Err(format!("`{what}` takes the window's `values` first").into()),
    }
}

fn moving(name: &str, args: &[Val], what: &What) -> Result<Val, Fault> {
    let v = window(args, what)?;
    let param = |i: usize| {
        args.get(i)
            .and_then(Val::as_f64)
            .ok_or_else(|| Fault::arg(format!("`{what}` needs argument {}", i + 1)))
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
        _ => return Err(format!("`{what}` is not in the engine's Painless subset (max, min, sum, unweightedAvg, linearWeightedAvg, ewma, stdDev)").into()),
    }))
}

/// The static classes and what each has: a script naming another is refused when parsed.
pub const STATICS: &[(&str, &[&str])] = &[
    (
        "Math",
        &[
            "abs",
            "sqrt",
            "cbrt",
            "log",
            "log10",
            "log1p",
            "exp",
            "expm1",
            "floor",
            "ceil",
            "rint",
            "signum",
            "sin",
            "cos",
            "tan",
            "asin",
            "acos",
            "atan",
            "sinh",
            "cosh",
            "tanh",
            "toRadians",
            "toDegrees",
            "max",
            "min",
            "pow",
            "atan2",
            "hypot",
            "round",
            "PI",
            "E",
        ],
    ),
    (
        "MovingFunctions",
        &[
            "max",
            "min",
            "sum",
            "unweightedAvg",
            "stdDev",
            "linearWeightedAvg",
            "ewma",
        ],
    ),
    (
        "Double",
        &[
            "parseDouble",
            "valueOf",
            "isNaN",
            "isInfinite",
            "toString",
            "MAX_VALUE",
            "MIN_VALUE",
            "NaN",
            "POSITIVE_INFINITY",
            "NEGATIVE_INFINITY",
        ],
    ),
    ("Float", &["parseFloat", "valueOf"]),
    (
        "Integer",
        &["parseInt", "valueOf", "toString", "MAX_VALUE", "MIN_VALUE"],
    ),
    (
        "Long",
        &["parseLong", "valueOf", "toString", "MAX_VALUE", "MIN_VALUE"],
    ),
    ("Boolean", &["parseBoolean", "valueOf", "toString"]),
    ("String", &["valueOf", "join"]),
    ("Objects", &["equals", "isNull", "nonNull"]),
    ("Collectors", &["toList", "toSet"]),
    (
        "DateTimeFormatter",
        &[
            "ISO_OFFSET_DATE_TIME",
            "ISO_ZONED_DATE_TIME",
            "ISO_INSTANT",
            "ISO_LOCAL_DATE",
            "ISO_LOCAL_DATE_TIME",
        ],
    ),
];
