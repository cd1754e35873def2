//! `auto_date_histogram`, and `date_histogram` by calendar months, quarters or years (which
//! have no fixed length, so tantivy's histogram cannot run them). An auto_date_histogram is
//! bucketed as Elasticsearch does it: the first of its roundings (1, 5, 10 or
//! 30 seconds or minutes; 1, 3 or 12 hours; 1 or 7 days; 1 or 3 months; 1 to 100 years) that
//! covers the matching documents' dates in at most `buckets` buckets, keyed from the earliest
//! date's rounded start, empty buckets included. A first pass over the matches finds their
//! earliest and latest dates; the buckets then run as a `range` aggregation with those bounds,
//! sub-aggregations included, reshaped as Elasticsearch answers.

use crate::aggs::date_range;
use crate::dsl::scoring::NumberKind;
use crate::dsl::scoring::Numbers;
use crate::mapping::FieldType;
use crate::mapping::Mapping;
use chrono::{DateTime, Datelike, Months, NaiveDate, TimeZone, Utc};
use serde_json::{json, Map, Value};
use tantivy::collector::{Collector, SegmentCollector};
use tantivy::{DocId, Score, SegmentOrdinal, SegmentReader};

/// Joins an auto_date_histogram's name in tantivy's request.
const MARK: char = '\u{5}';
/// Elasticsearch caps `buckets` below 10,000 buckets for the whole response; so does this.
const MAX_BUCKETS: usize = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
enum Unit {
    Second,
    Minute,
    Hour,
    Day,
    Month,
    /// Only for a calendar date_histogram.
    Quarter,
    Year,
}

const ROUNDINGS: [(Unit, &[u32], &str); 6] = [
    (Unit::Second, &[1, 5, 10, 30], "s"),
    (Unit::Minute, &[1, 5, 10, 30], "m"),
    (Unit::Hour, &[1, 3, 12], "h"),
    (Unit::Day, &[1, 7], "d"),
    (Unit::Month, &[1, 3], "M"),
    (Unit::Year, &[1, 5, 10, 20, 50, 100], "y"),
];

#[derive(Debug, Clone)]
pub struct AutoHistogram {
    name: String,
    column: String,
    target: usize,
    /// The first rounding it may use (`minimum_interval`).
    min_unit: Unit,
    /// Its sub-aggregations, in tantivy's request form.
    sub: Option<Value>,
    /// A date_histogram's calendar unit: its buckets, rather than chosen ones.
    calendar: Option<Unit>,
    /// A date_histogram's `min_doc_count` (0: empty buckets between the first and last shown).
    min_doc_count: u64,
}

