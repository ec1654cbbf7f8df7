//! The JVM's management interface (`java.lang.management` and
//! `com.sun.management`) over JNI: for the writer thread, the figures of
//! [`crate::heap`] and each thread's allocated bytes
//! ([`crate::threads`]); at a session's start, the HotSpot flags
//! ([`vm_option`]) and the collectors' names ([`collector_names`]) that
//! set which objects are tracked, and the shutdown hook on whose start the
//! agent collects before the JVM's exit ([`add_shutdown_hook`]).
//!
//! [`Management::new`] looks the beans, classes and methods up once and
//! keeps them (global references, method ids), and adds a listener to the
//! collectors' notifications that queues them ([`GcNotifications`]), so
//! that a poll is one `poll()` of the queue when no collection ran, and for
//! each notified collection its `GcInfo` and its maps read for the heap's
//! and the metaspace's pools, whose names are kept too. Before it adds the
//! listener, a made-up notification through it loads the classes the
//! notifications need ([`GcNotifications::rehearse`]). Every call runs
//! inside a local frame that
//! frees its local references, and a pending exception is cleared and makes
//! the answer `None`: a JVM without the management modules (a jlinked
//! runtime) gives no such events, never a crash.

use std::ffi::{CStr, CString};
use std::ptr;

use jni::sys::{jclass, jint, jmethodID, jobject, jvalue};

use super::jni::Jni;
use crate::environment::VmFlag;
use crate::heap::{
    ClassLoading, Collectors, GcInfo, HeapUsage, JvmInfo, Metaspace, NotifiedCollection, SpaceUsage,
};
use crate::threads::Unmeasured;

/// `java.util.List`'s `size()` and `get(int)`.
struct ListMethods {
    size: jmethodID,
    get: jmethodID,
}

impl ListMethods {
    /// The elements of a `java.util.List`: local references.
    fn elements(&self, jni: Jni, list: jobject) -> Option<Vec<jobject>> {
        let size = jni.int(list, self.size)?;
        (0..size)
            .map(|at| jni.object(list, self.get, &[jvalue { i: at }]))
            .collect()
    }

    fn new(jni: Jni) -> Option<Self> {
        let list = jni.class(c"java/util/List")?;
        Some(Self {
            size: jni.method(list, c"size", c"()I")?,
            get: jni.method(list, c"get", c"(I)Ljava/lang/Object;")?,
        })
    }
}

/// The collectors, their `GcInfo`, and the heap's pools.
struct GcBeans {
    /// `com.sun.management.GarbageCollectorMXBean`s, global references.
    beans: Vec<jobject>,
    names: Vec<String>,
    /// The names of the heap's pools (`MemoryType.HEAP`): global
    /// references to Java strings, keys of `GcInfo`'s usage maps.
    heap_pools: Vec<jobject>,
    heap_reserved: u64,
    /// The metaspace's pools' names (`Metaspace`, `Compressed Class
    /// Space`), global references; `None` if the JVM has no such pool.
    metaspace_pool: Option<jobject>,
    class_space_pool: Option<jobject>,
    last_gc_info: jmethodID,
    info_id: jmethodID,
    info_start: jmethodID,
    info_end: jmethodID,
    usage_before: jmethodID,
    usage_after: jmethodID,
    map_get: jmethodID,
    used: jmethodID,
    committed: jmethodID,
    max: jmethodID,
}

impl GcBeans {
    /// A `GcInfo`'s figures: its usage maps summed over the heap's pools,
    /// and the metaspace's pools.
    fn read_info(&self, jni: Jni, info: jobject) -> Option<GcInfo> {
        let usage_of = |map: jobject, pool: jobject| -> Option<Option<SpaceUsage>> {
            // A pool missing from the map: not one this collector reports on.
            let Some(usage) = jni.object(map, self.map_get, &[jvalue { l: pool }]) else {
                return Some(None);
            };
            let max = jni.long(usage, self.max)?;
            Some(Some(SpaceUsage {
                used: jni.long(usage, self.used)?.max(0) as u64,
                committed: jni.long(usage, self.committed)?.max(0) as u64,
                max: (max >= 0).then_some(max as u64),
            }))
        };
        let read = |getter| -> Option<(HeapUsage, Option<Metaspace>)> {
            let map = jni.object(info, getter, &[])?;
            let mut heap = HeapUsage::default();
            for &pool in &self.heap_pools {
                if let Some(usage) = usage_of(map, pool)? {
                    heap.used += usage.used;
                    heap.committed += usage.committed;
                }
            }
            let metaspace = match self.metaspace_pool {
                Some(pool) => usage_of(map, pool)?.map(|all| Metaspace {
                    all,
                    class_space: None,
                }),
                None => None,
            };
            let metaspace = match (metaspace, self.class_space_pool) {
                (Some(metaspace), Some(pool)) => Some(Metaspace {
                    class_space: usage_of(map, pool)?,
                    ..metaspace
                }),
                (metaspace, _) => metaspace,
            };
            Some((heap, metaspace))
        };
        let (before, metaspace_before) = read(self.usage_before)?;
        let (after, metaspace_after) = read(self.usage_after)?;
        Some(GcInfo {
            id: jni.long(info, self.info_id)?.max(0) as u64,
            start_millis: jni.long(info, self.info_start)?,
            end_millis: jni.long(info, self.info_end)?,
            before,
            after,
            metaspace_before,
            metaspace_after,
        })
    }
}

/// The collectors' notifications, each handed to a bounded queue by a
/// listener made of the queue's `offer` ([`GcNotifications::listen`]): no
/// class of the agent's own runs in the JVM, the JVM's notification thread
/// never waits (a full queue refuses, and the collection's id left out
/// says so), and the writer drains the queue when it polls.
struct GcNotifications {
    /// The `ArrayBlockingQueue`, a global reference.
    queue: jobject,
    /// The `NotificationListener`, a global reference, removed at release.
    listener: jobject,
    poll: jmethodID,
    user_data: jmethodID,
    /// `GarbageCollectionNotificationInfo`, a global reference, and its
    /// methods.
    info_class: jclass,
    from: jmethodID,
    gc_name: jmethodID,
    gc_cause: jmethodID,
    gc_action: jmethodID,
    gc_info: jmethodID,
    remove_listener: jmethodID,
}

