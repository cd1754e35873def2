//! One race run by N identical processes, started by an existing launcher (Kubernetes
//! Indexed Jobs, Slurm, MPI, or by hand with `--shard i/N`). Each process learns its place
//! from the launcher's environment, runs its slice of every task (`driver::Slice`), meets the
//! others before each step at a small TCP rendezvous served by shard 0 (`coordinator`,
//! `member`), and sends its stored race there at the end; shard 0 merges the shards exactly
//! (`merge`): histograms added, counts summed, windows united on the shared clock.

mod coordinator;
pub mod k8s;
mod member;
pub mod merge;
mod probes;
mod wire;

pub use coordinator::{Collected, Coordinator};
pub use member::Member;

use crate::driver::Slice;
use std::time::Duration;

/// Where the shards meet when no port is given (PyTorch's `MASTER_PORT` default).
pub const DEFAULT_PORT: u16 = 29500;

/// How long shards wait for each other by default: to join, and at each step after the first
/// has arrived.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// This process's part of a sharded race, and where the shards meet.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardSpec {
    pub slice: Slice,
    /// `HOST:PORT` of shard 0's rendezvous.
    pub coordinator: String,
    pub timeout: Duration,
    /// What said so: `--shard`, or the launcher's variables.
    pub source: &'static str,
}

/// What `--shard` says: nothing (learn it from the launcher), a place, or "run whole".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardArg {
    Detect,
    Whole,
    Place(Slice),
}

impl std::str::FromStr for ShardArg {
    type Err = String;

    fn from_str(text: &str) -> Result<ShardArg, String> {
        if text == "none" {
            return Ok(ShardArg::Whole);
        }
        let bad = || format!("`{text}`: expected I/N (shard I of N, from 0) or `none`");
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if count == 0 || index >= count {
            return Err(format!(
                "`{text}`: shard {index} of {count} does not exist (shards are 0..N-1)"
            ));
        }
        Ok(ShardArg::Place(Slice { index, count }))
    }
}

