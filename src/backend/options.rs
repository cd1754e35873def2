//! `--client-options`: settings of a network backend's client (TLS, timeouts, credentials),
//! written as esrally takes them: `key:value,...` with `'quoted'` strings, numbers, `true`/
//! `false` and `None`, or a JSON object (inline or a `.json` file) of Rally's cluster names
//! (`{"default": {...}}`). Each backend takes the keys it knows; any left over are an error
//! naming them with the closest known key.

use std::collections::BTreeMap;
use std::path::Path;

#[derive(Clone, Default)]
pub struct ClientOptions {
    values: BTreeMap<String, String>,
    taken: Vec<&'static str>,
    /// Credentials from the environment, the credentials file, or Rally's credential options
    /// (moved here from `values`, which may be shown).
    pub credentials: super::credentials::Credentials,
}

/// Rally's credential options and the names runner keeps them under.
pub const RALLY_CREDENTIALS: [(&str, &str); 3] = [
    ("basic_auth_user", "RUNNER_ES_USERNAME"),
    ("basic_auth_password", "RUNNER_ES_PASSWORD"),
    ("api_key", "RUNNER_ES_API_KEY"),
];

/// The most bytes a `.json` client options file may hold.
const MAX_OPTIONS_FILE: u64 = 1 << 20;

impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Keys only: a value may be a secret the user typed under a name runner does not know.
        f.debug_struct("ClientOptions")
            .field("keys", &self.values.keys().collect::<Vec<_>>())
            .field("credentials", &self.credentials)
            .finish()
    }
}

impl ClientOptions {
    /// Rally's forms: `k:v,...`, an inline JSON object, or the path of a `.json` file.
    pub fn parse(text: &str) -> Result<ClientOptions, String> {
        let trimmed = text.trim();
        let values = if trimmed.starts_with('{') {
            from_json(trimmed, "--client-options")?
        } else if trimmed.ends_with(".json") {
            let path = Path::new(trimmed);
            let text = read_bounded(path)?;
            from_json(&text, &path.display().to_string())?
        } else {
            from_pairs(trimmed)?
        };
        Ok(ClientOptions {
            values,
            taken: Vec::new(),
            credentials: Default::default(),
        })
    }

    /// Moves Rally's credential options (`basic_auth_user`, `basic_auth_password`,
    /// `api_key`) out of the options, under the names the credentials keep them by.
    pub fn take_rally_credentials(&mut self) -> Vec<(&'static str, String)> {
        RALLY_CREDENTIALS
            .iter()
            .filter_map(|(option, name)| self.values.remove(*option).map(|v| (*name, v)))
            .collect()
    }

