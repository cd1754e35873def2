//! The runner's own CPU and memory while a trial runs, sampled by a task of its own once a
//! second (off the measured path): whether the numbers measure the system or the runner.

use crate::metrics::{LiveGroup, LiveTotals, SecondPoint, MAX_TIMELINE_SECONDS};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the runner process used during one trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DriverUsage {
    /// CPU time (user + system) over the trial's wall time, in cores.
    pub cpu_cores: f64,
    /// The cores this process may run on (its affinity mask: `taskset` counts).
    pub cores_available: u32,
    /// The highest one-second CPU use during the trial, in cores.
    pub peak_cpu_cores: f64,
    /// CPU cores used in each second of the trial.
    pub cpu_per_second: Vec<f64>,
    /// Resident memory at its highest so far (the process's high-water mark), in bytes.
    pub peak_rss_bytes: u64,
    /// Resident memory at the end of each second of the trial, in bytes.
    #[serde(default)]
    pub rss_per_second: Vec<u64>,
    /// The track's param source, where one drew the trial's params: whether it kept up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param_source: Option<ParamSourceUsage>,
}

/// How a param source of the track's Python kept up with a trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ParamSourceUsage {
    pub source: String,
    pub drawn: u64,
    /// Params per second while drawing and converting: the most the source can give.
    pub draws_per_second: f64,
    /// Calls whose params were not ready when due, and the seconds clients waited for them.
    pub waits: u64,
    pub wait_seconds: f64,
    /// The rate the task asked for (ops/s), if it asked for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_per_second: Option<f64>,
}

impl ParamSourceUsage {
    pub(super) fn of(
        source: &str,
        stats: &super::python::FeedStats,
        target: Option<crate::units::OpsPerSec>,
    ) -> ParamSourceUsage {
        use std::sync::atomic::Ordering::Relaxed;
        let drawn = stats.drawn.load(Relaxed);
        let busy = stats.busy_nanos.load(Relaxed) as f64 / 1e9;
        ParamSourceUsage {
            source: source.to_string(),
            drawn,
            draws_per_second: if busy > 0.0 { drawn as f64 / busy } else { 0.0 },
            waits: stats.waits.load(Relaxed),
            wait_seconds: stats.wait_nanos.load(Relaxed) as f64 / 1e9,
            target_per_second: target.map(|t| t.0),
        }
    }
}

