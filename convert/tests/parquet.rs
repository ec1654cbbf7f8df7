//! `heapsampler convert --format parquet`, read by the engines a fleet
//! queries its recordings with: DuckDB and Apache Spark (PyPI's `duckdb`
//! and `pyspark`, local mode on the JDK on the PATH), installed by
//! `.ci/run` from `testdata/python/requirements.txt`; without them these
//! tests are skipped, unless CI=true.
//!
//! The lake: four recordings of the bundled `Scenarios paced` (fixed work:
//! 32 MiB allocated), two of them with its leak (8 MiB kept reachable at
//! `Scenarios$Paced.leak`), each converted to its own Parquet file and all
//! queried at once by a glob. They all run on this machine, so each is
//! given the host it stands for the way a container is: its JVM's
//! `HOSTNAME` (`host-a` for the leaking two, `host-b` for the others),
//! which the recording keeps (`jdk.InitialEnvironmentVariable`) and the
//! `host` column reads. Per recording, DuckDB's and Spark's sums are
//! `heapsampler top`'s (the library's exact figures) to within 1e-9 of the
//! total: the same weights added in another order, as doubles.

use heapsampler_test_support as support;
use heapsampler_test_support::Deadline;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use heapsampler_cli::analysis::top::{self, GroupBy, Query, Table};
use heapsampler_cli::model::filter::Filter;
use heapsampler_cli::model::process::Process;
use heapsampler_cli::output::parquet::{self, Identity, ParquetOptions};
use heapsampler_cli::pipeline::Pipeline;
use heapsampler_test_support::{
    heapsampler_command, heapsampler_exit, heapsampler_ok, workload_line,
};
use jfr_reader::file::RecordingFile;

/// The relative difference allowed between two sums of the same weights
/// added in different orders.
const TOLERANCE: f64 = 1e-9;

/// The site the leaking recordings keep their leak at.
fn leak_site() -> String {
    let line = workload_line("Scenarios", "KEPT.add(new byte[1024 - 16]);");
    format!("Scenarios$Paced.leak({line})")
}

/// One recording of the lake.
#[derive(Debug)]
struct Recorded {
    jfr: PathBuf,
    host: &'static str,
    leak: bool,
}

/// The lake's recordings and the folder of their Parquet files.
#[derive(Debug)]
struct Lake {
    recordings: Vec<Recorded>,
    parquet: PathBuf,
}

impl Lake {
    /// The glob of every Parquet file of the lake.
    fn glob(&self) -> String {
        format!("{}/*.parquet", self.parquet.display())
    }
}

/// Records the four recordings once for every test here (one after the
/// other: the machine has two cores) and converts each with the command
/// line.
fn lake() -> &'static Lake {
    static LAKE: OnceLock<Lake> = OnceLock::new();
    LAKE.get_or_init(|| {
        let dir = support::temp_dir("convert_parquet_lake");
        let parquet = dir.join("lake");
        std::fs::create_dir_all(&parquet).unwrap();
        let runs = [
            ("a1", "host-a", true),
            ("a2", "host-a", true),
            ("b1", "host-b", false),
            ("b2", "host-b", false),
        ];
        let recordings = runs
            .into_iter()
            .map(|(name, host, leak)| {
                let jfr = dir.join(format!("{name}.jfr"));
                let mut args = vec!["paced", "2", "16"];
                if leak {
                    args.push("leak");
                }
                let output = heapsampler_command(["record", "--interval", "64k", "-o"])
                    .arg(&jfr)
                    .arg("--agent")
                    .arg(support::agent_library())
                    .args(["--", "java", "-cp"])
                    .arg(support::compiled_workload("Scenarios"))
                    .arg("Scenarios")
                    .args(&args)
                    .env("HOSTNAME", host)
                    .output_in_time();
                assert!(
                    output.status.success(),
                    "record {name}: {}",
                    support::text(&output.stderr)
                );
                let out = parquet.join(format!("{name}.parquet"));
                let stderr = heapsampler_ok([
                    "convert",
                    jfr.to_str().unwrap(),
                    "--format",
                    "parquet",
                    "-o",
                    out.to_str().unwrap(),
                ])
                .1;
                assert!(stderr.is_empty(), "nothing to say: {stderr}");
                Recorded { jfr, host, leak }
            })
            .collect();
        Lake {
            recordings,
            parquet,
        }
    })
}