/// How many notifications wait for the writer at most: a few seconds of
/// the busiest collector's collections; more are refused, and counted.
const NOTIFICATION_QUEUE: jint = 4096;

impl GcNotifications {
    /// Makes the queue and its listener, rehearses the collections'
    /// notifications through them ([`GcNotifications::rehearse`]), and
    /// adds the listener to each of `gc`'s collectors (every one is a
    /// `NotificationEmitter`). Global references go to `keep`.
    fn listen(
        jni: Jni,
        gc: &GcBeans,
        classes: Option<&ClassBean>,
        keep: &mut Vec<jobject>,
    ) -> Option<Self> {
        let queue_class = jni.class(c"java/util/concurrent/ArrayBlockingQueue")?;
        let queue_init = jni.method(queue_class, c"<init>", c"(I)V")?;
        let queue = jni.new_object(
            queue_class,
            queue_init,
            &[jvalue {
                i: NOTIFICATION_QUEUE,
            }],
        )?;
        // MethodHandles.publicLookup().findVirtual(ArrayBlockingQueue.class,
        // "offer", methodType(boolean.class, Object.class)).bindTo(queue)
        let handles = jni.class(c"java/lang/invoke/MethodHandles")?;
        let lookup_class = jni.class(c"java/lang/invoke/MethodHandles$Lookup")?;
        let handle_class = jni.class(c"java/lang/invoke/MethodHandle")?;
        let type_class = jni.class(c"java/lang/invoke/MethodType")?;
        let object_class = jni.class(c"java/lang/Object")?;
        let class_class = jni.class(c"java/lang/Class")?;
        let boolean_class = jni.class(c"java/lang/Boolean")?;
        let boolean = jni.static_field(boolean_class, c"TYPE", c"Ljava/lang/Class;")?;
        let public_lookup = jni.static_method(
            handles,
            c"publicLookup",
            c"()Ljava/lang/invoke/MethodHandles$Lookup;",
        )?;
        let lookup = jni.static_object(handles, public_lookup, &[])?;
        let method_type = jni.static_method(
            type_class,
            c"methodType",
            c"(Ljava/lang/Class;Ljava/lang/Class;)Ljava/lang/invoke/MethodType;",
        )?;
        let offer_type = jni.static_object(
            type_class,
            method_type,
            &[jvalue { l: boolean }, jvalue { l: object_class }],
        )?;
        let find_virtual = jni.method(
            lookup_class,
            c"findVirtual",
            c"(Ljava/lang/Class;Ljava/lang/String;Ljava/lang/invoke/MethodType;)Ljava/lang/invoke/MethodHandle;",
        )?;
        let offer = jni.object(
            lookup,
            find_virtual,
            &[
                jvalue { l: queue_class },
                jvalue {
                    l: jni.string(c"offer")?,
                },
                jvalue { l: offer_type },
            ],
        )?;
        let bind_to = jni.method(
            handle_class,
            c"bindTo",
            c"(Ljava/lang/Object;)Ljava/lang/invoke/MethodHandle;",
        )?;
        let offer = jni.object(offer, bind_to, &[jvalue { l: queue }])?;
        // (Object)boolean -> (Object, Object)boolean: the handback is
        // dropped; the proxy adapts the rest to handleNotification's
        // (Notification, Object)void.
        let drop_arguments = jni.static_method(
            handles,
            c"dropArguments",
            c"(Ljava/lang/invoke/MethodHandle;I[Ljava/lang/Class;)Ljava/lang/invoke/MethodHandle;",
        )?;
        let dropped = jni.array_of(1, class_class, object_class)?;
        let handler = jni.static_object(
            handles,
            drop_arguments,
            &[jvalue { l: offer }, jvalue { i: 1 }, jvalue { l: dropped }],
        )?;
        let proxies = jni.class(c"java/lang/invoke/MethodHandleProxies")?;
        let as_interface = jni.static_method(
            proxies,
            c"asInterfaceInstance",
            c"(Ljava/lang/Class;Ljava/lang/invoke/MethodHandle;)Ljava/lang/Object;",
        )?;
        let listener_class = jni.class(c"javax/management/NotificationListener")?;
        let listener = jni.static_object(
            proxies,
            as_interface,
            &[jvalue { l: listener_class }, jvalue { l: handler }],
        )?;
        let emitter = jni.class(c"javax/management/NotificationEmitter")?;
        let add_listener = jni.method(
            emitter,
            c"addNotificationListener",
            c"(Ljavax/management/NotificationListener;Ljavax/management/NotificationFilter;Ljava/lang/Object;)V",
        )?;
        let remove_listener = jni.method(
            emitter,
            c"removeNotificationListener",
            c"(Ljavax/management/NotificationListener;)V",
        )?;
        let notification = jni.class(c"javax/management/Notification")?;
        let info_class = jni.class(c"com/sun/management/GarbageCollectionNotificationInfo")?;
        let keep_global = |keep: &mut Vec<jobject>, object: jobject| {
            let global = jni.global(object)?;
            keep.push(global);
            Some(global)
        };
        for class in [queue_class, notification, emitter] {
            keep_global(keep, class)?;
        }
        let clear = jni.method(queue_class, c"clear", c"()V")?;
        let notifications = Self {
            queue: keep_global(keep, queue)?,
            listener: keep_global(keep, listener)?,
            poll: jni.method(queue_class, c"poll", c"()Ljava/lang/Object;")?,
            user_data: jni.method(notification, c"getUserData", c"()Ljava/lang/Object;")?,
            from: jni.static_method(
                info_class,
                c"from",
                c"(Ljavax/management/openmbean/CompositeData;)Lcom/sun/management/GarbageCollectionNotificationInfo;",
            )?,
            gc_name: jni.method(info_class, c"getGcName", c"()Ljava/lang/String;")?,
            gc_cause: jni.method(info_class, c"getGcCause", c"()Ljava/lang/String;")?,
            gc_action: jni.method(info_class, c"getGcAction", c"()Ljava/lang/String;")?,
            gc_info: jni.method(info_class, c"getGcInfo", c"()Lcom/sun/management/GcInfo;")?,
            info_class: keep_global(keep, info_class)?,
            remove_listener,
        };
        // A rehearsal that fails changes nothing but when the classes
        // load; one cut short may leave its notification queued, and none
        // is a collection.
        let _ = jni.frame(64, || notifications.rehearse(jni, gc, classes));
        jni.void(notifications.queue, clear, &[])?;
        let listener = notifications.listener;
        let null = jvalue { l: ptr::null_mut() };
        for &bean in &gc.beans {
            jni.void(bean, add_listener, &[jvalue { l: listener }, null, null])?;
        }
        Some(notifications)
    }