/// CPU time (user + system) of this process so far, all threads, from getrusage. `runner
/// serve` reports it as its own `_nodes/stats` CPU too.
pub fn cpu_time() -> Duration {
    // SAFETY: getrusage writes only the struct passed in.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return Duration::ZERO;
    }
    let tv =
        |t: libc::timeval| Duration::new(t.tv_sec.max(0) as u64, (t.tv_usec.max(0) as u32) * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

pub fn cores_available() -> u32 {
    // SAFETY: sched_getaffinity writes at most the size given into the set passed in.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } == 0
    {
        // SAFETY: the set was filled in above.
        let n = unsafe { libc::CPU_COUNT(&set) };
        if n > 0 {
            return n as u32;
        }
    }
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// A `/proc/self/status` field in kB (VmRSS, VmHWM), in bytes.
fn status_bytes(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn peak_rss_bytes() -> u64 {
    status_bytes("VmHWM:")
}

/// What a trial's clients have done, watched by the sampler each second: the trial's
/// timeline, and each second handed to `publish` (the live dashboard) as it ends.
pub struct Watch {
    pub groups: Vec<Arc<LiveGroup>>,
    pub publish: Option<Publish>,
}

/// Called with each second as it ends: the second, the totals so far and the runner's CPU
/// in that second (cores).
pub type Publish = Box<dyn FnMut(&SecondPoint, &LiveTotals, f64) + Send>;

/// What the sampler's thread gives back.
#[derive(Default)]
struct Sampled {
    cpu: Vec<f64>,
    rss: Vec<u64>,
    timeline: Vec<SecondPoint>,
}

/// Samples the process once a second from `start` until `finish`, on a thread of its own: the
/// runtime's workers may be kept busy by the clients (that is what it is there to see).
pub struct Sampler {
    started: std::time::Instant,
    cpu_at_start: Duration,
    stop: Arc<(Mutex<bool>, std::sync::Condvar)>,
    thread: Option<std::thread::JoinHandle<Sampled>>,
}

/// The sampler thread's state between two ticks.
struct Ticks {
    watch: Option<Watch>,
    totals: LiveTotals,
    before: LiveTotals,
    sampled: Sampled,
    last_cpu: Duration,
    last_at: std::time::Instant,
    /// Whole seconds ticked so far.
    seconds: u32,
}

impl Ticks {
    /// One tick: the CPU and memory of the time since the last, and what the clients did in it.
    fn tick(&mut self, now: std::time::Instant, whole_second: bool) {
        let cpu = cpu_time();
        let wall = now.saturating_duration_since(self.last_at).as_secs_f64();
        let cores = if wall > 0.0 {
            cpu.saturating_sub(self.last_cpu).as_secs_f64() / wall
        } else {
            0.0
        };
        if whole_second && wall > 0.0 {
            self.sampled.cpu.push(cores);
            self.sampled.rss.push(status_bytes("VmRSS:"));
        }
        if let Some(watch) = &mut self.watch {
            self.totals.read(&watch.groups);
            let second = self.totals.since(&self.before);
            // The ticker wakes a little after each whole second: the count of ticks, not the
            // clock, says which second a point is.
            let point = second.point(self.seconds + 1, (!whole_second).then_some(wall));
            if whole_second || point.operations > 0 {
                if let Some(publish) = &mut watch.publish {
                    publish(&point, &self.totals, cores);
                }
                if self.sampled.timeline.len() < MAX_TIMELINE_SECONDS {
                    self.sampled.timeline.push(point);
                }
            }
            std::mem::swap(&mut self.before, &mut self.totals);
        }
        (self.last_cpu, self.last_at) = (cpu, now);
        if whole_second {
            self.seconds += 1;
        }
    }
}

impl Sampler {
    pub fn start(watch: Option<Watch>) -> Sampler {
        let (started, cpu_at_start) = (std::time::Instant::now(), cpu_time());
        let stop = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
        let signal = stop.clone();
        let thread = std::thread::Builder::new()
            .name("runner-telemetry".into())
            .spawn(move || {
                let (lock, wake) = &*signal;
                let mut ticks = Ticks {
                    watch,
                    totals: LiveTotals::default(),
                    before: LiveTotals::default(),
                    sampled: Sampled::default(),
                    last_cpu: cpu_at_start,
                    last_at: started,
                    seconds: 0,
                };
                let mut next = started + Duration::from_secs(1);
                let mut stopped = lock.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    // Checked before each wait: a stop given before this thread first waited
                    // must not cost a second.
                    if !*stopped {
                        let now = std::time::Instant::now();
                        if now < next {
                            stopped = wake
                                .wait_timeout(stopped, next - now)
                                .unwrap_or_else(|p| p.into_inner())
                                .0;
                            continue;
                        }
                        ticks.tick(now, true);
                        next += Duration::from_secs(1);
                        continue;
                    }
                    // The clients have ended: what they did since the last whole second.
                    ticks.tick(std::time::Instant::now(), false);
                    return ticks.sampled;
                }
            })
            .ok();
        Sampler {
            started,
            cpu_at_start,
            stop,
            thread,
        }
    }

    /// Stops sampling: the runner's usage over the trial, and the trial's timeline.
    pub fn finish(mut self) -> (DriverUsage, Vec<SecondPoint>) {
        let (lock, wake) = &*self.stop;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) = true;
        wake.notify_all();
        let Sampled { cpu, rss, timeline } = self
            .thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        let wall = self.started.elapsed().as_secs_f64();
        let used = cpu_time().saturating_sub(self.cpu_at_start).as_secs_f64();
        let cpu_cores = if wall > 0.0 { used / wall } else { 0.0 };
        let usage = DriverUsage {
            cpu_cores,
            cores_available: cores_available(),
            // A trial shorter than a second has only its average.
            peak_cpu_cores: cpu.iter().copied().fold(cpu_cores, f64::max),
            cpu_per_second: cpu,
            peak_rss_bytes: peak_rss_bytes(),
            rss_per_second: rss,
            param_source: None,
        };
        (usage, timeline)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_a_trial_burns_is_counted() {
        // CPU time, not wall time, decides when to stop: no timing is asserted.
        let wall = std::time::Instant::now();
        let sampler = Sampler::start(None);
        let start = cpu_time();
        let mut x = 0u64;
        while cpu_time().saturating_sub(start) < Duration::from_millis(200) {
            x = x.wrapping_add(1);
        }
        let (used, timeline) = sampler.finish();
        assert!(timeline.is_empty(), "nothing was watched");
        let wall = wall.elapsed().as_secs_f64();
        assert!(x > 0);
        assert!(
            used.cpu_cores * wall >= 0.2 - 1e-3,
            "{used:?} over {wall} s"
        );
        assert!(used.peak_cpu_cores >= used.cpu_cores);
        assert!(
            used.cores_available >= 1 && used.peak_rss_bytes > 0,
            "{used:?}"
        );
    }
}
