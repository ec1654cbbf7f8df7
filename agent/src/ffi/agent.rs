//! The agent's entry points and JVMTI event callbacks, and the JVMTI and
//! JNI implementations of the VM traits the safe modules work over. What
//! the callbacks make of what the JVM reports is [`crate::callback`]'s,
//! what a session does with it [`crate::session`]'s, and when sessions
//! start and stop [`crate::lifecycle`]'s; here is what touches the JVM.
//!
//! `Agent_OnLoad` checks the options and the JVM's capabilities and creates
//! the recording file, so that any problem stops the JVM at once with one
//! line. `VMInit` (or `Agent_OnAttach`) starts a session
//! ([`Lifecycle::start`], [`Lifecycle::attach`]). Each
//! `SampledObjectAlloc` takes the stack and a few handles and pushes one
//! record into the ring, waiting if it is full, never dropping
//! ([`callback::sample`]). The GC callbacks report to the running session's
//! collections, if any. A Java heap `OutOfMemoryError` (`ResourceExhausted`)
//! is handed to the writer, which writes what filled the heap while the
//! failing thread waits, a while at most ([`callback::heap_exhausted`]).
//! `VMDeath` (or `stop`, or the end of `duration=`) stops the session
//! ([`Lifecycle::stop`]). Under a collector that cannot collect once
//! VMDeath has come (ZGC, Shenandoah), the exit's sampling stop and
//! collection run earlier, when the exit hook's thread starts
//! ([`Lifecycle::collect_before_exit`]).

use std::cell::RefCell;
use std::ffi::{CStr, c_char, c_void};
use std::sync::Arc;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::time::{Duration, Instant};

use heapsampler_core::options::{LiveSetAt, LogLevel, OptionError, Options};
use heapsampler_core::ring::Consumer;
use jfr_writer::{FileSink, Recording};
use jni::sys::{_jobject, JNI_ERR, JNI_OK, JNIEnv, JavaVM, jclass, jfieldID, jint, jlong, jobject};
use parking_lot::Mutex;

use super::heap_walk;
use super::jni::{JNI_VERSION_19, Jni, Vm};
use super::jvm::{Jvmti, JvmtiError, library_path, os_thread_id, release_free_memory};
use super::management::{self, Management};
use super::sys::*;
use crate::callback::{self, Allocation, CallbackVm, Keys, KeysVm, Local};
use crate::environment::{EnvironmentVm, VmFlag};
use crate::heap::{ClassLoading, Collectors, GcInfo, HeapVm, JvmInfo, NotifiedCollection};
use crate::lifecycle::{self, BoxedError, Lifecycle, LifecycleVm, Running, VmError};
use crate::record::RawFrame;
use crate::roots::{RootLimits, RootPath, RootsVm};
use crate::session::{self, ClaimError, Session, SessionVm, log, say};
use crate::signature::is_hidden_signature;
use crate::threads::{ThreadAllocation, ThreadsVm, Unmeasured};
use crate::tracking::StartVm;
use crate::writer::{self, ClassInfo, Loader, MethodInfo, ThreadInfo};