    /// The next notification off the queue, read; `None` when the queue is
    /// empty, `Some(None)` for one that cannot be read. Its local
    /// references are the caller's frame's.
    fn next(&self, jni: Jni, gc: &GcBeans) -> Option<Option<NotifiedCollection>> {
        let notification = jni.object(self.queue, self.poll, &[])?;
        let read = || {
            let data = jni.object(notification, self.user_data, &[])?;
            let info = jni.static_object(self.info_class, self.from, &[jvalue { l: data }])?;
            let text = |method| jni.text(jni.object(info, method, &[])?);
            Some(NotifiedCollection {
                collector: text(self.gc_name)?,
                cause: Some(text(self.gc_cause)?),
                action: Some(text(self.gc_action)?),
                info: gc.read_info(jni, jni.object(info, self.gc_info, &[])?)?,
            })
        };
        Some(read())
    }

    /// Makes each collector's notification of a made-up collection as the
    /// JVM makes a collection's, hands it to the listener and reads it
    /// back off the queue as the writer reads one, round after round until
    /// a round loads no class ([`REHEARSALS`] rounds at most); `None` if
    /// the JVM's classes are not those of JDK 17 to 25 (the JVM makes a
    /// notification only for a collector with a listener, so this runs
    /// before the listener is added).
    ///
    /// The first notification the JVM makes, and the first the writer
    /// reads, load some two hundred classes (open types and the reflection
    /// they use, method handle forms; on JDK 17 also a generated accessor
    /// for a method called reflectively a 16th time): 540 to 580 KiB of
    /// metaspace on JDK 17. Left to the first collection, that growth would show in
    /// the metaspace after the next ones, and Mission Control reads a
    /// rising metaspace as a class leak of the application's
    /// (`IncreasingMetaSpaceLiveSet`); rehearsed here, it comes before
    /// any collection whose notification the recording writes.
    fn rehearse(&self, jni: Jni, gc: &GcBeans, classes: Option<&ClassBean>) -> Option<()> {
        let maker = NotificationMaker::new(jni)?;
        let loaded = || classes.and_then(|classes| jni.long(classes.bean, classes.loaded));
        for _ in 0..REHEARSALS {
            let before = loaded();
            for (&bean, name) in gc.beans.iter().zip(&gc.names) {
                jni.frame(32 + 2 * gc.heap_pools.len() as jint, || {
                    let notification = maker.notification(jni, bean, name)?;
                    let null = jvalue { l: ptr::null_mut() };
                    jni.void(
                        self.listener,
                        maker.handle,
                        &[jvalue { l: notification }, null],
                    )?;
                    self.next(jni, gc)?
                })?;
            }
            if before.is_none() || loaded() == before {
                break;
            }
        }
        Some(())
    }
}

/// Rounds of [`GcNotifications::rehearse`] at most: the first loads
/// nearly every class; the next finish what the first's count of calls
/// left (JDK 17's reflective accessors), and one that loads none ends it
/// unless the application loads classes meanwhile.
const REHEARSALS: usize = 8;

/// What makes a collection's notification as the JVM makes one (HotSpot's
/// `GCNotifier` makes the collection's `GcInfo` with the collector's
/// `GcInfoBuilder`, and `GarbageCollectorExtImpl.createGCNotification` the
/// rest): method ids, and local references of the caller's frame.
struct NotificationMaker {
    /// `GarbageCollectorExtImpl.getGcInfoBuilder()`, private: JNI calls it
    /// all the same, as the JVM does.
    builder: jmethodID,
    pool_names: jmethodID,
    extension_items: jmethodID,
    usage_class: jclass,
    usage_init: jmethodID,
    gc_info_class: jclass,
    gc_info_init: jmethodID,
    info_class: jclass,
    info_init: jmethodID,
    composite_class: jclass,
    to_composite: jmethodID,
    object_name: jmethodID,
    object_class: jclass,
    notification_class: jclass,
    notification_init: jmethodID,
    notification_type: jobject,
    set_user_data: jmethodID,
    /// `NotificationListener.handleNotification`.
    handle: jmethodID,
}

