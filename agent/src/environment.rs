//! What the JVM runs on and how it was set up, as the JDK's own recordings
//! give it, so that Mission Control's rules on processors, memory, flags,
//! system properties and the environment run on a heapsampler recording:
//! at each chunk's start `jdk.CPUInformation`, the VM's flags
//! (`jdk.BooleanFlag`, `jdk.IntFlag`, `jdk.UnsignedLongFlag`,
//! `jdk.StringFlag`), `jdk.InitialSystemProperty` and, unless the
//! `environment=false` option leaves them out,
//! `jdk.InitialEnvironmentVariable`; `jdk.PhysicalMemory` at each chunk's
//! start and each flush, and `jdk.CPULoad` at each flush. `jdk.Shutdown`
//! is the writer's ([`crate::writer::Writer::shutdown`]), from a
//! [`ShutdownRecord`].
//!
//! The processors, their load and the memory come from `/proc`, read as
//! HotSpot reads them on Linux (`os_perf_linux.cpp`,
//! `JfrOSInterface::cpu_information`); the flags and system properties from
//! the JVM through an [`EnvironmentVm`]; the environment from the process.
//! All of it on the writer thread, never in the allocation callback.
//!
//! `jdk.CPULoad` covers the time since the previous one; the first covers
//! the time since the writer started ([`Environment::begin`]), so every
//! flush writes one. A flush that finds no tick elapsed (or `/proc`
//! unreadable) writes none.

use jfr_writer::events::{
    self, BooleanFlag, CpuInformation, CpuLoad, FlagTypes, InitialEnvironmentVariable,
    InitialSystemProperty, IntFlag, PhysicalMemory, StringFlag, UnsignedLongFlag,
};
use jfr_writer::{EventType, Recording, Sink};

/// The JDK type of a VM flag's event: the flag's type in HotSpot
/// (`bool`, `int`, `size_t`/`uintx`/`uint64_t`, `ccstr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagKind {
    /// `jdk.BooleanFlag`.
    Boolean,
    /// `jdk.IntFlag`.
    Int,
    /// `jdk.UnsignedLongFlag`.
    UnsignedLong,
    /// `jdk.StringFlag`.
    String,
}

/// The flags written, each with the JDK event it is written as (the type
/// HotSpot declares it with, checked against the JDK's own recording of
/// the same JVM by `convert/tests/environment.rs`): those Mission Control's
/// rules read by name, and those that say how the JVM collects and sizes
/// its heap. A flag the JVM does not have, or has locked (a diagnostic or
/// experimental flag not unlocked, as the JDK leaves those out too), is
/// left out.
pub const FLAGS: &[(&str, FlagKind)] = &[
    // Read by Mission Control's rules.
    ("UnlockExperimentalVMOptions", FlagKind::Boolean),
    ("UnlockDiagnosticVMOptions", FlagKind::Boolean),
    ("IgnoreUnrecognizedVMOptions", FlagKind::Boolean),
    ("UseStringDeduplication", FlagKind::Boolean),
    ("CompactStrings", FlagKind::Boolean),
    ("UseCompressedOops", FlagKind::Boolean),
    ("SegmentedCodeCache", FlagKind::Boolean),
    ("DebugNonSafepoints", FlagKind::Boolean),
    ("MaxHeapSize", FlagKind::UnsignedLong),
    ("MaxMetaspaceSize", FlagKind::UnsignedLong),
    ("FlightRecorderOptions", FlagKind::String),
    // The collector and the heap.
    ("UseG1GC", FlagKind::Boolean),
    ("UseParallelGC", FlagKind::Boolean),
    ("UseSerialGC", FlagKind::Boolean),
    ("UseZGC", FlagKind::Boolean),
    ("UseShenandoahGC", FlagKind::Boolean),
    ("UseCompressedClassPointers", FlagKind::Boolean),
    ("DisableExplicitGC", FlagKind::Boolean),
    ("ExplicitGCInvokesConcurrent", FlagKind::Boolean),
    ("UseDynamicNumberOfGCThreads", FlagKind::Boolean),
    ("AlwaysPreTouch", FlagKind::Boolean),
    ("HeapDumpOnOutOfMemoryError", FlagKind::Boolean),
    ("ActiveProcessorCount", FlagKind::Int),
    ("InitialHeapSize", FlagKind::UnsignedLong),
    ("MinHeapSize", FlagKind::UnsignedLong),
    ("SoftMaxHeapSize", FlagKind::UnsignedLong),
    ("NewSize", FlagKind::UnsignedLong),
    ("MaxNewSize", FlagKind::UnsignedLong),
    ("NewRatio", FlagKind::UnsignedLong),
    ("G1HeapRegionSize", FlagKind::UnsignedLong),
    ("MaxGCPauseMillis", FlagKind::UnsignedLong),
    ("MetaspaceSize", FlagKind::UnsignedLong),
    ("CompressedClassSpaceSize", FlagKind::UnsignedLong),
    ("ReservedCodeCacheSize", FlagKind::UnsignedLong),
    ("MaxDirectMemorySize", FlagKind::UnsignedLong),
    ("HeapDumpPath", FlagKind::String),
];

