//! The allocation callback's logic without a JVM: keys for threads and
//! classes, the class references retired by epoch, the interval a sample
//! was drawn with, and the record it pushes, over a fake JVM that panics
//! where JNI would misbehave (a weak reference used or deleted after its
//! deletion).

use heapsampler_test_support as support;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use heapsampler_agent::callback::{
    self, Allocation, CallbackVm, EXHAUSTION_WAIT, Keys, KeysVm, Local, SeenThread,
};
use heapsampler_agent::environment::EnvironmentVm;
use heapsampler_agent::heap::HeapVm;
use heapsampler_agent::record::{RawFrame, SampleHeader, SampleView};
use heapsampler_agent::roots::RootsVm;
use heapsampler_agent::session::{self, Collections, Session, SessionVm};
use heapsampler_agent::threads::ThreadsVm;
use heapsampler_agent::tracking::TrackingPlan;
use heapsampler_agent::writer::{self, ClassInfo, Loader, MethodInfo, ThreadInfo};
use heapsampler_core::options::{Mode, Options};
use heapsampler_core::ring::{Consumer, ring_buffer};
use jfr_writer::{Clock, Recording};

/// A fake JVM: objects (threads, classes, sampled objects) are numbers, and
/// so are the weak references to them.
#[derive(Debug, Default)]
struct World {
    tags: HashMap<u32, u64>,
    names: HashMap<u32, String>,
    signatures: HashMap<u32, String>,
    virtual_threads: HashSet<u32>,
    /// Objects collected, classes unloaded: their weak references are
    /// cleared.
    gone: HashSet<u32>,
    /// Weak references not deleted, to their objects.
    weak: HashMap<u64, u32>,
    deleted: HashSet<u64>,
    made: u64,
    /// The current thread's stack, top first, and the thread.
    stack: Vec<RawFrame>,
    current_thread: Option<u32>,
    /// JVMTI `GetTag` calls: what the callback's caches save.
    get_tags: usize,
    names_asked: usize,
    /// Whether an allocation callback runs now, for the writer.
    callback_running: bool,
}

impl World {
    /// The object of weak reference `weak`, `None` if 0 or cleared. A
    /// deleted reference is a dangling pointer in JNI: a panic here.
    fn referent(&self, weak: u64) -> Option<u32> {
        if weak == 0 {
            return None;
        }
        assert!(
            !self.deleted.contains(&weak),
            "weak reference {weak:#x} used after its deletion"
        );
        let object = *self
            .weak
            .get(&weak)
            .unwrap_or_else(|| panic!("{weak:#x} is no weak reference the JVM made"));
        (!self.gone.contains(&object)).then_some(object)
    }

    fn delete(&mut self, weak: u64) {
        if weak == 0 {
            return;
        }
        assert!(
            self.weak.remove(&weak).is_some(),
            "weak reference {weak:#x} deleted twice"
        );
        self.deleted.insert(weak);
    }

    /// The live weak references to `object`.
    fn refs_to(&self, object: u32) -> usize {
        self.weak.values().filter(|&&o| o == object).count()
    }
}

/// The fake JVM as one thread sees it: callbacks on one, the writer on
/// another.
#[derive(Clone, Copy)]
struct Jvm<'w>(&'w Mutex<World>);

impl Jvm<'_> {
    fn world(&self) -> std::sync::MutexGuard<'_, World> {
        self.0.lock().unwrap()
    }
}

impl CallbackVm for Jvm<'_> {
    type Object = u32;
    type Frame = RawFrame;

    fn current_stack(&mut self, frames: &mut [RawFrame]) -> usize {
        let world = self.world();
        let count = world.stack.len().min(frames.len());
        frames[..count].copy_from_slice(&world.stack[..count]);
        count
    }
    fn current_thread(&mut self) -> Option<u32> {
        self.world().current_thread
    }
    fn delete_local_ref(&mut self, _object: u32) {}
    fn tag(&mut self, object: u32) -> u64 {
        let mut world = self.world();
        world.get_tags += 1;
        world.tags.get(&object).copied().unwrap_or(0)
    }
    fn set_tag(&mut self, object: u32, tag: u64) {
        self.world().tags.insert(object, tag);
    }
    fn is_virtual_thread(&mut self, thread: u32) -> bool {
        self.world().virtual_threads.contains(&thread)
    }
    fn thread_name(&mut self, thread: u32) -> String {
        let mut world = self.world();
        world.names_asked += 1;
        world.names.get(&thread).cloned().unwrap_or_default()
    }
    fn os_thread_id(&mut self) -> i64 {
        4242
    }
    fn new_weak_ref(&mut self, object: u32) -> u64 {
        let mut world = self.world();
        world.made += 1;
        let weak = 0x1000 * world.made;
        world.weak.insert(weak, object);
        weak
    }
    fn is_same_object(&mut self, object: u32, weak: u64) -> bool {
        self.world().referent(weak) == Some(object)
    }
    fn delete_weak_ref(&mut self, weak: u64) {
        self.world().delete(weak);
    }
}