impl NotificationMaker {
    fn new(jni: Jni) -> Option<Self> {
        let collector = jni.class(c"com/sun/management/internal/GarbageCollectorExtImpl")?;
        let builder = jni.class(c"com/sun/management/internal/GcInfoBuilder")?;
        let usage_class = jni.class(c"java/lang/management/MemoryUsage")?;
        let gc_info_class = jni.class(c"com/sun/management/GcInfo")?;
        let info_class = jni.class(c"com/sun/management/GarbageCollectionNotificationInfo")?;
        let composite_class =
            jni.class(c"com/sun/management/internal/GarbageCollectionNotifInfoCompositeData")?;
        let managed = jni.class(c"java/lang/management/PlatformManagedObject")?;
        let notification_class = jni.class(c"javax/management/Notification")?;
        let listener = jni.class(c"javax/management/NotificationListener")?;
        Some(Self {
            builder: jni.method(
                collector,
                c"getGcInfoBuilder",
                c"()Lcom/sun/management/internal/GcInfoBuilder;",
            )?,
            pool_names: jni.method(builder, c"getPoolNames", c"()[Ljava/lang/String;")?,
            extension_items: jni.method(builder, c"getGcExtItemCount", c"()I")?,
            usage_init: jni.method(usage_class, c"<init>", c"(JJJJ)V")?,
            usage_class,
            gc_info_init: jni.method(
                gc_info_class,
                c"<init>",
                c"(Lcom/sun/management/internal/GcInfoBuilder;JJJ[Ljava/lang/management/MemoryUsage;[Ljava/lang/management/MemoryUsage;[Ljava/lang/Object;)V",
            )?,
            gc_info_class,
            info_init: jni.method(
                info_class,
                c"<init>",
                c"(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;Lcom/sun/management/GcInfo;)V",
            )?,
            notification_type: jni.static_field(
                info_class,
                c"GARBAGE_COLLECTION_NOTIFICATION",
                c"Ljava/lang/String;",
            )?,
            info_class,
            to_composite: jni.static_method(
                composite_class,
                c"toCompositeData",
                c"(Lcom/sun/management/GarbageCollectionNotificationInfo;)Ljavax/management/openmbean/CompositeData;",
            )?,
            composite_class,
            object_name: jni.method(managed, c"getObjectName", c"()Ljavax/management/ObjectName;")?,
            object_class: jni.class(c"java/lang/Object")?,
            notification_init: jni.method(
                notification_class,
                c"<init>",
                c"(Ljava/lang/String;Ljava/lang/Object;JJLjava/lang/String;)V",
            )?,
            set_user_data: jni.method(notification_class, c"setUserData", c"(Ljava/lang/Object;)V")?,
            notification_class,
            handle: jni.method(
                listener,
                c"handleNotification",
                c"(Ljavax/management/Notification;Ljava/lang/Object;)V",
            )?,
        })
    }

    /// The notification of a made-up collection by `collector` (named
    /// `name`): every pool empty, the collector's own attributes null.
    fn notification(&self, jni: Jni, collector: jobject, name: &str) -> Option<jobject> {
        let name = jni.string(&CString::new(name).ok()?)?;
        let builder = jni.object(collector, self.builder, &[])?;
        let pools = jni.length(jni.object(builder, self.pool_names, &[])?)?;
        let extension_items = jni.int(builder, self.extension_items)?;
        let usage = jni.new_object(
            self.usage_class,
            self.usage_init,
            &[
                jvalue { j: 0 },
                jvalue { j: 0 },
                jvalue { j: 0 },
                jvalue { j: -1 },
            ],
        )?;
        let usages = || jni.array_of(pools, self.usage_class, usage);
        let gc_info = jni.new_object(
            self.gc_info_class,
            self.gc_info_init,
            &[
                jvalue { l: builder },
                jvalue { j: 0 },
                jvalue { j: 0 },
                jvalue { j: 0 },
                jvalue { l: usages()? },
                jvalue { l: usages()? },
                jvalue {
                    l: jni.array_of(extension_items, self.object_class, ptr::null_mut())?,
                },
            ],
        )?;
        let info = jni.new_object(
            self.info_class,
            self.info_init,
            &[
                jvalue { l: name },
                jvalue {
                    l: jni.string(c"end of minor GC")?,
                },
                jvalue {
                    l: jni.string(c"Allocation Failure")?,
                },
                jvalue { l: gc_info },
            ],
        )?;
        let data = jni.static_object(
            self.composite_class,
            self.to_composite,
            &[jvalue { l: info }],
        )?;
        let notification = jni.new_object(
            self.notification_class,
            self.notification_init,
            &[
                jvalue {
                    l: self.notification_type,
                },
                jvalue {
                    l: jni.object(collector, self.object_name, &[])?,
                },
                jvalue { j: 0 },
                jvalue { j: 0 },
                jvalue { l: name },
            ],
        )?;
        jni.void(notification, self.set_user_data, &[jvalue { l: data }])?;
        Some(notification)
    }
}

/// The `ClassLoadingMXBean`, a global reference, and its counts.
struct ClassBean {
    bean: jobject,
    loaded: jmethodID,
    unloaded: jmethodID,
}

/// The `ThreadMXBean`, a global reference, and the methods that give the
/// threads' allocated bytes, looked up on its class (JDK 17's
/// `sun.management.ThreadImpl` has them, protected, for
/// `com.sun.management`'s subclass; JNI calls them all the same).
struct ThreadBean {
    bean: jobject,
    supported: jmethodID,
    enabled: jmethodID,
    allocated: jmethodID,
}

/// Loads jdk.management's native library by initialising the module's
/// bean provider, as `ManagementFactory` does before it hands out any of
/// the module's beans: without it, the collectors' `getLastGcInfo()` and
/// `HotSpotDiagnostic`'s calls throw `UnsatisfiedLinkError`. `None` if the
/// provider is missing or its initialiser throws.
fn load_management_ext(jni: Jni) -> Option<()> {
    let provider = jni.class(c"com/sun/management/internal/PlatformMBeanProviderImpl")?;
    // Looking a method up initialises its class.
    jni.method(provider, c"<init>", c"()V")?;
    Some(())
}

/// The class whose static getters give the platform beans: a local
/// reference.
///
/// `java.lang.management.ManagementFactory`'s getters forward to
/// `sun.management.ManagementFactoryHelper`'s, of the same names and
/// signatures, after a set-up of their own (the platform bean providers
/// found by `ServiceLoader`, streams and their lambdas) that costs more
/// CPU than the beans (BENCHMARKS.md, "The management interface's
/// one-time cost"). So the helper is asked directly: its package is not
/// exported, but JNI is not bound by module exports. A JDK without the
/// internal classes gets the public factory, as a runtime without
/// jdk.management does in the JVM test
/// `a_runtime_without_the_management_modules_records_without_their_events`.
fn platform_factory(jni: Jni) -> Option<jclass> {
    let internal = || {
        load_management_ext(jni)?;
        jni.class(c"sun/management/ManagementFactoryHelper")
    };
    internal().or_else(|| jni.class(c"java/lang/management/ManagementFactory"))
}