/// The flags that unlock the diagnostic and experimental flags, being such
/// flags themselves: unlocked, and so written by the JDK, only when true.
/// The management interface gives them either way.
const SELF_UNLOCKING: [&str; 2] = ["UnlockDiagnosticVMOptions", "UnlockExperimentalVMOptions"];

/// A VM flag as the JVM's management interface gives it
/// (`HotSpotDiagnosticMXBean.getVMOption`): the flag events write it, and
/// the GC configuration ([`crate::heap`]) is read from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VmFlag {
    /// `VMOption.getValue()`: `true`, `4294967296`, a path, or empty.
    pub value: String,
    /// `VMOption.getOrigin()`'s name: `DEFAULT`, `VM_CREATION`, ...
    pub origin: String,
}

/// Where a flag's value came from as the JDK's recordings say it
/// (HotSpot's `flag_value_origin_to_string`), from the name of the
/// management interface's `VMOption.Origin`.
pub fn origin_name(origin: &str) -> &'static str {
    match origin {
        "DEFAULT" => "Default",
        "VM_CREATION" => "Command line",
        "ENVIRON_VAR" => "Environment variable",
        "CONFIG_FILE" => "Config file",
        "MANAGEMENT" => "Management",
        "ERGONOMIC" => "Ergonomic",
        "ATTACH_ON_DEMAND" => "Attach on demand",
        _ => "Internal",
    }
}

/// The system property the JVM has for its agents only (JVMTI's
/// `GetSystemProperties` lists it; the JDK's recordings leave it out as
/// internal).
pub const BOOT_CLASS_PATH_APPEND: &str = "jdk.boot.class.path.append";

/// What the environment's events ask of the JVM, on the writer thread.
pub trait EnvironmentVm {
    /// The JVM's system properties as it started with them (JVMTI's
    /// `GetSystemProperties`), in its order; empty if it cannot say.
    fn system_properties(&mut self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// Each flag of `names`, in order: `None` where the JVM has none it
    /// will tell (or cannot say).
    fn vm_flags(&mut self, names: &[&str]) -> Vec<Option<VmFlag>> {
        vec![None; names.len()]
    }
}

/// The machine's processors, from `/proc/cpuinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuInfo {
    /// The architecture and vendor: `x86_64 AuthenticAMD`.
    pub cpu: String,
    /// The model, as HotSpot describes it: `Brand: AMD EPYC 7B13, Vendor:
    /// AuthenticAMD`.
    pub description: String,
    /// Distinct `physical id`s (1 if none is given).
    pub sockets: u32,
    /// `cpu cores` summed over the sockets (the hardware threads if not
    /// given).
    pub cores: u32,
    /// `processor` entries: the logical processors the kernel runs.
    pub hw_threads: u32,
}

