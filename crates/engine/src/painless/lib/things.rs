//! The methods of a field's doc values, numbers, dates, geo values, and of the subset's
//! objects (views, entries, streams, CIDR, StringTokenizer, Matcher, exceptions).

use super::collections::{entry_method, stream_method, view_method};
use super::{field, index, method, text};
use crate::painless::fault::Fault;
use crate::painless::objects::{format_date, obj, Matcher, Obj};
use crate::painless::val::{contains, Val};
use std::cell::RefCell;
use std::rc::Rc;

/// A method of a value that is no string, list, map or object; None when it has none such.
pub fn value_method(base: &Val, name: &str, args: &[Val]) -> Option<Result<Val, Fault>> {
    use Val::*;
    let r = (|| -> Result<Val, Fault> {
        Ok(match (base, name) {
            (Doc(l), "size") => Int(l.len() as i64),
            (Doc(l), "isEmpty") => Bool(l.is_empty()),
            (Doc(l), "contains") => Bool(match args.first() {
                Some(a) => contains(l, a)?,
                None => false,
            }),
            (Doc(_), "get") => index(base, args.first().ok_or("`get` takes an index")?)?,
            (Doc(_), "getValue") => field(base, "value")?,
            (Doc(l), "stream") => obj(crate::painless::objects::Obj::Stream(l.clone())),
            (Int(i), "intValue" | "longValue") => Int(*i),
            (Int(i), "doubleValue" | "floatValue") => Float(*i as f64),
            (Float(f), "intValue" | "longValue") => Int(*f as i64),
            (Float(f), "doubleValue" | "floatValue") => Float(*f),
            (Float(f), "isNaN") => Bool(f.is_nan()),
            (Date(ms), "getMillis" | "toEpochMilli") => Int(*ms),
            (Date(_), "toInstant") => base.clone(),
            (Date(ms), "withNano") => match args {
                [Int(0)] => Date(ms.div_euclid(1000) * 1000),
                [Int(n)] if (0..1_000_000_000).contains(n) => {
                    Date(ms.div_euclid(1000) * 1000 + n / 1_000_000)
                }
                _ => {
                    return Err(Fault::thrown(
                        "DateTimeException",
                        "Invalid value for NanoOfSecond",
                    ))
                }
            },
            (Date(ms), "format") => match args {
                [Obj(f)] => match &**f {
                    crate::painless::objects::Obj::Formatter(name) => Str(format_date(*ms, name)?),
                    other => {
                        return Err(Fault::cast(format!(
                            "`format` takes a DateTimeFormatter, got a {}",
                            other.class()
                        )))
                    }
                },
                _ => return Err("`format` takes a DateTimeFormatter constant".into()),
            },
            (Shape(s), "getMercatorWidth") => Float(
                crate::geo::column::mercator(s.east, 0.0).0
                    - crate::geo::column::mercator(s.west, 0.0).0,
            ),
            (Shape(s), "getMercatorHeight") => Float(
                crate::geo::column::mercator(0.0, s.north).1
                    - crate::geo::column::mercator(0.0, s.south).1,
            ),
            (Shape(s), "getCentroid") => Geo(s.centroid.0, s.centroid.1),
            (Shape(s), "getDimensionalType") => Str(s.dimension.to_string()),
            (
                Doc(_),
                "getMercatorWidth" | "getMercatorHeight" | "getCentroid" | "getDimensionalType"
                | "getLat" | "getLon",
            ) => method(&field(base, "value")?, name, args)?,
            (Geo(lat, _), "getLat") => Float(*lat),
            (Geo(_, lon), "getLon") => Float(*lon),
            (Date(ms), "isAfter") => Bool(matches!(args.first(), Some(Date(o)) if ms > o)),
            (Date(ms), "isBefore") => Bool(matches!(args.first(), Some(Date(o)) if ms < o)),
            (Date(ms), part) if part.starts_with("get") => date_part(*ms, part)?,
            _ => return Err(Fault::halt(String::new())),
        })
    })();
    match r {
        Err(Fault::Halt(e)) if e.is_empty() => None,
        other => Some(other),
    }
}

/// A date's calendar part, in UTC.
fn date_part(ms: i64, part: &str) -> Result<Val, Fault> {
    use chrono::{Datelike, Timelike};
    let t = chrono::DateTime::from_timestamp_millis(ms)
        .ok_or_else(|| Fault::thrown("DateTimeException", "the date is out of range"))?;
    Ok(Val::Int(match part {
        "getYear" => t.year() as i64,
        "getMonthValue" => t.month() as i64,
        "getDayOfMonth" => t.day() as i64,
        "getDayOfYear" => t.ordinal() as i64,
        "getHour" => t.hour() as i64,
        "getMinute" => t.minute() as i64,
        "getSecond" => t.second() as i64,
        "getNano" => t.nanosecond() as i64,
        _ => return Err(Fault::halt(String::new())),
    }))
}

/// An object's method (one taking no lambda); None when its class has none such.
pub fn object_method(o: &Rc<Obj>, name: &str, args: &[Val]) -> Option<Result<Val, Fault>> {
    match (&**o, name, args) {
        (Obj::View(m, view), ..) => view_method(m, *view, name, args),
        (Obj::Entry(m, key), ..) => entry_method(m, key, name, args),
        (Obj::Stream(items), ..) => stream_method(items, name, args),
        (Obj::Cidr(c), "contains", [Val::Str(ip)]) => Some(c.contains(ip).map(Val::Bool)),
        (Obj::Cidr(_), "contains", [Val::Null]) => Some(Err(Fault::npe("CIDR.contains(null)"))),
        (Obj::Tokenizer(t), "nextToken" | "nextElement", []) => {
            Some(t.borrow_mut().next_token().map(Val::Str))
        }
        (Obj::Tokenizer(t), "hasMoreTokens" | "hasMoreElements", []) => {
            Some(Ok(Val::Bool(t.borrow_mut().has_more())))
        }
        (Obj::Tokenizer(t), "countTokens", []) => Some(Ok(Val::Int(t.borrow().count()))),
        (Obj::Pattern(re), "matcher", [Val::Str(s)]) => {
            Some(Ok(obj(Obj::Matcher(RefCell::new(Matcher {
                pattern: re.clone(),
                text: s.clone(),
                from: 0,
                groups: None,
            })))))
        }
        (Obj::Pattern(_), "matcher", [Val::Null]) => Some(Err(Fault::npe("matcher(null)"))),
        (Obj::Matcher(m), "matches", []) => Some(m.borrow_mut().run(true).map(Val::Bool)),
        (Obj::Matcher(m), "find", []) => Some(m.borrow_mut().run(false).map(Val::Bool)),
        (Obj::Matcher(m), "group", []) => Some(m.borrow().group(&Val::Int(0))),
        (Obj::Matcher(m), "group", [k]) => Some(m.borrow().group(k)),
        (Obj::Matcher(m), "groupCount", []) => {
            Some(Ok(Val::Int(m.borrow().pattern.group_count() as i64)))
        }
        (Obj::Exception { message, .. }, "getMessage", []) => Some(Ok(Val::Str(message.clone()))),
        (Obj::Exception { .. }, "toString", []) => Some(Ok(Val::Str(text(&Val::Obj(o.clone()))))),
        _ => None,
    }
}
