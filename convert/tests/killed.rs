//! A recording whose process dies at any moment is read, by the JDK and by
//! `heapsampler`, up to its last flush.
//!
//! Two ways in. A recording written through a sink that keeps a copy of
//! the output after each of its writes gives every state a kill can leave,
//! in order: each is read. And JVMs recording with the agent, under load,
//! are killed (SIGKILL) at random moments: at start, between flushes and
//! during them, at chunk ends, at `--max-size` rotations, at heap
//! exhaustions; each file is read by `jfr summary` and `heapsampler
//! summary`.

use std::cell::RefCell;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use heapsampler_test_support::{self as support, DEADLINE, Deadline};
use jfr_writer::events::{self, ObjectAllocationSample};
use jfr_writer::{
    EventTypeBuilder, FieldSpec, FieldType, FrameType, Options, Recording, Sink, StackFrame,
    StackTrace, Thread,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// A sink that keeps the output in memory and, after each write, a copy of
/// it: what a process killed right after that write leaves.
struct Journal {
    output: Vec<u8>,
    after_each_write: Rc<RefCell<Vec<Vec<u8>>>>,
}

impl Journal {
    fn written(&mut self) -> io::Result<()> {
        self.after_each_write.borrow_mut().push(self.output.clone());
        Ok(())
    }
}

impl Sink for Journal {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.output.extend_from_slice(bytes);
        self.written()
    }

    /// One write, as a file appends them.
    fn append_parts(&mut self, parts: &[&[u8]]) -> io::Result<()> {
        for part in parts {
            self.output.extend_from_slice(part);
        }
        self.written()
    }

    fn patch(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let at = offset as usize;
        self.output[at..at + bytes.len()].copy_from_slice(bytes);
        self.written()
    }

    fn ended_chunks_patchable_from(&self) -> Option<u64> {
        Some(0)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn end_chunk(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A recording of every kind of flush, through a [`Journal`]: a chunk's
/// first; ones of new stacks; one with a type registered since; one of a
/// single event of three bytes; one of nothing; chunk ends with events
/// written demotable, the previous ones demoted in place in the ended
/// chunk; the last. Every state its writes leave is read by the JDK and by
/// `heapsampler summary`, which finds no torn tail: what the JDK reads is
/// what the last flush before it wrote, or, during a flush, that or what it
/// writes, never less than before.
#[test]
fn a_recording_stopped_after_any_write_is_read_up_to_its_last_flush() {
    let dir = support::temp_dir("killed_after_any_write");
    let after_each_write = Rc::new(RefCell::new(Vec::new()));
    let journal = Journal {
        output: Vec::new(),
        after_each_write: Rc::clone(&after_each_write),
    };
    let options = Options {
        manual_chunk_ends: true,
        ..Options::default()
    };
    let mut recording = Recording::new(journal, options);
    let alloc = recording
        .register(events::object_allocation_sample())
        .unwrap();
    let twin = |name: &str| EventTypeBuilder::new(name).field(FieldSpec::new("n", FieldType::Long));
    let snapshot = recording.register(twin("test.Snapshot")).unwrap();
    let old_snapshot = recording.register(twin("test.OldSnapshot")).unwrap();
    let tick = recording
        .register(EventTypeBuilder::new("test.Tick"))
        .unwrap();
    let thread = recording.thread(Thread {
        os_name: "main".into(),
        os_thread_id: 1,
        java_name: "main".into(),
        java_thread_id: 1,
        group: None,
    });
    let class = support::class_of(&mut recording, "[J");
    let method = support::method_of(&mut recording, "Work", "run");
    // (writes so far, events written) after each flush.
    let mut flushed: Vec<(usize, u64)> = Vec::new();
    let mut stacks = 0;
    let mut samples = |recording: &mut Recording<Journal>, count: usize, new_stacks: usize| {
        for n in 0..count {
            if n < new_stacks {
                stacks += 1;
            }
            let trace = StackTrace {
                truncated: false,
                frames: vec![StackFrame {
                    method,
                    line_number: stacks,
                    bytecode_index: 0,
                    frame_type: FrameType::JitCompiled,
                }],
            };
            let stack_trace = recording.stack_trace(trace);
            ObjectAllocationSample {
                start_time: recording.clock().now(),
                event_thread: Some(thread),
                stack_trace: stack_trace.into(),
                object_class: Some(class),
                weight: 1024,
            }
            .write(recording, &alloc)
            .unwrap();
        }
    };
    let snapshots = |recording: &mut Recording<Journal>| {
        recording.begin_demotable(&snapshot, &old_snapshot).unwrap();
        for n in 0..10 {
            let at = recording.clock().now();
            recording.event(&snapshot, at).long(n).commit().unwrap();
        }
        recording.end_demotable().unwrap()
    };
    let flush = |recording: &mut Recording<Journal>, flushed: &mut Vec<(usize, u64)>| {
        recording.flush().unwrap();
        flushed.push((after_each_write.borrow().len(), recording.events_written()));
    };

    samples(&mut recording, 20, 5);
    flush(&mut recording, &mut flushed);
    samples(&mut recording, 50, 20);
    flush(&mut recording, &mut flushed);
    let later = recording
        .register(EventTypeBuilder::new("test.Later").field(FieldSpec::new("n", FieldType::Int)))
        .unwrap();
    for n in 0..5 {
        let at = recording.clock().now();
        recording.event(&later, at).int(n).commit().unwrap();
    }
    samples(&mut recording, 5, 1);
    flush(&mut recording, &mut flushed);
    let at = recording.clock().now();
    recording.event(&tick, at).commit().unwrap();
    flush(&mut recording, &mut flushed);
    flush(&mut recording, &mut flushed);
    let first_chunk_end = snapshots(&mut recording);
    recording.end_chunk().unwrap();
    flushed.push((after_each_write.borrow().len(), recording.events_written()));
    samples(&mut recording, 10, 3);
    flush(&mut recording, &mut flushed);
    let _second_chunk_end = snapshots(&mut recording);
    recording.end_chunk().unwrap();
    flushed.push((after_each_write.borrow().len(), recording.events_written()));
    assert_eq!(recording.demote(first_chunk_end).unwrap(), 10);
    flushed.push((after_each_write.borrow().len(), recording.events_written()));
    samples(&mut recording, 10, 2);
    let events = recording.events_written();
    recording.finish().unwrap();
    flushed.push((after_each_write.borrow().len(), events));

    let states = after_each_write.borrow();
    let paths: Vec<PathBuf> = states
        .iter()
        .enumerate()
        .map(|(write, bytes)| {
            let path = dir.join(format!("after-write-{write:03}.jfr"));
            std::fs::write(&path, bytes).unwrap();
            path
        })
        .collect();
    let read = support::count_events_each(&paths);
    let mut before = 0;
    let mut flushes = flushed.iter().peekable();
    for (write, (path, count)) in paths.iter().zip(read).enumerate() {
        let count =
            count.unwrap_or_else(|why| panic!("the JDK cannot read {}: {why}", path.display()));
        // The flush this write is part of, and the events before it.
        while flushes.peek().is_some_and(|&&(writes, _)| writes <= write) {
            before = flushes.next().unwrap().1;
        }
        let (end, after) = flushes.peek().map_or((states.len(), before), |&&next| next);
        assert!(
            (before..=after).contains(&count),
            "after write {write} of {}: {count} events, not from {before} to {after}",
            states.len()
        );
        if write + 1 == end {
            assert_eq!(count, after, "after write {write}, the last of a flush");
        }
        let output = support::heapsampler(["summary", path.to_str().unwrap()]);
        let stderr = support::text(&output.stderr);
        assert!(
            output.status.success() && stderr.is_empty(),
            "heapsampler reads {}: {stderr}",
            path.display()
        );
    }
    assert!(states.len() > 30, "{} writes", states.len());
}

/// What a JVM that is killed runs: a workload and the options of its
/// recording, for a phase of a recording's life.
struct Phase {
    name: &'static str,
    /// `heapsampler record`'s options.
    options: &'static [&'static str],
    /// The JVM's options.
    jvm: &'static [&'static str],
    /// The workload (`testdata/workloads`) and its arguments.
    workload: &'static str,
    args: &'static [&'static str],
}

