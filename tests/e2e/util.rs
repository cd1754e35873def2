//! A small harness: a temporary RUNNER_HOME, the binary, and readers of what it stored.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Env {
    pub home: tempfile::TempDir,
}

/// geonames' tasks that index its test-mode corpus and search it once: a quick race.
pub const GEONAMES_INDEX_AND_SEARCH: &str =
    "delete-index,create-index,index-append,refresh,search-sankt-georgen";

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

impl Env {
    pub fn new() -> Env {
        Env {
            home: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(runner_bin());
        c.args(args)
            .env("RUNNER_HOME", self.home.path())
            .env("RUNNER_TRACKS_DIR", repo().join("tracks"))
            // esrally's settings (rally.ini: its cores, its corpora) are the test's, not the
            // machine's.
            .env("RALLY_HOME", self.home.path())
            .current_dir(repo());
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("runner runs")
    }

    /// Runs and insists on success, returning stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "runner {args:?} failed: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8 stdout")
    }

    pub fn race_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(self.home.path().join("races"))
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        dirs.sort();
        dirs
    }

    pub fn only_race(&self) -> serde_json::Value {
        let dirs = self.race_dirs();
        assert_eq!(dirs.len(), 1, "expected one stored race, found {dirs:?}");
        read_json(&dirs[0].join("race.json"))
    }
}

/// The binary under test: this build's, or `RUNNER_TEST_BIN` (a release build, for the
/// ignored tests that race real corpora, such as `docs_screenshots`).
pub fn runner_bin() -> PathBuf {
    std::env::var_os("RUNNER_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_runner")))
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("readable")).expect("valid JSON")
}

/// Writes a track directory with the given files and returns its path.
pub fn track_dir(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

pub fn tasks<'a>(race: &'a serde_json::Value, name: &str) -> Vec<&'a serde_json::Value> {
    race["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["task"] == name)
        .collect()
}

/// Races the track text `track` with `args` after `race --track-path DIR --quiet`.
pub fn race_track(track: &str, args: &[&str]) -> (Env, std::process::Output) {
    let dir = track_dir(&[("track.yaml", track)]);
    let env = Env::new();
    let mut all = vec![
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ];
    all.extend_from_slice(args);
    let out = env.run(&all);
    (env, out)
}

/// A loopback server for fault injection: each connection goes to `handle` on its own thread.
/// When a handler sets the flag it is given, the server stops listening, so that every later
/// connection is refused. Returns the port.
pub fn fault_listener<F>(handle: F) -> u16
where
    F: Fn(std::net::TcpStream, &std::sync::atomic::AtomicBool) + Send + Sync + 'static,
{
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Polled, so that the listener can be dropped when a handler asks for it.
    listener.set_nonblocking(true).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let handle = Arc::new(handle);
    std::thread::spawn(move || {
        while !stop.load(Ordering::SeqCst) {
            let Ok((stream, _)) = listener.accept() else {
                std::thread::sleep(std::time::Duration::from_millis(2));
                continue;
            };
            stream.set_nonblocking(false).unwrap();
            let (stop, handle) = (stop.clone(), handle.clone());
            std::thread::spawn(move || handle(stream, &stop));
        }
    });
    port
}

/// The body of a plain HTTP/1.1 request's answer (one connection, closed after).
pub fn http_body(port: u16, method: &str, path: &str, body: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text.split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_string()
}

/// One HTTP/1.1 request from a loopback server's connection: its request line and body
/// (by `content-length`); None when the client has closed it.
pub fn read_http_request(reader: &mut impl std::io::BufRead) -> Option<(String, Vec<u8>)> {
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return None;
    }
    let mut length = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 {
            return None;
        }
        if h == "\r\n" {
            break;
        }
        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    Some((line, body))
}

/// A loopback server answering every request 200 with the JSON `answer` gives for its request
/// line and body (`GET /` needs a version for the elasticsearch backend's start-up check).
pub fn json_server<F>(answer: F) -> u16
where
    F: Fn(&str, Vec<u8>) -> String + Send + Sync + 'static,
{
    fault_listener(move |stream, _| {
        use std::io::Write;
        let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
        let mut stream = stream;
        while let Some((line, body)) = read_http_request(&mut reader) {
            let answer = answer(&line, body);
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
                answer.len()
            );
            if stream.write_all(reply.as_bytes()).is_err() {
                return;
            }
        }
    })
}

/// The shared Rally tracks' folder (`../shared/rally-tracks`, RUNNER_TEST_RALLY_TRACKS), laid
/// out anew in a temporary folder with the project's own Python beside the tracks that need it
/// (tests/fixtures/rally-own-python): the shared folder holds data only, never a track's
/// third-party `track.py`. `tracks` are paths under the shared folder (`elastic/geonames`);
/// `tools/` comes along.
pub fn shared_tracks_with_own_python(tracks: &[&str]) -> Option<tempfile::TempDir> {
    let shared = PathBuf::from(std::env::var_os("RUNNER_TEST_RALLY_TRACKS")?);
    let out = tempfile::tempdir().expect("temp dir");
    let own = repo().join("tests/fixtures/rally-own-python");
    for rel in tracks.iter().copied().chain(["tools"]) {
        copy_tree(&shared.join(rel), &out.path().join(rel));
        let python = own.join(rel);
        if python.is_dir() {
            copy_tree(&python, &out.path().join(rel));
        }
    }
    Some(out)
}

/// Copies the folder `from` into `to`, recursively (files overwritten).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The Python with the official clients (RUNNER_TEST_CLIENTS_PYTHON, which `.ci/run` sets);
/// None, said, outside CI.
pub fn clients_python() -> Option<String> {
    match std::env::var("RUNNER_TEST_CLIENTS_PYTHON") {
        Ok(p) => Some(p),
        Err(_) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must provide the clients (RUNNER_TEST_CLIENTS_PYTHON, see .ci/run)"
            );
            eprintln!("NOT CHECKED: no Python with the official clients (RUNNER_TEST_CLIENTS_PYTHON; .ci/run sets it)");
            None
        }
    }
}

/// esrally refuses to race while any Python whose command line names esrally runs, and its
/// venv's own path does: every test that starts esrally, or a Python of its venv (track.py
/// workers, the corpus generator, the model comparison), holds this while it runs.
pub fn esrally_venv_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}
