//! Running a processor on one document.

use crate::ingest::doc::kind;
use crate::ingest::doc::scalar_text;
use crate::ingest::doc::IngestDoc;
use crate::ingest::processors::ConvertTo;
use crate::ingest::processors::Processor;
use crate::ingest::processors::SetValue;
use crate::ingest::processors::TextOp;
use crate::mapping::dates::DateFormats;
use serde_json::Value;

/// What running a processor did to the document's course.
pub enum Flow {
    Next,
    Drop,
    /// Run the named pipeline here.
    Call(String, bool),
}

impl Processor {
    pub fn run(&self, doc: &mut IngestDoc) -> Result<Flow, String> {
        match self {
            Processor::Set {
                field,
                value,
                override_existing,
                ignore_empty_value,
            } => run_set(doc, field, value, override_existing, ignore_empty_value)?,
            Processor::Remove {
                fields,
                ignore_missing,
            } => run_remove(doc, fields, ignore_missing)?,
            Processor::Rename {
                field,
                target,
                ignore_missing,
            } => run_rename(doc, field, target, ignore_missing)?,
            Processor::Append {
                field,
                values,
                allow_duplicates,
            } => run_append(doc, field, values, allow_duplicates)?,
            Processor::Text {
                op,
                field,
                target,
                ignore_missing,
            } => run_text(doc, op, field, target, ignore_missing)?,
            Processor::Convert {
                field,
                target,
                to,
                ignore_missing,
            } => run_convert(doc, field, target, to, ignore_missing)?,
            Processor::Date {
                field,
                target,
                formats,
                timezone,
            } => run_date(doc, field, target, formats, timezone.as_deref())?,
            Processor::Fingerprint(f) => f.run(doc)?,
            Processor::Script(script) => {
                let (_, ctx) = script.run_ctx(doc.ctx(), doc.now_ms())?;
                doc.set_ctx(ctx)?;
            }
            Processor::Split {
                field,
                target,
                separator,
                ignore_missing,
            } => run_split(doc, field, target, separator, ignore_missing)?,
            Processor::Join {
                field,
                target,
                separator,
            } => run_join(doc, field, target, separator)?,
            Processor::Gsub {
                field,
                target,
                pattern,
                replacement,
                ignore_missing,
            } => run_gsub(doc, field, target, pattern, replacement, ignore_missing)?,
            Processor::Json {
                field,
                target,
                add_to_root,
            } => run_json(doc, field, target, add_to_root)?,
            Processor::Drop => return Ok(Flow::Drop),
            Processor::Fail(message) => return Err(doc.render(message)),
            Processor::Pipeline {
                name,
                ignore_missing_pipeline,
            } => return Ok(Flow::Call(doc.render(name), *ignore_missing_pipeline)),
            Processor::Grok(g) => g.run(doc)?,
            Processor::Kv(kv) => kv.run(doc)?,
            Processor::UriParts(u) => u.run(doc)?,
            Processor::RegisteredDomain(r) => r.run(doc)?,
            Processor::GeoIpUnavailable(database) => {
                let tag = Value::from(format!("_geoip_database_unavailable_{database}"));
                run_append(doc, "tags", std::slice::from_ref(&tag), &true)?
            }
            Processor::Foreach(_) => {
                return Err("a foreach runs from its pipeline (this is the engine's bug)".into())
            }
            Processor::UserAgent(u) => u.run(doc)?,
            Processor::NoActiveUser => {
                return Err("Security (authentication) is not enabled on this cluster, so there is no active user - the [set_security_user] processor cannot be used without security".into())
            }
            Processor::Reroute(destination) => {
                doc.index = doc.render(destination);
            }
        }
        Ok(Flow::Next)
    }
}

/// The field's value; None (skip) when it is missing and `ignore_missing` says so.
fn present(doc: &IngestDoc, field: &str, ignore_missing: bool) -> Result<Option<Value>, String> {
    match doc.get(field) {
        Some(v) if !v.is_null() => Ok(Some(v.into_owned())),
        _ if ignore_missing => Ok(None),
        _ => Err(format!(
            "field [{field}] not present as part of path [{field}]"
        )),
    }
}

/// A string processor over a string or a list of strings.
fn map_strings(v: &Value, field: &str, f: impl Fn(&str) -> String) -> Result<Value, String> {
    match v {
        Value::String(s) => Ok(Value::String(f(s))),
        Value::Array(a) => a
            .iter()
            .map(|x| match x {
                Value::String(s) => Ok(Value::String(f(s))),
                other => Err(format!(
                    "field [{field}] holds {}, not a string",
                    kind(other)
                )),
            })
            .collect::<Result<_, _>>()
            .map(Value::Array),
        other => Err(format!(
            "field [{field}] of type [{}] cannot be cast to a string",
            kind(other)
        )),
    }
}

