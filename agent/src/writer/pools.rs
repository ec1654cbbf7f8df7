//! The writer's pools: what the allocation callback left opaque (methods,
//! classes, threads, stacks), resolved through the [`Vm`] once each and
//! pooled in the recording, with the caches that find them again.
//!
//! Invariants:
//! - Every cached value is one the recording's pools hold: at a chunk's
//!   end [`Pools::retain_held`] drops from the caches what the recording
//!   dropped, so a value seen again is resolved again, under a new key.
//! - A stack is pooled once per fingerprint, and marked once per chunk:
//!   the first sample of a stack in a chunk marks it, the others write it
//!   without a look-up.
//! - The bootstrap loader is pooled once, at the first class it defined.

use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap;

use jfr_format::names::class_loader;
use jfr_writer::{
    Class, ClassLoader, ClassLoaderRef, ClassRef, FrameType, Marked, Method, MethodRef, Recording,
    Sink, StackFrame, StackTrace, StackTraceRef, Thread, ThreadRef,
};

use super::{ClassInfo, Loader, Vm};
use crate::fingerprints::FingerprintMap;
use crate::record::{RawFrame, SampleView};
use crate::signature::internal_name;

/// A method's line number table, sorted by start so that a frame's line is
/// a binary search: recursive code makes a new stack of many frames at
/// almost every sample, each frame's line looked up.
#[derive(Debug)]
struct LineTable(Box<[(i64, i32)]>);

impl LineTable {
    /// The table of (first bytecode index, line) entries in any order.
    fn new(mut lines: Vec<(i64, i32)>) -> Self {
        // Stable: of two entries with one start, the later one wins.
        lines.sort_by_key(|&(start, _)| start);
        Self(lines.into_boxed_slice())
    }

    /// The line of a bytecode index: the entry with the largest start at
    /// or before it; -1 when there is none (or no table).
    fn line(&self, location: i64) -> i32 {
        let after = self.0.partition_point(|&(start, _)| start <= location);
        after.checked_sub(1).map_or(-1, |at| self.0[at].1)
    }
}

/// The frames resolved lately, by method and location: recursion makes
/// new stacks out of a few call sites, so a new stack's frames are mostly
/// frames seen before, and a look-up here is one probe of a table in
/// cache, where resolving a frame probes the method map and searches the
/// method's line table. Direct-mapped: a frame takes the place of the one
/// it shares its place with. Emptied when pooled methods are dropped, since
/// a frame holds its method's ref.
struct FrameCache {
    /// `FRAME_CACHE_PLACES` places.
    places: Box<[Option<ResolvedFrame>]>,
}

/// A frame as the ring holds it, and what it resolved to.
#[derive(Debug, Clone, Copy)]
struct ResolvedFrame {
    raw: RawFrame,
    /// `None`: left out, a hidden frame.
    frame: Option<StackFrame>,
}

/// A power of two; 16 KiB of places.
const FRAME_CACHE_PLACES: usize = 512;

impl FrameCache {
    fn new() -> Self {
        Self {
            places: vec![None; FRAME_CACHE_PLACES].into_boxed_slice(),
        }
    }

    fn place(raw: RawFrame) -> usize {
        // Fibonacci hashing of both words: method ids are aligned
        // pointers, locations small.
        let mixed = (raw.method ^ (raw.location as u64).rotate_left(32))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (mixed >> (64 - FRAME_CACHE_PLACES.trailing_zeros())) as usize
    }

    /// What `raw` resolved to, if it is here.
    #[inline]
    fn get(&self, raw: RawFrame) -> Option<Option<StackFrame>> {
        match self.places[Self::place(raw)] {
            Some(held) if held.raw == raw => Some(held.frame),
            _ => None,
        }
    }

    fn insert(&mut self, raw: RawFrame, frame: Option<StackFrame>) {
        self.places[Self::place(raw)] = Some(ResolvedFrame { raw, frame });
    }

    fn clear(&mut self) {
        self.places.fill(None);
    }
}

/// A resolved method: its pooled ref, line table, whether it is native,
/// and whether its class is hidden.
#[derive(Debug)]
pub(super) struct ResolvedMethod {
    method: MethodRef,
    lines: LineTable,
    native: bool,
    hidden: bool,
}

