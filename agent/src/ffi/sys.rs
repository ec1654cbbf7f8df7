//! The JVMTI declarations the agent uses, from the JDK's `include/jvmti.h`.
//! Names follow the header exactly, so `grep NAME jvmti.h` finds the C
//! declaration of anything here.
//!
//! Each number is written once, and checked: the tests at the bottom read
//! the `jvmti.h` of the JDK on `PATH` and find there every constant
//! (declared by `header_constants!`), every function's slot in the function
//! table (`functions!`), every event's slot in the callback table
//! (`event_callbacks!`) and every capability's bit (`capabilities!`).
//! Struct layouts, which only a C compiler can tell, are pinned against the
//! numbers `gcc` (x86-64 Linux) printed for the JDK 17 header.
//!
//! The JNI base types (`jobject`, `jclass`, `jmethodID`, `JNIEnv`, ...) come
//! from [`jni::sys`]. `JNICALL` is empty on Linux, so every C function pointer
//! is `extern "system"` (the C ABI there). The capability bit layout and the
//! variadic call assume x86-64 (or AArch64) Linux with the System V C ABI,
//! the only targets the agent is built for.

#![allow(non_snake_case, non_camel_case_types)]

use std::ffi::{c_char, c_uchar, c_void};

pub use jni::sys::{JNIEnv, jboolean, jclass, jfieldID, jint, jlong, jmethodID, jobject};

/// The JVMTI environment. In C (not C++) `jvmtiEnv` is a pointer to the
/// function table, so the `jvmtiEnv*` that `GetEnv` fills and callbacks
/// receive is `*mut jvmtiEnv`, a pointer to a pointer to the table.
pub type jvmtiEnv = *const jvmtiInterface_1;
/// A `java.lang.Thread` reference (`typedef jobject jthread`).
pub type jthread = jobject;
/// A `java.lang.ThreadGroup` reference (`typedef jobject jthreadGroup`).
pub type jthreadGroup = jobject;
/// A bytecode index within a method (`typedef jlong jlocation`); -1 when
/// unknown.
pub type jlocation = jlong;
/// `jvmtiError`: a C enum, 4 bytes (GCC gives an enum without negative values
/// the type `unsigned int`). Every JVMTI function returns one.
pub type jvmtiError = u32;
/// `jvmtiEvent`: an event number (C enum, 4 bytes).
pub type jvmtiEvent = u32;
/// `jvmtiEventMode`: `JVMTI_ENABLE` or `JVMTI_DISABLE` (C enum, 4 bytes).
/// Declared as `jint`: the values are 0 and 1 and a 32-bit argument is passed
/// the same way signed or unsigned.
pub type jvmtiEventMode = jint;
/// `jvmtiHeapReferenceKind`: what a reference reported by `FollowReferences`
/// is (C enum, 4 bytes).
pub type jvmtiHeapReferenceKind = u32;
/// A table slot this crate does not call or set, as a bare function pointer:
/// the size of a C pointer, null being `None`.
pub type jvmtiUntypedFn = Option<unsafe extern "system" fn()>;

