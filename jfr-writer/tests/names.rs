//! Every name of the format is written once, in `format::names`: no other
//! non-test source of the writer or the agent spells one as a string
//! literal. (The reader in convert/src joins the scan once it takes its
//! names from `format::names` too.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The source trees scanned, from the workspace root.
const SCANNED: [&str; 2] = ["jfr-writer/src", "agent/src"];

/// The names module, the one place the names are spelled.
const NAMES: &str = "jfr-writer/src/format/names.rs";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
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
                if !prefixed {
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
            string_literals(&source)
                .into_iter()
                .filter(|(_, text)| names.contains(text))
                .map(move |(line, text)| format!("{}:{line}: \"{text}\"", path.display()))
        })
        .collect();
    assert!(spelled.is_empty(), "spelled outside names.rs: {spelled:#?}");
}

#[test]
fn the_scan_finds_literals_and_skips_comments_and_unit_tests() {
    let source = "let a = \"maxAge\"; // \"weight\"\nlet b = c\"gcId\";\nlet q = '\"';\nlet d = \"a \\\" b\";\n#[cfg(test)]\nlet e = \"live\";";
    assert_eq!(
        string_literals(source),
        [(1, "maxAge".to_owned()), (4, "a \\\" b".to_owned())]
    );
}
