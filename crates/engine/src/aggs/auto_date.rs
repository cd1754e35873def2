//! `auto_date_histogram`, and the `date_histogram`s tantivy's histogram cannot run: by
//! calendar months, quarters or years (no fixed length), or in a zone with daylight saving
//! (see `date_histogram`). An auto_date_histogram is bucketed as Elasticsearch does it: the
//! first of its roundings (1, 5, 10 or 30 seconds or minutes; 1, 3 or 12 hours; 1 or 7 days;
//! 1 or 3 months; 1 to 100 years) that covers the matching documents' dates in at most
//! `buckets` buckets, keyed from the earliest date's rounded start, on the zone's clock. A
//! first pass over the matches finds their earliest and latest dates; the buckets then run as
//! a `range` aggregation with those bounds, sub-aggregations included, where the aggregation
//! is in the request (under other bucket aggregations too), reshaped as Elasticsearch answers:
//! a date_histogram shows, in each parent bucket, the buckets from its first to its last with
//! documents (or those with `min_doc_count`).

use super::date_histogram::{key_printer, OWN_PARAMS};
use super::rounding::{Rounding, Step, Unit};
use crate::dsl::scoring::NumberKind;
use crate::dsl::scoring::Numbers;
use crate::mapping::dates::DateFormats;
use crate::mapping::FieldType;
use crate::mapping::Mapping;
use crate::zone::Zone;
use serde_json::{json, Map, Value};
use tantivy::collector::{Collector, SegmentCollector};
use tantivy::{DocId, Score, SegmentOrdinal, SegmentReader};

/// Joins an own date histogram's name in tantivy's request.
const MARK: char = '\u{5}';
/// Elasticsearch caps `buckets` below 10,000 buckets for the whole response; so does this.
const MAX_BUCKETS: usize = 10_000;

const ROUNDINGS: [(Unit, &[u32], &str); 6] = [
    (Unit::Second, &[1, 5, 10, 30], "s"),
    (Unit::Minute, &[1, 5, 10, 30], "m"),
    (Unit::Hour, &[1, 3, 12], "h"),
    (Unit::Day, &[1, 7], "d"),
    (Unit::Month, &[1, 3], "M"),
    (Unit::Year, &[1, 5, 10, 20, 50, 100], "y"),
];

#[derive(Debug, Clone)]
enum Kind {
    /// An auto_date_histogram: its target bucket count and first rounding.
    Auto { target: usize, min_unit: Unit },
    /// A date_histogram: its buckets, and `min_doc_count`.
    Histogram {
        rounding: Rounding,
        min_doc_count: u64,
    },
}

#[derive(Debug, Clone)]
pub struct AutoHistogram {
    name: String,
    column: String,
    /// The names, in tantivy's request, of the bucket aggregations above it.
    path: Vec<String>,
    /// Its sub-aggregations, in tantivy's request form.
    sub: Option<Value>,
    kind: Kind,
    zone: Zone,
    formats: DateFormats,
    keyed: bool,
}

/// The buckets chosen for one search: each bucket's start (epoch ms), where the last ends, and
/// how the answer is shaped.
#[derive(Debug, Clone)]
pub struct Chosen {
    marker: String,
    starts: Vec<i64>,
    end: i64,
    /// An auto_date_histogram's interval (`1d`); None for a date_histogram.
    interval: Option<String>,
    min_doc_count: u64,
    formats: DateFormats,
    zone: Zone,
    keyed: bool,
    /// At the top level of the request.
    top: bool,
}

