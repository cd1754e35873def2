//! Rally's deletes. delete-index as Rally's DeleteIndex runner sends it (a Rally track's, or a
//! track of ours that sets `only-if-exists`): `action.destructive_requires_name` lifted around
//! the deletes (the settings read and the setting put, before and after, as Rally's
//! `set_destructive_requires_name` does both times), and with `only-if-exists` a HEAD of each
//! index first, deleting those that exist; without, a DELETE that ignores a 404. And raw
//! requests guarded the same way (Rally's template and data-stream deletes): a DELETE sent
//! only when the HEAD before it found its target, a wildcard delete with the setting lifted.

use super::request::{CallBuilder, Expect, HttpCall};
use super::ElasticsearchClient;
use crate::backend::{ErrorKind, OpError, Outcome, Payload};
use reqwest::Method;
use serde_json::{json, Value};

pub struct DeleteSequence {
    /// Rally lifts the setting around its deletes; OSB does not.
    lift: bool,
    settings: Settings,
    /// Per index: the HEAD (with `only-if-exists`) and the DELETE.
    indices: Vec<(Option<HttpCall>, HttpCall)>,
}

const SETTING: &str = "action.destructive_requires_name";

pub fn build(
    builder: &CallBuilder,
    names: &[String],
    only_if_exists: bool,
    lift: bool,
) -> Result<DeleteSequence, String> {
    let none: &[(String, String)] = &[];
    let mut not_found = crate::ops::StatusSet::default();
    not_found.insert(404);
    let indices = names
        .iter()
        .map(|name| {
            let path = format!("/{}", super::request::escape_segment(name));
            let head = only_if_exists
                .then(|| {
                    builder.call(
                        Method::HEAD,
                        path.clone(),
                        none,
                        None,
                        Expect::StatusOr(not_found),
                    )
                })
                .transpose()?;
            // Without `only-if-exists`, Rally's delete ignores a 404.
            let expect = if only_if_exists {
                Expect::Status
            } else {
                Expect::StatusOr(not_found)
            };
            let delete = builder.call(Method::DELETE, path, none, None, expect)?;
            Ok((head, delete))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(DeleteSequence {
        lift,
        settings: settings_calls(builder)?,
        indices,
    })
}

/// Calls run in order where some wait on the HEAD before them (`if_found`), delete by
/// wildcard (`destructive`: then the setting is lifted once before the first of those and
/// put back after the last call, as Rally's template deletes do), or page by cursor.
pub struct Guarded {
    calls: Vec<HttpCall>,
    settings: Settings,
}

/// The two calls that read and put `action.destructive_requires_name`.
struct Settings {
    get: HttpCall,
    put: HttpCall,
}

fn settings_calls(builder: &CallBuilder) -> Result<Settings, String> {
    let none: &[(String, String)] = &[];
    let flat = [("flat_settings".to_string(), "true".to_string())];
    Ok(Settings {
        get: builder.call(
            Method::GET,
            "/_cluster/settings".into(),
            &flat,
            None,
            Expect::Status,
        )?,
        put: builder.call(
            Method::PUT,
            "/_cluster/settings".into(),
            none,
            None,
            Expect::Status,
        )?,
    })
}

pub fn guard(builder: &CallBuilder, calls: Vec<HttpCall>) -> Result<Guarded, String> {
    Ok(Guarded {
        calls,
        settings: settings_calls(builder)?,
    })
}

impl ElasticsearchClient {
    /// Reads the setting's transient value and puts it false; returns the value read.
    async fn lift(&mut self, s: &Settings, host: usize) -> Result<Value, OpError> {
        let answer = self.send(&s.get, host, None).await?;
        let settings: Value = serde_json::from_slice(self.body(&answer)).map_err(|_| {
            OpError::new(
                ErrorKind::Protocol,
                format!("{}: the answer is not JSON", s.get.label),
            )
        })?;
        // Rally puts back the transient value it found (none: null, the default).
        let prior = settings
            .pointer("/transient")
            .and_then(|t| t.get(SETTING))
            .cloned()
            .unwrap_or(Value::Null);
        let lifted = json!({ "transient": { SETTING: false } }).to_string();
        self.send(&s.put, host, Some(lifted.as_bytes())).await?;
        Ok(prior)
    }

    /// Puts `prior` back, reading the settings first as Rally's same function does.
    async fn restore(&mut self, s: &Settings, host: usize, prior: Value) -> Result<(), OpError> {
        let restore = json!({ "transient": { SETTING: prior } }).to_string();
        self.send(&s.get, host, None).await?;
        self.send(&s.put, host, Some(restore.as_bytes())).await?;
        Ok(())
    }

    pub(super) async fn delete_indices(&mut self, d: &DeleteSequence) -> Result<Outcome, OpError> {
        let host = self.next_host();
        if !d.lift {
            let deleted = self.delete_each(d, host).await?;
            return Ok(Outcome {
                units: deleted.max(1),
                ..Outcome::default()
            });
        }
        let prior = self.lift(&d.settings, host).await?;
        let deleted = self.delete_each(d, host).await;
        let restored = self.restore(&d.settings, host, prior).await;
        let deleted = deleted?;
        restored?;
        Ok(Outcome {
            units: deleted.max(1),
            ..Outcome::default()
        })
    }

    pub(super) async fn guarded(
        &mut self,
        g: &Guarded,
        payload: &Payload<'_>,
    ) -> Result<Outcome, OpError> {
        let host = self.next_host();
        let mut lifted = None;
        let ran = self.guarded_calls(g, payload, host, &mut lifted).await;
        let restored = match lifted {
            Some(prior) => self.restore(&g.settings, host, prior).await,
            None => Ok(()),
        };
        let outcome = ran?;
        restored?;
        Ok(outcome)
    }

    async fn guarded_calls(
        &mut self,
        g: &Guarded,
        payload: &Payload<'_>,
        host: usize,
        lifted: &mut Option<Value>,
    ) -> Result<Outcome, OpError> {
        let mut outcome = Outcome {
            units: 1,
            ..Outcome::default()
        };
        let mut found = true;
        for call in &g.calls {
            if call.if_found && !found {
                continue;
            }
            if call.destructive && lifted.is_none() {
                *lifted = Some(self.lift(&g.settings, host).await?);
            }
            outcome = match call.poll {
                Some(poll) => self.poll(call, poll).await?,
                None if call.method == Method::HEAD => {
                    let answer = self.send(call, host, None).await?;
                    found = (200..300).contains(&answer.status());
                    self.finish(call, &answer, 0)?
                }
                None if call.cursor_pages > 1 => self.cursor_pages(call, host).await?,
                None => self.run(call, payload).await?,
            };
        }
        Ok(outcome)
    }

    /// The call, then the next pages by the cursor each answer gives, `cursor_pages` in all.
    async fn cursor_pages(&mut self, call: &HttpCall, host: usize) -> Result<Outcome, OpError> {
        let mut answer = self.send(call, host, None).await?;
        for page in 1..call.cursor_pages {
            let cursor = serde_json::from_slice::<Value>(self.body(&answer))
                .ok()
                .and_then(|v| v.get("cursor").cloned())
                .filter(Value::is_string)
                .ok_or_else(|| {
                    let left = call.cursor_pages - page;
                    OpError::new(ErrorKind::Unmet, format!("{}: Result set has been exhausted before all pages have been fetched, {left} page(s) remaining.", call.label))
                })?;
            let next = json!({ "cursor": cursor }).to_string();
            answer = self.send(call, host, Some(next.as_bytes())).await?;
        }
        self.finish(call, &answer, 0)?;
        Ok(Outcome {
            units: call.cursor_pages,
            requests: call.cursor_pages,
            ..Outcome::default()
        })
    }

    async fn delete_each(&mut self, d: &DeleteSequence, host: usize) -> Result<u64, OpError> {
        let mut deleted = 0;
        for (head, delete) in &d.indices {
            if let Some(head) = head {
                if self.send(head, host, None).await?.status() == 404 {
                    continue;
                }
            }
            self.send(delete, host, None).await?;
            deleted += 1;
        }
        Ok(deleted)
    }
}