/// Why the agent cannot load, or an attach cannot do what it asks: each
/// says so to the user in one line.
#[derive(Debug, thiserror::Error)]
enum LoadError {
    #[error(transparent)]
    Options(#[from] OptionError),
    #[error("options 'stop' and 'dump' apply to an agent attached to a running JVM, not at start")]
    AttachOnly,
    #[error("the attaching thread has no JNI environment")]
    NoJni,
    #[error("this JVM offers no JVMTI 11 environment (status {0}): JDK 11 or later is needed")]
    NoJvmti(jint),
    #[error(transparent)]
    Capabilities(JvmtiError),
    #[error(
        "this JVM cannot sample allocations (JVMTI can_generate_sampled_object_alloc_events): \
         JDK 11 or later is needed, and no other agent may hold that capability"
    )]
    CannotSample,
    #[error("this JVM lacks JVMTI capabilities the agent needs: {}", .0.join(", "))]
    MissingCapabilities(Vec<String>),
    #[error("cannot add JVMTI capabilities: {0}")]
    AddCapabilities(#[source] JvmtiError),
    #[error("cannot register JVMTI events: {0}")]
    Events(#[source] JvmtiError),
    #[error(transparent)]
    Claim(#[from] ClaimError),
    #[error("cannot set the sampling interval: {0}")]
    Interval(#[source] JvmtiError),
    #[error("{0} (set file=PATH to choose where the recording goes)")]
    Create(#[source] jfr_writer::Error),
    #[error(transparent)]
    Lifecycle(#[from] lifecycle::Error),
}

/// What `Agent_OnLoad` prepared for `VMInit`.
struct Pending {
    options: Options,
    recording: Recording<FileSink>,
    jvmti: Jvmti,
    vm: Vm,
}

static PENDING: Mutex<Option<Pending>> = Mutex::new(None);

/// The agent's sessions ([`Lifecycle`]): the running one, which callbacks
/// hold the read lock of while they work, its collections for the GC
/// callbacks, and the order of starts and stops.
static AGENT: Lifecycle<JvmSession> = Lifecycle::new();

/// The JVM's side of a session: the JVMTI environment, the session's keys
/// for threads and classes, and the exit hook.
struct JvmSession {
    keys: Keys,
    jvmti: Jvmti,
    vm: Vm,
    /// Whether the JVM may run virtual threads (JNI 19 or later), which
    /// share their carrier's OS thread and so its [`Local`].
    virtual_threads: bool,
    /// The shutdown hook on whose start the exit's collection runs
    /// ([`Lifecycle::collect_before_exit`]): a global reference to its
    /// `Thread`, null without one. `ThreadStart` compares each starting
    /// thread with it under the session's read lock, so it is deleted only
    /// once no callback runs ([`Lifecycle::stop`]).
    exit_hook: AtomicPtr<_jobject>,
}

/// A running session, as the callbacks and the writer thread see it.
type JvmRunning = Running<JvmSession>;

thread_local! {
    static LOCAL: RefCell<Local<jvmtiFrameInfo>> = RefCell::new(Local::default());
}

/// The capabilities the agent needs, and which of them it cannot do without.
fn capabilities() -> jvmtiCapabilities {
    let mut wanted = jvmtiCapabilities::default();
    for bit in [
        CAN_GENERATE_SAMPLED_OBJECT_ALLOC_EVENTS,
        CAN_TAG_OBJECTS,
        CAN_GET_LINE_NUMBERS,
        CAN_GENERATE_GARBAGE_COLLECTION_EVENTS,
    ] {
        wanted.set(bit);
    }
    wanted
}

/// The JVMTI environment, set up once per loaded library: attaching again
/// reuses it (a second environment might not get the sampling capability).
static ENVIRONMENT: Mutex<Option<(Jvmti, Vm)>> = Mutex::new(None);

/// The environment, with the capabilities and callbacks the agent needs.
fn environment(vm: *mut JavaVM) -> Result<(Jvmti, Vm), LoadError> {
    let mut environment = ENVIRONMENT.lock();
    if let Some(ready) = *environment {
        return Ok(ready);
    }
    let vm = Vm::new(vm);
    let jvmti = vm.jvmti().map_err(LoadError::NoJvmti)?;
    let wanted = capabilities();
    let potential = jvmti
        .potential_capabilities()
        .map_err(LoadError::Capabilities)?;
    if !potential.has(CAN_GENERATE_SAMPLED_OBJECT_ALLOC_EVENTS) {
        return Err(LoadError::CannotSample);
    }
    let mut wanted = wanted;
    // Without it, no marker of an OutOfMemoryError: the recording goes on.
    if potential.has(CAN_GENERATE_RESOURCE_EXHAUSTION_HEAP_EVENTS) {
        wanted.set(CAN_GENERATE_RESOURCE_EXHAUSTION_HEAP_EVENTS);
    }
    let missing: Vec<String> = potential
        .missing(&wanted)
        .iter_bits()
        .filter_map(capability_name)
        .collect();
    if !missing.is_empty() {
        return Err(LoadError::MissingCapabilities(missing));
    }
    jvmti
        .add_capabilities(&wanted)
        .map_err(LoadError::AddCapabilities)?;
    let callbacks = jvmtiEventCallbacks::default()
        .VMInit(vm_init)
        .VMDeath(vm_death)
        .SampledObjectAlloc(sampled_object_alloc)
        .ThreadStart(thread_start)
        .ThreadEnd(thread_end)
        .GarbageCollectionStart(gc_start)
        .GarbageCollectionFinish(gc_finish)
        .ResourceExhausted(resource_exhausted);
    jvmti
        .set_event_callbacks(&callbacks)
        .and_then(|()| jvmti.set_event(true, JVMTI_EVENT_VM_DEATH))
        .map_err(LoadError::Events)?;
    *environment = Some((jvmti, vm));
    Ok((jvmti, vm))
}

/// Prepares a recording.
fn prepare(vm: *mut JavaVM, mut options: Options) -> Result<Pending, LoadError> {
    let (jvmti, vm) = environment(vm)?;
    if options.exclusive {
        options.file = session::claim_file(&options.file, std::process::id())?;
    }
    // At load, before any Java thread exists: a thread draws the distance to
    // its first sample with the interval in force when it starts, so setting
    // it later would leave the first ~512 KiB of early threads at the
    // default (and interval=0 would not sample every allocation).
    jvmti
        .set_heap_sampling_interval(options.interval as jint)
        .map_err(LoadError::Interval)?;
    let recording = Recording::create(&options.file, session::recording_options(&options))
        .map_err(LoadError::Create)?;
    Ok(Pending {
        options,
        recording,
        jvmti,
        vm,
    })
}

/// The agent's option string, as text, without the quotes `jcmd` users
/// need around it (its own parser would take `file=...` for its argument).
fn option_text(options: *const c_char) -> Option<String> {
    (!options.is_null()).then(|| {
        // SAFETY: the JVM passes a NUL-terminated string (null is checked).
        let text = unsafe { CStr::from_ptr(options) }
            .to_string_lossy()
            .into_owned();
        let trimmed = text.trim();
        let unquoted = ['"', '\'']
            .iter()
            .find_map(|q| trimmed.strip_prefix(*q).and_then(|t| t.strip_suffix(*q)));
        unquoted.unwrap_or(trimmed).to_owned()
    })
}

/// `-agentpath:libheapsampler.so=OPTIONS`: records from the JVM's start.
///
/// # Safety
/// Called by the JVM with a valid `JavaVM` and a NUL-terminated option string or null.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Agent_OnLoad(
    vm: *mut JavaVM,
    options: *mut c_char,
    _reserved: *mut c_void,
) -> jint {
    let result = Options::parse(option_text(options).as_deref(), std::process::id())
        .map_err(LoadError::from)
        .and_then(|options| match (options.stop, options.dump.is_some()) {
            (false, false) => prepare(vm, options),
            _ => Err(LoadError::AttachOnly),
        })
        .and_then(|pending| {
            pending
                .jvmti
                .set_event(true, JVMTI_EVENT_VM_INIT)
                .map_err(LoadError::Events)?;
            *PENDING.lock() = Some(pending);
            Ok(())
        });
    match result {
        Ok(()) => JNI_OK,
        Err(message) => {
            say(message);
            JNI_ERR
        }
    }
}

/// `jcmd PID JVMTI.agent_load libheapsampler.so OPTIONS`: starts a recording
/// in a running JVM; with the option `stop`, finishes it. A failure leaves
/// the JVM running and says why on its stderr.
///
/// # Safety
/// Called by the JVM with a valid `JavaVM` and a NUL-terminated option string or null.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Agent_OnAttach(
    vm: *mut JavaVM,
    options: *mut c_char,
    _reserved: *mut c_void,
) -> jint {
    let _order = AGENT.order();
    let result = Options::parse(option_text(options).as_deref(), std::process::id())
        .map_err(LoadError::from)
        .and_then(|options| {
            let jni = Vm::new(vm).jni().ok_or(LoadError::NoJni)?;
            let prepared =
                |options| prepare(vm, options).map_err(|e| lifecycle::Error::Prepare(Box::new(e)));
            AGENT
                .attach(options, &mut LifecycleJvm(jni), |options, lifecycle| {
                    start(prepared(options)?, lifecycle)
                })
                .map_err(LoadError::from)
        });
    match result {
        Ok(()) => JNI_OK,
        Err(message) => {
            say(message);
            // The JVM unloads a library whose attach failed, forgetting our
            // statics; an environment left behind would keep the sampling
            // capability from the next attach. Give it back unless a
            // recording (loaded by an earlier attach) is running.
            if AGENT.running().is_none() {
                if let Some((jvmti, _)) = ENVIRONMENT.lock().take() {
                    jvmti.dispose();
                }
            }
            JNI_ERR
        }
    }
}

unsafe extern "system" fn vm_init(_jvmti: *mut jvmtiEnv, jni: *mut JNIEnv, _thread: jobject) {
    let _order = AGENT.order();
    if let Some(pending) = PENDING.lock().take() {
        if let Err(message) = start(pending, &mut LifecycleJvm(Jni::from_raw(jni))) {
            say(format_args!("{message}; not recording"));
        }
    }
}

unsafe extern "system" fn vm_death(_jvmti: *mut jvmtiEnv, jni: *mut JNIEnv) {
    let _order = AGENT.order();
    let jni = Jni::from_raw(jni);
    report_shutdown(jni);
    AGENT.stop(&mut LifecycleJvm(jni), None, LiveSetAt::Exit, None);
}

/// Starts a session with what `Agent_OnLoad` or the attach prepared
/// ([`Lifecycle::start`]), its writer thread running [`writer_thread`].
fn start(pending: Pending, lifecycle: &mut LifecycleJvm) -> Result<(), lifecycle::Error> {
    let Pending {
        options,
        recording,
        jvmti,
        vm,
    } = pending;
    let virtual_threads = lifecycle.0.version() >= JNI_VERSION_19;
    let clock = recording.clock();
    let jvm = |id| JvmSession {
        keys: Keys::new(id),
        jvmti,
        vm,
        virtual_threads,
        exit_hook: AtomicPtr::new(std::ptr::null_mut()),
    };
    AGENT.start(options, clock, lifecycle, jvm, move |running, consumer| {
        std::thread::Builder::new()
            .name("heapsampler-writer".into())
            .spawn(move || writer_thread(running, recording, consumer))
    })
}

/// What the lifecycle asks of the JVM ([`LifecycleVm`]), on the thread
/// that starts or stops a session (`VMInit`'s, the attach's, `VMDeath`'s,
/// the duration's stop thread, the exit hook's), through the agent's JVMTI
/// environment.
struct LifecycleJvm(Jni);

impl LifecycleJvm {
    /// The agent's JVMTI environment: set up before any session starts,
    /// and kept while one runs.
    fn jvmti(&self) -> Option<Jvmti> {
        ENVIRONMENT.lock().map(|(jvmti, _)| jvmti)
    }

    /// The agent's JVMTI environment, or the error `failed` makes of its
    /// absence.
    fn jvmti_or(&self, failed: fn(BoxedError) -> VmError) -> Result<Jvmti, VmError> {
        self.jvmti()
            .ok_or_else(|| failed("the agent has no JVMTI environment".into()))
    }
}

impl StartVm for LifecycleJvm {
    fn vm_flag(&mut self, name: &CStr) -> Option<String> {
        management::vm_option(self.0, name)
    }

    fn system_property(&mut self, name: &str) -> Option<String> {
        management::system_property(self.0, name)
    }

    fn collector_names(&mut self) -> Option<Vec<String>> {
        management::collector_names(self.0)
    }
}

impl LifecycleVm for LifecycleJvm {
    type Jvm = JvmSession;

    fn start_events(&mut self) -> Result<(), VmError> {
        let jvmti = self.jvmti_or(VmError::StartSampling)?;
        jvmti
            .set_event(true, JVMTI_EVENT_GARBAGE_COLLECTION_START)
            .and_then(|()| jvmti.set_event(true, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH))
            // Before sampling: they clear the thread keys cached per OS thread.
            .and_then(|()| jvmti.set_event(true, JVMTI_EVENT_THREAD_START))
            .and_then(|()| jvmti.set_event(true, JVMTI_EVENT_THREAD_END))
            .map_err(|e| VmError::StartSampling(e.into()))?;
        // Refused without the capability (see `environment`): no marker then.
        let _ = jvmti.set_event(true, JVMTI_EVENT_RESOURCE_EXHAUSTED);
        Ok(())
    }

    fn start_sampling(&mut self, threads: Option<&glob::Pattern>) -> Result<(), VmError> {
        let jvmti = self.jvmti_or(VmError::StartSampling)?;
        match threads {
            // Every thread: one global switch.
            None => jvmti
                .set_event(true, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC)
                .map_err(|e| VmError::StartSampling(e.into())),
            // Only matching threads: enabled one by one, so the others pay
            // nothing. Threads started later are checked as they start.
            Some(pattern) => {
                let threads = jvmti
                    .all_threads()
                    .map_err(|e| VmError::ListThreads(e.into()))?;
                for thread in threads {
                    enable_if_matching(jvmti, self.0, pattern, thread);
                    self.0.delete_local_ref(thread);
                }
                Ok(())
            }
        }
    }

    fn stop_events(&mut self) {
        if let Some(jvmti) = self.jvmti() {
            let _ = jvmti.set_event(false, JVMTI_EVENT_RESOURCE_EXHAUSTED);
            let _ = jvmti.set_event(false, JVMTI_EVENT_THREAD_START);
            let _ = jvmti.set_event(false, JVMTI_EVENT_THREAD_END);
        }
    }

    /// On every thread: those of `threads=` were enabled one by one, and
    /// are disabled so, so that a later recording starts clean.
    fn stop_sampling(&mut self) {
        let Some(jvmti) = self.jvmti() else {
            return;
        };
        let _ = jvmti.set_event(false, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC);
        for thread in jvmti.all_threads().unwrap_or_default() {
            let _ = jvmti.set_thread_event(false, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, thread);
            self.0.delete_local_ref(thread);
        }
    }

    fn stop_gc_events(&mut self) {
        if let Some(jvmti) = self.jvmti() {
            let _ = jvmti.set_event(false, JVMTI_EVENT_GARBAGE_COLLECTION_START);
            let _ = jvmti.set_event(false, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH);
        }
    }

    fn force_garbage_collection(&mut self) -> Result<(), VmError> {
        let jvmti = self.jvmti_or(VmError::ForceCollection)?;
        jvmti
            .force_garbage_collection()
            .map_err(|e| VmError::ForceCollection(e.into()))
    }

    fn add_exit_hook(&mut self, jvm: &JvmSession) -> bool {
        match management::add_shutdown_hook(self.0, c"heapsampler-exit") {
            Some(hook) => {
                jvm.exit_hook.store(hook, Ordering::Release);
                true
            }
            None => false,
        }
    }

    fn remove_exit_hook(&mut self, jvm: &JvmSession, after_exit: bool) {
        let hook = jvm.exit_hook.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if !hook.is_null() {
            // At the exit the hook has run, or never will (`Runtime.halt`).
            management::remove_shutdown_hook(self.0, hook, !after_exit);
        }
    }

    fn set_system_property(&mut self, name: &str, value: Option<&str>) {
        management::set_system_property(self.0, name, value);
    }

    fn library_path(&mut self) -> Option<std::path::PathBuf> {
        library_path()
    }

    fn release_free_memory(&mut self) {
        release_free_memory();
    }
}

/// Enables sampling for `thread` if its name matches `pattern`.
fn enable_if_matching(jvmti: Jvmti, jni: Jni, pattern: &glob::Pattern, thread: jobject) {
    if let Ok(name) = jvmti.thread_name(jni, thread) {
        if pattern.matches(&name) {
            let _ = jvmti.set_thread_event(true, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, thread);
        }
    }
}

unsafe extern "system" fn thread_start(_jvmti: *mut jvmtiEnv, jni: *mut JNIEnv, thread: jobject) {
    forget_thread();
    let jni = Jni::from_raw(jni);
    let guard = AGENT.session();
    let Some(running) = guard.as_ref() else {
        return;
    };
    let hook = running.jvm.exit_hook.load(Ordering::Acquire);
    if !hook.is_null() && jni.is_same_object(thread, hook) {
        // Not under the lock: a stop waits for callbacks in flight, and
        // the collection may take long.
        let running = Arc::clone(running);
        drop(guard);
        AGENT.collect_before_exit(&running, &mut LifecycleJvm(jni));
        return;
    }
    if let Some(pattern) = &running.session.options().threads {
        enable_if_matching(running.jvm.jvmti, jni, pattern, thread);
    }
}

unsafe extern "system" fn thread_end(_jvmti: *mut jvmtiEnv, _jni: *mut JNIEnv, _thread: jobject) {
    forget_thread();
}

/// Clears this OS thread's cached thread key: its `Thread` starts or ends.
fn forget_thread() {
    let _ = LOCAL.try_with(|local| {
        if let Ok(mut local) = local.try_borrow_mut() {
            local.forget_thread();
        }
    });
}

unsafe extern "system" fn resource_exhausted(
    _jvmti: *mut jvmtiEnv,
    jni: *mut JNIEnv,
    flags: jint,
    _reserved: *const c_void,
    description: *const c_char,
) {
    // Metaspace, the array size limit, threads: not the heap's content.
    if flags & JVMTI_RESOURCE_EXHAUSTED_JAVA_HEAP == 0 {
        return;
    }
    let message = if description.is_null() {
        String::new()
    } else {
        // SAFETY: the JVM passes a NUL-terminated description (null is
        // checked).
        unsafe { CStr::from_ptr(description) }
            .to_string_lossy()
            .into_owned()
    };
    let jni = Jni::from_raw(jni);
    let _ = LOCAL.try_with(|local| {
        let Ok(mut local) = local.try_borrow_mut() else {
            return;
        };
        // The writer's own JNI calls may find the heap full: it never waits
        // for itself.
        if local.agent_thread {
            return;
        }
        // Held, not the lock: a stop meanwhile waits for the writer, which
        // answers before it ends.
        let Some(running) = AGENT.running() else {
            return;
        };
        let mut vm = AllocatingThread::new(&running, jni);
        callback::heap_exhausted(
            &running.session,
            &running.jvm.keys,
            &mut local,
            &mut vm,
            message,
        );
    });
}

unsafe extern "system" fn gc_start(_jvmti: *mut jvmtiEnv) {
    AGENT.collections().started(Instant::now());
}

unsafe extern "system" fn gc_finish(_jvmti: *mut jvmtiEnv) {
    AGENT.collections().finished(Instant::now());
}

unsafe extern "system" fn sampled_object_alloc(
    _jvmti: *mut jvmtiEnv,
    jni: *mut JNIEnv,
    thread: jobject,
    object: jobject,
    class: jclass,
    size: jlong,
) {
    let jni = Jni::from_raw(jni);
    let _ = LOCAL.try_with(|local| {
        let Ok(mut local) = local.try_borrow_mut() else {
            return;
        };
        if local.agent_thread {
            return;
        }
        let guard = AGENT.session();
        if let Some(running) = guard.as_ref() {
            let mut vm = AllocatingThread::new(running, jni);
            let allocation = Allocation {
                thread,
                object,
                class,
                size,
            };
            callback::sample(
                &running.session,
                &running.jvm.keys,
                &mut local,
                &mut vm,
                allocation,
            );
        }
    });
}

/// The allocation callback's view of the JVM: JVMTI, and JNI through the
/// environment the JVM handed the callback.
struct AllocatingThread {
    jvmti: Jvmti,
    jni: Jni,
    virtual_threads: bool,
}

impl AllocatingThread {
    #[inline]
    fn new(running: &JvmRunning, jni: Jni) -> Self {
        Self {
            jvmti: running.jvm.jvmti,
            jni,
            virtual_threads: running.jvm.virtual_threads,
        }
    }
}

impl From<jvmtiFrameInfo> for RawFrame {
    #[inline]
    fn from(frame: jvmtiFrameInfo) -> Self {
        RawFrame {
            method: frame.method as u64,
            location: frame.location,
        }
    }
}

impl CallbackVm for AllocatingThread {
    type Object = jobject;
    type Frame = jvmtiFrameInfo;

    #[inline]
    fn current_stack(&mut self, frames: &mut [jvmtiFrameInfo]) -> usize {
        self.jvmti.current_stack(frames).unwrap_or(0)
    }

    fn current_thread(&mut self) -> Option<jobject> {
        self.jvmti
            .current_thread()
            .ok()
            .filter(|thread| !thread.is_null())
    }

    fn delete_local_ref(&mut self, object: jobject) {
        self.jni.delete_local_ref(object);
    }

    #[inline]
    fn tag(&mut self, object: jobject) -> u64 {
        self.jvmti.tag(object).unwrap_or(0) as u64
    }

    #[inline]
    fn set_tag(&mut self, object: jobject, tag: u64) {
        let _ = self.jvmti.set_tag(object, tag as jlong);
    }

    #[inline]
    fn is_virtual_thread(&mut self, thread: jobject) -> bool {
        self.virtual_threads && self.jni.is_virtual_thread(thread)
    }

    fn thread_name(&mut self, thread: jobject) -> String {
        self.jvmti.thread_name(self.jni, thread).unwrap_or_default()
    }

    fn os_thread_id(&mut self) -> i64 {
        os_thread_id()
    }

    #[inline]
    fn new_weak_ref(&mut self, object: jobject) -> u64 {
        self.jni.new_weak_global_ref(object) as u64
    }

    #[inline]
    fn is_same_object(&mut self, object: jobject, weak: u64) -> bool {
        self.jni.is_same_object(object, weak as jobject)
    }

    #[inline]
    fn delete_weak_ref(&mut self, weak: u64) {
        self.jni.delete_weak_global_ref(weak as jobject);
    }
}

/// The writer thread: attached to the JVM as a daemon, never sampled. It
/// runs [`session::run_writer`], then releases the session's JNI handles.
fn writer_thread(running: Arc<JvmRunning>, recording: Recording<FileSink>, consumer: Consumer) {
    LOCAL.with(|local| local.borrow_mut().agent_thread = true);
    let Some(jni) = running.jvm.vm.attach_daemon(c"heapsampler-writer") else {
        running.session.producer().close();
        say("the writer thread cannot attach to the JVM; not recording");
        return;
    };
    let mut vm = JvmtiVm {
        running: &running,
        jni,
        management: Lookup::NotYet,
        gc_info: Backoff::default(),
        thread_bytes: Backoff::default(),
        loader_name: jni.class_loader_name_field(),
    };
    let outcome = session::run_writer(&running.session, recording, consumer, &mut vm)
        .and_then(|sink| Ok(sink.finish()?));
    session::report(&running.session, &outcome);
    if let Lookup::Found(management) = std::mem::replace(&mut vm.management, Lookup::NotYet) {
        management.release(jni);
    }
    // The session may still be running (the writer failed): the class
    // references are deleted once no callback is running, or left.
    running.jvm.keys.release_all(&mut vm);
    running.jvm.vm.detach();
}

/// The writer's view of the JVM: JVMTI and JNI on the writer thread.
struct JvmtiVm<'s> {
    running: &'s JvmRunning,
    jni: Jni,
    /// The management interface, looked up at its first use.
    management: Lookup,
    /// When a collection's figures may be asked for again after a failure.
    gc_info: Backoff,
    /// When the threads' allocated bytes may be asked for again after a
    /// failure (their `long[]` are Java objects too).
    thread_bytes: Backoff,
    /// `ClassLoader.name` ([`Jni::class_loader_name_field`]), looked up once.
    loader_name: Option<jfieldID>,
}

/// How many loaders deep a class's description goes: its loader's class,
/// that class's loader's class, ... The JDK's loaders' classes are the
/// bootstrap loader's, so a class of the application's loader needs one;
/// a deeper chain's last loader is described without its class.
const LOADER_DEPTH: u32 = 4;

/// A pause after each failure of a call, doubling from a second to a
/// minute while it fails, ended by a success. A collection's figures
/// (`GcInfo`) are Java objects: in a heap that is full they fail to be
/// allocated, and each attempt costs the JVM a full collection before it
/// gives up (and a line of its log: the agent hears of its own
/// `OutOfMemoryError` too). While the heap stays full, the poll tries now
/// and then rather than at every collection.
#[derive(Debug, Default)]
struct Backoff {
    /// Until when calls are not made, and the pause after the next failure.
    until: Option<(Instant, Duration)>,
}

impl Backoff {
    const FIRST: Duration = Duration::from_secs(1);
    const LONGEST: Duration = Duration::from_secs(60);

    /// Whether a call may be made now.
    fn allows(&self) -> bool {
        self.until.is_none_or(|(until, _)| Instant::now() >= until)
    }

    /// A call was made and `succeeded`, or not.
    fn made(&mut self, succeeded: bool) {
        self.until = if succeeded {
            None
        } else {
            let pause = self.until.map_or(Self::FIRST, |(_, pause)| pause);
            Some((Instant::now() + pause, (pause * 2).min(Self::LONGEST)))
        };
    }
}

/// The management interface's beans, once looked for.
enum Lookup {
    NotYet,
    Missing,
    Found(Box<Management>),
}

impl SessionVm for JvmtiVm<'_> {
    fn set_sampling_interval(&mut self, interval: u64) {
        let interval = interval.min(jint::MAX as u64) as jint;
        let _ = self.running.jvm.jvmti.set_heap_sampling_interval(interval);
    }

    fn duration_over(&mut self, session: &Session) {
        // [`stop`] joins the writer, so the writer cannot run it itself: a
        // short-lived thread does, and the writer drains the ring meanwhile.
        let (id, vm) = (self.running.id, self.running.jvm.vm);
        let spawned = std::thread::Builder::new()
            .name("heapsampler-stop".into())
            .spawn(move || {
                LOCAL.with(|local| local.borrow_mut().agent_thread = true);
                let _order = AGENT.order();
                // Stopped meanwhile (a `stop`, or VMDeath, when the JVM may be
                // past attaching threads): nothing to do.
                if AGENT.is_running(id) {
                    if let Some(jni) = vm.attach_daemon(c"heapsampler-stop") {
                        AGENT.stop(&mut LifecycleJvm(jni), Some(id), LiveSetAt::Stop, None);
                        vm.detach();
                    }
                }
            });
        if let Err(e) = spawned {
            // The file is still finished; the session is torn down by the
            // next `stop` or at the JVM's exit. Samples from now on are
            // counted as lost.
            say(format_args!(
                "cannot start the thread that stops the recording at its duration ({e}); \
                 finishing the file now"
            ));
            session.producer().close();
        }
    }
}

impl JvmtiVm<'_> {
    /// The management interface's beans, looked up the first time; `None`
    /// (said once, at log level debug) without them.
    fn management(&mut self) -> Option<&Management> {
        if let Lookup::NotYet = self.management {
            self.management = match Management::new(self.jni) {
                Ok(found) => {
                    if found.collectors().is_none() {
                        log(
                            self.running.session.options(),
                            LogLevel::Debug,
                            "no GC or heap events: the collectors' GcInfo \
                             (com.sun.management, module jdk.management) is missing",
                        );
                    }
                    Lookup::Found(Box::new(found))
                }
                Err(why) => {
                    log(
                        self.running.session.options(),
                        LogLevel::Debug,
                        format_args!("no GC, heap or JVM events: {why}"),
                    );
                    Lookup::Missing
                }
            };
        }
        match &self.management {
            Lookup::Found(management) => Some(management),
            _ => None,
        }
    }

    /// Describes a class from a live reference, with its loader: once per
    /// class or method the writer resolves, never per sample.
    fn class_info(&self, class: jclass) -> Option<ClassInfo> {
        self.class_info_within(class, LOADER_DEPTH)
    }

    /// [`JvmtiVm::class_info`], its loaders' classes described `depth`
    /// loaders deep.
    fn class_info_within(&self, class: jclass, depth: u32) -> Option<ClassInfo> {
        let jvmti = self.running.jvm.jvmti;
        let signature = jvmti.class_signature(class).ok()?;
        let loader = match jvmti.class_loader(class) {
            Ok(loader) if loader.is_null() => Loader::Boot,
            Ok(loader) => {
                let described = self.loader_info(loader, depth);
                self.jni.delete_local_ref(loader);
                described
            }
            Err(_) => Loader::Unknown,
        };
        Some(ClassInfo {
            hidden: is_hidden_signature(&signature),
            signature,
            loader,
        })
    }

    /// Describes a live loader object: its name and, `depth` loaders deep,
    /// its class.
    fn loader_info(&self, loader: jobject, depth: u32) -> Loader {
        let class = depth.checked_sub(1).and_then(|depth| {
            let class = self.jni.class_of(loader)?;
            let described = self.class_info_within(class, depth);
            self.jni.delete_local_ref(class);
            described.map(Box::new)
        });
        let name = self
            .loader_name
            .and_then(|field| self.jni.string_field(loader, field));
        Loader::Object { class, name }
    }
}

