//! What the JVM runs on, as the agent records it (processors, load,
//! memory, the VM's flags, the system properties and environment at the
//! start, the shutdown), checked against the JDK's own recorder running in
//! the same JVM, and read by Mission Control's rules.

use std::collections::BTreeMap;
use std::path::Path;

use heapsampler_test_support::{self as support, Deadline};
use serde_json::Value;
use support::{MissionControl, heapsampler_command, text};

/// A variable the recorded JVM inherits, which its recording must show
/// unless the environment is left out.
const VARIABLE: (&str, &str) = ("HEAPSAMPLER_TEST_VARIABLE", "present");

/// `heapsampler record FLAGS -o agent.jfr -- java JVM_ARGS -cp ...
/// Scenarios ARGS` with the JDK's own recorder on too, writing
/// `jdk.jfr` (the default settings: flags, properties, environment and
/// processors at the chunk's start, load every second); returns the
/// record's exit code. Fixed work: `Scenarios exit` allocates 64 MiB and
/// exits, `Scenarios exact` 6,000 small arrays.
fn record_with_the_jdks_recorder(
    dir: &Path,
    flags: &[&str],
    jvm: &[&str],
    args: &[&str],
) -> Option<i32> {
    let output = heapsampler_command(["record", "--interval", "64k"])
        .args(flags)
        .arg("-o")
        .arg(dir.join("agent.jfr"))
        .arg("--agent")
        .arg(support::agent_library())
        .args(["--", "java"])
        .arg(format!(
            "-XX:StartFlightRecording:filename={}",
            dir.join("jdk.jfr").display()
        ))
        .args(jvm)
        .arg("-cp")
        .arg(support::compiled_workload("Scenarios"))
        .arg("Scenarios")
        .args(args)
        .env(VARIABLE.0, VARIABLE.1)
        .output_in_time();
    assert!(
        dir.join("agent.jfr").exists(),
        "no recording: {}",
        text(&output.stderr)
    );
    output.status.code()
}

/// The events of `type_name` in the recording at `path`, as `jfr print
/// --json` reads them: their values.
fn events(path: &Path, type_name: &str) -> Vec<Value> {
    let document = support::print_json(path);
    support::json_events(&document)
        .iter()
        .filter(|event| event["type"] == type_name)
        .map(|event| event["values"].clone())
        .collect()
}

/// Key -> value of the key-value events of `type_name` (the first chunk's
/// start: one event per key).
fn pairs(path: &Path, type_name: &str) -> BTreeMap<String, Value> {
    events(path, type_name)
        .into_iter()
        .map(|values| {
            (
                values["key"].as_str().unwrap().to_owned(),
                values["value"].clone(),
            )
        })
        .collect()
}

/// (event type, name) -> (value, origin) of every flag event.
fn flags(path: &Path) -> BTreeMap<(String, String), (Value, Value)> {
    let mut flags = BTreeMap::new();
    for type_name in [
        "jdk.BooleanFlag",
        "jdk.IntFlag",
        "jdk.UnsignedLongFlag",
        "jdk.StringFlag",
    ] {
        for values in events(path, type_name) {
            let name = values["name"].as_str().unwrap().to_owned();
            flags.insert(
                (type_name.to_owned(), name),
                (values["value"].clone(), values["origin"].clone()),
            );
        }
    }
    flags
}

/// What `jmc-check -v` says of each rule: name -> (OK, INFO, WARNING or
/// NA; its summary). `None` where `test` has no checker.
fn rule_results(test: &str, path: &Path) -> Option<BTreeMap<String, (String, String)>> {
    let checked = MissionControl::find(test)?.run(["-v", path.to_str().unwrap()]);
    let said = text(&checked.stdout);
    assert!(
        said.contains("RESULT: parsed"),
        "Mission Control cannot parse {}: {said}{}",
        path.display(),
        text(&checked.stderr)
    );
    let rules = said
        .lines()
        .filter_map(|line| line.strip_prefix("RULE "))
        .filter_map(|rule| {
            // `NAME STATUS score=...`; a name may hold a space (`Fatal Errors`).
            let at = rule.find(" score=")?;
            let (name, status) = rule[..at].rsplit_once(' ')?;
            let summary = rule[at..]
                .split_once("] ")
                .map_or("", |(_, summary)| summary);
            Some((name.to_owned(), (status.to_owned(), summary.to_owned())))
        })
        .collect();
    Some(rules)
}

