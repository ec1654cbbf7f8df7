//! The reader on whole chunks: values written by jfr-writer come back
//! exactly (through the constant pools), and a JDK recording's events are
//! all read, with the counts the JDK's own `jfr summary` gives.

use heapsampler_test_support as support;

use std::collections::BTreeMap;

use jfr_reader::chunk::{Chunk, MetadataCache};
use jfr_reader::file::RecordingFile;
use jfr_reader::value::Value;
use jfr_writer::{
    Class, EventTypeBuilder, FieldSpec, FieldType, FrameType, Method, Options, Recording,
    StackFrame, StackTrace, Thread, Ticks, events,
};

/// The value of field `name` of `value` (resolved through the pools).
fn get<'v>(chunk: &'v Chunk<'_>, value: &'v Value, name: &str) -> &'v Value {
    let Value::Object { class_id, fields } = chunk.resolve(value) else {
        panic!("{name}: not an object: {value:?}");
    };
    let class = chunk.metadata.class(*class_id).unwrap();
    let index = class
        .fields
        .iter()
        .position(|f| f.name == name)
        .unwrap_or_else(|| panic!("no field {name} in {}", class.name));
    chunk.resolve(&fields[index])
}

/// A symbol's text (a simple type wrapping one string).
fn symbol(chunk: &Chunk<'_>, value: &Value) -> String {
    match get(chunk, value, "string") {
        Value::String(text) => text.clone(),
        other => panic!("not a symbol: {other:?}"),
    }
}

/// Reads every chunk of a file; returns the event counts by type name.
fn count_events(bytes: &[u8]) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    let mut offset = 0usize;
    while offset < bytes.len() {
        let chunk = Chunk::read(&bytes[offset..], offset as u64).unwrap();
        for event in chunk.events() {
            let event = event.unwrap();
            *counts
                .entry(chunk.metadata.class(event.type_id).unwrap().name.clone())
                .or_insert(0) += 1;
        }
        offset += chunk.size() as usize;
    }
    counts
}