impl writer::Vm for JvmtiVm<'_> {
    fn method(&mut self, method: u64) -> Option<MethodInfo> {
        let jvmti = self.running.jvm.jvmti;
        let id = method as jni::sys::jmethodID;
        let (name, descriptor) = jvmti.method_name(id).ok()?;
        let class = jvmti.method_declaring_class(id).ok()?;
        let class_info = self.class_info(class);
        self.jni.delete_local_ref(class);
        Some(MethodInfo {
            class: class_info?,
            name,
            descriptor,
            modifiers: jvmti.method_modifiers(id).unwrap_or(0),
            lines: jvmti.line_numbers(id).unwrap_or_default(),
            native: jvmti.is_method_native(id).unwrap_or(false),
        })
    }

    fn class(&mut self, class: u64) -> Option<ClassInfo> {
        let weak = self.running.jvm.keys.class_ref(class)? as jobject;
        let local = self.jni.new_local_ref(weak);
        if local.is_null() {
            return None;
        }
        let info = self.class_info(local);
        self.jni.delete_local_ref(local);
        info
    }

    fn thread(&mut self, thread: u64) -> ThreadInfo {
        let Some(seen) = self.running.jvm.keys.resolve_thread(thread) else {
            return ThreadInfo {
                java_name: format!("thread-{thread}"),
                java_thread_id: -1,
                os_thread_id: 0,
            };
        };
        let local = self.jni.new_local_ref(seen.weak as jobject);
        let java_thread_id = if local.is_null() {
            -1
        } else {
            self.jni.thread_id(local)
        };
        self.jni.delete_local_ref(local);
        ThreadInfo {
            java_name: seen.name,
            java_thread_id,
            os_thread_id: seen.os_thread_id,
        }
    }

    fn forget_gone(&mut self) {
        let running = self.running;
        running.jvm.keys.forget_gone(self);
    }

    fn is_collected(&mut self, handle: u64) -> bool {
        self.jni.is_cleared(handle as jobject)
    }

    fn release(&mut self, handle: u64) {
        self.jni.delete_weak_global_ref(handle as jobject);
    }

    fn array_length(&mut self, handle: u64) -> Option<i32> {
        self.jni.array_length(handle as jobject)
    }
}