impl KeysVm for Jvm<'_> {
    fn is_cleared(&mut self, weak: u64) -> bool {
        self.world().referent(weak).is_none()
    }
    fn delete_weak_ref(&mut self, weak: u64) {
        self.world().delete(weak);
    }
    fn no_callback_running(&mut self) -> bool {
        !self.world().callback_running
    }
}

const MAIN: u32 = 1;
const WORKER: u32 = 2;
const NODE: u32 = 10;
const INTS: u32 = 11;
/// A sampled object: only its liveness handle names it.
const OBJECT: u32 = 100;

/// `new Node()` in `m1` at bytecode 4, called from `m2` at bytecode 10.
fn node_site() -> Vec<RawFrame> {
    vec![frame(0x7f00_0010, 4), frame(0x7f00_0020, 10)]
}

/// `new int[]` in `m1` at bytecode 8.
fn ints_site() -> Vec<RawFrame> {
    vec![frame(0x7f00_0010, 8), frame(0x7f00_0020, 10)]
}

fn frame(method: u64, location: i64) -> RawFrame {
    RawFrame { method, location }
}

/// A world with threads `main` and `worker` and classes `Node` and `int[]`.
fn world() -> Mutex<World> {
    let mut world = World::default();
    world.names.insert(MAIN, "main".into());
    world.names.insert(WORKER, "worker".into());
    world.signatures.insert(NODE, "Lcom/example/Node;".into());
    world.signatures.insert(INTS, "[I".into());
    Mutex::new(world)
}

fn options() -> Options {
    let mut options = Options::defaults(std::process::id());
    options.depth = 8;
    options.live = true;
    options.rate = None;
    options
}

/// A session with `options` whose ring nobody drains but the test.
fn session(options: Options) -> (Session, Consumer) {
    let (producer, consumer) = ring_buffer(1 << 16);
    let session = Session::new(
        options,
        Clock::new(),
        TrackingPlan::every_sample(u64::MAX),
        producer,
        Arc::new(Collections::default()),
    );
    (session, consumer)
}

/// One sample: `thread` allocates an object of `class` at the top of
/// `stack`.
fn sample(
    session: &Session,
    keys: &Keys,
    local: &mut Local<RawFrame>,
    jvm: Jvm<'_>,
    thread: u32,
    class: u32,
    stack: Vec<RawFrame>,
) {
    jvm.world().stack = stack;
    let allocation = Allocation {
        thread,
        object: OBJECT,
        class,
        size: 24,
    };
    callback::sample(session, keys, local, &mut { jvm }, allocation);
}

/// The records pushed so far: their headers and frames.
fn records(consumer: &mut Consumer) -> Vec<(SampleHeader, Vec<RawFrame>)> {
    let mut records = Vec::new();
    consumer.drain(|bytes| {
        let view = SampleView::decode(bytes).unwrap();
        records.push((view.header, view.frames().collect()));
    });
    records
}

fn get_tags(world: &Mutex<World>) -> usize {
    world.lock().unwrap().get_tags
}