/// Declares constants of `jvmti.h` under their names there, and the list
/// `$list` of them by name, which the tests look up in the header.
macro_rules! header_constants {
    ($list:ident: $ty:ty { $( $(#[doc = $doc:literal])* $name:ident = $value:expr, )* }) => {
        $( $(#[doc = $doc])* pub const $name: $ty = $value; )*
        /// The constants above, by name.
        #[cfg_attr(not(test), allow(dead_code))]
        const $list: &[(&str, $ty)] = &[$((stringify!($name), $name)),*];
    };
}

header_constants! { VERSIONS: jint {
    /// JVMTI 11: the first version with `SetHeapSamplingInterval` and the
    /// `SampledObjectAlloc` event (JEP 331).
    JVMTI_VERSION_11 = 0x300B_0000,
}}

header_constants! { EVENT_MODES: jvmtiEventMode {
    /// Turn an event on.
    JVMTI_ENABLE = 1,
    /// Turn an event off.
    JVMTI_DISABLE = 0,
}}

header_constants! { ERRORS: jvmtiError {
    JVMTI_ERROR_NONE = 0,
    JVMTI_ERROR_INVALID_THREAD = 10,
    JVMTI_ERROR_THREAD_NOT_ALIVE = 15,
    JVMTI_ERROR_INVALID_CLASS = 21,
    JVMTI_ERROR_INVALID_METHODID = 23,
    JVMTI_ERROR_NOT_AVAILABLE = 98,
    JVMTI_ERROR_MUST_POSSESS_CAPABILITY = 99,
    JVMTI_ERROR_ABSENT_INFORMATION = 101,
    JVMTI_ERROR_ILLEGAL_ARGUMENT = 103,
    JVMTI_ERROR_NATIVE_METHOD = 104,
    JVMTI_ERROR_OUT_OF_MEMORY = 110,
    JVMTI_ERROR_WRONG_PHASE = 112,
}}

/// The name of error `code` without its `JVMTI_ERROR_` prefix, if it is
/// one of those declared here.
pub fn error_name(code: jvmtiError) -> Option<&'static str> {
    let (name, _) = ERRORS.iter().find(|&&(_, value)| value == code)?;
    name.strip_prefix("JVMTI_ERROR_")
}

header_constants! { EVENTS: jvmtiEvent {
    /// The first event number: the callback table's first slot.
    JVMTI_MIN_EVENT_TYPE_VAL = 50,
    JVMTI_EVENT_VM_INIT = 50,
    JVMTI_EVENT_VM_DEATH = 51,
    JVMTI_EVENT_THREAD_START = 52,
    JVMTI_EVENT_THREAD_END = 53,
    JVMTI_EVENT_RESOURCE_EXHAUSTED = 80,
    JVMTI_EVENT_GARBAGE_COLLECTION_START = 81,
    JVMTI_EVENT_GARBAGE_COLLECTION_FINISH = 82,
    JVMTI_EVENT_SAMPLED_OBJECT_ALLOC = 86,
}}

header_constants! { FLAGS: jint {
    /// `ResourceExhausted` flag: the Java heap is full.
    JVMTI_RESOURCE_EXHAUSTED_JAVA_HEAP = 0x0002,
    /// A reference callback's answer to follow the references of the object
    /// it was called for.
    JVMTI_VISIT_OBJECTS = 0x100,
    /// A reference callback's answer to end the walk at once.
    JVMTI_VISIT_ABORT = 0x8000,
}}

header_constants! { HEAP_REFERENCE_KINDS: jvmtiHeapReferenceKind {
    /// From an object to the value of one of its instance fields.
    JVMTI_HEAP_REFERENCE_FIELD = 2,
    /// From an array to one of its elements.
    JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT = 3,
    /// From a class to the value of one of its static fields.
    JVMTI_HEAP_REFERENCE_STATIC_FIELD = 8,
    /// Heap root: a JNI global reference.
    JVMTI_HEAP_REFERENCE_JNI_GLOBAL = 21,
    /// Heap root: a system class.
    JVMTI_HEAP_REFERENCE_SYSTEM_CLASS = 22,
    /// Heap root: a monitor.
    JVMTI_HEAP_REFERENCE_MONITOR = 23,
    /// Heap root: a local variable on a thread's stack.
    JVMTI_HEAP_REFERENCE_STACK_LOCAL = 24,
    /// Heap root: a JNI local reference.
    JVMTI_HEAP_REFERENCE_JNI_LOCAL = 25,
    /// Heap root: a thread.
    JVMTI_HEAP_REFERENCE_THREAD = 26,
    /// Heap root: another root the VM keeps.
    JVMTI_HEAP_REFERENCE_OTHER = 27,
}}

// ---------------------------------------------------------------- structs

/// What `GetThreadInfo` fills. `name` is allocated by JVMTI (free it with
/// `Deallocate`); `thread_group` and `context_class_loader` are JNI local
/// references.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiThreadInfo {
    /// The thread name, modified UTF-8.
    pub name: *mut c_char,
    /// The thread priority.
    pub priority: jint,
    /// Whether the thread is a daemon thread.
    pub is_daemon: jboolean,
    /// The thread's group (null if the thread has died).
    pub thread_group: jthreadGroup,
    /// The context class loader (may be null).
    pub context_class_loader: jobject,
}

impl Default for jvmtiThreadInfo {
    /// All pointers null, numbers zero: the buffer to hand to `GetThreadInfo`.
    fn default() -> Self {
        Self {
            name: std::ptr::null_mut(),
            priority: 0,
            is_daemon: 0,
            thread_group: std::ptr::null_mut(),
            context_class_loader: std::ptr::null_mut(),
        }
    }
}

/// One stack frame, as `GetStackTrace` writes it into the caller's buffer.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct jvmtiFrameInfo {
    /// The method executing in this frame.
    pub method: jmethodID,
    /// The bytecode index being executed, or -1 for a native method.
    pub location: jlocation,
}

impl Default for jvmtiFrameInfo {
    /// A null method at location 0, to fill a frame buffer before the call.
    fn default() -> Self {
        Self {
            method: std::ptr::null_mut(),
            location: 0,
        }
    }
}

/// One row of the table `GetLineNumberTable` returns (allocated by JVMTI).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct jvmtiLineNumberEntry {
    /// The first bytecode index of the line.
    pub start_location: jlocation,
    /// The source line number.
    pub line_number: jint,
}

// ---------------------------------------------------------------- heap walking

/// `jvmtiHeapReferenceInfoField`, for `JVMTI_HEAP_REFERENCE_FIELD` and
/// `JVMTI_HEAP_REFERENCE_STATIC_FIELD`: the field's index, counted over the
/// fields of the class's interfaces first, then of its superclasses from
/// `java.lang.Object` down (see the JVMTI specification). An array
/// element's `jvmtiHeapReferenceInfoArray` is the same single `jint`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct jvmtiHeapReferenceInfoField {
    /// The field's index.
    pub index: jint,
}

