//! Which failed attempts a task's `retry` tries again, as Rally's `Retry` runner decides:
//! broken connections, timeouts and 408s with `on-timeout`; answers that say the work is not
//! done (`success: false` in Rally: a cluster health below the status waited for, a bulk
//! with failed items) with `on-error`; never a 400 or another error answer.

use crate::backend::{ErrorKind, OpError, Outcome};
use crate::track::RetryPolicy;

pub(super) fn again(policy: &RetryPolicy, result: &Result<Outcome, OpError>) -> bool {
    match result {
        Ok(o) => o.failed_items > 0 && policy.on_error,
        Err(e) => match e.kind {
            ErrorKind::Connection | ErrorKind::Timeout => policy.on_timeout,
            ErrorKind::Unmet | ErrorKind::ItemFailures => policy.on_error,
            ErrorKind::NotFound
            | ErrorKind::BadRequest
            | ErrorKind::Internal
            | ErrorKind::ErrorReply
            | ErrorKind::Protocol
            | ErrorKind::Unauthorized
            | ErrorKind::TooManyRequests
            | ErrorKind::ServerError
            | ErrorKind::Redirect => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timeouts_and_unmet_conditions_are_retried_as_rally_retries_them() {
        let p = RetryPolicy {
            retries: 3,
            wait: Duration::ZERO,
            on_timeout: true,
            on_error: false,
            give_up_after: Duration::ZERO,
        };
        let err = |kind| Err(OpError::new(kind, "x"));
        assert!(again(&p, &err(ErrorKind::Timeout)));
        assert!(again(&p, &err(ErrorKind::Connection)));
        assert!(!again(&p, &err(ErrorKind::Unmet)), "on-error is off");
        assert!(
            !again(&p, &err(ErrorKind::BadRequest)),
            "Rally raises a 400 at once"
        );
        assert!(!again(&p, &err(ErrorKind::ServerError)));
        let p = RetryPolicy {
            on_error: true,
            on_timeout: false,
            ..p
        };
        assert!(again(&p, &err(ErrorKind::Unmet)));
        assert!(!again(&p, &err(ErrorKind::Timeout)));
        let failed_items = Ok(Outcome {
            failed_items: 2,
            ..Outcome::default()
        });
        assert!(again(&p, &failed_items));
        assert!(!again(&p, &Ok(Outcome::default())));
    }
}