fn convert(v: &Value, to: ConvertTo) -> Result<Value, String> {
    let text = scalar_text(v).ok_or_else(|| format!("cannot convert {} [{v}]", kind(v)))?;
    let t = text.trim();
    let number = |t: &str| -> Result<f64, String> {
        t.parse::<f64>()
            .map_err(|_| format!("unable to convert [{t}] to a number"))
    };
    Ok(match to {
        ConvertTo::Integer | ConvertTo::Long => {
            let n: i64 = match t.parse() {
                Ok(n) => n,
                Err(_) if t.starts_with("0x") || t.starts_with("0X") => {
                    i64::from_str_radix(&t[2..], 16)
                        .map_err(|_| format!("unable to convert [{t}] to an integer"))?
                }
                Err(_) => return Err(format!("unable to convert [{t}] to an integer")),
            };
            if matches!(to, ConvertTo::Integer) && i32::try_from(n).is_err() {
                return Err(format!(
                    "unable to convert [{t}] to an integer: out of range"
                ));
            }
            Value::from(n)
        }
        ConvertTo::Float | ConvertTo::Double => serde_json::Number::from_f64(number(t)?)
            .map(Value::Number)
            .ok_or_else(|| format!("unable to convert [{t}] to a finite number"))?,
        ConvertTo::Boolean => match t.to_ascii_lowercase().as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => {
                return Err(format!(
                    "[{t}] is not a boolean value, cannot convert to boolean"
                ))
            }
        },
        ConvertTo::String => Value::String(text),
        // The value stays as it is when it is an IPv4 or IPv6 address (an IPv6 scope,
        // `%eth0`, allowed), as Elasticsearch checks it.
        ConvertTo::Ip => {
            let bare = match text.split_once('%') {
                Some((addr, scope)) if addr.contains(':') && !scope.is_empty() => addr,
                _ => text.as_str(),
            };
            if bare.parse::<std::net::IpAddr>().is_err() {
                return Err(format!("[{text}] is not a valid ipv4/ipv6 address"));
            }
            v.clone()
        }
        ConvertTo::Auto => match v {
            Value::String(_) => {
                if let Ok(n) = t.parse::<i64>() {
                    Value::from(n)
                } else if let Some(n) = t.parse::<f64>().ok().and_then(serde_json::Number::from_f64)
                {
                    Value::Number(n)
                } else if t == "true" || t == "false" {
                    Value::Bool(t == "true")
                } else {
                    v.clone()
                }
            }
            other => other.clone(),
        },
    })
}

/// `set`: a value, a template or a copy of another field.
fn run_set(
    doc: &mut IngestDoc,
    field: &str,
    value: &SetValue,
    override_existing: &bool,
    ignore_empty_value: &bool,
) -> Result<(), String> {
    if !override_existing && doc.get(field).is_some_and(|v| !v.is_null()) {
        return Ok(());
    }
    let v = match value {
        SetValue::Template(t) => Value::String(doc.render(t)),
        SetValue::Value(v) => v.clone(),
        SetValue::CopyFrom(from) => match doc.get(from) {
            Some(v) => v.into_owned(),
            None => {
                return Err(format!(
                    "field [{from}] not present as part of path [{from}]"
                ))
            }
        },
    };
    if *ignore_empty_value && (v.is_null() || v == "") {
        return Ok(());
    }
    doc.set(field, v)?;
    Ok(())
}

/// `remove`: fields.
fn run_remove(doc: &mut IngestDoc, fields: &[String], ignore_missing: &bool) -> Result<(), String> {
    for f in fields {
        if doc.remove(f).is_none() && !ignore_missing {
            return Err(format!("field [{f}] not present as part of path [{f}]"));
        }
    }
    Ok(())
}

/// `rename`: a field to another name.
fn run_rename(
    doc: &mut IngestDoc,
    field: &str,
    target: &str,
    ignore_missing: &bool,
) -> Result<(), String> {
    if doc.has(target) {
        return Err(format!("field [{target}] already exists"));
    }
    match doc.remove(field) {
        Some(v) => doc.set(target, v)?,
        None if *ignore_missing => {}
        None => return Err(format!("field [{field}] doesn't exist")),
    }
    Ok(())
}

/// `append`: values to a field, made a list.
fn run_append(
    doc: &mut IngestDoc,
    field: &str,
    values: &[Value],
    allow_duplicates: &bool,
) -> Result<(), String> {
    let rendered: Vec<Value> = values
        .iter()
        .map(|v| match v {
            Value::String(s) if s.contains("{{") => Value::String(doc.render(s)),
            v => v.clone(),
        })
        .collect();
    let mut list = match doc.remove(field) {
        None => Vec::new(),
        Some(Value::Array(a)) => a,
        Some(v) => vec![v],
    };
    for v in rendered {
        if *allow_duplicates || !list.contains(&v) {
            list.push(v);
        }
    }
    doc.set(field, Value::Array(list))?;
    Ok(())
}

/// `lowercase`, `uppercase`, `trim`.
fn run_text(
    doc: &mut IngestDoc,
    op: &TextOp,
    field: &str,
    target: &str,
    ignore_missing: &bool,
) -> Result<(), String> {
    let Some(v) = present(doc, field, *ignore_missing)? else {
        return Ok(());
    };
    let out = map_strings(&v, field, |s| match op {
        TextOp::Lower => s.to_lowercase(),
        TextOp::Upper => s.to_uppercase(),
        TextOp::Trim => s.trim().to_string(),
    })?;
    doc.set(target, out)?;
    Ok(())
}