/// Reads `/proc/cpuinfo`'s text: one block per logical processor.
pub fn parse_cpuinfo(text: &str) -> CpuInfo {
    let mut hw_threads = 0u32;
    // (physical id, cpu cores) of each socket, once.
    let mut sockets: Vec<(String, u32)> = Vec::new();
    let (mut vendor, mut model) = (None, None);
    let mut physical_id: Option<String> = None;
    let mut cores_here: Option<u32> = None;
    let mut end_block = |physical_id: &mut Option<String>, cores_here: &mut Option<u32>| {
        if let Some(id) = physical_id.take()
            && !sockets.iter().any(|(known, _)| *known == id)
        {
            sockets.push((id, cores_here.unwrap_or(0)));
        }
        *cores_here = None;
    };
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            if line.trim().is_empty() {
                end_block(&mut physical_id, &mut cores_here);
            }
            continue;
        };
        let value = value.trim();
        match key.trim() {
            "processor" => hw_threads += 1,
            "physical id" => physical_id = Some(value.to_owned()),
            "cpu cores" => cores_here = value.parse().ok(),
            "vendor_id" if vendor.is_none() => vendor = Some(value.to_owned()),
            "model name" if model.is_none() => model = Some(value.to_owned()),
            _ => {}
        }
    }
    end_block(&mut physical_id, &mut cores_here);
    let hw_threads = hw_threads.max(1);
    let cores: u32 = sockets.iter().map(|(_, cores)| cores).sum();
    let vendor = vendor.unwrap_or_else(|| "unknown".to_owned());
    CpuInfo {
        cpu: format!("{} {vendor}", std::env::consts::ARCH),
        description: format!(
            "Brand: {}, Vendor: {vendor}",
            model.as_deref().unwrap_or("unknown")
        ),
        sockets: (sockets.len() as u32).max(1),
        cores: if cores == 0 { hw_threads } else { cores },
        hw_threads,
    }
}

/// The machine's CPU time so far, from `/proc/stat`'s first line (all
/// CPUs), in clock ticks, as HotSpot's `get_total_ticks` sums it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MachineTicks {
    /// `user + nice`.
    pub user: u64,
    /// `system + irq + softirq`.
    pub kernel: u64,
    /// Every column: the above and `idle`, `iowait`, `steal`.
    pub total: u64,
}

/// Reads `/proc/stat`'s `cpu` line; `None` if it is not there.
pub fn parse_stat(text: &str) -> Option<MachineTicks> {
    let line = text.lines().find(|line| line.starts_with("cpu "))?;
    let columns: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|column| column.parse().unwrap_or(0))
        .collect();
    let at = |i: usize| columns.get(i).copied().unwrap_or(0);
    // user nice system idle iowait irq softirq steal (guest and guest_nice
    // are counted in user and nice already).
    let (user, nice, system, idle, iowait, irq, softirq, steal) =
        (at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7));
    (columns.len() >= 4).then_some(MachineTicks {
        user: user + nice,
        kernel: system + irq + softirq,
        total: user + nice + system + idle + iowait + irq + softirq + steal,
    })
}

/// The process's CPU time so far, from `/proc/self/stat`, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessTicks {
    /// `utime`.
    pub user: u64,
    /// `stime`.
    pub kernel: u64,
}

/// Reads `/proc/self/stat`: `utime` and `stime` are the 14th and 15th
/// fields, counted after the command's name, which is in parentheses and
/// may hold spaces and parentheses itself.
pub fn parse_self_stat(text: &str) -> Option<ProcessTicks> {
    let after_name = &text[text.rfind(')')? + 1..];
    // Fields 3 onwards: state is the first here, utime the 12th.
    let mut fields = after_name.split_whitespace().skip(11);
    Some(ProcessTicks {
        user: fields.next()?.parse().ok()?,
        kernel: fields.next()?.parse().ok()?,
    })
}

/// The CPU time of the JVM and of the machine at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// The machine's.
    pub machine: MachineTicks,
    /// The JVM process's.
    pub process: ProcessTicks,
}

/// `jdk.CPULoad`'s shares between two readings, as HotSpot's
/// `cpu_loads_process` computes them: the JVM's user and kernel time, and
/// the machine's, each over the machine's total time elapsed (all CPUs),
/// in [0, 1]. The total is at least what the JVM used (the two files are
/// read at slightly different moments), and the machine's load at least
/// the JVM's. `None` if no tick elapsed.
pub fn cpu_load(before: &CpuTicks, after: &CpuTicks) -> Option<(f32, f32, f32)> {
    let delta = |a: u64, b: u64| b.saturating_sub(a) as f64;
    let jvm_user = delta(before.process.user, after.process.user);
    let jvm_kernel = delta(before.process.kernel, after.process.kernel);
    let total = delta(before.machine.total, after.machine.total).max(jvm_user + jvm_kernel);
    if total == 0.0 {
        return None;
    }
    let machine = delta(before.machine.user, after.machine.user)
        + delta(before.machine.kernel, after.machine.kernel);
    let share = |ticks: f64| (ticks / total).clamp(0.0, 1.0);
    let (user, kernel) = (share(jvm_user), share(jvm_kernel));
    let machine_total = share(machine).max(user + kernel).min(1.0);
    Some((user as f32, kernel as f32, machine_total as f32))
}

