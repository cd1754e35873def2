//! A raw request repeated until its answer says a condition holds: Rally's `wait-for-*`
//! operations (recovery, snapshots, transforms) as one request each, polled. The wait is bounded:
//! past `poll-timeout` the operation fails, naming the condition, where Rally would wait forever.

use serde_json::Value;
use std::time::{Duration, Instant};

/// What the answer must say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Until {
    /// `GET <index>/_recovery`: every shard of every index at stage DONE (an empty answer is
    /// not done yet, as Rally reads it).
    RecoveryDone,
    /// `GET _snapshot/<repo>/<snapshot>/_status`: the snapshot's state SUCCESS (FAILED fails).
    SnapshotSucceeded,
    /// `GET _snapshot/<repo>/_current`: no snapshot running (`total` 0).
    NoCurrentSnapshots,
    /// `GET _transform/<id>/_stats`: the transform stopped (failed fails, with its reason).
    TransformStopped,
}

impl Until {
    pub const NAMES: [&'static str; 4] = [
        "recovery-done",
        "snapshot-succeeded",
        "no-current-snapshots",
        "transform-stopped",
    ];

    pub fn parse(name: &str) -> Option<Until> {
        Some(match name {
            "recovery-done" => Until::RecoveryDone,
            "snapshot-succeeded" => Until::SnapshotSucceeded,
            "no-current-snapshots" => Until::NoCurrentSnapshots,
            "transform-stopped" => Until::TransformStopped,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Until::RecoveryDone => "recovery-done",
            Until::SnapshotSucceeded => "snapshot-succeeded",
            Until::NoCurrentSnapshots => "no-current-snapshots",
            Until::TransformStopped => "transform-stopped",
        }
    }

    /// Ok(true) when the answer says the condition holds, Ok(false) to ask again, Err when it
    /// says the condition never will (a failed snapshot or transform) or cannot be read.
    pub fn check(self, answer: &Value) -> Result<bool, String> {
        match self {
            Until::RecoveryDone => {
                let Some(indices) = answer.as_object().filter(|m| !m.is_empty()) else {
                    return Ok(false);
                };
                let mut shards = indices
                    .values()
                    .filter_map(|i| i.get("shards").and_then(Value::as_array))
                    .flatten()
                    .peekable();
                if shards.peek().is_none() {
                    return Ok(false);
                }
                Ok(shards.all(|s| s.get("stage").and_then(Value::as_str) == Some("DONE")))
            }
            Until::SnapshotSucceeded => {
                match answer.pointer("/snapshots/0/state").and_then(Value::as_str) {
                    Some("SUCCESS") => Ok(true),
                    Some("FAILED") => {
                        Err(format!("the snapshot failed: {}", answer["snapshots"][0]))
                    }
                    _ => Ok(false),
                }
            }
            Until::NoCurrentSnapshots => match answer.get("total").and_then(Value::as_u64) {
                Some(total) => Ok(total == 0),
                None => Ok(answer
                    .get("snapshots")
                    .and_then(Value::as_array)
                    .is_some_and(Vec::is_empty)),
            },
            Until::TransformStopped => {
                let t = &answer["transforms"][0];
                match t.get("state").and_then(Value::as_str) {
                    Some("stopped") => Ok(true),
                    Some("failed") => Err(format!(
                        "the transform failed: {}",
                        t.get("reason")
                            .and_then(Value::as_str)
                            .unwrap_or("no reason given")
                    )),
                    Some(_) => Ok(false),
                    None => Err("the answer has no transforms[0].state".into()),
                }
            }
        }
    }
}

/// How a request is polled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Poll {
    pub until: Until,
    /// Between two requests (Rally's `completion-recheck-wait-period`, default 1 s).
    pub interval: Duration,
    /// Past this, the operation fails (Rally's `transform-timeout` for transforms; an hour
    /// by default).
    pub timeout: Duration,
}

pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3600);

/// Why a poll ended without its condition.
pub enum PollEnd {
    /// The answer says it never will hold (or cannot be read).
    Failed(String),
    /// Another wait would pass the poll timeout.
    TimedOut(String),
}

impl Poll {
    /// After an answer to the request `label`, begun at `started`: Ok(true) done, Ok(false)
    /// ask again after `interval`, else why the poll ends.
    pub fn verdict(&self, label: &str, answer: &[u8], started: Instant) -> Result<bool, PollEnd> {
        let body: Value = serde_json::from_slice(answer)
            .map_err(|_| PollEnd::Failed(format!("{label}: the answer is not JSON")))?;
        match self.until.check(&body) {
            Ok(true) => return Ok(true),
            Ok(false) => {}
            Err(why) => return Err(PollEnd::Failed(format!("{label}: {why}"))),
        }
        if started.elapsed() + self.interval > self.timeout {
            return Err(PollEnd::TimedOut(format!(
                "{label}: `{}` did not hold within the poll timeout of {:?} (set `poll-timeout` to wait longer)",
                self.until.name(),
                self.timeout
            )));
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn conditions_read_the_answers_as_rally_does() {
        let r = Until::RecoveryDone;
        assert_eq!(r.check(&json!({})), Ok(false));
        assert_eq!(
            r.check(&json!({"i": {"shards": [{"stage": "DONE"}, {"stage": "INDEX"}]}})),
            Ok(false)
        );
        assert_eq!(
            r.check(
                &json!({"i": {"shards": [{"stage": "DONE"}]}, "j": {"shards": [{"stage": "DONE"}]}})
            ),
            Ok(true)
        );
        let s = Until::SnapshotSucceeded;
        assert_eq!(
            s.check(&json!({"snapshots": [{"state": "IN_PROGRESS"}]})),
            Ok(false)
        );
        assert_eq!(
            s.check(&json!({"snapshots": [{"state": "SUCCESS"}]})),
            Ok(true)
        );
        assert!(s
            .check(&json!({"snapshots": [{"state": "FAILED"}]}))
            .is_err());
        let c = Until::NoCurrentSnapshots;
        assert_eq!(c.check(&json!({"snapshots": [{}], "total": 1})), Ok(false));
        assert_eq!(c.check(&json!({"snapshots": [], "total": 0})), Ok(true));
        assert_eq!(c.check(&json!({"snapshots": []})), Ok(true));
        let t = Until::TransformStopped;
        assert_eq!(
            t.check(&json!({"transforms": [{"state": "indexing"}]})),
            Ok(false)
        );
        assert_eq!(
            t.check(&json!({"transforms": [{"state": "stopped"}]})),
            Ok(true)
        );
        let failed = t
            .check(&json!({"transforms": [{"state": "failed", "reason": "disk"}]}))
            .unwrap_err();
        assert!(failed.contains("disk"), "{failed}");
        for name in Until::NAMES {
            assert_eq!(Until::parse(name).map(Until::name), Some(name));
        }
    }
}
