//! Track parameters given on the command line (`--track-params k=v,k2=[1,2]`) or in a YAML/JSON
//! file. Values are read as YAML scalars, so `4` is a number and `[500, 5000]` a list.

use super::error::{TrackError, TrackErrorKind};
use serde_json::{Map, Value};
use std::path::Path;

/// Parses `--track-params`: either a path to a .yaml/.yml/.json file, or `key=value` pairs
/// separated by commas (commas inside brackets belong to the value). `key:value` is accepted
/// too, as Rally users write it.
pub fn parse_track_params(arg: &str) -> Result<Map<String, Value>, TrackError> {
    let as_path = Path::new(arg);
    let looks_like_file = [".yaml", ".yml", ".json"]
        .iter()
        .any(|ext| arg.ends_with(ext));
    if looks_like_file {
        let text = crate::files::read_text(as_path).map_err(|e| {
            TrackError::new(
                TrackErrorKind::Params,
                as_path,
                format!("cannot read track parameters file: {e}"),
            )
        })?;
        let value: serde_yaml::Value = serde_yaml::from_str(&text).map_err(|e| {
            let loc = e.location().map(|l| (l.line(), l.column()));
            TrackError::new(
                TrackErrorKind::Params,
                as_path,
                format!("not valid YAML/JSON: {e}"),
            )
            .at(loc)
        })?;
        return match serde_json::to_value(value) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(TrackError::new(
                TrackErrorKind::Params,
                as_path,
                "track parameters file must be a mapping of name: value",
            )),
        };
    }
    let opened = arg.matches(['[', '{']).count();
    let closed = arg.matches([']', '}']).count();
    if opened != closed {
        return Err(TrackError::new(
            TrackErrorKind::Params,
            "--track-params",
            format!("`{arg}` has {opened} opening and {closed} closing brackets (example: --track-params clients:[1,2],bulk_size:500)"),
        ));
    }
    let mut out = Map::new();
    for pair in split_top_level(arg) {
        let pair = pair.trim();
        if pair.is_empty() {
            continue;
        }
        let Some(sep) = pair.find(['=', ':']) else {
            return Err(TrackError::new(
                TrackErrorKind::Params,
                "--track-params",
                format!(
                    "`{pair}` is not key:value (example: --track-params bulk_size:5000,clients:4)"
                ),
            ));
        };
        let (key, raw) = (pair[..sep].trim(), pair[sep + 1..].trim());
        let value: serde_yaml::Value =
            serde_yaml::from_str(raw).unwrap_or(serde_yaml::Value::String(raw.to_string()));
        let value = serde_json::to_value(value).unwrap_or(Value::String(raw.to_string()));
        out.insert(key.to_string(), value);
    }
    Ok(out)
}

fn split_top_level(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_scalars_and_lists() {
        let p = parse_track_params("bulk_size=[500, 5000],clients=4,name=x,rally:1").unwrap();
        assert_eq!(p["bulk_size"], serde_json::json!([500, 5000]));
        assert_eq!(p["clients"], serde_json::json!(4));
        assert_eq!(p["name"], serde_json::json!("x"));
        assert_eq!(p["rally"], serde_json::json!(1));
    }

    #[test]
    fn reads_a_yaml_or_json_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p.yaml");
        std::fs::write(&f, "bulk_sizes: [1, 2]\nclients: 3\n").unwrap();
        let p = parse_track_params(f.to_str().unwrap()).unwrap();
        assert_eq!(p["bulk_sizes"], serde_json::json!([1, 2]));
        std::fs::write(&f, "- not a mapping\n").unwrap();
        assert_eq!(
            parse_track_params(f.to_str().unwrap()).unwrap_err().kind,
            TrackErrorKind::Params
        );
        let missing = dir.path().join("missing.json");
        assert_eq!(
            parse_track_params(missing.to_str().unwrap())
                .unwrap_err()
                .kind,
            TrackErrorKind::Params
        );
    }

    #[test]
    fn rejects_pairs_without_separator() {
        assert_eq!(
            parse_track_params("oops").unwrap_err().kind,
            TrackErrorKind::Params
        );
    }
}
