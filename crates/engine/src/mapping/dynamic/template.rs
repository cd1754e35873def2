//! `dynamic_templates`: which new fields each maps (`match_mapping_type`, `match`/`unmatch`,
//! `path_match`/`path_unmatch`, `match_pattern: regex`), and with which mapping.

use crate::mapping::dates::DateFormats;
use crate::mapping::FieldType;
use crate::mapping::UnsupportedType;
use serde_json::Value;

/// One of `dynamic_templates`: which new fields it maps, and how.
#[derive(Debug, Clone)]
pub(crate) struct Template {
    /// `string`, `long`, `double`, `boolean`, `date`, `object`; empty is any.
    mapping_types: Vec<String>,
    matches: Vec<Pattern>,
    unmatches: Vec<Pattern>,
    path_matches: Vec<Pattern>,
    path_unmatches: Vec<Pattern>,
    /// None: the template maps objects (nothing to learn here).
    pub(crate) mapping: Option<Learnable>,
}

#[derive(Debug, Clone)]
enum Pattern {
    Glob(String),
    Regex(regex::Regex),
}

impl Pattern {
    fn matches(&self, text: &str) -> bool {
        match self {
            Pattern::Glob(g) => crate::names::simple_match(g, text),
            Pattern::Regex(r) => r.is_match(text),
        }
    }
}

/// How a learned field is indexed: its type, and its multi-fields.
#[derive(Debug, Clone)]
pub(crate) struct Learnable {
    /// None: `{dynamic_type}`, the type the value is detected as.
    pub(crate) kind: Option<FieldType>,
    pub(crate) format: Option<DateFormats>,
    pub(crate) ignore_above: Option<usize>,
    pub(crate) subs: Vec<(String, FieldType, Option<usize>)>,
}

fn learnable(def: &Value, at: &str) -> Result<Learnable, UnsupportedType> {
    let refuse = |why: String| UnsupportedType {
        field: at.to_string(),
        kind: "dynamic_templates".into(),
        why: Some(why),
    };
    let kind_of = |name: &str| -> Result<Option<FieldType>, UnsupportedType> {
        if name == "{dynamic_type}" {
            return Ok(None);
        }
        match FieldType::parse(name) {
            Some(k @ (FieldType::GeoPoint | FieldType::Ip | FieldType::Range(_))) => Err(refuse(format!(
                "a `{k:?}` learned from a template is not built by the embedded engine"
            ))),
            Some(k) => Ok(Some(k)),
            None => Err(refuse(format!(
                "type `{name}` is not one the embedded engine maps dynamically (text, keyword, numbers, boolean, date, {{dynamic_type}})"
            ))),
        }
    };
    let kind = kind_of(
        def.get("type")
            .and_then(Value::as_str)
            .unwrap_or("{dynamic_type}"),
    )?;
    let format = match def.get("format").and_then(Value::as_str) {
        Some(f) => Some(DateFormats::parse(f).map_err(refuse)?),
        None => None,
    };
    let ignore_above = def
        .get("ignore_above")
        .and_then(Value::as_u64)
        .map(|n| n as usize);
    let mut subs = Vec::new();
    for (sub, d) in def
        .get("fields")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let k = kind_of(d.get("type").and_then(Value::as_str).unwrap_or("object"))?
            .ok_or_else(|| refuse(format!("multi-field `{sub}` needs a type")))?;
        let ignore = d
            .get("ignore_above")
            .and_then(Value::as_u64)
            .map(|n| n as usize);
        subs.push((sub.clone(), k, ignore));
    }
    Ok(Learnable {
        kind,
        format,
        ignore_above,
        subs,
    })
}

fn patterns(v: Option<&Value>, regex: bool, at: &str) -> Result<Vec<Pattern>, UnsupportedType> {
    let texts: Vec<&str> = match v {
        None => Vec::new(),
        Some(Value::String(s)) => vec![s],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        Some(other) => {
            return Err(UnsupportedType {
                field: at.to_string(),
                kind: "dynamic_templates".into(),
                why: Some(format!("{other} is not a pattern")),
            })
        }
    };
    texts
        .into_iter()
        .map(|t| {
            if regex {
                regex::Regex::new(t)
                    .map(Pattern::Regex)
                    .map_err(|e| UnsupportedType {
                        field: at.to_string(),
                        kind: "dynamic_templates".into(),
                        why: Some(format!("`{t}` is not a regular expression: {e}")),
                    })
            } else {
                Ok(Pattern::Glob(t.to_string()))
            }
        })
        .collect()
}

pub(crate) fn template(name: &str, def: &Value) -> Result<Template, UnsupportedType> {
    let at = format!("dynamic_templates.{name}");
    if def.get("runtime").is_some() {
        return Err(UnsupportedType {
            field: at,
            kind: "dynamic_templates".into(),
            why: Some("a template mapping runtime fields is not run by the embedded engine".into()),
        });
    }
    let regex = def.get("match_pattern").and_then(Value::as_str) == Some("regex");
    let mut mapping_types = crate::util::string_list(def.get("match_mapping_type"));
    // `*` is any type, as no list is.
    mapping_types.retain(|t| t != "*");
    let mapping = def.get("mapping").cloned().unwrap_or(Value::Null);
    let maps_objects = matches!(
        mapping.get("type").and_then(Value::as_str),
        Some("object" | "nested")
    ) || (mapping_types == ["object"]);
    Ok(Template {
        matches: patterns(def.get("match"), regex, &at)?,
        unmatches: patterns(def.get("unmatch"), regex, &at)?,
        path_matches: patterns(def.get("path_match"), false, &at)?,
        path_unmatches: patterns(def.get("path_unmatch"), false, &at)?,
        mapping_types,
        mapping: if maps_objects {
            None
        } else {
            Some(learnable(&mapping, &at)?)
        },
    })
}

impl Template {
    pub(crate) fn applies(&self, path: &str, detected: &str) -> bool {
        let leaf = path.rsplit('.').next().unwrap_or(path);
        (self.mapping_types.is_empty() || self.mapping_types.iter().any(|t| t == detected))
            && (self.matches.is_empty() || self.matches.iter().any(|p| p.matches(leaf)))
            && !self.unmatches.iter().any(|p| p.matches(leaf))
            && (self.path_matches.is_empty() || self.path_matches.iter().any(|p| p.matches(path)))
            && !self.path_unmatches.iter().any(|p| p.matches(path))
    }
}
