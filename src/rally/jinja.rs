//! What Rally's Jinja2 gives a track beyond minijinja's own: the `rally` (OSB: `benchmark`)
//! helpers object, `now`, `days_ago`, `joiner()`, and the Python methods tracks call on
//! values (`dict.copy()` and `.update()`, `.items()`, `.keys()`, `.get()`, string methods).
//! A dict made by `.copy()` is mutable, so `{% set _ = d.update({...}) %}` works as in Python.

use minijinja::value::{from_args, Enumerator, Kwargs, Object, ObjectRepr};
use minijinja::{Environment, Error, ErrorKind, State, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::{files_below, glob_match};

/// Rally's helpers: `collect(parts=GLOB)` renders each matching file (sorted) and joins them
/// with commas; `exists_set_param(name, value, default_value=None, comma=True)` writes
/// `, "name": value` when the value (or a default) is defined.
#[derive(Debug)]
struct RallyHelpers {
    root: PathBuf,
}

impl Object for RallyHelpers {
    fn call_method(
        self: &std::sync::Arc<Self>,
        state: &mut minijinja::State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, minijinja::Error> {
        match method {
            "collect" => {
                let (positional, kwargs): (Option<String>, Kwargs) = from_args(args)?;
                let parts = match positional {
                    Some(p) => p,
                    None => kwargs.get::<String>("parts")?,
                };
                kwargs.assert_all_used()?;
                if parts.split('/').any(|c| c == "..") {
                    // OSB's workloads include their repository's common_operations this way.
                    return Err(minijinja::Error::new(
                        minijinja::ErrorKind::InvalidOperation,
                        format!("collect(parts=\"{parts}\") reaches outside the track directory; runner keeps a track's templates inside it (OpenSearch Benchmark workloads that include the workloads repository's common_operations do not load)"),
                    ));
                }
                let mut files: Vec<String> = files_below(&self.root)
                    .into_iter()
                    .filter(|f| glob_match(&parts, f))
                    .collect();
                files.sort();
                let mut out = Vec::with_capacity(files.len());
                for f in &files {
                    out.push(state.get_template(f)?.render(())?);
                }
                Ok(Value::from_safe_string(out.join(",\n")))
            }
            "exists_set_param" => {
                // Called directly (not through the macro), Rally's tracks pass keywords.
                let (name, value, default, comma, kwargs): (
                    String,
                    Option<Value>,
                    Option<Value>,
                    Option<bool>,
                    Kwargs,
                ) = from_args(args)?;
                let default = match kwargs.get::<Option<Value>>("default_value")? {
                    Some(d) => Some(d),
                    None => default,
                };
                let comma = match kwargs.get::<Option<bool>>("comma")? {
                    Some(c) => Some(c),
                    None => comma,
                };
                kwargs.assert_all_used()?;
                let value = value.filter(|v| !v.is_undefined());
                let default = default.filter(|v| !v.is_undefined() && !v.is_none());
                let chosen = match (value, default) {
                    (Some(v), _) => v,
                    (None, Some(d)) => d,
                    (None, None) => return Ok(Value::from_safe_string(String::new())),
                };
                let json = serde_json::to_string(&chosen).map_err(|e| {
                    minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, e.to_string())
                })?;
                let sep = if comma.unwrap_or(true) { ", " } else { "" };
                Ok(Value::from_safe_string(format!(
                    "{sep}{}: {json}",
                    serde_json::Value::String(name)
                )))
            }
            _ => Err(minijinja::Error::new(
                minijinja::ErrorKind::UnknownMethod,
                format!("rally.helpers has no `{method}` (it has collect and exists_set_param)"),
            )),
        }
    }
}

pub(super) fn add_rally_globals(env: &mut Environment<'static>, dir: &Path) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    env.add_global("now", now);
    let helpers = Value::from_object(RallyHelpers {
        root: dir.to_path_buf(),
    });
    // OSB's parts call its helpers `benchmark`.
    env.add_global("rally", helpers.clone());
    env.add_global("benchmark", helpers);
    env.add_filter("days_ago", days_ago);
    env.add_function("days_ago", days_ago);
    env.add_filter("get_start_date", get_start_date);
    env.add_filter("get_end_date", get_end_date);
    env.add_filter("version_between", version_between);
    env.add_function("joiner", |sep: Option<String>| {
        Value::from_object(Joiner {
            sep: sep.unwrap_or_else(|| ", ".into()),
            used: AtomicBool::new(false),
        })
    });
    env.set_unknown_method_callback(python_method);
}

/// OSB's `version_between(version, from, to)`: whether the dotted version lies in [from, to],
/// compared number by number (a part that is not a number is an error, as in OSB).
fn version_between(version: &str, from: &str, to: &str) -> Result<bool, Error> {
    let parts = |v: &str| -> Result<Vec<u64>, Error> {
        v.split('.')
            .map(|p| {
                p.trim().parse::<u64>().map_err(|_| {
                    Error::new(
                        ErrorKind::InvalidOperation,
                        format!("version_between: `{v}` is not a dotted version of numbers"),
                    )
                })
            })
            .collect()
    };
    let v = parts(version)?;
    Ok(parts(from)? <= v && v <= parts(to)?)
}

/// A date as Rally's filters take it: seconds since the epoch, or a string in `format`
/// (strftime's syntax), UTC unless the format gives a zone.
fn to_datetime(
    v: &Value,
    format: &str,
    filter: &str,
) -> Result<chrono::DateTime<chrono::Utc>, Error> {
    let bad = |m: String| Error::new(ErrorKind::InvalidOperation, format!("{filter}: {m}"));
    if let Some(s) = v.as_str() {
        if let Ok(t) = chrono::DateTime::parse_from_str(s, format) {
            return Ok(t.with_timezone(&chrono::Utc));
        }
        if let Ok(t) = chrono::NaiveDateTime::parse_from_str(s, format) {
            return Ok(t.and_utc());
        }
        return chrono::NaiveDate::parse_from_str(s, format)
            .map_err(|e| {
                bad(format!(
                    "`{s}` does not match the date format `{format}`: {e}"
                ))
            })
            .map(|d| d.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc());
    }
    let secs = f64::try_from(v.clone()).map_err(|_| {
        bad(format!(
            "`{v}` is neither a date nor seconds since the epoch"
        ))
    })?;
    chrono::DateTime::from_timestamp_millis((secs * 1000.0) as i64)
        .ok_or_else(|| bad(format!("{secs} seconds is out of range")))
}

/// Rally's `days_ago(start, end, date_format="%d-%m-%Y")`: whole days from start to end.
fn days_ago(start: Value, end: Value, format: Option<String>) -> Result<i64, Error> {
    let format = format.as_deref().unwrap_or("%d-%m-%Y");
    let (s, e) = (
        to_datetime(&start, format, "days_ago")?,
        to_datetime(&end, format, "days_ago")?,
    );
    // Python's timedelta.days rounds toward minus infinity.
    Ok((e - s).num_seconds().div_euclid(86_400))
}

/// Rally's `get_start_date(date, date_format="%Y-%m-%d")`: the date, formatted.
fn get_start_date(date: Value, format: Option<String>) -> Result<String, Error> {
    let format = format.as_deref().unwrap_or("%Y-%m-%d");
    strftime(to_datetime(&date, "%Y-%m-%d", "get_start_date")?, format)
}

/// Formats without chrono's panic on a bad format string.
fn strftime(t: chrono::DateTime<chrono::Utc>, format: &str) -> Result<String, Error> {
    use std::fmt::Write;
    let mut out = String::new();
    write!(out, "{}", t.format(format)).map_err(|_| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("`{format}` is not a date format (strftime's syntax)"),
        )
    })?;
    Ok(out)
}

