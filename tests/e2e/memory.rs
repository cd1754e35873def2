//! The runner's own memory stays bounded whatever the corpus size: 2,000,000 generated
//! documents at bulk size 50,000 against `runner serve --stub` (another process), with the
//! runner's peak RSS read from the kernel (its VmHWM). Sizes, not times, are asserted;
//! benches/memory.sh measures 0.5M to 50M documents and a 10-minute run for BENCHMARKS.md.

use crate::elasticsearch::{serve, url};
use crate::util::*;

/// Runs the command to its end; returns its exit code and peak resident set in bytes.
///
/// The peak is the child's own `VmHWM`, polled every 2 ms until it exits. Not `wait4`'s
/// `ru_maxrss`: at `exec` the kernel folds the forking process's high-water mark into it, so a
/// test process grown by other tests would be counted as the runner's.
pub fn run_measuring_peak_rss(mut cmd: std::process::Command) -> (i32, u64) {
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("runner starts");
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0u64;
    loop {
        if let Ok(status) = std::fs::read_to_string(&status_file) {
            if let Some(kb) = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            {
                peak_kb = peak_kb.max(kb);
            }
        }
        if let Some(status) = child.try_wait().expect("wait for the runner") {
            return (status.code().unwrap_or(-1), peak_kb * 1024);
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

#[test]
fn indexing_two_million_generated_documents_keeps_the_runner_under_256_mb() {
    let env = Env::new();
    let server = serve(&env, &["--stub"]);
    let u = url(server.port);
    let track = repo().join("examples/bounded-memory");
    let cmd = env.command(&[
        "race",
        "--track-path",
        track.to_str().unwrap(),
        "--quiet",
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &u,
        "--track-params",
        "documents:2000000",
    ]);
    let (code, peak) = run_measuring_peak_rss(cmd);
    assert_eq!(code, 0);
    let race = env.only_race();
    let bulk = &tasks(&race, "bulk")[0]["trials"][0];
    assert_eq!(
        (bulk["units"].as_u64(), bulk["requests"].as_u64()),
        (Some(2_000_000), Some(40)),
        "{bulk}"
    );
    eprintln!(
        "MEMORY 2,000,000 documents at bulk 50,000: peak RSS {} MB",
        peak / (1 << 20)
    );
    assert!(peak < 256 << 20, "peak RSS {} MB", peak / (1 << 20));
}

#[test]
fn a_scale_to_base_that_decompresses_without_end_is_refused_within_bounded_memory() {
    // 3 KB of zstd that expands to 200 MB of one document repeated.
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("docs.json.zst");
    {
        let mut enc = zstd::stream::Encoder::new(std::fs::File::create(&bomb).unwrap(), 3).unwrap();
        let line = format!("{{\"geonameid\":1,\"name\":\"{}\"}}\n", "x".repeat(1000));
        for _ in 0..200_000 {
            std::io::Write::write_all(&mut enc, line.as_bytes()).unwrap();
        }
        enc.finish().unwrap();
    }
    let compressed = std::fs::metadata(&bomb).unwrap().len();
    let track = "name: t
corpora: [{name: c, target-index: i, documents: [{source-file: docs.json.zst, scale-to: 10000000}]}]
indices: [{name: i}]
operations: [{name: ci, type: create-index}, {name: bulk, type: bulk, params: {bulk-size: 1000}}]
challenges: [{name: c, schedule: [{operation: ci}, {operation: bulk, iterations: 2}]}]
";
    std::fs::write(dir.path().join("track.yaml"), track).unwrap();
    let env = Env::new();
    let mut cmd = env.command(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ]);
    cmd.stderr(std::process::Stdio::null());
    let (code, peak) = run_measuring_peak_rss(cmd);
    eprintln!(
        "scale-to bomb ({compressed} bytes of zstd): exit {code}, peak RSS {} MB",
        peak >> 20
    );
    assert!(compressed < 100_000, "{compressed}");
    assert_ne!(code, 0);
    assert!(peak < 256 << 20, "peak RSS {} MB", peak >> 20);
    let out = env.run(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ]);
    let said =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("decompresses past 128 MB"), "{said}");
}

