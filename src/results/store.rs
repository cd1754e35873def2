//! Race directories under the results home: `<home>/races/<race-id>/{race.json,histograms.json}`,
//! and `trials/` while a race runs (see `journal`).

use super::journal::{self, StoredTrial};
use super::model::{HistogramFile, RaceRecord, RaceStatus, SamplesRecord, FORMAT_VERSION};
use super::RaceHistograms;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is corrupted: {message}")]
    Corrupt { path: PathBuf, message: String },
    #[error("{path} has format {found}, newer than this runner understands ({FORMAT_VERSION}); upgrade runner")]
    NewerFormat { path: PathBuf, found: u64 },
    #[error("{dir}: no room to start a race (it sets aside {needed} bytes so that its record can always be written): {source}")]
    NoRoom {
        dir: PathBuf,
        needed: u64,
        source: std::io::Error,
    },
    #[error("no race `{0}` (see `runner list races`)")]
    NotFound(String),
    #[error("race id prefix `{prefix}` is ambiguous: {matches}")]
    Ambiguous { prefix: String, matches: String },
    #[error(
        "a race id cannot be empty: give an id, a unique prefix of one, `latest` or `latest~N`"
    )]
    EmptyId,
    #[error("--race-id `{id}`: {why}")]
    BadNewId { id: String, why: String },
}

/// A new race's id: its UTC start time, then a random suffix.
pub fn new_race_id() -> String {
    let now = chrono::Utc::now();
    let suffix: u16 = rand::random();
    // Microseconds keep ids in start order even for races started in the same second, so that
    // sorting ids sorts races (and `latest` is the newest).
    format!("{}-{suffix:04x}", now.format("%Y%m%dT%H%M%S%.6fZ"))
}

/// `20261207T192150...`: an id runner drew, which sorts by start time as it is.
fn starts_with_time(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() >= 15
        && b[..8].iter().all(u8::is_ascii_digit)
        && b[8] == b'T'
        && b[9..15].iter().all(u8::is_ascii_digit)
}

pub struct RaceStore {
    root: PathBuf,
}

/// Writes a file so that readers see the old or the new content, never a torn one:
/// write a temp file beside it, fsync, rename over, fsync the directory. A failed write
/// (a full disk) leaves no temp file behind.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let err = |source| StoreError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(err)?;
    let tmp = dir.join(format!(
        ".{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("file")
    ));
    let written = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(err(e));
    }
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Space set aside when a race starts and freed before its results are consolidated, so that
/// a disk filled during the race still takes the final record.
const RESERVE_FILE: &str = ".reserve";
/// Per-request samples, one CSV file per stored trial.
const SAMPLES_DIR: &str = "samples";
const RESERVE_BYTES: u64 = 4 * 1024 * 1024;

/// Space the race's own record is written into if its consolidation fails (a disk that filled
/// anyway): writing within blocks already allocated needs none, so the record always says why.
const STATUS_RESERVE_FILE: &str = ".status-reserve";

/// Allocates `bytes` for a file at `path` (glibc writes zeros where the filesystem cannot
/// allocate); nothing is left behind when that fails.
fn reserve(path: &Path, bytes: u64) -> std::io::Result<()> {
    let f = File::create(path)?;
    use std::os::fd::AsRawFd as _;
    // SAFETY: a valid open descriptor; posix_fallocate only allocates blocks for it.
    let code = unsafe { libc::posix_fallocate(f.as_raw_fd(), 0, bytes as libc::off_t) };
    if code != 0 {
        drop(f);
        let _ = fs::remove_file(path);
        return Err(std::io::Error::from_raw_os_error(code));
    }
    Ok(())
}

/// Writes `bytes` over `path` through the space reserved in `reserved`, then renames it into
/// place: no block is allocated as long as `bytes` fits what was reserved.
fn write_through_reserve(reserved: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = fs::OpenOptions::new().write(true).open(reserved)?;
    if f.metadata()?.len() < bytes.len() as u64 {
        return Err(std::io::Error::other("the reserved space is too small"));
    }
    f.write_all(bytes)?;
    f.set_len(bytes.len() as u64)?;
    f.sync_all()?;
    drop(f);
    fs::rename(reserved, path)?;
    if let Ok(d) = File::open(path.parent().unwrap_or(Path::new("."))) {
        let _ = d.sync_all();
    }
    Ok(())
}

impl RaceStore {
    /// The store under `home` (`--results-dir`, `$RUNNER_HOME`, or `~/.runner`).
    pub fn new(home: &Path) -> RaceStore {
        RaceStore {
            root: home.join("races"),
        }
    }

    pub fn default_home() -> PathBuf {
        if let Some(h) = std::env::var_os("RUNNER_HOME") {
            return PathBuf::from(h);
        }
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."));
        home.join(".runner")
    }