/// The machine's physical memory, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Memory {
    /// `MemTotal`.
    pub total: u64,
    /// `MemTotal - MemAvailable` (`MemFree` where the kernel does not say
    /// what is available), as JDK 25 counts it: the page cache, which the
    /// kernel gives back on demand, is not in use. (JDK 17 counted
    /// `MemTotal - MemFree`, which calls a machine full of cache full.)
    pub used: u64,
}

/// Reads `/proc/meminfo`; `None` without `MemTotal`.
pub fn parse_meminfo(text: &str) -> Option<Memory> {
    let kib = |name: &str| {
        text.lines().find_map(|line| {
            let value = line.strip_prefix(name)?.strip_prefix(':')?;
            let number = value.split_whitespace().next()?.parse::<u64>().ok()?;
            Some(number.saturating_mul(1024))
        })
    };
    let total = kib("MemTotal")?;
    let available = kib("MemAvailable").or_else(|| kib("MemFree")).unwrap_or(0);
    Some(Memory {
        total,
        used: total.saturating_sub(available),
    })
}

fn read_cpu_ticks() -> Option<CpuTicks> {
    Some(CpuTicks {
        machine: parse_stat(&std::fs::read_to_string("/proc/stat").ok()?)?,
        process: parse_self_stat(&std::fs::read_to_string("/proc/self/stat").ok()?)?,
    })
}

/// Why the JVM shut down, as the JDK says it, from the name of the thread
/// that posted VMDeath: the launcher's `DestroyJavaVM` thread once the
/// last non-daemon thread ended; otherwise the thread that called
/// `System.exit` (or `Runtime.halt`). A crash posts no VMDeath.
pub fn shutdown_reason(thread_name: &str) -> &'static str {
    if thread_name == "DestroyJavaVM" {
        "No remaining non-daemon Java threads"
    } else {
        "Shutdown requested from Java"
    }
}

/// The JVM shutting down, as the thread that posted VMDeath saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShutdownRecord {
    /// A sample record ([`crate::record::SampleRecord`]) of no object: the
    /// thread's key, when, and its stack.
    pub record: Vec<u8>,
    /// [`shutdown_reason`].
    pub reason: &'static str,
}

/// The environment's event types and what the writer keeps between its
/// events: the writer holds one ([`crate::writer::Writer`]).
#[derive(Debug)]
pub struct Environment {
    flag_types: FlagTypes,
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
    /// Whether the environment's variables are written.
    with_variables: bool,
    /// Read once: the JVM's properties at its start do not change.
    properties: Option<Vec<(String, String)>>,
    /// [`FLAGS`]' values, read once, at the recording's start: a read
    /// makes Java objects, and a chunk may end because the heap is full
    /// (each failed allocation would cost the JVM a full collection). A
    /// manageable flag set later (`jcmd VM.set_flag`) keeps its first value
    /// here.
    flags: Option<Vec<Option<VmFlag>>>,
    /// The CPU time at the last `jdk.CPULoad` (or the start).
    last_ticks: Option<CpuTicks>,
}

impl Environment {
    /// Registers the event types with `recording`; `with_variables`: the
    /// process's environment variables are written.
    pub fn register<S: Sink>(
        recording: &mut Recording<S>,
        with_variables: bool,
    ) -> Result<Self, jfr_writer::Error> {
        let flag_types = FlagTypes::register(recording)?;
        Ok(Self {
            cpu_information: recording.register(events::cpu_information())?,
            cpu_load: recording.register(events::cpu_load())?,
            physical_memory: recording.register(events::physical_memory())?,
            boolean_flag: recording.register(events::boolean_flag(&flag_types))?,
            int_flag: recording.register(events::int_flag(&flag_types))?,
            unsigned_long_flag: recording.register(events::unsigned_long_flag(&flag_types))?,
            string_flag: recording.register(events::string_flag(&flag_types))?,
            system_property: recording.register(events::initial_system_property())?,
            environment_variable: recording.register(events::initial_environment_variable())?,
            shutdown: recording.register(events::shutdown())?,
            flag_types,
            with_variables,
            properties: None,
            flags: None,
            last_ticks: None,
        })
    }

