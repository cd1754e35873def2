//! `runner list`: built-in tracks, or stored races (filtered).

use super::common::{out, parse_tags};
use super::CliError;
use crate::race;
use crate::results::RaceStore;
use crate::track;
use clap::{Args, ValueEnum};
use std::path::Path;

#[derive(Debug, Args)]
pub struct ListArgs {
    /// What to list: the built-in tracks, or the stored races (newest first).
    #[arg(value_enum)]
    what: ListWhat,
    #[command(flatten)]
    filter: RaceFilter,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ListWhat {
    /// The built-in tracks.
    Tracks,
    /// The stored races.
    Races,
}

/// Filters of `list races`.
#[derive(Debug, Args, Clone, Default)]
pub struct RaceFilter {
    /// Only races of this track (its name).
    #[arg(long, value_name = "NAME")]
    pub track: Option<String>,
    /// Only races of this challenge.
    #[arg(long, value_name = "NAME")]
    pub challenge: Option<String>,
    /// Only races against this backend (embedded, redis, elasticsearch).
    #[arg(long, value_name = "KIND")]
    pub backend: Option<String>,
    /// Only races with these tags, `key:value,...`; repeatable, all must match.
    #[arg(
        long = "user-tags",
        visible_alias = "user-tag",
        value_name = "KEY:VALUE",
        value_delimiter = ','
    )]
    pub user_tags: Vec<String>,
}

pub fn run(args: ListArgs, home: &Path) -> Result<u8, CliError> {
    match args.what {
        ListWhat::Tracks => list_tracks(home),
        ListWhat::Races => list_races(&args.filter, home),
    }
}

fn list_tracks(home: &Path) -> Result<u8, CliError> {
    for name in track::builtin_track_names(home)? {
        let desc = track::load(&track::builtin_track(&name, home)?, &Default::default())
            .map(|t| t.description)
            .unwrap_or_else(|e| format!("(does not load: {e})"));
        out(&format!("{name:<16} {desc}\n"));
    }
    Ok(0)
}

fn list_races(filter: &RaceFilter, home: &Path) -> Result<u8, CliError> {
    let tags = parse_tags(&filter.user_tags)?;
    let store = RaceStore::new(home);
    let mut text = format!(
        "{:<30} {:<16} {:<18} {:<21} {:<10} {:<11} tags\n",
        "race", "track", "challenge", "started", "backend", "status"
    );
    for id in store.ids() {
        match store.load_record(&id) {
            Ok(r) => {
                let keep = filter.track.as_ref().is_none_or(|t| *t == r.track)
                    && filter.challenge.as_ref().is_none_or(|c| *c == r.challenge)
                    && filter.backend.as_ref().is_none_or(|b| *b == r.backend.kind)
                    && tags.iter().all(|(k, v)| r.user_tags.get(k) == Some(v));
                if keep {
                    let status = race::effective_status(&r).as_str().to_string();
                    let shown: Vec<String> = r
                        .user_tags
                        .iter()
                        .map(|(k, v)| format!("{k}:{v}"))
                        .collect();
                    text.push_str(&format!(
                        "{:<30} {:<16} {:<18} {:<21} {:<10} {:<11} {}\n",
                        id,
                        r.track,
                        r.challenge,
                        r.started_at,
                        r.backend.kind,
                        status,
                        shown.join(",")
                    ));
                }
            }
            Err(e) => text.push_str(&format!("{id:<30} (unreadable: {e})\n")),
        }
    }
    out(&text);
    Ok(0)
}