/// Rally's `get_end_date(date, duration_days=1, date_format="%Y-%m-%d")`.
fn get_end_date(date: Value, days: Option<i64>, format: Option<String>) -> Result<String, Error> {
    let format = format.as_deref().unwrap_or("%Y-%m-%d");
    let start = to_datetime(&date, "%Y-%m-%d", "get_end_date")?;
    let end = start
        .checked_add_signed(chrono::Duration::days(days.unwrap_or(1)))
        .ok_or_else(|| Error::new(ErrorKind::InvalidOperation, "get_end_date: out of range"))?;
    strftime(end, format)
}

/// Jinja2's `joiner(sep)`: the empty string the first time it is called, `sep` after.
#[derive(Debug)]
struct Joiner {
    sep: String,
    used: AtomicBool,
}

impl Object for Joiner {
    fn call(self: &Arc<Self>, _: &mut State<'_, '_>, args: &[Value]) -> Result<Value, Error> {
        let () = from_args(args)?;
        Ok(Value::from(if self.used.swap(true, Ordering::Relaxed) {
            self.sep.as_str()
        } else {
            ""
        }))
    }
}

/// A Python dict that templates may change in place (`.update()`, `.pop()`), in insertion
/// order, as `dict.copy()` gives one.
#[derive(Debug, Default)]
struct PyDict {
    entries: Mutex<Vec<(Value, Value)>>,
}

