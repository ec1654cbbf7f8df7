//! Every name of the format is written once, in `format::names`: no other
//! non-test source of the workspace (the writer, the agent, the reader and
//! the command line, the core) spells one as a string literal, so the
//! writer and the reader cannot disagree on a name. A literal that equals a
//! name but means something else is listed in [`OTHER_MEANINGS`].

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The source trees scanned, from the workspace root.
const SCANNED: [&str; 6] = [
    "core/src",
    "jfr-writer/format/src",
    "jfr-writer/src",
    "agent/src",
    "convert/reader/src",
    "convert/src",
];

/// Literals equal to a name that mean something else where they stand:
/// (file, literal, what it is there).
const OTHER_MEANINGS: [(&str, &str, &str); 27] = [
    (
        "convert/src/bin/heapsampler/watch.rs",
        "live",
        "a column heading of watch's tables",
    ),
    (
        "convert/src/bin/heapsampler/args.rs",
        "off",
        "a value of the agent's on_peak option (--on-peak), passed on",
    ),
    (
        "convert/src/output/parquet.rs",
        "thread",
        "a column of heapsampler's Parquet table",
    ),
    (
        "convert/src/output/parquet.rs",
        "class",
        "a column of heapsampler's Parquet table",
    ),
    (
        "convert/src/output/parquet.rs",
        "pid",
        "a column of heapsampler's Parquet table",
    ),
    (
        "convert/src/output/parquet.rs",
        "weight",
        "a column of heapsampler's Parquet table",
    ),
    (
        "convert/src/output/parquet.rs",
        "size",
        "a column of heapsampler's Parquet table",
    ),
    (
        "convert/src/output/parquet.rs",
        "tracked",
        "a column of heapsampler's Parquet table",
    ),
    (
        "convert/src/output/parquet.rs",
        "live",
        "a column of heapsampler's Parquet table",
    ),
    (
        "convert/src/output/pprof.rs",
        "thread",
        "a pprof label's key",
    ),
    (
        "convert/src/analysis/top.rs",
        "thread",
        "--by thread, as the command line spells it",
    ),
    (
        "convert/src/output/flame.rs",
        "allocated",
        "words of a flame graph's subtitle",
    ),
    (
        "convert/src/bin/heapsampler/convert.rs",
        "allocated",
        "a word of flame's message",
    ),
    (
        "convert/src/output/text/diff.rs",
        "samples",
        "a column heading of diff's table",
    ),
    (
        "convert/src/analysis/top.rs",
        "class",
        "--by class, as the command line spells it",
    ),
    ("core/src/options.rs", "live", "the agent option live=true"),
    ("core/src/options.rs", "mode", "the agent option mode=floor"),
    (
        "core/src/options.rs",
        "interval",
        "the agent option interval=512k",
    ),
    (
        "core/src/options.rs",
        "off",
        "a boolean option's value, and on_peak=off",
    ),
    (
        "core/src/options.rs",
        "duration",
        "the agent option duration=10m",
    ),
    (
        "agent/src/lifecycle.rs",
        "off",
        "liveness on or off, in a log line",
    ),
    (
        "core/src/options.rs",
        "hidden",
        "the agent option hidden=true",
    ),
    (
        "convert/src/output/text/top.rs",
        "samples",
        "a column heading of top's table",
    ),
    (
        "convert/src/bin/heapsampler/args.rs",
        "live",
        "top's --live argument",
    ),
    (
        "convert/src/output/pprof.rs",
        "class",
        "a pprof label's key",
    ),
    (
        "convert/src/output/pprof.rs",
        "samples",
        "a pprof sample type",
    ),
    (
        "convert/src/output/flame.rs",
        "samples",
        "the unit of a flame graph's widths",
    ),
];

/// The names module, the one place the names are spelled.
const NAMES: &str = "jfr-writer/format/src/names.rs";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The string literals of `source` (byte and C strings left out) with
/// their line numbers, up to its unit tests (`#[cfg(test)]`), comments
/// skipped.
fn string_literals(source: &str) -> Vec<(usize, String)> {
    let code = source.split("#[cfg(test)]").next().unwrap();
    let chars: Vec<char> = code.chars().collect();
    let (mut literals, mut line, mut at) = (Vec::new(), 1, 0);
    while at < chars.len() {
        match chars[at] {
            '\n' => line += 1,
            '/' if chars.get(at + 1) == Some(&'/') => {
                while at < chars.len() && chars[at] != '\n' {
                    at += 1;
                }
                continue;
            }
            // The character literal '"'.
            '\'' if chars.get(at + 1) == Some(&'"') && chars.get(at + 2) == Some(&'\'') => {
                at += 3;
                continue;
            }
            '"' => {
                let prefixed = at > 0 && matches!(chars[at - 1], 'b' | 'c');
                // An ABI, `extern "system"`, names no value of the format.
                let abi = at >= 7 && chars[at - 7..at].iter().collect::<String>() == "extern ";
                let (start_line, mut text) = (line, String::new());
                at += 1;
                while at < chars.len() && chars[at] != '"' {
                    if chars[at] == '\\' {
                        text.push(chars[at]);
                        at += 1;
                    }
                    if chars[at] == '\n' {
                        line += 1;
                    }
                    text.push(chars[at]);
                    at += 1;
                }
                if !prefixed && !abi {
                    literals.push((start_line, text));
                }
            }
            _ => {}
        }
        at += 1;
    }
    literals
}

#[test]
fn no_source_but_the_names_module_spells_a_name_of_the_format() {
    let root = workspace();
    let names_source = std::fs::read_to_string(root.join(NAMES)).unwrap();
    let names: BTreeSet<String> = names_source
        .lines()
        .filter_map(|line| line.trim().strip_prefix("pub const "))
        .filter_map(|line| line.split_once("= \"")?.1.strip_suffix("\";"))
        .map(str::to_owned)
        .collect();
    assert!(
        names.contains("jdk.ObjectAllocationSample") && names.contains("maxAge"),
        "the names were read: {names:?}"
    );
    let mut files = Vec::new();
    for dir in SCANNED {
        rust_files(&root.join(dir), &mut files);
    }
    let spelled: Vec<String> = files
        .iter()
        .filter(|path| !path.ends_with(NAMES))
        .flat_map(|path| {
            let source = std::fs::read_to_string(path).unwrap();
            let relative = path.strip_prefix(&root).unwrap().to_owned();
            string_literals(&source)
                .into_iter()
                .filter(|(_, text)| names.contains(text))
                .filter(move |(_, text)| {
                    !OTHER_MEANINGS
                        .iter()
                        .any(|&(file, literal, _)| relative == Path::new(file) && text == literal)
                })
                .map(move |(line, text)| format!("{}:{line}: \"{text}\"", path.display()))
        })
        .collect();
    assert!(spelled.is_empty(), "spelled outside names.rs: {spelled:#?}");
}

#[test]
fn the_scan_finds_literals_and_skips_comments_and_unit_tests() {
    let source = "let a = \"maxAge\"; // \"weight\"\nextern \"system\" fn f();\nlet b = c\"gcId\";\nlet q = '\"';\nlet d = \"a \\\" b\";\n#[cfg(test)]\nlet e = \"live\";";
    assert_eq!(
        string_literals(source),
        [(1, "maxAge".to_owned()), (5, "a \\\" b".to_owned())]
    );
}
