//! `runner delete`: removes a stored race.

use super::CliError;
use crate::results::RaceStore;
use clap::Args;
use std::path::Path;

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// Race id, unique id prefix, `latest` or `latest~N`.
    race: String,
}

pub fn run(args: DeleteArgs, home: &Path) -> Result<u8, CliError> {
    let store = RaceStore::new(home);
    let id = store.resolve(&args.race)?;
    store.delete(&id)?;
    eprintln!("deleted race {id}");
    Ok(0)
}
