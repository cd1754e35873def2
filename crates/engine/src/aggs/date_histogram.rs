//! `date_histogram` as Elasticsearch runs it. tantivy's histogram runs the ones whose buckets
//! all have one length: fixed intervals, and calendar seconds to weeks, in UTC or a fixed
//! offset (the zone's offset and `offset` become tantivy's offset). Months, quarters, years,
//! and zones with daylight saving run as ranges laid out by their [`Rounding`] over the
//! matches' dates (`auto_date`). Either way each bucket's `key_as_string` is printed in the
//! request's `format` (else the field's) on the zone's clock ([`DateKeys`]).

use super::rounding::{Rounding, Step, Unit};
use crate::mapping::dates::DateFormats;
use crate::mapping::Mapping;
use crate::zone::Zone;
use serde_json::{Map, Value};

const DAY: i64 = 86_400_000;

/// How a date_histogram runs.
#[derive(Debug)]
pub enum Plan {
    /// tantivy's histogram with these parameters.
    Tantivy(Map<String, Value>),
    /// Ranges laid out by the rounding.
    Own(Rounding),
}

/// Parameters the engine's own buckets take (tantivy's take its own set).
pub const OWN_PARAMS: [&str; 9] = [
    "field",
    "calendar_interval",
    "fixed_interval",
    "interval",
    "min_doc_count",
    "format",
    "time_zone",
    "offset",
    "keyed",
];

/// Decides how the date_histogram with `params` runs; for tantivy, its parameters.
pub fn plan(params: &Map<String, Value>, at: &str) -> Result<Plan, String> {
    let refuse = |m: String| format!("aggregation `{at}`: {m}");
    let zone = Zone::of_param(params.get("time_zone")).map_err(refuse)?;
    let offset = match params.get("offset") {
        None | Some(Value::Null) => 0,
        Some(Value::Number(n)) => n
            .as_i64()
            .ok_or_else(|| refuse(format!("`offset` {n} is not whole milliseconds")))?,
        Some(Value::String(s)) => {
            signed_millis(s).ok_or_else(|| refuse(format!("`offset` `{s}` is not a time value")))?
        }
        Some(other) => return Err(refuse(format!("`offset` {other} is not a time value"))),
    };
    let step = step(params, at)?;
    let mut out = params.clone();
    for own in [
        "time_zone",
        "format",
        "calendar_interval",
        "interval",
        "offset",
    ] {
        out.remove(own);
    }
    let (len, week) = match step {
        Step::Fixed(len) => (len, false),
        Step::Calendar(Unit::Second) => (1000, false),
        Step::Calendar(Unit::Minute) => (60_000, false),
        Step::Calendar(Unit::Hour) => (3_600_000, false),
        Step::Calendar(Unit::Day) => (DAY, false),
        Step::Calendar(Unit::Week) => (7 * DAY, true),
        Step::Calendar(_) => return Ok(Plan::Own(Rounding::new(step, zone, offset))),
    };
    let Some(zone_offset) = zone.fixed_offset_ms() else {
        return Ok(Plan::Own(Rounding::new(step, zone, offset)));
    };
    // Buckets start at the zone's midnight (less its offset from UTC), shifted by `offset`;
    // calendar weeks on a Monday, 4 days after the epoch's Thursday.
    let shift = offset - zone_offset + if week { 4 * DAY } else { 0 };
    out.insert("fixed_interval".into(), Value::String(format!("{len}ms")));
    if shift.rem_euclid(len) != 0 {
        out.insert(
            "offset".into(),
            Value::String(format!("{}ms", shift.rem_euclid(len))),
        );
    }
    Ok(Plan::Tantivy(out))
}

/// What a bucket spans: `calendar_interval` (one unit), `fixed_interval`, or the deprecated
/// `interval` (either).
fn step(params: &Map<String, Value>, at: &str) -> Result<Step, String> {
    let text = |k: &str| params.get(k).and_then(Value::as_str);
    match (
        text("calendar_interval"),
        text("fixed_interval"),
        text("interval"),
    ) {
        (Some(c), None, None) => Unit::parse(c).map(Step::Calendar).ok_or_else(|| {
            format!("aggregation `{at}`: the supplied interval [{c}] could not be parsed as a calendar interval (one unit: minute or 1m, hour or 1h, day or 1d, week or 1w, month or 1M, quarter or 1q, year or 1y)")
        }),
        (None, Some(f), None) => fixed(f).ok_or_else(|| {
            format!("aggregation `{at}`: the supplied interval [{f}] could not be parsed as a fixed time interval (ms, s, m, h or d)")
        }),
        (None, None, Some(i)) => Unit::parse(i)
            .map(Step::Calendar)
            .or_else(|| fixed(i))
            .ok_or_else(|| format!("aggregation `{at}`: `interval` [{i}] is neither a calendar nor a fixed interval")),
        (None, None, None) => Err(format!(
            "aggregation `{at}`: `date_histogram` needs a `calendar_interval` or a `fixed_interval`"
        )),
        _ => Err(format!(
            "aggregation `{at}`: give one of `calendar_interval`, `fixed_interval` and `interval`"
        )),
    }
}