#[test]
fn a_platform_threads_key_is_cached_and_its_name_asked_once() {
    let world = world();
    let (session, mut consumer) = session(options());
    let keys = Keys::new(1);
    let mut main = Local::default();
    let mut worker = Local::default();
    for _ in 0..3 {
        sample(
            &session,
            &keys,
            &mut main,
            Jvm(&world),
            MAIN,
            NODE,
            node_site(),
        );
    }
    sample(
        &session,
        &keys,
        &mut worker,
        Jvm(&world),
        WORKER,
        NODE,
        node_site(),
    );
    let threads: Vec<u64> = records(&mut consumer)
        .iter()
        .map(|(h, _)| h.thread)
        .collect();
    assert_eq!(threads[..3], [threads[0]; 3]);
    assert_ne!(threads[3], threads[0]);
    // One `GetTag` per thread and one for the class: the thread's first
    // sample only, and the other thread found the class at the site.
    assert_eq!(get_tags(&world), 3);
    assert_eq!(world.lock().unwrap().names_asked, 2);
    let seen = keys.resolve_thread(threads[0]).unwrap();
    assert_eq!((seen.name.as_str(), seen.os_thread_id), ("main", 4242));
    assert_eq!(world.lock().unwrap().referent(seen.weak), Some(MAIN));
    assert_eq!(keys.resolve_thread(threads[3]).unwrap().name, "worker");
}

#[test]
fn each_virtual_thread_has_its_own_key_and_leaves_its_carriers_cache_alone() {
    let world = world();
    let (virtual_a, virtual_b) = (20, 21);
    world
        .lock()
        .unwrap()
        .virtual_threads
        .extend([virtual_a, virtual_b]);
    let (session, mut consumer) = session(options());
    let keys = Keys::new(1);
    // One carrier (one OS thread, one `Local`) runs all three.
    let mut carrier = Local::default();
    for thread in [MAIN, virtual_a, virtual_b, virtual_a, MAIN] {
        sample(
            &session,
            &keys,
            &mut carrier,
            Jvm(&world),
            thread,
            NODE,
            node_site(),
        );
    }
    let threads: Vec<u64> = records(&mut consumer)
        .iter()
        .map(|(h, _)| h.thread)
        .collect();
    assert_eq!(threads[0], threads[4], "the platform thread's key is kept");
    assert_eq!(threads[1], threads[3]);
    let distinct: HashSet<u64> = threads.iter().copied().collect();
    assert_eq!(distinct.len(), 3);
    // Each virtual thread's sample asks its tag; the platform thread's
    // second does not; one for the class.
    assert_eq!(get_tags(&world), 1 + 3 + 1);
    assert_eq!(world.lock().unwrap().names_asked, 3);
}

#[test]
fn a_thread_started_again_on_its_os_thread_is_asked_its_key_again() {
    let world = world();
    let (session, mut consumer) = session(options());
    let keys = Keys::new(1);
    let mut local = Local::default();
    sample(
        &session,
        &keys,
        &mut local,
        Jvm(&world),
        MAIN,
        NODE,
        node_site(),
    );
    // A native thread detaches, and attaches again as a new `Thread`.
    local.forget_thread();
    sample(
        &session,
        &keys,
        &mut local,
        Jvm(&world),
        WORKER,
        NODE,
        node_site(),
    );
    let threads: Vec<u64> = records(&mut consumer)
        .iter()
        .map(|(h, _)| h.thread)
        .collect();
    assert_ne!(threads[0], threads[1]);
    assert_eq!(keys.resolve_thread(threads[1]).unwrap().name, "worker");
}

#[test]
fn a_session_takes_no_key_or_cached_guess_of_the_one_before() {
    let world = world();
    let mut local = Local::default();
    let first_keys = Keys::new(1);
    let (first, mut first_ring) = session(options());
    sample(
        &first,
        &first_keys,
        &mut local,
        Jvm(&world),
        MAIN,
        NODE,
        node_site(),
    );
    sample(
        &first,
        &first_keys,
        &mut local,
        Jvm(&world),
        MAIN,
        INTS,
        ints_site(),
    );
    let before = records(&mut first_ring);
    // The first session gave `int[]` key 2; the next one sees `int[]`'s old
    // tag first, and must not take it for its key 2.
    let (second, mut second_ring) = session(options());
    let second_keys = Keys::new(2);
    let asked = get_tags(&world);
    sample(
        &second,
        &second_keys,
        &mut local,
        Jvm(&world),
        MAIN,
        INTS,
        ints_site(),
    );
    sample(
        &second,
        &second_keys,
        &mut local,
        Jvm(&world),
        MAIN,
        NODE,
        node_site(),
    );
    let after = records(&mut second_ring);
    assert_eq!(
        get_tags(&world) - asked,
        3,
        "the thread and both classes are asked again"
    );
    assert_eq!((before[1].0.class, after[0].0.class), (2, 1));
    assert_eq!(after[1].0.class, 2);
    assert_eq!(
        second_keys
            .class_ref(1)
            .map(|w| world.lock().unwrap().referent(w)),
        Some(Some(INTS))
    );
    assert_eq!(
        second_keys.resolve_thread(after[0].0.thread).unwrap().name,
        "main"
    );
    assert_eq!(
        world.lock().unwrap().tags[&INTS] >> 32,
        2,
        "the tag carries its session"
    );
}