/// `jvmtiHeapReferenceInfoStackLocal`, for `JVMTI_HEAP_REFERENCE_STACK_LOCAL`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiHeapReferenceInfoStackLocal {
    /// The tag of the thread whose stack it is (0: untagged).
    pub thread_tag: jlong,
    /// The thread's id.
    pub thread_id: jlong,
    /// The frame's depth.
    pub depth: jint,
    /// The frame's method.
    pub method: jmethodID,
    /// The frame's bytecode index.
    pub location: jlocation,
    /// The local variable's slot.
    pub slot: jint,
}

/// `jvmtiHeapReferenceInfoJniLocal`, for `JVMTI_HEAP_REFERENCE_JNI_LOCAL`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiHeapReferenceInfoJniLocal {
    /// The tag of the thread whose reference it is (0: untagged).
    pub thread_tag: jlong,
    /// The thread's id.
    pub thread_id: jlong,
    /// The frame's depth.
    pub depth: jint,
    /// The frame's method.
    pub method: jmethodID,
}

/// `jvmtiHeapReferenceInfo`: what a reference callback learns of a
/// reference besides its kind; which member applies depends on the kind.
/// The members the agent does not read (array and constant pool indexes,
/// reserved) are `other`, the union's full size.
#[repr(C)]
#[derive(Clone, Copy)]
pub union jvmtiHeapReferenceInfo {
    /// For instance and static fields, and array elements.
    pub field: jvmtiHeapReferenceInfoField,
    /// For stack locals.
    pub stack_local: jvmtiHeapReferenceInfoStackLocal,
    /// For JNI locals.
    pub jni_local: jvmtiHeapReferenceInfoJniLocal,
    /// `jvmtiHeapReferenceInfoReserved`: the largest member.
    pub other: [jlong; 8],
}

/// `jvmtiHeapReferenceCallback`: called by `FollowReferences` for each
/// reference it finds (on the VM thread, at a safepoint: no JNI, and no
/// JVMTI but raw monitors). Returns visit control flags.
pub type jvmtiHeapReferenceCallback = Option<
    unsafe extern "system" fn(
        reference_kind: jvmtiHeapReferenceKind,
        reference_info: *const jvmtiHeapReferenceInfo,
        class_tag: jlong,
        referrer_class_tag: jlong,
        size: jlong,
        tag_ptr: *mut jlong,
        referrer_tag_ptr: *mut jlong,
        length: jint,
        user_data: *mut c_void,
    ) -> jint,
>;

/// `jvmtiHeapCallbacks`: what `FollowReferences` and `IterateThroughHeap`
/// call. Only the reference callback is typed; the others, and the reserved
/// slots, stay `None`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct jvmtiHeapCallbacks {
    /// `jvmtiHeapIterationCallback` (untyped here).
    pub heap_iteration_callback: jvmtiUntypedFn,
    /// Called for each reference `FollowReferences` finds.
    pub heap_reference_callback: jvmtiHeapReferenceCallback,
    /// The primitive field, array and string callbacks, then `reserved5`
    /// to `reserved15`.
    pub others: [jvmtiUntypedFn; 14],
}

// ---------------------------------------------------------------- capabilities

/// `jvmtiCapabilities`: in C a struct of 128 one-bit bit-fields in four
/// `unsigned int`s (16 bytes). GCC on x86-64 Linux fills each 32-bit word
/// from its least significant bit, so the capability declared N-th (from 0)
/// is bit `N % 32` of word `N / 32`. The `CAN_*` constants give N: for
/// example `caps.set(CAN_GENERATE_SAMPLED_OBJECT_ALLOC_EVENTS)` (bit 43).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct jvmtiCapabilities {
    bits: [u32; 4],
}

impl jvmtiCapabilities {
    /// The capability set with exactly the given bits (`CAN_*` constants).
    pub fn of(bits: &[u32]) -> Self {
        let mut caps = Self::default();
        for &bit in bits {
            caps.set(bit);
        }
        caps
    }

    /// Turns on the capability at `bit` (a `CAN_*` constant).
    pub fn set(&mut self, bit: u32) {
        self.bits[(bit / 32) as usize] |= 1 << (bit % 32);
    }

    /// Whether the capability at `bit` (a `CAN_*` constant) is on.
    pub fn has(&self, bit: u32) -> bool {
        self.bits[(bit / 32) as usize] & (1 << (bit % 32)) != 0
    }

