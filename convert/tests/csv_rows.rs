//! The CSV rows `heapsampler convert` makes straight from the events' bytes
//! (`rows::chunk_rows`) against the cells the value-tree flattener makes of
//! decoded events (`Flattener::row`) written through a `csv::Writer`: byte
//! for byte, on recordings with every kind of value, with and
//! without filters, and on mutated recordings (the same rows, or the same
//! error). Then the command line: converting on several threads writes the
//! same files as on one, and reports a corrupt middle chunk and a cut last
//! chunk the same way.

use heapsampler_test_support as support;
use heapsampler_test_support::Deadline;

use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::Output;

use heapsampler_cli::model::filter::{ChunkFilter, Filter, TimeBound, parse_regex};
use heapsampler_cli::model::text::Flattener;
use heapsampler_cli::output::csv::{Buffers, CsvError, Piece, chunk_rows};
use jfr_format::HEADER_SIZE;
use jfr_reader::chunk::Chunk;
use jfr_reader::file::RecordingFile;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use heapsampler_test_support::heapsampler_command;
use support::recordings::{chunk_spans, writer_recording};

/// What a conversion wrote: each type's CSV, and the error that stopped it.
#[derive(Debug, PartialEq)]
struct Written {
    files: BTreeMap<String, Vec<u8>>,
    error: Option<String>,
}

/// How to convert: the types asked for (empty: all), the frames kept, and
/// the filter.
struct Ask<'a> {
    types: &'a [&'a str],
    stack_depth: usize,
    filter: &'a Filter,
}

impl Ask<'_> {
    fn wanted(&self, name: &str) -> bool {
        self.types.is_empty() || self.types.contains(&name)
    }
}

/// The reference: every chunk's events decoded into values, those kept
/// made into cells by `Flattener::row`, one `csv::Writer` per type.
fn reference(data: &[u8], ask: &Ask<'_>) -> Written {
    let mut writers: BTreeMap<String, csv::Writer<Vec<u8>>> = BTreeMap::new();
    let error = (|| -> Result<(), String> {
        let mut file = RecordingFile::from_reader("t.jfr", Cursor::new(data.to_vec()))
            .map_err(|e| e.to_string())?;
        let mut window = None;
        while let Some(raw) = file.next_chunk().map_err(|e| e.to_string())? {
            let chunk = Chunk::read(&raw.bytes, raw.offset).map_err(|e| e.to_string())?;
            let window = *window.get_or_insert_with(|| ask.filter.window(chunk.header.start_nanos));
            let filter = ChunkFilter::new(ask.filter, window, &chunk);
            let flattener = Flattener::new(&chunk, ask.stack_depth);
            for event in chunk.events() {
                let event = event.map_err(|e| e.to_string())?;
                let class = chunk.metadata.class(event.type_id).unwrap();
                if !ask.wanted(&class.name) || !filter.keep(&event) {
                    continue;
                }
                let writer = writers.entry(class.name.clone()).or_insert_with(|| {
                    let mut writer = csv::Writer::from_writer(Vec::new());
                    writer.write_record(Flattener::header(class)).unwrap();
                    writer
                });
                writer
                    .write_record(flattener.row(&event))
                    .map_err(|e| format!("csv: {e}"))?;
            }
        }
        Ok(())
    })()
    .err();
    let files = writers
        .into_iter()
        .map(|(name, writer)| (name, writer.into_inner().unwrap()))
        .collect();
    Written { files, error }
}

/// The fast way, its pieces put together as `convert` does.
fn fast(data: &[u8], ask: &Ask<'_>) -> Written {
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut columns: BTreeMap<String, usize> = BTreeMap::new();
    let error = (|| -> Result<(), String> {
        let mut file = RecordingFile::from_reader("t.jfr", Cursor::new(data.to_vec()))
            .map_err(|e| e.to_string())?;
        let mut window = None;
        while let Some(raw) = file.next_chunk().map_err(|e| e.to_string())? {
            let chunk = Chunk::read(&raw.bytes, raw.offset).map_err(|e| e.to_string())?;
            let window = *window.get_or_insert_with(|| ask.filter.window(chunk.header.start_nanos));
            let filter =
                (!ask.filter.is_empty()).then(|| ChunkFilter::new(ask.filter, window, &chunk));
            let mut names: BTreeMap<usize, String> = BTreeMap::new();
            let mut emit = |piece| {
                match piece {
                    Piece::Type {
                        index,
                        name,
                        columns: count,
                        header,
                    } => {
                        match columns.get(&name) {
                            Some(&expected) if expected != count => {
                                return Err(CsvError::Columns {
                                    name,
                                    expected,
                                    found: count,
                                });
                            }
                            Some(_) => {}
                            None => {
                                columns.insert(name.clone(), count);
                                files.insert(name.clone(), header);
                            }
                        }
                        names.insert(index, name);
                    }
                    Piece::Rows { index, bytes, rows } => {
                        assert!(rows > 0 && bytes.ends_with(b"\n"));
                        files.get_mut(&names[&index]).unwrap().extend(bytes);
                    }
                }
                Ok(())
            };
            chunk_rows(
                &chunk,
                ask.stack_depth,
                &|name| ask.wanted(name),
                filter.as_ref(),
                &Buffers::default(),
                &mut emit,
            )
            .map_err(|e| e.to_string())?;
        }
        Ok(())
    })()
    .err();
    Written { files, error }
}

