//! Where esrally keeps what a Rally user already has: its track repositories
//! (`~/.rally/benchmarks/tracks/<repository>`) and its downloaded corpora
//! (`~/.rally/benchmarks/data/<corpus>`, or rally.ini's `local.dataset.cache`). `--track NAME`
//! reads a track from there, and a corpus found there is not downloaded again.

use crate::track::{TrackError, TrackErrorKind};
use std::path::{Path, PathBuf};
use std::process::Command;

/// esrally's configuration folder: `$RALLY_HOME/.rally`, else `~/.rally` (as `paths.rally_confdir`).
pub fn rally_confdir() -> Option<PathBuf> {
    std::env::var_os("RALLY_HOME")
        .or_else(|| std::env::var_os("HOME"))
        .map(|home| PathBuf::from(home).join(".rally"))
}

/// Where esrally keeps corpora: rally.ini's `[benchmarks] local.dataset.cache`, else
/// `benchmarks/data` in its folder.
pub fn data_dir() -> Option<PathBuf> {
    let conf = rally_confdir()?;
    let from_ini = std::fs::read_to_string(conf.join("rally.ini"))
        .ok()
        .and_then(|text| ini_value(&text, "benchmarks", "local.dataset.cache"));
    Some(match from_ini {
        Some(v) => PathBuf::from(v.replace("${CONFIG_DIR}", &conf.display().to_string())),
        None => conf.join("benchmarks").join("data"),
    })
}

/// The load-driver cores esrally is configured with: rally.ini's `[system] available.cores`
/// (esrally's `num_cores`), when set to a positive whole number.
pub fn available_cores() -> Option<u64> {
    let text = std::fs::read_to_string(rally_confdir()?.join("rally.ini")).ok()?;
    ini_value(&text, "system", "available.cores")?
        .parse::<u64>()
        .ok()
        .filter(|n| *n > 0)
}

/// A corpus file esrally downloaded: `<data>/<corpus>/<file>`.
pub fn corpus_file(corpus: &str, file: &str) -> Option<PathBuf> {
    if corpus.contains(['/', '\\']) || corpus.starts_with('.') {
        return None;
    }
    let dir = data_dir()?.join(corpus);
    crate::files::resolve_inside(&dir, file).filter(|p| p.is_file())
}

/// `key = value` under `[section]` of an INI file.
fn ini_value(text: &str, section: &str, key: &str) -> Option<String> {
    let mut current = "";
    for line in text.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = name.trim();
        } else if current == section {
            if let Some((k, v)) = line.split_once('=') {
                if k.trim() == key {
                    return Some(v.trim().to_string());
                }
            }
        }
    }
    None
}

/// The directory of track `name` in a Rally track repository: `repository` is a name under
/// `~/.rally/benchmarks/tracks` (default `default`, esrally's) or a path; `revision` reads the
/// track as that git revision holds it, exported under the results home.
pub fn track(
    name: &str,
    repository: Option<&str>,
    revision: Option<&str>,
    home: &Path,
) -> Result<PathBuf, TrackError> {
    let repo_name = repository.unwrap_or("default");
    let repo = if repo_name.contains('/') {
        PathBuf::from(repo_name)
    } else {
        rally_confdir()
            .map(|c| c.join("benchmarks").join("tracks").join(repo_name))
            .unwrap_or_else(|| PathBuf::from(repo_name))
    };
    let err = |m: String| TrackError::new(TrackErrorKind::UnknownTrack, &repo, m);
    if !repo.is_dir() {
        return Err(err(format!(
            "no Rally track repository `{repo_name}` at {} (esrally clones it there; or give --track-path DIR)",
            repo.display()
        )));
    }
    let root = match revision {
        Some(rev) => export_revision(&repo, rev, home)?,
        None => repo.clone(),
    };
    let dir = crate::files::resolve_inside(&root, name)
        .ok_or_else(|| err(format!("`{name}` is not a track name")))?;
    if dir.join("track.json").is_file() {
        return Ok(dir);
    }
    let names = crate::files::folders_holding(&root, "track.json");
    let hint = crate::suggest::did_you_mean(name, names.iter().map(String::as_str));
    Err(err(format!(
        "no track `{name}`{hint} in the Rally track repository at {}; it holds {}",
        root.display(),
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    )))
}

/// The repository's files at `revision`, exported once per commit under
/// `<home>/rally-tracks/<commit>` (the checkout itself is left as it is).
fn export_revision(repo: &Path, revision: &str, home: &Path) -> Result<PathBuf, TrackError> {
    let err = |m: String| TrackError::new(TrackErrorKind::UnknownTrack, repo, m);
    if revision.starts_with('-') {
        return Err(err(format!(
            "--track-revision `{revision}` is not a revision"
        )));
    }
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["rev-parse", "--verify", "--quiet"])
        .arg(format!("{revision}^{{commit}}"))
        .output()
        .map_err(|e| {
            err(format!(
                "cannot run git to read --track-revision {revision}: {e}"
            ))
        })?;
    let commit = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || commit.is_empty() {
        return Err(err(format!(
            "--track-revision `{revision}` is not a commit, tag or branch of the repository at {}",
            repo.display()
        )));
    }
    let target = home.join("rally-tracks").join(&commit);
    if target.join(".complete").is_file() {
        return Ok(target);
    }
    let partial = home.join("rally-tracks").join(format!("{commit}.partial"));
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::create_dir_all(&partial)
        .map_err(|e| err(format!("cannot create {}: {e}", partial.display())))?;
    let status = Command::new("sh")
        .arg("-c")
        .arg("git -C \"$1\" archive --format=tar \"$2\" | tar -x -C \"$3\"")
        .arg("export")
        .arg(repo)
        .arg(&commit)
        .arg(&partial)
        .status()
        .map_err(|e| err(format!("cannot export revision {revision}: {e}")))?;
    if !status.success() {
        return Err(err(format!(
            "cannot export revision {revision} of {} (git archive | tar failed)",
            repo.display()
        )));
    }
    let _ = std::fs::write(partial.join(".complete"), commit.as_bytes());
    let _ = std::fs::remove_dir_all(&target);
    std::fs::rename(&partial, &target).map_err(|e| {
        err(format!(
            "cannot move the exported revision to {}: {e}",
            target.display()
        ))
    })?;
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_dataset_cache_of_rally_ini() {
        let ini =
            "[meta]\nconfig.version = 17\n\n[benchmarks]\nlocal.dataset.cache = /data/rally\n";
        assert_eq!(
            ini_value(ini, "benchmarks", "local.dataset.cache").as_deref(),
            Some("/data/rally")
        );
        assert_eq!(ini_value(ini, "meta", "local.dataset.cache"), None);
    }
}