impl AutoHistogram {
    pub fn parse(
        name: &str,
        params: &Map<String, Value>,
        mapping: Option<&Mapping>,
        sub: Option<Value>,
        at: &str,
    ) -> Result<AutoHistogram, String> {
        let refuse = |m: String| format!("aggregation `{at}`: {m}");
        if let Some(k) = params.keys().find(|k| {
            ![
                "field",
                "buckets",
                "format",
                "minimum_interval",
                "time_zone",
            ]
            .contains(&k.as_str())
        }) {
            return Err(refuse(format!(
                "`auto_date_histogram` parameter `{k}` is not run by the embedded engine"
            )));
        }
        let target = match params.get("buckets") {
            None => 10,
            Some(v) => v
                .as_u64()
                .filter(|n| (1..=MAX_BUCKETS as u64).contains(n))
                .ok_or_else(|| refuse(format!("`buckets` is 1 to {MAX_BUCKETS}")))?
                as usize,
        };
        let min_unit = match params.get("minimum_interval").and_then(Value::as_str) {
            None => Unit::Second,
            Some("second") => Unit::Second,
            Some("minute") => Unit::Minute,
            Some("hour") => Unit::Hour,
            Some("day") => Unit::Day,
            Some("month") => Unit::Month,
            Some("year") => Unit::Year,
            Some(other) => {
                return Err(refuse(format!(
                "`minimum_interval` `{other}` is not one of second, minute, hour, day, month, year"
            )))
            }
        };
        Self::new(
            name,
            params,
            mapping,
            sub,
            Kind::Auto { target, min_unit },
            &[],
            at,
        )
    }

    /// A `date_histogram` whose buckets the rounding lays out, under the bucket aggregations
    /// `path` (their names in tantivy's request).
    #[allow(clippy::too_many_arguments)]
    pub fn histogram(
        name: &str,
        params: &Map<String, Value>,
        rounding: Rounding,
        mapping: Option<&Mapping>,
        sub: Option<Value>,
        path: &[String],
        at: &str,
    ) -> Result<AutoHistogram, String> {
        let refuse = |m: String| format!("aggregation `{at}`: {m}");
        if let Some(k) = params.keys().find(|k| !OWN_PARAMS.contains(&k.as_str())) {
            return Err(refuse(format!(
                "a `date_histogram` by months, quarters or years, or in a time zone with daylight saving, runs here without `{k}`"
            )));
        }
        let min_doc_count = params
            .get("min_doc_count")
            .map_or(Some(0), Value::as_u64)
            .ok_or_else(|| refuse("`min_doc_count` is a whole number".into()))?;
        let kind = Kind::Histogram {
            rounding,
            min_doc_count,
        };
        Self::new(name, params, mapping, sub, kind, path, at)
    }

    fn new(
        name: &str,
        params: &Map<String, Value>,
        mapping: Option<&Mapping>,
        sub: Option<Value>,
        kind: Kind,
        path: &[String],
        at: &str,
    ) -> Result<AutoHistogram, String> {
        let refuse = |m: String| format!("aggregation `{at}`: {m}");
        let field = params
            .get("field")
            .and_then(Value::as_str)
            .ok_or_else(|| refuse("a date histogram needs a `field`".into()))?;
        let column = match mapping.map(|m| m.field(field)) {
            None => field.to_string(),
            Some(Some(f)) if f.kind == FieldType::Date => f.name.clone(),
            Some(_) => {
                return Err(refuse(format!(
                    "a date histogram needs a date field, and `{field}` is not one"
                )))
            }
        };
        let (formats, zone) = key_printer(params, mapping, at)?;
        Ok(AutoHistogram {
            name: name.to_string(),
            column,
            path: path.to_vec(),
            sub,
            kind,
            zone,
            formats,
            keyed: params.get("keyed").and_then(Value::as_bool) == Some(true),
        })
    }

    pub fn marker(name: &str) -> String {
        format!("{name}{MARK}")
    }