/// A `HotSpotDiagnosticMXBean` (`interface`): a local reference.
/// jdk.management's implementation,
/// `com.sun.management.internal.HotSpotDiagnostic`, is made directly for
/// the reason of [`platform_factory`]; a JDK without it gets the bean from
/// `ManagementFactory.getPlatformMXBean`.
fn diagnostic_bean(jni: Jni, interface: jclass) -> Option<jobject> {
    let internal = || {
        load_management_ext(jni)?;
        let class = jni.class(c"com/sun/management/internal/HotSpotDiagnostic")?;
        let init = jni.method(class, c"<init>", c"()V")?;
        jni.new_object(class, init, &[])
    };
    internal().or_else(|| {
        let factory = jni.class(c"java/lang/management/ManagementFactory")?;
        let getter = jni.static_method(
            factory,
            c"getPlatformMXBean",
            c"(Ljava/lang/Class;)Ljava/lang/management/PlatformManagedObject;",
        )?;
        jni.static_object(factory, getter, &[jvalue { l: interface }])
    })
}

/// A HotSpot flag's value as text (`"true"`, `"4194304"`), from
/// `HotSpotDiagnosticMXBean.getVMOption`; `None` when the management
/// classes are missing (a jlinked runtime) or a call throws. The first
/// call loads management classes, some milliseconds once.
pub fn vm_option(jni: Jni, name: &CStr) -> Option<String> {
    vm_flag(jni, name).map(|flag| flag.value)
}

/// The names of the JVM's garbage collectors
/// (`ManagementFactory.getGarbageCollectorMXBeans()`, each bean's
/// `getName()`: `ZGC Minor Cycles`, `G1 Young Generation`); `None` when the
/// management classes are missing or a call throws.
pub fn collector_names(jni: Jni) -> Option<Vec<String>> {
    jni.frame(32, || {
        let factory = platform_factory(jni)?;
        let list = ListMethods::new(jni)?;
        let manager = jni.class(c"java/lang/management/MemoryManagerMXBean")?;
        let name = jni.method(manager, c"getName", c"()Ljava/lang/String;")?;
        let getter = jni.static_method(
            factory,
            c"getGarbageCollectorMXBeans",
            c"()Ljava/util/List;",
        )?;
        let beans = jni.static_object(factory, getter, &[])?;
        list.elements(jni, beans)?
            .into_iter()
            .map(|bean| jni.text(jni.object(bean, name, &[])?))
            .collect()
    })
}

/// The Java system property `name` (`System.getProperty`), `None` when
/// it is not set or the call throws.
pub fn system_property(jni: Jni, name: &str) -> Option<String> {
    let name = CString::new(name).ok()?;
    jni.frame(4, || {
        let system = jni.class(c"java/lang/System")?;
        let get = jni.static_method(
            system,
            c"getProperty",
            c"(Ljava/lang/String;)Ljava/lang/String;",
        )?;
        let key = jni.string(&name)?;
        jni.text(jni.static_object(system, get, &[jvalue { l: key }])?)
    })
}

/// Sets the Java system property `name` to `value`
/// (`System.setProperty`), or clears it (`System.clearProperty`) for
/// `None`; whether the call returned without throwing.
pub fn set_system_property(jni: Jni, name: &str, value: Option<&str>) -> bool {
    let (Ok(name), Ok(value)) = (CString::new(name), value.map(CString::new).transpose()) else {
        return false;
    };
    jni.frame(4, || {
        let system = jni.class(c"java/lang/System")?;
        let key = jni.string(&name)?;
        // Both return the property's previous value, null if none: not
        // a failure, so only a pending exception is one.
        let (method, args) = match &value {
            Some(value) => (
                jni.static_method(
                    system,
                    c"setProperty",
                    c"(Ljava/lang/String;Ljava/lang/String;)Ljava/lang/String;",
                )?,
                vec![
                    jvalue { l: key },
                    jvalue {
                        l: jni.string(value)?,
                    },
                ],
            ),
            None => (
                jni.static_method(
                    system,
                    c"clearProperty",
                    c"(Ljava/lang/String;)Ljava/lang/String;",
                )?,
                vec![jvalue { l: key }],
            ),
        };
        // The previous value, or null.
        jni.static_object_or_null(system, method, &args).map(drop)
    })
    .is_some()
}

/// Registers a shutdown hook that runs no code of its own: a new
/// `Thread` named `name`, with no task, given to
/// `Runtime.addShutdownHook`. The JVM starts it when it begins to exit,
/// and the agent's `ThreadStart` callback runs on it before its empty
/// `run()`: code of the agent's at the exit, before the JVM stops its
/// collector's threads, without a class of the agent's own. A global
/// reference to the thread, `None` if refused (the JVM is already
/// exiting).
pub fn add_shutdown_hook(jni: Jni, name: &CStr) -> Option<jobject> {
    jni.frame(8, || {
        let thread_class = jni.class(c"java/lang/Thread")?;
        let init = jni.method(thread_class, c"<init>", c"(Ljava/lang/String;)V")?;
        let thread = jni.new_object(
            thread_class,
            init,
            &[jvalue {
                l: jni.string(name)?,
            }],
        )?;
        let runtime_class = jni.class(c"java/lang/Runtime")?;
        let get_runtime =
            jni.static_method(runtime_class, c"getRuntime", c"()Ljava/lang/Runtime;")?;
        let runtime = jni.static_object(runtime_class, get_runtime, &[])?;
        let add = jni.method(runtime_class, c"addShutdownHook", c"(Ljava/lang/Thread;)V")?;
        jni.void(runtime, add, &[jvalue { l: thread }])?;
        jni.global(thread)
    })
}

