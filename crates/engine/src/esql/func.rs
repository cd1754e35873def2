//! Expressions on one row: operators with ES|QL's null semantics (a null operand gives null,
//! and WHERE keeps only `true`), casts, LIKE, and the scalar functions the shared tracks call
//! (spatial ones included). The full-text functions run as queries pushed down to FROM.

use super::exec::Table;
use super::parse::Expr;
use super::value::{Ty, V};
use crate::geo::geometry::Parsed;
use crate::geo::relate::Target;
use crate::geo::shape::Relation;
use geo::Geometry;

/// One row of a table, for expressions to read its columns.
pub struct Row<'a> {
    pub table: &'a Table,
    pub values: &'a [V],
}

/// Functions that only run pushed down to FROM, as queries.
pub const FULL_TEXT: [&str; 4] = ["MATCH", "MATCH_PHRASE", "QSTR", "KQL"];

/// Scalar functions the engine runs (the aggregations are `stats`').
const SCALARS: [&str; 29] = [
    "TO_GEOSHAPE",
    "TO_GEOPOINT",
    "TO_STRING",
    "TO_DOUBLE",
    "TO_LONG",
    "TO_INTEGER",
    "ST_INTERSECTS",
    "ST_WITHIN",
    "ST_CONTAINS",
    "ST_DISJOINT",
    "ST_DISTANCE",
    "ST_ENVELOPE",
    "ST_NPOINTS",
    "ST_SIMPLIFY",
    "ST_X",
    "ST_Y",
    "ST_GEOHASH",
    "ST_GEOTILE",
    "ST_GEOHEX",
    "TO_GEOHASH",
    "TO_GEOTILE",
    "TO_GEOHEX",
    "DATE_TRUNC",
    "ABS",
    "ROUND",
    "LENGTH",
    "TO_LOWER",
    "TO_UPPER",
    "COALESCE",
];

pub fn check_function(name: &str) -> Result<(), String> {
    if SCALARS.contains(&name)
        || FULL_TEXT.contains(&name)
        || super::stats::AGGREGATIONS.contains(&name)
    {
        return Ok(());
    }
    Err(match name {
        "CATEGORIZE" => {
            "ES|QL `CATEGORIZE` (an ML grouping) is not run by the embedded engine".into()
        }
        other => format!("ES|QL function `{other}` is not run by the embedded engine"),
    })
}

fn number(v: &V) -> Result<Option<f64>, String> {
    match v {
        V::Null => Ok(None),
        other => other
            .as_f64()
            .map(Some)
            .ok_or_else(|| format!("{other:?} is not a number")),
    }
}

fn geometry(v: &V) -> Option<Geometry<f64>> {
    match v {
        V::Point(lon, lat) => Some(Geometry::Point(geo::Point::new(*lon, *lat))),
        V::Shape(g) => Some((**g).clone()),
        V::Multi(items) => Some(Geometry::GeometryCollection(geo::GeometryCollection(
            items.iter().filter_map(geometry).collect(),
        ))),
        _ => None,
    }
}

fn arith(op: &str, a: &V, b: &V) -> Result<V, String> {
    if let (V::Long(x), V::Long(y)) = (a, b) {
        return Ok(match op {
            "+" => x.checked_add(*y).map_or(V::Null, V::Long),
            "-" => x.checked_sub(*y).map_or(V::Null, V::Long),
            "*" => x.checked_mul(*y).map_or(V::Null, V::Long),
            "/" if *y == 0 => V::Null,
            "/" => V::Long(x / y),
            _ if *y == 0 => V::Null,
            _ => V::Long(x % y),
        });
    }
    let (Some(x), Some(y)) = (number(a)?, number(b)?) else {
        return Ok(V::Null);
    };
    let r = match op {
        "+" => x + y,
        "-" => x - y,
        "*" => x * y,
        "/" => x / y,
        _ => x % y,
    };
    Ok(if r.is_finite() { V::Double(r) } else { V::Null })
}

