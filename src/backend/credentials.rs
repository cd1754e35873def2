//! Credentials of the network backends: an environment variable, else the credentials file,
//! which holds the same names (`RUNNER_ES_PASSWORD: ...`). The file is `$RUNNER_CREDENTIALS_FILE`,
//! else `credentials.yaml` in the results home; it must be readable by its owner only. Values
//! never reach race records, reports or logs, and `Debug` shows names only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The names a credentials file may hold.
pub const NAMES: [&str; 5] = [
    "RUNNER_ES_USERNAME",
    "RUNNER_ES_PASSWORD",
    "RUNNER_ES_API_KEY",
    "RUNNER_REDIS_USERNAME",
    "RUNNER_REDIS_PASSWORD",
];

#[derive(Clone, Default)]
pub struct Credentials {
    from_file: BTreeMap<String, String>,
    /// Rally's credential options (`basic_auth_password:...`), under the names above; they win
    /// over the environment and the file, as the command line names them for this race.
    from_options: BTreeMap<String, String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("from_file", &self.from_file.keys().collect::<Vec<_>>())
            .field(
                "from_options",
                &self.from_options.keys().collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Credentials {
    /// The file `$RUNNER_CREDENTIALS_FILE` names, else `home/credentials.yaml`.
    pub fn default_file(home: &Path) -> PathBuf {
        std::env::var_os("RUNNER_CREDENTIALS_FILE")
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join("credentials.yaml"))
    }

    /// Reads the file; none is no credentials. Refuses a file others can read, and unknown
    /// names (with the closest known one).
    pub fn load(file: &Path) -> Result<Credentials, String> {
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    && std::env::var_os("RUNNER_CREDENTIALS_FILE").is_none() =>
            {
                return Ok(Credentials::default())
            }
            Err(e) => {
                return Err(format!(
                    "cannot read the credentials file {}: {e}",
                    file.display()
                ))
            }
        };
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(file)
            .map(|m| m.permissions().mode())
            .unwrap_or(0);
        if mode & 0o077 != 0 {
            return Err(format!(
                "the credentials file {} can be read by others (mode {:o}); run `chmod 600 {}`",
                file.display(),
                mode & 0o777,
                file.display()
            ));
        }
        let parsed: BTreeMap<String, serde_yaml::Value> =
            serde_yaml::from_str(&text).map_err(|e| {
                // The parser's message may quote the text; say where only.
                let at = e
                    .location()
                    .map(|l| format!(":{}:{}", l.line(), l.column()))
                    .unwrap_or_default();
                format!(
                    "{}{at}: the credentials file is not a YAML mapping of NAME: value",
                    file.display()
                )
            })?;
        let mut from_file = BTreeMap::new();
        for (name, value) in parsed {
            if !NAMES.contains(&name.as_str()) {
                let hint = crate::suggest::did_you_mean(&name, NAMES);
                return Err(format!(
                    "{}: unknown name `{name}`{hint}; the file may hold {}",
                    file.display(),
                    NAMES.join(", ")
                ));
            }
            let value = match value {
                serde_yaml::Value::String(s) => s,
                serde_yaml::Value::Number(n) => n.to_string(),
                _ => return Err(format!("{}: `{name}` must be a string", file.display())),
            };
            from_file.insert(name, value);
        }
        Ok(Credentials {
            from_file,
            from_options: BTreeMap::new(),
        })
    }

    /// These credentials with those given as client options (`RUNNER_ES_PASSWORD` for
    /// `basic_auth_password`), which win.
    pub fn with_options(mut self, given: Vec<(&'static str, String)>) -> Credentials {
        self.from_options
            .extend(given.into_iter().map(|(k, v)| (k.to_string(), v)));
        self
    }

    /// A client option's value if given, else the environment variable `name` if set and not
    /// empty, else the file's value.
    pub fn get(&self, name: &str) -> Option<String> {
        let given = |m: &BTreeMap<String, String>| m.get(name).cloned().filter(|v| !v.is_empty());
        given(&self.from_options)
            .or_else(|| std::env::var(name).ok().filter(|v| !v.is_empty()))
            .or_else(|| given(&self.from_file))
    }

    /// What must never be stored or printed: every password and API key, and the forms a
    /// server may echo them in (base64 alone, and Basic auth's base64 of `user:password`).
    /// User names are not secrets (and `elastic` would blank out `elasticsearch`).
    pub fn redactor(&self) -> Redactor {
        use base64::Engine as _;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let mut secrets = Vec::new();
        for name in NAMES.into_iter().filter(|n| !n.ends_with("_USERNAME")) {
            if let Some(v) = self.get(name) {
                secrets.push(b64(&v));
                secrets.push(v);
            }
        }
        for (user, password) in [
            ("RUNNER_ES_USERNAME", "RUNNER_ES_PASSWORD"),
            ("RUNNER_REDIS_USERNAME", "RUNNER_REDIS_PASSWORD"),
        ] {
            if let (Some(u), Some(p)) = (self.get(user), self.get(password)) {
                secrets.push(b64(&format!("{u}:{p}")));
            }
        }
        // Longest first, so that a secret inside another is not replaced first; very short
        // values would blank out ordinary words and are left.
        secrets.retain(|s| s.chars().count() >= 4);
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Redactor { secrets }
    }
}

/// Replaces known secrets in text that is about to be stored or shown.
#[derive(Default, Clone)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.secrets.len())
    }
}

impl Redactor {
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), "[redacted]");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn secrets_and_their_encodings_are_redacted() {
        let (_d, f) = file("RUNNER_ES_USERNAME: elastic\nRUNNER_ES_PASSWORD: hunter22\nRUNNER_REDIS_PASSWORD: pw\n", 0o600);
        let r = Credentials::load(&f).unwrap().redactor();
        let echoed = "401: bad header Authorization: Basic ZWxhc3RpYzpodW50ZXIyMg== (password hunter22, aHVudGVyMjI=)";
        assert_eq!(
            r.redact(echoed),
            "401: bad header Authorization: Basic [redacted] (password [redacted], [redacted])"
        );
        assert_eq!(
            r.redact("--backend elasticsearch as elastic"),
            "--backend elasticsearch as elastic",
            "user names are not secrets"
        );
        assert_eq!(
            r.redact("pw is too short to redact safely"),
            "pw is too short to redact safely"
        );
    }

    fn file(text: &str, mode: u32) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("credentials.yaml");
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        (dir, p)
    }

    #[test]
    fn reads_known_names_and_hides_values_in_debug() {
        let (_d, p) = file("RUNNER_REDIS_PASSWORD: hunter2-unique\n", 0o600);
        let c = Credentials::load(&p).unwrap();
        assert_eq!(
            c.from_file.get("RUNNER_REDIS_PASSWORD").map(String::as_str),
            Some("hunter2-unique")
        );
        assert!(!format!("{c:?}").contains("hunter2"));
    }

    #[test]
    fn refuses_a_file_others_can_read_and_unknown_names() {
        let (_d, p) = file("RUNNER_REDIS_PASSWORD: x\n", 0o644);
        assert!(Credentials::load(&p).unwrap_err().contains("chmod 600"));
        let (_d, p) = file("RUNNER_REDIS_PASWORD: x\n", 0o600);
        assert!(Credentials::load(&p)
            .unwrap_err()
            .contains("did you mean `RUNNER_REDIS_PASSWORD`"));
        let (_d, p) = file("- secret-in-a-list\n", 0o600);
        let e = Credentials::load(&p).unwrap_err();
        assert!(!e.contains("secret-in-a-list"), "{e}");
    }
}