/// Deletes the global reference of a hook from [`add_shutdown_hook`],
/// withdrawing the hook first if `withdraw` (a recording that ends while
/// the JVM runs on); a JVM already exiting refuses (its hooks have
/// started), which changes nothing.
pub fn remove_shutdown_hook(jni: Jni, hook: jobject, withdraw: bool) {
    if withdraw {
        // Whether it was registered, or why not: nothing to do either way.
        let _ = jni.frame(4, || {
            let runtime_class = jni.class(c"java/lang/Runtime")?;
            let get_runtime =
                jni.static_method(runtime_class, c"getRuntime", c"()Ljava/lang/Runtime;")?;
            let runtime = jni.static_object(runtime_class, get_runtime, &[])?;
            let remove = jni.method(
                runtime_class,
                c"removeShutdownHook",
                c"(Ljava/lang/Thread;)Z",
            )?;
            jni.boolean(runtime, remove, &[jvalue { l: hook }])
        });
    }
    jni.delete_global(hook);
}

/// A HotSpot flag's value and where it came from (`VMOption.getOrigin()`),
/// as [`vm_flags`] reads it.
pub fn vm_flag(jni: Jni, name: &CStr) -> Option<VmFlag> {
    let name = name.to_str().ok()?;
    vm_flags(jni, &[name]).pop().flatten()
}

/// The management interface's beans and methods, looked up once on the
/// writer thread. Its global references are deleted by
/// [`Management::release`].
pub struct Management {
    gc: Option<GcBeans>,
    /// `None` if the listener could not be made or added.
    notifications: Option<GcNotifications>,
    classes: Option<ClassBean>,
    threads: Option<ThreadBean>,
    /// The `RuntimeMXBean`, a global reference.
    runtime: Option<jobject>,
    /// Every global reference held, for [`Management::release`].
    globals: Vec<jobject>,
}

/// Why the JVM's management interface is not there.
#[derive(Debug, thiserror::Error)]
pub enum ManagementError {
    /// `ManagementFactory` or a class it needs is missing.
    #[error(
        "java.lang.management.ManagementFactory is missing (a runtime without java.management)"
    )]
    Missing,
}

impl Management {
    /// Looks the beans up through [`platform_factory`]; an error says why
    /// there are none (the management classes missing, say). Loads the
    /// management classes, some milliseconds once.
    pub fn new(jni: Jni) -> Result<Self, ManagementError> {
        let mut management = Self {
            gc: None,
            notifications: None,
            classes: None,
            threads: None,
            runtime: None,
            globals: Vec::new(),
        };
        let found = jni.frame(64, || {
            let factory = platform_factory(jni)?;
            let list = ListMethods::new(jni)?;
            // Every bean before the listener: their classes load before
            // any collection the recording writes (see `rehearse`).
            management.classes = management.class_bean(jni, factory);
            management.threads = management.thread_bean(jni, factory);
            management.runtime = management.bean(
                jni,
                factory,
                c"getRuntimeMXBean",
                c"()Ljava/lang/management/RuntimeMXBean;",
            );
            management.gc = management.gc_beans(jni, factory, &list);
            if let Some(gc) = &management.gc {
                // In its own frame: a failure leaves the rest found.
                management.notifications = jni.frame(64, || {
                    GcNotifications::listen(
                        jni,
                        gc,
                        management.classes.as_ref(),
                        &mut management.globals,
                    )
                });
            }
            Some(())
        });
        if found.is_none() {
            management.release(jni);
            return Err(ManagementError::Missing);
        }
        Ok(management)
    }

    /// A global reference to `object`, remembered for release.
    fn keep(&mut self, jni: Jni, object: jobject) -> Option<jobject> {
        let global = jni.global(object)?;
        self.globals.push(global);
        Some(global)
    }

    /// A platform bean from a static `ManagementFactory` getter, kept.
    fn bean(
        &mut self,
        jni: Jni,
        factory: jclass,
        getter: &CStr,
        signature: &CStr,
    ) -> Option<jobject> {
        let method = jni.static_method(factory, getter, signature)?;
        let bean = jni.static_object(factory, method, &[])?;
        self.keep(jni, bean)
    }

    fn class_bean(&mut self, jni: Jni, factory: jclass) -> Option<ClassBean> {
        let class = jni.class(c"java/lang/management/ClassLoadingMXBean")?;
        self.keep(jni, class)?;
        let loaded = jni.method(class, c"getTotalLoadedClassCount", c"()J")?;
        let unloaded = jni.method(class, c"getUnloadedClassCount", c"()J")?;
        let bean = self.bean(
            jni,
            factory,
            c"getClassLoadingMXBean",
            c"()Ljava/lang/management/ClassLoadingMXBean;",
        )?;
        Some(ClassBean {
            bean,
            loaded,
            unloaded,
        })
    }

    fn thread_bean(&mut self, jni: Jni, factory: jclass) -> Option<ThreadBean> {
        let bean = self.bean(
            jni,
            factory,
            c"getThreadMXBean",
            c"()Ljava/lang/management/ThreadMXBean;",
        )?;
        let class = jni.class_of(bean)?;
        self.keep(jni, class)?;
        Some(ThreadBean {
            bean,
            supported: jni.method(class, c"isThreadAllocatedMemorySupported", c"()Z")?,
            enabled: jni.method(class, c"isThreadAllocatedMemoryEnabled", c"()Z")?,
            allocated: jni.method(class, c"getThreadAllocatedBytes", c"([J)[J")?,
        })
    }

