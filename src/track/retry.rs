//! A task's `retry`: an operation tried again after some failures, as Rally's `Retry` runner
//! wraps every administrative runner (runner.py): `retries` more attempts, waiting
//! `wait-period` between them; a broken connection, a timeout or a 408 is retried when
//! `on-timeout` (the default), an answer that says the work is not done (a cluster health
//! below the status waited for, failed bulk items) when `on-error`; `until-success` retries
//! both until one attempt succeeds. Rally retries until success without end; runner gives up
//! after `give-up-after` (10 minutes unless the task says; 30 s under `--test-mode`), with the
//! last attempt's error.
//! The attempts and waits are one operation: its service time spans them all, as in Rally.

use super::error::{TrackError, TrackErrorKind};
use super::model::Resolver;
use super::task::duration_at;
use serde_json::Value;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Attempts after the first; `u64::MAX` until success.
    pub retries: u64,
    pub wait: Duration,
    pub on_timeout: bool,
    pub on_error: bool,
    /// Until success: the time after which the last error stands.
    pub give_up_after: Duration,
}

/// Rally's default `retry-wait-period`.
pub const DEFAULT_WAIT: Duration = Duration::from_millis(500);
/// How long `until-success` retries before the last error stands.
pub const DEFAULT_GIVE_UP_AFTER: Duration = Duration::from_secs(600);
/// ... under `--test-mode`, which checks that a track runs, not that a cluster turns green.
pub const TEST_MODE_GIVE_UP_AFTER: Duration = Duration::from_secs(30);
/// More attempts than this is a typo, not a plan.
const MAX_RETRIES: u64 = 1_000_000;

impl RetryPolicy {
    /// Whether one attempt more is left after `attempt` (0-based) failed, and the time
    /// retrying so far allows it.
    pub fn another(&self, attempt: u64, retrying_for: Duration) -> bool {
        attempt < self.retries
            && (self.retries != u64::MAX || retrying_for + self.wait < self.give_up_after)
    }
}

const KEYS: [&str; 6] = [
    "retries",
    "until-success",
    "wait-period",
    "on-timeout",
    "on-error",
    "give-up-after",
];

/// `retry`: an object of the keys above; None when the task retries nothing.
pub(super) fn parse(
    v: &Option<Value>,
    r: &Resolver,
    path: &str,
) -> Result<Option<RetryPolicy>, TrackError> {
    let Some(v) = v else { return Ok(None) };
    let at = format!("{path}/retry");
    let Value::Object(m) = v else {
        return Err(r.err(
            TrackErrorKind::Schema,
            &at,
            format!("`retry` is an object of {}, not {v}", KEYS.join(", ")),
        ));
    };
    if let Some(k) = m.keys().find(|k| !KEYS.contains(&k.as_str())) {
        let hint = crate::suggest::did_you_mean(k, KEYS.iter().copied());
        return Err(r.err(
            TrackErrorKind::Schema,
            &format!("{at}/{k}"),
            format!("`retry` takes no `{k}`{hint}"),
        ));
    }
    let flag = |k: &str, default: bool| match m.get(k) {
        None => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(r.err(
            TrackErrorKind::Schema,
            &format!("{at}/{k}"),
            format!("`{k}` is true or false, not {other}"),
        )),
    };
    let time = |k: &str, default: Duration| match m.get(k) {
        None => Ok(default),
        Some(v) => duration_at(v, r, &format!("{at}/{k}")),
    };
    let until_success = flag("until-success", false)?;
    let retries = match m.get("retries") {
        None => 0,
        Some(v) => v.as_u64().filter(|n| *n <= MAX_RETRIES).ok_or_else(|| {
            r.err(
                TrackErrorKind::Schema,
                &format!("{at}/retries"),
                format!("`retries` is a whole number from 0 to {MAX_RETRIES}, not {v}"),
            )
        })?,
    };
    let policy = RetryPolicy {
        retries: if until_success { u64::MAX } else { retries },
        wait: time("wait-period", DEFAULT_WAIT)?,
        on_timeout: flag("on-timeout", true)?,
        // Rally: until success retries failed answers too.
        on_error: until_success || flag("on-error", false)?,
        give_up_after: time(
            "give-up-after",
            if r.test_mode {
                TEST_MODE_GIVE_UP_AFTER
            } else {
                DEFAULT_GIVE_UP_AFTER
            },
        )?,
    };
    Ok((policy.retries > 0).then_some(policy))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn until_success_retries_until_it_gives_up() {
        let p = RetryPolicy {
            retries: u64::MAX,
            wait: Duration::from_secs(1),
            on_timeout: true,
            on_error: true,
            give_up_after: Duration::from_secs(10),
        };
        assert!(p.another(1_000, Duration::from_secs(8)));
        assert!(!p.another(1_000, Duration::from_secs(9)));
        let three = RetryPolicy { retries: 3, ..p };
        assert!(
            three.another(2, Duration::from_secs(3600)),
            "counted retries ignore the time"
        );
        assert!(!three.another(3, Duration::ZERO));
    }
}
