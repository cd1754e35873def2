//! A track's own Python (Rally's `track.py`, OpenSearch Benchmark's `workload.py`), run in
//! worker processes, never linked: param sources, custom runners, and what they register.
//!
//! A track with Python is probed when it loads ([`probe`]): the interpreter, its version and
//! the track's imports are checked, `register(registry)` runs, and each param source a task
//! uses is built and drawn from once, so that what is wrong is said before the race. The race
//! then starts its own workers ([`pool`]): param sources are drawn ahead in bounded batches,
//! off the measured path, and custom runners are called with the official client.

pub mod frames;
mod install;
pub mod pool;
pub mod probe;

use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use pool::{Pool, RunnerInput, RunnerReply};

/// Whose API the track's Python was written against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Rally: `track.py`, `esrally`, the `elasticsearch` client.
    Rally,
    /// OpenSearch Benchmark: `workload.py`, `osbenchmark`, the `opensearchpy` client.
    Osb,
}

impl Dialect {
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Rally => "rally",
            Dialect::Osb => "osb",
        }
    }

    /// The entry module Rally's (OSB's) component loader looks for.
    pub fn entry(self) -> &'static str {
        match self {
            Dialect::Rally => "track",
            Dialect::Osb => "workload",
        }
    }

    /// The Python client a custom runner is handed, as the worker's `kind`.
    pub fn client_kind(self) -> &'static str {
        match self {
            Dialect::Rally => "elasticsearch",
            Dialect::Osb => "opensearch",
        }
    }
}

/// What the track's `register(registry)` registered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Registry {
    pub param_sources: Vec<String>,
    pub runners: Vec<String>,
    pub schedulers: Vec<String>,
    pub track_processors: Vec<String>,
}

impl Registry {
    pub fn has_param_source(&self, name: &str) -> bool {
        self.param_sources.iter().any(|n| n == name)
    }

    pub fn has_runner(&self, name: &str) -> bool {
        self.runners.iter().any(|n| n == name)
    }
}

/// Turns one params dict a param source drew for its dialect's operation type into our
/// operation type and params: the front end's conversion (Rally's, for a Rally track), handed in
/// by it, so that the driver needs no front end.
pub type DrawnConversion =
    fn(&str, Map<String, Value>, &Path) -> Result<(String, Map<String, Value>), String>;

/// A track's Python as loaded, kept for the race's workers.
#[derive(Debug, Clone)]
pub struct TrackPython {
    pub interpreter: PathBuf,
    /// The track's directory: the component root Rally loads every module below.
    pub dir: PathBuf,
    pub dialect: Dialect,
    /// The `track` of the load request: the rendered track and what the model needs.
    pub spec: Value,
    pub registry: Registry,
    pub python_version: String,
    /// The installed esrally's version (OpenSearch Benchmark's for a workload); None where
    /// runner's stand-in serves.
    pub esrally: Option<String>,
    /// Rally's data root, which track processors prepare data below (`<home>/data`).
    pub data_root: Option<PathBuf>,
    /// The front end's conversion of drawn params.
    pub convert: DrawnConversion,
}

impl TrackPython {
    /// The load request each worker starts with.
    pub(crate) fn load_request(&self) -> Value {
        serde_json::json!({
            "t": "load",
            "dir": self.dir,
            "entry": self.dialect.entry(),
            "dialect": self.dialect.as_str(),
            "track": self.spec,
            "data_root": self.data_root,
        })
    }
}

/// Why a track's Python cannot run, said before the race (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum PythonError {
    #[error("cannot start the Python interpreter `{interpreter}`: {why}; install Python 3.8 or later, or name one with --python PATH")]
    NoInterpreter { interpreter: String, why: String },
    #[error("{what} needs Python 3.8 or later; `{interpreter}` is Python {version} (name another with --python PATH)")]
    TooOld {
        what: String,
        interpreter: String,
        version: String,
    },
    #[error("{what}: {message}")]
    Failed { what: String, message: String },
    #[error("{what}: the track's Python gave no answer within {}s (a param source or a runner that never returns?)", .after.as_secs())]
    Timeout { what: String, after: Duration },
    #[error("{0}")]
    Died(String),
}

/// How long one request to a worker may take before the worker is given up on: loading a
/// track, building a param source, one batch of draws. `RUNNER_PYTHON_TIMEOUT` (seconds)
/// changes it.
pub fn request_timeout() -> Duration {
    std::env::var("RUNNER_PYTHON_TIMEOUT")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(Duration::from_secs(120), Duration::from_secs_f64)
}

/// The interpreter a track's Python runs on: `--python`, else `python3` from PATH.
pub fn interpreter(given: Option<&Path>) -> PathBuf {
    given.map_or_else(|| PathBuf::from("python3"), Path::to_path_buf)
}

/// The pip package that provides a missing module, and the command that installs it with
/// this interpreter.
pub fn pip_hint(interpreter: &Path, module: &str) -> String {
    let package = match module {
        "esrally" => "esrally==2.13.0",
        "osbenchmark" => "opensearch-benchmark",
        "opensearchpy" => "opensearch-py",
        "elasticsearch" | "aiohttp" => "elasticsearch[async]",
        "yaml" => "pyyaml",
        "dateutil" => "python-dateutil",
        "sklearn" => "scikit-learn",
        other => other,
    };
    format!("{} -m pip install '{package}'", interpreter.display())
}

/// A worker's error reply as one line: the error, where in the track it was raised, and for
/// a missing module the pip command.
pub(crate) fn reply_error(interpreter: &Path, reply: &Value) -> String {
    let mut message = reply["error"].as_str().unwrap_or("failed").to_string();
    if let (Some(file), Some(line)) = (reply["at"]["file"].as_str(), reply["at"]["line"].as_u64()) {
        message = format!("{file}:{line}: {message}");
    }
    if let Some(module) = reply["missing"].as_str() {
        message.push_str(&format!("; install it: {}", pip_hint(interpreter, module)));
    }
    message
}

/// A worker's reply decoded: its JSON, or an error about `what` when it is none or says the
/// request failed.
pub(crate) fn ok_reply(interpreter: &Path, what: &str, frame: &[u8]) -> Result<Value, PythonError> {
    let reply: Value = serde_json::from_slice(frames::head_and_tail(frame).0).map_err(|e| {
        PythonError::Failed {
            what: what.into(),
            message: format!("the worker's reply is not JSON: {e}"),
        }
    })?;
    if reply["ok"] != serde_json::json!(true) {
        return Err(PythonError::Failed {
            what: what.into(),
            message: reply_error(interpreter, &reply),
        });
    }
    Ok(reply)
}

/// Whether a Python version (`3.11.7`) is one the worker runs on.
fn supported(version: &str) -> bool {
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (3, 8)
}

#[cfg(test)]
mod tests {
    #[test]
    fn versions_and_pip_hints() {
        assert!(super::supported("3.11.7"));
        assert!(super::supported("3.8.0"));
        assert!(!super::supported("3.7.9"));
        assert!(!super::supported("2.7.18"));
        let hint = super::pip_hint(std::path::Path::new("/v/bin/python"), "opensearchpy");
        assert_eq!(hint, "/v/bin/python -m pip install 'opensearch-py'");
    }
}
