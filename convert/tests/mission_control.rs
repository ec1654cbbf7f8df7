//! Mission Control's analysis on agent recordings, run by Mission Control's
//! own parser and rules (`jmc-check`, `../shared/jmc/README.md`): what a
//! user sees on its Automated Analysis and Memory Leak pages. Skipped with
//! one line where `HEAPSAMPLER_JMC_CHECK` does not name it (outside CI).
//!
//! The workload is `Scenarios paced`: a fixed amount of allocation spread
//! over wall time (however loaded the machine, the same work at the same
//! pace), ending with `System.gc()`; with `leak` a quarter as much again
//! stays reachable from the static list `Scenarios.KEPT`, 8 MiB a second.
//! Mission Control's leak rule (`IncreasingLiveSet`) scores the growth of
//! the heap after collections relative to the heap after warm-up, 1 % a
//! second scoring 100 (a warning from 75): a few-ten-MiB heap growing by
//! 8 MiB a second is far past it, and a heap that does not grow is far
//! below. The rule warns only with paths to GC roots (without them it says
//! INFO at most, on the JDK's recordings too), so the warning is asserted
//! on `--roots` recordings.

use heapsampler_test_support::{
    self as support, Deadline, MissionControl, heapsampler_command, text,
};
use std::collections::BTreeSet;
use std::path::Path;

/// `Scenarios paced`'s seconds and MiB per second: 96 MiB allocated.
const PACED: [&str; 3] = ["paced", "3", "32"];

/// A small heap, so that collections come at a steady pace, under G1 (the
/// JVM picks Serial on a machine it deems a client).
const JVM: [&str; 2] = ["-Xmx256m", "-XX:+UseG1GC"];

/// The rules Mission Control cannot run on an agent recording, and why.
/// Any other rule that says n/a fails the test.
const NOT_APPLICABLE: &[(&str, &str)] = &[
    // n/a on the JDK's own recordings of this workload too: events of
    // things it does not do (class loaders, sockets, processes, code cache
    // trouble, finalizers, ...), or off in the JDK's `profile` settings.
    ("ClassLeak", "no class loaders come and go"),
    ("ClassLoading", "JDK only: jdk.ClassLoad, off in profile"),
    ("CodeCache", "JDK only: code cache events"),
    ("ContextSwitch", "JDK only: jdk.ThreadContextSwitchRate"),
    ("CryptoSecurityRule", "JDK only: certificate events"),
    ("DMSIncident", "JDK only: WebLogic's DMS"),
    ("DumpReason", "JDK only: jdk.DumpReason, on crashes"),
    ("DynamicAgents", "JDK 21+ only: jdk.JavaAgent/NativeAgent"),
    ("FileForce", "JDK only: file I/O instrumentation"),
    ("FinalizersRun", "JDK only: jdk.FinalizerStatistics"),
    (
        "GcFreedRatio",
        "JDK only: jdk.GCHeapSummary per region type",
    ),
    ("HeapContent", "JDK only: jdk.ObjectCount, off in profile"),
    ("MultipleAgents", "JDK 21+ only: jdk.JavaAgent/NativeAgent"),
    ("ProcessStarted", "JDK only: jdk.ProcessStart"),
    ("SocketRead", "JDK only: socket instrumentation"),
    ("SocketWrite", "JDK only: socket instrumentation"),
    ("StringDeduplication", "JDK only: string table statistics"),
    (
        "TlabAllocationRatio",
        "JDK only: TLAB events, off in profile",
    ),
    ("ZGCAllocationStallRule", "ZGC only"),
    // What only the JVM's own recorder knows: its VM operations and
    // safepoints, execution samples, the JDK's I/O and throwable
    // instrumentation, G1's pause-time tracker, GC threads' CPU time.
    ("ApplicationHalts", "needs jdk.ExecuteVMOperation"),
    (
        "biasedLockingRevocation",
        "needs the JVM's biased locking events",
    ),
    (
        "biasedLockingRevocationPause",
        "needs jdk.ExecuteVMOperation",
    ),
    ("VMOperations", "needs jdk.ExecuteVMOperation"),
    ("Errors", "needs jdk.JavaErrorThrow"),
    ("Exceptions", "needs jdk.ExceptionStatistics"),
    ("FewSampledThreads", "needs jdk.ExecutionSample"),
    ("MethodProfiling", "needs jdk.ExecutionSample"),
    ("FileRead", "needs the JDK's file I/O events"),
    ("FileWrite", "needs the JDK's file I/O events"),
    ("HeapDump", "needs jdk.HeapDump"),
    ("GcInvertedParallelism", "needs jdk.GCCPUTime"),
    ("GcPauseTargetRule", "needs G1's jdk.G1MMU"),
    ("JavaBlocking", "needs jdk.JavaMonitorEnter"),
    (
        "ManyRunningProcesses",
        "needs jdk.SystemProcess (the machine's)",
    ),
    ("MetaspaceOom", "needs jdk.MetaspaceOOM"),
];