/// Heap exhaustions, again and again, each written and flushed while its
/// thread waits, and at a chunk's end with the old objects; chunk ends
/// every second and at 1 MiB; `--max-size` rotations (copy, rename).
const PHASES: [Phase; 3] = [
    Phase {
        name: "exhaustions",
        options: &["--interval", "64k", "--chunk-age", "1s"],
        jvm: &["-Xmx64m"],
        workload: "OutOfMemory",
        args: &["again", "600"],
    },
    Phase {
        name: "chunk-ends",
        options: &[
            "--interval",
            "16k",
            "--chunk-age",
            "1s",
            "--chunk-size",
            "1m",
        ],
        jvm: &[],
        workload: "AllocationMix",
        args: &["600", "2"],
    },
    Phase {
        name: "rotations",
        options: &["--interval", "16k", "--max-size", "1m"],
        jvm: &[],
        workload: "AllocationMix",
        args: &["600", "2"],
    },
];

/// How many JVMs are killed.
const KILLS: usize = 24;

/// The longest a JVM runs before its kill: its start and its first
/// flushes are in the range.
const LONGEST_RUN: Duration = Duration::from_millis(4000);

/// Keeps every core busy until dropped, so that the writer thread is
/// preempted between any two of its steps, as on a loaded machine.
struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Load {
    fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let threads = (0..cores)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut spin = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        spin = std::hint::black_box(spin.wrapping_add(1));
                    }
                })
            })
            .collect();
        Self { stop, threads }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// Runs `phase` recording into `path` and kills it (SIGKILL, with the
