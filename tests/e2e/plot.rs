use crate::browser::cdp::{chromium, headless};
use crate::util::*;

#[test]
fn plot_writes_charts_and_a_report_page_that_renders_in_chromium() {
    let env = Env::new();
    env.ok(&["race", "--track", "geonames", "--test-mode", "--quiet"]);
    env.ok(&[
        "race",
        "--track",
        "geonames",
        "--test-mode",
        "--quiet",
        "--track-params",
        "bulk_sizes=[500,1000]",
    ]);
    let out = crate::browser::plot_compared(&env);
    for f in [
        "throughput-index-append.svg",
        "percentiles-search-sankt-georgen.svg",
        "throughput-search-sankt-georgen.svg",
        "report.html",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let svg = std::fs::read_to_string(out.join("percentiles-search-sankt-georgen.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.matches("<polyline").count() == 16,
        "8 sweep points × 2 races, latency and service: {}",
        svg.matches("<polyline").count()
    );
    assert!(svg.contains("99.99%"), "percentile axis");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let charts = crate::browser::svg_files(&out);
    assert_eq!(
        html.matches("<svg").count(),
        charts,
        "every chart is inline in the page"
    );
    assert!(
        html.contains("Compared with") && html.contains("track parameter bulk_sizes differs"),
        "the comparison and its warning are on the page"
    );

    let Some(browser) = chromium() else { return };
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", out.join("report.html").display());
    let dom = headless(browser, profile.path())
        .args(["--dump-dom", &url])
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom.contains("<h2>Throughput</h2>") && dom.matches("<svg").count() == charts,
        "chromium parsed the page: {} bytes",
        dom.len()
    );
    let shot = out.join("report.png");
    let status = headless(browser, profile.path())
        .args([
            "--window-size=1250,2400",
            &format!("--screenshot={}", shot.display()),
            &url,
        ])
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "a real screenshot ({} bytes)",
        png.len()
    );
}

#[test]
fn plot_draws_the_runners_cpu_beside_the_throughput_timeline() {
    let (env, out) = race_track(
        "name: t
operations: [{name: nap, type: sleep, params: {duration: 1ms}}]
challenges: [{name: c, schedule: [{name: nap, operation: nap, time-period: 3s, target-throughput: 100}]}]
",
        &[],
    );
    assert!(out.status.success());
    let dir = env.home.path().join("plots");
    env.ok(&["plot", "latest", "--out", dir.to_str().unwrap()]);
    let svg =
        std::fs::read_to_string(dir.join("runner-cpu-nap.svg")).expect("the runner's CPU chart");
    assert!(
        svg.contains("cores available") && svg.contains("<polyline"),
        "{svg}"
    );
    assert!(dir.join("throughput-over-time-nap.svg").is_file());
}