#[test]
fn values_written_by_jfr_writer_come_back_exactly() {
    let dir = support::temp_dir("convert_chunk_values");
    let path = dir.join("values.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    let alloc = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let custom = recording
        .register(
            EventTypeBuilder::new("test.Values")
                .with_duration()
                .field(FieldSpec::new("i", FieldType::Int))
                .field(FieldSpec::new("f", FieldType::Float))
                .field(FieldSpec::new("d", FieldType::Double))
                .field(FieldSpec::new("b", FieldType::Boolean))
                .field(FieldSpec::new("c", FieldType::Char))
                .field(FieldSpec::new("s", FieldType::String))
                .field(FieldSpec::new("pooled", FieldType::String))
                .field(FieldSpec::new("none", FieldType::String)),
        )
        .unwrap();
    let thread = recording.thread(Thread {
        os_name: "os-main".into(),
        os_thread_id: 77,
        java_name: "main ✓".into(),
        java_thread_id: 1,
        group: None,
    });
    let name = recording.symbol("java/lang/String");
    let class = recording.class(Class {
        class_loader: None,
        name,
        package: None,
        modifiers: 17,
        hidden: false,
    });
    let (method_name, descriptor) = (
        recording.symbol("valueOf"),
        recording.symbol("(I)Ljava/lang/String;"),
    );
    let method = recording.method(Method {
        class,
        name: method_name,
        descriptor,
        modifiers: 9,
        hidden: false,
    });
    let stack = recording.stack_trace(StackTrace {
        truncated: true,
        frames: vec![StackFrame {
            method,
            line_number: 42,
            bytecode_index: 7,
            frame_type: FrameType::Inlined,
        }],
    });
    let pooled = recording.string("from the pool");
    recording
        .event(&alloc, Ticks(1000))
        .thread(thread)
        .stack_trace(stack)
        .class(class)
        .long(524_288)
        .commit()
        .unwrap();
    recording
        .event(&custom, Ticks(2000))
        .duration(-5)
        .int(-1)
        .float(1.5)
        .double(-2.25)
        .boolean(true)
        .char(0x263a)
        .string(Some("inline"))
        .pooled_string(pooled)
        .string(None)
        .commit()
        .unwrap();
    recording.close().unwrap();

    let bytes = std::fs::read(&path).unwrap();
    let chunk = Chunk::read(&bytes, 0).unwrap();
    let events: Vec<_> = chunk.events().map(Result::unwrap).collect();
    assert_eq!(events.len(), 2);
    // The JDK's parser reads the same two events.
    assert_eq!(support::dump(&path).len(), 2);

    let sample = Value::Object {
        class_id: events[0].type_id,
        fields: events[0].fields.clone(),
    };
    assert_eq!(get(&chunk, &sample, "startTime"), &Value::Long(1000));
    assert_eq!(get(&chunk, &sample, "weight"), &Value::Long(524_288));
    let thread = get(&chunk, &sample, "eventThread");
    assert_eq!(
        get(&chunk, thread, "javaName"),
        &Value::String("main ✓".into())
    );
    assert_eq!(get(&chunk, thread, "osThreadId"), &Value::Long(77));
    assert_eq!(get(&chunk, thread, "group"), &Value::Null, "key 0 is null");
    let class = get(&chunk, &sample, "objectClass");
    assert_eq!(
        symbol(&chunk, get(&chunk, class, "name")),
        "java/lang/String"
    );
    assert_eq!(get(&chunk, class, "modifiers"), &Value::Int(17));
    let stack = get(&chunk, &sample, "stackTrace");
    assert_eq!(get(&chunk, stack, "truncated"), &Value::Boolean(true));
    let Value::Array(frames) = get(&chunk, stack, "frames") else {
        panic!("frames")
    };
    assert_eq!(frames.len(), 1);
    let method = get(&chunk, &frames[0], "method");
    assert_eq!(symbol(&chunk, get(&chunk, method, "name")), "valueOf");
    assert_eq!(
        symbol(&chunk, get(&chunk, method, "descriptor")),
        "(I)Ljava/lang/String;"
    );
    assert_eq!(get(&chunk, &frames[0], "lineNumber"), &Value::Int(42));
    assert_eq!(get(&chunk, &frames[0], "bytecodeIndex"), &Value::Int(7));
    assert_eq!(
        get(&chunk, get(&chunk, &frames[0], "type"), "description"),
        &Value::String("Inlined".into())
    );

    let custom = Value::Object {
        class_id: events[1].type_id,
        fields: events[1].fields.clone(),
    };
    for (name, expected) in [
        ("duration", Value::Long(-5)),
        ("i", Value::Int(-1)),
        ("f", Value::Float(1.5)),
        ("d", Value::Double(-2.25)),
        ("b", Value::Boolean(true)),
        ("c", Value::Char(0x263a)),
        ("s", Value::String("inline".into())),
        ("pooled", Value::String("from the pool".into())),
        ("none", Value::Null),
    ] {
        assert_eq!(get(&chunk, &custom, name), &expected, "{name}");
    }
}

#[test]
fn every_event_of_a_jdk_recording_is_read_with_the_jdk_counts() {
    let path = support::jdk_recording();
    let counts = count_events(&std::fs::read(path).unwrap());
    let summary = support::summary(path);
    let mut compared = 0;
    for line in summary.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() == 3 && words[0].starts_with("jdk.") && words[1].parse::<u64>().is_ok() {
            let name = words[0];
            // JDK 17 spells it `jdk.CheckPoint`, JDK 25 `jdk.Checkpoint`.
            if name == "jdk.Metadata" || name.eq_ignore_ascii_case("jdk.CheckPoint") {
                continue;
            }
            let expected: u64 = words[1].parse().unwrap();
            assert_eq!(counts.get(name).copied().unwrap_or(0), expected, "{name}");
            compared += 1;
        }
    }
    assert!(
        compared > 50,
        "a JDK profile recording has many event types: {compared}"
    );
}

#[test]
fn every_chunk_of_a_multi_chunk_file_is_read() {
    let dir = support::temp_dir("convert_chunks");
    let path = dir.join("chunks.jfr");
    support::write_allocation_samples(&path, 5000, 500, 4096);
    let counts = count_events(&std::fs::read(&path).unwrap());
    assert_eq!(counts.get("jdk.ObjectAllocationSample"), Some(&5000));
    assert_eq!(
        support::summary_count(&support::summary(&path), "jdk.ObjectAllocationSample"),
        5000
    );
}

/// A recording opened from its path reads again from its start, wherever
/// the first reading has got to; one read from a stream cannot.
#[test]
fn a_file_reads_again_from_its_start_and_a_stream_does_not() {
    let dir = support::temp_dir("convert_reopen");
    let path = dir.join("chunks.jfr");
    support::write_allocation_samples(&path, 5000, 500, 4096);
    let offsets = |file: &mut RecordingFile| {
        let mut offsets = Vec::new();
        while let Some(raw) = file.next_chunk().unwrap() {
            offsets.push(raw.offset);
        }
        offsets
    };
    let mut file = RecordingFile::open(&path).unwrap();
    file.next_chunk().unwrap().expect("a first chunk");
    let mut again = file.reopen().unwrap();
    let all = offsets(&mut again);
    assert!(all.len() > 1 && all[0] == 0, "{all:?}");
    assert_eq!(offsets(&mut file), all[1..], "the first reading goes on");
    assert_eq!(offsets(&mut again.reopen().unwrap()), all);
    let stream = RecordingFile::from_reader("stdin", std::fs::File::open(&path).unwrap()).unwrap();
    let error = stream.reopen().unwrap_err().to_string();
    assert!(
        error.contains("stdin") && error.contains("cannot be read a second time"),
        "{error}"
    );
}

