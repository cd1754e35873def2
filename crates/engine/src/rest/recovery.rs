//! `_recovery`: what Rally's wait-for-recovery polls.

use crate::cluster::Engine;
use crate::rest::RestResponse;
use serde_json::{json, Value};

impl Engine {
    /// `_recovery`: one shard per index, recovered when the index was made (stage DONE).
    pub(crate) fn recovery(&self, names: Option<&str>) -> RestResponse {
        match self.resolve(names) {
            Ok(indices) => {
                let out: serde_json::Map<String, Value> = indices
                    .iter()
                    .map(|i| {
                        let shard = json!({"id": 0, "type": "EMPTY_STORE", "stage": "DONE", "primary": true,
                            "start_time_in_millis": 0, "stop_time_in_millis": 0,
                            "index": {"size": {"total_in_bytes": 0, "recovered_in_bytes": 0, "percent": "100.0%"}}});
                        (i.name.clone(), json!({ "shards": [shard] }))
                    })
                    .collect();
                RestResponse::json(200, &Value::Object(out))
            }
            Err(r) => r,
        }
    }
}
