//! One driver client of the elasticsearch backend: its own connection per host, the calls of
//! an operation sent in order, and what each response counts as.

use super::connection::{self, Connection, Endpoint};
use super::request::{Expect, Gzip, HttpCall};
use super::{response, Prepared, Settings};
use crate::backend::net::Deadline;
use crate::backend::{status_error, BackendClient, ErrorKind, OpError, Outcome, Payload};
use crate::ops::HealthStatus;
use std::sync::Arc;
use std::time::Duration;

pub struct ElasticsearchClient {
    endpoints: Arc<[Endpoint]>,
    /// One keep-alive connection per host, opened on first use and after a failure.
    conns: Vec<Option<Connection>>,
    timeout: Duration,
    /// The compressor, when bodies go gzip-compressed.
    gzip: Option<Box<Gzip>>,
    next_host: usize,
    /// Request heads of bodies made per call (bulk, pages), reused.
    head: Vec<u8>,
    /// Compressed bodies made per call, reused.
    compressed: Vec<u8>,
    deadline: Deadline,
    last_item_failure: Option<String>,
    /// The last vector search's answer, whose hits the recall check reads.
    last_search: Option<Answer>,
}

impl ElasticsearchClient {
    /// A client of the backend `settings` describe; its first request goes to host `first`
    /// (modulo the hosts), so that clients spread over the hosts.
    pub(super) fn new(settings: &Settings, first: usize) -> ElasticsearchClient {
        let hosts = settings.hosts.len();
        ElasticsearchClient {
            endpoints: settings.endpoints.clone(),
            conns: (0..hosts).map(|_| None).collect(),
            timeout: settings.timeout,
            gzip: settings.gzip.then(Gzip::default).map(Box::new),
            next_host: first % hosts,
            head: Vec::new(),
            compressed: Vec::new(),
            deadline: Deadline::default(),
            last_item_failure: None,
            last_search: None,
        }
    }
}

/// The outcome of a bulk whose reply has `items` items, `failed` of them failed, for `docs`
/// documents sent, and why items failed: a document the reply does not account for is not
/// indexed.
fn bulk_items(
    label: &str,
    docs: u64,
    items: u64,
    failed: u64,
    reason: Option<String>,
) -> Result<(Outcome, Option<String>), OpError> {
    if items > docs {
        return Err(OpError::new(
            ErrorKind::Protocol,
            format!("{label}: the bulk response has {items} items for {docs} documents sent"),
        ));
    }
    let missing = docs - items;
    let reason = match (reason, missing) {
        (reason, 0) => reason,
        (_, missing) => Some(format!("the bulk response accounts for {items} of the {docs} documents sent: {missing} missing")),
    };
    let failed = (failed + missing).min(docs.max(1));
    let outcome = Outcome {
        units: docs.saturating_sub(failed),
        failed_items: failed,
        ..Outcome::default()
    };
    Ok((outcome, reason))
}

fn protocol(label: &str, what: &str) -> OpError {
    OpError::new(ErrorKind::Protocol, format!("{label}: {what}"))
}

/// What a successful response of `call` counts as; for bulk, also why items failed.
fn outcome(call: &HttpCall, bytes: &[u8], docs: u64) -> Result<(Outcome, Option<String>), OpError> {
    let label = &call.label;
    let one = Outcome {
        units: 1,
        ..Outcome::default()
    };
    match call.expect {
        Expect::Status | Expect::StatusOr(_) => Ok((one, None)),
        Expect::Search => {
            let hits = response::search_hits(bytes)
                .ok_or_else(|| protocol(label, "the response has no hits.total"))?;
            let failed_shards = response::failed_shards(bytes);
            Ok((
                Outcome {
                    hits,
                    failed_shards,
                    ..one
                },
                None,
            ))
        }
        Expect::Bulk => match response::bulk_has_errors(bytes) {
            Some(false) => {
                let items = response::bulk_item_count(bytes)
                    .ok_or_else(|| protocol(label, "the bulk response has no readable `items`"))?;
                bulk_items(label, docs, items, 0, None)
            }
            Some(true) => {
                let f = response::bulk_item_failures(bytes)
                    .ok_or_else(|| protocol(label, "errors:true but no readable items"))?;
                // errors:true promises a failed item even when none can be read.
                bulk_items(label, docs, f.items, f.failed.max(1), f.first_reason)
            }
            None => Err(protocol(
                label,
                "the response is not a bulk response (no `errors` flag)",
            )),
        },
        Expect::Health(wanted) => {
            let v: serde_json::Value = serde_json::from_slice(bytes)
                .map_err(|_| protocol(label, "the response is not JSON"))?;
            let got = v
                .get("status")
                .and_then(|s| s.as_str())
                .and_then(HealthStatus::parse);
            match (wanted, got) {
                (_, None) => Err(protocol(label, "the response has no status")),
                (Some(w), Some(g)) if g < w => {
                    let kind = if v.get("timed_out").and_then(|t| t.as_bool()) == Some(true) {
                        ErrorKind::Timeout
                    } else {
                        ErrorKind::Unmet
                    };
                    Err(OpError::new(
                        kind,
                        format!(
                            "{label}: cluster health is {} but the task waits for {}",
                            g.as_str(),
                            w.as_str()
                        ),
                    ))
                }
                _ => Ok((one, None)),
            }
        }
    }
}

