//! The one error type for everything that can be wrong with a track, written for the person
//! who wrote the track: it names the file, the line and column where known, and the YAML path.

use std::fmt;
use std::path::PathBuf;

/// What kind of problem a [`TrackError`] reports; tests assert on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrackErrorKind {
    /// The track file or a file it names cannot be read.
    Io,
    /// The minijinja template failed to render.
    Template,
    /// The rendered text is not valid YAML.
    Yaml,
    /// The track does not match `schemas/track.schema.json`.
    Schema,
    /// A key the format does not know.
    UnknownField,
    /// A value that is well-formed but not meaningful (warmup larger than the work, ...).
    Invalid,
    /// `--challenge` names a challenge the track does not have.
    UnknownChallenge,
    /// A task names an operation the track does not define.
    UnknownOperation,
    /// An operation `type` the runner does not implement.
    UnknownOperationType,
    /// A corpus file that does not exist or cannot be read as NDJSON.
    Corpus,
    /// A list was given for a key that cannot be swept.
    NotSweepable,
    /// `--track-params` names a parameter the track does not declare, or has a bad value.
    Params,
    /// No built-in track has that name.
    UnknownTrack,
    /// The track's own Python (track.py) cannot run: no interpreter, a failed import, a
    /// `register` or a param source that raises.
    Python,
}

#[derive(Debug, Clone)]
pub struct TrackError {
    pub kind: TrackErrorKind,
    pub file: PathBuf,
    /// 1-based line and column in the file, where known.
    pub location: Option<(usize, usize)>,
    /// The JSON-pointer style path inside the track (`/challenges/0/schedule/1/clients`).
    pub path: Option<String>,
    pub message: String,
}

impl TrackError {
    pub fn new(kind: TrackErrorKind, file: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        TrackError {
            kind,
            file: file.into(),
            location: None,
            path: None,
            message: message.into(),
        }
    }

    pub fn at(mut self, location: Option<(usize, usize)>) -> Self {
        self.location = location;
        self
    }

    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }
}

impl fmt::Display for TrackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some((line, col)) = self.location {
            write!(f, ":{line}:{col}")?;
        }
        write!(f, ": ")?;
        if let Some(path) = &self.path {
            write!(f, "at {path}: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for TrackError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_line_and_path() {
        let e = TrackError::new(TrackErrorKind::Schema, "t/track.yaml", "bad")
            .at(Some((3, 5)))
            .with_path("/challenges/0");
        assert_eq!(e.to_string(), "t/track.yaml:3:5: at /challenges/0: bad");
    }
}
