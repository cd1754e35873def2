//! Range field types (`integer_range`, `long_range`, `float_range`, `double_range`,
//! `date_range`, `ip_range`): each document's range is two indexed columns, its lowest and
//! highest value (`gt`/`lt` bounds made inclusive, open ends the type's extremes). A `term`
//! query matches the ranges holding the value; a `range` query relates its range to the
//! document's by `relation` (`intersects`, the default, `within` or `contains`), as
//! Elasticsearch does. A document holds one range here; a list of ranges is refused.

use crate::mapping::read_ip;
use crate::mapping::MappedField;
use serde_json::{Map, Value};
use std::net::Ipv6Addr;
use std::ops::Bound;
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, Query, RangeQuery};
use tantivy::schema::{Field, SchemaBuilder, FAST, INDEXED};
use tantivy::{TantivyDocument, Term};

/// What a range field's bounds are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeOf {
    Long,
    Double,
    /// Epoch milliseconds, read by the field's `format`.
    Date,
    Ip,
}

impl RangeOf {
    pub fn parse(type_name: &str) -> Option<RangeOf> {
        Some(match type_name {
            "integer_range" | "long_range" => RangeOf::Long,
            "float_range" | "double_range" => RangeOf::Double,
            "date_range" => RangeOf::Date,
            "ip_range" => RangeOf::Ip,
            _ => return None,
        })
    }

    /// The two columns: `<name>.gte` and `<name>.lte`.
    pub fn add_fields(self, builder: &mut SchemaBuilder, name: &str) -> (Field, Field) {
        let add = |b: &mut SchemaBuilder, n: String| match self {
            RangeOf::Long | RangeOf::Date => b.add_i64_field(&n, INDEXED | FAST),
            RangeOf::Double => b.add_f64_field(&n, INDEXED | FAST),
            RangeOf::Ip => b.add_ip_addr_field(&n, INDEXED | FAST),
        };
        (
            add(builder, format!("{name}.gte")),
            add(builder, format!("{name}.lte")),
        )
    }
}

/// One end of a range, of the field's type.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
enum Point {
    I64(i64),
    F64(f64),
    Ip(u128),
}

impl Point {
    fn term(self, field: Field) -> Term {
        match self {
            Point::I64(v) => Term::from_field_i64(field, v),
            Point::F64(v) => Term::from_field_f64(field, v),
            Point::Ip(v) => Term::from_field_ip_addr(field, Ipv6Addr::from(v)),
        }
    }

    /// The next value up (`gt` made inclusive) or down (`lt`).
    fn step(self, up: bool) -> Point {
        match (self, up) {
            (Point::I64(v), true) => Point::I64(v.saturating_add(1)),
            (Point::I64(v), false) => Point::I64(v.saturating_sub(1)),
            (Point::F64(v), true) => Point::F64(next_float(v, true)),
            (Point::F64(v), false) => Point::F64(next_float(v, false)),
            (Point::Ip(v), true) => Point::Ip(v.saturating_add(1)),
            (Point::Ip(v), false) => Point::Ip(v.saturating_sub(1)),
        }
    }
}

