//! The check made when a track with Python loads, before any race: one worker, spoken to
//! synchronously, that imports the track, runs its `register`, builds each param source a
//! task uses and draws from it once. Every failure is an error naming the track's file and line
//! (or the module to install); nothing waits longer than [`super::request_timeout`].

use super::{frames, Dialect, PythonError, Registry, TrackPython};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a track's processors may take to prepare its data (generate a corpus, say).
const PREPARE_TIMEOUT: Duration = Duration::from_secs(3600);

/// Lines of a worker's standard error kept to explain its death.
pub(crate) const STDERR_TAIL: usize = 20;

/// One worker, spoken to synchronously; killed when dropped.
pub struct Session {
    interpreter: PathBuf,
    child: Child,
    stdin: ChildStdin,
    replies: mpsc::Receiver<std::io::Result<Option<Vec<u8>>>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    next_rid: u64,
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How a worker process is started, for the probe and for the race's workers alike.
pub(crate) fn command(interpreter: &Path) -> Result<Command, PythonError> {
    let script = super::install::worker_script().map_err(|e| PythonError::Failed {
        what: "runner's Python worker".into(),
        message: format!("cannot write its files: {e}"),
    })?;
    let mut cmd = Command::new(interpreter);
    // -B: loading a track writes no __pycache__ into the track's directory.
    cmd.arg("-B")
        .arg(script)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    use std::os::unix::process::CommandExt;
    // SAFETY: prctl is async-signal-safe; the worker dies with runner, even when runner is
    // killed outright.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    Ok(cmd)
}

/// Forwards a worker's standard error, each line prefixed, keeping the last lines.
pub(crate) fn forward_stderr(
    stderr: impl std::io::Read + Send + 'static,
    label: String,
    tail: Arc<Mutex<VecDeque<String>>>,
) {
    std::thread::spawn(move || {
        let reader = std::io::BufReader::new(stderr);
        for line in reader.split(b'\n') {
            let Ok(line) = line else { break };
            // A line is cut at 4 KiB: a track printing megabytes keeps runner's memory flat.
            let text = String::from_utf8_lossy(&line[..line.len().min(4096)]).into_owned();
            eprintln!("{label}: {text}");
            let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
            if t.len() == STDERR_TAIL {
                t.pop_front();
            }
            t.push_back(text);
        }
    });
}

impl Session {
    pub fn start(interpreter: &Path) -> Result<Session, PythonError> {
        let mut child = command(interpreter)?
            .spawn()
            .map_err(|e| PythonError::NoInterpreter {
                interpreter: interpreter.display().to_string(),
                why: e.to_string(),
            })?;
        let (Some(stdin), Some(mut stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(PythonError::Died(
                "the worker's pipes were not opened".into(),
            ));
        };
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        forward_stderr(stderr, "track.py".into(), tail.clone());
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || loop {
            let frame = frames::read_sync(&mut stdout);
            let end = !matches!(frame, Ok(Some(_)));
            if tx.send(frame).is_err() || end {
                break;
            }
        });
        Ok(Session {
            interpreter: interpreter.to_path_buf(),
            child,
            stdin,
            replies,
            stderr: tail,
            next_rid: 1,
        })
    }

    /// Sends `msg` and waits for its reply; an error reply is a [`PythonError::Failed`]
    /// about `what`.
    pub fn request(&mut self, msg: Value, what: &str) -> Result<Value, PythonError> {
        self.request_within(msg, what, super::request_timeout())
    }

    fn request_within(
        &mut self,
        msg: Value,
        what: &str,
        timeout: Duration,
    ) -> Result<Value, PythonError> {
        let frame = self.request_frame(msg, what, timeout)?;
        super::ok_reply(&self.interpreter, what, &frame)
    }

    /// A request's whole reply frame (drawn params follow its head), checked to be no error.
    fn request_frame(
        &mut self,
        mut msg: Value,
        what: &str,
        timeout: Duration,
    ) -> Result<Vec<u8>, PythonError> {
        let rid = self.next_rid;
        self.next_rid += 1;
        msg["rid"] = json!(rid);
        let body = serde_json::to_vec(&msg).map_err(|e| PythonError::Failed {
            what: what.into(),
            message: e.to_string(),
        })?;
        if let Err(e) = frames::write_sync(&mut self.stdin, &body) {
            return Err(self.died(what, &e.to_string()));
        }
        let frame = match self.replies.recv_timeout(timeout) {
            Ok(Ok(Some(frame))) => frame,
            Ok(Ok(None)) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(self.died(what, "it exited"))
            }
            Ok(Err(e)) => return Err(self.died(what, &e.to_string())),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                return Err(PythonError::Timeout {
                    what: what.into(),
                    after: timeout,
                })
            }
        };
        super::ok_reply(&self.interpreter, what, &frame)?;
        Ok(frame)
    }

    fn died(&mut self, what: &str, how: &str) -> PythonError {
        // Give the process a moment to end, so its status and last words are known.
        std::thread::sleep(Duration::from_millis(100));
        let status = match self.child.try_wait() {
            Ok(Some(s)) => s.to_string(),
            _ => "it was still running".into(),
        };
        let tail = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        let last: Vec<&str> = tail.iter().map(String::as_str).collect();
        PythonError::Died(format!(
            "{what}: the Python worker failed ({how}; {status}){}",
            if last.is_empty() {
                String::new()
            } else {
                format!("; its last words: {}", last.join(" | "))
            }
        ))
    }
}