fn fixed(text: &str) -> Option<Step> {
    let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &text[digits.len()..];
    let n: i64 = digits.parse().ok().filter(|n| *n > 0)?;
    let ms = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => DAY,
        _ => return None,
    };
    Some(Step::Fixed(n.checked_mul(ms)?))
}

/// A time value (`30s`, `-6h`, `+1d`) in milliseconds, with its sign.
pub fn signed_millis(text: &str) -> Option<i64> {
    let (sign, magnitude) = match text.trim().strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text.trim().strip_prefix('+').unwrap_or(text.trim())),
    };
    let d = crate::util::parse_time(magnitude).ok()?;
    Some(sign * i64::try_from(d.as_millis()).ok()?)
}

/// How a date_histogram's keys print: its `format`, else its field's, on its zone's clock.
pub fn key_printer(
    params: &Map<String, Value>,
    mapping: Option<&Mapping>,
    at: &str,
) -> Result<(DateFormats, Zone), String> {
    let zone =
        Zone::of_param(params.get("time_zone")).map_err(|m| format!("aggregation `{at}`: {m}"))?;
    let formats = match params.get("format").and_then(Value::as_str) {
        Some(text) => {
            DateFormats::parse(text).map_err(|m| format!("aggregation `{at}`: `format`: {m}"))?
        }
        None => params
            .get("field")
            .and_then(Value::as_str)
            .and_then(|f| mapping?.field(f)?.dates.clone())
            .unwrap_or_default(),
    };
    Ok((formats, zone))
}

/// The tantivy date_histograms whose `key_as_string` is printed again: each with the names of
/// the bucket aggregations above it, its own name, and how its keys print.
#[derive(Debug, Clone, Default)]
pub struct DateKeys(Vec<(Vec<String>, String, DateFormats, Zone)>);

impl DateKeys {
    pub fn push(&mut self, path: &[String], name: &str, printer: (DateFormats, Zone)) {
        self.0
            .push((path.to_vec(), name.to_string(), printer.0, printer.1));
    }

    pub fn apply(&self, v: &mut Value) {
        for (path, name, formats, zone) in &self.0 {
            at_path(v, path, &mut |level| {
                if let Some(buckets) = level.get_mut(name.as_str()).map(|a| &mut a["buckets"]) {
                    reprint(buckets, formats, zone);
                }
            });
        }
    }
}

/// Calls `f` on every aggregations object reached through the bucket aggregations `path`.
pub fn at_path(v: &mut Value, path: &[String], f: &mut dyn FnMut(&mut Map<String, Value>)) {
    let Value::Object(level) = v else { return };
    let Some((first, rest)) = path.split_first() else {
        f(level);
        return;
    };
    let Some(agg) = level.get_mut(first.as_str()) else {
        return;
    };
    match agg.get_mut("buckets") {
        Some(Value::Array(buckets)) => buckets.iter_mut().for_each(|b| at_path(b, rest, f)),
        Some(Value::Object(keyed)) => keyed.values_mut().for_each(|b| at_path(b, rest, f)),
        // A single-bucket aggregation (filter) holds its sub-aggregations itself.
        _ => at_path(agg, rest, f),
    }
}

