//! The pages runner makes, loaded in a real browser (headless Chromium over its DevTools
//! protocol): report.html and the live dashboard load with no console error, every chart has
//! data, and the live page changes while a race runs. With `RUNNER_SCREENSHOTS=DIR` the
//! checks also leave screenshots of what they saw there (docs/ holds those).

pub mod cdp;

use crate::util::*;
use cdp::{chromium, Browser, Page};
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::Duration;

/// Every chart of the page has something drawn: a line with points, or a dot.
const EVERY_CHART_DRAWN: &str = "(() => { const s = Array.from(document.querySelectorAll('figure svg')); \
    return s.length > 0 && s.every(c => c.querySelector('polyline[points]:not([points=\"\"]), circle')); })()";

/// `runner plot latest~1 --compare latest` into the race store's `plots/`.
pub fn plot_compared(env: &Env) -> std::path::PathBuf {
    let out = env.home.path().join("plots");
    env.ok(&[
        "plot",
        "latest~1",
        "--compare",
        "latest",
        "--out",
        out.to_str().unwrap(),
    ]);
    out
}

/// The SVG files in `dir`.
pub fn svg_files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "svg")
        })
        .count()
}

fn keep_screenshot(page: &mut Page, name: &str, height: u32) {
    if let Some(dir) = std::env::var_os("RUNNER_SCREENSHOTS") {
        let png = page.screenshot(height);
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        std::fs::write(std::path::Path::new(&dir).join(name), png).unwrap();
    }
}

fn assert_no_problems(page: &mut Page, what: &str) {
    page.settle(Duration::from_millis(500));
    assert!(page.problems.is_empty(), "{what}: {:#?}", page.problems);
}

#[test]
fn the_report_page_loads_with_every_chart_drawn_in_light_dark_and_print() {
    let Some(browser) = chromium() else { return };
    let dir = track_dir(&[("track.yaml", &LIVE_TRACK.replace("7s", "3s"))]);
    let env = Env::new();
    for _ in 0..2 {
        env.ok(&[
            "race",
            "--track-path",
            dir.path().to_str().unwrap(),
            "--quiet",
        ]);
    }
    let out = plot_compared(&env);
    let charts = svg_files(&out);
    let chrome = Browser::launch(browser);
    let mut page = chrome.page();
    page.navigate(&format!("file://{}", out.join("report.html").display()));
    assert_eq!(
        page.eval("document.querySelectorAll('figure svg').length"),
        charts
    );
    assert_eq!(page.eval(EVERY_CHART_DRAWN), true, "a chart without data");
    assert_eq!(
        page.eval("document.querySelector('h2').textContent"),
        "Summary",
        "the summary comes first"
    );
    assert!(
        page.eval("Array.from(document.querySelectorAll('svg title')).some(t => t.textContent === 'warmup')")
            == true,
        "the warmup is shaded"
    );
    assert_eq!(
        page.eval("document.querySelectorAll('.card').length"),
        2,
        "a card per reported task"
    );
    assert!(
        page.eval("Array.from(document.querySelectorAll('.card')).every(c => c.textContent.includes('vs contender'))") == true,
        "each card says how the other race did"
    );
    assert_no_problems(&mut page, "report.html");
    keep_screenshot(&mut page, "check-report-compare.png", 1400);
    page.call(
        "Emulation.setEmulatedMedia",
        serde_json::json!({"features": [{"name": "prefers-color-scheme", "value": "dark"}]}),
    );
    assert_eq!(
        page.eval("getComputedStyle(document.body).backgroundColor"),
        "rgb(13, 17, 23)",
        "dark where the viewer prefers it"
    );
    keep_screenshot(&mut page, "check-report-dark.png", 900);
    let pdf = page.call("Page.printToPDF", serde_json::json!({}));
    assert!(
        pdf["data"].as_str().is_some_and(|d| d.len() > 10_000),
        "printable"
    );
    assert_no_problems(&mut page, "report.html, dark and printed");
}

const LIVE_TRACK: &str = "name: live
operations: [{name: nap, type: sleep, params: {duration: 2ms}}]
challenges:
  - name: c
    schedule:
      - {name: warm-nap, operation: nap, iterations: 50}
      - {name: nap, operation: nap, clients: 2, warmup: 1s, time-period: 7s, target-throughput: 200}
";