/// `heapsampler record` that started it) after `run`.
fn run_and_kill(phase: &Phase, path: &Path, run: Duration) {
    let mut command = support::heapsampler_command(["record", "-o"]);
    command
        .arg(path)
        .args(phase.options)
        .arg("--agent")
        .arg(support::agent_library())
        .args(["--", "java"])
        .args(phase.jvm)
        .arg("-cp")
        .arg(support::compiled_workload(phase.workload))
        .arg(phase.workload)
        .args(phase.args)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let running = command.spawn_within(DEADLINE);
    std::thread::sleep(run);
    // Dropping it kills its process group with SIGKILL.
    drop(running);
}

/// JVMs recording with the agent, on a machine whose cores are all busy,
/// are killed at random moments of random phases (seeded: the seed is
/// printed, and `HEAPSAMPLER_KILL_SEED` sets it). Every file left is read
/// by `jfr summary` and `heapsampler summary`, with no torn tail. A JVM
/// killed before its agent made the file leaves none, which is allowed:
/// it recorded nothing.
#[test]
fn jvms_killed_at_random_moments_leave_recordings_the_jdk_reads() {
    let seed = std::env::var("HEAPSAMPLER_KILL_SEED")
        .ok()
        .and_then(|seed| seed.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    println!("HEAPSAMPLER_KILL_SEED={seed}");
    let mut random = SmallRng::seed_from_u64(seed);
    let dir = support::temp_dir("killed_at_random");
    for phase in &PHASES {
        support::compiled_workload(phase.workload);
    }
    let started = Instant::now();
    let load = Load::start();
    let mut killed = Vec::new();
    for kill in 0..KILLS {
        let phase = &PHASES[random.random_range(0..PHASES.len())];
        let run = random.random_range(Duration::ZERO..LONGEST_RUN);
        let path = dir.join(format!("{kill:02}-{}.jfr", phase.name));
        run_and_kill(phase, &path, run);
        killed.push((path, phase.name, run));
    }
    drop(load);
    let mut files = 0;
    for (path, phase, run) in &killed {
        if !path.exists() {
            continue;
        }
        files += 1;
        let what = format!(
            "{} ({phase}, killed after {run:?}; HEAPSAMPLER_KILL_SEED={seed})",
            path.display()
        );
        let jdk = Command::new("jfr")
            .arg("summary")
            .arg(path)
            .output_in_time();
        assert!(
            jdk.status.success(),
            "jfr summary cannot read {what}: {}{}",
            support::text(&jdk.stdout),
            support::text(&jdk.stderr)
        );
        let ours = support::heapsampler(["summary", path.to_str().unwrap()]);
        let stderr = support::text(&ours.stderr);
        assert!(
            ours.status.success() && stderr.is_empty(),
            "heapsampler summary of {what}: {stderr}"
        );
    }
    assert!(files > 0, "no JVM lived to make its file (seed {seed})");
    println!(
        "{KILLS} kills, {files} files, all read ({:?})",
        started.elapsed()
    );
}
