//! The classes and methods of the Painless subset: arithmetic and comparison as Java has them,
//! casts, indexes and fields, constructors, and the methods of each kind of value (in
//! `collections`, `strings`, `things`; statics in `statics`). Anything else is named in an
//! error; a method name the subset has for no class is refused when the script is parsed.

mod collections;
pub(super) mod statics;
mod strings;
mod things;

pub use statics::{static_call, static_field};

use super::ast::BinOp;
use super::fault::Fault;
use super::objects::{obj, Cidr, Obj, Tokenizer};
use super::val::{equal, ListRef, MapRef, Val, MAX_NESTING};
use std::cell::RefCell;

/// A string or list a script builds holds at most this many bytes or items (a hostile
/// script doubling one in a loop stops here, not at the machine's memory).
pub const MAX_LEN: usize = 1 << 20;

/// Every method name the subset runs, on any class: a script calling another is refused
/// before it runs (a method added to a class's dispatch is added here).
pub const METHODS: &[&str] = &[
    // Collections, maps, views, entries, streams.
    "size",
    "isEmpty",
    "contains",
    "containsAll",
    "get",
    "indexOf",
    "lastIndexOf",
    "add",
    "addAll",
    "remove",
    "removeAll",
    "clear",
    "set",
    "sort",
    "subList",
    "stream",
    "containsKey",
    "containsValue",
    "getOrDefault",
    "put",
    "putAll",
    "putIfAbsent",
    "keySet",
    "values",
    "entrySet",
    "getKey",
    "getValue",
    "setValue",
    "distinct",
    "sorted",
    "limit",
    "skip",
    "count",
    "collect",
    "toList",
    "removeIf",
    "forEach",
    "filter",
    "map",
    "anyMatch",
    "allMatch",
    "noneMatch",
    "computeIfAbsent",
    // Strings.
    "length",
    "toLowerCase",
    "toUpperCase",
    "trim",
    "startsWith",
    "endsWith",
    "equalsIgnoreCase",
    "replace",
    "charAt",
    "substring",
    "splitOnToken",
    "compareTo",
    "concat",
    "strip",
    "isBlank",
    "repeat",
    "lastIndexOf",
    // Numbers, dates, geo, doc values.
    "intValue",
    "longValue",
    "doubleValue",
    "floatValue",
    "isNaN",
    "getValue",
    "getMillis",
    "toEpochMilli",
    "toInstant",
    "isAfter",
    "isBefore",
    "withNano",
    "format",
    "getYear",
    "getMonthValue",
    "getDayOfMonth",
    "getDayOfYear",
    "getHour",
    "getMinute",
    "getSecond",
    "getNano",
    "getMercatorWidth",
    "getMercatorHeight",
    "getCentroid",
    "getDimensionalType",
    "getLat",
    "getLon",
    // Objects.
    "nextToken",
    "hasMoreTokens",
    "hasMoreElements",
    "nextElement",
    "countTokens",
    "matcher",
    "matches",
    "find",
    "group",
    "groupCount",
    "getMessage",
    "toString",
    "equals",
    "hashCode",
];

/// Classes `new` makes.
pub const CONSTRUCTORS: &[&str] = &[
    "ArrayList",
    "LinkedList",
    "HashSet",
    "TreeSet",
    "HashMap",
    "LinkedHashMap",
    "TreeMap",
    "CIDR",
    "StringTokenizer",
    "Exception",
    "RuntimeException",
    "IllegalArgumentException",
    "IllegalStateException",
    "NumberFormatException",
    "UnsupportedOperationException",
];