    /// The `jdk.Shutdown` event type.
    pub fn shutdown_type(&self) -> &EventType {
        &self.shutdown
    }

    /// What the recording's `jdk.ActiveSetting` events say of these event
    /// types: (the event type's id, the setting, its value). The load and
    /// memory are written at each flush, every `flush_millis`.
    pub fn settings(&self, flush_millis: i64) -> Vec<(i64, &'static str, String)> {
        use jfr_format::names::setting::{ENABLED, PERIOD, STACK_TRACE};
        let id = |event_type: &EventType| event_type.id().get() as i64;
        let flush = format!("{flush_millis} ms");
        let begin_chunk = "beginChunk".to_owned();
        let mut settings = vec![
            (id(&self.cpu_load), PERIOD, flush.clone()),
            (id(&self.physical_memory), PERIOD, flush),
            (id(&self.shutdown), STACK_TRACE, "true".to_owned()),
        ];
        for event_type in [
            &self.cpu_information,
            &self.boolean_flag,
            &self.int_flag,
            &self.unsigned_long_flag,
            &self.string_flag,
            &self.system_property,
            &self.environment_variable,
        ] {
            settings.push((id(event_type), PERIOD, begin_chunk.clone()));
        }
        for event_type in [
            &self.cpu_information,
            &self.cpu_load,
            &self.physical_memory,
            &self.boolean_flag,
            &self.int_flag,
            &self.unsigned_long_flag,
            &self.string_flag,
            &self.system_property,
            &self.shutdown,
        ] {
            settings.push((id(event_type), ENABLED, "true".to_owned()));
        }
        settings.push((
            id(&self.environment_variable),
            ENABLED,
            self.with_variables.to_string(),
        ));
        settings
    }

