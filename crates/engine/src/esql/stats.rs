//! STATS ... BY: the rows grouped by the BY values (a multi-value counts in each of its
//! groups, null is a group), each group's aggregations computed over its rows; the answer has
//! the aggregations' columns, then the groups'.

use super::exec::{Column, Table};
use super::func::{eval, type_of, Row};
use super::parse::Expr;
use super::value::{Ty, V};
use crate::error::{Error, ErrorKind};
use crate::geo::column::{Sides, Weighted};
use std::collections::{BTreeSet, HashMap};

pub const AGGREGATIONS: [&str; 8] = [
    "COUNT",
    "COUNT_DISTINCT",
    "MIN",
    "MAX",
    "AVG",
    "SUM",
    "ST_CENTROID_AGG",
    "ST_EXTENT_AGG",
];

/// The most groups one STATS may make.
const MAX_GROUPS: usize = 1_000_000;
/// The most groups one row may count in (its multi-valued keys' combinations).
const MAX_KEYS_PER_ROW: usize = 10_000;

fn bad(m: impl Into<String>) -> Error {
    Error::new(ErrorKind::BadRequest, m.into())
}

#[derive(Debug, Clone)]
enum State {
    Count(i64),
    Distinct(BTreeSet<String>),
    Min(Option<V>),
    Max(Option<V>),
    Sum {
        long: i64,
        double: f64,
        any: bool,
        overflow: bool,
    },
    Avg(f64, u64),
    Centroid(Option<Weighted>),
    Extent(Sides),
}

impl State {
    fn new(name: &str) -> State {
        match name {
            "COUNT" => State::Count(0),
            "COUNT_DISTINCT" => State::Distinct(BTreeSet::new()),
            "MIN" => State::Min(None),
            "MAX" => State::Max(None),
            "SUM" => State::Sum {
                long: 0,
                double: 0.0,
                any: false,
                overflow: false,
            },
            "AVG" => State::Avg(0.0, 0),
            "ST_CENTROID_AGG" => State::Centroid(None),
            _ => State::Extent(Sides::default()),
        }
    }

    fn add(&mut self, v: &V) {
        if let V::Multi(items) = v {
            items.iter().for_each(|i| self.add(i));
            return;
        }
        if v.is_null() {
            return;
        }
        match self {
            State::Count(n) => *n += 1,
            State::Distinct(set) => {
                set.insert(v.to_json().to_string());
            }
            State::Min(m) => {
                if m.as_ref()
                    .is_none_or(|m| v.compare(m).is_some_and(|o| o.is_lt()))
                {
                    *m = Some(v.clone());
                }
            }
            State::Max(m) => {
                if m.as_ref()
                    .is_none_or(|m| v.compare(m).is_some_and(|o| o.is_gt()))
                {
                    *m = Some(v.clone());
                }
            }
            State::Sum {
                long,
                double,
                any,
                overflow,
            } => {
                *any = true;
                match v {
                    V::Long(n) => match long.checked_add(*n) {
                        Some(s) => *long = s,
                        None => *overflow = true,
                    },
                    other => *double += other.as_f64().unwrap_or(0.0),
                }
            }
            State::Avg(sum, n) => {
                if let Some(x) = v.as_f64() {
                    *sum += x;
                    *n += 1;
                }
            }
            State::Centroid(sum) => {
                let w = match v {
                    V::Point(lon, lat) => Some(Weighted {
                        dimension: 0,
                        weight: 1.0,
                        sum_lon: *lon,
                        sum_lat: *lat,
                    }),
                    V::Shape(g) => Weighted::of(g),
                    _ => None,
                };
                if let Some(w) = w {
                    *sum = Some(sum.map_or(w, |s| s.add(w)));
                }
            }
            State::Extent(sides) => match v {
                V::Point(lon, lat) => sides.add_point(*lon, *lat),
                V::Shape(g) => sides.add_geometry(g),
                _ => {}
            },
        }
    }

    fn finish(&self, input: Ty) -> Result<V, Error> {
        Ok(match self {
            State::Count(n) => V::Long(*n),
            State::Distinct(set) => V::Long(set.len() as i64),
            State::Min(m) | State::Max(m) => m.clone().unwrap_or(V::Null),
            State::Sum { any: false, .. } => V::Null,
            State::Sum { overflow: true, .. } => return Err(bad("long overflow in SUM")),
            State::Sum { long, double, .. } => match input {
                Ty::Long | Ty::Integer => V::Long(*long),
                _ => V::Double(*double + *long as f64),
            },
            State::Avg(_, 0) => V::Null,
            State::Avg(sum, n) => V::Double(sum / *n as f64),
            State::Centroid(None) => V::Null,
            State::Centroid(Some(w)) => V::Point(w.sum_lon / w.weight, w.sum_lat / w.weight),
            State::Extent(s) if s.top.is_infinite() => V::Null,
            State::Extent(s) => {
                let (west, east) = crate::aggs::pick_sides(
                    (s.neg_left, s.neg_right),
                    (s.pos_left, s.pos_right),
                    true,
                );
                V::Shape(Box::new(geo::Geometry::Rect(geo::Rect::new(
                    geo::Coord {
                        x: west,
                        y: s.bottom,
                    },
                    geo::Coord { x: east, y: s.top },
                ))))
            }
        })
    }
}