#[test]
fn a_sites_class_is_found_without_a_tag_and_never_wrong() {
    let world = world();
    let (session, mut consumer) = session(options());
    let keys = Keys::new(1);
    let mut main = Local::default();
    let mut worker = Local::default();
    sample(
        &session,
        &keys,
        &mut main,
        Jvm(&world),
        MAIN,
        NODE,
        node_site(),
    );
    let asked = get_tags(&world);
    // The same site again, by this thread and by another one.
    sample(
        &session,
        &keys,
        &mut main,
        Jvm(&world),
        MAIN,
        NODE,
        node_site(),
    );
    sample(
        &session,
        &keys,
        &mut worker,
        Jvm(&world),
        WORKER,
        NODE,
        node_site(),
    );
    assert_eq!(get_tags(&world) - asked, 1, "only the worker thread's tag");
    // A site that allocates two classes (`Object o = flag ? new Node() :
    // new int[1]` in one bytecode, as far as the test goes).
    for class in [INTS, NODE, INTS, NODE] {
        sample(
            &session,
            &keys,
            &mut main,
            Jvm(&world),
            MAIN,
            class,
            node_site(),
        );
    }
    // No frames: no site to guess from.
    sample(
        &session,
        &keys,
        &mut main,
        Jvm(&world),
        MAIN,
        INTS,
        Vec::new(),
    );
    let classes: Vec<u64> = records(&mut consumer)
        .iter()
        .map(|(h, _)| h.class)
        .collect();
    let node = classes[0];
    let ints = classes[3];
    assert_ne!(node, ints);
    assert_eq!(classes, [node, node, node, ints, node, ints, node, ints]);
    let world = world.lock().unwrap();
    assert_eq!(world.referent(keys.class_ref(node).unwrap()), Some(NODE));
    assert_eq!(world.referent(keys.class_ref(ints).unwrap()), Some(INTS));
    assert_eq!(world.refs_to(NODE), 1, "one reference per class");
}

/// The retirement of a class reference, in the order the agent's locks
/// allow: a callback holds a guess at a site; the class is unloaded; the
/// writer finds it gone while a callback runs, and again when none does.
#[test]
fn an_unloaded_classs_reference_is_deleted_once_no_callback_runs_and_never_used_after() {
    let world = world();
    let (session, mut consumer) = session(options());
    let keys = Keys::new(1);
    let mut main = Local::default();
    let mut worker = Local::default();
    sample(
        &session,
        &keys,
        &mut main,
        Jvm(&world),
        MAIN,
        NODE,
        node_site(),
    );
    sample(
        &session,
        &keys,
        &mut worker,
        Jvm(&world),
        WORKER,
        INTS,
        ints_site(),
    );
    let node_key = records(&mut consumer)[0].0.class;
    let node_ref = keys.class_ref(node_key).unwrap();

    // `Node` is unloaded; a class of the same name is loaded again: another
    // object, at the same allocation site.
    let reloaded = 12;
    {
        let mut world = world.lock().unwrap();
        world.gone.insert(NODE);
        world.callback_running = true;
    }
    keys.forget_gone(&mut Jvm(&world));
    assert_eq!(keys.class_ref(node_key), None, "no longer resolved");
    assert!(
        !world.lock().unwrap().deleted.contains(&node_ref),
        "deleted under a running callback"
    );
    world.lock().unwrap().callback_running = false;
    keys.forget_gone(&mut Jvm(&world));
    assert!(world.lock().unwrap().deleted.contains(&node_ref));

    // Both threads allocate there again. A thread comparing with the
    // deleted reference would panic in the fake.
    let asked = get_tags(&world);
    sample(
        &session,
        &keys,
        &mut main,
        Jvm(&world),
        MAIN,
        reloaded,
        node_site(),
    );
    sample(
        &session,
        &keys,
        &mut worker,
        Jvm(&world),
        WORKER,
        reloaded,
        node_site(),
    );
    // `int[]`, still loaded, keeps its key; the guess is asked again.
    sample(
        &session,
        &keys,
        &mut worker,
        Jvm(&world),
        WORKER,
        INTS,
        ints_site(),
    );
    let records = records(&mut consumer);
    let reloaded_key = records[0].0.class;
    assert_ne!(reloaded_key, node_key, "a retired key is never given again");
    assert_eq!(records[1].0.class, reloaded_key);
    assert_eq!(records[2].0.class, 2);
    assert_eq!(
        get_tags(&world) - asked,
        2,
        "the reloaded class's first sample and int[]'s after its guess was emptied"
    );
    let world = world.lock().unwrap();
    assert_eq!(
        world.referent(keys.class_ref(reloaded_key).unwrap()),
        Some(reloaded)
    );
}

