//! `heapsampler summary` against the JDK's own `jfr summary`, on plain,
//! compressed and truncated recordings.

use heapsampler_test_support as support;

use heapsampler_test_support::heapsampler;
use jfr_format::HEADER_SIZE;
use std::io::Write;
use std::path::Path;

/// `Event Type  Count  Size` rows of either tool's summary, for the types
/// with events (`jfr summary` also lists declared types with none).
fn rows(text: &str) -> Vec<(String, u64, u64)> {
    let mut rows: Vec<_> = text
        .lines()
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                [name, count, size] if name.contains('.') => {
                    Some(((*name).to_owned(), count.parse().ok()?, size.parse().ok()?))
                }
                _ => None,
            }
        })
        // JDK 17 spells it `jdk.CheckPoint`, JDK 25 `jdk.Checkpoint`.
        .filter(|(name, count, _)| {
            *count > 0 && name != "jdk.Metadata" && !name.eq_ignore_ascii_case("jdk.CheckPoint")
        })
        .collect();
    rows.sort();
    rows
}

fn summary_of(path: &Path) -> String {
    let output = heapsampler(["summary", path.to_str().unwrap()]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// A three-chunk recording from jfr-writer.
fn multi_chunk(path: &Path) {
    support::write_allocation_samples(path, 6000, 1000, 16 * 1024);
}

#[test]
fn counts_and_sizes_match_jfr_summary() {
    let dir = support::temp_dir("convert_summary");
    let ours = dir.join("ours.jfr");
    multi_chunk(&ours);
    for path in [ours.as_path(), support::jdk_recording()] {
        let mine = summary_of(path);
        assert_eq!(
            rows(&mine),
            rows(&support::summary(path)),
            "{}",
            path.display()
        );
        assert!(!rows(&mine).is_empty());
    }
    assert!(summary_of(&ours).contains(" Chunks: "));
}

#[test]
fn compressed_recordings_are_recognised_by_content() {
    let dir = support::temp_dir("convert_summary_compressed");
    let plain = dir.join("plain.jfr");
    multi_chunk(&plain);
    let bytes = std::fs::read(&plain).unwrap();
    // Names that do not say what is inside.
    let zst = dir.join("recording.bin");
    std::fs::write(&zst, zstd::encode_all(&bytes[..], 3).unwrap()).unwrap();
    let gz = dir.join("recording.data");
    let mut encoder = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::fast(),
    );
    encoder.write_all(&bytes).unwrap();
    encoder.finish().unwrap();
    let expected = rows(&summary_of(&plain));
    for (path, label) in [(&zst, "zstd-compressed"), (&gz, "gzip-compressed")] {
        let text = summary_of(path);
        assert!(text.contains(label), "{text}");
        assert_eq!(rows(&text), expected, "{label}");
    }
}

#[test]
fn a_truncated_last_chunk_warns_and_the_rest_is_summarised() {
    let dir = support::temp_dir("convert_summary_truncated");
    let full = dir.join("full.jfr");
    multi_chunk(&full);
    let bytes = std::fs::read(&full).unwrap();
    let first = jfr_format::ChunkHeader::decode(&bytes).unwrap().chunk_size as usize;
    let cut = dir.join("cut.jfr");
    std::fs::write(&cut, &bytes[..first + 100]).unwrap();
    let output = heapsampler(["summary", cut.to_str().unwrap()]);
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "the 100 bytes from byte {first} are not a complete chunk (a write cut short)"
        )),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "one warning: {stderr}");
    assert!(String::from_utf8_lossy(&output.stdout).contains(" Chunks: 1"));
    // Bytes after the first chunk that are not a chunk header, as a writer
    // that appends before it counts leaves them: the same warning, while
    // the same bytes with a chunk after them are a corrupt chunk.
    let events = &bytes[first + HEADER_SIZE..first + HEADER_SIZE + 100];
    let appended = dir.join("appended.jfr");
    std::fs::write(&appended, [&bytes[..first], events].concat()).unwrap();
    let output = heapsampler(["summary", appended.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the 100 bytes from byte {first} are not a complete chunk (a write cut short)"
        )),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains(" Chunks: 1"));
    let corrupt = dir.join("corrupt.jfr");
    std::fs::write(
        &corrupt,
        [&bytes[..first], events, &bytes[first..]].concat(),
    )
    .unwrap();
    let output = heapsampler(["summary", corrupt.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr).trim(),
        format!(
            "heapsampler: {}: at byte {first}: expected the chunk magic \"FLR\\0\"",
            corrupt.display()
        )
    );
}

#[test]
fn bad_input_exits_1_and_bad_usage_exits_2() {
    let dir = support::temp_dir("convert_summary_errors");
    let not_jfr = dir.join("notes.txt");
    std::fs::write(&not_jfr, "hello, not a recording").unwrap();
    let output = heapsampler(["summary", not_jfr.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("notes.txt: at byte 0: expected a JFR recording"),
        "{stderr}"
    );
    assert_eq!(
        heapsampler(["summary", "/no/such/file.jfr"]).status.code(),
        Some(1)
    );
    assert_eq!(heapsampler(["summary"]).status.code(), Some(2));
    assert_eq!(heapsampler(["frobnicate"]).status.code(), Some(2));
}

/// Progress is shown against the file as stored: a compressed recording's
/// chunks say how many of its compressed bytes had been read, rising to at
/// most its size; a plain one's, where each chunk ends.
#[test]
fn chunks_tell_how_far_into_the_stored_file_reading_is() {
    use jfr_reader::file::RecordingFile;
    let dir = support::temp_dir("convert_stored_position");
    let plain = dir.join("plain.jfr");
    multi_chunk(&plain);
    let bytes = std::fs::read(&plain).unwrap();
    let compressed = zstd::encode_all(&bytes[..], 3).unwrap();
    let zst = dir.join("recording.jfr.zst");
    std::fs::write(&zst, &compressed).unwrap();

    let mut file = RecordingFile::open(&plain).unwrap();
    let mut chunks = 0;
    while let Some(raw) = file.next_chunk().unwrap() {
        assert_eq!(raw.stored_end, raw.offset + raw.bytes.len() as u64);
        chunks += 1;
    }
    assert!(chunks >= 3, "{chunks} chunks");

    let mut file = RecordingFile::open(&zst).unwrap();
    let mut ends = Vec::new();
    while let Some(raw) = file.next_chunk().unwrap() {
        ends.push(raw.stored_end);
    }
    assert_eq!(ends.len(), chunks);
    assert!(ends.windows(2).all(|w| w[0] <= w[1]), "{ends:?}");
    assert!(ends[0] > 0 && *ends.last().unwrap() <= compressed.len() as u64);
    // Against decompressed bytes, the last would be the plain file's size.
    assert!(*ends.last().unwrap() < bytes.len() as u64, "{ends:?}");
}
