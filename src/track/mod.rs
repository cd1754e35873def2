//! Tracks: the YAML model and its loading (minijinja templating, YAML, JSON-Schema validation).

mod builtin;
mod error;
pub mod keys;
mod load;
mod locate;
mod model;
mod params;
pub mod rate;
mod raw;
mod retry;
mod schema;
mod task;
mod task_rate;
pub(crate) mod template;

pub use builtin::{builtin_track, builtin_track_names, builtin_tracks_dir};
pub use error::{TrackError, TrackErrorKind};
pub use load::{
    load, load_source, render_track, track_file, Converted, Frontend, LoadOptions, OnUnsupported,
};
pub use model::{Challenge, OperationDef, ScheduleItem, ScheduleKind, TaskSpec, Track, Warmup};
pub use params::parse_track_params;
pub use retry::RetryPolicy;
pub use schema::TRACK_SCHEMA;