#[test]
fn threads_gone_are_forgotten_once_the_writer_has_described_them() {
    let world = world();
    let (session, mut consumer) = session(options());
    let keys = Keys::new(1);
    let mut main = Local::default();
    let mut worker = Local::default();
    sample(
        &session,
        &keys,
        &mut main,
        Jvm(&world),
        MAIN,
        NODE,
        node_site(),
    );
    sample(
        &session,
        &keys,
        &mut worker,
        Jvm(&world),
        WORKER,
        NODE,
        node_site(),
    );
    let threads: Vec<u64> = records(&mut consumer)
        .iter()
        .map(|(h, _)| h.thread)
        .collect();
    world.lock().unwrap().gone.extend([MAIN, WORKER]);
    let main_seen = keys.resolve_thread(threads[0]).unwrap();
    // The worker's samples may still be on their way to the writer.
    keys.forget_gone(&mut Jvm(&world));
    assert_eq!(keys.resolve_thread(threads[0]), None);
    assert!(world.lock().unwrap().deleted.contains(&main_seen.weak));
    let worker_seen: SeenThread = keys.resolve_thread(threads[1]).unwrap();
    assert_eq!(worker_seen.name, "worker");
    keys.forget_gone(&mut Jvm(&world));
    assert_eq!(keys.resolve_thread(threads[1]), None);
    assert!(world.lock().unwrap().deleted.contains(&worker_seen.weak));
}

#[test]
fn the_writers_end_deletes_every_reference_once_no_callback_runs() {
    let world = world();
    let (session, _consumer) = session(options());
    let keys = Keys::new(1);
    let mut main = Local::default();
    sample(
        &session,
        &keys,
        &mut main,
        Jvm(&world),
        MAIN,
        NODE,
        node_site(),
    );
    sample(
        &session,
        &keys,
        &mut main,
        Jvm(&world),
        MAIN,
        INTS,
        ints_site(),
    );
    // A callback that never ends (a full ring, say): the class references
    // stay, for a second at most.
    world.lock().unwrap().callback_running = true;
    let started = Instant::now();
    assert!(!keys.release_all(&mut Jvm(&world)));
    assert!(started.elapsed() < Duration::from_secs(30));
    {
        let world = world.lock().unwrap();
        assert_eq!(world.refs_to(MAIN), 0, "thread references go at once");
        assert_eq!((world.refs_to(NODE), world.refs_to(INTS)), (1, 1));
    }
    // A later end, with no callback running, deletes what was retired.
    world.lock().unwrap().callback_running = false;
    assert!(keys.release_all(&mut Jvm(&world)));
    let world = world.lock().unwrap();
    assert!(
        world.weak.values().all(|&o| o == OBJECT),
        "{:?}",
        world.weak
    );
}

#[test]
fn a_sample_is_weighed_with_the_interval_its_distance_was_drawn_with() {
    let mut local = Local::<RawFrame>::default();
    assert_eq!(
        local.sampled_interval(1, 512),
        512,
        "a thread's first sample"
    );
    // The rate limiter raised the interval after this thread's sample: the
    // next sample was drawn with the old one.
    assert_eq!(local.sampled_interval(1, 4096), 512);
    assert_eq!(local.sampled_interval(1, 4096), 4096);
    // Lowered again.
    assert_eq!(local.sampled_interval(1, 1024), 4096);
    // A new session: its own interval, not the last one's.
    assert_eq!(local.sampled_interval(2, 2048), 2048);

    // Through the callback: the session's interval at a first sample.
    let world = world();
    let (session, mut consumer) = session(options());
    let keys = Keys::new(1);
    sample(
        &session,
        &keys,
        &mut Local::default(),
        Jvm(&world),
        MAIN,
        NODE,
        node_site(),
    );
    assert_eq!(records(&mut consumer)[0].0.interval, options().interval);
}