    /// The buckets covering [min, max]: their starts and where the last ends; for an
    /// auto_date_histogram, the first rounding that needs at most `target` of them.
    fn choose(&self, min: i64, max: i64) -> Result<Chosen, String> {
        let chosen = |starts: Vec<i64>, end: i64, interval: Option<String>, min_doc_count| Chosen {
            marker: Self::marker(&self.name),
            starts,
            end,
            interval,
            min_doc_count,
            formats: self.formats.clone(),
            zone: self.zone.clone(),
            keyed: self.keyed,
            top: self.path.is_empty(),
        };
        let too_many = |count: usize| {
            format!(
                "`{}` would have {count} buckets, more than the {MAX_BUCKETS} allowed",
                self.name
            )
        };
        let (target, min_unit) = match &self.kind {
            Kind::Histogram {
                rounding,
                min_doc_count,
            } => {
                let starts = rounding.keys(min, max, MAX_BUCKETS).map_err(too_many)?;
                let end = rounding.next(*starts.last().unwrap_or(&min));
                return Ok(chosen(starts, end, None, *min_doc_count));
            }
            Kind::Auto { target, min_unit } => (*target, *min_unit),
        };
        for (unit, inner, suffix) in ROUNDINGS.iter().filter(|r| r.0 >= min_unit) {
            let rounding = Rounding::new(Step::Calendar(*unit), self.zone.clone(), 0);
            let widest = *inner.last().unwrap_or(&1) as usize;
            let last_resort = *unit == Unit::Year;
            let cap = if last_resort {
                MAX_BUCKETS * widest
            } else {
                target * widest
            };
            let Ok(keys) = rounding.keys(min, max, cap) else {
                if last_resort {
                    return Err(too_many(MAX_BUCKETS + 1));
                }
                continue;
            };
            for n in inner.iter().map(|n| *n as usize) {
                let count = (keys.len() - 1) / n + 1;
                if count <= target || (last_resort && n == widest) {
                    let starts: Vec<i64> = keys.iter().step_by(n).copied().collect();
                    if starts.len() > MAX_BUCKETS {
                        return Err(too_many(starts.len()));
                    }
                    // The last bucket spans n units from its start.
                    let mut end = *starts.last().unwrap_or(&min);
                    for _ in 0..n {
                        end = rounding.next(end);
                    }
                    return Ok(chosen(starts, end, Some(format!("{n}{suffix}")), 0));
                }
            }
        }
        Err(too_many(MAX_BUCKETS + 1))
    }

    /// tantivy's request for these buckets: a range aggregation on the date column.
    fn request(&self, chosen: &Chosen) -> Value {
        let nanos = |ms: i64| json!(ms.saturating_mul(1_000_000));
        let ranges: Vec<Value> = chosen
            .starts
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let to = chosen.starts.get(i + 1).copied().unwrap_or(chosen.end);
                json!({"from": nanos(*s), "to": nanos(to)})
            })
            .collect();
        let mut r = json!({"range": {"field": self.column, "ranges": ranges, "keyed": false}});
        if let Some(sub) = &self.sub {
            r["aggs"] = sub.clone();
        }
        r
    }
}

/// Chooses each own date histogram's buckets for one search, from the matches' dates: where
/// in tantivy's request each goes (the names above it), its entry, and what reshapes its
/// answers.
#[allow(clippy::type_complexity)]
pub fn resolve(
    autos: &[AutoHistogram],
    searcher: &tantivy::Searcher,
    query: &dyn tantivy::query::Query,
) -> tantivy::Result<Vec<(Vec<String>, String, Value, Chosen)>> {
    let mut out = Vec::new();
    for a in autos {
        let (min, max) = searcher.search(query, &Extent(a.column.clone()))?;
        let chosen = match (min, max) {
            (Some(lo), Some(hi)) => a
                .choose(lo, hi)
                .map_err(tantivy::TantivyError::InvalidArgument)?,
            // No dates: no buckets.
            _ => Chosen {
                marker: AutoHistogram::marker(&a.name),
                starts: Vec::new(),
                end: 0,
                interval: match a.kind {
                    Kind::Auto { .. } => Some("1s".into()),
                    Kind::Histogram { .. } => None,
                },
                min_doc_count: 0,
                formats: a.formats.clone(),
                zone: a.zone.clone(),
                keyed: a.keyed,
                top: a.path.is_empty(),
            },
        };
        let request = if chosen.starts.is_empty() {
            Value::Null
        } else {
            a.request(&chosen)
        };
        out.push((a.path.clone(), chosen.marker.clone(), request, chosen));
    }
    Ok(out)
}

/// Puts Elasticsearch's answer for each own date histogram in place of tantivy's range, at
/// every level of the response; one at the top level that matched nothing is empty.
pub fn reshape(v: &mut Value, chosen: &[Chosen]) {
    if chosen.is_empty() {
        return;
    }
    if let Value::Object(map) = v {
        for c in chosen.iter().filter(|c| c.top) {
            if !map.contains_key(&c.marker) {
                map.insert(c.marker.clone(), json!({"buckets": []}));
            }
        }
    }
    replace_markers(v, chosen);
}

