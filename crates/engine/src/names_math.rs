//! Date math in index and alias names, as Elasticsearch resolves them:
//! `<static{date_math{format|time_zone}}>`, e.g. `<logs-{now/d}>` is `logs-2024.03.22` and
//! `<logs_{2022-12-31||/d{yyyy-MM-dd}}>` is `logs_2022-12-31`. The format is a Java date
//! pattern (`yyyy.MM.dd` by default); the time zone an offset such as `+01:00`, or UTC.

use crate::mapping::datemath::{eval, Round};
use crate::mapping::dates::DateFormats;
use chrono::{DateTime, FixedOffset, Utc};
use std::borrow::Cow;

/// `name` with its date math resolved at `now`; a name without `<...>` as it is.
pub fn resolve(name: &str, now: DateTime<Utc>) -> Result<Cow<'_, str>, String> {
    let Some(inner) = name.strip_prefix('<').and_then(|n| n.strip_suffix('>')) else {
        return Ok(Cow::Borrowed(name));
    };
    let bad = |why: &str| format!("invalid date math index name [{name}]: {why}");
    let mut out = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(chars.next().ok_or_else(|| bad("it ends with an escape"))?),
            '{' => {
                // The expression runs to the matching `}`, an inner `{format|zone}` included.
                let mut expr = String::new();
                let mut depth = 1;
                for c in chars.by_ref() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                    expr.push(c);
                }
                if depth != 0 {
                    return Err(bad("a `{` is not closed"));
                }
                out.push_str(&expression(&expr, now).map_err(|why| bad(&why))?);
            }
            '}' => return Err(bad("a `}` closes nothing")),
            c => out.push(c),
        }
    }
    Ok(Cow::Owned(out))
}

fn expression(expr: &str, now: DateTime<Utc>) -> Result<String, String> {
    let (math, options) = match expr.split_once('{') {
        Some((m, rest)) => (
            m,
            Some(
                rest.strip_suffix('}')
                    .ok_or("a format's `{` is not closed")?,
            ),
        ),
        None => (expr, None),
    };
    let (pattern, zone) = match options {
        Some(o) => match o.split_once('|') {
            Some((p, z)) => (p, Some(z)),
            None => (o, None),
        },
        None => ("yyyy.MM.dd", None),
    };
    let offset = match zone.map(str::trim) {
        None | Some("UTC" | "Z" | "+00:00") => FixedOffset::east_opt(0).expect("zero offset"),
        Some(z) => z
            .parse::<FixedOffset>()
            .map_err(|_| format!("time zone [{z}] is not an offset such as +01:00"))?,
    };
    // Math and rounding run on the zone's wall clock (`now/d` is that zone's midnight), so
    // the instant is shifted into it and shown as it reads there.
    let local_now = now + chrono::Duration::seconds(i64::from(offset.local_minus_utc()));
    let at = eval(math, &DateFormats::default(), local_now, Round::Down)?;
    let at = DateTime::<Utc>::from_timestamp_micros(at.into_timestamp_micros())
        .ok_or("the date is out of range")?;
    Ok(at.format(&chrono_pattern(pattern)?).to_string())
}

/// A Java date pattern's common letters as chrono's.
fn chrono_pattern(java: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = java.chars().peekable();
    while let Some(c) = chars.next() {
        let mut run = 1;
        while chars.peek() == Some(&c) {
            chars.next();
            run += 1;
        }
        let piece = match (c, run) {
            ('y' | 'u', 4) => "%Y",
            ('y' | 'u', 2) => "%y",
            ('M', 2) => "%m",
            ('M', 1) => "%-m",
            ('d', 2) => "%d",
            ('d', 1) => "%-d",
            ('H', 2) => "%H",
            ('m', 2) => "%M",
            ('s', 2) => "%S",
            ('S', 3) => "%3f",
            (c, _) if c.is_ascii_alphabetic() => {
                return Err(format!(
                    "date format [{java}]: `{}` is not run by runner serve",
                    c.to_string().repeat(run)
                ))
            }
            (c, n) => {
                out.extend(std::iter::repeat_n(c, n));
                continue;
            }
        };
        out.push_str(piece);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::resolve;
    use chrono::TimeZone;

    #[test]
    fn names_resolve_as_elasticsearch_documents_them() {
        let now = chrono::Utc.with_ymd_and_hms(2024, 3, 22, 15, 4, 5).unwrap();
        assert_eq!(resolve("logs", now).unwrap(), "logs");
        assert_eq!(resolve("<logs-{now/d}>", now).unwrap(), "logs-2024.03.22");
        assert_eq!(
            resolve("<logs-{now/M{yyyy.MM}}>", now).unwrap(),
            "logs-2024.03"
        );
        assert_eq!(
            resolve("<logs-{now/d-1d}>", now).unwrap(),
            "logs-2024.03.21"
        );
        assert_eq!(
            resolve("<logs_http_{2022-12-31||/d{yyyy-MM-dd}}>", now).unwrap(),
            "logs_http_2022-12-31"
        );
        assert_eq!(
            resolve("<logs-{now/d{yyyy.MM.dd|+12:00}}>", now).unwrap(),
            "logs-2024.03.23"
        );
        assert!(resolve("<logs-{now/d>", now).is_err());
        assert!(resolve("<logs-{now{QQQ}}>", now).is_err());
    }
}