/// Both ways agree on `data`: the same files, or the same error. A type
/// declared with other fields in a later chunk fails both (the csv crate's
/// error in the reference), after rows that may differ.
fn assert_agree(data: &[u8], ask: &Ask<'_>, what: &str) -> Written {
    let expected = reference(data, ask);
    let ours = fast(data, ask);
    if let Some(error) = &expected.error
        && error.starts_with("csv: ")
    {
        let ours = ours.error.as_deref().unwrap_or_default();
        assert!(ours.contains("found rows with"), "{what}: {error} / {ours}");
        return expected;
    }
    if expected != ours {
        for (name, csv) in &expected.files {
            let theirs = String::from_utf8_lossy(csv);
            let ours = ours.files.get(name).map(|o| String::from_utf8_lossy(o));
            if ours.as_deref() != Some(&theirs) {
                let ours = ours.unwrap_or_default();
                let line = theirs
                    .lines()
                    .zip(ours.lines())
                    .find(|(a, b)| a != b)
                    .map(|(a, b)| format!("\nexpected {a}\nfound    {b}"))
                    .unwrap_or_default();
                panic!("{what}: {name} differs{line}");
            }
        }
        assert_eq!(expected, ours, "{what}");
    }
    expected
}

fn filters() -> Vec<(&'static str, Filter)> {
    vec![
        ("no filter", Filter::default()),
        (
            "--thread worker-1",
            Filter {
                thread: Some(parse_regex("worker-1").unwrap()),
                ..Filter::default()
            },
        ),
        (
            "--class Class1",
            Filter {
                class: Some(parse_regex("Class1").unwrap()),
                ..Filter::default()
            },
        ),
        (
            "--from 100ns --to 300ns",
            Filter {
                from: Some(TimeBound::AfterStart(100)),
                to: Some(TimeBound::AfterStart(300)),
                ..Filter::default()
            },
        ),
    ]
}

#[test]
fn rows_equal_the_flatteners_on_every_kind_of_value() {
    let data = writer_recording();
    for (name, filter) in filters() {
        for types in [
            &[][..],
            &["test.Everything"],
            &["jdk.ObjectAllocationSample"],
        ] {
            for stack_depth in [64, 3, 0] {
                let ask = Ask {
                    types,
                    stack_depth,
                    filter: &filter,
                };
                let what = format!("{name}, types {types:?}, depth {stack_depth}");
                let written = assert_agree(&data, &ask, &what);
                assert_eq!(written.error, None, "{what}");
                if name == "no filter" {
                    let expected = if types.is_empty() { 2 } else { 1 };
                    assert_eq!(written.files.len(), expected, "{what}");
                }
            }
        }
    }
    let written = fast(
        &data,
        &Ask {
            types: &[],
            stack_depth: 64,
            filter: &Filter::default(),
        },
    );
    let everything = String::from_utf8(written.files["test.Everything"].clone()).unwrap();
    assert!(
        everything.starts_with("startTime,duration,eventThread,stackTrace,z,b,s,c,i,j,f,d,"),
        "{everything}"
    );
    assert!(everything.contains(",inline text,pooled "), "{everything}");
}

