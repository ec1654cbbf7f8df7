//! The agent's entry points and JVMTI event callbacks, with the VM trait
//! of the allocation callback ([`AllocatingThread`]); the lifecycle's is in
//! `sessions` ([`LifecycleJvm`]), the writer thread's in `writer_thread`.
//! What the callbacks make of what the JVM reports is [`crate::callback`]'s,
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
//!
//! [`Lifecycle::start`]: lifecycle::Lifecycle::start
//! [`Lifecycle::attach`]: lifecycle::Lifecycle::attach
//! [`Lifecycle::stop`]: lifecycle::Lifecycle::stop
//! [`Lifecycle::collect_before_exit`]: lifecycle::Lifecycle::collect_before_exit

use std::ffi::{CStr, c_char, c_void};
use std::sync::Arc;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::time::Instant;

use heapsampler_core::options::{LiveSetAt, OptionError, Options};
use jfr_writer::{FileSink, Recording};
use jni::sys::{JNI_ERR, JNI_OK, JNIEnv, JavaVM, jclass, jint, jlong, jobject};
use parking_lot::Mutex;

use super::jni::{JNI_VERSION_19, Jni, Vm};
use super::jvm::{Jvmti, JvmtiError, os_thread_id};
use super::sessions::{
    AGENT, ENVIRONMENT, JvmRunning, JvmSession, LOCAL, LifecycleJvm, enable_if_matching,
};
use super::sys::*;
use super::writer_thread::writer_thread;
use crate::callback::{self, Allocation, CallbackVm, Keys};
use crate::lifecycle;
use crate::record::RawFrame;
use crate::session::{self, ClaimError, say};

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

/// The environment, with the capabilities and callbacks the agent needs.
fn environment(vm: *mut JavaVM) -> Result<(Jvmti, Vm), LoadError> {
    let mut environment = ENVIRONMENT.lock();
    if let Some(ready) = *environment {
        return Ok(ready);
    }
    let vm = Vm::new(vm);
    let jvmti = Jvmti::new(vm).map_err(LoadError::NoJvmti)?;
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
            if AGENT.running().is_none()
                && let Some((jvmti, _)) = ENVIRONMENT.lock().take()
            {
                jvmti.dispose();
            }
            JNI_ERR
        }
    }
}

unsafe extern "system" fn vm_init(_jvmti: *mut jvmtiEnv, jni: *mut JNIEnv, _thread: jobject) {
    let _order = AGENT.order();
    if let Some(pending) = PENDING.lock().take()
        && let Err(message) = start(pending, &mut LifecycleJvm(Jni::from_raw(jni)))
    {
        say(format_args!("{message}; not recording"));
    }
}

unsafe extern "system" fn vm_death(_jvmti: *mut jvmtiEnv, jni: *mut JNIEnv) {
    let _order = AGENT.order();
    let jni = Jni::from_raw(jni);
    report_shutdown(jni);
    AGENT.stop(&mut LifecycleJvm(jni), None, LiveSetAt::Exit, None);
}

/// Starts a session with what `Agent_OnLoad` or the attach prepared
/// ([`lifecycle::Lifecycle::start`]), its writer thread running [`writer_thread`].
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