/// A JVM that exits by `System.exit`, with system properties, a heap size,
/// the diagnostic flags unlocked and an environment variable set: its processors, flags, properties and
/// environment are those the JDK's own recorder wrote in the same JVM;
/// its CPU load is shares in [0, 1] and its shutdown says `System.exit`
/// with the exiting thread's stack, as the JDK's does. Mission Control's
/// rules that read these events run, and a property named like a password
/// makes its rule warn.
#[test]
fn the_environment_is_what_the_jdk_records_of_the_same_jvm() {
    let dir = support::temp_dir("convert_environment");
    let code = record_with_the_jdks_recorder(
        &dir,
        &[],
        &[
            "-Dfoo.bar=baz",
            "-Dsome.password=x",
            "-Xmx256m",
            // Unlocks DebugNonSafepoints, which the agent then writes, as
            // the JDK does.
            "-XX:+UnlockDiagnosticVMOptions",
        ],
        // At least 2 s: the agent writes jdk.CPULoad at each flush (every
        // second) and at the end, and CompareCpu needs two, however fast
        // the machine.
        &["exit", "3", "2"],
    );
    assert_eq!(code, Some(3), "record passes the JVM's exit code on");
    let (ours, jdk) = (dir.join("agent.jfr"), dir.join("jdk.jfr"));

    // The processors: as HotSpot counts them.
    let cpu = |path: &Path| {
        let info = events(path, "jdk.CPUInformation");
        assert_eq!(info.len(), 1, "one chunk, one CPUInformation: {info:?}");
        let info = &info[0];
        (
            info["sockets"].as_u64().unwrap(),
            info["cores"].as_u64().unwrap(),
            info["hwThreads"].as_u64().unwrap(),
        )
    };
    let (sockets, cores, hw_threads) = cpu(&ours);
    assert_eq!((sockets, cores, hw_threads), cpu(&jdk));
    let usable = std::thread::available_parallelism().unwrap().get() as u64;
    assert!(
        sockets >= 1 && cores >= sockets && hw_threads >= cores && hw_threads >= usable,
        "{sockets} sockets, {cores} cores, {hw_threads} threads; {usable} usable here"
    );

    // Every flag written is the JDK's flag of the same type, value and
    // origin; those Mission Control's rules read are there.
    let (our_flags, jdk_flags) = (flags(&ours), flags(&jdk));
    for (flag, value) in &our_flags {
        assert_eq!(
            Some(value),
            jdk_flags.get(flag),
            "{flag:?} as the JDK writes it"
        );
    }
    for (type_name, name) in [
        ("jdk.BooleanFlag", "UnlockDiagnosticVMOptions"),
        ("jdk.BooleanFlag", "DebugNonSafepoints"),
        ("jdk.BooleanFlag", "IgnoreUnrecognizedVMOptions"),
        ("jdk.BooleanFlag", "UseG1GC"),
        ("jdk.BooleanFlag", "UseCompressedOops"),
        ("jdk.UnsignedLongFlag", "MaxHeapSize"),
        ("jdk.UnsignedLongFlag", "MaxMetaspaceSize"),
        ("jdk.StringFlag", "FlightRecorderOptions"),
    ] {
        assert!(
            our_flags.contains_key(&(type_name.to_owned(), name.to_owned())),
            "{type_name} {name} missing from {our_flags:?}"
        );
    }
    let flag = |type_name: &str, name: &str| &our_flags[&(type_name.to_owned(), name.to_owned())];
    assert_eq!(
        flag("jdk.UnsignedLongFlag", "MaxHeapSize"),
        &(Value::from(256u64 << 20), Value::from("Command line"))
    );
    // The JVM picked G1 itself: 2 processors and 256 MiB make a server
    // class machine.
    assert_eq!(
        flag("jdk.BooleanFlag", "UseG1GC"),
        &(Value::from(true), Value::from("Ergonomic"))
    );

    // The properties and the environment: the JDK's, exactly.
    let properties = pairs(&ours, "jdk.InitialSystemProperty");
    assert_eq!(properties["foo.bar"], "baz");
    assert!(!properties.contains_key("jdk.boot.class.path.append"));
    assert_eq!(properties, pairs(&jdk, "jdk.InitialSystemProperty"));
    let variables = pairs(&ours, "jdk.InitialEnvironmentVariable");
    assert_eq!(variables[VARIABLE.0], VARIABLE.1);
    assert_eq!(variables, pairs(&jdk, "jdk.InitialEnvironmentVariable"));

    // The load: at least the end's, each share in [0, 1], the machine's at
    // least the JVM's.
    let loads = events(&ours, "jdk.CPULoad");
    assert!(!loads.is_empty());
    for load in &loads {
        let share = |field: &str| load[field].as_f64().unwrap();
        let (user, system, total) = (share("jvmUser"), share("jvmSystem"), share("machineTotal"));
        for share in [user, system, total] {
            assert!((0.0..=1.0).contains(&share), "{load}");
        }
        assert!(total + 1e-6 >= user + system, "{load}");
    }
    let memory = events(&ours, "jdk.PhysicalMemory");
    assert!(memory.len() >= 2, "at the chunk's start and at the end");
    for reading in &memory {
        let (total, used) = (
            reading["totalSize"].as_u64().unwrap(),
            reading["usedSize"].as_u64().unwrap(),
        );
        assert!(used > 0 && used < total, "{reading}");
    }

    // The shutdown: System.exit, on main, from the workload's main.
    let shutdown = events(&ours, "jdk.Shutdown");
    assert_eq!(shutdown.len(), 1, "{shutdown:?}");
    let jdk_shutdown = events(&jdk, "jdk.Shutdown");
    assert_eq!(shutdown[0]["reason"], "Shutdown requested from Java");
    assert_eq!(shutdown[0]["reason"], jdk_shutdown[0]["reason"]);
    assert_eq!(shutdown[0]["eventThread"]["javaName"], "main");
    // `jfr print` shows a stack's top 5 frames: System.exit is the 5th.
    let frames = shutdown[0]["stackTrace"]["frames"].as_array().unwrap();
    let frame = |at: usize| {
        let method = &frames[at]["method"];
        format!("{}.{}", method["type"]["name"], method["name"])
    };
    assert_eq!(frame(0), "\"java/lang/Shutdown\".\"halt0\"");
    assert_eq!(frames[0]["type"], "Native");
    assert_eq!(frame(4), "\"java/lang/System\".\"exit\"");

    // Mission Control's rules that read them run; the password warns.
    let Some(rules) = rule_results(
        "the_environment_is_what_the_jdk_records_of_the_same_jvm",
        &ours,
    ) else {
        return;
    };
    for rule in [
        "CompressedOops",
        "DiscouragedVmOptions",
        "CompareCpu",
        "HighJvmCpu",
        "LowOnPhysicalMemory",
        "DebugNonSafepoints",
        "ManagementAgent",
        "OverAggressiveRecordingSetting",
        "PasswordsInSystemProperties",
        "PasswordsInEnvironment",
    ] {
        let status = rules.get(rule).map(|(status, _)| status.as_str());
        assert!(
            matches!(status, Some("OK" | "INFO" | "WARNING")),
            "{rule}: {:?}",
            rules.get(rule)
        );
    }
    assert_eq!(rules["PasswordsInSystemProperties"].0, "WARNING");
    // Its load is read at each flush, every second: not "a long period".
    assert_eq!(rules["HighJvmCpu"].0, "OK");
    // Its verdict on System.exit has no severity (shown as n/a), but it ran.
    assert_eq!(
        rules["Fatal Errors"].1,
        "The JVM shut down in a normal way."
    );
}