    pub fn race_dir(&self, id: &str) -> PathBuf {
        self.root.join(id)
    }

    /// Stores a race as it starts (no trials yet) and sets space aside for its end: room for
    /// its own record whatever happens (without it the race does not start), and room for its
    /// consolidation where the disk has it.
    /// A race that cannot start so leaves nothing behind: nothing was measured.
    pub fn begin(&self, race: &RaceRecord) -> Result<(), StoreError> {
        let dir = self.race_dir(&race.race_id);
        // The failed record is the started one with a status and a reason: twice its size
        // holds it with room to spare.
        let record_len = serde_json::to_vec_pretty(race).map_or(0, |b| b.len() as u64);
        let needed = 2 * record_len + 16 * 1024;
        let started = self
            .save(
                race,
                &HistogramFile {
                    format: FORMAT_VERSION,
                    trials: Vec::new(),
                },
            )
            .and_then(|()| {
                reserve(&dir.join(STATUS_RESERVE_FILE), needed).map_err(|source| {
                    StoreError::NoRoom {
                        dir: dir.clone(),
                        needed,
                        source,
                    }
                })
            });
        if let Err(e) = started {
            let _ = fs::remove_dir_all(&dir);
            return Err(e);
        }
        let _ = reserve(&dir.join(RESERVE_FILE), RESERVE_BYTES);
        Ok(())
    }

    /// Stores the `seq`-th trial to end, in a file of its own: constant cost per trial.
    pub fn append_trial(
        &self,
        race_id: &str,
        seq: usize,
        trial: &StoredTrial,
    ) -> Result<(), StoreError> {
        journal::append(&self.race_dir(race_id), seq, trial)
    }

