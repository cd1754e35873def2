//! Polled requests (Rally's `wait-for-*`) and the `_recovery` answer they wait on.

use super::{RestRequest, RestResponse};
use crate::backend::embedded::EmbeddedBackend;
use crate::backend::OpError;
use serde_json::{json, Value};

impl EmbeddedBackend {
    /// Sends `req` until its answer says `poll`'s condition holds (the engine's answers are
    /// immediate; the wait between them is not spent on a runtime thread).
    pub async fn poll(
        &self,
        req: &RestRequest<'_>,
        poll: crate::ops::poll::Poll,
    ) -> Result<RestResponse, OpError> {
        let started = std::time::Instant::now();
        loop {
            let response = tokio::task::block_in_place(|| self.rest(req));
            if response.status >= 400 {
                return Ok(response);
            }
            let label = format!("{} {}", req.method, req.path);
            if poll
                .verdict(&label, &response.body, started)
                .map_err(crate::backend::poll_error)?
            {
                return Ok(response);
            }
            tokio::time::sleep(poll.interval).await;
        }
    }

    /// `_recovery`: one shard per index, recovered when the index was made (stage DONE).
    pub(super) fn recovery(&self, names: Option<&str>) -> RestResponse {
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
