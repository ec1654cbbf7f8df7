//! Writes a recording with a custom event type that carries a stack trace, a
//! thread and a field of every primitive type, with units.
//!
//! ```text
//! cargo run --release -p jfr-writer --example custom_event -- out.jfr
//! jfr print --events demo.Order out.jfr
//! ```

use std::process::ExitCode;

use jfr_writer::{
    Class, EventTypeBuilder, FieldSpec, FieldType, FrameType, Method, Options, Recording,
    StackFrame, StackTrace, Thread, ThreadGroup, Unit,
};

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: custom_event OUT.jfr");
        return ExitCode::from(2);
    };
    match write(std::path::Path::new(&path)) {
        Ok(()) => {
            println!(
                "wrote {}; try: jfr print --events demo.Order {}",
                path.to_string_lossy(),
                path.to_string_lossy()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("custom_event: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Writes the demo recording to `path`.
pub fn write(path: &std::path::Path) -> Result<(), jfr_writer::Error> {
    let mut recording = Recording::create(path, Options::default())?;
    let order = recording.register(
        EventTypeBuilder::new("demo.Order")
            .label("Order")
            .description("An order placed in the demo shop")
            .category(&["Demo", "Shop"])
            .with_duration()
            .with_thread()
            .with_stack_trace()
            .field(FieldSpec::new("express", FieldType::Boolean).label("Express"))
            .field(FieldSpec::new("priority", FieldType::Byte).label("Priority"))
            .field(FieldSpec::new("items", FieldType::Short).label("Items"))
            .field(FieldSpec::new("grade", FieldType::Char).label("Grade"))
            .field(FieldSpec::new("customerId", FieldType::Int).label("Customer Id"))
            .field(
                FieldSpec::new("payload", FieldType::Long)
                    .label("Payload")
                    .unit(Unit::Bytes),
            )
            .field(
                FieldSpec::new("discount", FieldType::Float)
                    .label("Discount")
                    .unit(Unit::Percentage),
            )
            .field(FieldSpec::new("total", FieldType::Double).label("Total"))
            .field(FieldSpec::new("note", FieldType::String).label("Note"))
            .field(
                FieldSpec::new("latency", FieldType::Long)
                    .label("Latency")
                    .unit(Unit::TimespanNanos),
            ),
    )?;

    let system = recording.thread_group(ThreadGroup {
        parent: None,
        name: "system".into(),
    });
    let main = recording.thread_group(ThreadGroup {
        parent: Some(system),
        name: "main".into(),
    });
    let thread = recording.thread(Thread {
        os_name: "http-worker-1".into(),
        os_thread_id: 4242,
        java_name: "http-worker-1".into(),
        java_thread_id: 31,
        group: Some(main),
    });
    let class_name = recording.symbol("demo/shop/Checkout");
    let class = recording.class(Class {
        class_loader: None,
        name: class_name,
        package: None,
        modifiers: 1,
        hidden: false,
    });
    let mut method = |name: &str, descriptor: &str| {
        let (name, descriptor) = (recording.symbol(name), recording.symbol(descriptor));
        recording.method(Method {
            class,
            name,
            descriptor,
            modifiers: 1,
            hidden: false,
        })
    };
    let place = method("placeOrder", "(ILjava/lang/String;)J");
    let handle = method("handle", "(Ldemo/shop/Request;)V");
    let stack = recording.stack_trace(StackTrace {
        truncated: false,
        frames: vec![
            StackFrame {
                method: place,
                line_number: 88,
                bytecode_index: 12,
                frame_type: FrameType::JitCompiled,
            },
            StackFrame {
                method: handle,
                line_number: 41,
                bytecode_index: 3,
                frame_type: FrameType::Interpreted,
            },
        ],
    });

    let clock = recording.clock();
    for i in 0..3i64 {
        let start = clock.now();
        recording
            .event(&order, start)
            .duration(1_500_000 * (i + 1))
            .thread(thread)
            .stack_trace(stack)
            .boolean(i % 2 == 0)
            .byte(i as i8)
            .short(3 + i as i16)
            .char(u16::from(b'A') + i as u16)
            .int(1000 + i as i32)
            .long(1_048_576 * (i + 1))
            .float(0.15)
            .double(99.95 * (i + 1) as f64)
            .string(Some("gift wrap ✓"))
            .long(2_500_000)
            .commit()?;
    }
    recording.close()
}