/// `heapsampler top --by site [--live]`'s table, from the library: exact
/// figures, where the command line rounds them.
fn table(path: &Path, live: bool) -> Table {
    let query = Query {
        by: GroupBy::Site,
        live,
        min_gcs: 0,
    };
    top::top(
        RecordingFile::open(path).unwrap(),
        query,
        &Pipeline::default(),
    )
    .unwrap()
}

/// Runs `python -c SCRIPT ARGS...`, which must succeed, and parses the
/// JSON it prints.
fn python_json(python: &Path, script: &str, args: &[&str]) -> serde_json::Value {
    let output = Command::new(python)
        .arg("-c")
        .arg(script)
        .args(args)
        // Spark: no lookup of this machine's name, no UI server.
        .env("SPARK_LOCAL_IP", "127.0.0.1")
        .output_in_time();
    let stderr = support::text(&output.stderr);
    assert!(output.status.success(), "python: {stderr}");
    let stdout = support::text(&output.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"))
}

/// What an engine answered, as the scripts print it: per recording and
/// site, the allocated bytes and samples (`jdk.ObjectAllocationSample`)
/// and the live ones (`heapsampler.ObjectLifetime` rows with `live`); the
/// live bytes by host and site, most first, and in how many recordings;
/// and each recording's identity columns.
#[derive(Debug)]
struct Answers {
    sites: BTreeMap<String, BTreeMap<String, Figures>>,
    /// Sites in the order each engine ranked them by bytes, per recording.
    ranked: BTreeMap<String, Vec<String>>,
    by_host: Vec<(String, String, f64, u64)>,
    identity: BTreeMap<String, serde_json::Value>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Figures {
    bytes: f64,
    samples: u64,
    live_bytes: f64,
    live_samples: u64,
}

fn answers(json: &serde_json::Value) -> Answers {
    let number = |v: &serde_json::Value| v.as_f64().unwrap_or(0.0);
    let count = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
    let mut sites: BTreeMap<String, BTreeMap<String, Figures>> = BTreeMap::new();
    let mut ranked: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in json["sites"].as_array().unwrap() {
        let figures = Figures {
            bytes: number(&row[2]),
            samples: count(&row[3]),
            live_bytes: number(&row[4]),
            live_samples: count(&row[5]),
        };
        let (recording, site) = (text(&row[0]), text(&row[1]));
        if figures.samples > 0 {
            ranked
                .entry(recording.clone())
                .or_default()
                .push(site.clone());
        }
        sites.entry(recording).or_default().insert(site, figures);
    }
    let by_host = json["by_host"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                text(&row[0]),
                text(&row[1]),
                number(&row[2]),
                count(&row[3]),
            )
        })
        .collect();
    let identity = json["identity"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| (text(&row["recording"]), row.clone()))
        .collect();
    Answers {
        sites,
        ranked,
        by_host,
        identity,
    }
}

/// Asserts that `a` and `b` are sums of the same weights.
fn assert_close(what: &str, a: f64, b: f64, total: f64) {
    assert!(
        (a - b).abs() <= TOLERANCE * total.max(1.0),
        "{what}: {a} against top's {b}"
    );
}