    /// At the recording's start: takes the CPU time the first
    /// `jdk.CPULoad` is measured from, and writes the chunk's start events
    /// ([`Environment::at_chunk_start`]).
    pub fn begin<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        vm: &mut impl EnvironmentVm,
    ) -> Result<(), jfr_writer::Error> {
        self.last_ticks = read_cpu_ticks();
        self.at_chunk_start(recording, vm)
    }

    /// At each chunk's start: the processors, the memory, the flags, the
    /// system properties and the environment's variables.
    pub fn at_chunk_start<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        vm: &mut impl EnvironmentVm,
    ) -> Result<(), jfr_writer::Error> {
        let now = recording.clock().now();
        if let Ok(text) = std::fs::read_to_string("/proc/cpuinfo") {
            let cpu = parse_cpuinfo(&text);
            CpuInformation {
                start_time: now,
                cpu: Some(&cpu.cpu),
                description: Some(&cpu.description),
                sockets: saturate(cpu.sockets),
                cores: saturate(cpu.cores),
                hw_threads: saturate(cpu.hw_threads),
            }
            .write(recording, &self.cpu_information)?;
        }
        self.write_memory(recording)?;
        self.write_flags(recording, vm)?;
        let properties = self
            .properties
            .get_or_insert_with(|| vm.system_properties());
        for (key, value) in properties.iter() {
            if key == BOOT_CLASS_PATH_APPEND {
                continue;
            }
            InitialSystemProperty {
                start_time: now,
                key: Some(key),
                value: Some(value),
            }
            .write(recording, &self.system_property)?;
        }
        if self.with_variables {
            for (key, value) in std::env::vars_os() {
                let (key, value) = (key.to_string_lossy(), value.to_string_lossy());
                InitialEnvironmentVariable {
                    start_time: now,
                    key: Some(&key),
                    value: Some(&value),
                }
                .write(recording, &self.environment_variable)?;
            }
        }
        Ok(())
    }

    /// At each flush: the CPU load since the last one, and the memory.
    pub fn at_flush<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
    ) -> Result<(), jfr_writer::Error> {
        if let Some(now) = read_cpu_ticks() {
            let before = self.last_ticks.replace(now);
            if let Some((jvm_user, jvm_system, machine_total)) =
                before.and_then(|before| cpu_load(&before, &now))
            {
                CpuLoad {
                    start_time: recording.clock().now(),
                    jvm_user,
                    jvm_system,
                    machine_total,
                }
                .write(recording, &self.cpu_load)?;
            }
        }
        self.write_memory(recording)
    }

    fn write_memory<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
    ) -> Result<(), jfr_writer::Error> {
        let Some(memory) = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|text| parse_meminfo(&text))
        else {
            return Ok(());
        };
        PhysicalMemory {
            start_time: recording.clock().now(),
            total_size: memory.total.min(i64::MAX as u64) as i64,
            used_size: memory.used.min(i64::MAX as u64) as i64,
        }
        .write(recording, &self.physical_memory)
    }

    fn write_flags<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        vm: &mut impl EnvironmentVm,
    ) -> Result<(), jfr_writer::Error> {
        let values = self.flags.get_or_insert_with(|| {
            let names: Vec<&str> = FLAGS.iter().map(|(name, _)| *name).collect();
            vm.vm_flags(&names)
        });
        let now = recording.clock().now();
        for (&(name, kind), flag) in FLAGS.iter().zip(values.iter()) {
            let Some(flag) = flag else {
                continue;
            };
            if SELF_UNLOCKING.contains(&name) && flag.value != "true" {
                continue;
            }
            let origin = Some(
                self.flag_types
                    .origin(recording, origin_name(&flag.origin))?,
            );
            let name = Some(name);
            let value = flag.value.as_str();
            match kind {
                FlagKind::Boolean => BooleanFlag {
                    start_time: now,
                    name,
                    value: value == "true",
                    origin,
                }
                .write(recording, &self.boolean_flag)?,
                FlagKind::Int => {
                    let Ok(value) = value.parse() else { continue };
                    IntFlag {
                        start_time: now,
                        name,
                        value,
                        origin,
                    }
                    .write(recording, &self.int_flag)?
                }
                FlagKind::UnsignedLong => {
                    // The management interface prints a `size_t` flag
                    // unsigned, but `-1` for some (MaxMetaspaceSize): the
                    // same bits either way.
                    let Some(value) = value
                        .parse::<u64>()
                        .map(|bits| bits as i64)
                        .ok()
                        .or_else(|| value.parse::<i64>().ok())
                    else {
                        continue;
                    };
                    UnsignedLongFlag {
                        start_time: now,
                        name,
                        value,
                        origin,
                    }
                    .write(recording, &self.unsigned_long_flag)?
                }
                // An unset string flag reads as empty: the JDK writes null.
                FlagKind::String => StringFlag {
                    start_time: now,
                    name,
                    value: (!value.is_empty()).then_some(value),
                    origin,
                }
                .write(recording, &self.string_flag)?,
            }
        }
        Ok(())
    }
}

