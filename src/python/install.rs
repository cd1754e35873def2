//! The worker's Python sources, built into the binary and written out once per version to a
//! directory of their own (named by a hash of their contents, so versions never mix).

use std::path::PathBuf;

/// `(path, text)` for each path below `py/`, the text built into the binary.
macro_rules! worker_files {
    ($($path:literal),* $(,)?) => {
        &[$(($path, include_str!(concat!("py/", $path)))),*]
    };
}

/// Each file's path below the directory, and its text (every `.py` under `py/`: a test checks).
const FILES: &[(&str, &str)] = worker_files!(
    "es_client.py",
    "runner_worker.py",
    "schedulers.py",
    "track_model.py",
    "standin/__init__.py",
    "standin/errors.py",
    "standin/io.py",
    "standin/loader.py",
    "standin/params.py",
    "standin/runners.py",
    "compat/esrally/__init__.py",
    "compat/esrally/exceptions.py",
    "compat/osbenchmark/__init__.py",
    "compat/osbenchmark/client.py",
    "compat/osbenchmark/exceptions.py",
    "compat/esrally/client/__init__.py",
    "compat/esrally/client/synchronous.py",
    "compat/esrally/driver/__init__.py",
    "compat/esrally/driver/runner.py",
    "compat/esrally/track/__init__.py",
    "compat/esrally/track/loader.py",
    "compat/esrally/track/params.py",
    "compat/esrally/track/track.py",
    "compat/esrally/utils/__init__.py",
    "compat/esrally/utils/io.py",
    "compat/esrally/utils/net.py",
    "compat/esrally/utils/opts.py",
    "compat/osbenchmark/utils/__init__.py",
    "compat/osbenchmark/utils/io.py",
    "compat/osbenchmark/utils/parse.py",
    "compat/osbenchmark/worker_coordinator/__init__.py",
    "compat/osbenchmark/worker_coordinator/runner.py",
    "compat/osbenchmark/workload/__init__.py",
    "compat/osbenchmark/workload/loader.py",
    "compat/osbenchmark/workload/params.py",
    "compat/osbenchmark/workload/workload.py",
);

/// The worker script, with its modules beside it; written when missing.
pub fn worker_script() -> std::io::Result<PathBuf> {
    // FNV-1a over every path and text: the directory changes with the sources.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (path, text) in FILES {
        for b in path.bytes().chain(text.bytes()) {
            hash = (hash ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    // SAFETY: getuid has no preconditions and cannot fail.
    let user = unsafe { libc::getuid() };
    let dir = std::env::temp_dir().join(format!("runner-python-{user}-{hash:016x}"));
    let script = dir.join("runner_worker.py");
    if script.is_file() {
        // A directory another user made in the shared temp dir is not run.
        use std::os::unix::fs::MetadataExt;
        if std::fs::metadata(&dir)?.uid() != user {
            return Err(std::io::Error::other(format!(
                "{} belongs to another user; remove it or set TMPDIR",
                dir.display()
            )));
        }
        return Ok(script);
    }
    // Written beside, then renamed into place: a concurrent runner sees all or nothing.
    let staging = std::env::temp_dir().join(format!(
        "runner-python-{user}-{hash:016x}.{}.tmp",
        std::process::id()
    ));
    for (path, text) in FILES {
        let file = staging.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&file, text)?;
    }
    match std::fs::rename(&staging, &dir) {
        Ok(()) => Ok(script),
        Err(_) if script.is_file() => {
            let _ = std::fs::remove_dir_all(&staging);
            Ok(script)
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    /// Every Python file of the worker is built in: one left out would be missing at run time.
    #[test]
    fn every_worker_file_is_built_in() {
        fn walk(dir: &std::path::Path, root: &std::path::Path, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, root, out);
                } else if path.extension().is_some_and(|e| e == "py") {
                    out.push(
                        path.strip_prefix(root)
                            .unwrap()
                            .to_string_lossy()
                            .into_owned(),
                    );
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/python/py");
        let mut on_disk = Vec::new();
        walk(&root, &root, &mut on_disk);
        on_disk.sort();
        let mut built: Vec<String> = super::FILES.iter().map(|(p, _)| p.to_string()).collect();
        built.sort();
        assert_eq!(on_disk, built);
    }
}