impl KeysVm for JvmtiVm<'_> {
    fn is_cleared(&mut self, weak: u64) -> bool {
        self.jni.is_cleared(weak as jobject)
    }

    fn delete_weak_ref(&mut self, weak: u64) {
        self.jni.delete_weak_global_ref(weak as jobject);
    }

    /// See [`Lifecycle::no_callback_running`].
    fn no_callback_running(&mut self) -> bool {
        AGENT.no_callback_running()
    }
}

impl HeapVm for JvmtiVm<'_> {
    fn jvm_info(&mut self) -> Option<JvmInfo> {
        let jni = self.jni;
        self.management()?.jvm_info(jni)
    }

    fn collectors(&mut self) -> Option<Collectors> {
        self.management()?.collectors()
    }

    fn last_collection(&mut self, collector: usize) -> Option<GcInfo> {
        if !self.gc_info.allows() {
            return None;
        }
        let jni = self.jni;
        let last = self.management()?.last_collection(jni, collector);
        self.gc_info.made(last.is_some());
        last
    }

    fn notified_collections(&mut self) -> Vec<NotifiedCollection> {
        let jni = self.jni;
        self.management()
            .map_or_else(Vec::new, |m| m.notified_collections(jni))
    }

    fn vm_flag(&mut self, name: &CStr) -> Option<VmFlag> {
        management::vm_flag(self.jni, name)
    }

    fn class_loading(&mut self) -> Option<ClassLoading> {
        let jni = self.jni;
        self.management()?.class_loading(jni)
    }
}

