//! delete-index as Rally's DeleteIndex runner sends it (a Rally track's, or a track of ours that
//! sets `only-if-exists`): `action.destructive_requires_name` lifted around the deletes (the
//! settings read and the setting put, before and after, as Rally's
//! `set_destructive_requires_name` does both times), and with `only-if-exists` a HEAD of each
//! index first, deleting those that exist; without, a DELETE that ignores a 404.

use super::request::{CallBuilder, Expect, HttpCall};
use super::ElasticsearchClient;
use crate::backend::{ErrorKind, OpError, Outcome};
use reqwest::Method;
use serde_json::{json, Value};

pub struct DeleteSequence {
    get_settings: HttpCall,
    put_settings: HttpCall,
    /// Per index: the HEAD (with `only-if-exists`) and the DELETE.
    indices: Vec<(Option<HttpCall>, HttpCall)>,
}

const SETTING: &str = "action.destructive_requires_name";

pub fn build(
    builder: &CallBuilder,
    names: &[String],
    only_if_exists: bool,
) -> Result<DeleteSequence, String> {
    let none: &[(String, String)] = &[];
    let flat = [("flat_settings".to_string(), "true".to_string())];
    let mut not_found = crate::ops::StatusSet::default();
    not_found.insert(404);
    let indices = names
        .iter()
        .map(|name| {
            let path = format!("/{}", super::request::escape_segment(name));
            let head = only_if_exists
                .then(|| builder.call(Method::HEAD, path.clone(), none, None, Expect::StatusOr(not_found)))
                .transpose()?;
            // Without `only-if-exists`, Rally's delete ignores a 404.
            let expect = if only_if_exists { Expect::Status } else { Expect::StatusOr(not_found) };
            let delete = builder.call(Method::DELETE, path, none, None, expect)?;
            Ok((head, delete))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(DeleteSequence {
        get_settings: builder.call(Method::GET, "/_cluster/settings".into(), &flat, None, Expect::Status)?,
        put_settings: builder.call(Method::PUT, "/_cluster/settings".into(), none, None, Expect::Status)?,
        indices,
    })
}

impl ElasticsearchClient {
    pub(super) async fn delete_indices(&mut self, d: &DeleteSequence) -> Result<Outcome, OpError> {
        let host = self.next_host();
        let answer = self.send(&d.get_settings, host, None).await?;
        let settings: Value = serde_json::from_slice(self.body(&answer)).map_err(|_| {
            OpError::new(ErrorKind::Protocol, format!("{}: the answer is not JSON", d.get_settings.label))
        })?;
        // Rally puts back the transient value it found (none: null, the default).
        let prior = settings.pointer("/transient").and_then(|t| t.get(SETTING)).cloned().unwrap_or(Value::Null);
        let lifted = json!({ "transient": { SETTING: false } }).to_string();
        self.send(&d.put_settings, host, Some(lifted.as_bytes())).await?;
        let deleted = self.delete_each(d, host).await;
        // Rally puts the setting back through the same function: it reads the settings again.
        let restore = json!({ "transient": { SETTING: prior } }).to_string();
        let restored = match self.send(&d.get_settings, host, None).await {
            Ok(_) => self.send(&d.put_settings, host, Some(restore.as_bytes())).await,
            Err(e) => Err(e),
        };
        let deleted = deleted?;
        restored?;
        Ok(Outcome { units: deleted.max(1), ..Outcome::default() })
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