    /// The capabilities of `other` missing from `self`.
    pub fn missing(&self, other: &Self) -> Self {
        let mut out = Self::default();
        for (i, word) in out.bits.iter_mut().enumerate() {
            *word = other.bits[i] & !self.bits[i];
        }
        out
    }

    /// The bits that are on, in increasing order (`CAN_*` numbers).
    pub fn iter_bits(&self) -> impl Iterator<Item = u32> + '_ {
        (0..128u32).filter(move |&bit| self.has(bit))
    }
}

/// Declares the capability bits the agent asks for: `CAN_X` is the bit of
/// the header's bit-field `can_x`, its position among the fields of
/// `jvmtiCapabilities`.
macro_rules! capabilities {
    ($( $name:ident = $bit:literal, )*) => {
        $(
            #[doc = concat!("Capability bit ", $bit, ": `", stringify!($name), "`, lower case.")]
            pub const $name: u32 = $bit;
        )*
        /// The capabilities above, by name.
        const CAPABILITIES: &[(&str, u32)] = &[$((stringify!($name), $name)),*];
    };
}

capabilities! {
    CAN_TAG_OBJECTS = 0,
    CAN_GET_LINE_NUMBERS = 12,
    CAN_GENERATE_GARBAGE_COLLECTION_EVENTS = 31,
    CAN_GENERATE_RESOURCE_EXHAUSTION_HEAP_EVENTS = 39,
    CAN_GENERATE_SAMPLED_OBJECT_ALLOC_EVENTS = 43,
}

/// The name of capability `bit` as in jvmti.h (`can_tag_objects`), if it
/// is one of those declared here.
pub fn capability_name(bit: u32) -> Option<String> {
    let (name, _) = CAPABILITIES.iter().find(|&&(_, b)| b == bit)?;
    Some(name.to_ascii_lowercase())
}

// ---------------------------------------------------------------- event callbacks

/// The callback table's slots: one per event number from
/// [`JVMTI_MIN_EVENT_TYPE_VAL`] to the last one the agent sets, reserved
/// numbers included. `SetEventCallbacks` is given its size, so a JVM with
/// more events leaves those unset.
const CALLBACK_SLOTS: usize =
    (JVMTI_EVENT_SAMPLED_OBJECT_ALLOC - JVMTI_MIN_EVENT_TYPE_VAL) as usize + 1;

/// `jvmtiEventCallbacks`, the table given to `SetEventCallbacks`: event
/// `E`'s callback in slot `E - JVMTI_MIN_EVENT_TYPE_VAL`. Built with the
/// setters `event_callbacks!` declares, from `Default` (all `None`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiEventCallbacks {
    slots: [jvmtiUntypedFn; CALLBACK_SLOTS],
}

impl Default for jvmtiEventCallbacks {
    fn default() -> Self {
        Self {
            slots: [None; CALLBACK_SLOTS],
        }
    }
}

/// Declares a setter of `jvmtiEventCallbacks` for each event the agent
/// handles, named as the header's member, with the callback's C signature
/// after its `jvmtiEnv`: each event's slot follows from its number.
macro_rules! event_callbacks {
    ($( $event:ident => $name:ident($($arg:ident: $ty:ty),*); )*) => {
        impl jvmtiEventCallbacks {
            $(
                #[doc = concat!("Sets the callback of `", stringify!($event), "`.")]
                pub fn $name(
                    mut self,
                    callback: unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, $($arg: $ty),*),
                ) -> Self {
                    // SAFETY: function pointers of any signature have one
                    // size and representation; the JVM calls the one in this
                    // slot only with the signature jvmti.h gives the event,
                    // which is `callback`'s.
                    let untyped = unsafe {
                        std::mem::transmute::<
                            unsafe extern "system" fn(*mut jvmtiEnv, $($ty),*),
                            unsafe extern "system" fn(),
                        >(callback)
                    };
                    self.slots[($event - JVMTI_MIN_EVENT_TYPE_VAL) as usize] = Some(untyped);
                    self
                }
            )*
        }

        /// The callbacks above: event, member name.
        #[cfg(test)]
        const CALLBACKS: &[(jvmtiEvent, &str)] = &[$(($event, stringify!($name))),*];
    };
}

event_callbacks! {
    JVMTI_EVENT_VM_INIT => VMInit(jni_env: *mut JNIEnv, thread: jthread);
    JVMTI_EVENT_VM_DEATH => VMDeath(jni_env: *mut JNIEnv);
    JVMTI_EVENT_THREAD_START => ThreadStart(jni_env: *mut JNIEnv, thread: jthread);
    JVMTI_EVENT_THREAD_END => ThreadEnd(jni_env: *mut JNIEnv, thread: jthread);
    JVMTI_EVENT_RESOURCE_EXHAUSTED => ResourceExhausted(
        jni_env: *mut JNIEnv,
        flags: jint,
        reserved: *const c_void,
        description: *const c_char
    );
    JVMTI_EVENT_GARBAGE_COLLECTION_START => GarbageCollectionStart();
    JVMTI_EVENT_GARBAGE_COLLECTION_FINISH => GarbageCollectionFinish();
    JVMTI_EVENT_SAMPLED_OBJECT_ALLOC => SampledObjectAlloc(
        jni_env: *mut JNIEnv,
        thread: jthread,
        object: jobject,
        object_klass: jclass,
        size: jlong
    );
}

