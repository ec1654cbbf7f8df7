//! The crate's example, run on a recording whose content the test knows.

#[path = "../examples/event_counts.rs"]
mod event_counts;

use heapsampler_test_support as support;
use jfr_format::names::event;
use jfr_writer::events::{self, ObjectAllocationSample};
use jfr_writer::{Options, Recording};

#[test]
fn the_example_counts_events_and_sums_sampled_bytes() {
    let dir = support::temp_dir("reader_example");
    let path = dir.join("samples.jfr");
    let options = Options {
        // Several chunks: the example reads each one's own metadata.
        max_chunk_size: 16 * 1024,
        ..Options::default()
    };
    let mut recording = Recording::create(&path, options).unwrap();
    let samples = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let class = support::class_of(&mut recording, "java/lang/Object");
    let mut expected_bytes = 0;
    for i in 0..5_000u64 {
        let weight = 1_000 + i;
        expected_bytes += weight;
        let sample = ObjectAllocationSample {
            start_time: recording.clock().now(),
            event_thread: None,
            stack_trace: None.into(),
            object_class: Some(class),
            weight: weight as i64,
        };
        sample.write(&mut recording, &samples).unwrap();
        if i % 500 == 499 {
            // A chunk is cut at a flush that finds it past its size.
            recording.flush().unwrap();
        }
    }
    recording.finish().unwrap();
    assert!(support::chunks(&std::fs::read(&path).unwrap()).count() > 1);

    let counts = event_counts::event_counts(&path).unwrap();
    assert_eq!(
        counts.events.get(event::OBJECT_ALLOCATION_SAMPLE),
        Some(&5_000)
    );
    assert_eq!(counts.sampled_bytes, expected_bytes);
}