    fn gc_beans(&mut self, jni: Jni, factory: jclass, list: &ListMethods) -> Option<GcBeans> {
        // com.sun.management's extension (module jdk.management) has the
        // GcInfo; without it, no collector's figures.
        let extended = jni.class(c"com/sun/management/GarbageCollectorMXBean")?;
        let manager = jni.class(c"java/lang/management/MemoryManagerMXBean")?;
        let info = jni.class(c"com/sun/management/GcInfo")?;
        let map = jni.class(c"java/util/Map")?;
        let usage = jni.class(c"java/lang/management/MemoryUsage")?;
        let pool = jni.class(c"java/lang/management/MemoryPoolMXBean")?;
        let memory_type = jni.class(c"java/lang/management/MemoryType")?;
        let memory = jni.class(c"java/lang/management/MemoryMXBean")?;
        // The classes whose method ids a poll calls are held, so that the
        // ids stay valid (a method id lives as long as its class; these
        // are the boot loader's, never unloaded, but that is the JVM's
        // business).
        for class in [extended, info, map, usage] {
            self.keep(jni, class)?;
        }
        let manager_name = jni.method(manager, c"getName", c"()Ljava/lang/String;")?;
        let pool_name = jni.method(pool, c"getName", c"()Ljava/lang/String;")?;
        let pool_type = jni.method(pool, c"getType", c"()Ljava/lang/management/MemoryType;")?;
        let heap_type =
            jni.static_field(memory_type, c"HEAP", c"Ljava/lang/management/MemoryType;")?;
        let max = jni.method(usage, c"getMax", c"()J")?;
        let heap_usage = jni.method(
            memory,
            c"getHeapMemoryUsage",
            c"()Ljava/lang/management/MemoryUsage;",
        )?;
        let mut gc = GcBeans {
            beans: Vec::new(),
            names: Vec::new(),
            heap_pools: Vec::new(),
            heap_reserved: 0,
            metaspace_pool: None,
            class_space_pool: None,
            last_gc_info: jni.method(
                extended,
                c"getLastGcInfo",
                c"()Lcom/sun/management/GcInfo;",
            )?,
            info_id: jni.method(info, c"getId", c"()J")?,
            info_start: jni.method(info, c"getStartTime", c"()J")?,
            info_end: jni.method(info, c"getEndTime", c"()J")?,
            usage_before: jni.method(info, c"getMemoryUsageBeforeGc", c"()Ljava/util/Map;")?,
            usage_after: jni.method(info, c"getMemoryUsageAfterGc", c"()Ljava/util/Map;")?,
            map_get: jni.method(map, c"get", c"(Ljava/lang/Object;)Ljava/lang/Object;")?,
            used: jni.method(usage, c"getUsed", c"()J")?,
            committed: jni.method(usage, c"getCommitted", c"()J")?,
            max,
        };
        let getter = jni.static_method(
            factory,
            c"getGarbageCollectorMXBeans",
            c"()Ljava/util/List;",
        )?;
        let beans = jni.static_object(factory, getter, &[])?;
        for bean in list.elements(jni, beans)? {
            if !jni.is_instance(bean, extended) {
                continue;
            }
            let name = jni.object(bean, manager_name, &[])?;
            gc.names.push(jni.text(name)?);
            gc.beans.push(self.keep(jni, bean)?);
        }
        let getter = jni.static_method(factory, c"getMemoryPoolMXBeans", c"()Ljava/util/List;")?;
        let pools = jni.static_object(factory, getter, &[])?;
        for pool in list.elements(jni, pools)? {
            let kind = jni.object(pool, pool_type, &[])?;
            let name = jni.object(pool, pool_name, &[])?;
            if jni.is_same_object(kind, heap_type) {
                gc.heap_pools.push(self.keep(jni, name)?);
                continue;
            }
            match jni.text(name)?.as_str() {
                "Metaspace" => gc.metaspace_pool = Some(self.keep(jni, name)?),
                "Compressed Class Space" => gc.class_space_pool = Some(self.keep(jni, name)?),
                _ => {}
            }
        }
        let getter = jni.static_method(
            factory,
            c"getMemoryMXBean",
            c"()Ljava/lang/management/MemoryMXBean;",
        )?;
        let memory_bean = jni.static_object(factory, getter, &[])?;
        let heap = jni.object(memory_bean, heap_usage, &[])?;
        gc.heap_reserved = jni.long(heap, max)?.max(0) as u64;
        Some(gc)
    }

    /// The collectors and the heap's size limit; `None` without the
    /// collectors' `GcInfo`.
    pub fn collectors(&self) -> Option<Collectors> {
        self.gc.as_ref().map(|gc| Collectors {
            names: gc.names.clone(),
            heap_reserved: gc.heap_reserved,
        })
    }

    /// Collector `collector`'s `getLastGcInfo()`: its last collection
    /// before the notifications began.
    pub fn last_collection(&self, jni: Jni, collector: usize) -> Option<GcInfo> {
        let gc = self.gc.as_ref()?;
        let bean = *gc.beans.get(collector)?;
        jni.frame(32 + 2 * gc.heap_pools.len() as jint, || {
            let info = jni.object(bean, gc.last_gc_info, &[])?;
            gc.read_info(jni, info)
        })
    }

    /// The collections notified since the last call, in the order the JVM
    /// notified them; empty without notifications. Each is read in its own
    /// frame: the queue may hold thousands.
    pub fn notified_collections(&self, jni: Jni) -> Vec<NotifiedCollection> {
        let (Some(gc), Some(notifications)) = (&self.gc, &self.notifications) else {
            return Vec::new();
        };
        let mut notified = Vec::new();
        loop {
            let next = jni.frame(32 + 2 * gc.heap_pools.len() as jint, || {
                Some(notifications.next(jni, gc))
            });
            // One that cannot be read is left out (its id then counts as
            // missed); the queue is drained on.
            match next {
                Some(Some(Some(collection))) => notified.push(collection),
                Some(Some(None)) => {}
                _ => break,
            }
        }
        notified
    }

