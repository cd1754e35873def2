//! Running the commands over a table of rows: FROM reads the indices' documents (the
//! full-text conditions of a WHERE right after it pushed down as a query), then each command
//! transforms the table in turn.

use super::func::{self, Row};
use super::parse::{Command, Expr};
use super::value::{Ty, V};
use crate::error::{Error, ErrorKind};
use crate::mapping::{FieldType, Mapping};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Elasticsearch's implicit LIMIT, and the most rows a query may return.
pub const DEFAULT_LIMIT: usize = 1_000;
pub const MAX_LIMIT: usize = 10_000;
/// The most documents FROM reads into memory.
pub const MAX_ROWS: usize = 1_000_000;
/// The most values (rows times columns) FROM holds.
pub const MAX_VALUES: usize = 50_000_000;

#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub ty: Ty,
}

#[derive(Debug, Default)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<V>>,
}

fn bad(m: impl Into<String>) -> Error {
    Error::new(ErrorKind::BadRequest, m.into())
}

/// A mapped field's ES|QL type.
fn field_type(kind: FieldType) -> Ty {
    match kind {
        FieldType::Text => Ty::Text,
        FieldType::Keyword => Ty::Keyword,
        FieldType::Long => Ty::Long,
        FieldType::Double => Ty::Double,
        FieldType::Boolean => Ty::Boolean,
        FieldType::Date => Ty::Date,
        FieldType::GeoPoint => Ty::GeoPoint,
        FieldType::GeoShape => Ty::GeoShape,
        FieldType::Ip => Ty::Ip,
        _ => Ty::Unsupported,
    }
}

/// A document's value of a field, by the field's type; several values are a multi-value.
fn read(mapping: &Mapping, name: &str, source: &serde_json::Map<String, Value>) -> V {
    let Some(f) = mapping.field(name) else {
        return V::Null;
    };
    let mut raw = Vec::new();
    crate::mapping::lookup(source, &f.path, &mut raw);
    let mut out = Vec::new();
    for v in raw {
        let items: Vec<&Value> = match v {
            Value::Array(a)
                if !(f.kind == FieldType::GeoPoint && a.first().is_some_and(Value::is_number)) =>
            {
                a.iter().collect()
            }
            one => vec![one],
        };
        for item in items {
            let value = match (f.kind, item) {
                (_, Value::Null) => continue,
                (FieldType::Long, v) => crate::mapping::as_i64(v).map(V::Long).ok(),
                (FieldType::Double, v) => crate::mapping::as_f64(v).map(V::Double).ok(),
                (FieldType::Boolean, Value::Bool(b)) => Some(V::Bool(*b)),
                (FieldType::Date, v) => crate::mapping::read_date(&f, v)
                    .map(|d| V::Date(d.into_timestamp_millis()))
                    .ok(),
                (FieldType::GeoPoint, v) => crate::mapping::geo_point(v)
                    .map(|(lon, lat)| V::Point(lon, lat))
                    .ok(),
                (FieldType::GeoShape, v) => crate::geo::geometry::parse_indexed(v)
                    .map(|g| V::Shape(Box::new(g)))
                    .ok(),
                (FieldType::Text | FieldType::Keyword | FieldType::Ip, Value::String(s)) => {
                    Some(V::Str(s.clone()))
                }
                (FieldType::Text | FieldType::Keyword, v @ (Value::Number(_) | Value::Bool(_))) => {
                    Some(V::Str(v.to_string()))
                }
                _ => None,
            };
            out.extend(value);
        }
    }
    match out.len() {
        0 => V::Null,
        1 => out.pop().expect("one"),
        _ => V::Multi(out),
    }
}

