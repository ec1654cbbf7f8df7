//! The JDK's environment events (processors, memory, VM flags, system
//! properties, environment variables, shutdown, each thread's allocated
//! bytes), written by jfr-writer and
//! read back by the JDK's own parser: declared as JDK 17 declares them, and
//! every value read back as written.

use heapsampler_test_support as support;

use jfr_writer::events::{
    self, BooleanFlag, CpuInformation, CpuLoad, FlagTypes, InitialEnvironmentVariable,
    InitialSystemProperty, IntFlag, PhysicalMemory, Shutdown, StringFlag,
    ThreadAllocationStatistics, UnsignedLongFlag,
};
use jfr_writer::{EventType, Options, Recording, Sink, StackFrame, StackTrace, Thread};
use support::{declaration, dump_types, metadata_of, temp_dir};

struct Types {
    flags: FlagTypes,
    cpu_information: EventType,
    cpu_load: EventType,
    physical_memory: EventType,
    boolean_flag: EventType,
    int_flag: EventType,
    unsigned_long_flag: EventType,
    string_flag: EventType,
    system_property: EventType,
    environment_variable: EventType,
    shutdown: EventType,
    thread_allocation: EventType,
}

fn register<S: Sink>(recording: &mut Recording<S>) -> Types {
    let flags = FlagTypes::register(recording).unwrap();
    let mut event = |builder| recording.register(builder).unwrap();
    Types {
        cpu_information: event(events::cpu_information()),
        cpu_load: event(events::cpu_load()),
        physical_memory: event(events::physical_memory()),
        boolean_flag: event(events::boolean_flag(&flags)),
        int_flag: event(events::int_flag(&flags)),
        unsigned_long_flag: event(events::unsigned_long_flag(&flags)),
        string_flag: event(events::string_flag(&flags)),
        system_property: event(events::initial_system_property()),
        environment_variable: event(events::initial_environment_variable()),
        shutdown: event(events::shutdown()),
        thread_allocation: event(events::thread_allocation_statistics()),
        flags,
    }
}