/// At most this many of the 70 rules n/a on a default recording (the
/// issue's bound): the 35 above.
const MOST_NOT_APPLICABLE: usize = 35;

/// Mission Control's verdicts on a recording.
struct Analysis {
    /// Its whole output, for failure messages.
    output: String,
    /// Each rule's id and verdict (`OK`, `INFO`, `WARNING`, `NA`).
    rules: Vec<(String, String)>,
}

impl Analysis {
    /// `jmc-check -v` of `path`, which must parse with no rule exception
    /// and no parser warning.
    fn of(jmc: &MissionControl, path: &Path) -> Self {
        let run = jmc.run(["-v", path.to_str().unwrap()]);
        let output = text(&run.stdout);
        assert_eq!(
            run.status.code(),
            Some(0),
            "Mission Control on {}: {output}{}",
            path.display(),
            text(&run.stderr)
        );
        assert!(output.contains("RESULT: parsed"), "{output}");
        assert!(
            !output.contains("RULE-EXCEPTION") && !output.contains("LOG WARNING"),
            "{output}"
        );
        let rules = output
            .lines()
            .filter_map(|line| {
                let mut words = line.strip_prefix("RULE ")?.split_whitespace();
                Some((words.next()?.to_owned(), words.next()?.to_owned()))
            })
            .collect();
        Self { output, rules }
    }

    fn verdict(&self, rule: &str) -> &str {
        self.rules
            .iter()
            .find(|(id, _)| id == rule)
            .map(|(_, verdict)| verdict.as_str())
            .unwrap_or_else(|| panic!("no rule {rule} in {}", self.output))
    }

