//! `--client-options key:value,...`: settings of a network backend's client (TLS, timeouts).
//! Each backend takes the keys it knows; any left over are an error with a suggestion.

use std::collections::BTreeMap;

#[derive(Debug, Clone, Default)]
pub struct ClientOptions {
    values: BTreeMap<String, String>,
    taken: Vec<&'static str>,
    /// Credentials from the environment or the credentials file (never from these options,
    /// which are recorded).
    pub credentials: super::credentials::Credentials,
}

impl ClientOptions {
    pub fn parse(text: &str) -> Result<ClientOptions, String> {
        let mut values = BTreeMap::new();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (k, v) = item.split_once(':').ok_or_else(|| {
                format!("client option `{item}` is not key:value (e.g. tls:true)")
            })?;
            if values
                .insert(k.trim().to_string(), v.trim().to_string())
                .is_some()
            {
                return Err(format!("client option `{}` is given twice", k.trim()));
            }
        }
        Ok(ClientOptions {
            values,
            taken: Vec::new(),
            credentials: Default::default(),
        })
    }

    /// An option's value, without taking it (what the track's Python client is handed).
    pub fn peek(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    pub fn string(&mut self, key: &'static str) -> Option<String> {
        self.taken.push(key);
        self.values.get(key).cloned()
    }

    pub fn bool(&mut self, key: &'static str) -> Result<Option<bool>, String> {
        match self.string(key).as_deref() {
            None => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(other) => Err(format!(
                "client option `{key}` is true or false, not `{other}`"
            )),
        }
    }

    pub fn secs(&mut self, key: &'static str) -> Result<Option<std::time::Duration>, String> {
        match self.string(key) {
            None => Ok(None),
            Some(v) => {
                let secs = v.parse::<f64>().map_err(|_| {
                    format!("client option `{key}` is a number of seconds above 0, not `{v}`")
                })?;
                match crate::units::duration_from_secs(secs) {
                    Ok(d) if !d.is_zero() => Ok(Some(d)),
                    Ok(_) => Err(format!(
                        "client option `{key}` is a number of seconds above 0, not `{v}`"
                    )),
                    Err(m) => Err(format!("client option `{key}`: {m}")),
                }
            }
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
                Err(format!(
                    "--backend {backend} has no client option `{k}`{hint}; it knows {}",
                    self.taken.join(", ")
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_takes_and_rejects_leftovers() {
        let mut o = ClientOptions::parse("tls:true, verify_certs:false,timeout:2.5").unwrap();
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
            .is_err());
    }
}