#[test]
fn environment_events_are_declared_as_the_jdk_declares_them() {
    let dir = temp_dir("environment_declarations");
    let path = dir.join("declared.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    register(&mut recording);
    recording.close().unwrap();
    let (ours, jdk) = (metadata_of(Some(&path)), metadata_of(None));
    for name in [
        "jdk.CPUInformation",
        "jdk.CPULoad",
        "jdk.PhysicalMemory",
        "jdk.BooleanFlag",
        "jdk.IntFlag",
        "jdk.UnsignedLongFlag",
        "jdk.StringFlag",
        "jdk.InitialSystemProperty",
        "jdk.InitialEnvironmentVariable",
        "jdk.Shutdown",
        "jdk.ThreadAllocationStatistics",
        "jdk.types.FlagValueOrigin",
    ] {
        let declared = declaration(&ours, name);
        assert!(!declared.is_empty(), "{name} is not declared");
        assert_eq!(
            declared,
            declaration(&jdk, name),
            "{name} must be declared exactly as JDK 17 declares it"
        );
    }
}

#[test]
fn environment_events_read_back_exactly() {
    let dir = temp_dir("environment_events");
    let path = dir.join("environment.jfr");
    let mut recording = Recording::create(&path, Options::default()).unwrap();
    let types = register(&mut recording);
    let at = recording.clock().now();
    CpuInformation {
        start_time: at,
        cpu: Some("AMD64"),
        description: Some("AMD EPYC"),
        sockets: 2,
        cores: 8,
        hw_threads: 16,
    }
    .write(&mut recording, &types.cpu_information)
    .unwrap();
    CpuLoad {
        start_time: at,
        jvm_user: 0.25,
        jvm_system: 0.125,
        machine_total: 0.5,
    }
    .write(&mut recording, &types.cpu_load)
    .unwrap();
    PhysicalMemory {
        start_time: at,
        total_size: 8 << 30,
        used_size: 3 << 30,
    }
    .write(&mut recording, &types.physical_memory)
    .unwrap();
    let (command_line, default) = (
        types.flags.origin(&mut recording, "Command line").unwrap(),
        types.flags.origin(&mut recording, "Default").unwrap(),
    );
    BooleanFlag {
        start_time: at,
        name: Some("UseG1GC"),
        value: true,
        origin: Some(command_line),
    }
    .write(&mut recording, &types.boolean_flag)
    .unwrap();
    IntFlag {
        start_time: at,
        name: Some("ObjectAlignmentInBytes"),
        value: -8,
        origin: Some(default),
    }
    .write(&mut recording, &types.int_flag)
    .unwrap();
    // All bits set: the unsigned value the JDK prints as -1.
    UnsignedLongFlag {
        start_time: at,
        name: Some("MaxMetaspaceSize"),
        value: -1,
        origin: Some(default),
    }
    .write(&mut recording, &types.unsigned_long_flag)
    .unwrap();
    StringFlag {
        start_time: at,
        name: Some("FlightRecorderOptions"),
        value: None,
        origin: Some(default),
    }
    .write(&mut recording, &types.string_flag)
    .unwrap();
    InitialSystemProperty {
        start_time: at,
        key: Some("foo.bar"),
        value: Some("baz"),
    }
    .write(&mut recording, &types.system_property)
    .unwrap();
    InitialEnvironmentVariable {
        start_time: at,
        key: Some("HOME"),
        value: Some("/home/x"),
    }
    .write(&mut recording, &types.environment_variable)
    .unwrap();
    let thread = recording.thread(Thread {
        os_name: "main".into(),
        os_thread_id: 7,
        java_name: "main".into(),
        java_thread_id: 1,
        group: None,
    });
    let method = support::method_of(&mut recording, "java/lang/Shutdown", "exit");
    let stack = recording.add_stack_trace(StackTrace {
        truncated: false,
        frames: vec![StackFrame {
            method,
            line_number: 10,
            bytecode_index: 3,
            frame_type: jfr_writer::FrameType::Unknown,
        }],
    });
    Shutdown {
        start_time: at,
        event_thread: Some(thread),
        stack_trace: stack.into(),
        reason: Some("Shutdown requested from Java"),
    }
    .write(&mut recording, &types.shutdown)
    .unwrap();
    ThreadAllocationStatistics {
        start_time: at,
        allocated: (1 << 40) + 3,
        thread: Some(thread),
    }
    .write(&mut recording, &types.thread_allocation)
    .unwrap();
    recording.close().unwrap();

    let epoch = dump_types(&path, &[])[0]
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("startTime="))
        .unwrap()
        .to_owned();
    let read = dump_types(
        &path,
        &[
            "jdk.CPUInformation",
            "jdk.CPULoad",
            "jdk.PhysicalMemory",
            "jdk.BooleanFlag",
            "jdk.IntFlag",
            "jdk.UnsignedLongFlag",
            "jdk.StringFlag",
            "jdk.InitialSystemProperty",
            "jdk.InitialEnvironmentVariable",
        ],
    );
    assert_eq!(
        read,
        vec![
            format!(
                "jdk.CPUInformation startTime={epoch} cpu=\"AMD64\" description=\"AMD EPYC\" \
                 sockets=2 cores=8 hwThreads=16"
            ),
            // The checker prints a float's bits, exactly.
            format!(
                "jdk.CPULoad startTime={epoch} jvmUser=float:{:08x} jvmSystem=float:{:08x} \
                 machineTotal=float:{:08x}",
                0.25f32.to_bits(),
                0.125f32.to_bits(),
                0.5f32.to_bits()
            ),
            format!(
                "jdk.PhysicalMemory startTime={epoch} totalSize={} usedSize={}",
                8u64 << 30,
                3u64 << 30
            ),
            format!(
                "jdk.BooleanFlag startTime={epoch} name=\"UseG1GC\" value=true \
                 origin=\"Command line\""
            ),
            format!(
                "jdk.IntFlag startTime={epoch} name=\"ObjectAlignmentInBytes\" value=-8 \
                 origin=\"Default\""
            ),
            format!(
                "jdk.UnsignedLongFlag startTime={epoch} name=\"MaxMetaspaceSize\" value=-1 \
                 origin=\"Default\""
            ),
            format!(
                "jdk.StringFlag startTime={epoch} name=\"FlightRecorderOptions\" value=null \
                 origin=\"Default\""
            ),
            format!("jdk.InitialSystemProperty startTime={epoch} key=\"foo.bar\" value=\"baz\""),
            format!(
                "jdk.InitialEnvironmentVariable startTime={epoch} key=\"HOME\" \
                 value=\"/home/x\""
            ),
        ]
    );
    assert_eq!(
        dump_types(&path, &["jdk.Shutdown"]),
        vec![format!(
            "jdk.Shutdown startTime={epoch} eventThread=thread(\"main\",1,\"main\",7,null) \
             stackTrace=stack(false:java.lang.Shutdown.exit()V:10:3:Unknown:0:false) \
             reason=\"Shutdown requested from Java\""
        )]
    );
    assert_eq!(
        dump_types(&path, &["jdk.ThreadAllocationStatistics"]),
        vec![format!(
            "jdk.ThreadAllocationStatistics startTime={epoch} allocated={} \
             thread=thread(\"main\",1,\"main\",7,null)",
            (1u64 << 40) + 3
        )]
    );
}