    /// The line of `rule`'s verdict and its explanation.
    fn text_of(&self, rule: &str) -> String {
        let start = format!("RULE {rule} ");
        let mut lines = self
            .output
            .lines()
            .skip_while(|line| !line.starts_with(&start));
        let first = lines.next().unwrap_or_default();
        let more = lines.take_while(|line| line.starts_with("    "));
        std::iter::once(first)
            .chain(more)
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn not_applicable(&self) -> BTreeSet<&str> {
        self.rules
            .iter()
            .filter(|(_, verdict)| verdict == "NA")
            .map(|(id, _)| id.as_str())
            .collect()
    }

    /// No rule is n/a but those listed (and `also`), with the reasons.
    fn assert_not_applicable_only(&self, also: &[&str]) {
        let expected: BTreeSet<&str> = NOT_APPLICABLE
            .iter()
            .map(|(rule, _)| *rule)
            .chain(also.iter().copied())
            .collect();
        let unexpected: Vec<&str> = self
            .not_applicable()
            .into_iter()
            .filter(|rule| !expected.contains(rule))
            .collect();
        assert!(
            unexpected.is_empty(),
            "n/a on our recording, not on the JDK's: {unexpected:?}\n{}",
            self.output
        );
    }

    /// The `SystemGc` rule saw the workload's `System.gc()`: with none it
    /// says "No garbage collections were caused by System.gc()". (Its
    /// severity stays OK: it divides two integers, so the share is 0 %
    /// unless every collection was one.)
    fn assert_system_gc_seen(&self) {
        let said = self.text_of("SystemGc");
        assert!(
            said.contains("of the garbage collections were caused by System.gc()"),
            "{said}"
        );
    }
}

/// Records `Scenarios ARGS` under JDK 17's or the PATH's JVM with
/// heapsampler's `flags`.
fn record(path: &Path, flags: &[&str], args: &[&str]) {
    let output = heapsampler_command(["record"])
        .args(flags)
        .arg("-o")
        .arg(path)
        .arg("--agent")
        .arg(support::agent_library())
        .args(["--", "java"])
        .args(JVM)
        .arg("-cp")
        .arg(support::compiled_workload("Scenarios"))
        .arg("Scenarios")
        .args(args)
        .output_in_time();
    assert!(output.status.success(), "{}", text(&output.stderr));
}

/// A recording with heapsampler's defaults runs every rule the agent can
/// feed: at most 35 n/a, each for a reason listed, none throwing; the
/// collections named as the JDK names them, `System.gc()` seen.
#[test]
fn a_default_recording_runs_every_rule_the_agent_can_feed() {
    let Some(jmc) = MissionControl::find("a_default_recording_runs_every_rule_the_agent_can_feed")
    else {
        return;
    };
    let dir = support::temp_dir("mission_control_default");
    let path = dir.join("default.jfr");
    record(&path, &[], &[&PACED[..], &["leak"]].concat());
    let analysis = Analysis::of(&jmc, &path);
    analysis.assert_not_applicable_only(&[]);
    let not_applicable = analysis.not_applicable();
    assert!(
        not_applicable.len() <= MOST_NOT_APPLICABLE,
        "{} rules n/a: {not_applicable:?}",
        not_applicable.len()
    );
    analysis.assert_system_gc_seen();
    // Without paths to roots, the leak rule can say the live set grows,
    // not what holds it: INFO at most, as on the JDK's recordings.
    assert_ne!(
        analysis.verdict("IncreasingLiveSet"),
        "NA",
        "{}",
        analysis.output
    );
    // The JDK's collector names: FullGc counts G1Full collections (the
    // System.gc()), GcStall reads G1Old as the old collector.
    assert_eq!(analysis.verdict("FullGc"), "WARNING", "{}", analysis.output);
}

/// With paths to GC roots, the leak rule warns on a leaking workload and
/// names what holds the leak, `Scenarios.KEPT`; the same workload without
/// the leak gets no warning.
#[test]
fn the_leak_rule_warns_on_a_leak_and_only_then() {
    let Some(jmc) = MissionControl::find("the_leak_rule_warns_on_a_leak_and_only_then") else {
        return;
    };
    let dir = support::temp_dir("mission_control_leak");
    let leaking = dir.join("leak.jfr");
    let steady = dir.join("steady.jfr");
    record(&leaking, &["--roots"], &[&PACED[..], &["leak"]].concat());
    record(&steady, &["--roots"], &PACED);

    let analysis = Analysis::of(&jmc, &leaking);
    assert_eq!(
        analysis.verdict("IncreasingLiveSet"),
        "WARNING",
        "{}",
        analysis.text_of("IncreasingLiveSet")
    );
    let leaks = jmc.run(["--leaks", leaking.to_str().unwrap()]);
    let said = text(&leaks.stdout);
    let candidates = said
        .lines()
        .filter(|line| line.trim_start().starts_with("candidate "))
        .count();
    assert!(candidates >= 1, "{said}");
    // The chain from the leaked arrays to their root, as the page shows it.
    assert!(
        said.lines()
            .any(|line| line.contains("java.lang.Class.KEPT {Class Name: Scenarios}")),
        "{said}"
    );
    analysis.assert_not_applicable_only(&[]);

    let analysis = Analysis::of(&jmc, &steady);
    assert_ne!(
        analysis.verdict("IncreasingLiveSet"),
        "WARNING",
        "{}",
        analysis.text_of("IncreasingLiveSet")
    );
}

/// The metaspace after the agent's collections grows by what the agent
/// loads: left to the first collection's notification, the management
/// interface's classes (540 to 580 KiB on JDK 17) showed as growth, read
/// by Mission Control's metaspace rule as a class leak of the
/// application's. Once they load before the first collection the
/// recording writes, the metaspace of `Scenarios paced`, which loads no
/// class once it runs, grows only by the JIT's profiles of the code the
/// notifications run, a few KiB a collection early on (14 KiB over its 4
/// or 5 collections, 126 KiB over 110 with a 2 MiB young generation):
/// 256 KiB is about twice that and half what the classes took. The rule,
/// which reads whole MiB, does not warn.
#[test]
fn the_metaspace_rule_stays_quiet_on_a_run_that_loads_no_class() {
    let dir = support::temp_dir("mission_control_metaspace");
    let path = dir.join("steady.jfr");
    record(&path, &[], &PACED);
    // Each collection's metaspace in use after it, as the JDK reads it.
    let used: Vec<u64> = support::dump_types(&path, &["jdk.MetaspaceSummary"])
        .iter()
        .filter(|line| support::dump_value(line, "when") == "After GC")
        .map(|line| {
            let metaspace = &line[line.find(" metaspace=").expect(line)..];
            support::dump_value(metaspace, "used").parse().expect(line)
        })
        .collect();
    let (Some(first), Some(last)) = (used.first(), used.last()) else {
        panic!("no metaspace after a collection in {}", path.display());
    };
    assert!(used.len() >= 2, "{used:?}");
    assert!(
        last.saturating_sub(*first) < 256 << 10,
        "the metaspace grew by {} bytes: {used:?}",
        last - first
    );
    let Some(jmc) =
        MissionControl::find("the_metaspace_rule_stays_quiet_on_a_run_that_loads_no_class")
    else {
        return;
    };
    let analysis = Analysis::of(&jmc, &path);
    assert_ne!(
        analysis.verdict("IncreasingMetaSpaceLiveSet"),
        "WARNING",
        "{}",
        analysis.text_of("IncreasingMetaSpaceLiveSet")
    );
}

/// A recording of several chunks (`--chunk-age 1s`) reads as one: no rule
/// throws, the rules run as on one chunk, and the Memory Leak page counts
/// each live object once.
#[test]
fn a_rotated_recording_reads_as_one() {
    let Some(jmc) = MissionControl::find("a_rotated_recording_reads_as_one") else {
        return;
    };
    let dir = support::temp_dir("mission_control_rotated");
    let path = dir.join("rotated.jfr");
    record(
        &path,
        &["--chunk-age", "1s"],
        &[&PACED[..], &["leak"]].concat(),
    );
    let chunks = support::recordings::chunk_spans(&std::fs::read(&path).unwrap()).len();
    assert!(chunks >= 2, "{chunks} chunks");
    let analysis = Analysis::of(&jmc, &path);
    analysis.assert_not_applicable_only(&[]);
    analysis.assert_system_gc_seen();

    let leaks = jmc.run(["--leaks", path.to_str().unwrap()]);
    let said = text(&leaks.stdout);
    let count = |prefix: &str, key: &str| -> u64 {
        said.lines()
            .find(|line| line.starts_with(prefix))
            .and_then(|line| {
                line.split_whitespace()
                    .find_map(|word| word.strip_prefix(key))
            })
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no {key} on a {prefix} line: {said}"))
    };
    let events = count("OldObjectSample", "events=");
    let objects = count("model:", "leakObjects=");
    let roots = count("model:", "rootObjects(trees)=");
    assert!(events > 0, "{said}");
    // Without paths to roots each object is its own tree.
    assert_eq!(
        (objects, roots),
        (events, events),
        "each live object once: {said}"
    );
}