/// The next representable double up or down (`f64::next_up`, which needs Rust 1.86).
fn next_float(v: f64, up: bool) -> f64 {
    if v.is_nan() || v == if up { f64::INFINITY } else { f64::NEG_INFINITY } {
        return v;
    }
    if v == 0.0 {
        let tiny = f64::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let bits = v.to_bits();
    f64::from_bits(if (v > 0.0) == up { bits + 1 } else { bits - 1 })
}

fn extremes(of: RangeOf) -> (Point, Point) {
    match of {
        RangeOf::Long | RangeOf::Date => (Point::I64(i64::MIN), Point::I64(i64::MAX)),
        RangeOf::Double => (Point::F64(f64::NEG_INFINITY), Point::F64(f64::INFINITY)),
        RangeOf::Ip => (Point::Ip(0), Point::Ip(u128::MAX)),
    }
}

fn point(f: &MappedField, of: RangeOf, v: &Value) -> Result<Point, String> {
    Ok(match of {
        RangeOf::Long => Point::I64(crate::mapping::as_i64(v)?),
        RangeOf::Double => Point::F64(crate::mapping::as_f64(v)?),
        RangeOf::Date => Point::I64(crate::mapping::read_date(f, v)?.into_timestamp_millis()),
        RangeOf::Ip => Point::Ip(u128::from(read_ip(v)?)),
    })
}

/// A range object's inclusive ends (`gte`/`gt`/`lte`/`lt`, or `from`/`to`), or an
/// `ip_range`'s CIDR block.
fn ends(f: &MappedField, of: RangeOf, v: &Value) -> Result<(Point, Point), String> {
    if let (RangeOf::Ip, Some(cidr)) = (of, v.as_str()) {
        let (lo, hi) = crate::mapping::ip_block(cidr)?;
        return Ok((Point::Ip(u128::from(lo)), Point::Ip(u128::from(hi))));
    }
    let obj = v.as_object().ok_or_else(|| {
        format!("a range is an object such as {{\"gte\": 1, \"lt\": 5}}, got {v}")
    })?;
    let (mut lo, mut hi) = extremes(of);
    for (k, b) in obj {
        if b.is_null() {
            continue;
        }
        match k.as_str() {
            "gte" | "from" => lo = point(f, of, b)?,
            "gt" => lo = point(f, of, b)?.step(true),
            "lte" | "to" => hi = point(f, of, b)?,
            "lt" => hi = point(f, of, b)?.step(false),
            other => {
                return Err(format!(
                    "range key `{other}` is not one of gte, gt, lte, lt"
                ))
            }
        }
    }
    Ok((lo, hi))
}

/// The range field's kind and its two columns.
fn columns(f: &MappedField) -> Result<(RangeOf, Field, Field), String> {
    match (f.kind, f.second) {
        (crate::mapping::FieldType::Range(of), Some(hi)) => Ok((of, f.field, hi)),
        _ => Err(format!("`{}` is not a range field", f.name)),
    }
}

/// Indexes a document's range.
pub fn add_value(doc: &mut TantivyDocument, f: &MappedField, v: &Value) -> Result<(), String> {
    let (of, lo_field, hi_field) = columns(f)?;
    if v.is_array() {
        return Err("a range field holds one range per document in the embedded engine".into());
    }
    let (lo, hi) = ends(f, of, v)?;
    if lo > hi {
        return Err(format!("the range's lower end is above its upper end: {v}"));
    }
    for (field, p) in [(lo_field, lo), (hi_field, hi)] {
        match p {
            Point::I64(x) => doc.add_i64(field, x),
            Point::F64(x) => doc.add_f64(field, x),
            Point::Ip(x) => doc.add_ip_addr(field, Ipv6Addr::from(x)),
        }
    }
    Ok(())
}

fn column_range(field: Field, lo: Option<Point>, hi: Option<Point>) -> Box<dyn Query> {
    let bound = |p: Option<Point>| p.map_or(Bound::Unbounded, |p| Bound::Included(p.term(field)));
    Box::new(RangeQuery::new(bound(lo), bound(hi)))
}

fn both(a: Box<dyn Query>, b: Box<dyn Query>) -> Box<dyn Query> {
    Box::new(ConstScoreQuery::new(
        Box::new(BooleanQuery::new(vec![(Occur::Must, a), (Occur::Must, b)])),
        1.0,
    ))
}

/// `term`: the documents whose range holds `v`.
pub fn term_query(f: &MappedField, v: &Value) -> Result<Box<dyn Query>, String> {
    let (of, lo, hi) = columns(f)?;
    let p = point(f, of, v)?;
    Ok(both(
        column_range(lo, None, Some(p)),
        column_range(hi, Some(p), None),
    ))
}

/// `range`: the documents whose range relates to the query's as `relation` asks.
pub fn range_query(f: &MappedField, bounds: &Map<String, Value>) -> Result<Box<dyn Query>, String> {
    let (of, lo, hi) = columns(f)?;
    let mut given = Map::new();
    for (k, v) in bounds {
        match k.as_str() {
            "gte" | "gt" | "lte" | "lt" => {
                given.insert(k.clone(), v.clone());
            }
            "relation" | "boost" => {}
            "format" | "time_zone" => {
                return Err(format!(
                    "range `{k}` on the range field `{}` is not run by the embedded engine",
                    f.name
                ))
            }
            other => {
                return Err(format!(
                    "range bound `{other}` is not one of gte, gt, lte, lt"
                ))
            }
        }
    }
    let (qa, qb) = ends(f, of, &Value::Object(given))?;
    let relation = bounds
        .get("relation")
        .and_then(Value::as_str)
        .unwrap_or("intersects")
        .to_ascii_lowercase();
    Ok(match relation.as_str() {
        // The document's range starts before the query's ends, and ends after it starts.
        "intersects" => both(
            column_range(lo, None, Some(qb)),
            column_range(hi, Some(qa), None),
        ),
        "within" => both(
            column_range(lo, Some(qa), None),
            column_range(hi, None, Some(qb)),
        ),
        "contains" => both(
            column_range(lo, None, Some(qa)),
            column_range(hi, Some(qb), None),
        ),
        other => {
            return Err(format!(
                "range relation `{other}` is not one of intersects, within, contains"
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::index::EmbeddedIndex;
    use serde_json::json;

    #[test]
    fn ranges_match_by_their_relation_to_the_query() {
        let body = json!({"mappings": {"properties": {
            "ages": {"type": "integer_range"}, "when": {"type": "date_range", "format": "yyyy-MM-dd"},
            "net": {"type": "ip_range"}, "score": {"type": "double_range"}
        }}});
        let idx = EmbeddedIndex::create("r", &body).unwrap();
        // [10, 19], [15, 30], [20, 20] and an open one from 40.
        for d in [
            json!({"ages": {"gte": 10, "lt": 20}, "when": {"gte": "2024-01-01", "lte": "2024-01-31"}, "net": "10.0.0.0/8", "score": {"gt": 0.5, "lte": 1.0}}),
            json!({"ages": {"gte": 15, "lte": 30}, "net": {"gte": "192.168.0.1", "lte": "192.168.0.9"}}),
            json!({"ages": {"gt": 19, "lt": 21}}),
            json!({"ages": {"gte": 40}}),
        ] {
            idx.add_for_test(&d.to_string());
        }
        idx.refresh().unwrap();
        let hits = |q: serde_json::Value| {
            let plan = idx
                .compile(&json!({"size": 0, "query": q}))
                .unwrap_or_else(|e| panic!("{}", e.message));
            idx.search_hits(&plan, &idx.searcher()).unwrap().0
        };
        assert_eq!(hits(json!({"term": {"ages": 19}})), 2);
        assert_eq!(hits(json!({"term": {"ages": 20}})), 2);
        assert_eq!(hits(json!({"term": {"ages": 1000}})), 1);
        assert_eq!(hits(json!({"range": {"ages": {"gte": 18, "lte": 22}}})), 3);
        assert_eq!(
            hits(json!({"range": {"ages": {"gte": 18, "lte": 22, "relation": "within"}}})),
            1
        );
        assert_eq!(
            hits(json!({"range": {"ages": {"gte": 16, "lte": 18, "relation": "contains"}}})),
            2
        );
        assert_eq!(hits(json!({"range": {"ages": {"gt": 30, "lt": 40}}})), 0);
        assert_eq!(hits(json!({"term": {"when": "2024-01-15"}})), 1);
        assert_eq!(hits(json!({"term": {"net": "10.1.2.3"}})), 1);
        assert_eq!(hits(json!({"term": {"net": "192.168.0.10"}})), 0);
        assert_eq!(hits(json!({"term": {"score": 0.5}})), 0);
        assert_eq!(hits(json!({"term": {"score": 1.0}})), 1);
        assert_eq!(hits(json!({"exists": {"field": "when"}})), 1);
        // One range a document; aggregations on ranges are refused, naming the field.
        let e = idx
            .apply(&crate::bulk::Item::new(
                crate::bulk::Verb::Index,
                None,
                Some(r#"{"ages": [{"gte": 1}, {"gte": 5}]}"#),
            ))
            .unwrap_err();
        assert!(e.reason.contains("one range"), "{}", e.reason);
        let e = idx
            .compile(&json!({"aggs": {"a": {"histogram": {"field": "ages", "interval": 5}}}}))
            .err()
            .unwrap();
        assert!(e.message.contains("range field"), "{}", e.message);
    }
}