/// The buckets chosen for one search: each bucket's start (epoch ms) and the interval's name.
#[derive(Debug, Clone)]
pub struct Chosen {
    marker: String,
    starts: Vec<i64>,
    interval: String,
    /// A date_histogram's answer has no `interval`, and may leave out small buckets.
    calendar: bool,
    min_doc_count: u64,
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
        match params.get("time_zone").and_then(Value::as_str) {
            None | Some("UTC" | "Z" | "+00:00" | "Etc/UTC") => {}
            Some(z) => {
                return Err(refuse(format!(
                    "time_zone {z} is not run by the embedded engine (UTC only)"
                )))
            }
        }
        let field = params
            .get("field")
            .and_then(Value::as_str)
            .ok_or_else(|| refuse("`auto_date_histogram` needs a `field`".into()))?;
        let column = match mapping.map(|m| m.field(field)) {
            None => field.to_string(),
            Some(Some(f)) if f.kind == FieldType::Date => f.name.clone(),
            Some(_) => {
                return Err(refuse(format!(
                    "`auto_date_histogram` needs a date field, and `{field}` is not one"
                )))
            }
        };
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
        Ok(AutoHistogram {
            name: name.to_string(),
            column,
            target,
            min_unit,
            sub,
            calendar: None,
            min_doc_count: 0,
        })
    }

    /// A `date_histogram` whose `calendar_interval` has no fixed length: months, quarters or
    /// years. None for any other date_histogram (tantivy runs those).
    pub fn calendar(
        name: &str,
        params: &Map<String, Value>,
        mapping: Option<&Mapping>,
        sub: Option<Value>,
        at: &str,
    ) -> Result<Option<AutoHistogram>, String> {
        let given = params
            .get("calendar_interval")
            .or_else(|| params.get("interval"))
            .and_then(Value::as_str);
        let unit = match given {
            Some("month" | "1M") => Unit::Month,
            Some("quarter" | "1q") => Unit::Quarter,
            Some("year" | "1y") => Unit::Year,
            _ => return Ok(None),
        };
        let refuse = |m: String| format!("aggregation `{at}`: {m}");
        if let Some(k) = params.keys().find(|k| {
            ![
                "field",
                "calendar_interval",
                "interval",
                "min_doc_count",
                "format",
                "time_zone",
            ]
            .contains(&k.as_str())
        }) {
            return Err(refuse(format!(
                "a calendar `date_histogram` parameter `{k}` is not run by the embedded engine"
            )));
        }
        let common: Map<String, Value> = params
            .iter()
            .filter(|(k, _)| matches!(k.as_str(), "field" | "format" | "time_zone"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut auto = AutoHistogram::parse(name, &common, mapping, sub, at)?;
        auto.calendar = Some(unit);
        auto.min_doc_count = params
            .get("min_doc_count")
            .map_or(Some(0), Value::as_u64)
            .ok_or_else(|| refuse("`min_doc_count` is a whole number".into()))?;
        Ok(Some(auto))
    }

    /// The first rounding that covers [min, max] in at most `target` buckets: the bucket
    /// starts, and the interval's name.
    fn choose(&self, min: i64, max: i64) -> Result<Chosen, String> {
        let at = |ms: i64| Utc.timestamp_millis_opt(ms).single().unwrap_or_default();
        let (lo, hi) = (at(min), at(max));
        let marker = format!("{}{MARK}", self.name);
        if let Some(unit) = self.calendar {
            let first = round_down(lo, unit);
            let count = units_between(first, round_down(hi, unit), unit) + 1;
            if count as usize > MAX_BUCKETS {
                return Err(format!(
                    "`{}` would have {count} buckets, more than the {MAX_BUCKETS} allowed",
                    self.name
                ));
            }
            return Ok(Chosen {
                marker,
                starts: (0..count)
                    .filter_map(|k| add(first, unit, k))
                    .map(|t| t.timestamp_millis())
                    .collect(),
                interval: match unit {
                    Unit::Month => "1M",
                    Unit::Quarter => "1q",
                    _ => "1y",
                }
                .into(),
                calendar: true,
                min_doc_count: self.min_doc_count,
            });
        }
        for (unit, inner, suffix) in ROUNDINGS.iter().filter(|r| r.0 >= self.min_unit) {
            let first = round_down(lo, *unit);
            let span = units_between(first, round_down(hi, *unit), *unit);
            for n in inner.iter().map(|n| *n as i64) {
                let count = span / n + 1;
                if count as usize <= self.target || (*unit == Unit::Year && n == 100) {
                    let starts = (0..count.min(MAX_BUCKETS as i64))
                        .filter_map(|k| add(first, *unit, k * n))
                        .map(|t| t.timestamp_millis())
                        .collect();
                    return Ok(Chosen {
                        marker,
                        starts,
                        interval: format!("{n}{suffix}"),
                        calendar: false,
                        min_doc_count: 0,
                    });
                }
            }
        }
        unreachable!("the last rounding always fits")
    }

    /// tantivy's request for these buckets: a range aggregation on the date column.
    fn request(&self, chosen: &Chosen, end: i64) -> Value {
        let nanos = |ms: i64| json!(ms.saturating_mul(1_000_000));
        let ranges: Vec<Value> = chosen
            .starts
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let to = chosen.starts.get(i + 1).copied().unwrap_or(end);
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

fn round_down(t: DateTime<Utc>, unit: Unit) -> DateTime<Utc> {
    let ms = t.timestamp_millis();
    let floor = |step: i64| {
        Utc.timestamp_millis_opt(ms.div_euclid(step) * step)
            .single()
            .unwrap_or(t)
    };
    let date = |y, m| {
        NaiveDate::from_ymd_opt(y, m, 1)
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map_or(t, |d| Utc.from_utc_datetime(&d))
    };
    match unit {
        Unit::Second => floor(1_000),
        Unit::Minute => floor(60_000),
        Unit::Hour => floor(3_600_000),
        Unit::Day => floor(86_400_000),
        Unit::Month => date(t.year(), t.month()),
        Unit::Quarter => date(t.year(), t.month() - (t.month() - 1) % 3),
        Unit::Year => date(t.year(), 1),
    }
}

fn units_between(a: DateTime<Utc>, b: DateTime<Utc>, unit: Unit) -> i64 {
    let ms = b.timestamp_millis() - a.timestamp_millis();
    match unit {
        Unit::Second => ms / 1_000,
        Unit::Minute => ms / 60_000,
        Unit::Hour => ms / 3_600_000,
        Unit::Day => ms / 86_400_000,
        Unit::Month => {
            (b.year() as i64 - a.year() as i64) * 12 + b.month() as i64 - a.month() as i64
        }
        Unit::Quarter => units_between(a, b, Unit::Month) / 3,
        Unit::Year => b.year() as i64 - a.year() as i64,
    }
}

fn add(t: DateTime<Utc>, unit: Unit, k: i64) -> Option<DateTime<Utc>> {
    let fixed = |step: i64| {
        Utc.timestamp_millis_opt(t.timestamp_millis().checked_add(k.checked_mul(step)?)?)
            .single()
    };
    match unit {
        Unit::Second => fixed(1_000),
        Unit::Minute => fixed(60_000),
        Unit::Hour => fixed(3_600_000),
        Unit::Day => fixed(86_400_000),
        Unit::Month => t.checked_add_months(Months::new(u32::try_from(k).ok()?)),
        Unit::Quarter => t.checked_add_months(Months::new(u32::try_from(k.checked_mul(3)?).ok()?)),
        Unit::Year => t.checked_add_months(Months::new(u32::try_from(k.checked_mul(12)?).ok()?)),
    }
}

/// Whether a date_histogram's interval is a calendar month, quarter or year.
pub fn is_calendar(params: &Map<String, Value>) -> bool {
    matches!(
        params
            .get("calendar_interval")
            .or_else(|| params.get("interval"))
            .and_then(Value::as_str),
        Some("month" | "1M" | "quarter" | "1q" | "year" | "1y")
    )
}

/// Chooses each auto_date_histogram's buckets for one search, from the matches' dates:
/// tantivy's request entries to add, and what reshapes their answers.
pub fn resolve(
    autos: &[AutoHistogram],
    searcher: &tantivy::Searcher,
    query: &dyn tantivy::query::Query,
) -> tantivy::Result<Vec<(String, Value, Chosen)>> {
    let mut out = Vec::new();
    for a in autos {
        let (min, max) = searcher.search(query, &Extent(a.column.clone()))?;
        let (min, max) = match (min, max) {
            (Some(lo), Some(hi)) => (lo, hi),
            // No dates: no buckets.
            _ => {
                let chosen = Chosen {
                    marker: format!("{}{MARK}", a.name),
                    starts: Vec::new(),
                    interval: "1s".into(),
                    calendar: a.calendar.is_some(),
                    min_doc_count: a.min_doc_count,
                };
                out.push((chosen.marker.clone(), Value::Null, chosen));
                continue;
            }
        };
        let chosen = a
            .choose(min, max)
            .map_err(tantivy::TantivyError::InvalidArgument)?;
        let last = chosen.starts.last().copied().unwrap_or(min);
        let end = Utc
            .timestamp_millis_opt(last)
            .single()
            .and_then(|t| {
                let (unit, n) = parse_interval(&chosen.interval)?;
                add(t, unit, n)
            })
            .map_or(max + 1, |t| t.timestamp_millis());
        out.push((chosen.marker.clone(), a.request(&chosen, end), chosen));
    }
    Ok(out)
}

fn parse_interval(text: &str) -> Option<(Unit, i64)> {
    let (n, suffix) = text.split_at(text.len() - 1);
    let unit = match suffix {
        "q" => Unit::Quarter,
        _ => ROUNDINGS.iter().find(|r| r.2 == suffix)?.0,
    };
    Some((unit, n.parse().ok()?))
}

/// Puts Elasticsearch's answer for each auto_date_histogram in place of tantivy's range.
pub fn reshape(v: &mut Value, chosen: &[Chosen]) {
    let Value::Object(map) = v else { return };
    for c in chosen {
        let found = map.remove(&c.marker).unwrap_or(Value::Null);
        let buckets = found["buckets"].as_array().cloned().unwrap_or_default();
        let out: Vec<Value> = c
            .starts
            .iter()
            .map(|start| {
                // tantivy adds buckets for the open ends; each of ours is found by its start.
                let b = buckets
                    .iter()
                    .find(|b| date_range::bound_ms(b, "from") == Some(*start))
                    .cloned()
                    .unwrap_or_else(|| json!({"doc_count": 0}));
                let mut o = Map::new();
                o.insert("key_as_string".into(), json!(date_range::as_string(*start)));
                o.insert("key".into(), json!(start));
                o.insert("doc_count".into(), b["doc_count"].clone());
                date_range::copy_sub_aggregations(&b, &mut o);
                Value::Object(o)
            })
            .collect();
        let name = c.marker.trim_end_matches(MARK).to_string();
        if c.calendar {
            let shown: Vec<Value> = out
                .into_iter()
                .filter(|b| b["doc_count"].as_u64().unwrap_or(0) >= c.min_doc_count)
                .collect();
            map.insert(name, json!({"buckets": shown}));
        } else {
            map.insert(name, json!({"buckets": out, "interval": c.interval}));
        }
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
