//! The agent's sessions on the JVM's side, which the entry points and
//! callbacks (`agent`) and the writer thread (`writer_thread`) share: the
//! one [`Lifecycle`] ([`AGENT`]) and the JVM's part of each session
//! ([`JvmSession`]), each thread's [`Local`] ([`LOCAL`]), the agent's JVMTI
//! environment, and [`LifecycleJvm`], the lifecycle's VM trait over it.

use std::cell::RefCell;
use std::ffi::CStr;
use std::sync::atomic::{AtomicPtr, Ordering};

use jni::sys::{_jobject, jobject};
use parking_lot::Mutex;

use super::jni::{Jni, Vm};
use super::jvm::{Jvmti, library_path, release_free_memory};
use super::management;
use super::sys::*;
use crate::callback::{Keys, Local};
use crate::lifecycle::{BoxedError, Lifecycle, LifecycleVm, Running, VmError};
use crate::tracking::StartVm;

/// The agent's sessions ([`Lifecycle`]): the running one, which callbacks
/// hold the read lock of while they work, its collections for the GC
/// callbacks, and the order of starts and stops.
pub(super) static AGENT: Lifecycle<JvmSession> = Lifecycle::new();

/// The JVM's side of a session: the JVMTI environment, the session's keys
/// for threads and classes, and the exit hook.
pub(super) struct JvmSession {
    pub(super) keys: Keys,
    pub(super) jvmti: Jvmti,
    pub(super) vm: Vm,
    /// Whether the JVM may run virtual threads (JNI 19 or later), which
    /// share their carrier's OS thread and so its [`Local`].
    pub(super) virtual_threads: bool,
    /// The shutdown hook on whose start the exit's collection runs
    /// ([`Lifecycle::collect_before_exit`]): a global reference to its
    /// `Thread`, null without one. `ThreadStart` compares each starting
    /// thread with it under the session's read lock, so it is deleted only
    /// once no callback runs ([`Lifecycle::stop`]).
    pub(super) exit_hook: AtomicPtr<_jobject>,
}

/// A running session, as the callbacks and the writer thread see it.
pub(super) type JvmRunning = Running<JvmSession>;

thread_local! {
    pub(super) static LOCAL: RefCell<Local<jvmtiFrameInfo>> = RefCell::new(Local::default());
}

/// The JVMTI environment, set up once per loaded library: attaching again
/// reuses it (a second environment might not get the sampling capability).
pub(super) static ENVIRONMENT: Mutex<Option<(Jvmti, Vm)>> = Mutex::new(None);

/// What the lifecycle asks of the JVM ([`LifecycleVm`]), on the thread
/// that starts or stops a session (`VMInit`'s, the attach's, `VMDeath`'s,
/// the duration's stop thread, the exit hook's), through the agent's JVMTI
/// environment.
pub(super) struct LifecycleJvm(pub(super) Jni);

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
pub(super) fn enable_if_matching(jvmti: Jvmti, jni: Jni, pattern: &glob::Pattern, thread: jobject) {
    if let Ok(name) = jvmti.thread_name(jni, thread)
        && pattern.matches(&name)
    {
        let _ = jvmti.set_thread_event(true, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, thread);
    }
}