#[test]
fn text_that_needs_quotes_is_quoted_as_the_csv_crate_quotes_it() {
    use jfr_writer::{EventTypeBuilder, FieldSpec, FieldType, Options, Recording, Thread, Ticks};
    let dir = support::temp_dir("csv_rows_quotes");
    let path = dir.join("quotes.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    let texts = recording
        .register(
            EventTypeBuilder::new("test.Texts")
                .with_thread()
                .field(FieldSpec::new("inline", FieldType::String))
                .field(FieldSpec::new("pooled", FieldType::String)),
        )
        .unwrap();
    let thread = recording.thread(Thread {
        os_name: "os".into(),
        os_thread_id: 1,
        java_name: "pool-1, \"worker\"".into(),
        java_thread_id: 1,
        group: None,
    });
    let nasty = [
        "a,b",
        "say \"hi\"",
        "two\nlines",
        "cr\r",
        "",
        "plain",
        "é ✓",
    ];
    for (i, text) in nasty.iter().enumerate() {
        let pooled = recording.string(&format!("pooled {text}"));
        recording
            .event(&texts, Ticks(i as i64))
            .thread(thread)
            .string(Some(text))
            .pooled_string(pooled)
            .commit()
            .unwrap();
    }
    let empty = recording.string("");
    recording
        .event(&texts, Ticks(9))
        .thread(thread)
        .string(None)
        .pooled_string(empty)
        .commit()
        .unwrap();
    recording.close().unwrap();
    let data = std::fs::read(&path).unwrap();
    let ask = Ask {
        types: &[],
        stack_depth: 64,
        filter: &Filter::default(),
    };
    let written = assert_agree(&data, &ask, "quotes");
    let csv = String::from_utf8(written.files["test.Texts"].clone()).unwrap();
    for expected in [
        ",\"pool-1, \"\"worker\"\"\",\"a,b\",\"pooled a,b\"\n",
        ",\"say \"\"hi\"\"\",\"pooled say \"\"hi\"\"\"\n",
        ",\"two\nlines\",\"pooled two\nlines\"\n",
        ",\"cr\r\",\"pooled cr\r\"\n",
        ",,pooled \n",
        ",plain,pooled plain\n",
        ",é ✓,pooled é ✓\n",
        ",,\n",
    ] {
        assert!(csv.contains(expected), "{expected:?} in {csv}");
    }
}

#[test]
fn rows_equal_the_flatteners_on_a_jdk_recording() {
    let data = std::fs::read(support::jdk_recording()).unwrap();
    for (name, filter) in filters() {
        let ask = Ask {
            types: &[],
            stack_depth: 64,
            filter: &filter,
        };
        let written = assert_agree(&data, &ask, name);
        assert_eq!(written.error, None, "{name}");
        if name == "no filter" {
            assert!(written.files.len() > 20, "{:?}", written.files.keys());
        }
    }
}

#[test]
fn rows_equal_the_flatteners_on_mutated_recordings() {
    let recordings = [
        ("jfr-writer recording", writer_recording()),
        (
            "JDK recording",
            std::fs::read(support::jdk_recording()).unwrap(),
        ),
    ];
    let filter = Filter::default();
    let thread = Filter {
        thread: Some(parse_regex("1").unwrap()),
        ..Filter::default()
    };
    let mut rng = SmallRng::seed_from_u64(66);
    let mut errors = 0;
    for (name, data) in &recordings {
        for round in 0..300 {
            let mut mutated = data.clone();
            let mut what = format!("{name} round {round}:");
            for _ in 0..rng.random_range(1..=3) {
                let at = rng.random_range(0..mutated.len());
                let mask = rng.random_range(1..=255u8);
                mutated[at] ^= mask;
                what += &format!(" byte {at} ^= {mask:#04x}");
            }
            let types: &[&str] = if round % 3 == 0 {
                &["jdk.ObjectAllocationSample"]
            } else {
                &[]
            };
            let ask = Ask {
                types,
                stack_depth: 64,
                filter: if round % 4 == 1 { &thread } else { &filter },
            };
            if assert_agree(&mutated, &ask, &what).error.is_some() {
                errors += 1;
            }
        }
    }
    // The mutations reach the checks, not only the values.
    assert!(errors > 50, "{errors} errors");
}

/// `heapsampler convert FILE ARGS...`.
fn convert_file(file: &Path, args: &[&str]) -> Output {
    heapsampler_command(["convert"])
        .arg(file)
        .args(args)
        .output_in_time()
}

/// Every file in `dir`, by name.
fn folder(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| {
                    let e = e.unwrap();
                    (
                        e.file_name().into_string().unwrap(),
                        std::fs::read(e.path()).unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Converts `file` into a fresh folder with `--threads threads`: exit
/// code, standard error and the files.
fn convert_with(
    file: &Path,
    dir: &Path,
    threads: usize,
    args: &[&str],
) -> (Option<i32>, String, BTreeMap<String, Vec<u8>>) {
    let out = dir.join(format!("out-{threads}"));
    let _ = std::fs::remove_dir_all(&out);
    let threads = threads.to_string();
    let mut all = vec!["--threads", &threads, "-o", out.to_str().unwrap()];
    all.extend(args);
    let output = convert_file(file, &all);
    let stderr = String::from_utf8(output.stderr).unwrap();
    (output.status.code(), stderr, folder(&out))
}

/// A jfr-writer recording and three JDK recordings one after another:
/// chunks of both kinds, with different metadata.
fn multi_chunk_recording(dir: &Path) -> (PathBuf, Vec<u8>) {
    let jdk = std::fs::read(support::jdk_recording()).unwrap();
    let data = [writer_recording(), jdk.clone(), jdk.clone(), jdk].concat();
    let path = dir.join("multi.jfr");
    std::fs::write(&path, &data).unwrap();
    (path, data)
}

#[test]
fn several_threads_write_what_one_thread_writes() {
    let dir = support::temp_dir("csv_rows_threads");
    let (path, data) = multi_chunk_recording(&dir);
    assert!(
        chunk_spans(&data).len() >= 6,
        "{} chunks",
        chunk_spans(&data).len()
    );
    let (code, stderr, one) = convert_with(&path, &dir, 1, &[]);
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
    assert!(
        one.len() > 20 && one.contains_key("test.Everything.csv"),
        "{:?}",
        one.keys()
    );
    for threads in [2, 3, 8] {
        let (code, stderr, several) = convert_with(&path, &dir, threads, &[]);
        assert_eq!((code, stderr.as_str()), (Some(0), ""), "{threads} threads");
        assert!(several == one, "{threads} threads wrote other files");
    }
    // The same with a filter, one type to standard output, and a recording
    // of one chunk.
    let jdk = support::jdk_recording();
    for (file, args) in [
        (path.as_path(), &["--thread", "1"][..]),
        (path.as_path(), &["--to", "1h", "--class", "[0-9]"][..]),
        (jdk, &[][..]),
    ] {
        let (_, _, one) = convert_with(file, &dir, 1, args);
        let (code, _, two) = convert_with(file, &dir, 2, args);
        assert_eq!(code, Some(0));
        assert!(!one.is_empty() && two == one, "{file:?} {args:?}");
    }
    let stdout = |threads: &str| {
        let output = convert_file(
            &path,
            &[
                "--threads",
                threads,
                "--events",
                "test.Everything",
                "-o",
                "-",
            ],
        );
        assert!(output.status.success());
        output.stdout
    };
    let one = stdout("1");
    assert!(one.len() > 1000);
    assert_eq!(stdout("2"), one);
}

#[test]
fn a_corrupt_middle_chunk_fails_as_it_does_on_one_thread() {
    let dir = support::temp_dir("csv_rows_corrupt");
    let (_, data) = multi_chunk_recording(&dir);
    let chunks = chunk_spans(&data);
    // The third chunk's first event has size 0; the fifth chunk's magic is gone.
    let (third, _) = chunks[2];
    let (fifth, _) = chunks[4];
    let mut bad_event = data.clone();
    bad_event[third + HEADER_SIZE] = 0;
    let mut bad_magic = data.clone();
    bad_magic[fifth] = b'X';
    for (name, bad, offset, expected) in [
        (
            "event.jfr",
            bad_event,
            third + HEADER_SIZE,
            "expected an event size within the chunk (and not 0), found 0",
        ),
        (
            "magic.jfr",
            bad_magic,
            fifth,
            "expected the chunk magic \"FLR\\0\"",
        ),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, bad).unwrap();
        let (code, stderr, one) = convert_with(&path, &dir, 1, &[]);
        assert_eq!(code, Some(1), "{stderr}");
        assert_eq!(
            stderr.lines().collect::<Vec<_>>(),
            [format!(
                "heapsampler: {}: at byte {offset}: {expected}",
                path.display()
            )],
            "{name}"
        );
        // The chunks before it were written.
        assert!(one.contains_key("test.Everything.csv"), "{name}");
        for threads in [2, 3] {
            let several = convert_with(&path, &dir, threads, &[]);
            assert_eq!(several.0, code, "{name}, {threads} threads");
            assert_eq!(several.1, stderr, "{name}, {threads} threads");
            assert!(
                several.2 == one,
                "{name}, {threads} threads wrote other files"
            );
        }
    }
}

#[test]
fn a_cut_last_chunk_warns_once_after_the_complete_chunks() {
    let dir = support::temp_dir("csv_rows_cut");
    let (_, data) = multi_chunk_recording(&dir);
    let (last, size) = *chunk_spans(&data).last().unwrap();
    let cut = dir.join("cut.jfr");
    std::fs::write(&cut, &data[..last + size / 2]).unwrap();
    let complete = dir.join("complete.jfr");
    std::fs::write(&complete, &data[..last]).unwrap();
    let (code, stderr, expected) = convert_with(&complete, &dir, 1, &[]);
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
    for threads in [1, 2, 3] {
        let (code, stderr, written) = convert_with(&cut, &dir, threads, &[]);
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(
            stderr.lines().collect::<Vec<_>>(),
            [format!(
                "heapsampler: warning: {}: the {} bytes from byte {last} are not a complete \
                 chunk (a write cut short); converted the complete chunks before them",
                cut.display(),
                size / 2
            )],
            "{threads} threads"
        );
        assert!(written == expected, "{threads} threads wrote other files");
    }
}
