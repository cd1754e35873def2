//! The index settings the engine acts on: its ingest pipelines (`index.default_pipeline`,
//! `index.final_pipeline`) and write blocks (`index.blocks.write`, `read_only`,
//! `read_only_allow_delete`). Read from the create-index body (templates applied) and changed
//! by `PUT <index>/_settings` and `PUT <index>/_block/<block>`; other settings are acknowledged
//! and tune nothing here.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct IndexSettings {
    pub default_pipeline: Option<String>,
    pub final_pipeline: Option<String>,
    /// The set blocks that refuse writes, by name.
    pub write_blocks: Vec<&'static str>,
    /// Every setting given, as `index.<name>` with its text, for `GET _settings`.
    pub given: std::collections::BTreeMap<String, String>,
    /// `index.refresh_interval`: when written documents become searchable.
    pub refresh: Refresh,
    /// `index.search.idle.after`: unsearched this long, an index with the default refresh
    /// interval is refreshed by its next search instead of on schedule.
    pub search_idle_after: std::time::Duration,
}

/// `index.refresh_interval`, as Elasticsearch schedules refreshes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Refresh {
    /// Not given: every second, and not while the index is search-idle.
    #[default]
    Default,
    /// Given: every this long, searched or not.
    Every(std::time::Duration),
    /// `-1`: only when asked.
    Never,
}

impl Refresh {
    /// Elasticsearch's default interval.
    pub const DEFAULT_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

    pub fn interval(self) -> Option<std::time::Duration> {
        match self {
            Refresh::Default => Some(Self::DEFAULT_INTERVAL),
            Refresh::Every(d) => Some(d),
            Refresh::Never => None,
        }
    }
}

/// Elasticsearch's default `index.search.idle.after`.
pub const SEARCH_IDLE_AFTER: std::time::Duration = std::time::Duration::from_secs(30);

fn time_setting(key: &str, v: &Value) -> Result<Option<std::time::Duration>, String> {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Null => return Ok(None),
        other => other.to_string(),
    };
    if text == "-1" {
        return Ok(None);
    }
    crate::util::parse_time(&text).map(Some).map_err(|e| {
        format!("failed to parse setting [index.{key}] with value [{text}] as a time value: {e}")
    })
}

impl Default for IndexSettings {
    fn default() -> Self {
        IndexSettings {
            default_pipeline: None,
            final_pipeline: None,
            write_blocks: Vec::new(),
            given: Default::default(),
            refresh: Refresh::Default,
            search_idle_after: SEARCH_IDLE_AFTER,
        }
    }
}

/// Blocks that refuse writes to an index's documents.
const WRITE_BLOCKS: [&str; 3] = ["write", "read_only", "read_only_allow_delete"];

impl IndexSettings {
    /// Applies `settings` (nested or dotted keys, with or without `index.`) over these.
    pub fn update(&mut self, settings: &Value) -> Result<(), String> {
        let mut flat = Vec::new();
        flatten("", settings, &mut flat);
        for (key, v) in flat {
            let key = key.strip_prefix("index.").unwrap_or(&key);
            let text = match v {
                Value::String(s) => Some(s.clone()),
                Value::Null => None,
                other => Some(other.to_string()),
            };
            match text {
                Some(text) => self.given.insert(format!("index.{key}"), text),
                None => self.given.remove(&format!("index.{key}")),
            };
            match key {
                "default_pipeline" => self.default_pipeline = pipeline_name(key, v)?,
                "final_pipeline" => self.final_pipeline = pipeline_name(key, v)?,
                "refresh_interval" => {
                    self.refresh = match (v, time_setting(key, v)?) {
                        (Value::Null, _) => Refresh::Default,
                        (_, None) => Refresh::Never,
                        (_, Some(d)) => Refresh::Every(d),
                    }
                }
                "search.idle.after" => {
                    self.search_idle_after = time_setting(key, v)?.unwrap_or(SEARCH_IDLE_AFTER)
                }
                "soft_deletes.enabled" if truth(v) == Some(false) => {
                    return Err("Creating indices with soft-deletes disabled is no longer supported. Please do not specify a value for setting [index.soft_deletes.enabled].".into())
                }
                _ => {
                    if let Some(block) = key.strip_prefix("blocks.") {
                        self.set_block(
                            block,
                            truth(v).ok_or_else(|| {
                                format!("index.blocks.{block} takes true or false, got {v}")
                            })?,
                        )?;
                    }
                }
            }
        }
        Ok(())
    }