/// A JVM whose last thread ends: its shutdown is the launcher's, as the
/// JDK says it; with `--no-environment` its environment is left out, and
/// said to be.
#[test]
fn a_normal_exit_and_no_environment() {
    let dir = support::temp_dir("convert_environment_normal");
    let code = record_with_the_jdks_recorder(&dir, &["--no-environment"], &[], &["exact"]);
    assert_eq!(code, Some(0));
    let (ours, jdk) = (dir.join("agent.jfr"), dir.join("jdk.jfr"));
    let shutdown = events(&ours, "jdk.Shutdown");
    assert_eq!(shutdown.len(), 1, "{shutdown:?}");
    assert_eq!(
        shutdown[0]["reason"],
        "No remaining non-daemon Java threads"
    );
    assert_eq!(
        shutdown[0]["reason"],
        events(&jdk, "jdk.Shutdown")[0]["reason"]
    );
    assert_eq!(shutdown[0]["eventThread"]["javaName"], "DestroyJavaVM");
    assert!(events(&ours, "jdk.InitialEnvironmentVariable").is_empty());
    // The JDK's own recording of the same JVM has it: it is there to leave out.
    assert_eq!(
        pairs(&jdk, "jdk.InitialEnvironmentVariable")[VARIABLE.0],
        VARIABLE.1
    );
    assert!(!events(&ours, "jdk.InitialSystemProperty").is_empty());
    let Some(rules) = rule_results("a_normal_exit_and_no_environment", &ours) else {
        return;
    };
    assert_eq!(
        rules["Fatal Errors"].0, "INFO",
        "the JDK's verdict on a normal exit"
    );
    assert_eq!(rules["PasswordsInEnvironment"].0, "NA");
}