    /// An option's value, without taking it (what the track's Python client is handed).
    pub fn peek(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    pub fn string(&mut self, key: &'static str) -> Option<String> {
        self.taken.push(key);
        self.values.get(key).cloned()
    }

    /// One setting two names may give (Rally's and runner's own older one); both is an error.
    pub fn either(
        &mut self,
        rally: &'static str,
        ours: &'static str,
    ) -> Result<Option<String>, String> {
        match (self.string(rally), self.string(ours)) {
            (Some(_), Some(_)) => Err(format!(
                "client options `{rally}` and `{ours}` name the same setting; give one (`{rally}` is Rally's name)"
            )),
            (a, b) => Ok(a.or(b)),
        }
    }

    /// true or false, in any case (as Rally reads them).
    pub fn bool(&mut self, key: &'static str) -> Result<Option<bool>, String> {
        match self.string(key) {
            None => Ok(None),
            Some(v) => parse_bool(key, &v).map(Some),
        }
    }

    /// A whole number from 1.
    pub fn count(&mut self, key: &'static str) -> Result<Option<u64>, String> {
        match self.string(key) {
            None => Ok(None),
            Some(v) => match v.parse::<u64>() {
                Ok(n) if n > 0 => Ok(Some(n)),
                _ => Err(format!(
                    "client option `{key}` is a whole number from 1, not `{v}`"
                )),
            },
        }
    }

    /// Seconds above zero; `None` (Rally's word for no limit) is `Some(None)`.
    pub fn secs_or_none(
        &mut self,
        key: &'static str,
    ) -> Result<Option<Option<std::time::Duration>>, String> {
        match self.string(key).as_deref() {
            None => Ok(None),
            Some("None") => Ok(Some(None)),
            Some(v) => {
                let bad = || {
                    format!(
                        "client option `{key}` is a number of seconds above 0, or None, not `{v}`"
                    )
                };
                let secs = v.parse::<f64>().map_err(|_| bad())?;
                match crate::units::duration_from_secs(secs) {
                    Ok(d) if !d.is_zero() => Ok(Some(Some(d))),
                    Ok(_) => Err(bad()),
                    Err(m) => Err(format!("client option `{key}`: {m}")),
                }
            }
        }
    }

    pub fn secs(&mut self, key: &'static str) -> Result<Option<std::time::Duration>, String> {
        match self.secs_or_none(key)? {
            Some(None) => Err(format!(
                "client option `{key}` is a number of seconds above 0 here (None has no meaning)"
            )),
            other => Ok(other.flatten()),
        }
    }

    /// Fails on the first key no one took, naming the backend and the closest known key.
    pub fn finish(&self, backend: &str) -> Result<(), String> {
        match self
            .values
            .keys()
            .find(|k| !self.taken.contains(&k.as_str()))
        {
            None => Ok(()),
            Some(k) => {
                let hint = crate::suggest::did_you_mean(k, self.taken.iter().copied());
                let mut known: Vec<&str> = self.taken.clone();
                known.sort_unstable();
                known.dedup();
                Err(format!(
                    "--backend {backend} has no client option `{k}`{hint}; it knows {}",
                    known.join(", ")
                ))
            }
        }
    }
}

fn parse_bool(key: &str, v: &str) -> Result<bool, String> {
    match v.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("client option `{key}` is true or false, not `{v}`")),
    }
}

/// `k:v,...` as Rally's `kv_to_map` reads it: a value in single quotes is that string.
fn from_pairs(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut values = BTreeMap::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (k, v) = item.split_once(':').ok_or_else(|| {
            format!(
                "client option `{}` is not key:value (e.g. use_ssl:true)",
                shown_key(item)
            )
        })?;
        let v = v.trim();
        let v = v
            .strip_prefix('\'')
            .and_then(|s| s.strip_suffix('\''))
            .unwrap_or(v);
        insert(&mut values, k.trim(), v.to_string())?;
    }
    Ok(values)
}

/// What of a malformed item may be shown: up to a `=` or space (it may hold a secret).
fn shown_key(item: &str) -> &str {
    item.split(['=', ' ']).next().unwrap_or(item)
}

fn insert(values: &mut BTreeMap<String, String>, k: &str, v: String) -> Result<(), String> {
    if values.insert(k.to_string(), v).is_some() {
        return Err(format!("client option `{k}` is given twice"));
    }
    Ok(())
}

/// Rally's JSON form: `{"default": {...}}`; runner races one cluster, so other cluster names
/// are refused.
fn from_json(text: &str, source: &str) -> Result<BTreeMap<String, String>, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        format!(
            "{source}: not a JSON object of cluster names (line {}, column {})",
            e.line(),
            e.column()
        )
    })?;
    let clusters = value.as_object().ok_or_else(|| {
        format!("{source}: not a JSON object of cluster names such as {{\"default\": {{...}}}}")
    })?;
    if let Some(other) = clusters.keys().find(|k| *k != "default") {
        return Err(format!(
            "{source}: names the cluster `{other}`; runner races one cluster, `default` (multi-cluster races are not run)"
        ));
    }
    let options = clusters
        .get("default")
        .and_then(|v| v.as_object())
        .ok_or_else(|| format!("{source}: holds no `default` object of client options"))?;
    let mut values = BTreeMap::new();
    for (k, v) in options {
        let text = match v {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Bool(b) => b.to_string(),
            serde_json::Value::Number(n) => n.to_string(),
            serde_json::Value::Null => "None".into(),
            _ => {
                return Err(format!(
                    "{source}: client option `{k}` must be a string, number, boolean or null"
                ))
            }
        };
        insert(&mut values, k, text)?;
    }
    Ok(values)
}