/// Asserts what an engine answered of the lake: each recording's sites
/// and totals as `top` and `top --live` have them, its first site top's
/// largest, its identity what the recording says, and the leak standing
/// out by host.
fn assert_answers(engine: &str, lake: &Lake, answers: &Answers) {
    assert_eq!(answers.sites.len(), lake.recordings.len(), "{engine}");
    for recorded in &lake.recordings {
        let name = recorded.jfr.display().to_string();
        let sites = &answers.sites[&name];
        for (live, what) in [(false, "allocated"), (true, "live")] {
            let table = table(&recorded.jfr, live);
            let total = table.total.bytes();
            let figures = |f: &Figures| {
                if live {
                    (f.live_bytes, f.live_samples)
                } else {
                    (f.bytes, f.samples)
                }
            };
            let (sum, samples) = sites
                .values()
                .map(figures)
                .fold((0.0, 0), |(b, s), (fb, fs)| (b + fb, s + fs));
            let case = format!("{engine}, {name}, {what}");
            assert_close(&case, sum, total, total);
            assert_eq!(samples, table.total.samples(), "{case}");
            // What is live at the end of a run without the leak is what a
            // sample or two happened to catch after its last collection
            // (most runs one, some none): only the leaking runs, with over
            // a hundred live samples, must have something to compare.
            if !live || recorded.leak {
                assert!(table.total.samples() > 0, "{case}: nothing to compare");
            }
            let counted = sites.values().filter(|f| figures(f).1 > 0).count();
            assert_eq!(counted, table.entries.len(), "{case}: the sites");
            for entry in &table.entries {
                let (bytes, samples) = figures(&sites[&entry.key]);
                assert_close(
                    &format!("{case}, {}", entry.key),
                    bytes,
                    entry.bytes(),
                    total,
                );
                assert_eq!(samples, entry.samples(), "{case}, {}", entry.key);
            }
            if !live {
                let first = &answers.ranked[&name][0];
                let largest = table.entries.iter().map(|e| e.bytes()).fold(0.0, f64::max);
                assert_close(&case, sites[first].bytes, largest, total);
            }
        }
        // The identity: the host given, and the pid and start the JDK
        // reads in the recording.
        let identity = &answers.identity[&name];
        assert_eq!(identity["host"], recorded.host, "{engine}, {name}");
        let jvm = support::dump_types(&recorded.jfr, &["jdk.JVMInformation"]);
        let pid: i64 = support::dump_value(&jvm[0], "pid").parse().unwrap();
        assert_eq!(identity["pid"], pid, "{engine}, {name}");
        let start: i64 = support::dump_value(&jvm[0], "jvmStartTime")
            .parse()
            .unwrap();
        assert_eq!(identity["jvm_start_ms"], start, "{engine}, {name}");
        let jvm_name = identity["jvm_name"].as_str().unwrap_or_default();
        assert!(jvm_name.contains(" VM"), "{engine}: {identity}");
        // java.vm.version: `17.0.15+6-Debian-1deb12u1`.
        let version = identity["jvm_version"].as_str().unwrap_or_default();
        assert!(
            version.starts_with(|c: char| c.is_ascii_digit()),
            "{engine}: {identity}"
        );
        assert_eq!(identity["rows"], identity["rows_with_identity"], "{engine}");
    }
    // The leak stands out by host: first of every host and site by live
    // bytes, in both of host-a's recordings and in none of host-b's.
    let leak_site = leak_site();
    let (host, site, _, recordings) = &answers.by_host[0];
    assert_eq!(
        (host.as_str(), site.as_str(), *recordings),
        ("host-a", leak_site.as_str(), 2),
        "{engine}: {:?}",
        answers.by_host
    );
    assert!(
        !answers
            .by_host
            .iter()
            .any(|(host, site, _, _)| host == "host-b" && *site == leak_site),
        "{engine}: {:?}",
        answers.by_host
    );
    // And by far: more than the next (host, site) by live bytes tenfold.
    let next = answers.by_host.get(1).map_or(0.0, |row| row.2);
    assert!(
        answers.by_host[0].2 > 10.0 * next,
        "{engine}: {:?}",
        answers.by_host
    );
}