/// FROM: every document of the indices the patterns reach, matching `pushed` (a query of
/// the DSL), as rows of every mapped field (and the METADATA asked).
pub fn from(
    engine: &crate::cluster::Engine,
    patterns: &str,
    metadata: &[String],
    pushed: Option<Value>,
    cap: Option<usize>,
    needed: &dyn Fn(&str) -> bool,
) -> Result<Table, Error> {
    let targets = engine.search_targets(patterns).map_err(|e| match e.kind {
        ErrorKind::NotFound => bad(format!("Unknown index [{patterns}]")),
        _ => e,
    })?;
    if targets.is_empty() {
        return Err(bad(format!("Unknown index [{patterns}]")));
    }
    // Columns: the union of the indices' fields, by name.
    let mut columns: BTreeMap<String, Ty> = BTreeMap::new();
    for (index, _) in &targets {
        for f in index
            .mapping
            .fields
            .iter()
            .filter(|f| f.json_path.is_none() && needed(&f.name))
        {
            let ty = field_type(f.kind);
            let entry = columns.entry(f.name.clone()).or_insert(ty);
            if *entry != ty {
                *entry = Ty::Unsupported;
            }
        }
    }
    let mut table = Table {
        columns: columns
            .iter()
            .map(|(n, t)| Column {
                name: n.clone(),
                ty: *t,
            })
            .collect(),
        rows: Vec::new(),
    };
    for m in metadata {
        table.columns.push(Column {
            name: m.clone(),
            ty: match m.as_str() {
                "_source" => Ty::Source,
                _ => Ty::Keyword,
            },
        });
    }
    let limit = cap.unwrap_or(MAX_ROWS);
    for (index, filter) in &targets {
        let query = pushed.clone().unwrap_or_else(|| json!({"match_all": {}}));
        let mut body = json!({"query": query});
        if let Some(f) = filter {
            body = crate::cluster::aliases::with_filter(&body, f);
        }
        let plan = index.compile(&body)?;
        index.before_search()?;
        let searcher = index.searcher();
        let left = limit.saturating_sub(table.rows.len());
        let addresses = index.matching_addresses(&plan, &searcher, left + 1)?;
        let width = table.columns.len().max(1);
        if table.rows.len() + addresses.len() > MAX_ROWS
            || (table.rows.len() + addresses.len()).saturating_mul(width) > MAX_VALUES
        {
            return Err(bad(format!("FROM [{patterns}] reads more than {MAX_ROWS} documents or {MAX_VALUES} values: the embedded engine's ES|QL holds its rows in memory (narrow it with WHERE, or KEEP the columns it needs)")));
        }
        for addr in addresses.into_iter().take(left) {
            let (id, source) = index.fetch(&searcher, addr)?;
            let doc: Value = serde_json::from_slice(&source).unwrap_or(Value::Null);
            let Some(obj) = doc.as_object() else { continue };
            let mut row: Vec<V> = columns
                .keys()
                .map(|name| read(&index.mapping, name, obj))
                .collect();
            for m in metadata {
                row.push(match m.as_str() {
                    "_source" => V::Source(Box::new(doc.clone())),
                    "_id" => V::Str(id.clone()),
                    _ => V::Str(index.name.clone()),
                });
            }
            table.rows.push(row);
        }
    }
    Ok(table)
}

impl Table {
    pub fn index_of(&self, name: &str) -> Result<usize, Error> {
        self.columns
            .iter()
            .rposition(|c| c.name == name)
            .ok_or_else(|| bad(format!("Unknown column [{name}]")))
    }

    fn eval(&self, e: &Expr, row: &[V]) -> Result<V, Error> {
        func::eval(
            e,
            &Row {
                table: self,
                values: row,
            },
        )
        .map_err(bad)
    }

    /// One processing command.
    pub fn run(mut self, command: &Command) -> Result<Table, Error> {
        match command {
            Command::From { .. } => Err(bad("FROM comes first, once")),
            Command::Where(cond) => {
                let mut kept = Vec::new();
                for row in std::mem::take(&mut self.rows) {
                    if self.eval(cond, &row)? == V::Bool(true) {
                        kept.push(row);
                    }
                }
                self.rows = kept;
                Ok(self)
            }
            Command::Eval(assignments) => {
                for (name, e) in assignments {
                    let values = self
                        .rows
                        .iter()
                        .map(|row| self.eval(e, row))
                        .collect::<Result<Vec<_>, _>>()?;
                    let ty = func::type_of(e, &self).map_err(bad)?;
                    // A column of the same name is replaced: the new one comes last.
                    let old = self.columns.iter().position(|c| c.name == *name);
                    if let Some(i) = old {
                        self.columns.remove(i);
                        self.rows.iter_mut().for_each(|r| {
                            r.remove(i);
                        });
                    }
                    self.columns.push(Column {
                        name: name.clone(),
                        ty,
                    });
                    for (row, v) in self.rows.iter_mut().zip(values) {
                        row.push(v);
                    }
                }
                Ok(self)
            }
            Command::Stats { aggs, by } => super::stats::stats(self, aggs, by),
            Command::Sort(keys) => self.sorted(keys),
            Command::Limit(n) => {
                self.rows.truncate((*n).min(MAX_LIMIT));
                Ok(self)
            }
            Command::Keep(patterns) => self.kept(patterns),
            Command::Drop(patterns) => self.dropped(patterns),
            Command::Rename(pairs) => {
                for (old, new) in pairs {
                    let i = self.index_of(old)?;
                    self.columns[i].name = new.clone();
                }
                Ok(self)
            }
        }
    }