/// A recording of several chunks: each starts with what the JVM runs on,
/// as the JDK's chunks do, so a chunk read alone (or what a rotation kept)
/// still says it; the flags are the same in each.
#[test]
fn every_chunk_starts_with_what_the_jvm_runs_on() {
    let dir = support::temp_dir("convert_environment_chunks");
    let path = dir.join("chunks.jfr");
    // 4 s of paced work: chunks of 1 s make 3 or more, however loaded the
    // machine (the work is paced by the clock, not by what it gets done).
    support::record_with_agent(
        &path,
        &["--interval", "256k", "--chunk-age", "1s"],
        "Scenarios",
        &["paced", "4", "8"],
    );
    let summary = support::summary(&path);
    let chunks = support::summary_chunks(&summary);
    assert!(chunks >= 3, "{summary}");
    let count = |type_name: &str| support::summary_count(&summary, type_name);
    assert_eq!(count("jdk.CPUInformation"), chunks, "{summary}");
    let properties = pairs(&path, "jdk.InitialSystemProperty").len() as u64;
    assert!(properties > 0);
    assert_eq!(count("jdk.InitialSystemProperty"), properties * chunks);
    let flags = flags(&path).len() as u64;
    let flag_events: u64 = [
        "jdk.BooleanFlag",
        "jdk.IntFlag",
        "jdk.UnsignedLongFlag",
        "jdk.StringFlag",
    ]
    .iter()
    .map(|type_name| count(type_name))
    .sum();
    assert_eq!(flag_events, flags * chunks, "{summary}");
    // The memory at each chunk's start and each flush (every second).
    assert!(count("jdk.PhysicalMemory") >= chunks + 3, "{summary}");
    assert!(count("jdk.CPULoad") >= 3, "{summary}");
    assert_eq!(count("jdk.Shutdown"), 1, "{summary}");
}