fn replace_markers(v: &mut Value, chosen: &[Chosen]) {
    match v {
        Value::Object(map) => {
            for c in chosen {
                if let Some(found) = map.remove(&c.marker) {
                    let name = c.marker.trim_end_matches(MARK).to_string();
                    map.insert(name, answer(Some(&found), c));
                }
            }
            map.iter_mut()
                .filter(|(k, _)| k.as_str() != "hits")
                .for_each(|(_, v)| replace_markers(v, chosen));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| replace_markers(v, chosen)),
        _ => {}
    }
}

fn answer(found: Option<&Value>, c: &Chosen) -> Value {
    let empty = Vec::new();
    let buckets = found
        .and_then(|f| f["buckets"].as_array())
        .unwrap_or(&empty);
    let mut out: Vec<Value> = c
        .starts
        .iter()
        .map(|start| {
            // tantivy adds buckets for the open ends; each of ours is found by its start.
            let b = buckets
                .iter()
                .find(|b| super::date_range::bound_ms(b, "from") == Some(*start));
            let mut o = Map::new();
            let text = c.formats.print_in(start.saturating_mul(1_000_000), &c.zone);
            o.insert("key_as_string".into(), json!(text));
            o.insert("key".into(), json!(start));
            o.insert(
                "doc_count".into(),
                b.map_or(json!(0), |b| b["doc_count"].clone()),
            );
            if let Some(b) = b {
                super::date_range::copy_sub_aggregations(b, &mut o);
            }
            Value::Object(o)
        })
        .collect();
    let count = |b: &Value| b["doc_count"].as_u64().unwrap_or(0);
    if c.interval.is_none() {
        if c.min_doc_count == 0 {
            // From the first bucket with documents to the last, in this parent.
            let first = out.iter().position(|b| count(b) > 0).unwrap_or(out.len());
            let last = out.iter().rposition(|b| count(b) > 0).map_or(0, |i| i + 1);
            out = if first < last {
                out[first..last].to_vec()
            } else {
                Vec::new()
            };
        } else {
            out.retain(|b| count(b) >= c.min_doc_count);
        }
    }
    let buckets = if c.keyed {
        let mut keyed = Map::new();
        for b in out {
            let k = b["key_as_string"].as_str().unwrap_or_default().to_string();
            keyed.insert(k, b);
        }
        Value::Object(keyed)
    } else {
        Value::Array(out)
    };
    match &c.interval {
        Some(interval) => json!({"buckets": buckets, "interval": interval}),
        None => json!({"buckets": buckets}),
    }
}

/// The earliest and latest dates (epoch ms) of a column among a search's matches.
struct Extent(String);

struct ExtentSegment {
    dates: Numbers,
    min: Option<i64>,
    max: Option<i64>,
}

impl Collector for Extent {
    type Fruit = (Option<i64>, Option<i64>);
    type Child = ExtentSegment;

    fn for_segment(
        &self,
        _: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<ExtentSegment> {
        Ok(ExtentSegment {
            dates: Numbers::open(reader, &self.0, NumberKind::Date)?,
            min: None,
            max: None,
        })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(
        &self,
        fruits: Vec<(Option<i64>, Option<i64>)>,
    ) -> tantivy::Result<Self::Fruit> {
        let min = fruits.iter().filter_map(|f| f.0).min();
        let max = fruits.iter().filter_map(|f| f.1).max();
        Ok((min, max))
    }
}

impl SegmentCollector for ExtentSegment {
    type Fruit = (Option<i64>, Option<i64>);

    fn collect(&mut self, doc: DocId, _: Score) {
        if let Some(ms) = self.dates.get(doc) {
            let ms = ms.floor() as i64;
            self.min = Some(self.min.map_or(ms, |m| m.min(ms)));
            self.max = Some(self.max.map_or(ms, |m| m.max(ms)));
        }
    }

    fn harvest(self) -> Self::Fruit {
        (self.min, self.max)
    }
}