#[test]
fn a_record_holds_the_sample_as_the_callback_saw_it() {
    let world = world();
    let mut shallow = options();
    shallow.depth = 2;
    let (producer, mut consumer) = ring_buffer(1 << 16);
    // Objects of 1000 bytes and more get no liveness handle.
    let session = Session::new(
        shallow,
        Clock::new(),
        TrackingPlan::every_sample(1000),
        producer,
        Arc::new(Collections::default()),
    );
    let keys = Keys::new(1);
    let mut local = Local::default();
    let deep = vec![frame(1, 4), frame(2, 5), frame(3, 6)];
    world.lock().unwrap().stack = deep.clone();
    let before = session.clock().now().0;
    for size in [24, 1000, -1] {
        let allocation = Allocation {
            thread: MAIN,
            object: OBJECT,
            class: NODE,
            size,
        };
        callback::sample(&session, &keys, &mut local, &mut Jvm(&world), allocation);
    }
    sample(
        &session,
        &keys,
        &mut local,
        Jvm(&world),
        MAIN,
        NODE,
        node_site()[..1].to_vec(),
    );
    let pushed = records(&mut consumer);
    assert_eq!(pushed.len(), 4);
    let (small, frames) = &pushed[0];
    assert_eq!(frames, &deep[..2], "the top frames, up to the depth");
    assert!(small.truncated);
    assert_eq!((small.size, small.thread, small.class), (24, 1, 1));
    assert!(small.ticks >= before && small.ticks <= session.clock().now().0);
    assert_eq!(
        world.lock().unwrap().referent(small.liveness_handle),
        Some(OBJECT)
    );
    assert_eq!(pushed[1].0.size, 1000);
    assert_eq!(
        pushed[1].0.liveness_handle, 0,
        "at the size limit: untracked"
    );
    assert_eq!(pushed[2].0.size, 0, "a size the JVM cannot give is 0");
    assert!(!pushed[3].0.truncated);
    assert_eq!(pushed[3].1.len(), 1);
    assert_eq!(session.statistics().samples, 4);

    // The floor: the stack is walked, the sample counted, nothing pushed.
    let mut floor = options();
    floor.mode = Mode::Floor;
    let (session, mut consumer) = self::session(floor);
    sample(
        &session,
        &keys,
        &mut local,
        Jvm(&world),
        MAIN,
        NODE,
        node_site(),
    );
    assert!(records(&mut consumer).is_empty());
    assert_eq!(session.statistics().samples, 1);
}

#[test]
fn a_sample_the_closed_ring_refuses_is_lost_and_its_handle_deleted() {
    let world = world();
    let (session, mut consumer) = session(options());
    let keys = Keys::new(1);
    session.producer().close();
    sample(
        &session,
        &keys,
        &mut Local::default(),
        Jvm(&world),
        MAIN,
        NODE,
        node_site(),
    );
    assert!(records(&mut consumer).is_empty());
    let statistics = session.statistics();
    assert_eq!((statistics.samples, statistics.lost_samples), (1, 1));
    assert_eq!(world.lock().unwrap().refs_to(OBJECT), 0);
}

/// The writer's view of the fake JVM: threads and classes resolved through
/// the callback's keys, methods named by their ids.
struct Writer<'w> {
    jvm: Jvm<'w>,
    keys: &'w Keys,
}

impl writer::Vm for Writer<'_> {
    fn method(&mut self, method: u64) -> Option<MethodInfo> {
        Some(MethodInfo {
            class: ClassInfo {
                signature: "Lcom/example/Main;".into(),
                hidden: false,
                loader: Loader::Unknown,
            },
            name: format!("m{:x}", method & 0xff),
            descriptor: "()V".into(),
            modifiers: 1,
            lines: Vec::new(),
            native: false,
        })
    }
    fn class(&mut self, class: u64) -> Option<ClassInfo> {
        let weak = self.keys.class_ref(class)?;
        let world = self.jvm.world();
        let object = world.referent(weak)?;
        Some(ClassInfo {
            signature: world.signatures[&object].clone(),
            hidden: false,
            loader: Loader::Unknown,
        })
    }
    fn thread(&mut self, thread: u64) -> ThreadInfo {
        let seen = self.keys.resolve_thread(thread).unwrap();
        ThreadInfo {
            java_name: seen.name,
            java_thread_id: thread as i64,
            os_thread_id: seen.os_thread_id,
        }
    }
    fn is_collected(&mut self, handle: u64) -> bool {
        self.jvm.world().referent(handle).is_none()
    }
    fn release(&mut self, handle: u64) {
        self.jvm.world().delete(handle);
    }
    fn forget_gone(&mut self) {
        self.keys.forget_gone(&mut self.jvm);
    }
}