/// A class as the writer pooled it.
#[derive(Debug, Clone, Copy)]
pub(super) struct PooledClass {
    pub(super) class: ClassRef,
    /// Whether it is an array class, whose objects have a length.
    pub(super) array: bool,
}

/// The pooled values the writer resolved, and the caches that find them.
pub(super) struct Pools {
    // Fx-hashed: the keys are the JVM's and the agent's own ids, not
    // chosen by an attacker, and a look-up per frame must be cheap.
    methods: FxHashMap<u64, Option<ResolvedMethod>>,
    /// Frames resolved lately ([`FrameCache`]).
    frames: FrameCache,
    classes: FxHashMap<u64, PooledClass>,
    threads: FxHashMap<u64, ThreadRef>,
    /// Stack fingerprint ([`SampleView::stack_fingerprint`]) -> its pooled
    /// stack trace, with the receipt of its latest mark: the first sample
    /// of a stack in a chunk marks it, and the others write it without a
    /// look-up.
    stacks: FingerprintMap<Marked<StackTraceRef>>,
    /// Where a new stack's frames are gathered (see [`Pools::stack`]).
    trace: StackTrace,
    /// Whether frames of hidden classes are kept.
    hidden_frames: bool,
    /// The bootstrap loader, pooled at the first class it defined.
    boot_loader: Option<ClassLoaderRef>,
}

impl Pools {
    /// Empty pools; frames of hidden classes kept if `hidden_frames`.
    pub(super) fn new(hidden_frames: bool) -> Self {
        Self {
            methods: FxHashMap::default(),
            frames: FrameCache::new(),
            classes: FxHashMap::default(),
            threads: FxHashMap::default(),
            stacks: FingerprintMap::new(),
            trace: StackTrace::default(),
            hidden_frames,
            boot_loader: None,
        }
    }

    /// Starts the look-ups of stacks with these fingerprints.
    pub(super) fn prefetch_stacks(&self, fingerprints: impl Iterator<Item = u128>) {
        self.stacks.prefetch(fingerprints);
    }

    /// Drops from the caches what the recording no longer holds.
    pub(super) fn retain_held<S: Sink>(&mut self, recording: &Recording<S>) {
        // A method the VM could not describe is asked again.
        self.methods
            .retain(|_, m| m.as_ref().is_some_and(|m| recording.holds(m.method)));
        self.frames.clear();
        self.classes.retain(|_, c| recording.holds(c.class));
        self.threads.retain(|_, &mut t| recording.holds(t));
        self.stacks.retain(|s| recording.holds(s.reference()));
        if self.boot_loader.is_some_and(|b| !recording.holds(b)) {
            self.boot_loader = None;
        }
        shrink(&mut self.methods);
        shrink(&mut self.classes);
        shrink(&mut self.threads);
    }