pub fn eval(e: &Expr, row: &Row<'_>) -> Result<V, String> {
    Ok(match e {
        Expr::Lit(v) => v.clone(),
        Expr::Col(name) => {
            let i = row
                .table
                .columns
                .iter()
                .rposition(|c| c.name == *name)
                .ok_or_else(|| format!("Unknown column [{name}]"))?;
            row.values[i].clone()
        }
        Expr::Star => V::Bool(true),
        Expr::Span(n, unit) => V::Str(format!("{n} {unit}")),
        Expr::Not(inner) => match eval(inner, row)? {
            V::Bool(b) => V::Bool(!b),
            _ => V::Null,
        },
        Expr::Neg(inner) => arith("-", &V::Long(0), &eval(inner, row)?)?,
        Expr::IsNull(inner, is) => V::Bool(eval(inner, row)?.is_null() == *is),
        Expr::Bin(op @ ("AND" | "OR"), a, b) => {
            let (x, y) = (eval(a, row)?, eval(b, row)?);
            let truth = |v: &V| match v {
                V::Bool(b) => Some(*b),
                _ => None,
            };
            match (*op, truth(&x), truth(&y)) {
                ("AND", Some(false), _) | ("AND", _, Some(false)) => V::Bool(false),
                ("AND", Some(true), Some(true)) => V::Bool(true),
                ("OR", Some(true), _) | ("OR", _, Some(true)) => V::Bool(true),
                ("OR", Some(false), Some(false)) => V::Bool(false),
                _ => V::Null,
            }
        }
        Expr::Bin(op, a, b) => {
            let (x, y) = (eval(a, row)?, eval(b, row)?);
            if x.is_null() || y.is_null() {
                return Ok(V::Null);
            }
            match *op {
                "==" | "!=" => x
                    .equals(&y)
                    .map_or(V::Null, |eq| V::Bool(eq == (*op == "=="))),
                "<" | "<=" | ">" | ">=" => x.compare(&y).map_or(V::Null, |o| {
                    V::Bool(match *op {
                        "<" => o.is_lt(),
                        "<=" => o.is_le(),
                        ">" => o.is_gt(),
                        _ => o.is_ge(),
                    })
                }),
                _ => arith(op, &x, &y)?,
            }
        }
        Expr::Like(inner, pattern, negated) => match eval(inner, row)? {
            V::Str(s) => V::Bool(crate::names::simple_match(pattern, &s) != *negated),
            _ => V::Null,
        },
        Expr::In(inner, items, negated) => {
            let x = eval(inner, row)?;
            if x.is_null() {
                return Ok(V::Null);
            }
            let mut found = false;
            for item in items {
                found |= x.equals(&eval(item, row)?) == Some(true);
            }
            V::Bool(found != *negated)
        }
        Expr::Cast(inner, ty) => cast(eval(inner, row)?, ty)?,
        Expr::Call(name, args) => call(name, args, row)?,
    })
}

pub(super) fn cast(v: V, ty: &str) -> Result<V, String> {
    Ok(match (ty, v) {
        (_, V::Null) => V::Null,
        ("double", v) => number(&v)?.map_or(V::Null, V::Double),
        ("long" | "integer" | "int", v) => number(&v)?.map_or(V::Null, |x| V::Long(x as i64)),
        ("string" | "keyword" | "text", v) => match v.to_json() {
            serde_json::Value::String(s) => V::Str(s),
            other => V::Str(other.to_string()),
        },
        (other, _) => {
            return Err(format!(
                "ES|QL cast `::{other}` is not run by the embedded engine"
            ))
        }
    })
}

fn call(name: &str, args: &[Expr], row: &Row<'_>) -> Result<V, String> {
    if FULL_TEXT.contains(&name) {
        // Pushed down to FROM, which kept only the documents it matches.
        return Ok(V::Bool(true));
    }
    if super::stats::AGGREGATIONS.contains(&name) {
        return Err(format!(
            "aggregate function [{name}] is only allowed in STATS"
        ));
    }
    let values = args
        .iter()
        .map(|a| eval(a, row))
        .collect::<Result<Vec<_>, _>>()?;
    super::spatial::scalar(name, &values)
}

/// The type an expression gives, for its column.
pub fn type_of(e: &Expr, table: &Table) -> Result<Ty, String> {
    Ok(match e {
        Expr::Lit(v) => Ty::of(v),
        Expr::Col(name) => table
            .columns
            .iter()
            .rfind(|c| c.name == *name)
            .map(|c| c.ty)
            .ok_or_else(|| format!("Unknown column [{name}]"))?,
        Expr::Bin("AND" | "OR" | "==" | "!=" | "<" | "<=" | ">" | ">=", ..)
        | Expr::Not(_)
        | Expr::IsNull(..)
        | Expr::Like(..)
        | Expr::In(..) => Ty::Boolean,
        Expr::Bin(_, a, b) => match (type_of(a, table)?, type_of(b, table)?) {
            (Ty::Long | Ty::Integer, Ty::Long | Ty::Integer) => Ty::Long,
            _ => Ty::Double,
        },
        Expr::Neg(inner) => type_of(inner, table)?,
        Expr::Cast(_, ty) => match ty.as_str() {
            "double" => Ty::Double,
            "long" => Ty::Long,
            "integer" | "int" => Ty::Integer,
            _ => Ty::Keyword,
        },
        Expr::Call(name, args) => super::spatial::return_type(name, args, table)?,
        Expr::Star | Expr::Span(..) => Ty::Keyword,
    })
}

/// `ST_INTERSECTS` and its kin: the first argument's shape against the second's.
pub fn relate(relation: Relation, a: &V, b: &V) -> Result<V, String> {
    let (Some(x), Some(y)) = (geometry(a), geometry(b)) else {
        return Ok(V::Null);
    };
    let target = Target::new(Parsed::Geometry(y));
    Ok(V::Bool(target.test(&x, relation)))
}