/// A file a user named, read only if it is small (it holds a few options).
pub fn read_bounded(path: &Path) -> Result<String, String> {
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if meta.len() > MAX_OPTIONS_FILE {
        return Err(format!(
            "{} holds {} bytes; client options and hosts files hold at most {MAX_OPTIONS_FILE}",
            path.display(),
            meta.len()
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_takes_and_rejects_leftovers() {
        let mut o = ClientOptions::parse("tls:true, verify_certs:False,timeout:2.5").unwrap();
        assert_eq!(o.bool("tls"), Ok(Some(true)));
        assert_eq!(o.bool("verify_certs"), Ok(Some(false)));
        assert_eq!(
            o.secs("timeout"),
            Ok(Some(std::time::Duration::from_millis(2500)))
        );
        assert!(o.finish("redis").is_ok());
        let mut o = ClientOptions::parse("verify_cert:false").unwrap();
        o.bool("verify_certs").unwrap();
        assert!(o
            .finish("redis")
            .unwrap_err()
            .contains("did you mean `verify_certs`"));
        assert!(ClientOptions::parse("tls")
            .unwrap_err()
            .contains("key:value"));
        assert!(ClientOptions::parse("tls:yes")
            .unwrap()
            .bool("tls")
            .unwrap_err()
            .contains("true or false, not `yes`"));
    }

    #[test]
    fn reads_rallys_quoted_strings_none_and_credentials() {
        let mut o = ClientOptions::parse(
            "use_ssl:true,ca_certs:'/etc/ca.pem',basic_auth_user:'elastic',basic_auth_password:'s3cr:et',timeout:None",
        )
        .unwrap();
        assert_eq!(o.peek("ca_certs"), Some("/etc/ca.pem"));
        assert_eq!(o.secs_or_none("timeout"), Ok(Some(None)));
        let secrets = o.take_rally_credentials();
        assert_eq!(
            secrets,
            vec![
                ("RUNNER_ES_USERNAME", "elastic".to_string()),
                ("RUNNER_ES_PASSWORD", "s3cr:et".to_string())
            ]
        );
        assert!(o.peek("basic_auth_password").is_none());
        let shown = format!(
            "{:?}",
            ClientOptions::parse("basic_auth_password:'hunter22'").unwrap()
        );
        assert!(!shown.contains("hunter22"), "{shown}");
    }

    #[test]
    fn reads_rallys_json_form_of_one_cluster() {
        let o = ClientOptions::parse(
            r#"{"default": {"use_ssl": true, "timeout": 30, "ca_certs": "/x", "api_key": null}}"#,
        )
        .unwrap();
        assert_eq!(o.peek("use_ssl"), Some("true"));
        assert_eq!(o.peek("timeout"), Some("30"));
        assert_eq!(o.peek("api_key"), Some("None"));
        let e = ClientOptions::parse(r#"{"default": {}, "remote": {}}"#).unwrap_err();
        assert!(e.contains("`remote`") && e.contains("one cluster"), "{e}");
        assert!(ClientOptions::parse("{nope")
            .unwrap_err()
            .contains("line 1"));
    }

    #[test]
    fn a_malformed_item_is_named_without_its_value() {
        let e = ClientOptions::parse("basic_auth_password=hunter22").unwrap_err();
        assert!(
            e.contains("basic_auth_password") && !e.contains("hunter22"),
            "{e}"
        );
    }

    #[test]
    fn one_setting_under_two_names_is_refused() {
        let mut o = ClientOptions::parse("ca_certs:/a,tls_ca_file:/b").unwrap();
        assert!(o
            .either("ca_certs", "tls_ca_file")
            .unwrap_err()
            .contains("same setting"));
    }
}
