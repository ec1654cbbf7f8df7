//! The typed API refuses what would corrupt a file: a field of the wrong
//! type, a missing or extra field, a type or value from another recording.
//! A refused event writes nothing.

use heapsampler_test_support as support;

use std::io::Cursor;

use jfr_writer::{
    Error, EventTypeBuilder, FieldSpec, FieldType, Options, Recording, StackTrace, Thread, Value,
    ValueTypeBuilder, events,
};

fn recording() -> Recording<jfr_writer::SeekableSink<Cursor<Vec<u8>>>> {
    Recording::to_writer(Cursor::new(Vec::new()), Options::default())
}

fn count_events(bytes: Vec<u8>, name: &str) -> usize {
    let mut reader = jfrs::reader::JfrReader::new(Cursor::new(bytes));
    let mut count = 0;
    for chunk in reader.chunks() {
        let (mut chunk_reader, chunk) = chunk.unwrap();
        count += chunk_reader
            .events(&chunk)
            .map(|e| e.unwrap())
            .filter(|e| e.class.name() == name)
            .count();
    }
    count
}

fn pair() -> EventTypeBuilder {
    EventTypeBuilder::new("test.Pair")
        .field(FieldSpec::new("a", FieldType::Int))
        .field(FieldSpec::new("b", FieldType::String))
}

#[test]
fn wrong_missing_and_extra_fields_are_refused_and_not_written() {
    let mut rec = recording();
    let pair = rec.register(pair()).unwrap();
    let at = rec.clock().now();
    let epoch = rec.clock().epoch_nanos(at);

    let wrong = rec.event(&pair, at).long(1).string(None).commit();
    assert!(
        matches!(&wrong, Err(Error::FieldMismatch { field, declared: Some(d), written, .. })
            if field == "a" && d == "Int" && written == "Long"),
        "{wrong:?}"
    );
    let missing = rec.event(&pair, at).int(1).commit();
    assert!(
        matches!(&missing, Err(Error::MissingField { field, .. }) if field == "b"),
        "{missing:?}"
    );
    let extra = rec
        .event(&pair, at)
        .int(1)
        .string(None)
        .boolean(true)
        .commit();
    assert!(
        matches!(&extra, Err(Error::FieldMismatch { declared: None, .. })),
        "{extra:?}"
    );
    // Dropped without commit: discarded.
    let _ = rec.event(&pair, at).int(5);

    rec.event(&pair, at)
        .int(2)
        .string(Some("ok"))
        .commit()
        .unwrap();
    assert_eq!(rec.events_written(), 1);
    let bytes = rec.finish().unwrap().into_inner().into_inner();
    // The JDK's parser agrees: one event, the good one.
    let path = support::temp_dir("api_refused").join("pair.jfr");
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(
        support::dump(&path),
        [format!("test.Pair startTime={epoch} a=2 b=\"ok\"")]
    );
    assert_eq!(
        count_events(bytes, "test.Pair"),
        1,
        "only the good event is in the file"
    );
}

