//! The reader's metadata parser on files from jfr-writer and from the JDK.

use heapsampler_test_support as support;

use jfr_reader::ReadError;
use jfr_reader::cursor::Cursor;
use jfr_reader::header::chunk_header;
use jfr_reader::metadata::Metadata;
use jfr_writer::{Options, Recording, events};

/// The metadata of the first chunk of `bytes`.
fn metadata(bytes: &[u8]) -> Result<Metadata, ReadError> {
    let header = chunk_header(bytes, 0)?;
    let chunk = &bytes[..header.chunk_size as usize];
    let at = header.metadata_offset as usize;
    Metadata::read(&mut Cursor::new(&chunk[at..], at as u64))
}

fn field_names(metadata: &Metadata, class: &str) -> Vec<String> {
    let class = metadata
        .class_named(class)
        .unwrap_or_else(|| panic!("{class} is declared"));
    class.fields.iter().map(|f| f.name.clone()).collect()
}

#[test]
fn reads_the_metadata_jfr_writer_writes() {
    let dir = support::temp_dir("convert_metadata");
    let path = dir.join("ours.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    recording
        .register(events::object_allocation_sample())
        .unwrap();
    recording.register(events::object_lifetime()).unwrap();
    recording.close().unwrap();

    support::summary(&path); // the JDK reads it
    let metadata = metadata(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(
        field_names(&metadata, "jdk.ObjectAllocationSample"),
        [
            "startTime",
            "eventThread",
            "stackTrace",
            "objectClass",
            "weight"
        ]
    );
    let lifetime = metadata.class_named("heapsampler.ObjectLifetime").unwrap();
    assert!(lifetime.is_event());
    assert_eq!(lifetime.fields[1].name, "duration");
    let thread_field = &lifetime.fields[2];
    assert!(thread_field.constant_pool);
    assert_eq!(
        metadata.class(thread_field.class_id).unwrap().name,
        "java.lang.Thread"
    );
    let frames = &metadata.class_named("jdk.types.StackTrace").unwrap().fields[1];
    assert!(frames.array && !frames.constant_pool);
    assert!(
        metadata
            .class_named("jdk.types.Symbol")
            .unwrap()
            .simple_type
    );
}

#[test]
fn reads_the_metadata_of_a_jdk_recording() {
    let bytes = std::fs::read(support::jdk_recording()).unwrap();
    let metadata = metadata(&bytes).unwrap();
    assert_eq!(
        field_names(&metadata, "jdk.ObjectAllocationSample"),
        [
            "startTime",
            "eventThread",
            "stackTrace",
            "objectClass",
            "weight"
        ]
    );
    // JDK 21 and later add `virtual`.
    let thread = field_names(&metadata, "java.lang.Thread");
    let fields = ["osName", "osThreadId", "javaName", "javaThreadId", "group"];
    assert!(
        thread == fields || thread[..] == [&fields[..], &["virtual"]].concat()[..],
        "{thread:?}"
    );
    // JDK 17 declares a few hundred classes, over 150 of them event types.
    assert!(
        metadata.classes.len() > 200,
        "{} classes",
        metadata.classes.len()
    );
    assert!(metadata.classes.iter().filter(|c| c.is_event()).count() > 150);
}

#[test]
fn a_truncated_or_corrupt_metadata_event_is_an_error_not_a_panic() {
    let bytes = std::fs::read(support::jdk_recording()).unwrap();
    let header = chunk_header(&bytes, 0).unwrap();
    let at = header.metadata_offset as usize;
    let event = &bytes[at..header.chunk_size as usize];
    // Every cut of the first 4 KiB, and a byte flipped at each of them.
    for cut in 0..4096.min(event.len()) {
        assert!(
            Metadata::read(&mut Cursor::new(&event[..cut], at as u64)).is_err(),
            "cut at {cut}"
        );
        let mut flipped = event.to_vec();
        flipped[cut] ^= 0xff;
        let _ = Metadata::read(&mut Cursor::new(&flipped, at as u64));
    }
}