/// A response of one call: the host it came from and where its body is.
pub(super) struct Answer {
    host: usize,
    response: connection::Response,
}

impl Answer {
    pub(super) fn status(&self) -> u16 {
        self.response.status
    }
}

impl ElasticsearchClient {
    /// The host of the next call (requests go round-robin).
    pub(super) fn next_host(&mut self) -> usize {
        let host = self.next_host;
        self.next_host = (self.next_host + 1) % self.endpoints.len();
        host
    }

    pub(super) fn body(&self, answer: &Answer) -> &[u8] {
        match &self.conns[answer.host] {
            Some(c) => c.body(&answer.response),
            None => &[],
        }
    }

    pub(super) async fn run(
        &mut self,
        call: &HttpCall,
        payload: &Payload<'_>,
    ) -> Result<Outcome, OpError> {
        let host = self.next_host();
        let answer = match (call.expect, payload) {
            // The feeder wrote the whole body, action lines included: it goes to the socket
            // from the feeder's buffer.
            (Expect::Bulk, Payload::Documents { body, count, .. }) => {
                let answer = self.send(call, host, Some(body.as_bytes())).await?;
                return self.finish(call, &answer, *count);
            }
            (Expect::Bulk, _) => {
                return Err(OpError::new(ErrorKind::Internal, "bulk without documents"))
            }
            // A body drawn from bindings replaces the call's fixed one.
            (_, Payload::Body(body)) => self.send(call, host, Some(body)).await?,
            _ => self.send(call, host, None).await?,
        };
        self.finish(call, &answer, 0)
    }

    /// Sends `call` until its answer says `poll`'s condition holds, waiting `poll.interval`
    /// between answers, at most `poll.timeout` in all.
    pub(super) async fn poll(
        &mut self,
        call: &HttpCall,
        poll: crate::ops::poll::Poll,
    ) -> Result<Outcome, OpError> {
        let started = std::time::Instant::now();
        loop {
            let host = self.next_host();
            let answer = self.send(call, host, None).await?;
            if poll
                .verdict(&call.label, self.body(&answer), started)
                .map_err(crate::backend::poll_error)?
            {
                return Ok(Outcome {
                    units: 1,
                    ..Outcome::default()
                });
            }
            tokio::time::sleep(poll.interval).await;
        }
    }

    pub(super) fn finish(
        &mut self,
        call: &HttpCall,
        answer: &Answer,
        docs: u64,
    ) -> Result<Outcome, OpError> {
        let (outcome, reason) = outcome(call, self.body(answer), docs)?;
        self.last_item_failure = reason;
        Ok(outcome)
    }

