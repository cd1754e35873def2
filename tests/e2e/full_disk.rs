//! A results home that fills up mid-race: on a 6 MB tmpfs (mounted in a user and mount
//! namespace of its own, so no root is needed and nothing outside the test sees it).

use crate::util::*;
use std::process::Command;

fn unshare_works() -> bool {
    Command::new("unshare")
        .args(["-rm", "sh", "-c", "mount -t tmpfs -o size=1m none /mnt"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether a tmpfs can be mounted here; says NOT CHECKED when it cannot.
fn can_mount_tmpfs() -> bool {
    let works = unshare_works();
    if !works {
        eprintln!(
            "NOT CHECKED: this machine cannot mount a tmpfs in a user namespace (unshare -rm)"
        );
    }
    works
}

#[test]
fn a_disk_that_fills_mid_race_leaves_no_temp_file_and_says_what_was_stored() {
    if !can_mount_tmpfs() {
        return;
    }
    // Each trial's file is about 1.5 KB: 3,000 trials pass the 2 MB left beside the 4 MB the
    // race sets aside for its end, and their consolidation passes the 6 MB.
    let track = track_dir(&[(
        "track.yaml",
        "name: t
operations: [{name: nap, type: sleep, params: {duration: 0s}}]
challenges:
  - name: c
    schedule:
      - {name: a, operation: nap, iterations: 1, trials: 1000}
      - {name: b, operation: nap, iterations: 1, trials: 1000}
      - {name: c, operation: nap, iterations: 1, trials: 1000}
",
    )]);
    let mnt = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_runner");
    let script = format!(
        "mount -t tmpfs -o size=6m none {m} && H={m}/home && \
         {bin} --results-dir $H race --track-path {t} --quiet >/dev/null 2>$H.err; echo \"race exit $?\"; \
         cat $H.err; echo '--- show'; {bin} --results-dir $H show latest; echo \"show exit $?\"; \
         echo '--- list'; {bin} --results-dir $H list races; echo '--- files'; \
         find $H -name '*.tmp' -o -name '.reserve'; echo \"trial files: $(ls $H/races/*/trials | wc -l)\"",
        m = mnt.path().display(),
        t = track.path().display(),
    );
    let out = Command::new("unshare")
        .args(["-rm", "sh", "-c", &script])
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("race exit 1"), "{text}");
    assert!(
        text.contains("No space left on device"),
        "the error names the cause: {text}"
    );
    assert!(text.contains("show exit 0"), "{text}");
    assert!(
        text.contains("not fully stored: the results could not be consolidated"),
        "{text}"
    );
    assert!(
        !text.contains("killed"),
        "a full disk is not a killed runner: {text}"
    );
    assert!(text.contains("store-failed"), "list races says so: {text}");
    let files = text.split("--- files").nth(1).unwrap();
    assert!(
        !files.contains(".tmp") && !files.contains(".reserve"),
        "no temp file is left: {files}"
    );
    let stored: u64 = files
        .split("trial files: ")
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        stored > 100 && stored < 3000,
        "the trials stored before the disk filled: {stored}"
    );
    // The report counts exactly the trials whose files were written (`510/1000` per task).
    let show = text
        .split("--- show")
        .nth(1)
        .unwrap()
        .split("## Service time")
        .next()
        .unwrap();
    let shown: u64 = show
        .split(" |")
        .filter_map(|cell| cell.trim().strip_suffix("/1000")?.parse::<u64>().ok())
        .sum();
    assert_eq!(shown, stored, "{show}");
}

/// Runs `script` in a user and mount namespace with a tmpfs of `size` at a temp dir (`$M`),
/// filled to leave about `free_kb` KB; the runner is `$R`.
fn on_a_nearly_full_tmpfs(size: &str, free_kb: u64, script: &str) -> String {
    let mnt = tempfile::tempdir().unwrap();
    let full = format!(
        "M={m} && R={bin} && mount -t tmpfs -o size={size} none $M && \
         avail=$(df -k $M | awk 'NR==2 {{print $4}}') && \
         dd if=/dev/zero of=$M/fill bs=1k count=$((avail - {free_kb})) 2>/dev/null; {script}",
        m = mnt.path().display(),
        bin = env!("CARGO_BIN_EXE_runner"),
    );
    let out = Command::new("unshare")
        .args(["-rm", "sh", "-c", &full])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr)
}

const SHORT_TRIALS: &str = "name: t
operations: [{name: nap, type: sleep, params: {duration: 0s}}]
challenges:
  - name: c
    schedule:
      - {name: a, operation: nap, iterations: 1, trials: 300}
";

#[test]
fn a_nearly_full_disk_keeps_every_trial_stored_and_the_record_says_why() {
    if !can_mount_tmpfs() {
        return;
    }
    // As a user tried it: a 2 MB results home with about 200 KB left, a race of 300 short
    // trials. No space is left for the 4 MB set aside for consolidation, so it fails.
    let track = track_dir(&[("track.yaml", SHORT_TRIALS)]);
    let text = on_a_nearly_full_tmpfs(
        "2m",
        200,
        &format!(
            "H=$M/home; $R --results-dir $H race --track-path {t} --quiet >/dev/null; echo \"race exit $?\"; \
             echo '--- show'; $R --results-dir $H show latest; echo \"show exit $?\"; \
             echo '--- list'; $R --results-dir $H list races; echo '--- files'; \
             find $H -name '*.tmp' -o -name '.reserve' -o -name '.status-reserve'; \
             echo \"trial files: $(ls $H/races/*/trials | wc -l)\"",
            t = track.path().display()
        ),
    );
    assert!(text.contains("race exit 1"), "{text}");
    assert!(text.contains("No space left on device"), "{text}");
    let stored: u64 = text
        .split("trial files: ")
        .nth(1)
        .and_then(|t| t.lines().next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(stored > 0 && stored < 300, "{text}");
    assert!(
        text.contains(&format!(
            "the {stored} trial(s) stored as they ended are kept"
        )),
        "the error says what was kept: {text}"
    );
    assert!(text.contains("show exit 0"), "{text}");
    assert!(text.contains("status **store-failed**"), "{text}");
    assert!(
        text.contains("not fully stored: the results could not be consolidated"),
        "{text}"
    );
    assert!(!text.contains("killed"), "{text}");
    let files = text
        .split("--- files")
        .nth(1)
        .and_then(|f| f.split("trial files:").next())
        .unwrap();
    assert!(
        !files.contains(".tmp") && !files.contains("reserve"),
        "no temp or reserve file is left: {files}"
    );
    let show = text.split("--- show").nth(1).unwrap();
    assert!(
        show.contains(&format!("| {stored}/300 |")),
        "every stored trial is read back: {show}"
    );
}

#[test]
fn a_full_disk_refuses_the_race_before_it_starts_and_leaves_nothing() {
    if !can_mount_tmpfs() {
        return;
    }
    let track = track_dir(&[("track.yaml", SHORT_TRIALS)]);
    let text = on_a_nearly_full_tmpfs(
        "2m",
        8,
        &format!(
            "H=$M/home; $R --results-dir $H race --track-path {t} --quiet >/dev/null; echo \"race exit $?\"; \
             echo '--- list'; $R --results-dir $H list races; echo \"races: $(ls $H/races | wc -l)\"",
            t = track.path().display()
        ),
    );
    assert!(text.contains("race exit 1"), "{text}");
    assert!(text.contains("no room to start a race"), "{text}");
    assert!(
        text.contains("races: 0"),
        "nothing half-made is left: {text}"
    );
}
