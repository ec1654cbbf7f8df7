//! The allocation callback's logic, in safe code over a [`CallbackVm`]:
//! what `SampledObjectAlloc` makes of a sample ([`sample`]) and a Java
//! heap exhaustion of its thread ([`heap_exhausted`]), and the session's
//! [`Keys`] for the threads and classes sampled, which the writer thread
//! resolves ([`Keys::class_ref`], [`Keys::resolve_thread`]) and forgets
//! ([`Keys::forget_gone`]).
//!
//! A record names its thread and its class by key, a number the writer
//! resolves once: the key is a JVMTI tag set on the `Thread` or `Class`
//! object at its first sample, with the session's id in its upper 32 bits
//! since tags outlive a session. `GetTag` takes the tag map's lock, so the
//! callback asks it only where it must:
//! - a platform thread's key is cached in the OS thread's [`Local`] (a
//!   virtual thread shares its carrier's, so it is asked each time);
//! - a class's key is guessed from the class last allocated at the sample's
//!   site, the top frame's method and location: the thread's own guess
//!   (`SiteClasses`), then any thread's ([`Keys`]), each checked with JNI
//!   `IsSameObject` against the session's weak reference to the class.
//!
//! Invariants:
//! - A key names one object of one session: keys come from counters that
//!   only grow, a tag of another session is not taken for a key, and a
//!   [`Local`]'s caches are stamped with the session they were made in.
//! - A class reference the callbacks can reach (in a `SiteClasses` or in
//!   the session's tables) is never deleted while a callback might use it.
//!   The writer *retires* the reference of a class that is gone: it removes
//!   it from the session's tables, moves the class epoch, and deletes it
//!   only at a moment when no callback runs
//!   ([`KeysVm::no_callback_running`]). Callbacks that ran before that
//!   moment are done with it; those that start after it see the new epoch
//!   and empty their `SiteClasses` before they look in it.
//! - The callback allocates nothing on the Java heap and waits for the
//!   writer only when the ring is full (see [`crate::session`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use heapsampler_core::liveness::TrackingDraw;
use heapsampler_core::options::Mode;
use heapsampler_core::ring::PushError;
use parking_lot::Mutex;

use crate::environment::{ShutdownRecord, shutdown_reason};
use crate::record::{MAX_RECORD_LEN, RawFrame, SampleHeader, SampleRecord, Tracking};
use crate::session::{Session, say};
use crate::site_classes::SiteClasses;
use crate::writer::Exhaustion;

/// What the allocation callback asks of the JVM, on the allocating thread:
/// JVMTI, and JNI through the callback's environment. Weak references are
/// JNI weak global references as integers, 0 for none.
pub trait CallbackVm {
    /// A reference to a Java object the callback was handed or made (a
    /// thread, a class, the sampled object), valid during the callback.
    type Object: Copy;
    /// A stack frame as the JVM writes it.
    type Frame: Copy + Default + Into<RawFrame>;

    /// Writes the current thread's stack into `frames`, top first, as far
    /// as they go; returns how many were written (0 if it cannot tell).
    fn current_stack(&mut self, frames: &mut [Self::Frame]) -> usize;
    /// The current thread, a reference to delete with
    /// [`CallbackVm::delete_local_ref`]; `None` if it cannot tell.
    fn current_thread(&mut self) -> Option<Self::Object>;
    /// Deletes a reference [`CallbackVm::current_thread`] made.
    fn delete_local_ref(&mut self, object: Self::Object);
    /// The object's JVMTI tag, 0 if none.
    fn tag(&mut self, object: Self::Object) -> u64;
    /// Sets the object's JVMTI tag.
    fn set_tag(&mut self, object: Self::Object, tag: u64);
    /// Whether `thread` is a virtual thread.
    fn is_virtual_thread(&mut self, thread: Self::Object) -> bool;
    /// The thread's name, empty if it cannot tell.
    fn thread_name(&mut self, thread: Self::Object) -> String;
    /// The id of the OS thread the callback runs on.
    fn os_thread_id(&mut self) -> i64;
    /// A new weak reference to the object, 0 if none could be made.
    fn new_weak_ref(&mut self, object: Self::Object) -> u64;
    /// Whether the weak reference `weak` (not deleted) is to `object`:
    /// false for 0 and for a cleared reference.
    fn is_same_object(&mut self, object: Self::Object, weak: u64) -> bool;
    /// Deletes a weak reference; nothing for 0.
    fn delete_weak_ref(&mut self, weak: u64);
}

