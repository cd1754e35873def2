//! force-merge in Rally's `polling` mode (its ForceMerge runner): the merge asked not to wait
//! (`wait_for_completion=false`), then, every `poll-period`, `GET _tasks/<id>` until the task
//! says it completed; no request waits for a merge of hours. A cluster that answers the merge
//! whole (one before 8.1 waits) has nothing to poll.

use super::request::{escape_segment, CallBuilder, Expect, HttpCall, ADMIN_TIMEOUT};
use super::{ElasticsearchClient, Settings};
use crate::backend::{ErrorKind, OpError, Outcome};
use reqwest::Method;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// How long a task is polled before the merge is called failed.
const MAX_POLLING: Duration = Duration::from_secs(24 * 60 * 60);

pub struct PolledMerge {
    merge: HttpCall,
    period: Duration,
    /// For the poll's path, made from the task id the merge answers.
    settings: Arc<Settings>,
}

pub fn build(
    builder: &CallBuilder,
    settings: Arc<Settings>,
    indices: &[String],
    max_num_segments: Option<i64>,
    period: Duration,
) -> Result<PolledMerge, String> {
    let no_wait = [("wait_for_completion".to_string(), "false".to_string())];
    Ok(PolledMerge {
        merge: builder.force_merge(indices, max_num_segments, &no_wait)?,
        period,
        settings,
    })
}

impl ElasticsearchClient {
    pub(super) async fn polled_merge(&mut self, m: &PolledMerge) -> Result<Outcome, OpError> {
        let host = self.next_host();
        let answer = self.send(&m.merge, host, None).await?;
        let task = serde_json::from_slice::<Value>(self.body(&answer))
            .ok()
            .and_then(|v| v.get("task").and_then(Value::as_str).map(str::to_string));
        let one = Outcome {
            units: 1,
            ..Outcome::default()
        };
        let Some(task) = task else {
            return Ok(one);
        };
        let builder = CallBuilder {
            hosts: &m.settings.hosts,
            fixed: super::request::Fixed {
                auth: m.settings.auth_line.as_deref(),
                gzip: m.settings.gzip,
            },
        };
        let path = format!("/_tasks/{}", escape_segment(&task));
        let mut poll = builder
            .call(Method::GET, path, &[], None, Expect::Status)
            .map_err(|e| OpError::new(ErrorKind::Internal, e))?;
        poll.timeout = Some(ADMIN_TIMEOUT);
        let started = std::time::Instant::now();
        loop {
            tokio::time::sleep(m.period).await;
            let answer = self.send(&poll, host, None).await?;
            let done = serde_json::from_slice::<Value>(self.body(&answer))
                .ok()
                .and_then(|v| v.get("completed").and_then(Value::as_bool))
                .unwrap_or(false);
            if done {
                return Ok(one);
            }
            if started.elapsed() > MAX_POLLING {
                return Err(OpError::new(
                    ErrorKind::Timeout,
                    format!(
                        "{}: task {task} not completed after {}h of polling",
                        m.merge.label,
                        MAX_POLLING.as_secs() / 3600
                    ),
                ));
            }
        }
    }
}