    fn sorted(mut self, keys: &[(Expr, bool, bool)]) -> Result<Table, Error> {
        let mut keyed = Vec::with_capacity(self.rows.len());
        for row in std::mem::take(&mut self.rows) {
            let k = keys
                .iter()
                .map(|(e, _, _)| self.eval(e, &row))
                .collect::<Result<Vec<_>, _>>()?;
            keyed.push((k, row));
        }
        keyed.sort_by(|(a, _), (b, _)| {
            for (i, (_, desc, nulls_first)) in keys.iter().enumerate() {
                let o = match (a[i].is_null(), b[i].is_null()) {
                    (true, true) => std::cmp::Ordering::Equal,
                    (true, false) if *nulls_first => std::cmp::Ordering::Less,
                    (true, false) => std::cmp::Ordering::Greater,
                    (false, true) if *nulls_first => std::cmp::Ordering::Greater,
                    (false, true) => std::cmp::Ordering::Less,
                    _ => {
                        let o = sort_key(&a[i])
                            .compare(&sort_key(&b[i]))
                            .unwrap_or(std::cmp::Ordering::Equal);
                        if *desc {
                            o.reverse()
                        } else {
                            o
                        }
                    }
                };
                if o != std::cmp::Ordering::Equal {
                    return o;
                }
            }
            std::cmp::Ordering::Equal
        });
        self.rows = keyed.into_iter().map(|(_, r)| r).collect();
        Ok(self)
    }

    fn kept(self, patterns: &[String]) -> Result<Table, Error> {
        let mut order = Vec::new();
        for p in patterns {
            let found: Vec<usize> = (0..self.columns.len())
                .filter(|i| crate::names::simple_match(p, &self.columns[*i].name))
                .collect();
            if found.is_empty() {
                return Err(bad(format!("Unknown column [{p}]")));
            }
            order.extend(
                found
                    .into_iter()
                    .filter(|i| !order.contains(i))
                    .collect::<Vec<_>>(),
            );
        }
        Ok(self.select(&order))
    }

    fn dropped(self, patterns: &[String]) -> Result<Table, Error> {
        for p in patterns {
            if !self
                .columns
                .iter()
                .any(|c| crate::names::simple_match(p, &c.name))
            {
                return Err(bad(format!("Unknown column [{p}]")));
            }
        }
        let order: Vec<usize> = (0..self.columns.len())
            .filter(|i| {
                !patterns
                    .iter()
                    .any(|p| crate::names::simple_match(p, &self.columns[*i].name))
            })
            .collect();
        Ok(self.select(&order))
    }

    fn select(self, order: &[usize]) -> Table {
        Table {
            columns: order.iter().map(|i| self.columns[*i].clone()).collect(),
            rows: self
                .rows
                .into_iter()
                .map(|r| order.iter().map(|i| r[*i].clone()).collect())
                .collect(),
        }
    }
}

/// A multi-value sorts by its smallest value (ascending), as ES|QL sorts it.
fn sort_key(v: &V) -> V {
    match v {
        V::Multi(items) => items
            .iter()
            .cloned()
            .min_by(|a, b| a.compare(b).unwrap_or(std::cmp::Ordering::Equal))
            .unwrap_or(V::Null),
        other => other.clone(),
    }
}