/// The queries, in DuckDB's SQL: a list is indexed from 1 (`stack[1]`).
const DUCKDB_SCRIPT: &str = r#"
import duckdb, json, sys
files = f"read_parquet('{sys.argv[1]}')"
site = "coalesce(stack[1], '(no Java frames)')"
c = duckdb.connect()
def rows(sql):
    return [list(r) for r in c.sql(sql).fetchall()]
sites = rows(f"""
    SELECT recording, {site} AS site,
        sum(weight) FILTER (WHERE event = 'jdk.ObjectAllocationSample') AS bytes,
        count(*) FILTER (WHERE event = 'jdk.ObjectAllocationSample') AS samples,
        sum(weight) FILTER (WHERE event = 'heapsampler.ObjectLifetime' AND live),
        count(*) FILTER (WHERE event = 'heapsampler.ObjectLifetime' AND live)
    FROM {files} GROUP BY recording, site ORDER BY recording, bytes DESC NULLS LAST, site""")
by_host = rows(f"""
    SELECT host, stack[1] AS site, sum(weight) AS live_bytes,
        count(DISTINCT recording) AS recordings
    FROM {files}
    WHERE event = 'heapsampler.ObjectLifetime' AND live
    GROUP BY host, site ORDER BY live_bytes DESC""")
identity = [dict(zip(["recording", "host", "pid", "jvm_start_ms", "jvm_name", "jvm_version",
                      "rows", "rows_with_identity"], r)) for r in rows(f"""
    SELECT recording, any_value(host), any_value(pid), epoch_ms(any_value(jvm_start)),
        any_value(jvm_name), any_value(jvm_version), count(*),
        count(*) FILTER (WHERE host IS NOT NULL AND pid IS NOT NULL
                         AND jvm_start IS NOT NULL AND jvm_version IS NOT NULL)
    FROM {files} GROUP BY recording""")]
print(json.dumps({"sites": sites, "by_host": by_host, "identity": identity}))
"#;

/// The same queries in Spark SQL, in one session: a list is indexed from
/// 1 by `try_element_at` (`element_at` fails on an empty list).
const SPARK_SCRIPT: &str = r#"
import json, sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[2]").appName("heapsampler-parquet-test")
         .config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.sql.session.timeZone", "UTC")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
files = f"parquet.`{sys.argv[1]}`"
site = "coalesce(try_element_at(stack, 1), '(no Java frames)')"
def rows(sql):
    return [list(r) for r in spark.sql(sql).collect()]
sites = rows(f"""
    SELECT recording, {site} AS site,
        sum(weight) FILTER (WHERE event = 'jdk.ObjectAllocationSample') AS bytes,
        count(*) FILTER (WHERE event = 'jdk.ObjectAllocationSample') AS samples,
        sum(weight) FILTER (WHERE event = 'heapsampler.ObjectLifetime' AND live),
        count(*) FILTER (WHERE event = 'heapsampler.ObjectLifetime' AND live)
    FROM {files} GROUP BY recording, site ORDER BY recording, bytes DESC NULLS LAST, site""")
by_host = rows(f"""
    SELECT host, try_element_at(stack, 1) AS site, sum(weight) AS live_bytes,
        count(DISTINCT recording) AS recordings
    FROM {files}
    WHERE event = 'heapsampler.ObjectLifetime' AND live
    GROUP BY host, site ORDER BY live_bytes DESC""")
identity = [dict(zip(["recording", "host", "pid", "jvm_start_ms", "jvm_name", "jvm_version",
                      "rows", "rows_with_identity"], r)) for r in rows(f"""
    SELECT recording, first(host), first(pid), unix_millis(first(jvm_start)),
        first(jvm_name), first(jvm_version), count(*),
        count(*) FILTER (WHERE host IS NOT NULL AND pid IS NOT NULL
                         AND jvm_start IS NOT NULL AND jvm_version IS NOT NULL)
    FROM {files} GROUP BY recording""")]
spark.stop()
print(json.dumps({"sites": sites, "by_host": by_host, "identity": identity}))
"#;