fn reprint(buckets: &mut Value, formats: &DateFormats, zone: &Zone) {
    let text = |b: &Value| {
        b["key"]
            .as_f64()
            .map(|ms| formats.print_in((ms as i64).saturating_mul(1_000_000), zone))
    };
    match buckets {
        Value::Array(list) => {
            for b in list {
                if let Some(s) = text(b) {
                    b["key_as_string"] = Value::String(s);
                }
            }
        }
        Value::Object(keyed) => {
            let old = std::mem::take(keyed);
            for (k, mut b) in old {
                match text(&b) {
                    Some(s) => {
                        b["key_as_string"] = Value::String(s.clone());
                        keyed.insert(s, b);
                    }
                    None => {
                        keyed.insert(k, b);
                    }
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tantivy(params: Value) -> Map<String, Value> {
        match plan(params.as_object().unwrap(), "aggs.h").unwrap() {
            Plan::Tantivy(p) => p,
            Plan::Own(r) => panic!("runs its own buckets: {r:?}"),
        }
    }

    #[test]
    fn fixed_lengths_in_fixed_offsets_run_on_tantivy() {
        let p = tantivy(json!({"field": "at", "calendar_interval": "day", "time_zone": "-01:00"}));
        // Local midnight at -01:00 is 01:00Z.
        assert_eq!(p["fixed_interval"], "86400000ms");
        assert_eq!(p["offset"], "3600000ms");
        let p = tantivy(json!({"field": "at", "calendar_interval": "week"}));
        assert_eq!(p["offset"], "345600000ms");
        let p = tantivy(json!({"field": "at", "fixed_interval": "90m", "offset": "+30m"}));
        assert_eq!(
            (p["fixed_interval"].as_str(), p["offset"].as_str()),
            (Some("5400000ms"), Some("1800000ms"))
        );
        assert!(p.get("time_zone").is_none());
        for own in [
            json!({"field": "at", "calendar_interval": "month"}),
            json!({"field": "at", "calendar_interval": "day", "time_zone": "Europe/Vienna"}),
            json!({"field": "at", "fixed_interval": "1h", "time_zone": "America/New_York"}),
        ] {
            assert!(
                matches!(plan(own.as_object().unwrap(), "a").unwrap(), Plan::Own(_)),
                "{own}"
            );
        }
        for (bad, says) in [
            (
                json!({"calendar_interval": "2M"}),
                "could not be parsed as a calendar interval",
            ),
            (
                json!({"fixed_interval": "1M"}),
                "could not be parsed as a fixed time interval",
            ),
            (
                json!({"calendar_interval": "1d", "fixed_interval": "1d"}),
                "give one of",
            ),
            (
                json!({"calendar_interval": "1d", "time_zone": "Mars/Base"}),
                "unknown time zone",
            ),
        ] {
            let e = plan(bad.as_object().unwrap(), "a").unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn keys_print_in_the_format_on_the_zones_clock() {
        let mut v = json!({"t": {"buckets": [{"key": "x", "h": {"buckets": [{"key": 1443574800000.0, "doc_count": 1}]}}]}});
        let mut keys = DateKeys::default();
        let params = json!({"format": "yyyy-MM-dd HH:mm", "time_zone": "-01:00"});
        keys.push(
            &["t".to_string()],
            "h",
            key_printer(params.as_object().unwrap(), None, "a").unwrap(),
        );
        let plain = json!({});
        keys.push(
            &[],
            "t",
            key_printer(plain.as_object().unwrap(), None, "a").unwrap(),
        );
        keys.apply(&mut v);
        assert_eq!(
            v["t"]["buckets"][0]["h"]["buckets"][0]["key_as_string"],
            "2015-09-30 00:00"
        );
    }
}

impl super::Level<'_> {
    /// A date_histogram on the engine's own buckets (see [`plan`]): true when it is one, put
    /// with its sub-aggregations in the request's own date histograms.
    pub(super) fn own_date_histogram(
        &mut self,
        params: &Map<String, Value>,
        sub: Option<&Value>,
        at: &super::Here<'_>,
    ) -> Result<bool, String> {
        let (name, here, path) = (at.name, at.here, at.path);
        let Plan::Own(rounding) = plan(params, here)? else {
            let printer = key_printer(params, self.mapping, here)?;
            self.date_keys.push(path, name, printer);
            return Ok(false);
        };
        let mut inner = path.to_vec();
        inner.push(super::auto_date::AutoHistogram::marker(name));
        let filters_before = self.filters.len();
        let sub = sub.map(|s| self.rewrite(s, here, &inner)).transpose()?;
        if self.filters.len() != filters_before {
            return Err(format!("aggregation `{here}`: `filter` and `filters` under a `date_histogram` by months, quarters or years, or in a time zone with daylight saving, are not run by the embedded engine"));
        }
        self.autos.push(super::auto_date::AutoHistogram::histogram(
            name,
            params,
            rounding,
            self.mapping,
            sub,
            path,
            here,
        )?);
        Ok(true)
    }
}