/// A param source a task uses: which operation, which source, with which params.
#[derive(Debug, Clone)]
pub struct SourceUse {
    pub operation: String,
    pub source: String,
    pub params: Value,
    /// A custom runner takes the params in the worker: they are drawn and checked, not sent.
    pub for_runner: bool,
}

/// What one draw from a freshly built source showed.
#[derive(Debug, Clone)]
pub struct SourceSample {
    pub infinite: bool,
    pub size: Option<u64>,
    /// The first params it gives; None when it ended at once.
    pub first: Option<Value>,
}

/// Loads the track's Python in a worker: the interpreter is started, its version checked,
/// the track imported and registered. The session is kept for [`Session::sample`].
pub fn load(
    interpreter: &Path,
    dir: &Path,
    dialect: Dialect,
    spec: Value,
    data_root: Option<&Path>,
    convert: super::DrawnConversion,
) -> Result<(Session, TrackPython), PythonError> {
    let what = "it does not load".to_string();
    let mut session = Session::start(interpreter)?;
    let mut python = TrackPython {
        interpreter: interpreter.to_path_buf(),
        dir: dir.to_path_buf(),
        dialect,
        spec,
        registry: Registry::default(),
        python_version: String::new(),
        esrally: None,
        data_root: data_root.map(Path::to_path_buf),
        convert,
    };
    let reply = session.request(python.load_request(), &what);
    // An interpreter too old to run the worker fails in the load: say so rather than its error.
    let version = version_of(interpreter);
    if let Some(v) = version.as_deref().filter(|v| !super::supported(v)) {
        return Err(PythonError::TooOld {
            what: format!("{}/{}.py", dir.display(), dialect.entry()),
            interpreter: interpreter.display().to_string(),
            version: v.to_string(),
        });
    }
    let reply = reply?;
    let names = |key: &str| -> Vec<String> {
        reply[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    };
    python.registry = Registry {
        param_sources: names("param_sources"),
        runners: names("runners"),
        schedulers: names("schedulers"),
        track_processors: names("track_processors"),
    };
    python.python_version = reply["python"].as_str().unwrap_or_default().to_string();
    python.esrally = reply["esrally"].as_str().map(str::to_string);
    Ok((session, python))
}

/// `python --version`, for the one check that must not rely on the worker running.
fn version_of(interpreter: &Path) -> Option<String> {
    let out = Command::new(interpreter)
        .arg("-c")
        .arg("import sys; print('%d.%d.%d' % sys.version_info[:3])")
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.trim().to_string()).filter(|t| !t.is_empty())
}

impl Session {
    /// Builds `u`'s param source as client 0 of 1 and draws its first params.
    pub fn sample(&mut self, u: &SourceUse) -> Result<SourceSample, PythonError> {
        let what = format!("operation `{}`: param source `{}`", u.operation, u.source);
        let sid = self.next_rid;
        let built = self.request(
            json!({"t": "source", "sid": sid, "name": u.source, "params": u.params, "clients": [0], "total": 1}),
            &what,
        )?;
        let first = self.request_frame(
            json!({"t": "draw", "sid": sid, "client": 0, "n": 1, "check": u.for_runner}),
            &what,
            super::request_timeout(),
        )?;
        let _ = self.request(json!({"t": "close-source", "sid": sid}), &what);
        let failed = |message| PythonError::Failed {
            what: what.clone(),
            message,
        };
        let first = match super::pool::drawn(first, &what)?.1.first() {
            Some(drawn) => Some(drawn.to_value().map_err(failed)?),
            None => None,
        };
        let client = &built["clients"][0];
        Ok(SourceSample {
            infinite: client["infinite"].as_bool().unwrap_or(true),
            size: client["size"].as_u64(),
            first,
        })
    }

    /// The track processors' `on_prepare_track` jobs, all in this worker: as Rally's race
    /// prepares the track (generated data, say) before it builds param sources, so that the
    /// sources checked here find what they read.
    pub fn prepare(&mut self, data_root: Option<&Path>) -> Result<(), PythonError> {
        self.request_within(
            json!({"t": "prepare", "data_root": data_root, "index": 0, "count": 1}),
            "the track processors' on_prepare_track",
            PREPARE_TIMEOUT,
        )
        .map(drop)
    }

    /// Whether the Python client custom runners are handed can be imported; the pip
    /// command when not.
    pub fn check_client(&mut self, dialect: Dialect, why: &str) -> Result<(), PythonError> {
        let reply = self.request(
            json!({"t": "check-client", "kind": dialect.client_kind()}),
            why,
        )?;
        match reply["missing"].as_str() {
            None => Ok(()),
            Some(module) => Err(PythonError::Failed {
                what: why.into(),
                message: format!(
                    "custom runners are handed the `{module}` client, which `{}` cannot import; install it: {}",
                    self.interpreter.display(),
                    super::pip_hint(&self.interpreter, module)
                ),
            }),
        }
    }
}
