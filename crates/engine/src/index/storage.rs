//! Where the embedded engine keeps its indices: on disk by default (tantivy's mmap directory,
//! one directory per index under the results home, so memory stays flat however large the
//! corpus), or in RAM (`--engine-storage ram`, for small tracks). Directories go when their
//! index is deleted or the engine ends; those of a killed runner are removed by the next.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum EngineStorage {
    /// Indices on disk (memory-mapped): memory stays flat as the corpus grows.
    #[default]
    Disk,
    /// Indices in RAM: no disk writes, memory grows with the corpus.
    Ram,
}

impl EngineStorage {
    pub fn as_str(self) -> &'static str {
        match self {
            EngineStorage::Disk => "disk",
            EngineStorage::Ram => "ram",
        }
    }
}

/// This machine's name, as a file name takes it.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .unwrap_or_else(|_| "localhost".into())
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A directory removed when dropped.
#[derive(Debug)]
pub struct OwnedDir(PathBuf);

impl OwnedDir {
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for OwnedDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The engine's own directory under `<home>/engine/`, named by this process, and a counter
/// for the directories of its indices.
#[derive(Debug)]
pub struct EngineDir {
    dir: OwnedDir,
    next: AtomicU64,
}

impl EngineDir {
    /// Creates `<home>/engine/<host>.<pid>-<n>/`, first removing what runners of this host
    /// that are no longer alive left. Only this host's: a results directory shared by
    /// machines (or pods) holds others' live engines, whose pids mean nothing here.
    pub fn create(home: &Path) -> std::io::Result<EngineDir> {
        let root = home.join("engine");
        std::fs::create_dir_all(&root)?;
        let mine = format!("{}.", host_name());
        for entry in std::fs::read_dir(&root)?.flatten() {
            let name = entry.file_name();
            let pid = name
                .to_str()
                .and_then(|n| n.strip_prefix(&mine))
                .and_then(|n| n.split('-').next()?.parse::<u32>().ok());
            if pid.is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists()) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        static ENGINES: AtomicU64 = AtomicU64::new(0);
        let n = ENGINES.fetch_add(1, Ordering::Relaxed);
        let dir = root.join(format!("{mine}{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(EngineDir {
            dir: OwnedDir(dir),
            next: AtomicU64::new(0),
        })
    }

    /// A new empty directory for one index.
    pub fn index_dir(&self, name: &str) -> std::io::Result<OwnedDir> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        // Index names may hold characters a file name should not: only the safe ones stay.
        let safe: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(64)
            .collect();
        let dir = self.dir.path().join(format!("{n}-{safe}"));
        std::fs::create_dir_all(&dir)?;
        Ok(OwnedDir(dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_go_with_their_owner_and_a_dead_runners_are_cleared() {
        let home = tempfile::tempdir().unwrap();
        // What a killed runner of this host (no such pid) left behind, and what a runner
        // of another host sharing the directory holds.
        let stale = home
            .path()
            .join(format!("engine/{}.4000000000-0/0-x", host_name()));
        let other = home.path().join("engine/elsewhere.4000000000-0/0-x");
        std::fs::create_dir_all(&stale).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let engine = EngineDir::create(home.path()).unwrap();
        assert!(!stale.exists());
        assert!(
            other.exists(),
            "another host's engine is not this host's to clear"
        );
        let index = engine.index_dir("logs/2026").unwrap();
        assert!(index.path().is_dir());
        assert!(index
            .path()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .ends_with("logs_2026"));
        let (index_path, engine_path) =
            (index.path().to_path_buf(), engine.dir.path().to_path_buf());
        drop(index);
        assert!(!index_path.exists());
        drop(engine);
        assert!(!engine_path.exists());
    }
}