    /// Sends `call` to host `host`, with `body` made for this call or else the call's fixed
    /// one, and reads the response; a status of 400 or more is an error.
    pub(super) async fn send(
        &mut self,
        call: &HttpCall,
        host: usize,
        body: Option<&[u8]>,
    ) -> Result<Answer, OpError> {
        let Self {
            endpoints,
            conns,
            timeout,
            gzip,
            head,
            compressed,
            deadline,
            ..
        } = self;
        let endpoint = &endpoints[host];
        let slot = &mut conns[host];
        let (first, second): (&[u8], &[u8]) = match body {
            None => (call.fixed(host), &[]),
            Some(b) => {
                let b = match gzip {
                    Some(g) => {
                        g.compress(b, compressed);
                        &compressed[..]
                    }
                    None => b,
                };
                head.clear();
                call.head_for(host, b.len(), head);
                (&head[..], b)
            }
        };
        let exchange = async {
            if !slot.as_ref().is_some_and(Connection::usable) {
                *slot = None;
                *slot = Some(Connection::open(endpoint).await?);
            }
            let conn = slot.as_mut().expect("just opened");
            conn.exchange(first, second, call.is_head()).await
        };
        // Long admin calls have their own timeout; the shared deadline serves the rest.
        let limit = call.timeout.unwrap_or(*timeout);
        let result = match call.timeout {
            Some(t) => tokio::time::timeout(t, exchange).await.ok(),
            None => deadline.within(limit, exchange).await,
        };
        let response = match result {
            Some(Ok(r)) => r,
            Some(Err(failure)) => {
                *slot = None;
                return Err(failure.into_op_error(&call.label, &endpoint.addr));
            }
            None => {
                *slot = None;
                return Err(OpError::new(
                    ErrorKind::Timeout,
                    format!(
                        "{} on {}: no response within {limit:?}",
                        call.label, endpoint.addr
                    ),
                ));
            }
        };
        let answer = Answer { host, response };
        let ignored =
            matches!(call.expect, Expect::StatusOr(s) if s.contains(answer.response.status));
        if let Some(kind) = status_error(answer.response.status).filter(|_| !ignored) {
            return Err(OpError::new(
                kind,
                format!(
                    "{} answered {}: {}",
                    call.label,
                    answer.response.status,
                    response::error_summary(self.body(&answer))
                ),
            ));
        }
        Ok(answer)
    }
}

impl BackendClient for ElasticsearchClient {
    type Prepared = Prepared;

    async fn execute(&mut self, op: &Prepared, payload: &Payload<'_>) -> Result<Outcome, OpError> {
        match op {
            Prepared::Calls(calls) => {
                let mut outcome = Outcome {
                    units: 1,
                    ..Outcome::default()
                };
                for call in calls {
                    outcome = match call.poll {
                        Some(poll) => self.poll(call, poll).await?,
                        None => self.run(call, payload).await?,
                    };
                }
                Ok(outcome)
            }
            Prepared::Paged(p) => self.paged(p).await,
            Prepared::DeleteIndices(d) => self.delete_indices(d).await,
            Prepared::Guarded(g) => self.guarded(g, payload).await,
            Prepared::PolledMerge(m) => self.polled_merge(m).await,
            Prepared::Vectors(calls) => {
                let Payload::Vector(i) = payload else {
                    return Err(OpError::new(
                        ErrorKind::Internal,
                        "a vector search without its query",
                    ));
                };
                let call = calls.get(*i).ok_or_else(|| {
                    OpError::new(ErrorKind::Internal, format!("no query vector {i}"))
                })?;
                self.last_search = None;
                let host = self.next_host();
                let answer = self.send(call, host, None).await?;
                let outcome = self.finish(call, &answer, 0)?;
                self.last_search = Some(answer);
                Ok(outcome)
            }
        }
    }

    fn item_failure_reason(&mut self) -> Option<String> {
        self.last_item_failure.take()
    }

    fn hits_among(&mut self, truth: &[u64], k: usize) -> Option<u32> {
        let answer = self.last_search.as_ref()?;
        let mut found = 0;
        response::hit_ids(self.body(answer), k, |id| {
            found += u32::from(
                truth
                    .binary_search(&crate::ops::vector::id_hash(id))
                    .is_ok(),
            );
        });
        Some(found)
    }

    fn last_hit_ids(&mut self, out: &mut Vec<String>) -> bool {
        out.clear();
        let Some(answer) = self.last_search.as_ref() else {
            return false;
        };
        response::hit_ids(self.body(answer), usize::MAX, |id| {
            out.push(String::from_utf8_lossy(id).into_owned())
        });
        true
    }
}
