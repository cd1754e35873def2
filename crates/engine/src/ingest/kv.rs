//! The `kv` processor: a string of `key=value` pairs into fields, as Elasticsearch's
//! KeyValueProcessor splits it (Java's `Pattern.split`: trailing empty parts dropped).

use crate::ingest::doc::IngestDoc;
use crate::ingest::processors::Options;
use serde_json::Value;

pub struct Kv {
    field: String,
    field_split: fancy_regex::Regex,
    value_split: fancy_regex::Regex,
    target: Option<String>,
    include: Option<Vec<String>>,
    exclude: Vec<String>,
    prefix: String,
    trim_key: Option<String>,
    trim_value: Option<String>,
    strip_brackets: bool,
    ignore_missing: bool,
}

/// Java's patterns, lookarounds included (the system integration splits on `(?<=") `).
fn regex(pattern: &str, key: &str) -> Result<fancy_regex::Regex, String> {
    fancy_regex::RegexBuilder::new(pattern)
        .backtrack_limit(1_000_000)
        .build()
        .map_err(|e| {
            format!("[{key}] of processor [kv] is not a regular expression the engine reads: {e}")
        })
}

fn list(o: &mut Options, key: &str) -> Result<Option<Vec<String>>, String> {
    match o.take(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => a
            .into_iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or(format!("[{key}] lists strings"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(Value::String(s)) => Ok(Some(vec![s])),
        Some(other) => Err(format!("[{key}] lists strings, got {other}")),
    }
}

impl Kv {
    pub fn parse(o: &mut Options) -> Result<Kv, String> {
        Ok(Kv {
            field: o.required("field")?,
            field_split: regex(&o.required("field_split")?, "field_split")?,
            value_split: regex(&o.required("value_split")?, "value_split")?,
            target: o.string("target_field")?,
            include: list(o, "include_keys")?,
            exclude: list(o, "exclude_keys")?.unwrap_or_default(),
            prefix: o.string("prefix")?.unwrap_or_default(),
            trim_key: o.string("trim_key")?,
            trim_value: o.string("trim_value")?,
            strip_brackets: o.flag("strip_brackets", false)?,
            ignore_missing: o.flag("ignore_missing", false)?,
        })
    }

    pub fn run(&self, doc: &mut IngestDoc) -> Result<(), String> {
        let Some(text) = doc.text_of(&self.field, self.ignore_missing)? else {
            return Ok(());
        };
        for pair in java_split(&self.field_split, &text, usize::MAX) {
            let parts = java_split(&self.value_split, pair, 2);
            let [key, value] = parts[..] else {
                return Err(format!(
                    "field [{}] does not contain value_split [{}]",
                    self.field,
                    self.value_split.as_str()
                ));
            };
            let key = format!("{}{}", self.prefix, trim(key, self.trim_key.as_deref()));
            if self.include.as_ref().is_some_and(|i| !i.contains(&key))
                || self.exclude.contains(&key)
            {
                continue;
            }
            let mut value = trim(value, self.trim_value.as_deref());
            if self.strip_brackets {
                value = strip_brackets(value);
            }
            let path = match &self.target {
                Some(t) => format!("{t}.{key}"),
                None => key,
            };
            append(doc, &path, Value::from(value))?;
        }
        Ok(())
    }
}

/// Adds a value to a field: set when absent, else made a list (as `appendFieldValue`).
fn append(doc: &mut IngestDoc, path: &str, value: Value) -> Result<(), String> {
    let next = match doc.remove(path) {
        None => value,
        Some(Value::Array(mut a)) => {
            a.push(value);
            Value::Array(a)
        }
        Some(one) => Value::Array(vec![one, value]),
    };
    doc.set(path, next)
}

/// Java's `Pattern.split(text, limit)`: at most `limit` parts, trailing empty parts dropped
/// when unlimited, no empty leading part for a match of nothing at the start.
fn java_split<'t>(re: &fancy_regex::Regex, text: &'t str, limit: usize) -> Vec<&'t str> {
    let mut parts = Vec::new();
    let mut start = 0;
    for m in re.find_iter(text).map_while(Result::ok) {
        if parts.len() + 1 >= limit {
            break;
        }
        if m.end() == 0 {
            continue;
        }
        parts.push(&text[start..m.start()]);
        start = m.end();
    }
    parts.push(&text[start..]);
    if limit == usize::MAX {
        while parts.len() > 1 && parts.last() == Some(&"") {
            parts.pop();
        }
    }
    parts
}

/// Trims the characters of `chars` from both ends.
fn trim<'t>(text: &'t str, chars: Option<&str>) -> &'t str {
    match chars {
        Some(c) => text.trim_matches(|x| c.contains(x)),
        None => text,
    }
}

/// A bracket or quote opening the value and one closing it taken off, each on its own:
/// `(`, `[`, `<`, `"`, `'` and their closing ones.
fn strip_brackets(v: &str) -> &str {
    let v = v.strip_prefix(['(', '[', '<', '"', '\'']).unwrap_or(v);
    v.strip_suffix([')', ']', '>', '"', '\'']).unwrap_or(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::doc::doc;
    use serde_json::json;

    fn kv(config: Value, text: &str) -> Result<Value, String> {
        let mut o = Options::new("kv", config.as_object().unwrap().clone());
        let p = Kv::parse(&mut o)?;
        o.finish()?;
        let mut d = doc(json!({"m": text}));
        p.run(&mut d)?;
        Ok(Value::Object(d.source))
    }

    #[test]
    fn pairs_become_fields_as_elasticsearch_splits_them() {
        // The system integration's sshd/sudo style: brackets and quotes stripped, a prefix.
        let out = kv(
            json!({"field": "m", "field_split": " ", "value_split": "=", "target_field": "k",
                   "strip_brackets": true, "prefix": "p_", "trim_key": " ", "exclude_keys": ["p_skip"]}),
            "a=1 b=\"two\" c=[3] c=4 skip=x ",
        )
        .unwrap();
        assert_eq!(
            out["k"],
            json!({"p_a": "1", "p_b": "two", "p_c": ["3", "4"]})
        );
        let e = kv(
            json!({"field": "m", "field_split": " ", "value_split": "="}),
            "a=1 lonely",
        )
        .unwrap_err();
        assert!(e.contains("does not contain value_split"), "{e}");
        let only = kv(
            json!({"field": "m", "field_split": "&", "value_split": "=", "include_keys": ["x"]}),
            "x=1&y=2",
        )
        .unwrap();
        assert_eq!(only, json!({"m": "x=1&y=2", "x": "1"}));
        // The value keeps everything after the first separator.
        assert_eq!(
            kv(
                json!({"field": "m", "field_split": " ", "value_split": "="}),
                "u=a=b"
            )
            .unwrap()["u"],
            "a=b"
        );
    }
}
