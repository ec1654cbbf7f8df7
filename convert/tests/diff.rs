//! `heapsampler diff` on real recordings of a workload that allocates at a
//! steady rate of wall time (`Scenarios paced`), with and without a leak.

use heapsampler_test_support as support;
use heapsampler_test_support::Deadline;

use heapsampler_test_support::heapsampler_command;
use std::path::{Path, PathBuf};

/// Seconds of allocation per recording, and MiB allocated per second: at
/// the 256 KiB interval, about 280 samples a recording, half in each of the
/// workload's two sites.
const SECONDS: &str = "3";
const MIB_PER_SECOND: &str = "24";

/// Records `Scenarios paced` (with `extra` arguments) into `path`.
fn record(path: PathBuf, extra: &[&str]) -> PathBuf {
    let args = [&["paced", SECONDS, MIB_PER_SECOND], extra].concat();
    support::record_with_agent(&path, &["--interval", "256k"], "Scenarios", &args);
    path
}

/// `heapsampler diff BASE NEW ARGS...`'s output; it must succeed.
fn diff(base: &Path, new: &Path, args: &[&str]) -> String {
    let output = heapsampler_command(["diff"])
        .args([base, new])
        .args(args)
        .output_in_time();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// `(significant, where)` of each row: the rank cell ends in `~` when the
/// change is not significant.
fn rows(text: &str) -> Vec<(bool, String)> {
    text.lines()
        .skip(2)
        .take_while(|l| !l.starts_with("total"))
        .map(|l| {
            let cells: Vec<&str> = l
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect();
            (!cells[0].ends_with('~'), cells.last().unwrap().to_string())
        })
        .collect()
}

#[test]
fn the_same_workload_shows_no_change_and_a_leak_comes_first() {
    let dir = support::temp_dir("convert_diff");
    // One after another: three JVMs at once on a loaded machine start and
    // stop at times far enough apart to move the rates they are compared by
    // (bytes over each recording's length, the JVM's start included).
    let [base, again, leak] = [
        ("base.jfr", &[][..]),
        ("again.jfr", &[]),
        ("leak.jfr", &["leak"]),
    ]
    .map(|(name, extra)| record(dir.join(name), extra));

    // The same workload twice: the thread that did all the work (about 280
    // samples a side) did not change significantly. Under no change, two
    // 95% intervals of one group miss each other with probability about
    // 0.6% (|Z| > 1.96 √2), the rate at which this check fails spuriously;
    // a row per site would multiply it by the sites. Main's row need not
    // come first: a thread of a few samples (the JVM's notification thread,
    // which builds each collection's notification) can change more by
    // chance, and not significantly.
    let text = diff(&base, &again, &["--by", "thread"]);
    let main = rows(&text).into_iter().find(|(_, thread)| thread == "main");
    assert_eq!(main, Some((false, "main".to_owned())), "{text}");

    // The leak, switched on in one run only, allocates a quarter more from
    // its own site and keeps it: first and significant, as a rate and as
    // live bytes (the workload ends with a collection, so what the other
    // sites allocated is dead by then in both runs).
    for args in [&["--by", "app-site"][..], &["--by", "app-site", "--live"]] {
        let text = diff(&base, &leak, args);
        let first = &rows(&text)[0];
        assert!(
            first.0 && first.1.starts_with("Scenarios$Paced.leak("),
            "{args:?}\n{text}"
        );
    }
    let text = diff(&base, &leak, &[]);
    assert!(
        text.starts_with("allocation rate by site: "),
        "the first line says what is compared: {text}"
    );
    assert!(text.contains(" MB/s"), "rates: {text}");
}

#[test]
fn a_recording_without_what_diff_compares_says_so() {
    let jdk = support::jdk_recording();
    let output = heapsampler_command(["diff", "--live"])
        .args([jdk, jdk])
        .output_in_time();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("has no heapsampler.ObjectLifetime events"),
        "{stderr}"
    );
}