    /// Writes the `seq`-th stored trial's per-request samples; the file's name, relative to
    /// the race's directory.
    pub fn write_samples(
        &self,
        race_id: &str,
        seq: usize,
        samples: &crate::metrics::TrialSamples,
    ) -> Result<String, StoreError> {
        let file = format!("{SAMPLES_DIR}/{seq:06}.csv");
        let path = self.race_dir(race_id).join(&file);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(|source| StoreError::Write {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        write_atomic(&path, samples.to_csv().as_bytes())?;
        Ok(file)
    }

    /// A stored trial's per-request samples, as its record names them.
    pub fn load_samples(
        &self,
        race_id: &str,
        record: &SamplesRecord,
    ) -> Result<crate::metrics::TrialSamples, StoreError> {
        let path = self.race_dir(race_id).join(&record.file);
        let text = fs::read_to_string(&path).map_err(|source| StoreError::Read {
            path: path.clone(),
            source,
        })?;
        crate::metrics::TrialSamples::from_csv(&text, record.seen)
            .map_err(|message| StoreError::Corrupt { path, message })
    }

    /// Consolidates a race that ended into `race.json` and `histograms.json`. When that cannot
    /// be written (a full disk), `race.json` is rewritten small, through the space set aside at
    /// the start, with the status `store-failed` and the reason, over the trials stored one by
    /// one (which readers merge). `trial_error` is the first trial that could not be stored as
    /// it ended, if any.
    pub fn finish(
        &self,
        race: &RaceRecord,
        histograms: &HistogramFile,
        trial_error: Option<&StoreError>,
    ) -> Result<(), StoreError> {
        let dir = self.race_dir(&race.race_id);
        let _ = fs::remove_file(dir.join(RESERVE_FILE));
        match self.save(race, histograms) {
            Ok(()) => {
                let _ = fs::remove_file(dir.join(STATUS_RESERVE_FILE));
                journal::remove(&dir);
                Ok(())
            }
            Err(e) => {
                let mut index = race.clone();
                index.tasks.iter_mut().for_each(|t| t.trials.clear());
                index.status = RaceStatus::StoreFailed;
                let first = trial_error.map_or(String::new(), |t| {
                    format!(" (storing trials as they ended had already failed: {t})")
                });
                index.stop_reason = Some(format!("the results could not be consolidated: {e}{first}; the trials below are those stored as they ended"));
                let r = serde_json::to_vec_pretty(&index).expect("race serialises");
                let race_json = dir.join("race.json");
                if write_through_reserve(&dir.join(STATUS_RESERVE_FILE), &race_json, &r).is_err() {
                    let _ = write_atomic(&race_json, &r);
                }
                let _ = fs::remove_file(dir.join(STATUS_RESERVE_FILE));
                Err(e)
            }
        }
    }

    fn save(&self, race: &RaceRecord, histograms: &HistogramFile) -> Result<(), StoreError> {
        let dir = self.race_dir(&race.race_id);
        // Histograms first: a race.json never names trials whose histograms are missing.
        let h = serde_json::to_vec(histograms).expect("histograms serialise");
        write_atomic(&dir.join("histograms.json"), &h)?;
        let r = serde_json::to_vec_pretty(race).expect("race serialises");
        write_atomic(&dir.join("race.json"), &r)
    }

    /// The race record alone, without its histograms (for listings), with the trials of a
    /// race that was killed or could not consolidate them.
    pub fn load_record(&self, id: &str) -> Result<RaceRecord, StoreError> {
        let dir = self.race_dir(id);
        let mut race: RaceRecord = read_versioned(&dir.join("race.json"))?;
        journal::merge_into(&dir, &mut race, None);
        Ok(race)
    }

    /// A race with its histograms as stored (with the trials of a race that was killed);
    /// what could not be read is listed.
    pub fn load_raw(
        &self,
        id: &str,
    ) -> Result<(RaceRecord, HistogramFile, Vec<String>), StoreError> {
        let dir = self.race_dir(id);
        let mut race: RaceRecord = read_versioned(&dir.join("race.json"))?;
        let hpath = dir.join("histograms.json");
        let mut file = if hpath.exists() {
            read_versioned(&hpath)?
        } else {
            HistogramFile {
                format: FORMAT_VERSION,
                trials: Vec::new(),
            }
        };
        let unreadable = journal::merge_into(&dir, &mut race, Some(&mut file));
        Ok((race, file, unreadable))
    }

    /// The ids of the shard races stored under race `id` (`<id>/shard-<i>`), by shard.
    pub fn shard_ids(&self, id: &str) -> Vec<String> {
        let mut shards: Vec<(u32, String)> = fs::read_dir(self.race_dir(id))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().join("race.json").is_file())
            .filter_map(|e| {
                let name = e.file_name().to_str()?.to_string();
                let index = name.strip_prefix("shard-")?.parse().ok()?;
                Some((index, format!("{id}/{name}")))
            })
            .collect();
        shards.sort();
        shards.into_iter().map(|(_, id)| id).collect()
    }

    /// A race with its histograms decoded; what could not be read is in their `problems`.
    pub fn load(&self, id: &str) -> Result<(RaceRecord, RaceHistograms), StoreError> {
        let hpath = self.race_dir(id).join("histograms.json");
        let (race, file, unreadable) = self.load_raw(id)?;
        let mut histograms = RaceHistograms::decode(&file);
        for p in &mut histograms.problems {
            *p = format!("{}: {p}", hpath.display());
        }
        histograms.problems.extend(unreadable);
        Ok((race, histograms))
    }

    pub fn delete(&self, id: &str) -> Result<(), StoreError> {
        let dir = self.race_dir(id);
        fs::remove_dir_all(&dir).map_err(|source| StoreError::Write { path: dir, source })
    }

    /// Race ids, newest first. runner's ids start with their UTC start time; an id the user
    /// gave (`--race-id`) is placed by the start time its record holds.
    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<(String, String)> = fs::read_dir(&self.root)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().join("race.json").is_file())
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .map(|id| (self.order_key(&id), id))
            .collect();
        ids.sort();
        ids.reverse();
        ids.into_iter().map(|(_, id)| id).collect()
    }

    /// What sorts races in start order: runner's ids as they are; another id by its record's
    /// `started_at` in the same form (unreadable: first of all).
    fn order_key(&self, id: &str) -> String {
        if starts_with_time(id) {
            return id.to_string();
        }
        #[derive(serde::Deserialize)]
        struct Started {
            started_at: String,
        }
        let started = fs::read(self.race_dir(id).join("race.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<Started>(&b).ok())
            .and_then(|s| chrono::DateTime::parse_from_rfc3339(&s.started_at).ok());
        match started {
            Some(t) => format!(
                "{}-{id}",
                t.with_timezone(&chrono::Utc).format("%Y%m%dT%H%M%S%.6fZ")
            ),
            None => format!("0-{id}"),
        }
    }

    /// A race id the user chose: a directory name (letters, digits, `.`, `_`, `-`) that no
    /// stored race has, and that `latest` or a time prefix cannot be mistaken for.
    pub fn check_new_id(&self, id: &str) -> Result<String, StoreError> {
        let bad = |why: &str| StoreError::BadNewId {
            id: id.to_string(),
            why: why.to_string(),
        };
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
        if id.is_empty() || id.len() > 128 || !id.chars().all(allowed) || id.starts_with('.') {
            return Err(bad(
                "an id is 1 to 128 letters, digits, `.`, `_` or `-`, not starting with `.`",
            ));
        }
        if id.starts_with("latest") {
            return Err(bad("`latest` names the newest race; choose another id"));
        }
        if self.race_dir(id).exists() {
            return Err(bad("a stored race has this id (see `runner list races`)"));
        }
        Ok(id.to_string())
    }

    /// Resolves a full id, a unique prefix, `latest` or `latest~N`.
    pub fn resolve(&self, given: &str) -> Result<String, StoreError> {
        // Every id starts with the empty prefix: `delete ""` must not pick the only race.
        if given.trim().is_empty() {
            return Err(StoreError::EmptyId);
        }
        let ids = self.ids();
        if let Some(rest) = given.strip_prefix("latest") {
            let back: usize = match rest.strip_prefix('~') {
                Some(n) => n
                    .parse()
                    .map_err(|_| StoreError::NotFound(given.to_string()))?,
                None if rest.is_empty() => 0,
                None => return Err(StoreError::NotFound(given.to_string())),
            };
            return ids
                .get(back)
                .cloned()
                .ok_or_else(|| StoreError::NotFound(given.to_string()));
        }
        if ids.iter().any(|i| i == given) {
            return Ok(given.to_string());
        }
        // One shard's own race: `<race>/shard-<i>`, the race given by any of its names.
        if let Some((race, shard)) = given.rsplit_once("/shard-") {
            let id = match self.race_dir(race).is_dir() {
                true => race.to_string(),
                false => self.resolve(race)?,
            };
            let candidate = format!("{id}/shard-{shard}");
            if shard.parse::<u32>().is_ok() && self.race_dir(&candidate).join("race.json").is_file()
            {
                return Ok(candidate);
            }
            return Err(StoreError::NotFound(given.to_string()));
        }
        let matches: Vec<&String> = ids.iter().filter(|i| i.starts_with(given)).collect();
        match matches.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(StoreError::NotFound(given.to_string())),
            many => Err(StoreError::Ambiguous {
                prefix: given.into(),
                matches: many
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }
}

fn read_versioned<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, StoreError> {
    let text = fs::read_to_string(path).map_err(|source| StoreError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
            path: path.into(),
            message: e.to_string(),
        })?;
    match value.get("format").and_then(|f| f.as_u64()) {
        Some(v) if v > FORMAT_VERSION as u64 => {
            return Err(StoreError::NewerFormat {
                path: path.into(),
                found: v,
            })
        }
        Some(_) => {}
        None => {
            return Err(StoreError::Corrupt {
                path: path.into(),
                message: "no `format` version".into(),
            })
        }
    }
    serde_json::from_value(value).map_err(|e| StoreError::Corrupt {
        path: path.into(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_content() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/race.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "two");
        assert_eq!(
            fs::read_dir(p.parent().unwrap()).unwrap().count(),
            1,
            "no temp file left behind"
        );
    }

    #[test]
    fn resolves_prefixes_and_latest() {
        let dir = tempfile::tempdir().unwrap();
        let store = RaceStore::new(dir.path());
        for id in [
            "20260101T000000Z-aaaa",
            "20260102T000000Z-bbbb",
            "20260102T000000Z-bccc",
        ] {
            write_atomic(&store.race_dir(id).join("race.json"), b"{}").unwrap();
        }
        assert_eq!(store.resolve("latest").unwrap(), "20260102T000000Z-bccc");
        assert_eq!(store.resolve("latest~2").unwrap(), "20260101T000000Z-aaaa");
        assert_eq!(store.resolve("20260101").unwrap(), "20260101T000000Z-aaaa");
        assert!(matches!(
            store.resolve("20260102"),
            Err(StoreError::Ambiguous { .. })
        ));
        assert!(matches!(
            store.resolve("nope"),
            Err(StoreError::NotFound(_))
        ));
        let single = tempfile::tempdir().unwrap();
        let one = RaceStore::new(single.path());
        write_atomic(
            &one.race_dir("20260101T000000Z-aaaa").join("race.json"),
            b"{}",
        )
        .unwrap();
        for empty in ["", " "] {
            assert!(
                matches!(one.resolve(empty), Err(StoreError::EmptyId)),
                "`{empty}` matches no race, not every race"
            );
        }
        assert!(matches!(
            store.load("20260101T000000Z-aaaa"),
            Err(StoreError::Corrupt { .. })
        ));
    }

    #[test]
    fn newer_format_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = RaceStore::new(dir.path());
        write_atomic(&store.race_dir("x").join("race.json"), br#"{"format": 99}"#).unwrap();
        assert!(matches!(
            store.load("x"),
            Err(StoreError::NewerFormat { found: 99, .. })
        ));
    }
}

/// Writes a report file atomically.
pub fn write_report(path: &Path, text: &str) -> Result<(), StoreError> {
    write_atomic(path, text.as_bytes())
}