/// What [`Keys`] asks of the JVM on the writer thread, for the weak
/// references the callbacks made.
pub trait KeysVm {
    /// Whether the weak reference's object was collected (a thread) or
    /// unloaded (a class).
    fn is_cleared(&mut self, weak: u64) -> bool;
    /// Deletes a weak reference; nothing for 0.
    fn delete_weak_ref(&mut self, weak: u64);
    /// Whether no allocation callback is running at this moment, and every
    /// callback that starts after it sees the class epoch as it is now
    /// (the moment orders memory as a lock does). Must not wait for the
    /// callbacks: one may be waiting for the writer to drain the ring.
    fn no_callback_running(&mut self) -> bool;
}

/// One sampled allocation, as the JVM reports it.
#[derive(Debug, Clone, Copy)]
pub struct Allocation<O> {
    /// The allocating thread.
    pub thread: O,
    /// The new object.
    pub object: O,
    /// Its class.
    pub class: O,
    /// Its size in bytes.
    pub size: i64,
}

/// Per-thread state of the allocation callback, one per OS thread.
#[derive(Debug, Default)]
pub struct Local<F> {
    /// Whether this is one of the agent's own threads (the writer): their
    /// allocations are never sampled, or a full ring would make the writer
    /// wait for itself.
    pub agent_thread: bool,
    frames: Vec<F>,
    record: Vec<u8>,
    /// The interval in force at this thread's previous sample, in session
    /// `interval_session` ([`Local::sampled_interval`]).
    interval: u64,
    interval_session: u64,
    /// The key of the platform thread this OS thread runs, in session
    /// `thread_session` (0: none yet). Valid as long as that thread is
    /// attached: a native thread that detaches and attaches again is a new
    /// `Thread`, so its start and end clear it ([`Local::forget_thread`]).
    thread_key: u64,
    thread_session: u64,
    /// The class each allocation site last allocated.
    site_classes: SiteClasses,
    /// Which of this thread's samples are tracked, when a share is
    /// ([`Session::tracking`]).
    tracking: TrackingDraw,
}

impl<F: Copy + Default> Local<F> {
    /// Forgets the cached thread key: a `Thread` starts or ends on this OS
    /// thread.
    pub fn forget_thread(&mut self) {
        self.thread_session = 0;
    }

    /// The interval a sample of this thread in session `session` was drawn
    /// with, the interval in force being `current`: the one in force at
    /// the thread's previous sample in the session (the current one for its
    /// first). HotSpot draws the distance to a thread's next sample right
    /// after a sample, so samples taken just after the rate limiter raised
    /// the interval were drawn with the old one, and would be over-weighted
    /// with the new one.
    #[inline]
    pub fn sampled_interval(&mut self, session: u64, current: u64) -> u64 {
        let drawn_with = if self.interval_session == session {
            self.interval
        } else {
            current
        };
        self.interval = current;
        self.interval_session = session;
        drawn_with
    }

    /// Makes the buffers fit stacks of `depth` frames, and one more to tell
    /// a truncated stack.
    #[inline]
    fn size_for(&mut self, depth: usize) {
        if self.frames.len() != depth + 1 {
            self.frames = vec![F::default(); depth + 1];
            self.record = Vec::with_capacity(MAX_RECORD_LEN);
        }
    }
}