    /// Pools a class described by `info`, with its loader ([`class_named`]).
    pub(super) fn class_named<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        info: &ClassInfo,
    ) -> ClassRef {
        class_named(recording, &mut self.boot_loader, info)
    }

    /// The key of the pooled class `class`, if the pools hold it: a search
    /// of every class, for the rare reader (a leak suspect's line).
    pub(super) fn class_key(&self, class: ClassRef) -> Option<u64> {
        self.classes
            .iter()
            .find(|(_, pooled)| pooled.class == class)
            .map(|(&key, _)| key)
    }

    /// The pooled thread of key `key`.
    pub(super) fn thread<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        vm: &mut impl Vm,
        key: u64,
    ) -> ThreadRef {
        if let Some(&thread) = self.threads.get(&key) {
            return thread;
        }
        let info = vm.thread(key);
        let thread = recording.thread(Thread {
            os_name: info.java_name.clone(),
            os_thread_id: info.os_thread_id,
            java_name: info.java_name,
            java_thread_id: info.java_thread_id,
            group: None,
        });
        self.threads.insert(key, thread);
        thread
    }

    /// The pooled class of key `key`.
    pub(super) fn class<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        vm: &mut impl Vm,
        key: u64,
    ) -> PooledClass {
        if let Some(&class) = self.classes.get(&key) {
            return class;
        }
        let class = match vm.class(key) {
            Some(info) => PooledClass {
                class: class_named(recording, &mut self.boot_loader, &info),
                array: info.signature.starts_with('['),
            },
            // Unloaded before the writer saw it: named as a frame of an
            // unloaded class is, not left null.
            None => PooledClass {
                class: self.unloaded_class(recording),
                array: false,
            },
        };
        self.classes.insert(key, class);
        class
    }

    /// The pooled frame of a raw one, its method resolved once per method;
    /// `None` for a frame of a hidden class when those are left out.
    fn frame<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        vm: &mut impl Vm,
        raw: RawFrame,
    ) -> Option<StackFrame> {
        let resolved = match self.methods.entry(raw.method) {
            Entry::Occupied(known) => known.into_mut(),
            Entry::Vacant(new) => new.insert(resolve_method(
                recording,
                &mut self.boot_loader,
                vm,
                raw.method,
            )),
        };
        if !self.hidden_frames && resolved.as_ref().is_some_and(|m| m.hidden) {
            return None;
        }
        let known = resolved.as_ref().map(|m| {
            (
                m.method,
                m.lines.line(raw.location),
                // JVMTI does not say whether a frame is interpreted,
                // compiled or inlined.
                if m.native {
                    FrameType::Native
                } else {
                    FrameType::Unknown
                },
            )
        });
        // The method's class is gone: keep the frame, say so.
        let (method, line, frame_type) =
            known.unwrap_or_else(|| (self.unknown_method(recording), -1, FrameType::Unknown));
        Some(StackFrame {
            method,
            line_number: line,
            bytecode_index: raw.location.clamp(-1, i32::MAX as i64) as i32,
            frame_type,
        })
    }

    /// The stack trace of a record whose stack has fingerprint `key`,
    /// added if new, with the receipt of its mark in this chunk.
    pub(super) fn stack<S: Sink>(
        &mut self,
        recording: &mut Recording<S>,
        vm: &mut impl Vm,
        view: &SampleView,
        key: u128,
    ) -> Marked<StackTraceRef> {
        if let Some(stack) = self.stacks.get_mut(key) {
            if recording.is_marked(*stack) {
                return *stack;
            }
            // Held: `stacks` keeps only the stacks the recording holds.
            if let Some(marked) = recording.mark_stack_trace(stack.reference()) {
                *stack = marked;
                return marked;
            }
        }
        // Built in one `StackTrace` kept for the purpose: in recursive code
        // almost every sample's stack is new.
        let mut trace = std::mem::take(&mut self.trace);
        trace.truncated = view.header.truncated;
        trace.frames.clear();
        // Frames of hidden classes left out may leave no frame at all: the
        // sample still gets its (empty) stack trace.
        for raw in view.frames() {
            let resolved = self.frames.get(raw).unwrap_or_else(|| {
                let resolved = self.frame(recording, vm, raw);
                self.frames.insert(raw, resolved);
                resolved
            });
            if let Some(frame) = resolved {
                trace.frames.push(frame);
            }
        }
        // Added, not interned: `stacks` asks the recording once per stack
        // it holds, so the recording's own look-up would find nothing.
        let stack = recording.add_stack_trace(&trace);
        self.trace = trace;
        self.stacks.insert(key, stack);
        stack
    }

    /// The class shown for a class, or a frame's, unloaded before the
    /// writer could resolve it.
    fn unloaded_class<S: Sink>(&mut self, recording: &mut Recording<S>) -> ClassRef {
        let unloaded = ClassInfo {
            signature: "Lunknown/UnloadedClass;".to_owned(),
            hidden: false,
            loader: Loader::Unknown,
        };
        class_named(recording, &mut self.boot_loader, &unloaded)
    }

    /// The method shown for a frame whose class was unloaded before the
    /// writer could resolve it.
    fn unknown_method<S: Sink>(&mut self, recording: &mut Recording<S>) -> MethodRef {
        let class = self.unloaded_class(recording);
        let name = recording.symbol("unknownMethod");
        let descriptor = recording.symbol("()V");
        recording.method(Method {
            class,
            name,
            descriptor,
            modifiers: 0,
            hidden: false,
        })
    }
}

/// Gives a map's memory back after a large drop.
pub(super) fn shrink<K: std::hash::Hash + Eq, V>(map: &mut FxHashMap<K, V>) {
    if map.capacity() > 64 && map.len() < map.capacity() / 4 {
        map.shrink_to(map.len() * 2);
    }
}

