//! JSON-Schema validation of every loaded track against `schemas/track.schema.json`, with
//! errors turned into messages a track author can act on.

use super::error::{TrackError, TrackErrorKind};
use super::locate::Locator;
use crate::suggest::did_you_mean;
use jsonschema::error::ValidationErrorKind;
use jsonschema::ValidationError;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::OnceLock;

/// The schema as shipped; built-in tracks point editors at the same file.
pub const TRACK_SCHEMA: &str = include_str!("../../schemas/track.schema.json");

struct Compiled {
    validator: jsonschema::Validator,
    /// Every property name the schema knows, for "did you mean" suggestions.
    known_keys: Vec<String>,
}

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let schema: Value =
            serde_json::from_str(TRACK_SCHEMA).expect("shipped schema is valid JSON");
        let validator = jsonschema::validator_for(&schema).expect("shipped schema compiles");
        let mut keys = BTreeSet::new();
        collect_property_names(&schema, &mut keys);
        Compiled {
            validator,
            known_keys: keys.into_iter().collect(),
        }
    })
}

fn collect_property_names(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                out.extend(props.keys().cloned());
            }
            map.values()
                .for_each(|child| collect_property_names(child, out));
        }
        Value::Array(items) => items
            .iter()
            .for_each(|child| collect_property_names(child, out)),
        _ => {}
    }
}

/// What a key expects, for messages where the schema alone would say "not valid under oneOf".
fn expectation(key: &str) -> Option<&'static str> {
    Some(match key {
        "clients" | "iterations" => "a positive integer, or a non-empty list of them to sweep",
        "target-throughput" => {
            "a positive number of operations per second, a non-empty list of them to sweep, `max` (a capacity search, with an `slo`), or a ramp `{start, stages: [{duration, target}]}` whose durations and targets are 0 or more"
        }
        "target-interval" => {
            "a duration between operations (e.g. 10ms), or a non-empty list of them"
        }
        "time-period" => "a duration such as 30s, 500ms or 2m",
        "warmup" => {
            "an iteration count (1000), a time period (30s) or a fraction of the work (40%)"
        }
        "operation" => {
            "the name of an operation under `operations`, or an inline {name, type, params}"
        }
        "body" => "inline settings/mappings, or the name of a file beside the track",
        "trials" => "an integer from 1 to 1000",
        _ => return None,
    })
}

fn last_segment(pointer: &str) -> &str {
    pointer.rsplit('/').next().unwrap_or("")
}

/// A typo'd key is usually why a required one is "missing", so unknown keys are reported first.
fn preferred<'a, 'i>(
    errors: impl IntoIterator<Item = &'a ValidationError<'i>>,
) -> Option<&'a ValidationError<'i>>
where
    'i: 'a,
{
    let mut first = None;
    for e in errors {
        if matches!(e.kind(), ValidationErrorKind::AdditionalProperties { .. }) {
            return Some(e);
        }
        first.get_or_insert(e);
    }
    first
}

/// For a value valid under no branch of a oneOf/anyOf, the one branch of the value's own type
/// (an inline operation object, say) holds the precise problem; descend into it.
fn most_specific<'a, 'i>(mut err: &'a ValidationError<'i>) -> &'a ValidationError<'i> {
    loop {
        let context = match err.kind() {
            ValidationErrorKind::OneOfNotValid { context }
            | ValidationErrorKind::AnyOf { context } => context,
            _ => return err,
        };
        let here = err.instance_path().as_str();
        let same_type: Vec<&Vec<ValidationError<'static>>> = context
            .iter()
            .filter(|branch| {
                !branch.iter().any(|e| {
                    matches!(e.kind(), ValidationErrorKind::Type { .. })
                        && e.instance_path().as_str() == here
                })
            })
            .collect();
        match same_type.as_slice() {
            [branch] => match preferred(branch.iter()) {
                Some(inner) => err = inner,
                None => return err,
            },
            _ => return err,
        }
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing (an empty document)",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// Validates `instance` (the rendered track as JSON); returns the first problem found, located.
pub fn validate(instance: &Value, file: &Path, locator: &Locator) -> Result<(), TrackError> {
    let c = compiled();
    let all: Vec<ValidationError> = c.validator.iter_errors(instance).collect();
    let Some(err) = preferred(all.iter()).map(most_specific) else {
        return Ok(());
    };
    let pointer = err.instance_path().as_str().to_string();
    let schema_path = err.schema_path().as_str().to_string();
    let (kind, path, message) = match err.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            unknown_field(c, unexpected, &pointer)
        }
        ValidationErrorKind::Required { property } => (
            TrackErrorKind::Schema,
            pointer.clone(),
            format!("missing required field {property}"),
        ),
        ValidationErrorKind::Type { .. } if pointer.is_empty() => (
            TrackErrorKind::Schema,
            pointer.clone(),
            format!(
                "a track is a mapping of keys (name:, challenges:, ...); this file holds {}",
                type_name(err.instance())
            ),
        ),
        ValidationErrorKind::Enum { options } => not_one_of(&err, options, &pointer, &schema_path),
        _ => {
            let key = last_segment(&pointer);
            let value = err.instance();
            let shown = compact(value);
            let message = if matches!(value.as_ref(), Value::Array(a) if a.is_empty()) {
                format!("`{key}` is an empty list: a sweep needs at least one value")
            } else if let Some(expect) = expectation(key) {
                format!("`{shown}` is not valid for `{key}`: expected {expect}")
            } else {
                // The validator's own text quotes the whole value, which can be megabytes.
                err.to_string().replace(&value.to_string(), &shown)
            };
            (TrackErrorKind::Schema, pointer.clone(), message)
        }
    };
    // The document root has no key to point at: its first line stands for it.
    let location = locator.find(&path).or(Some((1, 1)));
    Err(
        TrackError::new(kind, file, format!("{message} (schema: {schema_path})"))
            .at(location)
            .with_path(if path.is_empty() {
                "/".to_string()
            } else {
                path
            }),
    )
}