/// What the callback learns of a thread the first time it samples it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenThread {
    /// The name then: a virtual thread may be gone before the writer looks.
    pub name: String,
    /// A weak reference, for the writer to ask the Java thread id.
    pub weak: u64,
    /// The OS thread running it (for a virtual thread, its carrier).
    pub os_thread_id: i64,
    /// Whether the writer has described it.
    pub resolved: bool,
}

/// The classes a session has keys for.
#[derive(Debug, Default)]
struct Classes {
    /// Class key -> weak reference to the class, until it is unloaded
    /// ([`Keys::forget_gone`]).
    weak: HashMap<u64, u64>,
    /// Allocation site -> the key of the class any thread last allocated
    /// there: a thread's first sample at a site checks it before asking
    /// `GetTag`. Emptied at each chunk's end ([`Keys::forget_gone`]), so
    /// that the sites of unloaded code do not pile up in a recording that
    /// runs for days.
    by_site: HashMap<(u64, i64), u64>,
}

impl Classes {
    /// The weak reference and key of the class last allocated at `site`.
    #[inline]
    fn at_site(&self, site: (u64, i64)) -> Option<(u64, u64)> {
        let key = *self.by_site.get(&site)?;
        Some((*self.weak.get(&key)?, key))
    }
}

/// One session's keys for threads and classes, and the weak references
/// behind them, shared by the callbacks and the writer thread.
#[derive(Debug)]
pub struct Keys {
    /// The session's id, the upper half of its tags: not 0, below 2^32.
    session: u64,
    next_thread: AtomicU64,
    next_class: AtomicU64,
    /// Threads seen, by key, until they are gone.
    threads: Mutex<HashMap<u64, SeenThread>>,
    classes: Mutex<Classes>,
    /// How many times the writer has retired class references.
    class_epoch: AtomicU64,
    /// Retired class references not deleted yet: a callback may be
    /// comparing a class with one. Taken by the writer thread only.
    retired: Mutex<Vec<u64>>,
}

/// How long the writer's end waits for a moment without callbacks to
/// delete the last class references, in tries a millisecond apart: a
/// callback stuck on a full ring can hold it off for good, and a few bytes
/// a class left undeleted beat a reference deleted under a callback.
const END_RELEASE_TRIES: usize = 1000;

impl Keys {
    /// The keys of session `session` (not 0, below 2^32).
    pub fn new(session: u64) -> Self {
        debug_assert!(session != 0 && session >> 32 == 0);
        Self {
            session,
            next_thread: AtomicU64::new(1),
            next_class: AtomicU64::new(1),
            threads: Mutex::new(HashMap::new()),
            classes: Mutex::new(Classes::default()),
            class_epoch: AtomicU64::new(0),
            retired: Mutex::new(Vec::new()),
        }
    }

    /// The weak reference to the class of key `key`, until it is unloaded.
    pub fn class_ref(&self, key: u64) -> Option<u64> {
        self.classes.lock().weak.get(&key).copied()
    }

    /// What the callback learned of the thread of key `key`, now marked
    /// resolved (to forget once it is gone); `None` for a key never given
    /// or forgotten.
    pub fn resolve_thread(&self, key: u64) -> Option<SeenThread> {
        let mut threads = self.threads.lock();
        let seen = threads.get_mut(&key)?;
        seen.resolved = true;
        Some(seen.clone())
    }

    /// The key of the thread whose JVMTI tag is `tag`, if the callback has
    /// sampled it in this session.
    pub fn sampled_thread(&self, tag: u64) -> Option<u64> {
        let key = tag & 0xffff_ffff;
        (tag >> 32 == self.session && self.threads.lock().contains_key(&key)).then_some(key)
    }