/// The bootstrap loader as the JDK's recordings write it: named
/// "bootstrap", with no class of its own (HotSpot's `jfrTypeSet.cpp`
/// writes the boot loader's data so). Pooled once: the pools write it in
/// every chunk whose classes refer to it.
fn boot_loader<S: Sink>(
    recording: &mut Recording<S>,
    pooled: &mut Option<ClassLoaderRef>,
) -> ClassLoaderRef {
    *pooled.get_or_insert_with(|| {
        let name = recording.symbol(class_loader::BOOTSTRAP);
        recording.class_loader(ClassLoader {
            class: None,
            name: Some(name),
        })
    })
}

/// Pools a class with its loader, as the JDK's recordings write them: the
/// bootstrap loader as [`boot_loader`], any other with its class and name
/// (`app`, of class `jdk/internal/loader/ClassLoaders$AppClassLoader`).
/// The JDK's `jfr view` takes a frame for the application's
/// (`stackTrace.topApplicationFrame`, which its `memory-leaks-by-site`
/// groups by) only if its class has a loader not named `bootstrap`
/// (`jdk.jfr.internal.query.FieldBuilder.topApplicationFrame`): a class
/// with no loader is no application's. Loaders of one class and name are
/// one value.
pub(super) fn class_named<S: Sink>(
    recording: &mut Recording<S>,
    pooled_boot_loader: &mut Option<ClassLoaderRef>,
    info: &ClassInfo,
) -> ClassRef {
    let class_loader = match &info.loader {
        Loader::Boot => Some(boot_loader(recording, pooled_boot_loader)),
        Loader::Object { class, name } => {
            let class = class
                .as_deref()
                .map(|class| class_named(recording, pooled_boot_loader, class));
            let name = name.as_deref().map(|name| recording.symbol(name));
            Some(recording.class_loader(ClassLoader { class, name }))
        }
        Loader::Unknown => None,
    };
    let name = recording.symbol(internal_name(&info.signature));
    recording.class(Class {
        class_loader,
        name,
        package: None,
        modifiers: 0,
        hidden: info.hidden,
    })
}

/// Asks the VM for a method and pools it; `None` if its class is gone. A
/// method of a hidden class is marked hidden, as the JDK marks the methods
/// it hides.
fn resolve_method<S: Sink>(
    recording: &mut Recording<S>,
    pooled_boot_loader: &mut Option<ClassLoaderRef>,
    vm: &mut impl Vm,
    id: u64,
) -> Option<ResolvedMethod> {
    let info = vm.method(id)?;
    let class = class_named(recording, pooled_boot_loader, &info.class);
    let name = recording.symbol(&info.name);
    let descriptor = recording.symbol(&info.descriptor);
    Some(ResolvedMethod {
        method: recording.method(Method {
            class,
            name,
            descriptor,
            modifiers: info.modifiers,
            hidden: info.class.hidden,
        }),
        lines: LineTable::new(info.lines),
        native: info.native,
        hidden: info.class.hidden,
    })
}

#[cfg(test)]
mod tests {
    use super::LineTable;

    /// The definition: the entry with the largest start at or before the
    /// location, the last such entry on a tie; -1 when there is none.
    fn line_by_scan(lines: &[(i64, i32)], location: i64) -> i32 {
        lines
            .iter()
            .filter(|(start, _)| *start <= location)
            .max_by_key(|(start, _)| *start)
            .map_or(-1, |&(_, line)| line)
    }

    #[test]
    fn a_line_is_the_one_of_the_last_entry_starting_at_or_before_the_index() {
        let tables: [&[(i64, i32)]; 5] = [
            &[],
            &[(0, 10)],
            // Out of order, as JVMTI may give them.
            &[(9, 12), (0, 10), (5, 11)],
            // Two entries for one index (a line split by the compiler).
            &[(0, 1), (4, 2), (4, 3), (8, 4), (2, 5)],
            // No entry at index 0.
            &[(3, 30), (7, 31)],
        ];
        for lines in tables {
            let table = LineTable::new(lines.to_vec());
            for location in -2..14 {
                assert_eq!(
                    table.line(location),
                    line_by_scan(lines, location),
                    "{lines:?} at {location}"
                );
            }
        }
    }
}