/// Starts `runner` with `args` and returns it with the dashboard's address from its stderr.
fn start_with_dashboard(env: &Env, args: &[&str]) -> (std::process::Child, String) {
    let mut child = env
        .command(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("runner prints the dashboard's address")
            .unwrap();
        if let Some(url) = line.strip_prefix("dashboard: ") {
            break url.split_whitespace().next().unwrap().to_string();
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    (child, url)
}

fn stop(mut child: std::process::Child) -> std::process::ExitStatus {
    // SAFETY: kill sends a signal to a process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    child.wait().unwrap()
}

#[test]
fn the_live_dashboard_changes_while_the_race_runs_then_shows_its_report() {
    let Some(browser) = chromium() else { return };
    let dir = track_dir(&[("track.yaml", LIVE_TRACK)]);
    let env = Env::new();
    let (runner, url) = start_with_dashboard(
        &env,
        &[
            "race",
            "--track-path",
            dir.path().to_str().unwrap(),
            "--dashboard",
            "--dashboard-keep",
            "60s",
        ],
    );
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    // A browser that never reads its events must not hold the race up.
    let port: u16 = url
        .trim_end_matches('/')
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let mut stuck = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(stuck, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();

    let chrome = Browser::launch(browser);
    let mut page = chrome.page();
    page.navigate(&url);
    assert!(
        page.wait_until(
            "document.querySelectorAll('#tasks svg.chart').length >= 3 && document.querySelector('#steps li.current') !== null && document.querySelector('#steps li.current').textContent.startsWith('nap')",
            Duration::from_secs(30)
        ),
        "the running task's charts appear"
    );
    // Every chart of the running task has data: throughput, latency, errors, the runner's CPU.
    assert!(page.wait_until(
        "Array.from(document.querySelectorAll('#tasks svg.chart')).every(s => Number(s.dataset.points) > 0)",
        Duration::from_secs(10)
    ));
    let seen = "Array.from(document.querySelectorAll('#tasks svg.chart')).map(s => s.dataset.points).join() + document.querySelector('.numbers b').textContent";
    let before = page.eval(seen);
    page.settle(Duration::from_millis(2500));
    let after = page.eval(seen);
    assert_ne!(before, after, "the page changed while the race ran");
    keep_screenshot(&mut page, "check-dashboard-live.png", 1000);
    assert!(
        page.wait_until("location.pathname === '/report'", Duration::from_secs(30)),
        "the race ended and the page went on to its report"
    );
    assert!(page.wait_until(
        "document.readyState === 'complete'",
        Duration::from_secs(10)
    ));
    assert_eq!(page.eval(EVERY_CHART_DRAWN), true);
    assert_no_problems(&mut page, "the dashboard");
    drop(stuck);
    let status = stop(runner);
    assert!(status.success() || status.code() == Some(130), "{status}");
    let race = env.only_race();
    let nap = &tasks(&race, "nap")[0]["trials"][0];
    let counted: u64 = nap["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["operations"].as_u64().unwrap())
        .sum();
    assert_eq!(
        counted,
        nap["operations"].as_u64().unwrap() + nap["warmup_operations"].as_u64().unwrap(),
        "the timeline counts every operation once"
    );
}

#[test]
fn show_dashboard_serves_a_stored_race_on_the_same_page() {
    let Some(browser) = chromium() else { return };
    let (env, out) = race_track(LIVE_TRACK.replace("7s", "2s").as_str(), &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (runner, url) = start_with_dashboard(&env, &["show", "latest", "--dashboard"]);
    let chrome = Browser::launch(browser);
    let mut page = chrome.page();
    page.navigate(&url);
    assert!(page.wait_until("location.pathname === '/report'", Duration::from_secs(20)));
    assert!(page.wait_until(
        "document.readyState === 'complete'",
        Duration::from_secs(10)
    ));
    assert_eq!(page.eval(EVERY_CHART_DRAWN), true);
    assert_no_problems(&mut page, "show --dashboard");
    let state = http_body(
        url.trim_end_matches('/')
            .rsplit(':')
            .next()
            .unwrap()
            .parse()
            .unwrap(),
        "GET",
        "/state",
        "",
    );
    assert!(
        state.contains("\"finished\":true") && state.contains("\"second\":1"),
        "{state}"
    );
    stop(runner);
}

/// The terminal's last frame showing `needle`: the overall line and the task lines under it,
/// from what `script` captured of a race's progress.
fn progress_frame(log: &str, needles: &[&str]) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut piece = String::new();
    let mut chars = log.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // An escape sequence (cursor moves, clears) ends a piece.
            '\u{1b}' => {
                while let Some(n) = chars.next() {
                    if n.is_ascii_alphabetic() {
                        break;
                    }
                }
                pieces.push(std::mem::take(&mut piece));
            }
            '\r' | '\n' => pieces.push(std::mem::take(&mut piece)),
            // A line padded to the terminal's width runs into the next in the capture.
            ' ' if piece.ends_with("  ") => {
                pieces.push(std::mem::take(&mut piece));
            }
            c => piece.push(c),
        }
    }
    let pieces: Vec<String> = pieces
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect();
    let at = pieces
        .iter()
        .rposition(|p| needles.iter().all(|n| p.contains(n)))
        .expect("a frame with the needles");
    let start = pieces[..at]
        .iter()
        .rposition(|p| p.starts_with("step "))
        .expect("an overall line");
    pieces[start..=at].to_vec()
}

/// The screenshots in docs/: `cargo build --release && RUNNER_TEST_BIN=target/release/runner
/// RUNNER_SCREENSHOTS=docs cargo test --test e2e docs_screenshots -- --ignored`.
#[test]
#[ignore = "writes the screenshots in docs/; run on purpose"]
fn docs_screenshots() {
    let Some(dir) = std::env::var_os("RUNNER_SCREENSHOTS") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let browser = chromium().expect("chromium");
    let env = Env::new();
    let chrome = Browser::launch(browser);
    let mut page = chrome.page();

    // The terminal while geonames' quick challenge indexes.
    let log = env.home.path().join("tty.log");
    let runner = runner_bin();
    let runner = runner.display();
    let status = std::process::Command::new("script")
        .args([
            "-qfc",
            &format!("{runner} race --track geonames --challenge quick > /dev/null"),
            log.to_str().unwrap(),
        ])
        .env("RUNNER_HOME", env.home.path())
        .env("RUNNER_TRACKS_DIR", repo().join("tracks"))
        .env("COLUMNS", "160")
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let text = String::from_utf8_lossy(&std::fs::read(&log).unwrap()).to_string();
    let frame = progress_frame(&text, &["docs/s · ", "% done"]).join("\n");
    let html = format!(
        "<body style=\"margin:0;background:#0d1117\"><pre style=\"margin:0;padding:16px;color:#e6edf3;font:13px monospace\">$ runner race --track geonames --challenge quick\n{}</pre></body>",
        frame.replace('&', "&amp;").replace('<', "&lt;")
    );
    let page_file = env.home.path().join("terminal.html");
    std::fs::write(&page_file, html).unwrap();
    page.navigate(&format!("file://{}", page_file.display()));
    std::fs::write(dir.join("progress.png"), page.screenshot(110)).unwrap();

    // The live dashboard mid-race, then the report it ends on.
    let (runner, url) = start_with_dashboard(
        &env,
        &[
            "race",
            "--track",
            "geonames",
            "--challenge",
            "quick",
            "--dashboard",
            "--dashboard-keep",
            "60s",
        ],
    );
    page.navigate(&url);
    assert!(page.wait_until(
        "(document.querySelector('#steps li.current') || {textContent: ''}).textContent.startsWith('phrase') && Array.from(document.querySelectorAll('#tasks svg.chart')).every(s => Number(s.dataset.points) >= 3)",
        Duration::from_secs(120)
    ));
    std::fs::write(dir.join("dashboard-live.png"), page.screenshot(1000)).unwrap();
    assert!(page.wait_until("location.pathname === '/report'", Duration::from_secs(120)));
    page.settle(Duration::from_secs(1));
    std::fs::write(dir.join("report-page.png"), page.screenshot(1400)).unwrap();
    stop(runner);

    // Two races of the quick challenge compared.
    let out = plot_compared(&env);
    page.navigate(&format!("file://{}", out.join("report.html").display()));
    // From the first task's charts, where both races are drawn on the same axes.
    let y = page
        .eval("document.querySelector('h3 + .charts').getBoundingClientRect().top + scrollY - 50");
    let shot = page.screenshot_at(y.as_f64().unwrap(), 1100);
    std::fs::write(dir.join("report-compare.png"), shot).unwrap();
    assert_no_problems(&mut page, "the pages");
}