#[test]
fn duckdb_sums_a_glob_of_recordings_as_top_sums_each() {
    let test = "duckdb_sums_a_glob_of_recordings_as_top_sums_each";
    let Some(python) = support::python::needed_python(test, &["duckdb"]) else {
        return;
    };
    let lake = lake();
    let json = python_json(&python, DUCKDB_SCRIPT, &[&lake.glob()]);
    assert_answers("duckdb", lake, &answers(&json));
}

#[test]
fn spark_sums_a_glob_of_recordings_as_top_sums_each() {
    let test = "spark_sums_a_glob_of_recordings_as_top_sums_each";
    let Some(python) = support::python::needed_python(test, &["pyspark"]) else {
        return;
    };
    let lake = lake();
    let json = python_json(&python, SPARK_SCRIPT, &[&lake.glob()]);
    assert_answers("spark", lake, &answers(&json));
}

#[test]
fn events_keep_some_allocation_types_and_nothing_else() {
    let test = "events_keep_some_allocation_types_and_nothing_else";
    let Some(python) = support::python::needed_python(test, &["duckdb"]) else {
        return;
    };
    let lake = lake();
    let recording = &lake.recordings[0].jfr;
    let out = recording.with_file_name("lifetimes.parquet");
    heapsampler_ok([
        "convert",
        recording.to_str().unwrap(),
        "--format",
        "parquet",
        "--events",
        "heapsampler.ObjectLifetime",
        "--thread",
        "^main$",
        "-o",
        out.to_str().unwrap(),
    ]);
    let script = r#"
import duckdb, json, sys
print(json.dumps(duckdb.sql(f"SELECT event, thread, count(*) FROM read_parquet('{sys.argv[1]}') GROUP BY ALL").fetchall()))
"#;
    let json = python_json(&python, script, &[out.to_str().unwrap()]);
    let lifetimes =
        support::summary_count(&support::summary(recording), "heapsampler.ObjectLifetime");
    // Scenarios allocates on its main thread; the JVM's own threads a
    // little.
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{json}");
    assert_eq!(rows[0][0], "heapsampler.ObjectLifetime");
    assert_eq!(rows[0][1], "main");
    let main = rows[0][2].as_u64().unwrap();
    assert!(
        main > lifetimes / 2 && main <= lifetimes,
        "{main} of {lifetimes}"
    );

    // Other types are not allocation events: refused before anything is read.
    let (code, stderr) = heapsampler_exit([
        "convert",
        recording.to_str().unwrap(),
        "--format",
        "parquet",
        "--events",
        "jdk.ExecutionSample",
        "-o",
        out.with_file_name("cpu.parquet").to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("jdk.ExecutionSample") && stderr.contains("jdk.ObjectAllocationSample"),
        "{stderr}"
    );
    assert!(!out.with_file_name("cpu.parquet").exists());
}

/// Writes `recording` as Parquet on `threads` threads: the file's bytes,
/// and what was written.
fn parquet_bytes(
    recording: &Path,
    threads: usize,
    out: &Path,
) -> (Vec<u8>, parquet::ParquetWritten) {
    let identity = Identity::of("many-chunks.jfr".to_owned(), &Process::default());
    let options = ParquetOptions {
        events: &[],
        filter: &Filter::default(),
        stack_depth: 64,
        identity: &identity,
    };
    let file = RecordingFile::open(recording).unwrap();
    let writer = Box::new(std::fs::File::create(out).unwrap());
    let written = parquet::write(file, &options, writer, &Pipeline::on(threads), &mut |_| {})
        .unwrap_or_else(|e| panic!("{e}"));
    (std::fs::read(out).unwrap(), written)
}

#[test]
fn one_row_group_per_chunk_in_chunk_order_on_any_number_of_threads() {
    let dir = support::temp_dir("convert_parquet_threads");
    let recording = dir.join("many-chunks.jfr");
    support::write_allocation_samples(&recording, 3000, 20, 1024);
    let chunks = support::summary_chunks(&support::summary(&recording));
    assert!(chunks > 10, "{chunks} chunks");
    let out = dir.join("one.parquet");
    let (one, written) = parquet_bytes(&recording, 1, &out);
    assert_eq!(written.rows, [3000, 0, 0, 0]);
    assert_eq!(written.row_groups, chunks);
    for threads in [2, 3, 8] {
        let (bytes, more) = parquet_bytes(&recording, threads, &dir.join("more.parquet"));
        assert_eq!(more, written, "{threads} threads");
        assert!(bytes == one, "{threads} threads: another file");
    }
    // What DuckDB reads of it: the rows in file order, their weights.
    let test = "one_row_group_per_chunk_in_chunk_order_on_any_number_of_threads";
    let Some(python) = support::python::needed_python(test, &["duckdb"]) else {
        return;
    };
    let script = r#"
import duckdb, json, sys
rows = duckdb.sql(f"SELECT weight, thread, recording, host, len(stack) FROM read_parquet('{sys.argv[1]}')").fetchall()
print(json.dumps([list(r) for r in rows]))
"#;
    let json = python_json(&python, script, &[out.to_str().unwrap()]);
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), 3000);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row[0].as_f64(), Some(i as f64), "row {i}: {row}");
        assert_eq!(row[1], "t");
        assert_eq!(row[2], "many-chunks.jfr");
        assert!(row[3].is_null(), "no HOSTNAME in the recording: {row}");
        assert_eq!(row[4], 0, "no stack: an empty list");
    }
}

