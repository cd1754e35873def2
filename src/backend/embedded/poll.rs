//! Polled requests (Rally's `wait-for-*`): a REST request to the engine, sent again until its
//! answer says done.

use super::{EmbeddedBackend, RestRequest, RestResponse};
use crate::backend::OpError;

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
            let response = tokio::task::block_in_place(|| self.engine.rest(req));
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
}