/// `convert`: a field to another type.
fn run_convert(
    doc: &mut IngestDoc,
    field: &str,
    target: &str,
    to: &ConvertTo,
    ignore_missing: &bool,
) -> Result<(), String> {
    let Some(v) = present(doc, field, *ignore_missing)? else {
        return Ok(());
    };
    let out = match v {
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|x| convert(x, *to))
                .collect::<Result<_, _>>()?,
        ),
        one => convert(&one, *to)?,
    };
    doc.set(target, out)?;
    Ok(())
}

/// `date`: a field parsed by its formats into a timestamp.
fn run_date(
    doc: &mut IngestDoc,
    field: &str,
    target: &str,
    formats: &[DateFormats],
    timezone: Option<&str>,
) -> Result<(), String> {
    let Some(v) = doc.get(field).map(|v| v.into_owned()) else {
        return Err(format!(
            "field [{field}] not present as part of path [{field}]"
        ));
    };
    let zone = match timezone {
        None => crate::zone::Zone::utc(),
        Some(t) => crate::zone::Zone::parse(doc.render(t).trim())?,
    };
    let at = formats
        .iter()
        .find_map(|f| f.read(&v).ok())
        .ok_or_else(|| format!("unable to parse date [{v}]"))?;
    let mut millis = at.into_timestamp_millis();
    // A date with no offset of its own is a time on the zone's clock.
    let text = scalar_text(&v).unwrap_or_default();
    let instant = v.is_number()
        || text.trim().parse::<f64>().is_ok()
        || crate::mapping::datemath::names_its_offset(&text);
    if !instant {
        millis = zone.from_local(millis);
    }
    chrono::DateTime::from_timestamp_millis(millis)
        .ok_or_else(|| format!("date [{v}] is out of range"))?;
    // Written in the zone, with its offset (`Z` in UTC), as Elasticsearch's default format.
    doc.set(target, Value::String(zone.format(millis)))?;
    Ok(())
}

/// `split`: a string into a list.
fn run_split(
    doc: &mut IngestDoc,
    field: &str,
    target: &str,
    separator: &regex::Regex,
    ignore_missing: &bool,
) -> Result<(), String> {
    let Some(v) = present(doc, field, *ignore_missing)? else {
        return Ok(());
    };
    let Value::String(s) = v else {
        return Err(format!(
            "field [{field}] of type [{}] cannot be cast to a string",
            kind(&v)
        ));
    };
    let mut parts: Vec<Value> = separator
        .split(&s)
        .map(|p| Value::String(p.to_string()))
        .collect();
    // Java's String.split drops trailing empty strings.
    while parts.last().is_some_and(|p| p == "") {
        parts.pop();
    }
    doc.set(target, Value::Array(parts))?;
    Ok(())
}

/// `join`: a list into a string.
fn run_join(doc: &mut IngestDoc, field: &str, target: &str, separator: &str) -> Result<(), String> {
    let Some(Value::Array(a)) = doc.get(field).map(|v| v.into_owned()) else {
        return Err(format!("field [{field}] is not a list"));
    };
    let texts: Vec<String> = a
        .iter()
        .map(|v| scalar_text(v).unwrap_or_else(|| v.to_string()))
        .collect();
    doc.set(target, Value::String(texts.join(separator)))?;
    Ok(())
}

/// `gsub`: a pattern replaced.
fn run_gsub(
    doc: &mut IngestDoc,
    field: &str,
    target: &str,
    pattern: &regex::Regex,
    replacement: &str,
    ignore_missing: &bool,
) -> Result<(), String> {
    let Some(v) = present(doc, field, *ignore_missing)? else {
        return Ok(());
    };
    let out = map_strings(&v, field, |s| {
        pattern.replace_all(s, replacement).into_owned()
    })?;
    doc.set(target, out)?;
    Ok(())
}

/// `json`: a string parsed as JSON.
fn run_json(
    doc: &mut IngestDoc,
    field: &str,
    target: &Option<String>,
    add_to_root: &bool,
) -> Result<(), String> {
    let Some(v) = doc.get(field).map(|v| v.into_owned()) else {
        return Err(format!(
            "field [{field}] not present as part of path [{field}]"
        ));
    };
    let parsed: Value = match &v {
        Value::String(s) => {
            serde_json::from_str(s).map_err(|e| format!("field [{field}] is not JSON: {e}"))?
        }
        other => other.clone(),
    };
    match (add_to_root, parsed) {
        (true, Value::Object(m)) => doc.source.extend(m),
        (true, other) => {
            return Err(format!(
                "cannot add non-map fields to root of document (field [{field}] holds {})",
                kind(&other)
            ))
        }
        (false, p) => doc.set(target.as_deref().unwrap_or(field), p)?,
    }
    Ok(())
}