// ---------------------------------------------------------------- function table

/// The largest of `slots`.
const fn last_slot(slots: &[usize]) -> usize {
    let (mut last, mut i) = (0, 0);
    while i < slots.len() {
        if slots[i] > last {
            last = slots[i];
        }
        i += 1;
    }
    last
}

/// `jvmtiInterface_1`: the JVMTI function table a `jvmtiEnv` points to,
/// pointer-sized slots numbered from 1 as in the header, up to the last one
/// the agent calls (the JVM's table has these and maybe more). Call a
/// function through the method `functions!` declares for it:
/// `table.GetTag(env, object, &mut tag)`.
#[repr(C)]
#[derive(Debug)]
pub struct jvmtiInterface_1 {
    slots: [jvmtiUntypedFn; FUNCTION_SLOTS],
}

/// Declares a method of `jvmtiInterface_1` for each function the agent
/// calls, named as in the header, at its slot (the `/* N : ... */` there)
/// with its C signature after the `jvmtiEnv`. Variadic functions (in C
/// `...` after the named arguments) are `extern "C"` and variadic here too,
/// so that the call sets `%al` (the number of vector registers used by
/// variadic arguments) as the callee's prologue expects.
macro_rules! functions {
    (
        variadic { $( $vslot:literal => $vname:ident($($varg:ident: $vty:ty),*); )* }
        $( $slot:literal => $name:ident($($arg:ident: $ty:ty),*); )*
    ) => {
        /// The table's slots: up to the last function declared.
        const FUNCTION_SLOTS: usize = last_slot(&[$($vslot,)* $($slot),*]);

        impl jvmtiInterface_1 {
            /// The function in slot `slot` (from 1), as a bare pointer;
            /// panics if the JVM left the slot null, naming the function.
            #[inline]
            fn slot(&self, slot: usize, name: &str) -> unsafe extern "system" fn() {
                self.slots[slot - 1].unwrap_or_else(|| panic!("JVMTI has no {name}"))
            }
            $(
                #[doc = concat!("JVMTI `", stringify!($vname), "` (slot ", $vslot, "), without variadic arguments.")]
                ///
                /// # Safety
                /// `env` is the environment of this table, and the arguments
                /// are what JVMTI asks of them.
                #[inline]
                pub unsafe fn $vname(&self, env: *mut jvmtiEnv, $($varg: $vty),*) -> jvmtiError {
                    let function = self.slot($vslot, stringify!($vname));
                    // SAFETY: jvmti.h declares this slot as this variadic
                    // function (the tests check the slot); the caller keeps
                    // its contract.
                    unsafe {
                        std::mem::transmute::<
                            unsafe extern "system" fn(),
                            unsafe extern "C" fn(*mut jvmtiEnv, $($vty,)* ...) -> jvmtiError,
                        >(function)(env, $($varg),*)
                    }
                }
            )*
            $(
                #[doc = concat!("JVMTI `", stringify!($name), "` (slot ", $slot, ").")]
                ///
                /// # Safety
                /// `env` is the environment of this table, and the arguments
                /// are what JVMTI asks of them.
                #[inline]
                pub unsafe fn $name(&self, env: *mut jvmtiEnv, $($arg: $ty),*) -> jvmtiError {
                    let function = self.slot($slot, stringify!($name));
                    // SAFETY: jvmti.h declares this slot as this function
                    // (the tests check the slot); the caller keeps its
                    // contract.
                    unsafe {
                        std::mem::transmute::<
                            unsafe extern "system" fn(),
                            unsafe extern "system" fn(*mut jvmtiEnv, $($ty),*) -> jvmtiError,
                        >(function)(env, $($arg),*)
                    }
                }
            )*
        }

        /// The functions above: slot, name.
        #[cfg(test)]
        const FUNCTIONS: &[(usize, &str)] =
            &[$(($vslot, stringify!($vname)),)* $(($slot, stringify!($name))),*];
    };
}