/// A plain recording read from a chunk's offset reads that chunk and
/// those after it, the same bytes as from the start; a compressed one
/// cannot be, and says to read it from its start.
#[test]
fn a_plain_file_reads_from_a_chunks_offset() {
    let dir = support::temp_dir("convert_open_at");
    let path = dir.join("chunks.jfr");
    support::write_allocation_samples(&path, 5000, 500, 4096);
    let chunks = |file: &mut RecordingFile| {
        let mut chunks = Vec::new();
        while let Some(raw) = file.next_chunk().unwrap() {
            chunks.push((raw.offset, raw.bytes));
        }
        chunks
    };
    let all = chunks(&mut RecordingFile::open(&path).unwrap());
    assert!(all.len() > 2, "{}", all.len());
    let third = all[2].0;
    let from_third = chunks(&mut RecordingFile::open_at(&path, third).unwrap());
    assert_eq!(from_third, all[2..]);
    // Not at a chunk: the bytes there are no chunk's header.
    let error = RecordingFile::open_at(&path, third + 1)
        .unwrap_err()
        .to_string();
    assert!(error.contains("no other offset is a chunk's"), "{error}");
    let compressed = dir.join("chunks.jfr.zst");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&compressed, zstd::encode_all(&bytes[..], 1).unwrap()).unwrap();
    let error = RecordingFile::open_at(&compressed, third)
        .unwrap_err()
        .to_string();
    assert!(error.contains("is read from its start"), "{error}");
}

#[test]
fn chunks_that_repeat_their_metadata_share_it_through_the_cache() {
    let jdk = std::fs::read(support::jdk_recording()).unwrap();
    let dir = support::temp_dir("convert_metadata_cache");
    let path = dir.join("samples.jfr");
    support::write_allocation_samples(&path, 2000, 500, 4096);
    let writer = std::fs::read(&path).unwrap();
    // Other metadata between copies of the same: each is read anew.
    let data = [jdk.clone(), writer, jdk.clone(), jdk.clone()].concat();
    let cache = MetadataCache::default();
    let mut offset = 0;
    let mut jdk_metadata = Vec::new();
    while offset < data.len() {
        let cached = Chunk::read_with(&data[offset..], offset as u64, Some(&cache)).unwrap();
        let alone = Chunk::read(&data[offset..], offset as u64).unwrap();
        assert_eq!(*cached.metadata, *alone.metadata);
        let events = |chunk: &Chunk<'_>| chunk.events().map(Result::unwrap).collect::<Vec<_>>();
        assert_eq!(events(&cached), events(&alone));
        if cached.metadata.class_named("jdk.GCPhaseParallel").is_some() {
            jdk_metadata.push(cached.metadata.clone());
        }
        offset += cached.size() as usize;
    }
    // The JDK's copies after the first share the metadata of the one
    // before them, if it is the same.
    assert!(jdk_metadata.len() >= 3);
    let shared = jdk_metadata
        .windows(2)
        .filter(|w| std::sync::Arc::ptr_eq(&w[0], &w[1]))
        .count();
    assert!(
        shared >= 1,
        "{} JDK chunks, none shared",
        jdk_metadata.len()
    );
    // A corrupt metadata fails as it does without the cache.
    let mut corrupt = jdk.clone();
    let header = jfr_format::ChunkHeader::decode(&corrupt).unwrap();
    let at = header.metadata_offset as usize;
    corrupt[at + 1..at + 9].fill(0xff);
    let alone = Chunk::read(&corrupt, 0).unwrap_err();
    let cached = Chunk::read_with(&corrupt, 0, Some(&cache)).unwrap_err();
    assert_eq!(cached, alone);
}

#[test]
fn corrupt_chunks_give_errors_never_panics() {
    let bytes = std::fs::read(support::jdk_recording()).unwrap();
    let read_all = |data: &[u8]| {
        if let Ok(chunk) = Chunk::read(data, 0) {
            for event in chunk.events() {
                if event.is_err() {
                    break;
                }
            }
        }
    };
    // A byte flipped every 61 bytes across the whole file, one at a time,
    // and cuts every 997 bytes: each must end in a result or an error.
    let mut data = bytes.clone();
    for at in (0..bytes.len()).step_by(61) {
        data[at] ^= 0xa5;
        read_all(&data);
        data[at] = bytes[at];
    }
    for cut in (0..bytes.len()).step_by(997) {
        assert!(
            Chunk::read(&bytes[..cut], 0).is_err(),
            "a chunk cut at {cut} is incomplete"
        );
    }
}