/// The statements of the README's `sql` block.
fn readme_queries() -> Vec<String> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .unwrap();
    let block = readme
        .split("```sql\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("an sql block in the README");
    block
        .split(';')
        .map(|statement| {
            let lines: Vec<&str> = statement
                .lines()
                .filter(|line| !line.trim_start().starts_with("--"))
                .collect();
            lines.join("\n").trim().to_owned()
        })
        .filter(|statement| !statement.is_empty())
        .collect()
}

#[test]
fn the_readme_queries_find_the_top_sites_and_the_leaking_host() {
    let test = "the_readme_queries_find_the_top_sites_and_the_leaking_host";
    let Some(python) = support::python::needed_python(test, &["duckdb"]) else {
        return;
    };
    let lake = lake();
    let queries = readme_queries();
    assert_eq!(queries.len(), 2, "{queries:?}");
    let script = r#"
import duckdb, json, sys
print(json.dumps([[list(r) for r in duckdb.sql(q).fetchall()] for q in sys.argv[1:]]))
"#;
    // The README's paths are relative to the folder that holds `lake/`.
    let output = Command::new(&python)
        .arg("-c")
        .arg(script)
        .args(&queries)
        .current_dir(lake.parquet.parent().unwrap())
        .output_in_time();
    let stderr = support::text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    // The top site of all four recordings: their two sites of 16 MiB each,
    // whichever the samples make larger.
    let sites = &json[0];
    let first = sites[0][0].as_str().unwrap();
    assert!(
        first.starts_with("Scenarios$Paced.boxes(")
            || first.starts_with("Scenarios$Paced.buffers("),
        "{sites}"
    );
    let allocated: f64 = lake
        .recordings
        .iter()
        .map(|r| table(&r.jfr, false).total.bytes())
        .sum();
    let shown: f64 = sites
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row[1].as_f64().unwrap())
        .sum();
    assert!(
        shown > 0.9 * allocated && shown <= allocated * (1.0 + TOLERANCE),
        "{shown} of {allocated}"
    );
    // The leak: host-a's, in both its recordings.
    let by_host = &json[1];
    assert_eq!(by_host[0][0], "host-a", "{by_host}");
    assert_eq!(by_host[0][1], leak_site().as_str(), "{by_host}");
    assert_eq!(by_host[0][3], 2, "{by_host}");
}