functions! {
    variadic {
        2 => SetEventNotificationMode(
            mode: jvmtiEventMode,
            event_type: jvmtiEvent,
            event_thread: jthread
        );
    }
    4 => GetAllThreads(threads_count_ptr: *mut jint, threads_ptr: *mut *mut jthread);
    9 => GetThreadInfo(thread: jthread, info_ptr: *mut jvmtiThreadInfo);
    18 => GetCurrentThread(thread_ptr: *mut jthread);
    47 => Deallocate(mem: *mut c_uchar);
    48 => GetClassSignature(
        klass: jclass,
        signature_ptr: *mut *mut c_char,
        generic_ptr: *mut *mut c_char
    );
    53 => GetClassFields(klass: jclass, field_count_ptr: *mut jint, fields_ptr: *mut *mut jfieldID);
    54 => GetImplementedInterfaces(
        klass: jclass,
        interface_count_ptr: *mut jint,
        interfaces_ptr: *mut *mut jclass
    );
    55 => IsInterface(klass: jclass, is_interface_ptr: *mut jboolean);
    57 => GetClassLoader(klass: jclass, classloader_ptr: *mut jobject);
    60 => GetFieldName(
        klass: jclass,
        field: jfieldID,
        name_ptr: *mut *mut c_char,
        signature_ptr: *mut *mut c_char,
        generic_ptr: *mut *mut c_char
    );
    62 => GetFieldModifiers(klass: jclass, field: jfieldID, modifiers_ptr: *mut jint);
    64 => GetMethodName(
        method: jmethodID,
        name_ptr: *mut *mut c_char,
        signature_ptr: *mut *mut c_char,
        generic_ptr: *mut *mut c_char
    );
    65 => GetMethodDeclaringClass(method: jmethodID, declaring_class_ptr: *mut jclass);
    66 => GetMethodModifiers(method: jmethodID, modifiers_ptr: *mut jint);
    70 => GetLineNumberTable(
        method: jmethodID,
        entry_count_ptr: *mut jint,
        table_ptr: *mut *mut jvmtiLineNumberEntry
    );
    76 => IsMethodNative(method: jmethodID, is_native_ptr: *mut jboolean);
    78 => GetLoadedClasses(class_count_ptr: *mut jint, classes_ptr: *mut *mut jclass);
    104 => GetStackTrace(
        thread: jthread,
        start_depth: jint,
        max_frame_count: jint,
        frame_buffer: *mut jvmtiFrameInfo,
        count_ptr: *mut jint
    );
    106 => GetTag(object: jobject, tag_ptr: *mut jlong);
    107 => SetTag(object: jobject, tag: jlong);
    108 => ForceGarbageCollection();
    115 => FollowReferences(
        heap_filter: jint,
        klass: jclass,
        initial_object: jobject,
        callbacks: *const jvmtiHeapCallbacks,
        user_data: *const c_void
    );
    122 => SetEventCallbacks(callbacks: *const jvmtiEventCallbacks, size_of_callbacks: jint);
    127 => DisposeEnvironment();
    130 => GetSystemProperties(count_ptr: *mut jint, property_ptr: *mut *mut *mut c_char);
    131 => GetSystemProperty(property: *const c_char, value_ptr: *mut *mut c_char);
    140 => GetPotentialCapabilities(capabilities_ptr: *mut jvmtiCapabilities);
    142 => AddCapabilities(capabilities_ptr: *const jvmtiCapabilities);
    156 => SetHeapSamplingInterval(sampling_interval: jint);
}

#[cfg(test)]
mod tests {
    //! Every number above against the JDK's own `jvmti.h`, read from the JDK
    //! on `PATH`; the struct layouts against the numbers a throwaway C
    //! program compiled by gcc (x86-64 Linux) against the JDK 17 header
    //! printed, with `sizeof`, `offsetof` and, for the capabilities, by
    //! setting one bit-field and reading the four words.

    use super::*;
    use std::mem::{align_of, offset_of, size_of};
    use std::path::PathBuf;

    use heapsampler_test_support as support;

