//! The built-in tracks, carried inside the binary (build.rs) and written out once per version
//! under the results home (`<home>/tracks/<version>-<digest>`), where templates, corpora and
//! errors find them as files. `$RUNNER_TRACKS_DIR` names another folder instead (a checkout's
//! `tracks/`, while editing them).

use super::{TrackError, TrackErrorKind};
use std::path::{Path, PathBuf};

mod bundle {
    include!(concat!(env!("OUT_DIR"), "/builtin_tracks.rs"));
}

/// Where built-in tracks are read from: `$RUNNER_TRACKS_DIR`, else the binary's own, written
/// under `home` if they are not there yet.
pub fn builtin_tracks_dir(home: &Path) -> Result<PathBuf, TrackError> {
    if let Some(dir) = std::env::var_os("RUNNER_TRACKS_DIR") {
        return Ok(PathBuf::from(dir));
    }
    let dir = home
        .join("tracks")
        .join(format!("{}-{}", env!("CARGO_PKG_VERSION"), bundle::DIGEST));
    if !dir.join(".complete").is_file() {
        write_out(&dir)?;
    }
    Ok(dir)
}

/// Writes the files to a fresh folder beside `dir`, then renames it into place, so that a
/// race reading them never sees half of them (two runners may write at once: one rename wins).
fn write_out(dir: &Path) -> Result<(), TrackError> {
    let err = |p: &Path, e: std::io::Error| {
        TrackError::new(
            TrackErrorKind::Io,
            p,
            format!("cannot write the built-in tracks here: {e} (set --results-dir, RUNNER_HOME, or RUNNER_TRACKS_DIR)"),
        )
    };
    let parent = dir.parent().unwrap_or(dir);
    std::fs::create_dir_all(parent).map_err(|e| err(parent, e))?;
    let staging = parent.join(format!(
        ".writing-{}-{}",
        std::process::id(),
        bundle::DIGEST
    ));
    let _ = std::fs::remove_dir_all(&staging);
    for (rel, bytes) in bundle::FILES {
        let path = staging.join(rel);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(|e| err(p, e))?;
        }
        std::fs::write(&path, bytes).map_err(|e| err(&path, e))?;
    }
    std::fs::write(staging.join(".complete"), bundle::DIGEST).map_err(|e| err(&staging, e))?;
    match std::fs::rename(&staging, dir) {
        Ok(()) => Ok(()),
        // Another runner wrote the same files first.
        Err(_) if dir.join(".complete").is_file() => {
            let _ = std::fs::remove_dir_all(&staging);
            Ok(())
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            Err(err(dir, e))
        }
    }
}

/// Names of the built-in tracks (folders holding a track.yaml), sorted.
pub fn builtin_track_names(home: &Path) -> Result<Vec<String>, TrackError> {
    Ok(crate::files::folders_holding(
        &builtin_tracks_dir(home)?,
        "track.yaml",
    ))
}

/// The folder of built-in track `name`, or an error listing the ones there are.
pub fn builtin_track(name: &str, home: &Path) -> Result<PathBuf, TrackError> {
    let root = builtin_tracks_dir(home)?;
    if let Some(dir) =
        crate::files::resolve_inside(&root, name).filter(|d| d.join("track.yaml").is_file())
    {
        return Ok(dir);
    }
    let names = builtin_track_names(home)?;
    let hint = crate::suggest::did_you_mean(name, names.iter().map(String::as_str));
    Err(TrackError::new(
        TrackErrorKind::UnknownTrack,
        name,
        format!(
            "no built-in track `{name}`{hint}; built-in tracks: {} (or --track-path DIR; a Rally track of ~/.rally/benchmarks/tracks/default by its name)",
            names.join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binary_carries_every_track_and_writes_it_out_once() {
        for name in [
            "geonames",
            "client-bench",
            "bulk-indexer",
            "redis-kv",
            "kv-mix",
        ] {
            assert!(
                bundle::FILES
                    .iter()
                    .any(|(p, _)| *p == format!("{name}/track.yaml")),
                "{name} is built in"
            );
        }
        if std::env::var_os("RUNNER_TRACKS_DIR").is_some() {
            return;
        }
        let home = tempfile::tempdir().unwrap();
        let dir = builtin_track("geonames", home.path()).unwrap();
        assert!(dir.starts_with(home.path()), "{}", dir.display());
        assert!(dir.join("documents-1k.json").is_file());
        // A second call finds them written.
        assert_eq!(builtin_track("geonames", home.path()).unwrap(), dir);
        let e = builtin_track("geonams", home.path()).unwrap_err();
        assert!(e.to_string().contains("did you mean `geonames`"), "{e}");
    }
}