impl PyDict {
    fn from_entries(entries: Vec<(Value, Value)>) -> Value {
        Value::from_object(PyDict {
            entries: Mutex::new(entries),
        })
    }

    fn entries(&self) -> Vec<(Value, Value)> {
        self.entries.lock().map(|e| e.clone()).unwrap_or_default()
    }
}

impl Object for PyDict {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.entries()
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.entries().into_iter().map(|(k, _)| k).collect())
    }

    fn call_method(
        self: &Arc<Self>,
        state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        match method {
            "update" => {
                let (other,): (Value,) = from_args(args)?;
                let mut entries = self
                    .entries
                    .lock()
                    .map_err(|_| Error::new(ErrorKind::InvalidOperation, "dict poisoned"))?;
                for (k, v) in map_entries(&other)? {
                    match entries.iter_mut().find(|(key, _)| *key == k) {
                        Some(slot) => slot.1 = v,
                        None => entries.push((k, v)),
                    }
                }
                Ok(Value::from(()))
            }
            "pop" => {
                let (key, default): (Value, Option<Value>) = from_args(args)?;
                let mut entries = self
                    .entries
                    .lock()
                    .map_err(|_| Error::new(ErrorKind::InvalidOperation, "dict poisoned"))?;
                match entries.iter().position(|(k, _)| *k == key) {
                    Some(i) => Ok(entries.remove(i).1),
                    None => default.ok_or_else(|| {
                        Error::new(ErrorKind::InvalidOperation, format!("KeyError: {key}"))
                    }),
                }
            }
            _ => python_method(state, &Value::from_dyn_object(self.clone()), method, args),
        }
    }
}

/// The entries of a map value (a plain map or a `PyDict`), in order.
fn map_entries(v: &Value) -> Result<Vec<(Value, Value)>, Error> {
    if let Some(d) = v.downcast_object_ref::<PyDict>() {
        return Ok(d.entries());
    }
    if v.kind() != minijinja::value::ValueKind::Map {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("expected a dict, got {}", v.kind()),
        ));
    }
    v.try_iter()?
        .map(|k| Ok((k.clone(), v.get_item(&k)?)))
        .collect()
}

/// Python's methods on dicts and strings, for values minijinja has no method of its own for.
fn python_method(
    _: &mut State<'_, '_>,
    value: &Value,
    method: &str,
    args: &[Value],
) -> Result<Value, Error> {
    use minijinja::value::ValueKind;
    match (value.kind(), method) {
        (ValueKind::Map, "copy") => {
            let () = from_args(args)?;
            Ok(PyDict::from_entries(map_entries(value)?))
        }
        (ValueKind::Map, "items") => {
            let () = from_args(args)?;
            Ok(Value::from(
                map_entries(value)?
                    .into_iter()
                    .map(|(k, v)| Value::from(vec![k, v]))
                    .collect::<Vec<_>>(),
            ))
        }
        (ValueKind::Map, "keys") => {
            let () = from_args(args)?;
            Ok(Value::from(
                map_entries(value)?
                    .into_iter()
                    .map(|(k, _)| k)
                    .collect::<Vec<_>>(),
            ))
        }
        (ValueKind::Map, "values") => {
            let () = from_args(args)?;
            Ok(Value::from(
                map_entries(value)?
                    .into_iter()
                    .map(|(_, v)| v)
                    .collect::<Vec<_>>(),
            ))
        }
        (ValueKind::Map, "get") => {
            let (key, default): (Value, Option<Value>) = from_args(args)?;
            let found = map_entries(value)?.into_iter().find(|(k, _)| *k == key);
            Ok(found
                .map(|(_, v)| v)
                .or(default)
                .unwrap_or(Value::from(())))
        }
        (ValueKind::Map, "update") => Err(Error::new(
            ErrorKind::InvalidOperation,
            "update() on a dict written in the template: runner's dicts are immutable unless made by .copy() (write `{% set d = d.copy() %}` first)",
        )),
        (ValueKind::String, _) => string_method(value.as_str().unwrap_or(""), method, args),
        _ => Err(Error::new(
            ErrorKind::UnknownMethod,
            format!("{} has no method named {method}", value.kind()),
        )),
    }
}