    /// The `jvmti.h` of the JDK whose `java` is on `PATH`.
    fn header() -> String {
        let java = support::on_path("java").expect("a JDK on PATH");
        let java = std::fs::canonicalize(&java).unwrap_or(java);
        let home: PathBuf = java.ancestors().nth(2).expect("JDK/bin/java").into();
        let path = home.join("include/jvmti.h");
        std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "cannot read {} ({e}): a JDK with headers is needed",
                path.display()
            )
        })
    }

    /// The value the header gives `name` (`NAME = 12,` or `NAME = 0x100,`).
    fn header_value(header: &str, name: &str) -> Option<i64> {
        header.match_indices(name).find_map(|(at, _)| {
            let before = header[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                return None;
            }
            let value = header[at + name.len()..].trim_start().strip_prefix('=')?;
            let value = value.trim_start();
            let end = value
                .find(|c: char| !c.is_ascii_alphanumeric())
                .unwrap_or(value.len());
            let value = &value[..end];
            match value.strip_prefix("0x") {
                Some(hex) => i64::from_str_radix(hex, 16).ok(),
                None => value.parse().ok(),
            }
        })
    }

    /// The header's `typedef struct ... } name;`, but its name.
    fn struct_body<'h>(header: &'h str, name: &str) -> &'h str {
        let closing = format!("}} {name};");
        let end = header.find(&closing).unwrap_or_else(|| panic!("no {name}"));
        let start = header[..end].rfind("typedef struct").expect("a typedef");
        &header[start..end]
    }

    /// Member name -> the number of the `/* N : ... */` comment before it, in
    /// a table of the header.
    fn numbered_members(body: &str) -> Vec<(String, usize)> {
        let mut members = Vec::new();
        let mut number = None;
        for line in body.lines() {
            let line = line.trim();
            if let Some(comment) = line.strip_prefix("/*") {
                number = comment
                    .split(':')
                    .next()
                    .and_then(|n| n.trim().parse().ok());
                continue;
            }
            let Some(number) = number.take() else {
                continue;
            };
            // `jvmtiError (JNICALL *GetTag) (...` or `jvmtiEventVMInit VMInit;`.
            let name = match line.split_once("JNICALL *") {
                Some((_, rest)) => rest.split(')').next(),
                None => line.trim_end_matches(';').split_whitespace().last(),
            };
            members.push((name.expect("a member").to_owned(), number));
        }
        members
    }

    #[test]
    fn constants_are_the_headers() {
        let header = header();
        let lists: [Vec<(&str, i64)>; 6] = [
            VERSIONS.iter().map(|&(n, v)| (n, i64::from(v))).collect(),
            EVENT_MODES
                .iter()
                .map(|&(n, v)| (n, i64::from(v)))
                .collect(),
            ERRORS.iter().map(|&(n, v)| (n, i64::from(v))).collect(),
            EVENTS.iter().map(|&(n, v)| (n, i64::from(v))).collect(),
            FLAGS.iter().map(|&(n, v)| (n, i64::from(v))).collect(),
            HEAP_REFERENCE_KINDS
                .iter()
                .map(|&(n, v)| (n, i64::from(v)))
                .collect(),
        ];
        for (name, value) in lists.iter().flatten() {
            assert_eq!(header_value(&header, name), Some(*value), "{name}");
        }
        assert_eq!(error_name(JVMTI_ERROR_WRONG_PHASE), Some("WRONG_PHASE"));
        assert_eq!(error_name(JVMTI_ERROR_NONE + 1), None);
    }

    #[test]
    fn functions_are_in_the_headers_slots() {
        let header = header();
        let table = numbered_members(struct_body(&header, "jvmtiInterface_1"));
        assert!(table.len() >= FUNCTION_SLOTS, "{} slots", table.len());
        for &(slot, name) in FUNCTIONS {
            let in_header = table.iter().find(|(member, _)| member == name);
            assert_eq!(in_header.map(|&(_, n)| n), Some(slot), "{name}");
        }
        assert_eq!(size_of::<jvmtiInterface_1>(), FUNCTION_SLOTS * 8);
        // An Option of a function pointer is one pointer, None being null.
        assert_eq!(size_of::<jvmtiUntypedFn>(), size_of::<*const c_void>());
    }

    #[test]
    fn callbacks_are_in_their_events_slots() {
        let header = header();
        let table = numbered_members(struct_body(&header, "jvmtiEventCallbacks"));
        for &(event, name) in CALLBACKS {
            let in_header = table.iter().find(|(member, _)| member == name);
            assert_eq!(in_header.map(|&(_, n)| n), Some(event as usize), "{name}");
        }
        // gcc: sizeof(jvmtiEventCallbacks) 296 up to SampledObjectAlloc (86).
        assert_eq!(size_of::<jvmtiEventCallbacks>(), 296);
        let callbacks = jvmtiEventCallbacks::default().GarbageCollectionFinish(gc);
        unsafe extern "system" fn gc(_: *mut jvmtiEnv) {}
        let set: Vec<usize> = (0..CALLBACK_SLOTS)
            .filter(|&i| callbacks.slots[i].is_some())
            .collect();
        assert_eq!(set, [(JVMTI_EVENT_GARBAGE_COLLECTION_FINISH - 50) as usize]);
    }

    #[test]
    fn capabilities_are_the_headers_bits() {
        let header = header();
        let body = struct_body(&header, "jvmtiCapabilities");
        let fields: Vec<&str> = body
            .lines()
            .filter_map(|line| line.trim().strip_prefix("unsigned int "))
            .filter_map(|line| line.split(':').next())
            .map(str::trim)
            .collect();
        for &(name, bit) in CAPABILITIES {
            let lower = capability_name(bit).unwrap();
            assert_eq!(lower, name.to_ascii_lowercase());
            assert_eq!(fields.get(bit as usize), Some(&lower.as_str()), "{name}");
        }
        assert_eq!(capability_name(1), None);
    }

    #[test]
    fn capability_words_are_where_gcc_puts_the_bits() {
        assert_eq!(size_of::<jvmtiCapabilities>(), 16);
        assert_eq!(align_of::<jvmtiCapabilities>(), 4);
        // gcc, one bit-field set to 1 in a zeroed struct, the 4 words printed:
        //   can_tag_objects (0)                            -> 0x00000001 0 0 0
        //   can_generate_sampled_object_alloc_events (43) -> 0 0x00000800 0 0
        assert_eq!(jvmtiCapabilities::of(&[0]).bits, [1, 0, 0, 0]);
        assert_eq!(jvmtiCapabilities::of(&[43]).bits, [0, 0x0000_0800, 0, 0]);
        // gcc, bits 0, 11, 12, 26, 29, 31, 32, 35 and 43 set together.
        let caps = jvmtiCapabilities::of(&[0, 11, 12, 26, 29, 31, 32, 35, 43]);
        assert_eq!(caps.bits, [0xa400_1801, 0x0000_0809, 0, 0]);
        assert!(caps.has(32) && !caps.has(1));
        assert_eq!(caps.iter_bits().count(), 9);
        let potential = jvmtiCapabilities::of(&[0, 12]);
        let missing = potential.missing(&jvmtiCapabilities::of(&[0, 43]));
        assert_eq!(missing.iter_bits().collect::<Vec<_>>(), [43]);
    }

    #[test]
    fn structs_are_where_gcc_puts_them() {
        // gcc: sizeof jvmtiFrameInfo 16, jvmtiLineNumberEntry 16,
        // jvmtiThreadInfo 32 (name 0, priority 8, is_daemon 12,
        // thread_group 16, context_class_loader 24).
        assert_eq!(size_of::<jvmtiFrameInfo>(), 16);
        assert_eq!(offset_of!(jvmtiFrameInfo, method), 0);
        assert_eq!(offset_of!(jvmtiFrameInfo, location), 8);
        assert_eq!(size_of::<jvmtiLineNumberEntry>(), 16);
        assert_eq!(offset_of!(jvmtiLineNumberEntry, start_location), 0);
        assert_eq!(offset_of!(jvmtiLineNumberEntry, line_number), 8);
        assert_eq!(size_of::<jvmtiThreadInfo>(), 32);
        assert_eq!(offset_of!(jvmtiThreadInfo, name), 0);
        assert_eq!(offset_of!(jvmtiThreadInfo, priority), 8);
        assert_eq!(offset_of!(jvmtiThreadInfo, is_daemon), 12);
        assert_eq!(offset_of!(jvmtiThreadInfo, thread_group), 16);
        assert_eq!(offset_of!(jvmtiThreadInfo, context_class_loader), 24);
        assert_eq!(size_of::<jvmtiEnv>(), 8);
        // gcc: sizeof jvmtiHeapReferenceInfo 64 (align 8);
        // jvmtiHeapReferenceInfoStackLocal 48 (thread_tag 0, thread_id 8,
        // depth 16, method 24, location 32, slot 40); JniLocal 32 (depth 16,
        // method 24); Field 4; jvmtiHeapCallbacks 128
        // (heap_reference_callback 8); sizeof(jvmtiHeapReferenceKind) 4.
        assert_eq!(size_of::<jvmtiHeapReferenceInfo>(), 64);
        assert_eq!(align_of::<jvmtiHeapReferenceInfo>(), 8);
        assert_eq!(size_of::<jvmtiHeapReferenceInfoStackLocal>(), 48);
        assert_eq!(offset_of!(jvmtiHeapReferenceInfoStackLocal, thread_tag), 0);
        assert_eq!(offset_of!(jvmtiHeapReferenceInfoStackLocal, thread_id), 8);
        assert_eq!(offset_of!(jvmtiHeapReferenceInfoStackLocal, depth), 16);
        assert_eq!(offset_of!(jvmtiHeapReferenceInfoStackLocal, method), 24);
        assert_eq!(offset_of!(jvmtiHeapReferenceInfoStackLocal, location), 32);
        assert_eq!(offset_of!(jvmtiHeapReferenceInfoStackLocal, slot), 40);
        assert_eq!(size_of::<jvmtiHeapReferenceInfoJniLocal>(), 32);
        assert_eq!(offset_of!(jvmtiHeapReferenceInfoJniLocal, depth), 16);
        assert_eq!(offset_of!(jvmtiHeapReferenceInfoJniLocal, method), 24);
        assert_eq!(size_of::<jvmtiHeapReferenceInfoField>(), 4);
        assert_eq!(size_of::<jvmtiHeapCallbacks>(), 128);
        assert_eq!(offset_of!(jvmtiHeapCallbacks, heap_reference_callback), 8);
        assert_eq!(size_of::<jvmtiHeapReferenceKind>(), 4);
        // The C enums are 4 bytes (gcc: sizeof(jvmtiEvent) == sizeof(jvmtiError) == 4).
        assert_eq!(size_of::<jvmtiError>(), 4);
        assert_eq!(size_of::<jvmtiEvent>(), 4);
        assert_eq!(size_of::<jvmtiEventMode>(), 4);
    }
}