    /// A setting's text, as given or Elasticsearch's default.
    pub fn text(&self, key: &str) -> String {
        self.given.get(key).cloned().unwrap_or_else(|| {
            match key {
                "index.number_of_shards" | "index.number_of_replicas" => "1",
                _ => "",
            }
            .to_string()
        })
    }

    /// Replica copies one node cannot hold: `number_of_replicas` (1 unless given) per shard,
    /// none where `auto_expand_replicas` starts at 0 (it expands to the nodes there are).
    pub fn unassigned_replicas(&self) -> u64 {
        let auto = self.text("index.auto_expand_replicas");
        if auto.starts_with("0-") {
            return 0;
        }
        let number = |key: &str| self.text(key).parse::<u64>().unwrap_or(1);
        number("index.number_of_replicas") * number("index.number_of_shards")
    }

    /// `green` when one node holds every copy, `yellow` when replicas stay unassigned.
    pub fn health(&self) -> &'static str {
        match self.unassigned_replicas() {
            0 => "green",
            _ => "yellow",
        }
    }

    pub fn set_block(&mut self, block: &str, on: bool) -> Result<(), String> {
        match WRITE_BLOCKS.iter().find(|b| **b == block) {
            Some(b) => {
                self.write_blocks.retain(|x| x != b);
                if on {
                    self.write_blocks.push(b);
                }
                Ok(())
            }
            None if !on => Ok(()),
            None => Err(format!(
                "index block `{block}` is not kept by the embedded engine (it keeps {})",
                WRITE_BLOCKS.join(", ")
            )),
        }
    }

    /// Why a write is refused, as Elasticsearch's `cluster_block_exception` says it.
    pub fn write_refusal(&self, index: &str) -> Option<String> {
        self.write_blocks.first().map(|b| {
            let (id, what) = match *b {
                "write" => (8, "index write (api)"),
                "read_only" => (5, "index read-only (api)"),
                _ => (12, "disk usage exceeded flood-stage watermark, index has read-only-allow-delete block"),
            };
            format!("index [{index}] blocked by: [FORBIDDEN/{id}/{what}];")
        })
    }
}

fn pipeline_name(key: &str, v: &Value) -> Result<Option<String>, String> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) if s == "_none" || s.is_empty() => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        other => Err(format!("index.{key} is a pipeline id, got {other}")),
    }
}

fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) if s == "true" || s == "false" => Some(s == "true"),
        Value::Null => Some(false),
        _ => None,
    }
}

fn flatten<'v>(prefix: &str, v: &'v Value, out: &mut Vec<(String, &'v Value)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out);
            }
        }
        other => out.push((prefix.to_string(), other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pipelines_and_blocks_are_read_in_every_spelling() {
        let mut s = IndexSettings::default();
        s.update(&json!({"index": {"default_pipeline": "a", "number_of_shards": 2}, "index.final_pipeline": "f"}))
            .unwrap();
        assert_eq!(
            (s.default_pipeline.as_deref(), s.final_pipeline.as_deref()),
            (Some("a"), Some("f"))
        );
        s.update(&json!({"default_pipeline": "_none", "blocks": {"write": "true"}}))
            .unwrap();
        assert_eq!(s.default_pipeline, None);
        assert_eq!(
            s.write_refusal("tsdb").as_deref(),
            Some("index [tsdb] blocked by: [FORBIDDEN/8/index write (api)];")
        );
        s.update(&json!({"index.blocks.write": false})).unwrap();
        assert_eq!(s.write_refusal("tsdb"), None);
        assert!(s
            .update(&json!({"index.blocks.read": true}))
            .unwrap_err()
            .contains("not kept"));
        assert!(s.update(&json!({"index.blocks.read": false})).is_ok());
        assert!(s.update(&json!({"index.default_pipeline": 3})).is_err());
    }
}