fn string_method(s: &str, method: &str, args: &[Value]) -> Result<Value, Error> {
    Ok(match method {
        "lower" => Value::from(s.to_lowercase()),
        "upper" => Value::from(s.to_uppercase()),
        "strip" => Value::from(s.trim()),
        "startswith" => {
            let (p,): (String,) = from_args(args)?;
            Value::from(s.starts_with(&p))
        }
        "endswith" => {
            let (p,): (String,) = from_args(args)?;
            Value::from(s.ends_with(&p))
        }
        "replace" => {
            let (from, to): (String, String) = from_args(args)?;
            Value::from(s.replace(&from, &to))
        }
        "split" => {
            let (sep,): (Option<String>,) = from_args(args)?;
            let parts: Vec<Value> = match sep {
                Some(sep) => s.split(sep.as_str()).map(Value::from).collect(),
                None => s.split_whitespace().map(Value::from).collect(),
            };
            Value::from(parts)
        }
        _ => {
            return Err(Error::new(
                ErrorKind::UnknownMethod,
                format!("string has no method named {method}"),
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(src: &str) -> Result<String, Error> {
        let mut env = Environment::new();
        add_rally_globals(&mut env, Path::new("."));
        env.render_str(src, ())
    }

    #[test]
    fn joiner_copy_update_and_python_methods() {
        let out = render(
            r#"{% set c = joiner(",") %}[{% for i in [1, 2, 3] %}{{ c() }}{{ i }}{% endfor %}]
{% set base = {"a": 1, "b": 2} %}{% set d = base.copy() %}{% set _ = d.update({"b": 3, "c": 4}) %}{{ d | tojson }} {{ base | tojson }}
{{ d.get("z", 9) }} {{ base.keys() | list }} {{ "Ab".lower() }} {{ "a-b".split("-") }}"#,
        )
        .unwrap();
        assert_eq!(
            out,
            "[1,2,3]\n{\"a\": 1, \"b\": 3, \"c\": 4} {\"a\": 1, \"b\": 2}\n9 ['a', 'b'] ab ['a', 'b']"
        );
        let e = render(r#"{% set d = {"a": 1} %}{% set _ = d.update({"b": 2}) %}"#).unwrap_err();
        assert!(e.to_string().contains(".copy()"), "{e}");
    }

    #[test]
    fn dates_as_rally_reads_them() {
        // Rally's days_ago defaults to day-month-year.
        assert_eq!(
            render(r#"{{ "15-05-1998" | days_ago("17-05-1998") }}"#).unwrap(),
            "2"
        );
        assert_eq!(
            render(r#"{{ "1998-05-15" | days_ago("1998-05-14", "%Y-%m-%d") }}"#).unwrap(),
            "-1"
        );
        assert_eq!(
            render(r#"{{ 86400.0 | get_end_date(2) }} {{ 0.0 | get_start_date("%d/%m/%Y") }}"#)
                .unwrap(),
            "1970-01-04 01/01/1970"
        );
        let e = render(r#"{{ "1998-05-15" | days_ago("1998-05-16") }}"#).unwrap_err();
        assert!(e.to_string().contains("%d-%m-%Y"), "{e}");
        let e = render(r#"{{ 0.0 | get_start_date("%Q") }}"#).unwrap_err();
        assert!(e.to_string().contains("not a date format"), "{e}");
    }

    #[test]
    fn osb_version_checks() {
        let src = r#"{% if distribution_version is not defined %}{% set distribution_version = "3.3.0" %}{% endif %}{{ distribution_version | version_between("3.0.0", "3.3.0") }} {{ "2.19.1" | version_between("1.0.0", "2.19.0") }} {{ distribution_version.split('.') | map('int') | list >= "3.3.0".split('.') | map('int') | list }}"#;
        assert_eq!(render(src).unwrap(), "True False True");
        let e = render(r#"{{ "3.x" | version_between("1.0.0", "4.0.0") }}"#).unwrap_err();
        assert!(e.to_string().contains("not a dotted version"), "{e}");
    }
}