/// A key the schema does not take here: a hint at the one meant, or why a known key does not
/// belong here.
fn unknown_field(
    c: &Compiled,
    unexpected: &[String],
    pointer: &str,
) -> (TrackErrorKind, String, String) {
    let key = unexpected.first().cloned().unwrap_or_default();
    let message = if c.known_keys.contains(&key) {
        // Known elsewhere, not here: suggesting the same word back helps nobody.
        let nested = key == "parallel" && pointer.contains("/parallel/");
        let why = if nested {
            "a `parallel` block cannot hold another one; its tasks are plain tasks".to_string()
        } else {
            format!("`{key}` is not a field here")
        };
        format!("unknown field `{key}`: {why}")
    } else {
        format!(
            "unknown field `{key}`{}",
            did_you_mean(&key, c.known_keys.iter().map(String::as_str))
        )
    };
    (
        TrackErrorKind::UnknownField,
        format!("{pointer}/{key}"),
        message,
    )
}

/// A value outside the schema's list (an unknown operation type among them), with a hint.
fn not_one_of(
    err: &ValidationError,
    options: &Value,
    pointer: &str,
    schema_path: &str,
) -> (TrackErrorKind, String, String) {
    let given = err.instance().as_str().unwrap_or_default().to_string();
    let names: Vec<&str> = options
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let hint = did_you_mean(&given, names.iter().copied());
    let key = last_segment(&pointer);
    let is_op_type = key == "type" && schema_path.contains("/$defs/operation/");
    let kind = if is_op_type {
        TrackErrorKind::UnknownOperationType
    } else {
        TrackErrorKind::Schema
    };
    let shown = compact(err.instance());
    let message = if is_op_type {
        format!(
            "unknown operation type {shown}{hint}; the types are: {}",
            names.join(", ")
        )
    } else {
        format!(
            "{shown} is not a value `{key}` takes{hint}; it takes: {}",
            names.join(", ")
        )
    };
    (kind, pointer.to_string(), message)
}

fn compact(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 60 {
        format!("{}…", &s[..s.floor_char_boundary(60)])
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(yaml: &str) -> Result<(), TrackError> {
        let value: Value = serde_yaml::from_str(yaml).unwrap();
        validate(&value, Path::new("t.yaml"), &Locator::new(yaml))
    }

    #[test]
    fn accepts_a_minimal_track() {
        check("name: t\nchallenges:\n  - name: c\n    schedule:\n      - operation: {name: s, type: sleep}\n").unwrap();
    }

    #[test]
    fn unknown_field_is_located_and_suggested() {
        let e = check("name: t\nchallenges:\n  - name: c\n    schedule:\n      - operation: x\n        clinets: 2\n")
            .unwrap_err();
        assert_eq!(e.kind, TrackErrorKind::UnknownField);
        assert_eq!(e.location, Some((6, 9)));
        assert!(
            e.message.contains("did you mean `clients`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn negative_clients_names_the_key() {
        let e = check("name: t\nchallenges:\n  - name: c\n    schedule:\n      - operation: x\n        clients: -1\n")
            .unwrap_err();
        assert_eq!(e.kind, TrackErrorKind::Schema);
        assert_eq!(e.path.as_deref(), Some("/challenges/0/schedule/0/clients"));
        assert!(e.message.contains("positive integer"), "{}", e.message);
    }

    #[test]
    fn empty_sweep_is_rejected() {
        let e = check("name: t\nchallenges:\n  - name: c\n    schedule:\n      - operation: x\n        target-throughput: []\n")
            .unwrap_err();
        assert!(e.message.contains("empty list"), "{}", e.message);
    }
}