/// An aggregation of STATS: its function, its argument (None for `COUNT(*)`), and its
/// argument's type.
fn aggregation(e: &Expr, table: &Table) -> Result<(String, Option<Expr>, Ty), Error> {
    let Expr::Call(name, args) = e else {
        return Err(bad("STATS takes aggregate functions (COUNT, MIN, MAX, AVG, SUM, COUNT_DISTINCT, ST_CENTROID_AGG, ST_EXTENT_AGG)"));
    };
    if !AGGREGATIONS.contains(&name.as_str()) {
        return Err(bad(format!(
            "[{name}] is not an aggregate function the embedded engine runs in STATS ({})",
            AGGREGATIONS.join(", ")
        )));
    }
    let arg = match args.as_slice() {
        [] | [Expr::Star] if name == "COUNT" => None,
        [a] | [a, _] => Some(a.clone()),
        _ => return Err(bad(format!("[{name}] takes one argument"))),
    };
    let ty = match &arg {
        Some(a) => type_of(a, table).map_err(bad)?,
        None => Ty::Long,
    };
    Ok((name.clone(), arg, ty))
}

fn result_type(name: &str, input: Ty) -> Ty {
    match name {
        "COUNT" | "COUNT_DISTINCT" => Ty::Long,
        "AVG" => Ty::Double,
        "SUM" if matches!(input, Ty::Long | Ty::Integer) => Ty::Long,
        "SUM" => Ty::Double,
        "ST_CENTROID_AGG" => Ty::GeoPoint,
        "ST_EXTENT_AGG" => Ty::GeoShape,
        _ => input,
    }
}

pub fn stats(table: Table, aggs: &[(String, Expr)], by: &[(String, Expr)]) -> Result<Table, Error> {
    let specs = aggs
        .iter()
        .map(|(_, e)| aggregation(e, &table))
        .collect::<Result<Vec<_>, _>>()?;
    let key_types = by
        .iter()
        .map(|(_, e)| type_of(e, &table).map_err(bad))
        .collect::<Result<Vec<_>, _>>()?;
    let mut groups: HashMap<String, (Vec<V>, Vec<State>)> = HashMap::new();
    let fresh = || {
        specs
            .iter()
            .map(|(n, _, _)| State::new(n))
            .collect::<Vec<_>>()
    };
    for values in &table.rows {
        let row = Row {
            table: &table,
            values,
        };
        let mut keys: Vec<Vec<V>> = vec![Vec::new()];
        for (_, e) in by {
            let options = match eval(e, &row).map_err(bad)? {
                V::Multi(items) => items,
                one => vec![one],
            };
            if keys.len().saturating_mul(options.len()) > MAX_KEYS_PER_ROW {
                return Err(bad(format!(
                    "a row's multi-valued BY keys make more than {MAX_KEYS_PER_ROW} groups"
                )));
            }
            keys = keys
                .into_iter()
                .flat_map(|k| {
                    options
                        .iter()
                        .map(move |o| [k.clone(), vec![o.clone()]].concat())
                })
                .collect();
        }
        let args = specs
            .iter()
            .map(|(_, a, _)| a.as_ref().map(|a| eval(a, &row)).transpose().map_err(bad))
            .collect::<Result<Vec<_>, _>>()?;
        for key in keys {
            let id = serde_json::Value::Array(key.iter().map(V::to_json).collect()).to_string();
            if !groups.contains_key(&id) && groups.len() >= MAX_GROUPS {
                return Err(bad(format!("STATS makes more than {MAX_GROUPS} groups")));
            }
            let (_, states) = groups.entry(id).or_insert_with(|| (key.clone(), fresh()));
            for (state, arg) in states.iter_mut().zip(&args) {
                match arg {
                    Some(v) => state.add(v),
                    // COUNT(*) counts rows.
                    None => state.add(&V::Bool(true)),
                }
            }
        }
    }
    if by.is_empty() && groups.is_empty() {
        groups.insert(String::new(), (Vec::new(), fresh()));
    }
    let mut groups: Vec<(Vec<V>, Vec<State>)> = groups.into_values().collect();
    groups.sort_by(|a, b| {
        a.0.iter()
            .zip(&b.0)
            .map(|(x, y)| match (x.is_null(), y.is_null()) {
                (true, true) => std::cmp::Ordering::Equal,
                (true, false) => std::cmp::Ordering::Greater,
                (false, true) => std::cmp::Ordering::Less,
                _ => x.compare(y).unwrap_or(std::cmp::Ordering::Equal),
            })
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut columns: Vec<Column> = aggs
        .iter()
        .zip(&specs)
        .map(|((name, _), (f, _, ty))| Column {
            name: name.clone(),
            ty: result_type(f, *ty),
        })
        .collect();
    columns.extend(by.iter().zip(&key_types).map(|((name, _), ty)| Column {
        name: name.clone(),
        ty: *ty,
    }));
    let mut rows = Vec::with_capacity(groups.len());
    for (key, states) in groups {
        let mut row = states
            .iter()
            .zip(&specs)
            .map(|(s, (_, _, ty))| s.finish(*ty))
            .collect::<Result<Vec<_>, _>>()?;
        row.extend(key);
        rows.push(row);
    }
    Ok(Table { columns, rows })
}
