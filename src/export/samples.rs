//! A trial's per-request samples as Rally's metrics documents: one `latency` and one
//! `service_time` document per request, in milliseconds, `sample-type` `warmup` or `normal`,
//! timestamped at the request's intended start.

use super::rally::document_id;
use crate::metrics::TrialSamples;
use crate::results::SamplesRecord;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};

/// A trial whose samples were kept: what each of its documents shares.
pub struct SampledTrial {
    /// The race's, task's and trial's fields, under Rally's names.
    pub base: Value,
    /// Task, sweep point and trial: with the sample's index, the documents' ids.
    pub id_parts: [String; 3],
    pub race_id: String,
    pub trial_start: DateTime<Utc>,
    pub race_start: DateTime<Utc>,
    pub samples: SamplesRecord,
}

impl SampledTrial {
    /// The two documents (id, document) of each sample.
    pub fn documents<'a>(
        &'a self,
        samples: &'a TrialSamples,
    ) -> impl Iterator<Item = (String, Value)> + 'a {
        samples.samples.iter().enumerate().flat_map(move |(i, s)| {
            let at = self.trial_start + chrono::Duration::microseconds(s.intended_us as i64);
            let index = i.to_string();
            [("latency", s.latency_us), ("service_time", s.service_us)].map(|(name, us)| {
                let mut doc = self.base.clone();
                doc["name"] = json!(name);
                doc["value"] = json!(us as f64 / 1000.0);
                doc["unit"] = json!("ms");
                doc["sample-type"] = json!(if s.warmup { "warmup" } else { "normal" });
                doc["@timestamp"] = json!(at.timestamp_millis());
                doc["relative-time"] =
                    json!((at - self.race_start).num_microseconds().unwrap_or(0) as f64 / 1000.0);
                doc["meta"]["success"] = json!(s.ok);
                let [task, sweep, trial] = &self.id_parts;
                let id = document_id(&self.race_id, &["sample", task, sweep, trial, &index, name]);
                (id, doc)
            })
        })
    }
}