pub fn binary(op: BinOp, a: Val, b: Val) -> Result<Val, Fault> {
    use Val::*;
    if op == BinOp::Add {
        if let (Str(s), other) | (other, Str(s)) = (&a, &b) {
            let (l, r) = if matches!(a, Str(_)) {
                (s.clone(), text(other))
            } else {
                (text(other), s.clone())
            };
            if l.len() + r.len() > MAX_LEN {
                return Err(Fault::halt(format!(
                    "a string of more than {MAX_LEN} bytes"
                )));
            }
            return Ok(Str(l + &r));
        }
    }
    match op {
        BinOp::Eq => return Ok(Bool(equal(&a, &b)?)),
        BinOp::Ne => return Ok(Bool(!equal(&a, &b)?)),
        BinOp::Find | BinOp::Matches => return regex_test(op, &a, &b),
        _ => {}
    }
    if let (Str(x), Str(y)) = (&a, &b) {
        return compare(op, x.cmp(y))
            .ok_or_else(|| Fault::cast("cannot apply an arithmetic operator to strings"));
    }
    match (&a, &b) {
        (Int(x), Int(y)) => {
            let (x, y) = (*x, *y);
            Ok(match op {
                BinOp::Add => Int(x.wrapping_add(y)),
                BinOp::Sub => Int(x.wrapping_sub(y)),
                BinOp::Mul => Int(x.wrapping_mul(y)),
                BinOp::Div | BinOp::Rem if y == 0 => {
                    return Err(Fault::thrown("ArithmeticException", "/ by zero"))
                }
                BinOp::Div => Int(x.wrapping_div(y)),
                BinOp::Rem => Int(x.wrapping_rem(y)),
                _ => return compare(op, x.cmp(&y)).ok_or_else(|| "unknown operator".into()),
            })
        }
        _ => {
            let (Some(x), Some(y)) = (a.as_f64(), b.as_f64()) else {
                let what = format!(
                    "cannot apply {op:?} to a {} and a {}",
                    a.type_name(),
                    b.type_name()
                );
                return Err(match (&a, &b) {
                    (Null, _) | (_, Null) => Fault::npe(what),
                    _ => Fault::cast(what),
                });
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

/// `text =~ /re/` (found anywhere) and `text ==~ /re/` (all of it), as Painless has them.
fn regex_test(op: BinOp, a: &Val, b: &Val) -> Result<Val, Fault> {
    let Val::Obj(o) = b else {
        return Err(Fault::cast(format!(
            "`=~` and `==~` take a /regex/ on their right, got a {}",
            b.type_name()
        )));
    };
    let Obj::Pattern(re) = &**o else {
        return Err(Fault::cast(format!(
            "`=~` and `==~` take a /regex/ on their right, got a {}",
            o.class()
        )));
    };
    let text = match a {
        Val::Str(s) => s,
        Val::Null => return Err(Fault::npe("the text of `=~` or `==~` is null")),
        other => {
            return Err(Fault::cast(format!(
                "`=~` and `==~` match a String, got a {}",
                other.type_name()
            )))
        }
    };
    let found = match op {
        BinOp::Find => re.is_found(text)?,
        _ => re.is_whole(text)?,
    };
    Ok(Val::Bool(found))
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

/// A value as `String.valueOf` writes it (a list `[a, b]`, a map `{k=v}`, as Java's).
pub fn text(v: &Val) -> String {
    let mut out = String::new();
    write_text(v, &mut out, 0);
    out
}

fn write_text(v: &Val, out: &mut String, depth: usize) {
    if depth > MAX_NESTING || out.len() > MAX_LEN {
        out.push_str("...");
        return;
    }
    match v {
        Val::Null => out.push_str("null"),
        Val::Bool(b) => out.push_str(&b.to_string()),
        Val::Int(i) => out.push_str(&i.to_string()),
        Val::Float(f) if f.fract() == 0.0 && f.abs() < 1e7 => out.push_str(&format!("{f:.1}")),
        Val::Float(f) => out.push_str(&f.to_string()),
        Val::Str(s) => out.push_str(s),
        Val::List(l) => write_items(l.0.borrow().iter(), out, depth),
        Val::Doc(l) => write_items(l.iter(), out, depth),
        Val::Map(m) => {
            out.push('{');
            for (i, (k, v)) in m.0.borrow().iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(k);
                out.push('=');
                write_text(v, out, depth + 1);
            }
            out.push('}');
        }
        Val::Obj(o) => match &**o {
            Obj::Exception { class, message } => {
                out.push_str(&format!("java.lang.{class}: {message}"))
            }
            Obj::Stream(items) => write_items(items.iter(), out, depth),
            Obj::View(..) => match o.items() {
                Ok(items) => write_text(&items, out, depth),
                Err(_) => out.push_str("[]"),
            },
            other => out.push_str(other.class()),
        },
        other => out.push_str(
            &other
                .to_json()
                .map_or_else(|_| other.type_name().to_string(), |j| j.to_string()),
        ),
    }
}

fn write_items<'v>(items: impl Iterator<Item = &'v Val>, out: &mut String, depth: usize) {
    out.push('[');
    for (i, v) in items.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_text(v, out, depth + 1);
    }
    out.push(']');
}

pub fn key_text(v: &Val) -> Result<String, Fault> {
    match v {
        Val::Str(s) => Ok(s.clone()),
        Val::Int(i) => Ok(i.to_string()),
        other => Err(Fault::cast(format!(
            "a key is a string, got a {}",
            other.type_name()
        ))),
    }
}

pub fn cast(t: &str, v: Val) -> Result<Val, Fault> {
    let n = || {
        // A field's single value casts as the value (`(int) doc.population` of one value).
        let one = match &v {
            Val::Doc(values) if values.len() == 1 => &values[0],
            other => other,
        };
        one.as_f64().ok_or_else(|| match one {
            Val::Null => Fault::npe(format!("cannot cast null to {t}")),
            _ => Fault::cast(format!("cannot cast a {} to {t}", v.type_name())),
        })
    };
    Ok(match t {
        "int" | "long" | "short" | "byte" | "Integer" | "Long" => Val::Int(n()? as i64),
        "double" | "float" | "Double" | "Float" => Val::Float(n()?),
        "List" | "ArrayList" => match v {
            Val::Doc(values) => Val::list(values),
            other => other,
        },
        _ => v,
    })
}

fn out_of_bounds(i: i64, len: usize) -> Fault {
    Fault::index(format!("Index {i} out of bounds for length {len}"))
}

fn position(i: i64, len: usize) -> Result<usize, Fault> {
    usize::try_from(i)
        .ok()
        .filter(|i| *i < len)
        .ok_or_else(|| out_of_bounds(i, len))
}

pub fn index(base: &Val, key: &Val) -> Result<Val, Fault> {
    match (base, key) {
        (Val::List(l), Val::Int(i)) => {
            let items = l.0.borrow();
            Ok(items[position(*i, items.len())?].clone())
        }
        (Val::Doc(l), Val::Int(i)) => Ok(l[position(*i, l.len())?].clone()),
        (Val::Map(m), k) => Ok(m.get(&key_text(k)?).unwrap_or(Val::Null)),
        (Val::Null, _) => Err(Fault::npe("cannot read an entry of null")),
        (b, k) => Err(Fault::cast(format!(
            "cannot index a {} by a {}",
            b.type_name(),
            k.type_name()
        ))),
    }
}

/// `base[key] = v` (and `base.key = v`): the list or map is changed where it is, for every
/// name that reaches it.
pub fn set_index(base: &Val, key: Val, v: Val) -> Result<(), Fault> {
    match (base, key) {
        (Val::List(l), Val::Int(i)) => {
            super::val::refuse_cycle(base, &v)?;
            let mut items = l.0.borrow_mut();
            let at = position(i, items.len())?;
            items[at] = v;
            Ok(())
        }
        (Val::Map(m), k) => {
            m.put(key_text(&k)?, v)?;
            Ok(())
        }
        (Val::Null, k) => Err(Fault::npe(format!("cannot set `{}` of null", text(&k)))),
        (s, _) => Err(Fault::cast(format!(
            "cannot set an entry of a {}",
            s.type_name()
        ))),
    }
}

const NO_VALUE: &str = "A document doesn't have a value for a field! Use doc[<field>].size()==0 to check if a document is missing a field!";

/// `value.name`: a doc value's `value`/`empty`/`length`, or a map's entry.
pub fn field(base: &Val, name: &str) -> Result<Val, Fault> {
    match (base, name) {
        (Val::Doc(values), "value") => values
            .first()
            .cloned()
            .ok_or_else(|| Fault::thrown("IllegalStateException", NO_VALUE)),
        (Val::Doc(values), "empty") => Ok(Val::Bool(values.is_empty())),
        (Val::Doc(values), "values") => Ok(Val::list(values.clone())),
        (Val::Date(ms), "millis") => Ok(Val::Int(*ms)),
        (Val::Int(_) | Val::Float(_), "value") => Ok(base.clone()),
        (Val::Geo(lat, _), "lat") => Ok(Val::Float(*lat)),
        (Val::Geo(_, lon), "lon") => Ok(Val::Float(*lon)),
        (Val::Doc(values), "lat" | "lon") => field(
            values
                .first()
                .ok_or_else(|| Fault::thrown("IllegalStateException", NO_VALUE))?,
            name,
        ),
        (Val::List(l), "length") => Ok(Val::Int(l.len() as i64)),
        (Val::Doc(l), "length") => Ok(Val::Int(l.len() as i64)),
        (Val::Map(m), k) => Ok(m.get(k).unwrap_or(Val::Null)),
        (Val::Null, n) => Err(Fault::npe(format!("cannot read `{n}` of null"))),
        (b, n) => Err(Fault::arg(format!(
            "a {} has no field `{n}` in the engine's Painless subset",
            b.type_name()
        ))),
    }
}

pub fn construct(t: &str, args: &[Val]) -> Result<Val, Fault> {
    match (t, args) {
        ("ArrayList" | "LinkedList", []) => Ok(Val::list(Vec::new())),
        ("ArrayList" | "LinkedList", [Val::List(l)]) => Ok(Val::list(l.snapshot())),
        ("ArrayList" | "LinkedList", [Val::Int(_)]) => Ok(Val::list(Vec::new())),
        ("HashSet" | "TreeSet", []) => Ok(Val::List(ListRef::set(Vec::new())?)),
        ("HashSet" | "TreeSet", [Val::List(l)]) => Ok(Val::List(ListRef::set(l.snapshot())?)),
        ("HashMap" | "LinkedHashMap" | "TreeMap", []) => Ok(Val::map(Vec::new())),
        ("HashMap" | "LinkedHashMap" | "TreeMap", [Val::Map(m)]) => {
            Ok(Val::Map(MapRef::new(m.0.borrow().clone())))
        }
        ("CIDR", [Val::Str(s)]) => Ok(obj(Obj::Cidr(Cidr::parse(s)?))),
        ("StringTokenizer", [Val::Str(s)]) => Ok(obj(Obj::Tokenizer(RefCell::new(
            Tokenizer::new(s, " \t\n\r\x0c"),
        )))),
        ("StringTokenizer", [Val::Str(s), Val::Str(delims)]) => {
            Ok(obj(Obj::Tokenizer(RefCell::new(Tokenizer::new(s, delims)))))
        }
        ("StringTokenizer", [Val::Null, ..]) => Err(Fault::npe("StringTokenizer of null")),
        (class, args) if super::fault::is_exception_class(class) && args.len() <= 1 => {
            Ok(obj(Obj::Exception {
                class: class.to_string(),
                message: args.first().map_or_else(String::new, text),
            }))
        }
        _ => Err(format!(
            "`new {t}(...)` with these arguments is not in the engine's Painless subset"
        )
        .into()),
    }
}

/// `base.name(args)` for a method that takes no lambda.
pub fn method(base: &Val, name: &str, args: &[Val]) -> Result<Val, Fault> {
    let found = match base {
        Val::Str(s) => strings::method(s, name, args),
        Val::List(l) => collections::list_method(l, name, args),
        Val::Map(m) => collections::map_method(m, name, args),
        Val::Obj(o) => things::object_method(o, name, args),
        Val::Null => return Err(Fault::npe(format!("cannot invoke `{name}` on null"))),
        other => things::value_method(other, name, args),
    };
    match found {
        Some(r) => r,
        None => match (base, name) {
            (v, "toString") => Ok(Val::Str(text(v))),
            (v, "equals") => Ok(Val::Bool(match args.first() {
                Some(a) => equal(v, a)?,
                None => false,
            })),
            (b, n) => Err(Fault::arg(format!(
                "a {} has no method `{n}` with {} argument(s) in the engine's Painless subset",
                b.type_name(),
                args.len()
            ))),
        },
    }
}