#[test]
fn endless_and_oversized_peers_keep_the_runner_under_256_mb() {
    use crate::elasticsearch::{fault_server, Fault as Http};
    use crate::redis_faults::{resp_fault_server, Fault as Resp};
    let search = "name: t
operations: [{name: s, type: search, params: {index: i}}]
challenges: [{name: c, schedule: [{operation: s, iterations: 3}]}]
";
    let get = "name: t
operations: [{name: g, type: get, params: {keyspace: 10}}]
challenges: [{name: c, schedule: [{operation: g, iterations: 3}]}]
";
    let cases = [
        (
            "http: a chunked search body that never ends",
            search,
            "elasticsearch",
            format!(
                "http://127.0.0.1:{}",
                fault_server(Http::EndlessChunked, 200)
            ),
        ),
        (
            "http: a GET / body that never ends",
            search,
            "elasticsearch",
            format!("http://127.0.0.1:{}", fault_server(Http::EndlessRoot, 200)),
        ),
        (
            "resp: $99999999999 then endless bytes",
            get,
            "redis",
            format!("127.0.0.1:{}", resp_fault_server(Resp::HugeLength)),
        ),
        (
            "resp: a line that never ends",
            get,
            "redis",
            format!("127.0.0.1:{}", resp_fault_server(Resp::EndlessLine)),
        ),
    ];
    for (what, track, backend, host) in cases {
        let dir = track_dir(&[("track.yaml", track)]);
        let env = Env::new();
        let mut cmd = env.command(&[
            "race",
            "--track-path",
            dir.path().to_str().unwrap(),
            "--quiet",
            "--backend",
            backend,
            "--target-hosts",
            &host,
            "--client-options",
            "timeout:5",
        ]);
        cmd.stderr(std::process::Stdio::null());
        let started = std::time::Instant::now();
        let (code, peak) = run_measuring_peak_rss(cmd);
        eprintln!(
            "PEER {what}: exit {code} after {:?}, peak RSS {} MB",
            started.elapsed(),
            peak >> 20
        );
        assert!(peak < 256 << 20, "{what}: peak RSS {} MB", peak >> 20);
        assert!(
            code == 0 || code == 1,
            "{what}: a counted error or a clear failure, not a crash: exit {code}"
        );
    }
}

#[test]
fn ten_thousand_clients_cost_kilobytes_each() {
    // The same throttled no-op work at 100 and at 10,000 clients (one operation a second
    // each, two seconds): the growth of the runner's peak RSS per added client.
    let peak_at = |clients: u64| {
        let track = format!(
            "name: t
operations: [{{name: nap, type: sleep, params: {{duration: 1ms}}}}]
challenges: [{{name: c, schedule: [{{name: a, operation: nap, clients: {clients}, time-period: 2s, target-throughput: {clients}}}]}}]
"
        );
        let dir = track_dir(&[("track.yaml", &track)]);
        let env = Env::new();
        let mut cmd = env.command(&[
            "race",
            "--track-path",
            dir.path().to_str().unwrap(),
            "--quiet",
        ]);
        cmd.stderr(std::process::Stdio::null());
        let (code, peak) = run_measuring_peak_rss(cmd);
        assert_eq!(code, 0, "{clients} clients");
        let race = env.only_race();
        let trial = &race["tasks"][0]["trials"][0];
        assert_eq!(
            trial["operations"],
            2 * clients,
            "{clients} clients: every scheduled operation ran: {trial}"
        );
        peak
    };
    let (few, many) = (peak_at(100), peak_at(10_000));
    let per_client = many.saturating_sub(few) / 9_900;
    eprintln!(
        "peak RSS: 100 clients {} MB, 10,000 clients {} MB: {} KB per added client",
        few >> 20,
        many >> 20,
        per_client >> 10
    );
    assert!(per_client < 32 << 10, "{} KB per client", per_client >> 10);
}
