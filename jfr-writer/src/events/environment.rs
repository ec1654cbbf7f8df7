//! The JDK's events that say what the JVM runs on and how it was set up,
//! declared as JDK 17 declares them, so that Mission Control's rules on the
//! processors, memory, flags, properties and environment run: processors
//! (`jdk.CPUInformation`, `jdk.CPULoad`), memory (`jdk.PhysicalMemory`),
//! the VM's flags (`jdk.BooleanFlag`, `jdk.IntFlag`,
//! `jdk.UnsignedLongFlag`, `jdk.StringFlag`), the system properties and
//! environment at the start (`jdk.InitialSystemProperty`,
//! `jdk.InitialEnvironmentVariable`), `jdk.Shutdown`, and the bytes each
//! thread allocated (`jdk.ThreadAllocationStatistics`).

use super::typed::simple_string;
use crate::error::Error;
use crate::event::{EventTypeBuilder, Value, ValueType};
use crate::field::Unit;
use crate::pool::{ConstantRef, StackTraceField, ThreadRef};
use crate::recording::{Recording, Sink};
use crate::types::Setting;
use jfr_format::names::{class, event, field};

/// The value type of the flag events, registered with one recording.
#[derive(Debug, Clone)]
pub struct FlagTypes {
    origin: ValueType,
}

impl FlagTypes {
    /// Registers the types with `recording`.
    pub fn register<S: Sink>(recording: &mut Recording<S>) -> Result<Self, Error> {
        Ok(Self {
            origin: recording.register_value_type(simple_string(
                class::FLAG_VALUE_ORIGIN,
                "Flag Value Origin",
                field::ORIGIN,
                "Origin",
            ))?,
        })
    }

    /// Where a flag's value came from (`Default`, `Command line`,
    /// `Ergonomic`, ...) as a constant of the chunk.
    pub fn origin<S: Sink>(
        &self,
        recording: &mut Recording<S>,
        origin: &str,
    ) -> Result<ConstantRef, Error> {
        recording.constant(&self.origin, &[Value::String(Some(origin))])
    }
}