#[test]
fn a_struct_given_as_its_fields_takes_the_value_type_its_field_declares() {
    let mut rec = recording();
    let point = rec
        .register_value_type(
            ValueTypeBuilder::new("test.Point")
                .field(FieldSpec::new("x", FieldType::Int))
                .field(FieldSpec::new("y", FieldType::Int)),
        )
        .unwrap();
    let moved = rec
        .register(
            EventTypeBuilder::new("test.Moved")
                .field(FieldSpec::new("to", FieldType::Struct(point.id())))
                .field(FieldSpec::new("n", FieldType::Int)),
        )
        .unwrap();
    let pair = rec.register(pair()).unwrap();
    let at = rec.clock().now();
    let epoch = rec.clock().epoch_nanos(at);

    let short = rec
        .event(&moved, at)
        .struct_fields(&[Value::Int(1)])
        .int(3)
        .commit();
    assert!(
        matches!(&short, Err(Error::FieldMismatch { field, .. }) if field == "to"),
        "{short:?}"
    );
    let not_a_struct = rec
        .event(&pair, at)
        .struct_fields(&[Value::Int(1), Value::Int(2)])
        .string(None)
        .commit();
    assert!(
        matches!(&not_a_struct, Err(Error::FieldMismatch { field, declared: Some(d), .. })
            if field == "a" && d == "Int"),
        "{not_a_struct:?}"
    );
    rec.event(&moved, at)
        .struct_fields(&[Value::Int(1), Value::Int(2)])
        .int(3)
        .commit()
        .unwrap();
    assert_eq!(rec.events_written(), 1);
    let bytes = rec.finish().unwrap().into_inner().into_inner();
    let path = support::temp_dir("api_struct_fields").join("moved.jfr");
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(
        support::dump(&path),
        [format!("test.Moved startTime={epoch} to={{x=1,y=2}} n=3")]
    );
}

#[test]
fn types_and_values_from_another_recording_are_refused() {
    let mut first = recording();
    let mut second = recording();
    let pair = first.register(pair()).unwrap();
    let at = second.clock().now();
    assert!(matches!(
        second.event(&pair, at).int(1).string(None).commit(),
        Err(Error::ForeignEventType { .. })
    ));

    let alloc = second.register(events::object_allocation_sample()).unwrap();
    let mut threads = Vec::new();
    for id in 0..3 {
        threads.push(first.thread(Thread {
            os_name: "t".into(),
            os_thread_id: id,
            java_name: "t".into(),
            java_thread_id: id,
            group: None,
        }));
    }
    // `second` holds no thread at all: the handle cannot be one of its values.
    let result = second
        .event(&alloc, at)
        .thread(threads[2])
        .stack_trace(None)
        .class(None)
        .long(1)
        .commit();
    assert!(
        matches!(result, Err(Error::ForeignReference { ref field, .. }) if field == "eventThread"),
        "{result:?}"
    );
}

#[test]
fn registering_a_name_twice_is_refused() {
    let mut rec = recording();
    rec.register(pair()).unwrap();
    assert!(
        matches!(rec.register(pair()), Err(Error::DuplicateType { name }) if name == "test.Pair")
    );
}

#[test]
fn an_unwritable_path_names_the_path() {
    let error = Recording::create("/nonexistent-dir/x.jfr", Options::default()).unwrap_err();
    assert!(
        error.to_string().contains("/nonexistent-dir/x.jfr"),
        "{error}"
    );
}