    /// The `ClassLoadingMXBean`'s counts.
    pub fn class_loading(&self, jni: Jni) -> Option<ClassLoading> {
        let classes = self.classes.as_ref()?;
        Some(ClassLoading {
            loaded: jni.long(classes.bean, classes.loaded)?.max(0) as u64,
            unloaded: jni.long(classes.bean, classes.unloaded)?.max(0) as u64,
        })
    }

    /// The bytes each of the threads of Java ids `ids` allocated since it
    /// started (`getThreadAllocatedBytes(long[])`, one call), -1 for one
    /// no longer alive; why none if the JVM does not measure them.
    pub fn thread_allocated_bytes(&self, jni: Jni, ids: &[i64]) -> Result<Vec<i64>, Unmeasured> {
        let threads = self.threads.as_ref().ok_or(Unmeasured::Unavailable)?;
        match jni.boolean(threads.bean, threads.supported, &[]) {
            Some(true) => {}
            Some(false) => return Err(Unmeasured::Unsupported),
            None => return Err(Unmeasured::Unavailable),
        }
        match jni.boolean(threads.bean, threads.enabled, &[]) {
            Some(true) => {}
            Some(false) => return Err(Unmeasured::Disabled),
            None => return Err(Unmeasured::Unavailable),
        }
        jni.frame(4, || {
            let ids = jni.long_array(ids)?;
            let bytes = jni.object(threads.bean, threads.allocated, &[jvalue { l: ids }])?;
            jni.longs(bytes)
        })
        .filter(|bytes| bytes.len() == ids.len())
        .ok_or(Unmeasured::Unavailable)
    }

    /// The `RuntimeMXBean`'s description of the JVM, with the system
    /// properties `jdk.JVMInformation` needs.
    pub fn jvm_info(&self, jni: Jni) -> Option<JvmInfo> {
        let runtime = self.runtime?;
        jni.frame(64, || {
            let bean = jni.class(c"java/lang/management/RuntimeMXBean")?;
            let system = jni.class(c"java/lang/System")?;
            let list = ListMethods::new(jni)?;
            let property = jni.static_method(
                system,
                c"getProperty",
                c"(Ljava/lang/String;)Ljava/lang/String;",
            )?;
            let text = |getter: &CStr| {
                let method = jni.method(bean, getter, c"()Ljava/lang/String;")?;
                jni.text(jni.object(runtime, method, &[])?)
            };
            let property = |name: &CStr| {
                let key = jni.string(name)?;
                jni.text(jni.static_object(system, property, &[jvalue { l: key }])?)
            };
            let arguments = jni.method(bean, c"getInputArguments", c"()Ljava/util/List;")?;
            let arguments = jni.object(runtime, arguments, &[])?;
            let arguments = list
                .elements(jni, arguments)?
                .into_iter()
                .map(|argument| jni.text(argument))
                .collect::<Option<Vec<String>>>()?;
            let start = jni.method(bean, c"getStartTime", c"()J")?;
            Some(JvmInfo {
                vm_name: text(c"getVmName")?,
                vm_version: text(c"getVmVersion")?,
                runtime_version: property(c"java.runtime.version"),
                os_name: property(c"os.name"),
                os_arch: property(c"os.arch"),
                arguments,
                java_command: property(c"sun.java.command"),
                compressed_oops_mode: property(c"java.vm.compressedOopsMode"),
                start_millis: jni.long(runtime, start)?,
                pid: std::process::id() as i64,
            })
        })
    }

    /// Deletes the global references: call on the thread that made them,
    /// before it detaches.
    pub fn release(self, jni: Jni) {
        // A listener left would fill its queue, never drained, for the
        // JVM's life.
        if let (Some(gc), Some(notifications)) = (&self.gc, &self.notifications) {
            for &bean in &gc.beans {
                let _ = jni.void(
                    bean,
                    notifications.remove_listener,
                    &[jvalue {
                        l: notifications.listener,
                    }],
                );
            }
        }
        for global in self.globals {
            jni.delete_global(global);
        }
    }
}

// The VM's flags with where their values came from, for
// [`crate::environment`]'s flag events.

/// Each of `names`' value and origin (`VMOption.getValue()` and the name of
/// `getOrigin()`), in order, from one `HotSpotDiagnosticMXBean`; `None`
/// for a flag whose `getVMOption` throws (the JVM has no such flag, or it
/// is locked: a diagnostic or experimental flag not unlocked), and for
/// every flag without the management classes.
pub fn vm_flags(jni: Jni, names: &[&str]) -> Vec<Option<VmFlag>> {
    let read = jni.frame(16, || {
        let interface = jni.class(c"com/sun/management/HotSpotDiagnosticMXBean")?;
        let bean = diagnostic_bean(jni, interface)?;
        let get_option = jni.method(
            interface,
            c"getVMOption",
            c"(Ljava/lang/String;)Lcom/sun/management/VMOption;",
        )?;
        let option_class = jni.class(c"com/sun/management/VMOption")?;
        let get_value = jni.method(option_class, c"getValue", c"()Ljava/lang/String;")?;
        let get_origin = jni.method(
            option_class,
            c"getOrigin",
            c"()Lcom/sun/management/VMOption$Origin;",
        )?;
        let enum_class = jni.class(c"java/lang/Enum")?;
        let enum_name = jni.method(enum_class, c"name", c"()Ljava/lang/String;")?;
        let flag = |name: &str| {
            let name = CString::new(name).ok()?;
            // Its own frame: a few references per flag, freed after it.
            jni.frame(8, || {
                let option = jni.object(
                    bean,
                    get_option,
                    &[jvalue {
                        l: jni.string(&name)?,
                    }],
                )?;
                let value = jni.text(jni.object(option, get_value, &[])?)?;
                let origin = jni.object(option, get_origin, &[])?;
                let origin = jni.text(jni.object(origin, enum_name, &[])?)?;
                Some(VmFlag { value, origin })
            })
        };
        Some(names.iter().map(|name| flag(name)).collect())
    });
    read.unwrap_or_else(|| vec![None; names.len()])
}