    /// Forgets the threads and classes that are gone: deletes the weak
    /// references of resolved threads that were collected, and retires
    /// those of classes unloaded. Their keys never come again. Called at
    /// each chunk's end.
    pub fn forget_gone(&self, vm: &mut impl KeysVm) {
        // The callback takes these locks for a new thread, and for a class
        // its own sites do not know. A thread gone before the writer
        // resolved it is kept until it is: its samples are still on their
        // way.
        self.threads.lock().retain(|_, seen| {
            let gone = seen.resolved && vm.is_cleared(seen.weak);
            if gone {
                vm.delete_weak_ref(seen.weak);
            }
            !gone
        });
        let mut unloaded = Vec::new();
        {
            let mut classes = self.classes.lock();
            classes.weak.retain(|_, &mut weak| {
                let gone = vm.is_cleared(weak);
                if gone {
                    unloaded.push(weak);
                }
                !gone
            });
            classes.by_site.clear();
        }
        self.retire(unloaded);
        self.release_retired(vm);
    }

    /// At the writer's end: deletes every thread reference, and every class
    /// reference once no callback runs, trying for a second at most (the
    /// session may still be running if the writer failed, its callbacks
    /// checking classes against these references). Returns whether every
    /// class reference was deleted.
    pub fn release_all(&self, vm: &mut impl KeysVm) -> bool {
        for (_, seen) in self.threads.lock().drain() {
            vm.delete_weak_ref(seen.weak);
        }
        let classes: Vec<u64> = {
            let mut classes = self.classes.lock();
            classes.by_site.clear();
            classes.weak.drain().map(|(_, weak)| weak).collect()
        };
        self.retire(classes);
        for _ in 0..END_RELEASE_TRIES {
            if self.release_retired(vm) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        false
    }

    /// Takes the weak references of classes gone from the session's tables,
    /// to delete once no callback can hold them
    /// ([`Keys::release_retired`]).
    fn retire(&self, classes: Vec<u64>) {
        if classes.is_empty() {
            return;
        }
        self.retired.lock().extend(classes);
        // Relaxed: the moment without callbacks that comes before any
        // deletion orders this store before every callback after it.
        self.class_epoch.fetch_add(1, Ordering::Relaxed);
    }

    /// Deletes the retired class references if no callback is running now;
    /// returns whether none is left. The callbacks before that moment are
    /// done with the references, and the ones after it see the epoch
    /// [`Keys::retire`] moved and empty their tables.
    fn release_retired(&self, vm: &mut impl KeysVm) -> bool {
        let mut retired = self.retired.lock();
        if retired.is_empty() {
            return true;
        }
        if !vm.no_callback_running() {
            return false;
        }
        for weak in retired.drain(..) {
            vm.delete_weak_ref(weak);
        }
        true
    }

    /// The session's key for `object` (a thread or a class): its JVMTI
    /// tag, set at its first sample. Returns the key and whether it is new.
    #[inline]
    fn key<V: CallbackVm>(
        &self,
        vm: &mut V,
        object: V::Object,
        counter: &AtomicU64,
    ) -> (u64, bool) {
        let tag = vm.tag(object);
        if tag >> 32 == self.session {
            return (tag & 0xffff_ffff, false);
        }
        let key = counter.fetch_add(1, Ordering::Relaxed);
        vm.set_tag(object, (self.session << 32) | key);
        (key, true)
    }

    /// The key of a thread. Keyed by the `Thread` object, not the OS
    /// thread, so each virtual thread is itself, not its carrier; a
    /// platform thread's key is cached in its [`Local`].
    #[inline]
    fn thread_key<V: CallbackVm>(
        &self,
        local: &mut Local<V::Frame>,
        vm: &mut V,
        thread: V::Object,
    ) -> u64 {
        let is_virtual = vm.is_virtual_thread(thread);
        if local.thread_session == self.session && !is_virtual {
            return local.thread_key;
        }
        let (key, new) = self.key(vm, thread, &self.next_thread);
        if new {
            // Once per thread: the one lookup the callback makes.
            let seen = SeenThread {
                name: vm.thread_name(thread),
                weak: vm.new_weak_ref(thread),
                os_thread_id: vm.os_thread_id(),
                resolved: false,
            };
            self.threads.lock().insert(key, seen);
        }
        if !is_virtual {
            local.thread_key = key;
            local.thread_session = self.session;
        }
        key
    }

    /// The key of an object's class; the writer looks its name up later.
    /// `site` is the allocating frame's method and location, if it has one:
    /// the class this thread allocated there last is checked first
    /// (`SiteClasses`), then the one any thread did ([`Classes::by_site`]).
    #[inline]
    fn class_key<V: CallbackVm>(
        &self,
        local: &mut Local<V::Frame>,
        vm: &mut V,
        class: V::Object,
        site: Option<(u64, i64)>,
    ) -> u64 {
        // Relaxed: a callback that starts after retired references were
        // deleted started after the moment without callbacks that preceded
        // the deletion, and so sees the epoch that retired them
        // ([`Keys::release_retired`]).
        let epoch = self.class_epoch.load(Ordering::Relaxed);
        local.site_classes.validate((self.session, epoch));
        if let Some((method, location)) = site {
            match local.site_classes.get(method, location) {
                Some((weak, key)) if vm.is_same_object(class, weak) => return key,
                // A site that allocates several classes: another thread's
                // guess is no better than this thread's.
                Some(_) => {}
                None => {
                    // The reference is checked outside the lock. It cannot
                    // be deleted meanwhile: retired references wait for
                    // callbacks in flight.
                    let shared = self.classes.lock().at_site((method, location));
                    if let Some((weak, key)) = shared
                        && vm.is_same_object(class, weak)
                    {
                        local.site_classes.insert(method, location, weak, key);
                        return key;
                    }
                }
            }
        }
        let (key, new) = self.key(vm, class, &self.next_class);
        let fresh = new.then(|| vm.new_weak_ref(class));
        let weak = {
            let mut classes = self.classes.lock();
            if let Some(weak) = fresh {
                classes.weak.insert(key, weak);
            }
            if let Some(site) = site {
                classes.by_site.insert(site, key);
            }
            classes.weak.get(&key).copied()
        };
        if let (Some((method, location)), Some(weak)) = (site, weak)
            && weak != 0
        {
            local.site_classes.insert(method, location, weak, key);
        }
        key
    }
}

/// The allocation callback's work: the stack, the keys, the record pushed
/// into the ring. Cheap: no name lookups (but a thread's first sample's),
/// no Java objects.
#[inline]
pub fn sample<V: CallbackVm>(
    session: &Session,
    keys: &Keys,
    local: &mut Local<V::Frame>,
    vm: &mut V,
    allocation: Allocation<V::Object>,
) {
    let ticks = session.clock().now();
    let options = session.options();
    let depth = options.depth;
    local.size_for(depth);
    let count = vm.current_stack(&mut local.frames);
    if options.mode == Mode::Floor {
        // Diagnostic: the cost so far is what no agent can avoid.
        session.count_sample();
        return;
    }
    let thread_key = keys.thread_key(local, vm, allocation.thread);
    let site = (count > 0).then(|| {
        let top: RawFrame = local.frames[0].into();
        (top.method, top.location)
    });
    let class_key = keys.class_key(local, vm, allocation.class, site);
    let size = allocation.size.max(0) as u64;
    let taken = session.count_sample();
    let tracking = session.tracking(size, taken, &mut local.tracking, || {
        // Differs between threads, and between runs.
        (ticks.0 as u64) ^ (vm.os_thread_id() as u64).rotate_left(32)
    });
    let handle = match tracking {
        Tracking::Drawn(_) => vm.new_weak_ref(allocation.object),
        _ => 0,
    };
    let header = SampleHeader {
        thread: thread_key,
        ticks: ticks.0,
        size,
        interval: local.sampled_interval(keys.session, session.interval()),
        class: class_key,
        liveness_handle: handle,
        tracking,
        truncated: count > depth,
    };
    let Local { frames, record, .. } = local;
    let frames = frames[..count.min(depth)].iter().map(|&f| f.into());
    SampleRecord::encode_into(record, &header, frames);
    if let Err(PushError::Closed | PushError::TooLarge { .. }) = session.producer().push(record) {
        session.count_lost();
        vm.delete_weak_ref(handle);
    }
    if session.wakes_writer(taken) {
        session.producer().wake_consumer();
    }
}

/// How long a thread whose allocation exhausted the heap waits for the
/// writer to have the file hold what filled it: the writer answers within
/// milliseconds (a flush, or a chunk's end with the old objects), so the
/// bound only keeps a writer stuck elsewhere from holding the thread, which
/// then throws its `OutOfMemoryError` anyway.
pub const EXHAUSTION_WAIT: Duration = Duration::from_secs(10);

/// Hands a Java heap exhaustion on this thread to the writer, with the
/// thread and its stack, and waits until the file holds it (at most
/// [`EXHAUSTION_WAIT`]): once the `OutOfMemoryError` is thrown the JVM may
/// exit or be killed. Takes no Java object: the heap is full.
pub fn heap_exhausted<V: CallbackVm>(
    session: &Session,
    keys: &Keys,
    local: &mut Local<V::Frame>,
    vm: &mut V,
    message: String,
) {
    let (record, _) = thread_record(session, keys, local, vm, false);
    let Ok(answer) = session.report_exhaustion(Exhaustion { record, message }) else {
        return;
    };
    match answer.recv_timeout(EXHAUSTION_WAIT) {
        Ok(Ok(())) => {}
        Ok(Err(why)) => say(format_args!(
            "the heap ran out, but what filled it was not written: {why}"
        )),
        Err(_) => say(format_args!(
            "the heap ran out; what filled it is not written yet after {} s",
            EXHAUSTION_WAIT.as_secs()
        )),
    }
}

/// Hands the JVM's shutdown (VMDeath, on the thread that ends the JVM) to
/// the writer, with the thread, its stack and why, for the recording's end
/// to write.
pub fn shutdown<V: CallbackVm>(
    session: &Session,
    keys: &Keys,
    local: &mut Local<V::Frame>,
    vm: &mut V,
) {
    let (record, name) = thread_record(session, keys, local, vm, true);
    session.report_shutdown(ShutdownRecord {
        record,
        reason: shutdown_reason(name.as_deref().unwrap_or_default()),
    });
}

/// A sample record of no object for the calling thread, now: its key, the
/// time and its stack; and, if `named`, the thread's name.
fn thread_record<V: CallbackVm>(
    session: &Session,
    keys: &Keys,
    local: &mut Local<V::Frame>,
    vm: &mut V,
    named: bool,
) -> (Vec<u8>, Option<String>) {
    let ticks = session.clock().now();
    let depth = session.options().depth;
    local.size_for(depth);
    let count = vm.current_stack(&mut local.frames);
    let mut name = None;
    let thread_key = match vm.current_thread() {
        Some(thread) => {
            let key = keys.thread_key(local, vm, thread);
            if named {
                name = Some(vm.thread_name(thread));
            }
            vm.delete_local_ref(thread);
            key
        }
        None => 0,
    };
    let header = SampleHeader {
        thread: thread_key,
        ticks: ticks.0,
        size: 0,
        interval: 0,
        class: 0,
        liveness_handle: 0,
        tracking: Tracking::Excluded,
        truncated: count > depth,
    };
    let frames = local.frames[..count.min(depth)].iter().map(|&f| f.into());
    let mut record = Vec::new();
    SampleRecord::encode_into(&mut record, &header, frames);
    (record, name)
}