/// The launchers whose variables give a process its rank and the number of processes.
const LAUNCHERS: [(&str, &str, &str); 4] = [
    (
        "Kubernetes Indexed Job",
        "JOB_COMPLETION_INDEX",
        "RUNNER_SHARDS",
    ),
    ("Slurm", "SLURM_PROCID", "SLURM_NTASKS"),
    ("Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
    ("MPICH/PMI", "PMI_RANK", "PMI_SIZE"),
];

/// The shard this process is, from `--shard` or the launcher's environment (`env` reads a
/// variable); None for a race run whole. `coordinator` is `--coordinator`.
pub fn resolve(
    arg: ShardArg,
    coordinator: Option<&str>,
    timeout: Duration,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<ShardSpec>, String> {
    let (slice, source) = match arg {
        ShardArg::Whole => return Ok(None),
        ShardArg::Place(slice) => (slice, "--shard"),
        ShardArg::Detect => match detect(&env)? {
            Some(found) => found,
            None => return Ok(None),
        },
    };
    if slice.is_whole() {
        return Ok(None);
    }
    let coordinator = match coordinator {
        Some(c) => c.to_string(),
        None => match (env("MASTER_ADDR"), env("MASTER_PORT")) {
            (Some(host), port) if !host.is_empty() => {
                let port = port.unwrap_or_else(|| DEFAULT_PORT.to_string());
                if host.contains(':') && !host.starts_with('[') {
                    format!("[{host}]:{port}")
                } else {
                    format!("{host}:{port}")
                }
            }
            _ => {
                return Err(format!(
                    "shard {} of {} (from {source}) needs the rendezvous address: \
                     --coordinator HOST:PORT, or MASTER_ADDR (and MASTER_PORT, default {DEFAULT_PORT}); \
                     shard 0 listens there",
                    slice.index, slice.count
                ))
            }
        },
    };
    check_address(&coordinator)?;
    Ok(Some(ShardSpec {
        slice,
        coordinator,
        timeout,
        source,
    }))
}

fn detect(env: &impl Fn(&str) -> Option<String>) -> Result<Option<(Slice, &'static str)>, String> {
    for (name, rank_var, size_var) in LAUNCHERS {
        let Some(rank) = env(rank_var).filter(|r| !r.is_empty()) else {
            continue;
        };
        let Some(size) = env(size_var).filter(|s| !s.is_empty()) else {
            if rank_var == "JOB_COMPLETION_INDEX" {
                // An Indexed Job does not say how many completions it has: without the
                // count (which `runner k8s-job` sets), this is not a sharded race.
                continue;
            }
            return Err(format!("{name}: {rank_var} is set but {size_var} is not"));
        };
        let parse = |var: &str, v: &str| {
            v.trim()
                .parse::<u32>()
                .map_err(|_| format!("{name}: {var}=`{v}` is not a number"))
        };
        let (index, count) = (parse(rank_var, &rank)?, parse(size_var, &size)?);
        if count == 0 || index >= count {
            return Err(format!(
                "{name}: {rank_var}={index} is not below {size_var}={count}"
            ));
        }
        return Ok(Some((Slice { index, count }, name)));
    }
    Ok(None)
}

fn check_address(address: &str) -> Result<(), String> {
    let bad = || format!("--coordinator `{address}`: expected HOST:PORT");
    let (host, port) = address.rsplit_once(':').ok_or_else(bad)?;
    if host.is_empty() || port.parse::<u16>().is_err() {
        return Err(bad());
    }
    Ok(())
}

/// A shard's place in a running race: its connection to the rendezvous, and on shard 0 the
/// rendezvous itself.
pub struct Session {
    pub member: std::sync::Arc<Member>,
    coordinator: Option<Coordinator>,
}

impl Session {
    /// Joins the race's rendezvous (shard 0 starts it first) and waits for every shard.
    pub async fn join(
        spec: &ShardSpec,
        plan: &crate::plan::Plan,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<Session, String> {
        let digest = plan_digest(plan);
        let mut spec = spec.clone();
        let coordinator = if spec.slice.index == 0 {
            let c = Coordinator::start(
                &spec.coordinator,
                spec.slice.count,
                spec.timeout,
                digest.clone(),
            )
            .await?;
            if c.address.ip().is_unspecified() {
                spec.coordinator = format!("127.0.0.1:{}", c.address.port());
            }
            Some(c)
        } else {
            None
        };
        let member = Member::join(&spec, &digest, cancel).await?;
        Ok(Session {
            member: std::sync::Arc::new(member),
            coordinator,
        })
    }

    /// After the race: sends this shard's results to shard 0; on shard 0, waits for every
    /// shard's and returns the merged race.
    /// Ctrl-C or SIGTERM (`cancel`) stops shard 0's wait: the shards' races stay stored,
    /// for `runner merge`.
    pub async fn finish(
        self,
        race: &crate::results::RaceRecord,
        histograms: &crate::results::HistogramFile,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<Option<(crate::results::RaceRecord, crate::results::HistogramFile)>, String> {
        let sent = self.member.send_results(race, histograms).await;
        // Shard 0's rendezvous waits for each shard's results or its leaving.
        self.member.leave().await;
        let Some(coordinator) = self.coordinator else {
            return sent.map(|()| None);
        };
        if let Err(e) = sent {
            eprintln!("warning: {e}");
        }
        let collected = tokio::select! {
            c = coordinator.finish() => c?,
            _ = cancel.cancelled() => return Err(format!(
                "interrupted while waiting for the other shards' results; once they are in one results directory, `runner merge {}` merges them",
                self.member.race_id
            )),
        };
        let shards = collected
            .results
            .into_iter()
            .map(|(_, host, race, histograms)| merge::ShardRace {
                host,
                race,
                histograms,
            })
            .collect();
        let ctx = merge::MergeContext {
            missing: collected.missing,
            barriers: collected.barriers,
            failure: collected.failure,
        };
        merge::merge(&collected.race_id, shards, ctx)
            .map(Some)
            .map_err(|e| format!("cannot merge the shards: {e}"))
    }
}

/// Nanoseconds since the Unix epoch on this machine's clock.
pub(crate) fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// A fingerprint of what a shard is about to run: every shard must plan the same race.
pub fn plan_digest(plan: &crate::plan::Plan) -> String {
    // FNV-1a: the same on every machine and build (std's hasher may differ between builds).
    let text = serde_json::to_string(plan).unwrap_or_default();
    let mut bytes = env!("CARGO_PKG_VERSION").as_bytes().to_vec();
    bytes.push(0);
    bytes.extend_from_slice(text.as_bytes());
    crate::units::fnv1a_hex(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    fn place(i: u32, n: u32) -> Slice {
        Slice { index: i, count: n }
    }

    #[test]
    fn learns_its_place_from_each_launcher() {
        let t = DEFAULT_TIMEOUT;
        let cases: [(&[(&str, &str)], Slice, &str); 4] = [
            (
                &[
                    ("JOB_COMPLETION_INDEX", "3"),
                    ("RUNNER_SHARDS", "8"),
                    ("MASTER_ADDR", "job-0.svc"),
                ],
                place(3, 8),
                "job-0.svc:29500",
            ),
            (
                &[
                    ("SLURM_PROCID", "1"),
                    ("SLURM_NTASKS", "4"),
                    ("MASTER_ADDR", "n1"),
                    ("MASTER_PORT", "7000"),
                ],
                place(1, 4),
                "n1:7000",
            ),
            (
                &[
                    ("OMPI_COMM_WORLD_RANK", "2"),
                    ("OMPI_COMM_WORLD_SIZE", "3"),
                    ("MASTER_ADDR", "::1"),
                ],
                place(2, 3),
                "[::1]:29500",
            ),
            (
                &[("PMI_RANK", "0"), ("PMI_SIZE", "2"), ("MASTER_ADDR", "h")],
                place(0, 2),
                "h:29500",
            ),
        ];
        for (vars, slice, coordinator) in cases {
            let spec = resolve(ShardArg::Detect, None, t, env(vars))
                .unwrap()
                .unwrap();
            assert_eq!(
                (spec.slice, spec.coordinator.as_str()),
                (slice, coordinator)
            );
        }
        // `--shard` and `--coordinator` win over the environment.
        let spec = resolve(
            "1/2".parse().unwrap(),
            Some("127.0.0.1:1234"),
            t,
            env(&[("SLURM_PROCID", "5"), ("SLURM_NTASKS", "9")]),
        )
        .unwrap()
        .unwrap();
        assert_eq!((spec.slice, spec.source), (place(1, 2), "--shard"));
        // One process, no launcher, `none`, or an Indexed Job without a count: a whole race.
        for (arg, vars) in [
            (
                ShardArg::Detect,
                &[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "1")][..],
            ),
            (ShardArg::Detect, &[][..]),
            (
                ShardArg::Whole,
                &[("SLURM_PROCID", "1"), ("SLURM_NTASKS", "4")][..],
            ),
            (ShardArg::Detect, &[("JOB_COMPLETION_INDEX", "2")][..]),
        ] {
            assert_eq!(resolve(arg, None, t, env(vars)).unwrap(), None);
        }
    }

    #[test]
    fn a_place_that_cannot_be_is_refused_with_its_source() {
        let t = DEFAULT_TIMEOUT;
        for text in ["3/3", "1/0", "x/2", "2"] {
            assert!(text.parse::<ShardArg>().is_err(), "{text}");
        }
        let e = resolve(
            ShardArg::Detect,
            None,
            t,
            env(&[("PMI_RANK", "4"), ("PMI_SIZE", "4")]),
        )
        .unwrap_err();
        assert!(e.contains("PMI_RANK=4"), "{e}");
        let e = resolve(ShardArg::Detect, None, t, env(&[("SLURM_PROCID", "1")])).unwrap_err();
        assert!(e.contains("SLURM_NTASKS is not"), "{e}");
        let e = resolve("1/2".parse().unwrap(), None, t, env(&[])).unwrap_err();
        assert!(e.contains("--coordinator HOST:PORT"), "{e}");
        let e = resolve("1/2".parse().unwrap(), Some("nohost"), t, env(&[])).unwrap_err();
        assert!(e.contains("expected HOST:PORT"), "{e}");
    }
}