typed_event! {
    /// `jdk.CPUInformation`, as the JDK declares it.
    pub fn cpu_information() -> EventTypeBuilder {
        EventTypeBuilder::new(event::CPU_INFORMATION)
            .category(&["Operating System", "Processor"])
            .label("CPU Information")
            .description("Characteristics and descriptions of the processor(s) the JVM is running on")
            .setting(Setting::Period, "beginChunk")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.CPUInformation`: the machine's processors.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct CpuInformation<'a> {
        /// When it was written.
        pub start_time: Ticks,
        /// The processor's type and features.
        pub cpu: Option<&'a str> => field::CPU.label("Type"),
        /// The processor's model.
        pub description: Option<&'a str> => field::DESCRIPTION.label("Description"),
        /// Processor sockets.
        pub sockets: i32 => field::SOCKETS.unsigned().label("Sockets"),
        /// Cores, over all sockets.
        pub cores: i32 => field::CORES.unsigned().label("Cores"),
        /// Hardware threads (logical processors).
        pub hw_threads: i32 => field::HW_THREADS.unsigned().label("Hardware Threads"),
    }
}

typed_event! {
    /// `jdk.CPULoad`, as the JDK declares it.
    pub fn cpu_load() -> EventTypeBuilder {
        EventTypeBuilder::new(event::CPU_LOAD)
            .category(&["Operating System", "Processor"])
            .label("CPU Load")
            .description("Information about the recent CPU usage of the JVM process")
            .setting(Setting::Period, "1000 ms")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.CPULoad`: shares of all the machine's CPUs' time since the
    /// last one, each in [0, 1].
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct CpuLoad {
        /// When it was measured.
        pub start_time: Ticks,
        /// The JVM's time in user mode.
        pub jvm_user: f32 => field::JVM_USER.unit(Unit::Percentage).label("JVM User"),
        /// The JVM's time in the kernel.
        pub jvm_system: f32 => field::JVM_SYSTEM.unit(Unit::Percentage).label("JVM System"),
        /// Every process's time, the JVM's included.
        pub machine_total: f32 => field::MACHINE_TOTAL
            .unit(Unit::Percentage)
            .label("Machine Total"),
    }
}

typed_event! {
    /// `jdk.PhysicalMemory`, as the JDK declares it.
    pub fn physical_memory() -> EventTypeBuilder {
        EventTypeBuilder::new(event::PHYSICAL_MEMORY)
            .category(&["Operating System", "Memory"])
            .label("Physical Memory")
            .description("OS Physical Memory")
            .setting(Setting::Period, "everyChunk")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.PhysicalMemory`: the machine's memory.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct PhysicalMemory {
        /// When it was measured.
        pub start_time: Ticks,
        /// Bytes of physical memory.
        pub total_size: i64 => field::TOTAL_SIZE
            .unsigned()
            .unit(Unit::Bytes)
            .label("Total Size")
            .description("Total amount of physical memory available to OS"),
        /// Bytes in use.
        pub used_size: i64 => field::USED_SIZE
            .unsigned()
            .unit(Unit::Bytes)
            .label("Used Size")
            .description("Total amount of physical memory in use"),
    }
}

typed_event! {
    /// `jdk.BooleanFlag`, as the JDK declares it.
    pub fn boolean_flag(types: &FlagTypes) -> EventTypeBuilder {
        EventTypeBuilder::new(event::BOOLEAN_FLAG)
            .category(&["Java Virtual Machine", "Flag"])
            .label("Boolean Flag")
            .setting(Setting::Period, "beginChunk")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.BooleanFlag`: a VM flag's value and where it came from.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct BooleanFlag<'a> {
        /// When it was read.
        pub start_time: Ticks,
        /// The flag's name: `UseG1GC`.
        pub name: Option<&'a str> => field::NAME.label("Name"),
        /// Its value.
        pub value: bool => field::VALUE.label("Value"),
        /// Where the value came from ([`FlagTypes::origin`]).
        pub origin: Option<ConstantRef> => field::ORIGIN [types.origin].label("Origin"),
    }
}

typed_event! {
    /// `jdk.IntFlag`, as the JDK declares it.
    pub fn int_flag(types: &FlagTypes) -> EventTypeBuilder {
        EventTypeBuilder::new(event::INT_FLAG)
            .category(&["Java Virtual Machine", "Flag"])
            .label("Int Flag")
            .setting(Setting::Period, "beginChunk")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.IntFlag`: a VM flag's value and where it came from.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct IntFlag<'a> {
        /// When it was read.
        pub start_time: Ticks,
        /// The flag's name.
        pub name: Option<&'a str> => field::NAME.label("Name"),
        /// Its value.
        pub value: i32 => field::VALUE.label("Value"),
        /// Where the value came from ([`FlagTypes::origin`]).
        pub origin: Option<ConstantRef> => field::ORIGIN [types.origin].label("Origin"),
    }
}

typed_event! {
    /// `jdk.UnsignedLongFlag`, as the JDK declares it.
    pub fn unsigned_long_flag(types: &FlagTypes) -> EventTypeBuilder {
        EventTypeBuilder::new(event::UNSIGNED_LONG_FLAG)
            .category(&["Java Virtual Machine", "Flag"])
            .label("Unsigned Long Flag")
            .setting(Setting::Period, "beginChunk")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.UnsignedLongFlag`: a VM flag's value and where it came from.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct UnsignedLongFlag<'a> {
        /// When it was read.
        pub start_time: Ticks,
        /// The flag's name: `MaxHeapSize`.
        pub name: Option<&'a str> => field::NAME.label("Name"),
        /// Its value: the bits of an unsigned 64-bit number.
        pub value: i64 => field::VALUE.unsigned().label("Value"),
        /// Where the value came from ([`FlagTypes::origin`]).
        pub origin: Option<ConstantRef> => field::ORIGIN [types.origin].label("Origin"),
    }
}

typed_event! {
    /// `jdk.StringFlag`, as the JDK declares it.
    pub fn string_flag(types: &FlagTypes) -> EventTypeBuilder {
        EventTypeBuilder::new(event::STRING_FLAG)
            .category(&["Java Virtual Machine", "Flag"])
            .label("String Flag")
            .setting(Setting::Period, "beginChunk")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.StringFlag`: a VM flag's value and where it came from.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct StringFlag<'a> {
        /// When it was read.
        pub start_time: Ticks,
        /// The flag's name.
        pub name: Option<&'a str> => field::NAME.label("Name"),
        /// Its value (null: unset).
        pub value: Option<&'a str> => field::VALUE.label("Value"),
        /// Where the value came from ([`FlagTypes::origin`]).
        pub origin: Option<ConstantRef> => field::ORIGIN [types.origin].label("Origin"),
    }
}

typed_event! {
    /// `jdk.InitialSystemProperty`, as the JDK declares it.
    pub fn initial_system_property() -> EventTypeBuilder {
        EventTypeBuilder::new(event::INITIAL_SYSTEM_PROPERTY)
            .category(&["Java Virtual Machine"])
            .label("Initial System Property")
            .description("System Property at JVM start")
            .setting(Setting::Period, "beginChunk")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.InitialSystemProperty`: one system property.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct InitialSystemProperty<'a> {
        /// When it was written.
        pub start_time: Ticks,
        /// The property's key.
        pub key: Option<&'a str> => field::KEY.label("Key"),
        /// Its value.
        pub value: Option<&'a str> => field::VALUE.label("Value"),
    }
}

typed_event! {
    /// `jdk.InitialEnvironmentVariable`, as the JDK declares it.
    pub fn initial_environment_variable() -> EventTypeBuilder {
        EventTypeBuilder::new(event::INITIAL_ENVIRONMENT_VARIABLE)
            .category(&["Operating System"])
            .label("Initial Environment Variable")
            .description("Key-value pairs for environment variables at JVM startup")
            .setting(Setting::Period, "beginChunk")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.InitialEnvironmentVariable`: one environment variable.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct InitialEnvironmentVariable<'a> {
        /// When it was written.
        pub start_time: Ticks,
        /// The variable's name.
        pub key: Option<&'a str> => field::KEY.label("Key"),
        /// Its value.
        pub value: Option<&'a str> => field::VALUE.label("Value"),
    }
}

typed_event! {
    /// `jdk.Shutdown`, as the JDK declares it.
    pub fn shutdown() -> EventTypeBuilder {
        EventTypeBuilder::new(event::SHUTDOWN)
            .category(&["Java Virtual Machine", "Runtime"])
            .label("JVM Shutdown")
            .description("JVM shutting down")
            .setting(Setting::StackTrace, "true")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.Shutdown`: the JVM shutting down.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Shutdown<'a> {
        /// When the shutdown was seen.
        pub start_time: Ticks,
        /// The thread that shut the JVM down.
        pub event_thread: Option<ThreadRef>,
        /// Where it did so.
        pub stack_trace: StackTraceField,
        /// Why: `No remaining non-daemon Java threads`, `Shutdown requested
        /// from Java`.
        pub reason: Option<&'a str> => field::REASON
            .label("Reason")
            .description("Reason for JVM shutdown"),
    }
}

typed_event! {
    /// `jdk.ThreadAllocationStatistics`, as the JDK declares it.
    pub fn thread_allocation_statistics() -> EventTypeBuilder {
        EventTypeBuilder::new(event::THREAD_ALLOCATION_STATISTICS)
            .category(&["Java Application", "Statistics"])
            .label("Thread Allocation Statistics")
            .setting(Setting::Period, "everyChunk")
            .setting(Setting::Enabled, "true")
    }

    /// A `jdk.ThreadAllocationStatistics`: the bytes one thread allocated
    /// since it started, as the JVM counts them.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct ThreadAllocationStatistics {
        /// When it was read.
        pub start_time: Ticks,
        /// Bytes allocated since the thread started.
        pub allocated: i64 => field::ALLOCATED
            .unsigned()
            .unit(Unit::Bytes)
            .label("Allocated")
            .description("Approximate number of bytes allocated since thread start"),
        /// The thread.
        pub thread: Option<ThreadRef> => field::THREAD.label("Thread"),
    }
}
