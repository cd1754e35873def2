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
    #[arg(value_enum)]
    what: ListWhat,
    #[command(flatten)]
    filter: RaceFilter,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ListWhat {
    Tracks,
    Races,
}

/// Filters of `list races`.
#[derive(Debug, Args, Clone, Default)]
pub struct RaceFilter {
    #[arg(long)]
    pub track: Option<String>,
    #[arg(long)]
    pub challenge: Option<String>,
    #[arg(long)]
    pub backend: Option<String>,
    /// `key:value`; repeatable, all must match.
    #[arg(long = "user-tag", value_name = "KEY:VALUE")]
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