impl RootsVm for JvmtiVm<'_> {
    fn paths_to_roots(&mut self, handles: &[u64], limits: &RootLimits) -> Vec<Option<RootPath>> {
        heap_walk::paths_to_roots(
            self.running.jvm.vm,
            self.jni,
            handles,
            limits,
            self.running.session.options(),
        )
    }
}

// The environment's events: the JVM's shutdown, seen at VMDeath, and the
// writer's view of the system properties and flags.

/// Hands the JVM's shutdown to the running session, if any, with the
/// thread that posted VMDeath and its stack ([`callback::shutdown`]).
fn report_shutdown(jni: Jni) {
    let Some(running) = AGENT.running() else {
        return;
    };
    let _ = LOCAL.try_with(|local| {
        if let Ok(mut local) = local.try_borrow_mut() {
            let mut vm = AllocatingThread::new(&running, jni);
            callback::shutdown(&running.session, &running.jvm.keys, &mut local, &mut vm);
        }
    });
}

impl ThreadsVm for JvmtiVm<'_> {
    /// JVMTI's live platform threads but this one, the writer, each with
    /// its Java id, name and the session's key if sampled; then their
    /// allocated bytes in one call. A thread that ended in between is left
    /// out (the JVM answers -1 for it).
    fn thread_allocations(&mut self) -> Result<Vec<ThreadAllocation>, Unmeasured> {
        if self.management().is_none() {
            return Err(Unmeasured::Unavailable);
        }
        if !self.thread_bytes.allows() {
            return Ok(Vec::new());
        }
        let (jvmti, jni) = (self.running.jvm.jvmti, self.jni);
        let threads = jvmti.all_threads().map_err(|_| Unmeasured::Unavailable)?;
        let writer = jvmti.current_thread().ok();
        let mut listed = Vec::with_capacity(threads.len());
        for thread in threads {
            let is_writer = writer.is_some_and(|writer| jni.is_same_object(writer, thread));
            let java_thread_id = if is_writer { -1 } else { jni.thread_id(thread) };
            if java_thread_id >= 0 {
                if let Ok(name) = jvmti.thread_name(jni, thread) {
                    let key = jvmti
                        .tag(thread)
                        .ok()
                        .and_then(|tag| self.running.jvm.keys.sampled_thread(tag as u64));
                    listed.push(ThreadAllocation {
                        key,
                        java_thread_id,
                        name,
                        allocated: 0,
                    });
                }
            }
            jni.delete_local_ref(thread);
        }
        if let Some(writer) = writer {
            jni.delete_local_ref(writer);
        }
        let ids: Vec<i64> = listed.iter().map(|thread| thread.java_thread_id).collect();
        let bytes = self
            .management()
            .ok_or(Unmeasured::Unavailable)?
            .thread_allocated_bytes(jni, &ids);
        self.thread_bytes
            .made(!matches!(bytes, Err(Unmeasured::Unavailable)));
        let bytes = bytes?;
        Ok(listed
            .into_iter()
            .zip(bytes)
            .filter_map(|(thread, bytes)| {
                let allocated = u64::try_from(bytes).ok()?;
                Some(ThreadAllocation {
                    allocated,
                    ..thread
                })
            })
            .collect())
    }

    fn unmeasured(&mut self, why: Unmeasured) {
        // The management interface's absence is said already, at debug.
        let level = match why {
            Unmeasured::Unavailable => LogLevel::Debug,
            Unmeasured::Unsupported | Unmeasured::Disabled => LogLevel::Info,
        };
        log(self.running.session.options(), level, why);
    }
}

impl EnvironmentVm for JvmtiVm<'_> {
    fn system_properties(&mut self) -> Vec<(String, String)> {
        self.running
            .jvm
            .jvmti
            .system_properties()
            .unwrap_or_default()
    }

    fn vm_flags(&mut self, names: &[&str]) -> Vec<Option<VmFlag>> {
        management::vm_flags(self.jni, names)
    }
}
