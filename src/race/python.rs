//! The track's Python workers for a race that runs an operation they drive: started after the
//! backend opens (their client needs its address), stopped when the race ends. On the embedded
//! backend, custom runners reach the race's own engine through a loopback `runner serve`.

use super::RaceError;
use crate::backend::{Backend, BackendKind, ClientOptions};
use crate::ops::OpSpec;
use crate::plan::{Plan, Step};
use crate::python::{Pool, TrackPython};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The workers, and the loopback server their runners use (stopped when this is dropped).
pub(super) struct PythonRun {
    pub pool: Arc<Pool>,
    server: Option<CancellationToken>,
}

impl Drop for PythonRun {
    fn drop(&mut self) {
        if let Some(s) = &self.server {
            s.cancel();
        }
    }
}

/// What the plan asks of the track's Python: whether any operation needs it, whether one is
/// a custom runner, and the most clients a task runs.
fn needs(plan: &Plan) -> (bool, bool, u64) {
    let (mut any, mut runner, mut clients) = (false, false, 0);
    for step in &plan.steps {
        let (Step::Run { leaves }
        | Step::Reset {
            operations: leaves, ..
        }) = step;
        for leaf in leaves {
            if let OpSpec::Python(p) = &leaf.spec {
                any = true;
                runner |= p.runner.is_some();
                clients = clients.max(leaf.clients);
            }
        }
    }
    (any, runner, clients)
}

pub(super) async fn start<B: Backend>(
    backend: &Arc<B>,
    python: Option<&Arc<TrackPython>>,
    plan: &Plan,
    opts: &crate::request::RaceRequest,
) -> Result<Option<PythonRun>, RaceError> {
    let (any, runner, clients) = needs(plan);
    if !any {
        return Ok(None);
    }
    let Some(python) = python else {
        return Err(RaceError::Unsupported(
            "the track has `python` operations but no track.py to run them".into(),
        ));
    };
    let mut server = None;
    let client = if runner {
        let hosts = match backend.embedded_engine() {
            Some(engine) => {
                let (token, addr) = loopback(engine).await?;
                server = Some(token);
                vec![format!("http://{addr}")]
            }
            None if opts.backend == BackendKind::Elasticsearch => {
                hosts_of(&opts.target_hosts, &opts.client_options)?
            }
            None => {
                return Err(RaceError::Unsupported(format!(
                    "custom runners are handed an Elasticsearch client; --backend {} has none",
                    opts.backend.as_str()
                )))
            }
        };
        Some(json!({
            "kind": python.dialect.client_kind(),
            "hosts": hosts,
            "options": client_options(&opts.client_options),
        }))
    } else {
        None
    };
    let count = workers(clients);
    let pool = Pool::start(python.clone(), count, client)
        .await
        .map_err(|e| RaceError::Unsupported(e.to_string()))?;
    if !opts.quiet {
        eprintln!(
            "track.py: {} Python worker{} ({})",
            pool.size(),
            if pool.size() == 1 { "" } else { "s" },
            python.interpreter.display()
        );
    }
    Ok(Some(PythonRun {
        pool: Arc::new(pool),
        server,
    }))
}

/// Workers: one per core (`RUNNER_PYTHON_WORKERS` sets another count), never more than the
/// clients of the busiest task.
fn workers(clients: u64) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let wanted = std::env::var("RUNNER_PYTHON_WORKERS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(cores);
    wanted.min(clients.max(1) as usize).max(1)
}

/// `runner serve` over the race's engine on a loopback port.
async fn loopback(
    engine: engine::Engine,
) -> Result<(CancellationToken, std::net::SocketAddr), RaceError> {
    let token = CancellationToken::new();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let opts = crate::serve::ServeOptions {
        addr: ([127, 0, 0, 1], 0).into(),
        stub: false,
        log_requests: false,
        record: None,
        tls: None,
        limits: Default::default(),
        storage: Default::default(),
        home: std::path::PathBuf::new(),
    };
    let cancel = token.clone();
    tokio::spawn(async move {
        let mut tx = Some(tx);
        let served = crate::serve::serve_engine(engine, opts, cancel, |addr| {
            if let Some(tx) = tx.take() {
                let _ = tx.send(Ok(addr));
            }
        })
        .await;
        if let (Err(e), Some(tx)) = (served, tx) {
            let _ = tx.send(Err(e.to_string()));
        }
    });
    match rx.await {
        Ok(Ok(addr)) => Ok((token, addr)),
        Ok(Err(e)) => Err(RaceError::Backend(format!(
            "cannot serve the engine on a loopback port for the track's runners: {e}"
        ))),
        Err(_) => Err(RaceError::Backend(
            "the loopback server for the track's runners did not start".into(),
        )),
    }
}

/// The race's hosts as URLs the Python client takes (`use_ssl` or a `https://` host: TLS).
fn hosts_of(hosts: &[String], options: &ClientOptions) -> Result<Vec<String>, RaceError> {
    let tls = matches!(options.peek("use_ssl"), Some(v) if v.eq_ignore_ascii_case("true"));
    crate::backend::elasticsearch::host_urls(hosts, tls).map_err(RaceError::Unsupported)
}

/// Rally's client options for the Python client: the race's own (Rally's names, or runner's
/// older ones translated), and its credentials (from the options, the environment or the
/// credentials file; they travel only down the worker's pipe).
fn client_options(options: &ClientOptions) -> Value {
    let mut out = Map::new();
    let flag = |v: &str| v.eq_ignore_ascii_case("true");
    match options.peek("timeout") {
        Some("None") => {
            out.insert("timeout".into(), Value::Null);
        }
        Some(t) => {
            if let Ok(t) = t.parse::<f64>() {
                out.insert("timeout".into(), json!(t));
            }
        }
        None => {}
    }
    for key in ["use_ssl", "verify_certs"] {
        if let Some(v) = options.peek(key) {
            out.insert(key.into(), json!(flag(v)));
        }
    }
    if let Some(v) = options
        .peek("http_compress")
        .or(options.peek("compression"))
    {
        out.insert("http_compress".into(), json!(flag(v)));
    }
    for (rally, ours) in [
        ("ca_certs", "tls_ca_file"),
        ("client_cert", "tls_cert_file"),
        ("client_key", "tls_key_file"),
    ] {
        if let Some(v) = options.peek(rally).or(options.peek(ours)) {
            out.insert(rally.into(), json!(v));
        }
    }
    let secret = |k: &str| options.credentials.get(k);
    if let Some(key) = secret("RUNNER_ES_API_KEY") {
        out.insert("api_key".into(), json!(key));
    } else if let (Some(user), Some(password)) =
        (secret("RUNNER_ES_USERNAME"), secret("RUNNER_ES_PASSWORD"))
    {
        out.insert("basic_auth_user".into(), json!(user));
        out.insert("basic_auth_password".into(), json!(password));
    }
    Value::Object(out)
}