fn saturate(count: u32) -> i32 {
    count.min(i32::MAX as u32) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two sockets of 2 cores, 2 threads each: 8 processors.
    fn two_sockets() -> String {
        let mut text = String::new();
        for processor in 0..8 {
            let (socket, core) = (processor / 4, (processor / 2) % 2);
            text.push_str(&format!(
                "processor\t: {processor}\nvendor_id\t: GenuineIntel\n\
                 model name\t: Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz\n\
                 physical id\t: {socket}\nsiblings\t: 4\ncore id\t\t: {core}\n\
                 cpu cores\t: 2\nflags\t\t: fpu vme de pse\n\n"
            ));
        }
        text
    }

    #[test]
    fn cpuinfo_counts_sockets_cores_and_threads() {
        let cpu = parse_cpuinfo(&two_sockets());
        assert_eq!((cpu.sockets, cpu.cores, cpu.hw_threads), (2, 4, 8));
        assert_eq!(
            cpu.description,
            "Brand: Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz, Vendor: GenuineIntel"
        );
        assert!(cpu.cpu.ends_with(" GenuineIntel"), "{}", cpu.cpu);
    }

    #[test]
    fn cpuinfo_without_topology_has_one_socket_of_every_processor() {
        // As some ARM and virtual machines give it.
        let text = "processor\t: 0\nBogoMIPS\t: 50.00\n\nprocessor\t: 1\nBogoMIPS\t: 50.00\n";
        let cpu = parse_cpuinfo(text);
        assert_eq!((cpu.sockets, cpu.cores, cpu.hw_threads), (1, 2, 2));
        assert_eq!(cpu.description, "Brand: unknown, Vendor: unknown");
    }

    #[test]
    fn the_stat_line_sums_as_hotspot_does() {
        let text = "cpu  100 20 30 400 50 6 7 8 9 10\ncpu0 1 2 3 4 5 6 7 8 9 10\nintr 1\n";
        assert_eq!(
            parse_stat(text),
            Some(MachineTicks {
                user: 120,
                kernel: 43,
                total: 100 + 20 + 30 + 400 + 50 + 6 + 7 + 8,
            })
        );
        assert_eq!(parse_stat("intr 1\n"), None);
    }

    #[test]
    fn the_process_times_come_after_a_name_with_spaces_and_parentheses() {
        let text = "4242 (java (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 567 0 0 20 0 \
                    30 0 100 1000 100\n";
        assert_eq!(
            parse_self_stat(text),
            Some(ProcessTicks {
                user: 1234,
                kernel: 567
            })
        );
        assert_eq!(parse_self_stat("4242 (java"), None);
    }

    fn ticks(user: u64, kernel: u64, total: u64, jvm_user: u64, jvm_kernel: u64) -> CpuTicks {
        CpuTicks {
            machine: MachineTicks {
                user,
                kernel,
                total,
            },
            process: ProcessTicks {
                user: jvm_user,
                kernel: jvm_kernel,
            },
        }
    }

    #[test]
    fn cpu_load_is_each_share_of_the_machine_time_elapsed() {
        let before = ticks(1000, 500, 10_000, 100, 50);
        // 200 ticks elapsed on all CPUs: the JVM used 50 + 10, the machine
        // 80 + 20.
        let after = ticks(1080, 520, 10_200, 150, 60);
        assert_eq!(cpu_load(&before, &after), Some((0.25, 0.05, 0.5)));
    }

    #[test]
    fn cpu_load_stays_within_zero_and_one() {
        let before = ticks(0, 0, 1000, 0, 0);
        // The process file read later than the machine's: the JVM seems to
        // have used more than elapsed, and more than the machine.
        let after = ticks(10, 0, 1010, 30, 10);
        let (user, kernel, total) = cpu_load(&before, &after).unwrap();
        assert_eq!((user, kernel, total), (0.75, 0.25, 1.0));
        // Counters that went back (a reading of another machine's file)
        // count as no time.
        let (user, kernel, total) = cpu_load(&after, &ticks(20, 5, 1100, 0, 0)).unwrap();
        assert_eq!((user, kernel), (0.0, 0.0));
        assert!((0.0..=1.0).contains(&total));
        assert_eq!(cpu_load(&before, &before), None);
    }

    #[test]
    fn used_memory_leaves_out_what_is_available() {
        let text = "MemTotal:       16000000 kB\nMemFree:         1000000 kB\n\
                    MemAvailable:    9000000 kB\n";
        assert_eq!(
            parse_meminfo(text),
            Some(Memory {
                total: 16_000_000 * 1024,
                used: 7_000_000 * 1024
            })
        );
        let old_kernel = "MemTotal: 2000 kB\nMemFree: 500 kB\n";
        assert_eq!(parse_meminfo(old_kernel).unwrap().used, 1500 * 1024);
        assert_eq!(parse_meminfo("MemFree: 500 kB\n"), None);
    }

    #[test]
    fn origins_and_reasons_are_the_jdks_words() {
        assert_eq!(origin_name("DEFAULT"), "Default");
        assert_eq!(origin_name("VM_CREATION"), "Command line");
        assert_eq!(origin_name("ERGONOMIC"), "Ergonomic");
        assert_eq!(origin_name("OTHER"), "Internal");
        assert_eq!(
            shutdown_reason("DestroyJavaVM"),
            "No remaining non-daemon Java threads"
        );
        assert_eq!(shutdown_reason("main"), "Shutdown requested from Java");
    }
}
