//! Tracks: the YAML model and its loading (minijinja templating, YAML, JSON-Schema validation).

mod error;
pub mod keys;
mod load;
mod locate;
mod model;
mod params;
pub mod rate;
mod raw;
mod schema;
mod task;
mod task_rate;
pub(crate) mod template;

pub use error::{TrackError, TrackErrorKind};
pub use load::{
    load, load_source, render_track, track_file, Converted, Frontend, LoadOptions, OnUnsupported,
};
pub use model::{Challenge, OperationDef, ScheduleItem, ScheduleKind, TaskSpec, Track, Warmup};
pub use params::parse_track_params;
pub use schema::TRACK_SCHEMA;

use std::path::PathBuf;

/// Where built-in tracks live: `$RUNNER_TRACKS_DIR`, else `tracks/` beside the binary's
/// source checkout (what `cargo run` uses), else `./tracks`.
pub fn builtin_tracks_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("RUNNER_TRACKS_DIR") {
        return PathBuf::from(dir);
    }
    let from_source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tracks");
    if from_source.is_dir() {
        return from_source;
    }
    PathBuf::from("tracks")
}

/// Names of the built-in tracks (directories holding a track.yaml), sorted.
pub fn builtin_track_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(builtin_tracks_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join("track.yaml").is_file())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    names.sort();
    names
}

/// The directory of built-in track `name`, or an error listing the ones there are.
pub fn builtin_track(name: &str) -> Result<PathBuf, TrackError> {
    let dir = builtin_tracks_dir().join(name);
    if dir.join("track.yaml").is_file() {
        return Ok(dir);
    }
    let names = builtin_track_names();
    let hint = crate::suggest::did_you_mean(name, names.iter().map(String::as_str));
    Err(TrackError::new(
        TrackErrorKind::UnknownTrack,
        builtin_tracks_dir(),
        format!(
            "no built-in track `{name}`{hint}; built-in tracks: {} (or use --track-path DIR)",
            names.join(", ")
        ),
    ))
}
