//! What a command asks for, once parsed: `cli` turns flags into these (as ripgrep turns low
//! args into high args), and `race`, `plan`, `validate` and `render-track` take them, so
//! every command loads and plans a track the same way and none of them knows clap.

use crate::backend::{BackendKind, ClientOptions};
use crate::driver::OnError;
use crate::plan::{Plan, PlanOptions};
use crate::track::{self, Track, TrackError};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A track to load (a built-in one's directory, or a path) and how to plan it.
#[derive(Debug, Clone, Default)]
pub struct TrackRequest {
    pub location: PathBuf,
    pub load: track::LoadOptions,
    /// None: the track's default challenge.
    pub challenge: Option<String>,
    pub plan: PlanOptions,
}

impl TrackRequest {
    pub fn load(&self) -> Result<Track, TrackError> {
        track::load(&self.location, &self.load)
    }

    /// The task graph of the requested challenge.
    pub fn plan(&self, track: &Track) -> Result<Plan, TrackError> {
        let challenge = track.challenge(self.challenge.as_deref())?;
        crate::plan::build(track, challenge, &self.plan)
    }

    /// The template's output, before YAML or JSON parsing.
    pub fn render(&self) -> Result<String, TrackError> {
        track::render_track(&self.location, &self.load)
    }
}

/// A race: the track, where to run it, and what to do on errors.
#[derive(Debug, Clone)]
pub struct RaceRequest {
    pub track: TrackRequest,
    pub backend: BackendKind,
    pub target_hosts: Vec<String>,
    pub client_options: ClientOptions,
    pub on_error: OnError,
    /// Progress bars on stderr.
    pub progress: bool,
    /// No per-trial lines on stderr.
    pub quiet: bool,
    /// The race store's directory.
    pub home: PathBuf,
    pub user_tags: BTreeMap<String, String>,
    /// `--threshold`s: for the task named, or (None) for every task.
    pub thresholds: Vec<(Option<String>, crate::thresholds::Threshold)>,
    /// Where the embedded backend keeps its indices.
    pub engine_storage: engine::storage::EngineStorage,
    /// This process's shard of a race run by several; None runs it whole.
    pub shard: Option<crate::shard::ShardSpec>,
    /// The race's id as the user gave it (`--race-id`), checked to be new; None draws one.
    pub race_id: Option<String>,
    /// Each request's timings kept, at most this many per trial (`--keep-samples`).
    pub keep_samples: Option<usize>,
    /// Where the race is shown live as it runs (`--dashboard`).
    pub live: Option<std::sync::Arc<dyn crate::driver::LiveSink>>,
}
