//! The worker's Python sources, built into the binary and written out once per version to a
//! directory of their own (named by a hash of their contents, so versions never mix).

use std::path::PathBuf;

/// Each file's path below the directory, and its text.
const FILES: &[(&str, &str)] = &[
    ("runner_worker.py", include_str!("py/runner_worker.py")),
    ("es_client.py", include_str!("py/es_client.py")),
    ("track_model.py", include_str!("py/track_model.py")),
    ("schedulers.py", include_str!("py/schedulers.py")),
    (
        "compat/esrally/__init__.py",
        include_str!("py/compat/esrally/__init__.py"),
    ),
    (
        "compat/esrally/exceptions.py",
        include_str!("py/compat/esrally/exceptions.py"),
    ),
    (
        "compat/esrally/utils/__init__.py",
        include_str!("py/compat/esrally/utils/__init__.py"),
    ),
    (
        "compat/esrally/utils/io.py",
        include_str!("py/compat/esrally/utils/io.py"),
    ),
    (
        "compat/esrally/driver/__init__.py",
        include_str!("py/compat/esrally/driver/__init__.py"),
    ),
    (
        "compat/esrally/driver/runner.py",
        include_str!("py/compat/esrally/driver/runner.py"),
    ),
    (
        "compat/esrally/track/__init__.py",
        include_str!("py/compat/esrally/track/__init__.py"),
    ),
    (
        "compat/esrally/track/params.py",
        include_str!("py/compat/esrally/track/params.py"),
    ),
    (
        "compat/esrally/track/loader.py",
        include_str!("py/compat/esrally/track/loader.py"),
    ),
];

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
