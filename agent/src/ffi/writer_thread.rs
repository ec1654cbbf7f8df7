//! The writer thread's contact with the JVM: the thread itself, attached
//! as a daemon and never sampled, and [`JvmtiVm`], its view of the JVM
//! through JVMTI, JNI and the management interface, which implements the
//! VM traits of the session's writer loop ([`SessionVm`]), the writer
//! ([`writer::Vm`] and the traits it extends) and the callbacks' keys
//! ([`KeysVm`]).

use std::ffi::CStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use heapsampler_core::options::{LiveSetAt, LogLevel};
use heapsampler_core::ring::Consumer;
use jfr_writer::{FileSink, Recording};
use jni::sys::{jclass, jfieldID, jint, jobject};

use super::heap_walk;
use super::jni::Jni;
use super::management::{self, Management};
use super::sessions::{AGENT, JvmRunning, LOCAL, LifecycleJvm};
use crate::callback::KeysVm;
use crate::environment::{EnvironmentVm, VmFlag};
use crate::heap::{ClassLoading, Collectors, GcInfo, HeapVm, JvmInfo, NotifiedCollection};
use crate::roots::{RootLimits, RootPath, RootsVm};
use crate::session::{self, Session, SessionVm, log, say};
use crate::signature::is_hidden_signature;
use crate::threads::{ThreadAllocation, ThreadsVm, Unmeasured};
use crate::writer::{self, ClassInfo, Loader, MethodInfo, ThreadInfo};

/// The writer thread: attached to the JVM as a daemon, never sampled. It
/// runs [`session::run_writer`], then releases the session's JNI handles.
pub(super) fn writer_thread(
    running: Arc<JvmRunning>,
    recording: Recording<FileSink>,
    consumer: Consumer,
) {
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
                if AGENT.is_running(id)
                    && let Some(jni) = vm.attach_daemon(c"heapsampler-stop")
                {
                    AGENT.stop(&mut LifecycleJvm(jni), Some(id), LiveSetAt::Stop, None);
                    vm.detach();
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

impl writer::CanaryVm for JvmtiVm<'_> {
    /// A `long[1]` of the agent's own, its local reference dropped.
    fn new_canary(&mut self, strong: bool) -> Option<u64> {
        let array = self.jni.long_array(&[0])?;
        let handle = if strong {
            self.jni.global(array)
        } else {
            Some(self.jni.new_weak_global_ref(array)).filter(|weak| !weak.is_null())
        };
        self.jni.delete_local_ref(array);
        handle.map(|handle| handle as u64)
    }

    fn weaken(&mut self, strong: u64) -> Option<u64> {
        let weak = self.jni.new_weak_global_ref(strong as jobject);
        self.jni.delete_global(strong as jobject);
        (!weak.is_null()).then_some(weak as u64)
    }

    fn canary_cleared(&mut self, weak: u64) -> bool {
        self.jni.is_cleared(weak as jobject)
    }

    fn release_canary(&mut self, handle: u64, strong: bool) {
        if strong {
            self.jni.delete_global(handle as jobject);
        } else {
            self.jni.delete_weak_global_ref(handle as jobject);
        }
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
            if java_thread_id >= 0
                && let Ok(name) = jvmti.thread_name(jni, thread)
            {
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