#[test]
fn interning_the_same_value_twice_gives_the_same_ref() {
    let mut rec = recording();
    let a = rec.symbol("java/lang/String");
    let b = rec.symbol("java/lang/String");
    let c = rec.symbol("java/lang/Object");
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn a_dropped_stack_trace_is_refused_and_interned_again_under_a_new_key() {
    let mut recording = recording();
    let alloc = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let trace = || StackTrace {
        truncated: false,
        frames: Vec::new(),
    };
    let dropped = recording.stack_trace(trace());
    let start = recording.clock().now();
    let sample = |recording: &mut Recording<_>, stack| {
        recording
            .event(&alloc, start)
            .thread(None)
            .stack_trace(stack)
            .class(None)
            .long(1)
            .commit()
    };
    // Two chunks later, with no event of the last two using it.
    for _ in 0..2 {
        recording.end_chunk().unwrap();
        sample(&mut recording, None).unwrap();
    }
    recording.drop_unused([]);
    assert!(!recording.holds(dropped));
    assert_eq!(recording.pool_sizes().stack_traces, 0);
    let result = sample(&mut recording, Some(dropped));
    assert!(
        matches!(result, Err(Error::ForeignReference { ref field, .. }) if field == "stackTrace"),
        "{result:?}"
    );
    let again = recording.stack_trace(trace());
    assert_ne!(again, dropped, "keys are never reused");
    sample(&mut recording, Some(again)).unwrap();
}

#[test]
fn a_stack_trace_added_twice_gets_two_keys_dropped_apart() {
    let mut recording = recording();
    let trace = StackTrace {
        truncated: false,
        frames: Vec::new(),
    };
    let first = recording.add_stack_trace(&trace).reference();
    let second = recording.add_stack_trace(&trace).reference();
    assert_ne!(first, second);
    assert!(recording.holds(first) && recording.holds(second));
    assert_eq!(recording.pool_sizes().stack_traces, 2);
    // Two chunks later (a chunk begins at its first event), neither used
    // since.
    let alloc = recording
        .register(events::object_allocation_sample())
        .unwrap();
    for _ in 0..2 {
        recording.end_chunk().unwrap();
        let start = recording.clock().now();
        recording
            .event(&alloc, start)
            .thread(None)
            .stack_trace(None)
            .class(None)
            .long(1)
            .commit()
            .unwrap();
    }
    recording.drop_unused([second.into()]);
    assert!(!recording.holds(first));
    assert!(recording.holds(second));
    assert_eq!(recording.pool_sizes().stack_traces, 1);
}

#[test]
fn a_receipt_holds_for_its_own_chunk_and_recording_only() {
    let mut recording = recording();
    let alloc = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let sample = |recording: &mut Recording<_>, stack: jfr_writer::StackTraceField| {
        let start = recording.clock().now();
        recording
            .event(&alloc, start)
            .thread(None)
            .stack_trace_field(stack)
            .class(None)
            .long(1)
            .commit()
    };
    let trace = |truncated| StackTrace {
        truncated,
        frames: Vec::new(),
    };
    let added = recording.add_stack_trace(trace(false));
    assert!(recording.is_marked(added));
    let kept = recording.stack_trace(trace(true));
    let kept_marked = recording.mark_stack_trace(kept).unwrap();
    sample(&mut recording, added.into()).unwrap();
    // Another recording's receipt names a chunk of that recording, never
    // one of this: its ref is marked here as any ref is.
    let mut other = self::recording();
    let foreign = other.add_stack_trace(trace(false));
    assert_eq!(foreign.reference(), added.reference(), "the same slot");
    assert!(!recording.is_marked(foreign));
    // Two chunks later, the stale receipt marks its stack again each
    // time, so the drop keeps it; the other stack is not used since.
    for _ in 0..2 {
        recording.end_chunk().unwrap();
        assert!(
            !recording.is_marked(kept_marked),
            "a receipt of an ended chunk"
        );
        sample(&mut recording, kept_marked.into()).unwrap();
    }
    recording.drop_unused([]);
    assert!(recording.holds(kept));
    assert!(!recording.holds(added.reference()));
    // A receipt for a value dropped since fails as its ref would, rather
    // than write a key that nothing in the chunk defines; so does the
    // other recording's receipt for the same slot, current there in a
    // chunk of the same number.
    let other_alloc = other.register(events::object_allocation_sample()).unwrap();
    while other.chunk_number() < recording.chunk_number() {
        let start = other.clock().now();
        let event = other.event(&other_alloc, start).thread(None);
        event
            .stack_trace(None)
            .class(None)
            .long(1)
            .commit()
            .unwrap();
        other.end_chunk().unwrap();
    }
    assert_eq!(other.chunk_number(), recording.chunk_number());
    for stack in [added, other.mark_stack_trace(foreign.reference()).unwrap()] {
        let refused = sample(&mut recording, stack.into());
        assert!(
            matches!(refused, Err(Error::ForeignReference { ref field, .. }) if field == "stackTrace"),
            "{refused:?}"
        );
    }
    assert_eq!(
        count_events(
            recording.finish().unwrap().into_inner().into_inner(),
            "jdk.ObjectAllocationSample"
        ),
        3
    );
}