impl HeapVm for Writer<'_> {}

impl RootsVm for Writer<'_> {}

impl EnvironmentVm for Writer<'_> {}

impl ThreadsVm for Writer<'_> {}

impl writer::CanaryVm for Writer<'_> {}

impl SessionVm for Writer<'_> {
    fn set_sampling_interval(&mut self, _interval: u64) {}
    fn duration_over(&mut self, session: &Session) {
        session.producer().close();
    }
}

/// The events of `types` that name `thread` as theirs.
fn events_of(file: &Path, types: &[&str], thread: &str) -> Vec<String> {
    support::dump_types(file, types)
        .into_iter()
        .filter(|line| line.contains(&format!("eventThread=thread(\"{thread}\",")))
        .collect()
}

/// Samples and a heap exhaustion through the callback, written by the
/// session's writer as the agent runs it: the keys resolve to the threads
/// and classes the fake JVM has, and the exhausted thread waits until the
/// file holds its marker.
#[test]
fn samples_and_a_heap_exhaustion_reach_the_recording_under_their_threads_and_classes() {
    let world = world();
    let dir = support::temp_dir("callback_recording");
    let file = dir.join("callback.jfr");
    let mut options = options();
    options.file = file.clone();
    options.flush = Duration::from_secs(3600);
    let recording = Recording::create(&file, session::recording_options(&options)).unwrap();
    let (producer, consumer) = ring_buffer(1 << 16);
    let session = Session::new(
        options,
        recording.clock(),
        TrackingPlan::every_sample(u64::MAX),
        producer.clone(),
        Arc::new(Collections::waking(producer)),
    );
    let keys = Keys::new(1);
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let mut vm = Writer {
                jvm: Jvm(&world),
                keys: &keys,
            };
            session::run_writer(&session, recording, consumer, &mut vm)
                .unwrap()
                .finish()
                .unwrap();
        });
        let mut main = Local::default();
        let mut worker = Local::default();
        sample(
            &session,
            &keys,
            &mut main,
            Jvm(&world),
            MAIN,
            NODE,
            node_site(),
        );
        sample(
            &session,
            &keys,
            &mut main,
            Jvm(&world),
            MAIN,
            INTS,
            ints_site(),
        );
        sample(
            &session,
            &keys,
            &mut worker,
            Jvm(&world),
            WORKER,
            NODE,
            node_site(),
        );
        {
            let mut world = world.lock().unwrap();
            world.stack = ints_site();
            world.current_thread = Some(WORKER);
        }
        let started = Instant::now();
        callback::heap_exhausted(
            &session,
            &keys,
            &mut worker,
            &mut Jvm(&world),
            "Java heap space".into(),
        );
        // Answered once written: the writer takes milliseconds, the wait
        // gives up after EXHAUSTION_WAIT.
        assert!(started.elapsed() < EXHAUSTION_WAIT, "not answered");
        let summary = support::summary(&file);
        assert_eq!(
            support::summary_count(&summary, "heapsampler.HeapExhausted"),
            1
        );
        session.producer().close();
        writer.join().unwrap();
    });
    let samples = ["jdk.ObjectAllocationSample"];
    let main = events_of(&file, &samples, "main");
    assert_eq!(main.len(), 2, "{main:?}");
    assert!(
        main[0].contains("objectClass=class(com.example.Node,"),
        "{}",
        main[0]
    );
    assert!(main[1].contains("objectClass=class([I,"), "{}", main[1]);
    let worker = events_of(&file, &samples, "worker");
    assert_eq!(worker.len(), 1);
    assert!(worker[0].contains("objectClass=class(com.example.Node,"));
    let exhausted = events_of(&file, &["heapsampler.HeapExhausted"], "worker");
    assert_eq!(exhausted.len(), 1, "{exhausted:?}");
    assert!(
        exhausted[0].contains("com.example.Main.m10()V"),
        "{}",
        exhausted[0]
    );
}
