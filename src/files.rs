//! Reading a track's own text files (the track, its includes, index bodies, parameter files)
//! and resolving their names inside the track's directory:
//! regular files only, read within a bound. A FIFO or a device would block the load forever,
//! and a huge file would be read whole before any size check could refuse it.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// The most bytes one of a track's text files may hold.
pub const MAX_TEXT_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// What a path is, when it is not a regular file, for messages.
pub fn not_a_file(path: &Path) -> Option<&'static str> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_file() {
        return None;
    }
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    Some(if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    })
}

/// The bytes of a regular file of at most [`MAX_TEXT_FILE_BYTES`]. A missing file keeps its
/// `NotFound` kind; anything else is `InvalidInput` with the reason.
pub fn read_bytes(path: &Path) -> std::io::Result<Vec<u8>> {
    let invalid = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, m);
    if let Some(what) = not_a_file(path) {
        return Err(invalid(format!("it is {what}, not a regular file")));
    }
    let file = std::fs::File::open(path)?;
    if file.metadata()?.len() > MAX_TEXT_FILE_BYTES {
        return Err(invalid(format!(
            "it is larger than {} MB, the limit for a track's files",
            MAX_TEXT_FILE_BYTES >> 20
        )));
    }
    // The bound holds even if the file grows while it is read.
    let mut bytes = Vec::new();
    file.take(MAX_TEXT_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_TEXT_FILE_BYTES {
        return Err(invalid(format!(
            "it is larger than {} MB, the limit for a track's files",
            MAX_TEXT_FILE_BYTES >> 20
        )));
    }
    Ok(bytes)
}

/// [`read_bytes`] as UTF-8 text.
pub fn read_text(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_bytes(path)?).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("it is not UTF-8 text ({e})"),
        )
    })
}

/// The names of the folders in `root` holding a file `file` (tracks: `track.yaml`,
/// `track.json`), sorted; none where `root` cannot be read.
pub fn folders_holding(root: &Path, file: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join(file).is_file())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    names.sort();
    names
}

/// Resolves `name` inside `dir`, refusing absolute paths and any `..` that would leave it.
pub fn resolve_inside(dir: &Path, name: &str) -> Option<PathBuf> {
    let rel = Path::new(name);
    let mut out = PathBuf::new();
    for c in rel.components() {
        match c {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    let joined = dir.join(out);
    // Symlinks could still point outside: compare canonical paths when the file exists.
    match (joined.canonicalize(), dir.canonicalize()) {
        (Ok(real), Ok(root)) if !real.starts_with(&root) => None,
        _ => Some(joined),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_bound_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("ok.yaml");
        std::fs::write(&ok, "a: 1\n").unwrap();
        assert_eq!(read_text(&ok).unwrap(), "a: 1\n");
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads the NUL-terminated path only.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Would block forever if it were opened.
        assert!(read_text(&fifo).unwrap_err().to_string().contains("a FIFO"));
        assert!(read_text(dir.path())
            .unwrap_err()
            .to_string()
            .contains("a directory"));
        assert_eq!(
            read_text(&dir.path().join("missing")).unwrap_err().kind(),
            std::io::ErrorKind::NotFound
        );
        let big = dir.path().join("big.yaml");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_TEXT_FILE_BYTES + 1)
            .unwrap();
        assert!(read_text(&big)
            .unwrap_err()
            .to_string()
            .contains("larger than 16 MB"));
    }
}
