//! Raw JVMTI declarations, transcribed from the JDK 17 header
//! `include/jvmti.h` (JVMTI version 17.0.0, `JVMTI_VERSION_11` features
//! included). Names follow the header exactly, so `grep NAME jvmti.h` finds the
//! C declaration of anything here.
//!
//! Only declarations: no function here is called, no memory is touched. The
//! layouts (function table slots, callback slots, capability bits, struct
//! fields) are pinned by the tests at the bottom against numbers printed by a C
//! compiler (`gcc`, x86-64 Linux) that included the real header.
//!
//! The JNI base types (`jobject`, `jclass`, `jmethodID`, `JNIEnv`, ...) come
//! from [`jni::sys`]. `JNICALL` is empty on Linux, so every C function pointer
//! is `extern "system"` (the C ABI there).
//!
//! Platform: the capability bit layout and the variadic
//! calling conventions assume x86-64 (or AArch64) Linux with
//! the System V C ABI, the only targets the agent is built for.

// A transcription of the header: not every declaration is used.
#![allow(non_snake_case, non_camel_case_types, dead_code, unused_imports)]

use std::ffi::{c_char, c_uchar, c_void};
use std::marker::{PhantomData, PhantomPinned};

pub use jni::sys::{
    JNIEnv, JNINativeInterface_, JavaVM, jboolean, jchar, jclass, jfieldID, jint, jlong, jmethodID,
    jobject, jvalue,
};

// ---------------------------------------------------------------- versions

/// JVMTI 1.2 (JDK 7), the version most agents ask `GetEnv` for.
pub const JVMTI_VERSION_1_2: jint = 0x30010200;
/// JVMTI 11: the first version with `SetHeapSamplingInterval` and the
/// `SampledObjectAlloc` event (JEP 331).
pub const JVMTI_VERSION_11: jint = 0x300B0000;
/// The version of the JDK 17 header: `0x30000000 + (17 * 0x10000) + (0 * 0x100) + 0`.
pub const JVMTI_VERSION: jint = 0x30110000;

// ---------------------------------------------------------------- base types

/// The JVMTI environment. In C (not C++) `jvmtiEnv` is a pointer to the
/// function table, so the `jvmtiEnv*` that `GetEnv` fills and callbacks
/// receive is `*mut jvmtiEnv`, a pointer to a pointer to the table.
pub type jvmtiEnv = *const jvmtiInterface_1;

/// A `java.lang.Thread` reference (`typedef jobject jthread`).
pub type jthread = jobject;
/// A `java.lang.ThreadGroup` reference (`typedef jobject jthreadGroup`).
pub type jthreadGroup = jobject;
/// A bytecode index within a method (`typedef jlong jlocation`); -1 when unknown.
pub type jlocation = jlong;
/// `struct JNINativeInterface_` under its JVMTI name, for the JNI function
/// table functions.
pub type jniNativeInterface = JNINativeInterface_;

/// The opaque target of a [`jrawMonitorID`] (`struct _jrawMonitorID`).
#[repr(C)]
pub struct _jrawMonitorID {
    _data: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

/// A raw monitor made by `CreateRawMonitor`.
pub type jrawMonitorID = *mut _jrawMonitorID;

/// `jvmtiError`: a C enum, 4 bytes (GCC gives an enum without negative values
/// the type `unsigned int`). Every JVMTI function returns one.
pub type jvmtiError = u32;
/// `jvmtiEvent`: an event number, 50 to 86 (C enum, 4 bytes).
pub type jvmtiEvent = u32;
/// `jvmtiEventMode`: `JVMTI_ENABLE` or `JVMTI_DISABLE` (C enum, 4 bytes).
/// Declared as `jint`: the values are 0 and 1 and a 32-bit argument is passed
/// the same way signed or unsigned.
pub type jvmtiEventMode = jint;
/// `jvmtiPhase`: what `GetPhase` writes (C enum, 4 bytes).
pub type jvmtiPhase = u32;
/// `jvmtiJlocationFormat`: what `GetJLocationFormat` writes (C enum, 4 bytes).
pub type jvmtiJlocationFormat = u32;

/// `jvmtiStartFunction`: the body of an agent thread started by
/// `RunAgentThread`; `arg` is the pointer given to `RunAgentThread`.
pub type jvmtiStartFunction = Option<
    unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, jni_env: *mut JNIEnv, arg: *mut c_void),
>;

/// A function table or callback slot that this crate does not call, typed as a
/// bare function pointer (the size of a C pointer) to keep the layout exact.
/// Give it its exact signature from jvmti.h before using it. Reserved slots
/// (`void *reservedN` in C) use it too.
pub type jvmtiUntypedFn = Option<unsafe extern "system" fn()>;

// ---------------------------------------------------------------- small enums

/// `jvmtiEventMode`: turn an event on.
pub const JVMTI_ENABLE: jvmtiEventMode = 1;
/// `jvmtiEventMode`: turn an event off.
pub const JVMTI_DISABLE: jvmtiEventMode = 0;

/// Lowest thread priority, for `RunAgentThread`.
pub const JVMTI_THREAD_MIN_PRIORITY: jint = 1;
/// Normal thread priority, for `RunAgentThread`.
pub const JVMTI_THREAD_NORM_PRIORITY: jint = 5;
/// Highest thread priority, for `RunAgentThread`.
pub const JVMTI_THREAD_MAX_PRIORITY: jint = 10;

/// `GetClassStatus` flag: bytecodes verified.
pub const JVMTI_CLASS_STATUS_VERIFIED: jint = 1;
/// `GetClassStatus` flag: class preparation complete.
pub const JVMTI_CLASS_STATUS_PREPARED: jint = 2;
/// `GetClassStatus` flag: class initialization complete.
pub const JVMTI_CLASS_STATUS_INITIALIZED: jint = 4;
/// `GetClassStatus` flag: error during initialization, the class is unusable.
pub const JVMTI_CLASS_STATUS_ERROR: jint = 8;
/// `GetClassStatus` flag: the class is an array class.
pub const JVMTI_CLASS_STATUS_ARRAY: jint = 16;
/// `GetClassStatus` flag: the class is a primitive class (`int.class`, ...).
pub const JVMTI_CLASS_STATUS_PRIMITIVE: jint = 32;

/// `jvmtiJlocationFormat`: a `jlocation` is a bytecode index (HotSpot's format).
pub const JVMTI_JLOCATION_JVMBCI: jvmtiJlocationFormat = 1;
/// `jvmtiJlocationFormat`: a `jlocation` is a native program counter.
pub const JVMTI_JLOCATION_MACHINEPC: jvmtiJlocationFormat = 2;
/// `jvmtiJlocationFormat`: some other representation.
pub const JVMTI_JLOCATION_OTHER: jvmtiJlocationFormat = 0;

// ---------------------------------------------------------------- errors

/// No error: the call succeeded.
pub const JVMTI_ERROR_NONE: jvmtiError = 0;
/// The passed thread is not a valid thread.
pub const JVMTI_ERROR_INVALID_THREAD: jvmtiError = 10;
/// `JVMTI_ERROR_INVALID_THREAD_GROUP` (11) from jvmti.h.
pub const JVMTI_ERROR_INVALID_THREAD_GROUP: jvmtiError = 11;
/// `JVMTI_ERROR_INVALID_PRIORITY` (12) from jvmti.h.
pub const JVMTI_ERROR_INVALID_PRIORITY: jvmtiError = 12;
/// `JVMTI_ERROR_THREAD_NOT_SUSPENDED` (13) from jvmti.h.
pub const JVMTI_ERROR_THREAD_NOT_SUSPENDED: jvmtiError = 13;
/// `JVMTI_ERROR_THREAD_SUSPENDED` (14) from jvmti.h.
pub const JVMTI_ERROR_THREAD_SUSPENDED: jvmtiError = 14;
/// The thread is not alive (not started or already terminated).
pub const JVMTI_ERROR_THREAD_NOT_ALIVE: jvmtiError = 15;
/// `JVMTI_ERROR_INVALID_OBJECT` (20) from jvmti.h.
pub const JVMTI_ERROR_INVALID_OBJECT: jvmtiError = 20;
/// The class is not a class object, or it has been unloaded.
pub const JVMTI_ERROR_INVALID_CLASS: jvmtiError = 21;
/// `JVMTI_ERROR_CLASS_NOT_PREPARED` (22) from jvmti.h.
pub const JVMTI_ERROR_CLASS_NOT_PREPARED: jvmtiError = 22;
/// The method ID is not valid (for instance its class was unloaded).
pub const JVMTI_ERROR_INVALID_METHODID: jvmtiError = 23;
/// `JVMTI_ERROR_INVALID_LOCATION` (24) from jvmti.h.
pub const JVMTI_ERROR_INVALID_LOCATION: jvmtiError = 24;
/// `JVMTI_ERROR_INVALID_FIELDID` (25) from jvmti.h.
pub const JVMTI_ERROR_INVALID_FIELDID: jvmtiError = 25;
/// `JVMTI_ERROR_INVALID_MODULE` (26) from jvmti.h.
pub const JVMTI_ERROR_INVALID_MODULE: jvmtiError = 26;
/// `JVMTI_ERROR_NO_MORE_FRAMES` (31) from jvmti.h.
pub const JVMTI_ERROR_NO_MORE_FRAMES: jvmtiError = 31;
/// `JVMTI_ERROR_OPAQUE_FRAME` (32) from jvmti.h.
pub const JVMTI_ERROR_OPAQUE_FRAME: jvmtiError = 32;
/// `JVMTI_ERROR_TYPE_MISMATCH` (34) from jvmti.h.
pub const JVMTI_ERROR_TYPE_MISMATCH: jvmtiError = 34;
/// `JVMTI_ERROR_INVALID_SLOT` (35) from jvmti.h.
pub const JVMTI_ERROR_INVALID_SLOT: jvmtiError = 35;
/// `JVMTI_ERROR_DUPLICATE` (40) from jvmti.h.
pub const JVMTI_ERROR_DUPLICATE: jvmtiError = 40;
/// `JVMTI_ERROR_NOT_FOUND` (41) from jvmti.h.
pub const JVMTI_ERROR_NOT_FOUND: jvmtiError = 41;
/// `JVMTI_ERROR_INVALID_MONITOR` (50) from jvmti.h.
pub const JVMTI_ERROR_INVALID_MONITOR: jvmtiError = 50;
/// `JVMTI_ERROR_NOT_MONITOR_OWNER` (51) from jvmti.h.
pub const JVMTI_ERROR_NOT_MONITOR_OWNER: jvmtiError = 51;
/// `JVMTI_ERROR_INTERRUPT` (52) from jvmti.h.
pub const JVMTI_ERROR_INTERRUPT: jvmtiError = 52;
/// `JVMTI_ERROR_INVALID_CLASS_FORMAT` (60) from jvmti.h.
pub const JVMTI_ERROR_INVALID_CLASS_FORMAT: jvmtiError = 60;
/// `JVMTI_ERROR_CIRCULAR_CLASS_DEFINITION` (61) from jvmti.h.
pub const JVMTI_ERROR_CIRCULAR_CLASS_DEFINITION: jvmtiError = 61;
/// `JVMTI_ERROR_FAILS_VERIFICATION` (62) from jvmti.h.
pub const JVMTI_ERROR_FAILS_VERIFICATION: jvmtiError = 62;
/// `JVMTI_ERROR_UNSUPPORTED_REDEFINITION_METHOD_ADDED` (63) from jvmti.h.
pub const JVMTI_ERROR_UNSUPPORTED_REDEFINITION_METHOD_ADDED: jvmtiError = 63;
/// `JVMTI_ERROR_UNSUPPORTED_REDEFINITION_SCHEMA_CHANGED` (64) from jvmti.h.
pub const JVMTI_ERROR_UNSUPPORTED_REDEFINITION_SCHEMA_CHANGED: jvmtiError = 64;
/// `JVMTI_ERROR_INVALID_TYPESTATE` (65) from jvmti.h.
pub const JVMTI_ERROR_INVALID_TYPESTATE: jvmtiError = 65;
/// `JVMTI_ERROR_UNSUPPORTED_REDEFINITION_HIERARCHY_CHANGED` (66) from jvmti.h.
pub const JVMTI_ERROR_UNSUPPORTED_REDEFINITION_HIERARCHY_CHANGED: jvmtiError = 66;
/// `JVMTI_ERROR_UNSUPPORTED_REDEFINITION_METHOD_DELETED` (67) from jvmti.h.
pub const JVMTI_ERROR_UNSUPPORTED_REDEFINITION_METHOD_DELETED: jvmtiError = 67;
/// `JVMTI_ERROR_UNSUPPORTED_VERSION` (68) from jvmti.h.
pub const JVMTI_ERROR_UNSUPPORTED_VERSION: jvmtiError = 68;
/// `JVMTI_ERROR_NAMES_DONT_MATCH` (69) from jvmti.h.
pub const JVMTI_ERROR_NAMES_DONT_MATCH: jvmtiError = 69;
/// `JVMTI_ERROR_UNSUPPORTED_REDEFINITION_CLASS_MODIFIERS_CHANGED` (70) from jvmti.h.
pub const JVMTI_ERROR_UNSUPPORTED_REDEFINITION_CLASS_MODIFIERS_CHANGED: jvmtiError = 70;
/// `JVMTI_ERROR_UNSUPPORTED_REDEFINITION_METHOD_MODIFIERS_CHANGED` (71) from jvmti.h.
pub const JVMTI_ERROR_UNSUPPORTED_REDEFINITION_METHOD_MODIFIERS_CHANGED: jvmtiError = 71;
/// `JVMTI_ERROR_UNSUPPORTED_REDEFINITION_CLASS_ATTRIBUTE_CHANGED` (72) from jvmti.h.
pub const JVMTI_ERROR_UNSUPPORTED_REDEFINITION_CLASS_ATTRIBUTE_CHANGED: jvmtiError = 72;
/// `JVMTI_ERROR_UNMODIFIABLE_CLASS` (79) from jvmti.h.
pub const JVMTI_ERROR_UNMODIFIABLE_CLASS: jvmtiError = 79;
/// `JVMTI_ERROR_UNMODIFIABLE_MODULE` (80) from jvmti.h.
pub const JVMTI_ERROR_UNMODIFIABLE_MODULE: jvmtiError = 80;
/// The capability or function is not available in this VM.
pub const JVMTI_ERROR_NOT_AVAILABLE: jvmtiError = 98;
/// The environment does not possess the capability the call needs.
pub const JVMTI_ERROR_MUST_POSSESS_CAPABILITY: jvmtiError = 99;
/// A pointer argument is unexpectedly null.
pub const JVMTI_ERROR_NULL_POINTER: jvmtiError = 100;
/// The class or method has no such information (no line numbers, no source file).
pub const JVMTI_ERROR_ABSENT_INFORMATION: jvmtiError = 101;
/// `JVMTI_ERROR_INVALID_EVENT_TYPE` (102) from jvmti.h.
pub const JVMTI_ERROR_INVALID_EVENT_TYPE: jvmtiError = 102;
/// An argument is out of range.
pub const JVMTI_ERROR_ILLEGAL_ARGUMENT: jvmtiError = 103;
/// The method is native: it has no bytecodes or line numbers.
pub const JVMTI_ERROR_NATIVE_METHOD: jvmtiError = 104;
/// `JVMTI_ERROR_CLASS_LOADER_UNSUPPORTED` (106) from jvmti.h.
pub const JVMTI_ERROR_CLASS_LOADER_UNSUPPORTED: jvmtiError = 106;
/// The VM could not allocate memory.
pub const JVMTI_ERROR_OUT_OF_MEMORY: jvmtiError = 110;
/// `JVMTI_ERROR_ACCESS_DENIED` (111) from jvmti.h.
pub const JVMTI_ERROR_ACCESS_DENIED: jvmtiError = 111;
/// The function is not available in the current phase.
pub const JVMTI_ERROR_WRONG_PHASE: jvmtiError = 112;
/// An unexpected internal error in the VM.
pub const JVMTI_ERROR_INTERNAL: jvmtiError = 113;
/// The calling thread is not attached to the VM.
pub const JVMTI_ERROR_UNATTACHED_THREAD: jvmtiError = 115;
/// The JVMTI environment is no longer connected or was disposed.
pub const JVMTI_ERROR_INVALID_ENVIRONMENT: jvmtiError = 116;
/// The largest error value in the header.
pub const JVMTI_ERROR_MAX: jvmtiError = 116;

// ---------------------------------------------------------------- events

/// The smallest event number.
pub const JVMTI_MIN_EVENT_TYPE_VAL: jvmtiEvent = 50;
/// `JVMTI_EVENT_VM_INIT` (50), delivered to `jvmtiEventCallbacks::VMInit`.
pub const JVMTI_EVENT_VM_INIT: jvmtiEvent = 50;
/// `JVMTI_EVENT_VM_DEATH` (51), delivered to `jvmtiEventCallbacks::VMDeath`.
pub const JVMTI_EVENT_VM_DEATH: jvmtiEvent = 51;
/// `JVMTI_EVENT_THREAD_START` (52), delivered to `jvmtiEventCallbacks::ThreadStart`.
pub const JVMTI_EVENT_THREAD_START: jvmtiEvent = 52;
/// `JVMTI_EVENT_THREAD_END` (53), delivered to `jvmtiEventCallbacks::ThreadEnd`.
pub const JVMTI_EVENT_THREAD_END: jvmtiEvent = 53;
/// `JVMTI_EVENT_CLASS_FILE_LOAD_HOOK` (54), delivered to `jvmtiEventCallbacks::ClassFileLoadHook`.
pub const JVMTI_EVENT_CLASS_FILE_LOAD_HOOK: jvmtiEvent = 54;
/// `JVMTI_EVENT_CLASS_LOAD` (55), delivered to `jvmtiEventCallbacks::ClassLoad`.
pub const JVMTI_EVENT_CLASS_LOAD: jvmtiEvent = 55;
/// `JVMTI_EVENT_CLASS_PREPARE` (56), delivered to `jvmtiEventCallbacks::ClassPrepare`.
pub const JVMTI_EVENT_CLASS_PREPARE: jvmtiEvent = 56;
/// `JVMTI_EVENT_VM_START` (57), delivered to `jvmtiEventCallbacks::VMStart`.
pub const JVMTI_EVENT_VM_START: jvmtiEvent = 57;
/// `JVMTI_EVENT_EXCEPTION` (58), delivered to `jvmtiEventCallbacks::Exception`.
pub const JVMTI_EVENT_EXCEPTION: jvmtiEvent = 58;
/// `JVMTI_EVENT_EXCEPTION_CATCH` (59), delivered to `jvmtiEventCallbacks::ExceptionCatch`.
pub const JVMTI_EVENT_EXCEPTION_CATCH: jvmtiEvent = 59;
/// `JVMTI_EVENT_SINGLE_STEP` (60), delivered to `jvmtiEventCallbacks::SingleStep`.
pub const JVMTI_EVENT_SINGLE_STEP: jvmtiEvent = 60;
/// `JVMTI_EVENT_FRAME_POP` (61), delivered to `jvmtiEventCallbacks::FramePop`.
pub const JVMTI_EVENT_FRAME_POP: jvmtiEvent = 61;
/// `JVMTI_EVENT_BREAKPOINT` (62), delivered to `jvmtiEventCallbacks::Breakpoint`.
pub const JVMTI_EVENT_BREAKPOINT: jvmtiEvent = 62;
/// `JVMTI_EVENT_FIELD_ACCESS` (63), delivered to `jvmtiEventCallbacks::FieldAccess`.
pub const JVMTI_EVENT_FIELD_ACCESS: jvmtiEvent = 63;
/// `JVMTI_EVENT_FIELD_MODIFICATION` (64), delivered to `jvmtiEventCallbacks::FieldModification`.
pub const JVMTI_EVENT_FIELD_MODIFICATION: jvmtiEvent = 64;
/// `JVMTI_EVENT_METHOD_ENTRY` (65), delivered to `jvmtiEventCallbacks::MethodEntry`.
pub const JVMTI_EVENT_METHOD_ENTRY: jvmtiEvent = 65;
/// `JVMTI_EVENT_METHOD_EXIT` (66), delivered to `jvmtiEventCallbacks::MethodExit`.
pub const JVMTI_EVENT_METHOD_EXIT: jvmtiEvent = 66;
/// `JVMTI_EVENT_NATIVE_METHOD_BIND` (67), delivered to `jvmtiEventCallbacks::NativeMethodBind`.
pub const JVMTI_EVENT_NATIVE_METHOD_BIND: jvmtiEvent = 67;
/// `JVMTI_EVENT_COMPILED_METHOD_LOAD` (68), delivered to `jvmtiEventCallbacks::CompiledMethodLoad`.
pub const JVMTI_EVENT_COMPILED_METHOD_LOAD: jvmtiEvent = 68;
/// `JVMTI_EVENT_COMPILED_METHOD_UNLOAD` (69), delivered to `jvmtiEventCallbacks::CompiledMethodUnload`.
pub const JVMTI_EVENT_COMPILED_METHOD_UNLOAD: jvmtiEvent = 69;
/// `JVMTI_EVENT_DYNAMIC_CODE_GENERATED` (70), delivered to `jvmtiEventCallbacks::DynamicCodeGenerated`.
pub const JVMTI_EVENT_DYNAMIC_CODE_GENERATED: jvmtiEvent = 70;
/// `JVMTI_EVENT_DATA_DUMP_REQUEST` (71), delivered to `jvmtiEventCallbacks::DataDumpRequest`.
pub const JVMTI_EVENT_DATA_DUMP_REQUEST: jvmtiEvent = 71;
/// `JVMTI_EVENT_MONITOR_WAIT` (73), delivered to `jvmtiEventCallbacks::MonitorWait`.
pub const JVMTI_EVENT_MONITOR_WAIT: jvmtiEvent = 73;
/// `JVMTI_EVENT_MONITOR_WAITED` (74), delivered to `jvmtiEventCallbacks::MonitorWaited`.
pub const JVMTI_EVENT_MONITOR_WAITED: jvmtiEvent = 74;
/// `JVMTI_EVENT_MONITOR_CONTENDED_ENTER` (75), delivered to `jvmtiEventCallbacks::MonitorContendedEnter`.
pub const JVMTI_EVENT_MONITOR_CONTENDED_ENTER: jvmtiEvent = 75;
/// `JVMTI_EVENT_MONITOR_CONTENDED_ENTERED` (76), delivered to `jvmtiEventCallbacks::MonitorContendedEntered`.
pub const JVMTI_EVENT_MONITOR_CONTENDED_ENTERED: jvmtiEvent = 76;
/// `JVMTI_EVENT_RESOURCE_EXHAUSTED` (80), delivered to `jvmtiEventCallbacks::ResourceExhausted`.
pub const JVMTI_EVENT_RESOURCE_EXHAUSTED: jvmtiEvent = 80;
/// `JVMTI_RESOURCE_EXHAUSTED_OOM_ERROR`: an `OutOfMemoryError` will be thrown
/// (a flag of the `ResourceExhausted` event).
pub const JVMTI_RESOURCE_EXHAUSTED_OOM_ERROR: jint = 0x0001;
/// `JVMTI_RESOURCE_EXHAUSTED_JAVA_HEAP`: the Java heap is what ran out.
pub const JVMTI_RESOURCE_EXHAUSTED_JAVA_HEAP: jint = 0x0002;
/// `JVMTI_RESOURCE_EXHAUSTED_THREADS`: no more threads could be created.
pub const JVMTI_RESOURCE_EXHAUSTED_THREADS: jint = 0x0004;
/// `JVMTI_EVENT_GARBAGE_COLLECTION_START` (81), delivered to `jvmtiEventCallbacks::GarbageCollectionStart`.
pub const JVMTI_EVENT_GARBAGE_COLLECTION_START: jvmtiEvent = 81;
/// `JVMTI_EVENT_GARBAGE_COLLECTION_FINISH` (82), delivered to `jvmtiEventCallbacks::GarbageCollectionFinish`.
pub const JVMTI_EVENT_GARBAGE_COLLECTION_FINISH: jvmtiEvent = 82;
/// `JVMTI_EVENT_OBJECT_FREE` (83), delivered to `jvmtiEventCallbacks::ObjectFree`.
pub const JVMTI_EVENT_OBJECT_FREE: jvmtiEvent = 83;
/// `JVMTI_EVENT_VM_OBJECT_ALLOC` (84), delivered to `jvmtiEventCallbacks::VMObjectAlloc`.
pub const JVMTI_EVENT_VM_OBJECT_ALLOC: jvmtiEvent = 84;
/// `JVMTI_EVENT_SAMPLED_OBJECT_ALLOC` (86), delivered to `jvmtiEventCallbacks::SampledObjectAlloc`.
pub const JVMTI_EVENT_SAMPLED_OBJECT_ALLOC: jvmtiEvent = 86;
/// The largest event number.
pub const JVMTI_MAX_EVENT_TYPE_VAL: jvmtiEvent = 86;

// ---------------------------------------------------------------- phases

/// In `Agent_OnLoad` (or `Agent_OnAttach` before it returns).
pub const JVMTI_PHASE_ONLOAD: jvmtiPhase = 1;
/// Between `Agent_OnLoad` returning and the VMStart event.
pub const JVMTI_PHASE_PRIMORDIAL: jvmtiPhase = 2;
/// From VMStart to VMInit.
pub const JVMTI_PHASE_START: jvmtiPhase = 6;
/// From VMInit until VMDeath returns.
pub const JVMTI_PHASE_LIVE: jvmtiPhase = 4;
/// After VMDeath returned: JVMTI functions fail with `JVMTI_ERROR_WRONG_PHASE`.
pub const JVMTI_PHASE_DEAD: jvmtiPhase = 8;

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

/// What `GetThreadGroupInfo` fills. `name` is allocated by JVMTI.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiThreadGroupInfo {
    /// The parent group (null for the top group).
    pub parent: jthreadGroup,
    /// The group name, modified UTF-8.
    pub name: *mut c_char,
    /// The maximum priority of the group.
    pub max_priority: jint,
    /// Whether the group is a daemon group.
    pub is_daemon: jboolean,
}

impl Default for jvmtiThreadGroupInfo {
    /// All pointers null, numbers zero: the buffer to hand to `GetThreadGroupInfo`.
    fn default() -> Self {
        Self {
            parent: std::ptr::null_mut(),
            name: std::ptr::null_mut(),
            max_priority: 0,
            is_daemon: 0,
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

/// One entry of the native-address map of the `CompiledMethodLoad` event.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiAddrLocationMap {
    /// The start of the native code for `location`.
    pub start_address: *const c_void,
    /// The bytecode index.
    pub location: jlocation,
}

// ---------------------------------------------------------------- heap walking

/// `JVMTI_HEAP_FILTER_TAGGED`: do not report tagged objects.
pub const JVMTI_HEAP_FILTER_TAGGED: jint = 0x4;
/// `JVMTI_HEAP_FILTER_UNTAGGED`: do not report untagged objects.
pub const JVMTI_HEAP_FILTER_UNTAGGED: jint = 0x8;
/// `JVMTI_HEAP_FILTER_CLASS_TAGGED`: do not report objects of tagged classes.
pub const JVMTI_HEAP_FILTER_CLASS_TAGGED: jint = 0x10;
/// `JVMTI_HEAP_FILTER_CLASS_UNTAGGED`: do not report objects of untagged classes.
pub const JVMTI_HEAP_FILTER_CLASS_UNTAGGED: jint = 0x20;

/// `JVMTI_VISIT_OBJECTS`: a reference callback's answer to follow the
/// references of the object it was called for.
pub const JVMTI_VISIT_OBJECTS: jint = 0x100;
/// `JVMTI_VISIT_ABORT`: a callback's answer to end the walk at once.
pub const JVMTI_VISIT_ABORT: jint = 0x8000;

/// `jvmtiHeapReferenceKind`: what a reference reported by `FollowReferences`
/// is (C enum, 4 bytes).
pub type jvmtiHeapReferenceKind = u32;
/// From an object to its class.
pub const JVMTI_HEAP_REFERENCE_CLASS: jvmtiHeapReferenceKind = 1;
/// From an object to the value of one of its instance fields.
pub const JVMTI_HEAP_REFERENCE_FIELD: jvmtiHeapReferenceKind = 2;
/// From an array to one of its elements.
pub const JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT: jvmtiHeapReferenceKind = 3;
/// From a class to its class loader.
pub const JVMTI_HEAP_REFERENCE_CLASS_LOADER: jvmtiHeapReferenceKind = 4;
/// From a class to its signers array.
pub const JVMTI_HEAP_REFERENCE_SIGNERS: jvmtiHeapReferenceKind = 5;
/// From a class to its protection domain.
pub const JVMTI_HEAP_REFERENCE_PROTECTION_DOMAIN: jvmtiHeapReferenceKind = 6;
/// From a class to one of its interfaces.
pub const JVMTI_HEAP_REFERENCE_INTERFACE: jvmtiHeapReferenceKind = 7;
/// From a class to the value of one of its static fields.
pub const JVMTI_HEAP_REFERENCE_STATIC_FIELD: jvmtiHeapReferenceKind = 8;
/// From a class to a resolved entry of its constant pool.
pub const JVMTI_HEAP_REFERENCE_CONSTANT_POOL: jvmtiHeapReferenceKind = 9;
/// From a class to its superclass.
pub const JVMTI_HEAP_REFERENCE_SUPERCLASS: jvmtiHeapReferenceKind = 10;
/// Heap root: a JNI global reference.
pub const JVMTI_HEAP_REFERENCE_JNI_GLOBAL: jvmtiHeapReferenceKind = 21;
/// Heap root: a system class.
pub const JVMTI_HEAP_REFERENCE_SYSTEM_CLASS: jvmtiHeapReferenceKind = 22;
/// Heap root: a monitor.
pub const JVMTI_HEAP_REFERENCE_MONITOR: jvmtiHeapReferenceKind = 23;
/// Heap root: a local variable on a thread's stack.
pub const JVMTI_HEAP_REFERENCE_STACK_LOCAL: jvmtiHeapReferenceKind = 24;
/// Heap root: a JNI local reference.
pub const JVMTI_HEAP_REFERENCE_JNI_LOCAL: jvmtiHeapReferenceKind = 25;
/// Heap root: a thread.
pub const JVMTI_HEAP_REFERENCE_THREAD: jvmtiHeapReferenceKind = 26;
/// Heap root: another root the VM keeps.
pub const JVMTI_HEAP_REFERENCE_OTHER: jvmtiHeapReferenceKind = 27;

/// `jvmtiHeapReferenceInfoField`, for `JVMTI_HEAP_REFERENCE_FIELD` and
/// `JVMTI_HEAP_REFERENCE_STATIC_FIELD`: the field's index, counted over the
/// fields of the class's interfaces first, then of its superclasses from
/// `java.lang.Object` down (see the JVMTI specification).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct jvmtiHeapReferenceInfoField {
    /// The field's index.
    pub index: jint,
}

/// `jvmtiHeapReferenceInfoArray`, for `JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct jvmtiHeapReferenceInfoArray {
    /// The element's index.
    pub index: jint,
}

/// `jvmtiHeapReferenceInfoConstantPool`, for `JVMTI_HEAP_REFERENCE_CONSTANT_POOL`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct jvmtiHeapReferenceInfoConstantPool {
    /// The constant pool index.
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

/// `jvmtiHeapReferenceInfoReserved`: what other kinds may use later.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct jvmtiHeapReferenceInfoReserved {
    /// Reserved.
    pub reserved: [jlong; 8],
}

/// `jvmtiHeapReferenceInfo`: what a reference callback learns of a
/// reference besides its kind; which member applies depends on the kind.
#[repr(C)]
#[derive(Clone, Copy)]
pub union jvmtiHeapReferenceInfo {
    /// For instance and static fields.
    pub field: jvmtiHeapReferenceInfoField,
    /// For array elements.
    pub array: jvmtiHeapReferenceInfoArray,
    /// For constant pool entries.
    pub constant_pool: jvmtiHeapReferenceInfoConstantPool,
    /// For stack locals.
    pub stack_local: jvmtiHeapReferenceInfoStackLocal,
    /// For JNI locals.
    pub jni_local: jvmtiHeapReferenceInfoJniLocal,
    /// Reserved.
    pub other: jvmtiHeapReferenceInfoReserved,
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
    /// `jvmtiPrimitiveFieldCallback` (untyped here).
    pub primitive_field_callback: jvmtiUntypedFn,
    /// `jvmtiArrayPrimitiveValueCallback` (untyped here).
    pub array_primitive_value_callback: jvmtiUntypedFn,
    /// `jvmtiStringPrimitiveValueCallback` (untyped here).
    pub string_primitive_value_callback: jvmtiUntypedFn,
    /// `reserved5` to `reserved15`.
    pub reserved: [jvmtiUntypedFn; 11],
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
    /// No capability.
    pub const fn new() -> Self {
        Self { bits: [0; 4] }
    }

    /// The capability set with exactly the given bits (`CAN_*` constants).
    /// Panics if a bit is 128 or more.
    pub const fn of(bits: &[u32]) -> Self {
        let mut caps = Self::new();
        let mut i = 0;
        while i < bits.len() {
            caps.bits[(bits[i] / 32) as usize] |= 1 << (bits[i] % 32);
            i += 1;
        }
        caps
    }

    /// Turns on the capability at `bit` (a `CAN_*` constant). Panics if `bit`
    /// is 128 or more.
    pub fn set(&mut self, bit: u32) {
        self.bits[(bit / 32) as usize] |= 1 << (bit % 32);
    }

    /// Turns off the capability at `bit` (a `CAN_*` constant). Panics if `bit`
    /// is 128 or more.
    pub fn clear(&mut self, bit: u32) {
        self.bits[(bit / 32) as usize] &= !(1 << (bit % 32));
    }

    /// Whether the capability at `bit` (a `CAN_*` constant) is on. Panics if
    /// `bit` is 128 or more.
    pub fn has(&self, bit: u32) -> bool {
        self.bits[(bit / 32) as usize] & (1 << (bit % 32)) != 0
    }

    /// Whether every capability in `other` is also in `self` (for instance:
    /// are the capabilities we need among the potential ones?).
    pub fn contains_all(&self, other: &Self) -> bool {
        self.bits
            .iter()
            .zip(other.bits.iter())
            .all(|(mine, theirs)| mine & theirs == *theirs)
    }

    /// The capabilities of `other` missing from `self`.
    pub fn missing(&self, other: &Self) -> Self {
        let mut out = Self::new();
        for (i, word) in out.bits.iter_mut().enumerate() {
            *word = other.bits[i] & !self.bits[i];
        }
        out
    }

    /// The bits that are on, in increasing order (`CAN_*` numbers).
    pub fn iter_bits(&self) -> impl Iterator<Item = u32> + '_ {
        (0..128u32).filter(move |&bit| self.has(bit))
    }

    /// The four 32-bit words exactly as C sees them.
    pub const fn words(&self) -> [u32; 4] {
        self.bits
    }

    /// Builds the struct from the four 32-bit words C would hold.
    pub const fn from_words(words: [u32; 4]) -> Self {
        Self { bits: words }
    }
}

/// The name of capability `bit` as in jvmti.h (`"can_tag_objects"`), or
/// `None` for a reserved bit.
pub fn capability_name(bit: u32) -> Option<&'static str> {
    CAPABILITY_NAMES.get(bit as usize).copied()
}

/// Capability bit 0: `can_tag_objects`.
pub const CAN_TAG_OBJECTS: u32 = 0;
/// Capability bit 1: `can_generate_field_modification_events`.
pub const CAN_GENERATE_FIELD_MODIFICATION_EVENTS: u32 = 1;
/// Capability bit 2: `can_generate_field_access_events`.
pub const CAN_GENERATE_FIELD_ACCESS_EVENTS: u32 = 2;
/// Capability bit 3: `can_get_bytecodes`.
pub const CAN_GET_BYTECODES: u32 = 3;
/// Capability bit 4: `can_get_synthetic_attribute`.
pub const CAN_GET_SYNTHETIC_ATTRIBUTE: u32 = 4;
/// Capability bit 5: `can_get_owned_monitor_info`.
pub const CAN_GET_OWNED_MONITOR_INFO: u32 = 5;
/// Capability bit 6: `can_get_current_contended_monitor`.
pub const CAN_GET_CURRENT_CONTENDED_MONITOR: u32 = 6;
/// Capability bit 7: `can_get_monitor_info`.
pub const CAN_GET_MONITOR_INFO: u32 = 7;
/// Capability bit 8: `can_pop_frame`.
pub const CAN_POP_FRAME: u32 = 8;
/// Capability bit 9: `can_redefine_classes`.
pub const CAN_REDEFINE_CLASSES: u32 = 9;
/// Capability bit 10: `can_signal_thread`.
pub const CAN_SIGNAL_THREAD: u32 = 10;
/// Capability bit 11: `can_get_source_file_name`.
pub const CAN_GET_SOURCE_FILE_NAME: u32 = 11;
/// Capability bit 12: `can_get_line_numbers`.
pub const CAN_GET_LINE_NUMBERS: u32 = 12;
/// Capability bit 13: `can_get_source_debug_extension`.
pub const CAN_GET_SOURCE_DEBUG_EXTENSION: u32 = 13;
/// Capability bit 14: `can_access_local_variables`.
pub const CAN_ACCESS_LOCAL_VARIABLES: u32 = 14;
/// Capability bit 15: `can_maintain_original_method_order`.
pub const CAN_MAINTAIN_ORIGINAL_METHOD_ORDER: u32 = 15;
/// Capability bit 16: `can_generate_single_step_events`.
pub const CAN_GENERATE_SINGLE_STEP_EVENTS: u32 = 16;
/// Capability bit 17: `can_generate_exception_events`.
pub const CAN_GENERATE_EXCEPTION_EVENTS: u32 = 17;
/// Capability bit 18: `can_generate_frame_pop_events`.
pub const CAN_GENERATE_FRAME_POP_EVENTS: u32 = 18;
/// Capability bit 19: `can_generate_breakpoint_events`.
pub const CAN_GENERATE_BREAKPOINT_EVENTS: u32 = 19;
/// Capability bit 20: `can_suspend`.
pub const CAN_SUSPEND: u32 = 20;
/// Capability bit 21: `can_redefine_any_class`.
pub const CAN_REDEFINE_ANY_CLASS: u32 = 21;
/// Capability bit 22: `can_get_current_thread_cpu_time`.
pub const CAN_GET_CURRENT_THREAD_CPU_TIME: u32 = 22;
/// Capability bit 23: `can_get_thread_cpu_time`.
pub const CAN_GET_THREAD_CPU_TIME: u32 = 23;
/// Capability bit 24: `can_generate_method_entry_events`.
pub const CAN_GENERATE_METHOD_ENTRY_EVENTS: u32 = 24;
/// Capability bit 25: `can_generate_method_exit_events`.
pub const CAN_GENERATE_METHOD_EXIT_EVENTS: u32 = 25;
/// Capability bit 26: `can_generate_all_class_hook_events`.
pub const CAN_GENERATE_ALL_CLASS_HOOK_EVENTS: u32 = 26;
/// Capability bit 27: `can_generate_compiled_method_load_events`.
pub const CAN_GENERATE_COMPILED_METHOD_LOAD_EVENTS: u32 = 27;
/// Capability bit 28: `can_generate_monitor_events`.
pub const CAN_GENERATE_MONITOR_EVENTS: u32 = 28;
/// Capability bit 29: `can_generate_vm_object_alloc_events`.
pub const CAN_GENERATE_VM_OBJECT_ALLOC_EVENTS: u32 = 29;
/// Capability bit 30: `can_generate_native_method_bind_events`.
pub const CAN_GENERATE_NATIVE_METHOD_BIND_EVENTS: u32 = 30;
/// Capability bit 31: `can_generate_garbage_collection_events`.
pub const CAN_GENERATE_GARBAGE_COLLECTION_EVENTS: u32 = 31;
/// Capability bit 32: `can_generate_object_free_events`.
pub const CAN_GENERATE_OBJECT_FREE_EVENTS: u32 = 32;
/// Capability bit 33: `can_force_early_return`.
pub const CAN_FORCE_EARLY_RETURN: u32 = 33;
/// Capability bit 34: `can_get_owned_monitor_stack_depth_info`.
pub const CAN_GET_OWNED_MONITOR_STACK_DEPTH_INFO: u32 = 34;
/// Capability bit 35: `can_get_constant_pool`.
pub const CAN_GET_CONSTANT_POOL: u32 = 35;
/// Capability bit 36: `can_set_native_method_prefix`.
pub const CAN_SET_NATIVE_METHOD_PREFIX: u32 = 36;
/// Capability bit 37: `can_retransform_classes`.
pub const CAN_RETRANSFORM_CLASSES: u32 = 37;
/// Capability bit 38: `can_retransform_any_class`.
pub const CAN_RETRANSFORM_ANY_CLASS: u32 = 38;
/// Capability bit 39: `can_generate_resource_exhaustion_heap_events`.
pub const CAN_GENERATE_RESOURCE_EXHAUSTION_HEAP_EVENTS: u32 = 39;
/// Capability bit 40: `can_generate_resource_exhaustion_threads_events`.
pub const CAN_GENERATE_RESOURCE_EXHAUSTION_THREADS_EVENTS: u32 = 40;
/// Capability bit 41: `can_generate_early_vmstart`.
pub const CAN_GENERATE_EARLY_VMSTART: u32 = 41;
/// Capability bit 42: `can_generate_early_class_hook_events`.
pub const CAN_GENERATE_EARLY_CLASS_HOOK_EVENTS: u32 = 42;
/// Capability bit 43: `can_generate_sampled_object_alloc_events`.
pub const CAN_GENERATE_SAMPLED_OBJECT_ALLOC_EVENTS: u32 = 43;

/// The names of the capability bits as in jvmti.h, by bit index.
const CAPABILITY_NAMES: [&str; 44] = [
    "can_tag_objects",
    "can_generate_field_modification_events",
    "can_generate_field_access_events",
    "can_get_bytecodes",
    "can_get_synthetic_attribute",
    "can_get_owned_monitor_info",
    "can_get_current_contended_monitor",
    "can_get_monitor_info",
    "can_pop_frame",
    "can_redefine_classes",
    "can_signal_thread",
    "can_get_source_file_name",
    "can_get_line_numbers",
    "can_get_source_debug_extension",
    "can_access_local_variables",
    "can_maintain_original_method_order",
    "can_generate_single_step_events",
    "can_generate_exception_events",
    "can_generate_frame_pop_events",
    "can_generate_breakpoint_events",
    "can_suspend",
    "can_redefine_any_class",
    "can_get_current_thread_cpu_time",
    "can_get_thread_cpu_time",
    "can_generate_method_entry_events",
    "can_generate_method_exit_events",
    "can_generate_all_class_hook_events",
    "can_generate_compiled_method_load_events",
    "can_generate_monitor_events",
    "can_generate_vm_object_alloc_events",
    "can_generate_native_method_bind_events",
    "can_generate_garbage_collection_events",
    "can_generate_object_free_events",
    "can_force_early_return",
    "can_get_owned_monitor_stack_depth_info",
    "can_get_constant_pool",
    "can_set_native_method_prefix",
    "can_retransform_classes",
    "can_retransform_any_class",
    "can_generate_resource_exhaustion_heap_events",
    "can_generate_resource_exhaustion_threads_events",
    "can_generate_early_vmstart",
    "can_generate_early_class_hook_events",
    "can_generate_sampled_object_alloc_events",
];

/// The number of named capabilities in the JDK 17 header (bits 0 to 43);
/// bits from here to 127 are reserved.
pub const NAMED_CAPABILITY_BITS: u32 = 44;

// ---------------------------------------------------------------- event callbacks

/// A reserved slot of `jvmtiEventCallbacks`; leave it `None`.
pub type jvmtiEventReserved = Option<unsafe extern "system" fn()>;

/// The VM Initialization Event callback (event 50), `jvmtiEventVMInit` in jvmti.h.
pub type jvmtiEventVMInit = Option<
    unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread),
>;

/// The VM Death Event callback (event 51), `jvmtiEventVMDeath` in jvmti.h.
pub type jvmtiEventVMDeath =
    Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, jni_env: *mut JNIEnv)>;

/// The Thread Start callback (event 52), `jvmtiEventThreadStart` in jvmti.h.
pub type jvmtiEventThreadStart = Option<
    unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread),
>;

/// The Thread End callback (event 53), `jvmtiEventThreadEnd` in jvmti.h.
pub type jvmtiEventThreadEnd = Option<
    unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread),
>;

/// The Class File Load Hook callback (event 54), `jvmtiEventClassFileLoadHook` in jvmti.h.
pub type jvmtiEventClassFileLoadHook = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        class_being_redefined: jclass,
        loader: jobject,
        name: *const c_char,
        protection_domain: jobject,
        class_data_len: jint,
        class_data: *const c_uchar,
        new_class_data_len: *mut jint,
        new_class_data: *mut *mut c_uchar,
    ),
>;

/// The Class Load callback (event 55), `jvmtiEventClassLoad` in jvmti.h.
pub type jvmtiEventClassLoad = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        klass: jclass,
    ),
>;

/// The Class Prepare callback (event 56), `jvmtiEventClassPrepare` in jvmti.h.
pub type jvmtiEventClassPrepare = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        klass: jclass,
    ),
>;

/// The VM Start Event callback (event 57), `jvmtiEventVMStart` in jvmti.h.
pub type jvmtiEventVMStart =
    Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, jni_env: *mut JNIEnv)>;

/// The Exception callback (event 58), `jvmtiEventException` in jvmti.h.
pub type jvmtiEventException = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        method: jmethodID,
        location: jlocation,
        exception: jobject,
        catch_method: jmethodID,
        catch_location: jlocation,
    ),
>;

/// The Exception Catch callback (event 59), `jvmtiEventExceptionCatch` in jvmti.h.
pub type jvmtiEventExceptionCatch = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        method: jmethodID,
        location: jlocation,
        exception: jobject,
    ),
>;

/// The Single Step callback (event 60), `jvmtiEventSingleStep` in jvmti.h.
pub type jvmtiEventSingleStep = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        method: jmethodID,
        location: jlocation,
    ),
>;

/// The Frame Pop callback (event 61), `jvmtiEventFramePop` in jvmti.h.
pub type jvmtiEventFramePop = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        method: jmethodID,
        was_popped_by_exception: jboolean,
    ),
>;

/// The Breakpoint callback (event 62), `jvmtiEventBreakpoint` in jvmti.h.
pub type jvmtiEventBreakpoint = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        method: jmethodID,
        location: jlocation,
    ),
>;

/// The Field Access callback (event 63), `jvmtiEventFieldAccess` in jvmti.h.
pub type jvmtiEventFieldAccess = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        method: jmethodID,
        location: jlocation,
        field_klass: jclass,
        object: jobject,
        field: jfieldID,
    ),
>;

/// The Field Modification callback (event 64), `jvmtiEventFieldModification` in jvmti.h.
pub type jvmtiEventFieldModification = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        method: jmethodID,
        location: jlocation,
        field_klass: jclass,
        object: jobject,
        field: jfieldID,
        signature_type: c_char,
        new_value: jvalue,
    ),
>;

/// The Method Entry callback (event 65), `jvmtiEventMethodEntry` in jvmti.h.
pub type jvmtiEventMethodEntry = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        method: jmethodID,
    ),
>;

/// The Method Exit callback (event 66), `jvmtiEventMethodExit` in jvmti.h.
pub type jvmtiEventMethodExit = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        method: jmethodID,
        was_popped_by_exception: jboolean,
        return_value: jvalue,
    ),
>;

/// The Native Method Bind callback (event 67), `jvmtiEventNativeMethodBind` in jvmti.h.
pub type jvmtiEventNativeMethodBind = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        method: jmethodID,
        address: *mut c_void,
        new_address_ptr: *mut *mut c_void,
    ),
>;

/// The Compiled Method Load callback (event 68), `jvmtiEventCompiledMethodLoad` in jvmti.h.
pub type jvmtiEventCompiledMethodLoad = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        method: jmethodID,
        code_size: jint,
        code_addr: *const c_void,
        map_length: jint,
        map: *const jvmtiAddrLocationMap,
        compile_info: *const c_void,
    ),
>;

/// The Compiled Method Unload callback (event 69), `jvmtiEventCompiledMethodUnload` in jvmti.h.
pub type jvmtiEventCompiledMethodUnload = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        method: jmethodID,
        code_addr: *const c_void,
    ),
>;

/// The Dynamic Code Generated callback (event 70), `jvmtiEventDynamicCodeGenerated` in jvmti.h.
pub type jvmtiEventDynamicCodeGenerated = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        name: *const c_char,
        address: *const c_void,
        length: jint,
    ),
>;

/// The Data Dump Request callback (event 71), `jvmtiEventDataDumpRequest` in jvmti.h.
pub type jvmtiEventDataDumpRequest = Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv)>;

/// The Monitor Wait callback (event 73), `jvmtiEventMonitorWait` in jvmti.h.
pub type jvmtiEventMonitorWait = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        object: jobject,
        timeout: jlong,
    ),
>;

/// The Monitor Waited callback (event 74), `jvmtiEventMonitorWaited` in jvmti.h.
pub type jvmtiEventMonitorWaited = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        object: jobject,
        timed_out: jboolean,
    ),
>;

/// The Monitor Contended Enter callback (event 75), `jvmtiEventMonitorContendedEnter` in jvmti.h.
pub type jvmtiEventMonitorContendedEnter = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        object: jobject,
    ),
>;

/// The Monitor Contended Entered callback (event 76), `jvmtiEventMonitorContendedEntered` in jvmti.h.
pub type jvmtiEventMonitorContendedEntered = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        object: jobject,
    ),
>;

/// The Resource Exhausted callback (event 80), `jvmtiEventResourceExhausted` in jvmti.h.
pub type jvmtiEventResourceExhausted = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        flags: jint,
        reserved: *const c_void,
        description: *const c_char,
    ),
>;

/// The Garbage Collection Start callback (event 81), `jvmtiEventGarbageCollectionStart` in jvmti.h.
pub type jvmtiEventGarbageCollectionStart =
    Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv)>;

/// The Garbage Collection Finish callback (event 82), `jvmtiEventGarbageCollectionFinish` in jvmti.h.
pub type jvmtiEventGarbageCollectionFinish =
    Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv)>;

/// The Object Free callback (event 83), `jvmtiEventObjectFree` in jvmti.h.
pub type jvmtiEventObjectFree =
    Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, tag: jlong)>;

/// The VM Object Allocation callback (event 84), `jvmtiEventVMObjectAlloc` in jvmti.h.
pub type jvmtiEventVMObjectAlloc = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        object: jobject,
        object_klass: jclass,
        size: jlong,
    ),
>;

/// The Sampled Object Allocation callback (event 86), `jvmtiEventSampledObjectAlloc` in jvmti.h.
pub type jvmtiEventSampledObjectAlloc = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        object: jobject,
        object_klass: jclass,
        size: jlong,
    ),
>;

/// The event callback table given to `SetEventCallbacks`, one slot per event
/// number from 50 (`VMInit`) to 86 (`SampledObjectAlloc`), reserved numbers
/// included. `Default` is all `None`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct jvmtiEventCallbacks {
    /// 50: VM Initialization Event.
    pub VMInit: jvmtiEventVMInit,
    /// 51: VM Death Event.
    pub VMDeath: jvmtiEventVMDeath,
    /// 52: Thread Start.
    pub ThreadStart: jvmtiEventThreadStart,
    /// 53: Thread End.
    pub ThreadEnd: jvmtiEventThreadEnd,
    /// 54: Class File Load Hook.
    pub ClassFileLoadHook: jvmtiEventClassFileLoadHook,
    /// 55: Class Load.
    pub ClassLoad: jvmtiEventClassLoad,
    /// 56: Class Prepare.
    pub ClassPrepare: jvmtiEventClassPrepare,
    /// 57: VM Start Event.
    pub VMStart: jvmtiEventVMStart,
    /// 58: Exception.
    pub Exception: jvmtiEventException,
    /// 59: Exception Catch.
    pub ExceptionCatch: jvmtiEventExceptionCatch,
    /// 60: Single Step.
    pub SingleStep: jvmtiEventSingleStep,
    /// 61: Frame Pop.
    pub FramePop: jvmtiEventFramePop,
    /// 62: Breakpoint.
    pub Breakpoint: jvmtiEventBreakpoint,
    /// 63: Field Access.
    pub FieldAccess: jvmtiEventFieldAccess,
    /// 64: Field Modification.
    pub FieldModification: jvmtiEventFieldModification,
    /// 65: Method Entry.
    pub MethodEntry: jvmtiEventMethodEntry,
    /// 66: Method Exit.
    pub MethodExit: jvmtiEventMethodExit,
    /// 67: Native Method Bind.
    pub NativeMethodBind: jvmtiEventNativeMethodBind,
    /// 68: Compiled Method Load.
    pub CompiledMethodLoad: jvmtiEventCompiledMethodLoad,
    /// 69: Compiled Method Unload.
    pub CompiledMethodUnload: jvmtiEventCompiledMethodUnload,
    /// 70: Dynamic Code Generated.
    pub DynamicCodeGenerated: jvmtiEventDynamicCodeGenerated,
    /// 71: Data Dump Request.
    pub DataDumpRequest: jvmtiEventDataDumpRequest,
    /// 72: reserved.
    pub reserved72: jvmtiEventReserved,
    /// 73: Monitor Wait.
    pub MonitorWait: jvmtiEventMonitorWait,
    /// 74: Monitor Waited.
    pub MonitorWaited: jvmtiEventMonitorWaited,
    /// 75: Monitor Contended Enter.
    pub MonitorContendedEnter: jvmtiEventMonitorContendedEnter,
    /// 76: Monitor Contended Entered.
    pub MonitorContendedEntered: jvmtiEventMonitorContendedEntered,
    /// 77: reserved.
    pub reserved77: jvmtiEventReserved,
    /// 78: reserved.
    pub reserved78: jvmtiEventReserved,
    /// 79: reserved.
    pub reserved79: jvmtiEventReserved,
    /// 80: Resource Exhausted.
    pub ResourceExhausted: jvmtiEventResourceExhausted,
    /// 81: Garbage Collection Start.
    pub GarbageCollectionStart: jvmtiEventGarbageCollectionStart,
    /// 82: Garbage Collection Finish.
    pub GarbageCollectionFinish: jvmtiEventGarbageCollectionFinish,
    /// 83: Object Free.
    pub ObjectFree: jvmtiEventObjectFree,
    /// 84: VM Object Allocation.
    pub VMObjectAlloc: jvmtiEventVMObjectAlloc,
    /// 85: reserved.
    pub reserved85: jvmtiEventReserved,
    /// 86: Sampled Object Allocation.
    pub SampledObjectAlloc: jvmtiEventSampledObjectAlloc,
}

// ---------------------------------------------------------------- function table

/// `jvmtiInterface_1`: the JVMTI function table, 156 pointer-sized slots in
/// the header's order (slot N at byte offset `(N - 1) * 8`). A `jvmtiEnv`
/// points to one; call a function as `((**env).GetTag.unwrap())(env, ...)`
/// with `env: *mut jvmtiEnv`.
///
/// The slots this crate calls have their exact C signature; the others are
/// [`jvmtiUntypedFn`] placeholders of the same size. Every JVMTI function
/// returns a [`jvmtiError`]. `Default` (all `None`) is for fake tables in
/// tests.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct jvmtiInterface_1 {
    /// 1: reserved (`void *reserved1` in C).
    pub reserved1: jvmtiUntypedFn,
    /// 2: Set Event Notification Mode.
    ///
    /// Variadic in C: `(env, mode, event_type, event_thread, ...)`, so it is
    /// declared variadic here too: the call then sets `%al` (the number of
    /// vector registers used by variadic arguments) as the callee's prologue
    /// expects. JDK 17 defines no extra argument: never pass one.
    pub SetEventNotificationMode: Option<
        unsafe extern "C" fn(
            env: *mut jvmtiEnv,
            mode: jvmtiEventMode,
            event_type: jvmtiEvent,
            event_thread: jthread,
            ...
        ) -> jvmtiError,
    >,
    /// 3: Get All Modules (untyped here; see jvmti.h).
    pub GetAllModules: jvmtiUntypedFn,
    /// 4: Get All Threads.
    pub GetAllThreads: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            threads_count_ptr: *mut jint,
            threads_ptr: *mut *mut jthread,
        ) -> jvmtiError,
    >,
    /// 5: Suspend Thread (untyped here; see jvmti.h).
    pub SuspendThread: jvmtiUntypedFn,
    /// 6: Resume Thread (untyped here; see jvmti.h).
    pub ResumeThread: jvmtiUntypedFn,
    /// 7: Stop Thread (untyped here; see jvmti.h).
    pub StopThread: jvmtiUntypedFn,
    /// 8: Interrupt Thread (untyped here; see jvmti.h).
    pub InterruptThread: jvmtiUntypedFn,
    /// 9: Get Thread Info.
    pub GetThreadInfo: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            info_ptr: *mut jvmtiThreadInfo,
        ) -> jvmtiError,
    >,
    /// 10: Get Owned Monitor Info (untyped here; see jvmti.h).
    pub GetOwnedMonitorInfo: jvmtiUntypedFn,
    /// 11: Get Current Contended Monitor (untyped here; see jvmti.h).
    pub GetCurrentContendedMonitor: jvmtiUntypedFn,
    /// 12: Run Agent Thread.
    pub RunAgentThread: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            proc_: jvmtiStartFunction,
            arg: *const c_void,
            priority: jint,
        ) -> jvmtiError,
    >,
    /// 13: Get Top Thread Groups (untyped here; see jvmti.h).
    pub GetTopThreadGroups: jvmtiUntypedFn,
    /// 14: Get Thread Group Info.
    pub GetThreadGroupInfo: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            group: jthreadGroup,
            info_ptr: *mut jvmtiThreadGroupInfo,
        ) -> jvmtiError,
    >,
    /// 15: Get Thread Group Children (untyped here; see jvmti.h).
    pub GetThreadGroupChildren: jvmtiUntypedFn,
    /// 16: Get Frame Count.
    pub GetFrameCount: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            count_ptr: *mut jint,
        ) -> jvmtiError,
    >,
    /// 17: Get Thread State.
    pub GetThreadState: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            thread_state_ptr: *mut jint,
        ) -> jvmtiError,
    >,
    /// 18: Get Current Thread.
    pub GetCurrentThread: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, thread_ptr: *mut jthread) -> jvmtiError,
    >,
    /// 19: Get Frame Location.
    pub GetFrameLocation: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            depth: jint,
            method_ptr: *mut jmethodID,
            location_ptr: *mut jlocation,
        ) -> jvmtiError,
    >,
    /// 20: Notify Frame Pop (untyped here; see jvmti.h).
    pub NotifyFramePop: jvmtiUntypedFn,
    /// 21: Get Local Variable - Object (untyped here; see jvmti.h).
    pub GetLocalObject: jvmtiUntypedFn,
    /// 22: Get Local Variable - Int (untyped here; see jvmti.h).
    pub GetLocalInt: jvmtiUntypedFn,
    /// 23: Get Local Variable - Long (untyped here; see jvmti.h).
    pub GetLocalLong: jvmtiUntypedFn,
    /// 24: Get Local Variable - Float (untyped here; see jvmti.h).
    pub GetLocalFloat: jvmtiUntypedFn,
    /// 25: Get Local Variable - Double (untyped here; see jvmti.h).
    pub GetLocalDouble: jvmtiUntypedFn,
    /// 26: Set Local Variable - Object (untyped here; see jvmti.h).
    pub SetLocalObject: jvmtiUntypedFn,
    /// 27: Set Local Variable - Int (untyped here; see jvmti.h).
    pub SetLocalInt: jvmtiUntypedFn,
    /// 28: Set Local Variable - Long (untyped here; see jvmti.h).
    pub SetLocalLong: jvmtiUntypedFn,
    /// 29: Set Local Variable - Float (untyped here; see jvmti.h).
    pub SetLocalFloat: jvmtiUntypedFn,
    /// 30: Set Local Variable - Double (untyped here; see jvmti.h).
    pub SetLocalDouble: jvmtiUntypedFn,
    /// 31: Create Raw Monitor.
    pub CreateRawMonitor: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            name: *const c_char,
            monitor_ptr: *mut jrawMonitorID,
        ) -> jvmtiError,
    >,
    /// 32: Destroy Raw Monitor.
    pub DestroyRawMonitor:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, monitor: jrawMonitorID) -> jvmtiError>,
    /// 33: Raw Monitor Enter.
    pub RawMonitorEnter:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, monitor: jrawMonitorID) -> jvmtiError>,
    /// 34: Raw Monitor Exit.
    pub RawMonitorExit:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, monitor: jrawMonitorID) -> jvmtiError>,
    /// 35: Raw Monitor Wait.
    pub RawMonitorWait: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            monitor: jrawMonitorID,
            millis: jlong,
        ) -> jvmtiError,
    >,
    /// 36: Raw Monitor Notify.
    pub RawMonitorNotify:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, monitor: jrawMonitorID) -> jvmtiError>,
    /// 37: Raw Monitor Notify All.
    pub RawMonitorNotifyAll:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, monitor: jrawMonitorID) -> jvmtiError>,
    /// 38: Set Breakpoint (untyped here; see jvmti.h).
    pub SetBreakpoint: jvmtiUntypedFn,
    /// 39: Clear Breakpoint (untyped here; see jvmti.h).
    pub ClearBreakpoint: jvmtiUntypedFn,
    /// 40: Get Named Module (untyped here; see jvmti.h).
    pub GetNamedModule: jvmtiUntypedFn,
    /// 41: Set Field Access Watch (untyped here; see jvmti.h).
    pub SetFieldAccessWatch: jvmtiUntypedFn,
    /// 42: Clear Field Access Watch (untyped here; see jvmti.h).
    pub ClearFieldAccessWatch: jvmtiUntypedFn,
    /// 43: Set Field Modification Watch (untyped here; see jvmti.h).
    pub SetFieldModificationWatch: jvmtiUntypedFn,
    /// 44: Clear Field Modification Watch (untyped here; see jvmti.h).
    pub ClearFieldModificationWatch: jvmtiUntypedFn,
    /// 45: Is Modifiable Class (untyped here; see jvmti.h).
    pub IsModifiableClass: jvmtiUntypedFn,
    /// 46: Allocate.
    pub Allocate: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            size: jlong,
            mem_ptr: *mut *mut c_uchar,
        ) -> jvmtiError,
    >,
    /// 47: Deallocate.
    pub Deallocate:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, mem: *mut c_uchar) -> jvmtiError>,
    /// 48: Get Class Signature.
    pub GetClassSignature: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            signature_ptr: *mut *mut c_char,
            generic_ptr: *mut *mut c_char,
        ) -> jvmtiError,
    >,
    /// 49: Get Class Status.
    pub GetClassStatus: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            status_ptr: *mut jint,
        ) -> jvmtiError,
    >,
    /// 50: Get Source File Name.
    pub GetSourceFileName: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            source_name_ptr: *mut *mut c_char,
        ) -> jvmtiError,
    >,
    /// 51: Get Class Modifiers.
    pub GetClassModifiers: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            modifiers_ptr: *mut jint,
        ) -> jvmtiError,
    >,
    /// 52: Get Class Methods.
    pub GetClassMethods: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            method_count_ptr: *mut jint,
            methods_ptr: *mut *mut jmethodID,
        ) -> jvmtiError,
    >,
    /// 53: Get Class Fields.
    pub GetClassFields: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            field_count_ptr: *mut jint,
            fields_ptr: *mut *mut jfieldID,
        ) -> jvmtiError,
    >,
    /// 54: Get Implemented Interfaces.
    pub GetImplementedInterfaces: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            interface_count_ptr: *mut jint,
            interfaces_ptr: *mut *mut jclass,
        ) -> jvmtiError,
    >,
    /// 55: Is Interface.
    pub IsInterface: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            is_interface_ptr: *mut jboolean,
        ) -> jvmtiError,
    >,
    /// 56: Is Array Class.
    pub IsArrayClass: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            is_array_class_ptr: *mut jboolean,
        ) -> jvmtiError,
    >,
    /// 57: Get Class Loader.
    pub GetClassLoader: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            classloader_ptr: *mut jobject,
        ) -> jvmtiError,
    >,
    /// 58: Get Object Hash Code.
    pub GetObjectHashCode: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            object: jobject,
            hash_code_ptr: *mut jint,
        ) -> jvmtiError,
    >,
    /// 59: Get Object Monitor Usage (untyped here; see jvmti.h).
    pub GetObjectMonitorUsage: jvmtiUntypedFn,
    /// 60: Get Field Name (and Signature).
    pub GetFieldName: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            field: jfieldID,
            name_ptr: *mut *mut c_char,
            signature_ptr: *mut *mut c_char,
            generic_ptr: *mut *mut c_char,
        ) -> jvmtiError,
    >,
    /// 61: Get Field Declaring Class (untyped here; see jvmti.h).
    pub GetFieldDeclaringClass: jvmtiUntypedFn,
    /// 62: Get Field Modifiers.
    pub GetFieldModifiers: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            field: jfieldID,
            modifiers_ptr: *mut jint,
        ) -> jvmtiError,
    >,
    /// 63: Is Field Synthetic (untyped here; see jvmti.h).
    pub IsFieldSynthetic: jvmtiUntypedFn,
    /// 64: Get Method Name (and Signature).
    pub GetMethodName: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            method: jmethodID,
            name_ptr: *mut *mut c_char,
            signature_ptr: *mut *mut c_char,
            generic_ptr: *mut *mut c_char,
        ) -> jvmtiError,
    >,
    /// 65: Get Method Declaring Class.
    pub GetMethodDeclaringClass: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            method: jmethodID,
            declaring_class_ptr: *mut jclass,
        ) -> jvmtiError,
    >,
    /// 66: Get Method Modifiers.
    pub GetMethodModifiers: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            method: jmethodID,
            modifiers_ptr: *mut jint,
        ) -> jvmtiError,
    >,
    /// 67: reserved (`void *reserved67` in C).
    pub reserved67: jvmtiUntypedFn,
    /// 68: Get Max Locals (untyped here; see jvmti.h).
    pub GetMaxLocals: jvmtiUntypedFn,
    /// 69: Get Arguments Size (untyped here; see jvmti.h).
    pub GetArgumentsSize: jvmtiUntypedFn,
    /// 70: Get Line Number Table.
    pub GetLineNumberTable: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            method: jmethodID,
            entry_count_ptr: *mut jint,
            table_ptr: *mut *mut jvmtiLineNumberEntry,
        ) -> jvmtiError,
    >,
    /// 71: Get Method Location.
    pub GetMethodLocation: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            method: jmethodID,
            start_location_ptr: *mut jlocation,
            end_location_ptr: *mut jlocation,
        ) -> jvmtiError,
    >,
    /// 72: Get Local Variable Table (untyped here; see jvmti.h).
    pub GetLocalVariableTable: jvmtiUntypedFn,
    /// 73: Set Native Method Prefix (untyped here; see jvmti.h).
    pub SetNativeMethodPrefix: jvmtiUntypedFn,
    /// 74: Set Native Method Prefixes (untyped here; see jvmti.h).
    pub SetNativeMethodPrefixes: jvmtiUntypedFn,
    /// 75: Get Bytecodes (untyped here; see jvmti.h).
    pub GetBytecodes: jvmtiUntypedFn,
    /// 76: Is Method Native.
    pub IsMethodNative: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            method: jmethodID,
            is_native_ptr: *mut jboolean,
        ) -> jvmtiError,
    >,
    /// 77: Is Method Synthetic.
    pub IsMethodSynthetic: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            method: jmethodID,
            is_synthetic_ptr: *mut jboolean,
        ) -> jvmtiError,
    >,
    /// 78: Get Loaded Classes.
    pub GetLoadedClasses: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            class_count_ptr: *mut jint,
            classes_ptr: *mut *mut jclass,
        ) -> jvmtiError,
    >,
    /// 79: Get Classloader Classes.
    pub GetClassLoaderClasses: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            initiating_loader: jobject,
            class_count_ptr: *mut jint,
            classes_ptr: *mut *mut jclass,
        ) -> jvmtiError,
    >,
    /// 80: Pop Frame (untyped here; see jvmti.h).
    pub PopFrame: jvmtiUntypedFn,
    /// 81: Force Early Return - Object (untyped here; see jvmti.h).
    pub ForceEarlyReturnObject: jvmtiUntypedFn,
    /// 82: Force Early Return - Int (untyped here; see jvmti.h).
    pub ForceEarlyReturnInt: jvmtiUntypedFn,
    /// 83: Force Early Return - Long (untyped here; see jvmti.h).
    pub ForceEarlyReturnLong: jvmtiUntypedFn,
    /// 84: Force Early Return - Float (untyped here; see jvmti.h).
    pub ForceEarlyReturnFloat: jvmtiUntypedFn,
    /// 85: Force Early Return - Double (untyped here; see jvmti.h).
    pub ForceEarlyReturnDouble: jvmtiUntypedFn,
    /// 86: Force Early Return - Void (untyped here; see jvmti.h).
    pub ForceEarlyReturnVoid: jvmtiUntypedFn,
    /// 87: Redefine Classes (untyped here; see jvmti.h).
    pub RedefineClasses: jvmtiUntypedFn,
    /// 88: Get Version Number.
    pub GetVersionNumber:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, version_ptr: *mut jint) -> jvmtiError>,
    /// 89: Get Capabilities.
    pub GetCapabilities: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            capabilities_ptr: *mut jvmtiCapabilities,
        ) -> jvmtiError,
    >,
    /// 90: Get Source Debug Extension (untyped here; see jvmti.h).
    pub GetSourceDebugExtension: jvmtiUntypedFn,
    /// 91: Is Method Obsolete.
    pub IsMethodObsolete: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            method: jmethodID,
            is_obsolete_ptr: *mut jboolean,
        ) -> jvmtiError,
    >,
    /// 92: Suspend Thread List (untyped here; see jvmti.h).
    pub SuspendThreadList: jvmtiUntypedFn,
    /// 93: Resume Thread List (untyped here; see jvmti.h).
    pub ResumeThreadList: jvmtiUntypedFn,
    /// 94: Add Module Reads (untyped here; see jvmti.h).
    pub AddModuleReads: jvmtiUntypedFn,
    /// 95: Add Module Exports (untyped here; see jvmti.h).
    pub AddModuleExports: jvmtiUntypedFn,
    /// 96: Add Module Opens (untyped here; see jvmti.h).
    pub AddModuleOpens: jvmtiUntypedFn,
    /// 97: Add Module Uses (untyped here; see jvmti.h).
    pub AddModuleUses: jvmtiUntypedFn,
    /// 98: Add Module Provides (untyped here; see jvmti.h).
    pub AddModuleProvides: jvmtiUntypedFn,
    /// 99: Is Modifiable Module (untyped here; see jvmti.h).
    pub IsModifiableModule: jvmtiUntypedFn,
    /// 100: Get All Stack Traces (untyped here; see jvmti.h).
    pub GetAllStackTraces: jvmtiUntypedFn,
    /// 101: Get Thread List Stack Traces (untyped here; see jvmti.h).
    pub GetThreadListStackTraces: jvmtiUntypedFn,
    /// 102: Get Thread Local Storage.
    pub GetThreadLocalStorage: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            data_ptr: *mut *mut c_void,
        ) -> jvmtiError,
    >,
    /// 103: Set Thread Local Storage.
    pub SetThreadLocalStorage: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            data: *const c_void,
        ) -> jvmtiError,
    >,
    /// 104: Get Stack Trace.
    pub GetStackTrace: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            start_depth: jint,
            max_frame_count: jint,
            frame_buffer: *mut jvmtiFrameInfo,
            count_ptr: *mut jint,
        ) -> jvmtiError,
    >,
    /// 105: reserved (`void *reserved105` in C).
    pub reserved105: jvmtiUntypedFn,
    /// 106: Get Tag.
    pub GetTag: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            object: jobject,
            tag_ptr: *mut jlong,
        ) -> jvmtiError,
    >,
    /// 107: Set Tag.
    pub SetTag: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, object: jobject, tag: jlong) -> jvmtiError,
    >,
    /// 108: Force Garbage Collection.
    pub ForceGarbageCollection: Option<unsafe extern "system" fn(env: *mut jvmtiEnv) -> jvmtiError>,
    /// 109: Iterate Over Objects Reachable From Object (untyped here; see jvmti.h).
    pub IterateOverObjectsReachableFromObject: jvmtiUntypedFn,
    /// 110: Iterate Over Reachable Objects (untyped here; see jvmti.h).
    pub IterateOverReachableObjects: jvmtiUntypedFn,
    /// 111: Iterate Over Heap (untyped here; see jvmti.h).
    pub IterateOverHeap: jvmtiUntypedFn,
    /// 112: Iterate Over Instances Of Class (untyped here; see jvmti.h).
    pub IterateOverInstancesOfClass: jvmtiUntypedFn,
    /// 113: reserved (`void *reserved113` in C).
    pub reserved113: jvmtiUntypedFn,
    /// 114: Get Objects With Tags (untyped here; see jvmti.h).
    pub GetObjectsWithTags: jvmtiUntypedFn,
    /// 115: Follow References.
    pub FollowReferences: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            heap_filter: jint,
            klass: jclass,
            initial_object: jobject,
            callbacks: *const jvmtiHeapCallbacks,
            user_data: *const c_void,
        ) -> jvmtiError,
    >,
    /// 116: Iterate Through Heap (untyped here; see jvmti.h).
    pub IterateThroughHeap: jvmtiUntypedFn,
    /// 117: reserved (`void *reserved117` in C).
    pub reserved117: jvmtiUntypedFn,
    /// 118: reserved (`void *reserved118` in C).
    pub reserved118: jvmtiUntypedFn,
    /// 119: reserved (`void *reserved119` in C).
    pub reserved119: jvmtiUntypedFn,
    /// 120: Set JNI Function Table (untyped here; see jvmti.h).
    pub SetJNIFunctionTable: jvmtiUntypedFn,
    /// 121: Get JNI Function Table (untyped here; see jvmti.h).
    pub GetJNIFunctionTable: jvmtiUntypedFn,
    /// 122: Set Event Callbacks.
    pub SetEventCallbacks: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            callbacks: *const jvmtiEventCallbacks,
            size_of_callbacks: jint,
        ) -> jvmtiError,
    >,
    /// 123: Generate Events.
    pub GenerateEvents:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, event_type: jvmtiEvent) -> jvmtiError>,
    /// 124: Get Extension Functions (untyped here; see jvmti.h).
    pub GetExtensionFunctions: jvmtiUntypedFn,
    /// 125: Get Extension Events (untyped here; see jvmti.h).
    pub GetExtensionEvents: jvmtiUntypedFn,
    /// 126: Set Extension Event Callback (untyped here; see jvmti.h).
    pub SetExtensionEventCallback: jvmtiUntypedFn,
    /// 127: Dispose Environment.
    pub DisposeEnvironment: Option<unsafe extern "system" fn(env: *mut jvmtiEnv) -> jvmtiError>,
    /// 128: Get Error Name.
    pub GetErrorName: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            error: jvmtiError,
            name_ptr: *mut *mut c_char,
        ) -> jvmtiError,
    >,
    /// 129: Get JLocation Format.
    pub GetJLocationFormat: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            format_ptr: *mut jvmtiJlocationFormat,
        ) -> jvmtiError,
    >,
    /// 130: Get System Properties (untyped here; see jvmti.h).
    pub GetSystemProperties: jvmtiUntypedFn,
    /// 131: Get System Property.
    pub GetSystemProperty: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            property: *const c_char,
            value_ptr: *mut *mut c_char,
        ) -> jvmtiError,
    >,
    /// 132: Set System Property (untyped here; see jvmti.h).
    pub SetSystemProperty: jvmtiUntypedFn,
    /// 133: Get Phase.
    pub GetPhase: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, phase_ptr: *mut jvmtiPhase) -> jvmtiError,
    >,
    /// 134: Get Current Thread CPU Timer Information (untyped here; see jvmti.h).
    pub GetCurrentThreadCpuTimerInfo: jvmtiUntypedFn,
    /// 135: Get Current Thread CPU Time.
    pub GetCurrentThreadCpuTime:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, nanos_ptr: *mut jlong) -> jvmtiError>,
    /// 136: Get Thread CPU Timer Information (untyped here; see jvmti.h).
    pub GetThreadCpuTimerInfo: jvmtiUntypedFn,
    /// 137: Get Thread CPU Time.
    pub GetThreadCpuTime: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            nanos_ptr: *mut jlong,
        ) -> jvmtiError,
    >,
    /// 138: Get Timer Information (untyped here; see jvmti.h).
    pub GetTimerInfo: jvmtiUntypedFn,
    /// 139: Get Time.
    pub GetTime:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, nanos_ptr: *mut jlong) -> jvmtiError>,
    /// 140: Get Potential Capabilities.
    pub GetPotentialCapabilities: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            capabilities_ptr: *mut jvmtiCapabilities,
        ) -> jvmtiError,
    >,
    /// 141: reserved (`void *reserved141` in C).
    pub reserved141: jvmtiUntypedFn,
    /// 142: Add Capabilities.
    pub AddCapabilities: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            capabilities_ptr: *const jvmtiCapabilities,
        ) -> jvmtiError,
    >,
    /// 143: Relinquish Capabilities.
    pub RelinquishCapabilities: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            capabilities_ptr: *const jvmtiCapabilities,
        ) -> jvmtiError,
    >,
    /// 144: Get Available Processors.
    pub GetAvailableProcessors: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, processor_count_ptr: *mut jint) -> jvmtiError,
    >,
    /// 145: Get Class Version Numbers.
    pub GetClassVersionNumbers: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            minor_version_ptr: *mut jint,
            major_version_ptr: *mut jint,
        ) -> jvmtiError,
    >,
    /// 146: Get Constant Pool.
    pub GetConstantPool: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            constant_pool_count_ptr: *mut jint,
            constant_pool_byte_count_ptr: *mut jint,
            constant_pool_bytes_ptr: *mut *mut c_uchar,
        ) -> jvmtiError,
    >,
    /// 147: Get Environment Local Storage.
    pub GetEnvironmentLocalStorage: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, data_ptr: *mut *mut c_void) -> jvmtiError,
    >,
    /// 148: Set Environment Local Storage.
    pub SetEnvironmentLocalStorage:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, data: *const c_void) -> jvmtiError>,
    /// 149: Add To Bootstrap Class Loader Search (untyped here; see jvmti.h).
    pub AddToBootstrapClassLoaderSearch: jvmtiUntypedFn,
    /// 150: Set Verbose Flag (untyped here; see jvmti.h).
    pub SetVerboseFlag: jvmtiUntypedFn,
    /// 151: Add To System Class Loader Search (untyped here; see jvmti.h).
    pub AddToSystemClassLoaderSearch: jvmtiUntypedFn,
    /// 152: Retransform Classes (untyped here; see jvmti.h).
    pub RetransformClasses: jvmtiUntypedFn,
    /// 153: Get Owned Monitor Stack Depth Info (untyped here; see jvmti.h).
    pub GetOwnedMonitorStackDepthInfo: jvmtiUntypedFn,
    /// 154: Get Object Size.
    pub GetObjectSize: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            object: jobject,
            size_ptr: *mut jlong,
        ) -> jvmtiError,
    >,
    /// 155: Get Local Instance (untyped here; see jvmti.h).
    pub GetLocalInstance: jvmtiUntypedFn,
    /// 156: Set Heap Sampling Interval.
    pub SetHeapSamplingInterval: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, sampling_interval: jint) -> jvmtiError,
    >,
}

#[cfg(test)]
mod tests {
    //! The layout pinned against the C compiler: every number below was
    //! printed by a throwaway C program compiled by gcc (x86-64 Linux) against
    //! the JDK 17 `jvmti.h`, using `sizeof`, `offsetof` and, for the
    //! capabilities, by setting one bit-field and reading the four words.

    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    /// (slot number in the header, member name, Rust offset, gcc offset).
    const FUNCTION_SLOTS: [(usize, &str, usize, usize); 156] = [
        (1, "reserved1", offset_of!(jvmtiInterface_1, reserved1), 0),
        (
            2,
            "SetEventNotificationMode",
            offset_of!(jvmtiInterface_1, SetEventNotificationMode),
            8,
        ),
        (
            3,
            "GetAllModules",
            offset_of!(jvmtiInterface_1, GetAllModules),
            16,
        ),
        (
            4,
            "GetAllThreads",
            offset_of!(jvmtiInterface_1, GetAllThreads),
            24,
        ),
        (
            5,
            "SuspendThread",
            offset_of!(jvmtiInterface_1, SuspendThread),
            32,
        ),
        (
            6,
            "ResumeThread",
            offset_of!(jvmtiInterface_1, ResumeThread),
            40,
        ),
        (
            7,
            "StopThread",
            offset_of!(jvmtiInterface_1, StopThread),
            48,
        ),
        (
            8,
            "InterruptThread",
            offset_of!(jvmtiInterface_1, InterruptThread),
            56,
        ),
        (
            9,
            "GetThreadInfo",
            offset_of!(jvmtiInterface_1, GetThreadInfo),
            64,
        ),
        (
            10,
            "GetOwnedMonitorInfo",
            offset_of!(jvmtiInterface_1, GetOwnedMonitorInfo),
            72,
        ),
        (
            11,
            "GetCurrentContendedMonitor",
            offset_of!(jvmtiInterface_1, GetCurrentContendedMonitor),
            80,
        ),
        (
            12,
            "RunAgentThread",
            offset_of!(jvmtiInterface_1, RunAgentThread),
            88,
        ),
        (
            13,
            "GetTopThreadGroups",
            offset_of!(jvmtiInterface_1, GetTopThreadGroups),
            96,
        ),
        (
            14,
            "GetThreadGroupInfo",
            offset_of!(jvmtiInterface_1, GetThreadGroupInfo),
            104,
        ),
        (
            15,
            "GetThreadGroupChildren",
            offset_of!(jvmtiInterface_1, GetThreadGroupChildren),
            112,
        ),
        (
            16,
            "GetFrameCount",
            offset_of!(jvmtiInterface_1, GetFrameCount),
            120,
        ),
        (
            17,
            "GetThreadState",
            offset_of!(jvmtiInterface_1, GetThreadState),
            128,
        ),
        (
            18,
            "GetCurrentThread",
            offset_of!(jvmtiInterface_1, GetCurrentThread),
            136,
        ),
        (
            19,
            "GetFrameLocation",
            offset_of!(jvmtiInterface_1, GetFrameLocation),
            144,
        ),
        (
            20,
            "NotifyFramePop",
            offset_of!(jvmtiInterface_1, NotifyFramePop),
            152,
        ),
        (
            21,
            "GetLocalObject",
            offset_of!(jvmtiInterface_1, GetLocalObject),
            160,
        ),
        (
            22,
            "GetLocalInt",
            offset_of!(jvmtiInterface_1, GetLocalInt),
            168,
        ),
        (
            23,
            "GetLocalLong",
            offset_of!(jvmtiInterface_1, GetLocalLong),
            176,
        ),
        (
            24,
            "GetLocalFloat",
            offset_of!(jvmtiInterface_1, GetLocalFloat),
            184,
        ),
        (
            25,
            "GetLocalDouble",
            offset_of!(jvmtiInterface_1, GetLocalDouble),
            192,
        ),
        (
            26,
            "SetLocalObject",
            offset_of!(jvmtiInterface_1, SetLocalObject),
            200,
        ),
        (
            27,
            "SetLocalInt",
            offset_of!(jvmtiInterface_1, SetLocalInt),
            208,
        ),
        (
            28,
            "SetLocalLong",
            offset_of!(jvmtiInterface_1, SetLocalLong),
            216,
        ),
        (
            29,
            "SetLocalFloat",
            offset_of!(jvmtiInterface_1, SetLocalFloat),
            224,
        ),
        (
            30,
            "SetLocalDouble",
            offset_of!(jvmtiInterface_1, SetLocalDouble),
            232,
        ),
        (
            31,
            "CreateRawMonitor",
            offset_of!(jvmtiInterface_1, CreateRawMonitor),
            240,
        ),
        (
            32,
            "DestroyRawMonitor",
            offset_of!(jvmtiInterface_1, DestroyRawMonitor),
            248,
        ),
        (
            33,
            "RawMonitorEnter",
            offset_of!(jvmtiInterface_1, RawMonitorEnter),
            256,
        ),
        (
            34,
            "RawMonitorExit",
            offset_of!(jvmtiInterface_1, RawMonitorExit),
            264,
        ),
        (
            35,
            "RawMonitorWait",
            offset_of!(jvmtiInterface_1, RawMonitorWait),
            272,
        ),
        (
            36,
            "RawMonitorNotify",
            offset_of!(jvmtiInterface_1, RawMonitorNotify),
            280,
        ),
        (
            37,
            "RawMonitorNotifyAll",
            offset_of!(jvmtiInterface_1, RawMonitorNotifyAll),
            288,
        ),
        (
            38,
            "SetBreakpoint",
            offset_of!(jvmtiInterface_1, SetBreakpoint),
            296,
        ),
        (
            39,
            "ClearBreakpoint",
            offset_of!(jvmtiInterface_1, ClearBreakpoint),
            304,
        ),
        (
            40,
            "GetNamedModule",
            offset_of!(jvmtiInterface_1, GetNamedModule),
            312,
        ),
        (
            41,
            "SetFieldAccessWatch",
            offset_of!(jvmtiInterface_1, SetFieldAccessWatch),
            320,
        ),
        (
            42,
            "ClearFieldAccessWatch",
            offset_of!(jvmtiInterface_1, ClearFieldAccessWatch),
            328,
        ),
        (
            43,
            "SetFieldModificationWatch",
            offset_of!(jvmtiInterface_1, SetFieldModificationWatch),
            336,
        ),
        (
            44,
            "ClearFieldModificationWatch",
            offset_of!(jvmtiInterface_1, ClearFieldModificationWatch),
            344,
        ),
        (
            45,
            "IsModifiableClass",
            offset_of!(jvmtiInterface_1, IsModifiableClass),
            352,
        ),
        (46, "Allocate", offset_of!(jvmtiInterface_1, Allocate), 360),
        (
            47,
            "Deallocate",
            offset_of!(jvmtiInterface_1, Deallocate),
            368,
        ),
        (
            48,
            "GetClassSignature",
            offset_of!(jvmtiInterface_1, GetClassSignature),
            376,
        ),
        (
            49,
            "GetClassStatus",
            offset_of!(jvmtiInterface_1, GetClassStatus),
            384,
        ),
        (
            50,
            "GetSourceFileName",
            offset_of!(jvmtiInterface_1, GetSourceFileName),
            392,
        ),
        (
            51,
            "GetClassModifiers",
            offset_of!(jvmtiInterface_1, GetClassModifiers),
            400,
        ),
        (
            52,
            "GetClassMethods",
            offset_of!(jvmtiInterface_1, GetClassMethods),
            408,
        ),
        (
            53,
            "GetClassFields",
            offset_of!(jvmtiInterface_1, GetClassFields),
            416,
        ),
        (
            54,
            "GetImplementedInterfaces",
            offset_of!(jvmtiInterface_1, GetImplementedInterfaces),
            424,
        ),
        (
            55,
            "IsInterface",
            offset_of!(jvmtiInterface_1, IsInterface),
            432,
        ),
        (
            56,
            "IsArrayClass",
            offset_of!(jvmtiInterface_1, IsArrayClass),
            440,
        ),
        (
            57,
            "GetClassLoader",
            offset_of!(jvmtiInterface_1, GetClassLoader),
            448,
        ),
        (
            58,
            "GetObjectHashCode",
            offset_of!(jvmtiInterface_1, GetObjectHashCode),
            456,
        ),
        (
            59,
            "GetObjectMonitorUsage",
            offset_of!(jvmtiInterface_1, GetObjectMonitorUsage),
            464,
        ),
        (
            60,
            "GetFieldName",
            offset_of!(jvmtiInterface_1, GetFieldName),
            472,
        ),
        (
            61,
            "GetFieldDeclaringClass",
            offset_of!(jvmtiInterface_1, GetFieldDeclaringClass),
            480,
        ),
        (
            62,
            "GetFieldModifiers",
            offset_of!(jvmtiInterface_1, GetFieldModifiers),
            488,
        ),
        (
            63,
            "IsFieldSynthetic",
            offset_of!(jvmtiInterface_1, IsFieldSynthetic),
            496,
        ),
        (
            64,
            "GetMethodName",
            offset_of!(jvmtiInterface_1, GetMethodName),
            504,
        ),
        (
            65,
            "GetMethodDeclaringClass",
            offset_of!(jvmtiInterface_1, GetMethodDeclaringClass),
            512,
        ),
        (
            66,
            "GetMethodModifiers",
            offset_of!(jvmtiInterface_1, GetMethodModifiers),
            520,
        ),
        (
            67,
            "reserved67",
            offset_of!(jvmtiInterface_1, reserved67),
            528,
        ),
        (
            68,
            "GetMaxLocals",
            offset_of!(jvmtiInterface_1, GetMaxLocals),
            536,
        ),
        (
            69,
            "GetArgumentsSize",
            offset_of!(jvmtiInterface_1, GetArgumentsSize),
            544,
        ),
        (
            70,
            "GetLineNumberTable",
            offset_of!(jvmtiInterface_1, GetLineNumberTable),
            552,
        ),
        (
            71,
            "GetMethodLocation",
            offset_of!(jvmtiInterface_1, GetMethodLocation),
            560,
        ),
        (
            72,
            "GetLocalVariableTable",
            offset_of!(jvmtiInterface_1, GetLocalVariableTable),
            568,
        ),
        (
            73,
            "SetNativeMethodPrefix",
            offset_of!(jvmtiInterface_1, SetNativeMethodPrefix),
            576,
        ),
        (
            74,
            "SetNativeMethodPrefixes",
            offset_of!(jvmtiInterface_1, SetNativeMethodPrefixes),
            584,
        ),
        (
            75,
            "GetBytecodes",
            offset_of!(jvmtiInterface_1, GetBytecodes),
            592,
        ),
        (
            76,
            "IsMethodNative",
            offset_of!(jvmtiInterface_1, IsMethodNative),
            600,
        ),
        (
            77,
            "IsMethodSynthetic",
            offset_of!(jvmtiInterface_1, IsMethodSynthetic),
            608,
        ),
        (
            78,
            "GetLoadedClasses",
            offset_of!(jvmtiInterface_1, GetLoadedClasses),
            616,
        ),
        (
            79,
            "GetClassLoaderClasses",
            offset_of!(jvmtiInterface_1, GetClassLoaderClasses),
            624,
        ),
        (80, "PopFrame", offset_of!(jvmtiInterface_1, PopFrame), 632),
        (
            81,
            "ForceEarlyReturnObject",
            offset_of!(jvmtiInterface_1, ForceEarlyReturnObject),
            640,
        ),
        (
            82,
            "ForceEarlyReturnInt",
            offset_of!(jvmtiInterface_1, ForceEarlyReturnInt),
            648,
        ),
        (
            83,
            "ForceEarlyReturnLong",
            offset_of!(jvmtiInterface_1, ForceEarlyReturnLong),
            656,
        ),
        (
            84,
            "ForceEarlyReturnFloat",
            offset_of!(jvmtiInterface_1, ForceEarlyReturnFloat),
            664,
        ),
        (
            85,
            "ForceEarlyReturnDouble",
            offset_of!(jvmtiInterface_1, ForceEarlyReturnDouble),
            672,
        ),
        (
            86,
            "ForceEarlyReturnVoid",
            offset_of!(jvmtiInterface_1, ForceEarlyReturnVoid),
            680,
        ),
        (
            87,
            "RedefineClasses",
            offset_of!(jvmtiInterface_1, RedefineClasses),
            688,
        ),
        (
            88,
            "GetVersionNumber",
            offset_of!(jvmtiInterface_1, GetVersionNumber),
            696,
        ),
        (
            89,
            "GetCapabilities",
            offset_of!(jvmtiInterface_1, GetCapabilities),
            704,
        ),
        (
            90,
            "GetSourceDebugExtension",
            offset_of!(jvmtiInterface_1, GetSourceDebugExtension),
            712,
        ),
        (
            91,
            "IsMethodObsolete",
            offset_of!(jvmtiInterface_1, IsMethodObsolete),
            720,
        ),
        (
            92,
            "SuspendThreadList",
            offset_of!(jvmtiInterface_1, SuspendThreadList),
            728,
        ),
        (
            93,
            "ResumeThreadList",
            offset_of!(jvmtiInterface_1, ResumeThreadList),
            736,
        ),
        (
            94,
            "AddModuleReads",
            offset_of!(jvmtiInterface_1, AddModuleReads),
            744,
        ),
        (
            95,
            "AddModuleExports",
            offset_of!(jvmtiInterface_1, AddModuleExports),
            752,
        ),
        (
            96,
            "AddModuleOpens",
            offset_of!(jvmtiInterface_1, AddModuleOpens),
            760,
        ),
        (
            97,
            "AddModuleUses",
            offset_of!(jvmtiInterface_1, AddModuleUses),
            768,
        ),
        (
            98,
            "AddModuleProvides",
            offset_of!(jvmtiInterface_1, AddModuleProvides),
            776,
        ),
        (
            99,
            "IsModifiableModule",
            offset_of!(jvmtiInterface_1, IsModifiableModule),
            784,
        ),
        (
            100,
            "GetAllStackTraces",
            offset_of!(jvmtiInterface_1, GetAllStackTraces),
            792,
        ),
        (
            101,
            "GetThreadListStackTraces",
            offset_of!(jvmtiInterface_1, GetThreadListStackTraces),
            800,
        ),
        (
            102,
            "GetThreadLocalStorage",
            offset_of!(jvmtiInterface_1, GetThreadLocalStorage),
            808,
        ),
        (
            103,
            "SetThreadLocalStorage",
            offset_of!(jvmtiInterface_1, SetThreadLocalStorage),
            816,
        ),
        (
            104,
            "GetStackTrace",
            offset_of!(jvmtiInterface_1, GetStackTrace),
            824,
        ),
        (
            105,
            "reserved105",
            offset_of!(jvmtiInterface_1, reserved105),
            832,
        ),
        (106, "GetTag", offset_of!(jvmtiInterface_1, GetTag), 840),
        (107, "SetTag", offset_of!(jvmtiInterface_1, SetTag), 848),
        (
            108,
            "ForceGarbageCollection",
            offset_of!(jvmtiInterface_1, ForceGarbageCollection),
            856,
        ),
        (
            109,
            "IterateOverObjectsReachableFromObject",
            offset_of!(jvmtiInterface_1, IterateOverObjectsReachableFromObject),
            864,
        ),
        (
            110,
            "IterateOverReachableObjects",
            offset_of!(jvmtiInterface_1, IterateOverReachableObjects),
            872,
        ),
        (
            111,
            "IterateOverHeap",
            offset_of!(jvmtiInterface_1, IterateOverHeap),
            880,
        ),
        (
            112,
            "IterateOverInstancesOfClass",
            offset_of!(jvmtiInterface_1, IterateOverInstancesOfClass),
            888,
        ),
        (
            113,
            "reserved113",
            offset_of!(jvmtiInterface_1, reserved113),
            896,
        ),
        (
            114,
            "GetObjectsWithTags",
            offset_of!(jvmtiInterface_1, GetObjectsWithTags),
            904,
        ),
        (
            115,
            "FollowReferences",
            offset_of!(jvmtiInterface_1, FollowReferences),
            912,
        ),
        (
            116,
            "IterateThroughHeap",
            offset_of!(jvmtiInterface_1, IterateThroughHeap),
            920,
        ),
        (
            117,
            "reserved117",
            offset_of!(jvmtiInterface_1, reserved117),
            928,
        ),
        (
            118,
            "reserved118",
            offset_of!(jvmtiInterface_1, reserved118),
            936,
        ),
        (
            119,
            "reserved119",
            offset_of!(jvmtiInterface_1, reserved119),
            944,
        ),
        (
            120,
            "SetJNIFunctionTable",
            offset_of!(jvmtiInterface_1, SetJNIFunctionTable),
            952,
        ),
        (
            121,
            "GetJNIFunctionTable",
            offset_of!(jvmtiInterface_1, GetJNIFunctionTable),
            960,
        ),
        (
            122,
            "SetEventCallbacks",
            offset_of!(jvmtiInterface_1, SetEventCallbacks),
            968,
        ),
        (
            123,
            "GenerateEvents",
            offset_of!(jvmtiInterface_1, GenerateEvents),
            976,
        ),
        (
            124,
            "GetExtensionFunctions",
            offset_of!(jvmtiInterface_1, GetExtensionFunctions),
            984,
        ),
        (
            125,
            "GetExtensionEvents",
            offset_of!(jvmtiInterface_1, GetExtensionEvents),
            992,
        ),
        (
            126,
            "SetExtensionEventCallback",
            offset_of!(jvmtiInterface_1, SetExtensionEventCallback),
            1000,
        ),
        (
            127,
            "DisposeEnvironment",
            offset_of!(jvmtiInterface_1, DisposeEnvironment),
            1008,
        ),
        (
            128,
            "GetErrorName",
            offset_of!(jvmtiInterface_1, GetErrorName),
            1016,
        ),
        (
            129,
            "GetJLocationFormat",
            offset_of!(jvmtiInterface_1, GetJLocationFormat),
            1024,
        ),
        (
            130,
            "GetSystemProperties",
            offset_of!(jvmtiInterface_1, GetSystemProperties),
            1032,
        ),
        (
            131,
            "GetSystemProperty",
            offset_of!(jvmtiInterface_1, GetSystemProperty),
            1040,
        ),
        (
            132,
            "SetSystemProperty",
            offset_of!(jvmtiInterface_1, SetSystemProperty),
            1048,
        ),
        (
            133,
            "GetPhase",
            offset_of!(jvmtiInterface_1, GetPhase),
            1056,
        ),
        (
            134,
            "GetCurrentThreadCpuTimerInfo",
            offset_of!(jvmtiInterface_1, GetCurrentThreadCpuTimerInfo),
            1064,
        ),
        (
            135,
            "GetCurrentThreadCpuTime",
            offset_of!(jvmtiInterface_1, GetCurrentThreadCpuTime),
            1072,
        ),
        (
            136,
            "GetThreadCpuTimerInfo",
            offset_of!(jvmtiInterface_1, GetThreadCpuTimerInfo),
            1080,
        ),
        (
            137,
            "GetThreadCpuTime",
            offset_of!(jvmtiInterface_1, GetThreadCpuTime),
            1088,
        ),
        (
            138,
            "GetTimerInfo",
            offset_of!(jvmtiInterface_1, GetTimerInfo),
            1096,
        ),
        (139, "GetTime", offset_of!(jvmtiInterface_1, GetTime), 1104),
        (
            140,
            "GetPotentialCapabilities",
            offset_of!(jvmtiInterface_1, GetPotentialCapabilities),
            1112,
        ),
        (
            141,
            "reserved141",
            offset_of!(jvmtiInterface_1, reserved141),
            1120,
        ),
        (
            142,
            "AddCapabilities",
            offset_of!(jvmtiInterface_1, AddCapabilities),
            1128,
        ),
        (
            143,
            "RelinquishCapabilities",
            offset_of!(jvmtiInterface_1, RelinquishCapabilities),
            1136,
        ),
        (
            144,
            "GetAvailableProcessors",
            offset_of!(jvmtiInterface_1, GetAvailableProcessors),
            1144,
        ),
        (
            145,
            "GetClassVersionNumbers",
            offset_of!(jvmtiInterface_1, GetClassVersionNumbers),
            1152,
        ),
        (
            146,
            "GetConstantPool",
            offset_of!(jvmtiInterface_1, GetConstantPool),
            1160,
        ),
        (
            147,
            "GetEnvironmentLocalStorage",
            offset_of!(jvmtiInterface_1, GetEnvironmentLocalStorage),
            1168,
        ),
        (
            148,
            "SetEnvironmentLocalStorage",
            offset_of!(jvmtiInterface_1, SetEnvironmentLocalStorage),
            1176,
        ),
        (
            149,
            "AddToBootstrapClassLoaderSearch",
            offset_of!(jvmtiInterface_1, AddToBootstrapClassLoaderSearch),
            1184,
        ),
        (
            150,
            "SetVerboseFlag",
            offset_of!(jvmtiInterface_1, SetVerboseFlag),
            1192,
        ),
        (
            151,
            "AddToSystemClassLoaderSearch",
            offset_of!(jvmtiInterface_1, AddToSystemClassLoaderSearch),
            1200,
        ),
        (
            152,
            "RetransformClasses",
            offset_of!(jvmtiInterface_1, RetransformClasses),
            1208,
        ),
        (
            153,
            "GetOwnedMonitorStackDepthInfo",
            offset_of!(jvmtiInterface_1, GetOwnedMonitorStackDepthInfo),
            1216,
        ),
        (
            154,
            "GetObjectSize",
            offset_of!(jvmtiInterface_1, GetObjectSize),
            1224,
        ),
        (
            155,
            "GetLocalInstance",
            offset_of!(jvmtiInterface_1, GetLocalInstance),
            1232,
        ),
        (
            156,
            "SetHeapSamplingInterval",
            offset_of!(jvmtiInterface_1, SetHeapSamplingInterval),
            1240,
        ),
    ];

    /// (member name, Rust offset, gcc offset), events 50 to 86 in order.
    const CALLBACK_SLOTS: [(&str, usize, usize); 37] = [
        ("VMInit", offset_of!(jvmtiEventCallbacks, VMInit), 0),
        ("VMDeath", offset_of!(jvmtiEventCallbacks, VMDeath), 8),
        (
            "ThreadStart",
            offset_of!(jvmtiEventCallbacks, ThreadStart),
            16,
        ),
        ("ThreadEnd", offset_of!(jvmtiEventCallbacks, ThreadEnd), 24),
        (
            "ClassFileLoadHook",
            offset_of!(jvmtiEventCallbacks, ClassFileLoadHook),
            32,
        ),
        ("ClassLoad", offset_of!(jvmtiEventCallbacks, ClassLoad), 40),
        (
            "ClassPrepare",
            offset_of!(jvmtiEventCallbacks, ClassPrepare),
            48,
        ),
        ("VMStart", offset_of!(jvmtiEventCallbacks, VMStart), 56),
        ("Exception", offset_of!(jvmtiEventCallbacks, Exception), 64),
        (
            "ExceptionCatch",
            offset_of!(jvmtiEventCallbacks, ExceptionCatch),
            72,
        ),
        (
            "SingleStep",
            offset_of!(jvmtiEventCallbacks, SingleStep),
            80,
        ),
        ("FramePop", offset_of!(jvmtiEventCallbacks, FramePop), 88),
        (
            "Breakpoint",
            offset_of!(jvmtiEventCallbacks, Breakpoint),
            96,
        ),
        (
            "FieldAccess",
            offset_of!(jvmtiEventCallbacks, FieldAccess),
            104,
        ),
        (
            "FieldModification",
            offset_of!(jvmtiEventCallbacks, FieldModification),
            112,
        ),
        (
            "MethodEntry",
            offset_of!(jvmtiEventCallbacks, MethodEntry),
            120,
        ),
        (
            "MethodExit",
            offset_of!(jvmtiEventCallbacks, MethodExit),
            128,
        ),
        (
            "NativeMethodBind",
            offset_of!(jvmtiEventCallbacks, NativeMethodBind),
            136,
        ),
        (
            "CompiledMethodLoad",
            offset_of!(jvmtiEventCallbacks, CompiledMethodLoad),
            144,
        ),
        (
            "CompiledMethodUnload",
            offset_of!(jvmtiEventCallbacks, CompiledMethodUnload),
            152,
        ),
        (
            "DynamicCodeGenerated",
            offset_of!(jvmtiEventCallbacks, DynamicCodeGenerated),
            160,
        ),
        (
            "DataDumpRequest",
            offset_of!(jvmtiEventCallbacks, DataDumpRequest),
            168,
        ),
        (
            "reserved72",
            offset_of!(jvmtiEventCallbacks, reserved72),
            176,
        ),
        (
            "MonitorWait",
            offset_of!(jvmtiEventCallbacks, MonitorWait),
            184,
        ),
        (
            "MonitorWaited",
            offset_of!(jvmtiEventCallbacks, MonitorWaited),
            192,
        ),
        (
            "MonitorContendedEnter",
            offset_of!(jvmtiEventCallbacks, MonitorContendedEnter),
            200,
        ),
        (
            "MonitorContendedEntered",
            offset_of!(jvmtiEventCallbacks, MonitorContendedEntered),
            208,
        ),
        (
            "reserved77",
            offset_of!(jvmtiEventCallbacks, reserved77),
            216,
        ),
        (
            "reserved78",
            offset_of!(jvmtiEventCallbacks, reserved78),
            224,
        ),
        (
            "reserved79",
            offset_of!(jvmtiEventCallbacks, reserved79),
            232,
        ),
        (
            "ResourceExhausted",
            offset_of!(jvmtiEventCallbacks, ResourceExhausted),
            240,
        ),
        (
            "GarbageCollectionStart",
            offset_of!(jvmtiEventCallbacks, GarbageCollectionStart),
            248,
        ),
        (
            "GarbageCollectionFinish",
            offset_of!(jvmtiEventCallbacks, GarbageCollectionFinish),
            256,
        ),
        (
            "ObjectFree",
            offset_of!(jvmtiEventCallbacks, ObjectFree),
            264,
        ),
        (
            "VMObjectAlloc",
            offset_of!(jvmtiEventCallbacks, VMObjectAlloc),
            272,
        ),
        (
            "reserved85",
            offset_of!(jvmtiEventCallbacks, reserved85),
            280,
        ),
        (
            "SampledObjectAlloc",
            offset_of!(jvmtiEventCallbacks, SampledObjectAlloc),
            288,
        ),
    ];

    /// (Rust bit index, header name, bit index gcc set for that bit-field).
    const CAPABILITY_BITS: [(u32, &str, u32); 44] = [
        (CAN_TAG_OBJECTS, "can_tag_objects", 0),
        (
            CAN_GENERATE_FIELD_MODIFICATION_EVENTS,
            "can_generate_field_modification_events",
            1,
        ),
        (
            CAN_GENERATE_FIELD_ACCESS_EVENTS,
            "can_generate_field_access_events",
            2,
        ),
        (CAN_GET_BYTECODES, "can_get_bytecodes", 3),
        (
            CAN_GET_SYNTHETIC_ATTRIBUTE,
            "can_get_synthetic_attribute",
            4,
        ),
        (CAN_GET_OWNED_MONITOR_INFO, "can_get_owned_monitor_info", 5),
        (
            CAN_GET_CURRENT_CONTENDED_MONITOR,
            "can_get_current_contended_monitor",
            6,
        ),
        (CAN_GET_MONITOR_INFO, "can_get_monitor_info", 7),
        (CAN_POP_FRAME, "can_pop_frame", 8),
        (CAN_REDEFINE_CLASSES, "can_redefine_classes", 9),
        (CAN_SIGNAL_THREAD, "can_signal_thread", 10),
        (CAN_GET_SOURCE_FILE_NAME, "can_get_source_file_name", 11),
        (CAN_GET_LINE_NUMBERS, "can_get_line_numbers", 12),
        (
            CAN_GET_SOURCE_DEBUG_EXTENSION,
            "can_get_source_debug_extension",
            13,
        ),
        (CAN_ACCESS_LOCAL_VARIABLES, "can_access_local_variables", 14),
        (
            CAN_MAINTAIN_ORIGINAL_METHOD_ORDER,
            "can_maintain_original_method_order",
            15,
        ),
        (
            CAN_GENERATE_SINGLE_STEP_EVENTS,
            "can_generate_single_step_events",
            16,
        ),
        (
            CAN_GENERATE_EXCEPTION_EVENTS,
            "can_generate_exception_events",
            17,
        ),
        (
            CAN_GENERATE_FRAME_POP_EVENTS,
            "can_generate_frame_pop_events",
            18,
        ),
        (
            CAN_GENERATE_BREAKPOINT_EVENTS,
            "can_generate_breakpoint_events",
            19,
        ),
        (CAN_SUSPEND, "can_suspend", 20),
        (CAN_REDEFINE_ANY_CLASS, "can_redefine_any_class", 21),
        (
            CAN_GET_CURRENT_THREAD_CPU_TIME,
            "can_get_current_thread_cpu_time",
            22,
        ),
        (CAN_GET_THREAD_CPU_TIME, "can_get_thread_cpu_time", 23),
        (
            CAN_GENERATE_METHOD_ENTRY_EVENTS,
            "can_generate_method_entry_events",
            24,
        ),
        (
            CAN_GENERATE_METHOD_EXIT_EVENTS,
            "can_generate_method_exit_events",
            25,
        ),
        (
            CAN_GENERATE_ALL_CLASS_HOOK_EVENTS,
            "can_generate_all_class_hook_events",
            26,
        ),
        (
            CAN_GENERATE_COMPILED_METHOD_LOAD_EVENTS,
            "can_generate_compiled_method_load_events",
            27,
        ),
        (
            CAN_GENERATE_MONITOR_EVENTS,
            "can_generate_monitor_events",
            28,
        ),
        (
            CAN_GENERATE_VM_OBJECT_ALLOC_EVENTS,
            "can_generate_vm_object_alloc_events",
            29,
        ),
        (
            CAN_GENERATE_NATIVE_METHOD_BIND_EVENTS,
            "can_generate_native_method_bind_events",
            30,
        ),
        (
            CAN_GENERATE_GARBAGE_COLLECTION_EVENTS,
            "can_generate_garbage_collection_events",
            31,
        ),
        (
            CAN_GENERATE_OBJECT_FREE_EVENTS,
            "can_generate_object_free_events",
            32,
        ),
        (CAN_FORCE_EARLY_RETURN, "can_force_early_return", 33),
        (
            CAN_GET_OWNED_MONITOR_STACK_DEPTH_INFO,
            "can_get_owned_monitor_stack_depth_info",
            34,
        ),
        (CAN_GET_CONSTANT_POOL, "can_get_constant_pool", 35),
        (
            CAN_SET_NATIVE_METHOD_PREFIX,
            "can_set_native_method_prefix",
            36,
        ),
        (CAN_RETRANSFORM_CLASSES, "can_retransform_classes", 37),
        (CAN_RETRANSFORM_ANY_CLASS, "can_retransform_any_class", 38),
        (
            CAN_GENERATE_RESOURCE_EXHAUSTION_HEAP_EVENTS,
            "can_generate_resource_exhaustion_heap_events",
            39,
        ),
        (
            CAN_GENERATE_RESOURCE_EXHAUSTION_THREADS_EVENTS,
            "can_generate_resource_exhaustion_threads_events",
            40,
        ),
        (CAN_GENERATE_EARLY_VMSTART, "can_generate_early_vmstart", 41),
        (
            CAN_GENERATE_EARLY_CLASS_HOOK_EVENTS,
            "can_generate_early_class_hook_events",
            42,
        ),
        (
            CAN_GENERATE_SAMPLED_OBJECT_ALLOC_EVENTS,
            "can_generate_sampled_object_alloc_events",
            43,
        ),
    ];

    #[test]
    fn function_table_has_156_pointer_slots() {
        assert_eq!(
            size_of::<usize>(),
            8,
            "these layouts are for 64-bit targets"
        );
        assert_eq!(size_of::<jvmtiInterface_1>(), 156 * size_of::<usize>());
        assert_eq!(size_of::<jvmtiInterface_1>(), 1248);
        assert_eq!(align_of::<jvmtiInterface_1>(), 8);
        // An Option of a function pointer is one pointer, None being null.
        assert_eq!(size_of::<jvmtiUntypedFn>(), size_of::<*const c_void>());
    }

    #[test]
    fn every_function_slot_is_where_gcc_puts_it() {
        for (i, &(slot, name, rust, gcc)) in FUNCTION_SLOTS.iter().enumerate() {
            assert_eq!(slot, i + 1, "{name}: slots listed out of order");
            assert_eq!(rust, gcc, "{name} (slot {slot})");
            assert_eq!(rust, (slot - 1) * 8, "{name} (slot {slot})");
        }
    }

    #[test]
    fn the_slots_the_agent_calls() {
        let slot = |n: usize| (n - 1) * 8;
        assert_eq!(offset_of!(jvmtiInterface_1, reserved1), slot(1));
        assert_eq!(
            offset_of!(jvmtiInterface_1, SetEventNotificationMode),
            slot(2)
        );
        assert_eq!(offset_of!(jvmtiInterface_1, GetThreadInfo), slot(9));
        assert_eq!(offset_of!(jvmtiInterface_1, RunAgentThread), slot(12));
        assert_eq!(offset_of!(jvmtiInterface_1, GetCurrentThread), slot(18));
        assert_eq!(offset_of!(jvmtiInterface_1, CreateRawMonitor), slot(31));
        assert_eq!(offset_of!(jvmtiInterface_1, RawMonitorNotifyAll), slot(37));
        assert_eq!(offset_of!(jvmtiInterface_1, Allocate), slot(46));
        assert_eq!(offset_of!(jvmtiInterface_1, Deallocate), slot(47));
        assert_eq!(offset_of!(jvmtiInterface_1, GetClassSignature), slot(48));
        assert_eq!(offset_of!(jvmtiInterface_1, GetSourceFileName), slot(50));
        assert_eq!(offset_of!(jvmtiInterface_1, GetMethodName), slot(64));
        assert_eq!(
            offset_of!(jvmtiInterface_1, GetMethodDeclaringClass),
            slot(65)
        );
        assert_eq!(offset_of!(jvmtiInterface_1, GetLineNumberTable), slot(70));
        assert_eq!(offset_of!(jvmtiInterface_1, GetStackTrace), 103 * 8);
        assert_eq!(offset_of!(jvmtiInterface_1, GetClassFields), slot(53));
        assert_eq!(
            offset_of!(jvmtiInterface_1, GetImplementedInterfaces),
            slot(54)
        );
        assert_eq!(offset_of!(jvmtiInterface_1, GetFieldName), slot(60));
        assert_eq!(offset_of!(jvmtiInterface_1, GetFieldModifiers), slot(62));
        assert_eq!(offset_of!(jvmtiInterface_1, GetTag), slot(106));
        assert_eq!(offset_of!(jvmtiInterface_1, SetTag), slot(107));
        assert_eq!(offset_of!(jvmtiInterface_1, FollowReferences), slot(115));
        assert_eq!(offset_of!(jvmtiInterface_1, SetEventCallbacks), slot(122));
        assert_eq!(offset_of!(jvmtiInterface_1, DisposeEnvironment), slot(127));
        assert_eq!(offset_of!(jvmtiInterface_1, GetErrorName), slot(128));
        assert_eq!(offset_of!(jvmtiInterface_1, GetPhase), slot(133));
        assert_eq!(
            offset_of!(jvmtiInterface_1, GetPotentialCapabilities),
            slot(140)
        );
        assert_eq!(offset_of!(jvmtiInterface_1, AddCapabilities), slot(142));
        assert_eq!(offset_of!(jvmtiInterface_1, GetObjectSize), slot(154));
        assert_eq!(
            offset_of!(jvmtiInterface_1, SetHeapSamplingInterval),
            slot(156)
        );
        assert_eq!(offset_of!(jvmtiInterface_1, SetHeapSamplingInterval), 1240);
    }

    #[test]
    fn callback_table_has_37_slots_where_gcc_puts_them() {
        // 86 - 50 + 1 = 37 members, reserved72, 77, 78, 79 and 85 included.
        assert_eq!(size_of::<jvmtiEventCallbacks>(), 37 * size_of::<usize>());
        assert_eq!(size_of::<jvmtiEventCallbacks>(), 296);
        for (i, &(name, rust, gcc)) in CALLBACK_SLOTS.iter().enumerate() {
            assert_eq!(rust, gcc, "{name}");
            assert_eq!(rust, i * 8, "{name}");
        }
        // Slot of event E is at (E - 50) * 8.
        let ev = |e: jvmtiEvent| (e - JVMTI_EVENT_VM_INIT) as usize * 8;
        assert_eq!(
            offset_of!(jvmtiEventCallbacks, VMInit),
            ev(JVMTI_EVENT_VM_INIT)
        );
        assert_eq!(
            offset_of!(jvmtiEventCallbacks, VMDeath),
            ev(JVMTI_EVENT_VM_DEATH)
        );
        assert_eq!(
            offset_of!(jvmtiEventCallbacks, ThreadStart),
            ev(JVMTI_EVENT_THREAD_START)
        );
        assert_eq!(
            offset_of!(jvmtiEventCallbacks, ThreadEnd),
            ev(JVMTI_EVENT_THREAD_END)
        );
        assert_eq!(
            offset_of!(jvmtiEventCallbacks, ClassLoad),
            ev(JVMTI_EVENT_CLASS_LOAD)
        );
        assert_eq!(
            offset_of!(jvmtiEventCallbacks, ClassPrepare),
            ev(JVMTI_EVENT_CLASS_PREPARE)
        );
        assert_eq!(
            offset_of!(jvmtiEventCallbacks, GarbageCollectionStart),
            ev(JVMTI_EVENT_GARBAGE_COLLECTION_START)
        );
        assert_eq!(
            offset_of!(jvmtiEventCallbacks, GarbageCollectionFinish),
            ev(JVMTI_EVENT_GARBAGE_COLLECTION_FINISH)
        );
        assert_eq!(
            offset_of!(jvmtiEventCallbacks, ObjectFree),
            ev(JVMTI_EVENT_OBJECT_FREE)
        );
        assert_eq!(
            offset_of!(jvmtiEventCallbacks, SampledObjectAlloc),
            ev(JVMTI_EVENT_SAMPLED_OBJECT_ALLOC)
        );
        assert_eq!(offset_of!(jvmtiEventCallbacks, SampledObjectAlloc), 288);
    }

    #[test]
    fn default_callbacks_are_all_null() {
        let shown = format!("{:?}", jvmtiEventCallbacks::default());
        assert_eq!(shown.matches(": None").count(), 37, "{shown}");
        let shown = format!("{:?}", jvmtiInterface_1::default());
        assert_eq!(shown.matches(": None").count(), 156);
    }

    #[test]
    fn event_numbers_match_the_header() {
        assert_eq!(JVMTI_EVENT_VM_INIT, 50);
        assert_eq!(JVMTI_EVENT_VM_DEATH, 51);
        assert_eq!(JVMTI_EVENT_THREAD_START, 52);
        assert_eq!(JVMTI_EVENT_THREAD_END, 53);
        assert_eq!(JVMTI_EVENT_CLASS_LOAD, 55);
        assert_eq!(JVMTI_EVENT_CLASS_PREPARE, 56);
        assert_eq!(JVMTI_EVENT_VM_START, 57);
        assert_eq!(JVMTI_EVENT_GARBAGE_COLLECTION_START, 81);
        assert_eq!(JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, 82);
        assert_eq!(JVMTI_EVENT_OBJECT_FREE, 83);
        assert_eq!(JVMTI_EVENT_VM_OBJECT_ALLOC, 84);
        assert_eq!(JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, 86);
        assert_eq!(JVMTI_MAX_EVENT_TYPE_VAL, 86);
        assert_eq!(JVMTI_ENABLE, 1);
        assert_eq!(JVMTI_DISABLE, 0);
    }

    #[test]
    fn versions_errors_and_phases_match_the_header() {
        assert_eq!(JVMTI_VERSION_1_2, 0x30010200);
        assert_eq!(JVMTI_VERSION_11, 0x300B0000);
        assert_eq!(JVMTI_VERSION, 0x30000000 + 17 * 0x10000);
        assert_eq!(JVMTI_ERROR_NONE, 0);
        assert_eq!(JVMTI_ERROR_INVALID_THREAD, 10);
        assert_eq!(JVMTI_ERROR_THREAD_NOT_ALIVE, 15);
        assert_eq!(JVMTI_ERROR_INVALID_CLASS, 21);
        assert_eq!(JVMTI_ERROR_INVALID_METHODID, 23);
        assert_eq!(JVMTI_ERROR_NOT_AVAILABLE, 98);
        assert_eq!(JVMTI_ERROR_MUST_POSSESS_CAPABILITY, 99);
        assert_eq!(JVMTI_ERROR_NULL_POINTER, 100);
        assert_eq!(JVMTI_ERROR_ABSENT_INFORMATION, 101);
        assert_eq!(JVMTI_ERROR_ILLEGAL_ARGUMENT, 103);
        assert_eq!(JVMTI_ERROR_NATIVE_METHOD, 104);
        assert_eq!(JVMTI_ERROR_OUT_OF_MEMORY, 110);
        assert_eq!(JVMTI_ERROR_WRONG_PHASE, 112);
        assert_eq!(JVMTI_ERROR_INTERNAL, 113);
        assert_eq!(JVMTI_ERROR_UNATTACHED_THREAD, 115);
        assert_eq!(JVMTI_ERROR_INVALID_ENVIRONMENT, 116);
        assert_eq!(JVMTI_PHASE_ONLOAD, 1);
        assert_eq!(JVMTI_PHASE_PRIMORDIAL, 2);
        assert_eq!(JVMTI_PHASE_START, 6);
        assert_eq!(JVMTI_PHASE_LIVE, 4);
        assert_eq!(JVMTI_PHASE_DEAD, 8);
        assert_eq!(JVMTI_THREAD_NORM_PRIORITY, 5);
        // The C enums are 4 bytes (gcc: sizeof(jvmtiEvent) == sizeof(jvmtiError) == 4).
        assert_eq!(size_of::<jvmtiError>(), 4);
        assert_eq!(size_of::<jvmtiEvent>(), 4);
        assert_eq!(size_of::<jvmtiEventMode>(), 4);
        assert_eq!(size_of::<jvmtiPhase>(), 4);
    }

    #[test]
    fn capability_bits_are_where_gcc_puts_them() {
        assert_eq!(size_of::<jvmtiCapabilities>(), 16);
        assert_eq!(align_of::<jvmtiCapabilities>(), 4);
        for (i, &(bit, name, gcc)) in CAPABILITY_BITS.iter().enumerate() {
            assert_eq!(bit, gcc, "{name}");
            assert_eq!(bit as usize, i, "{name}");
            assert_eq!(capability_name(bit), Some(name));
        }
        assert_eq!(NAMED_CAPABILITY_BITS, 44);
        assert_eq!(capability_name(44), None);
        assert_eq!(CAN_TAG_OBJECTS, 0);
        assert_eq!(CAN_GENERATE_FIELD_MODIFICATION_EVENTS, 1);
        assert_eq!(CAN_GET_SOURCE_FILE_NAME, 11);
        assert_eq!(CAN_GET_LINE_NUMBERS, 12);
        assert_eq!(CAN_GENERATE_ALL_CLASS_HOOK_EVENTS, 26);
        assert_eq!(CAN_GENERATE_VM_OBJECT_ALLOC_EVENTS, 29);
        assert_eq!(CAN_GENERATE_GARBAGE_COLLECTION_EVENTS, 31);
        assert_eq!(CAN_GENERATE_OBJECT_FREE_EVENTS, 32);
        assert_eq!(CAN_GET_CONSTANT_POOL, 35);
        assert_eq!(CAN_GENERATE_SAMPLED_OBJECT_ALLOC_EVENTS, 43);
    }

    #[test]
    fn capability_words_match_gcc() {
        // gcc, one bit-field set to 1 in a zeroed struct, the 4 words printed:
        //   can_tag_objects                          -> 0x00000001 0 0 0
        //   can_generate_sampled_object_alloc_events -> 0 0x00000800 0 0
        assert_eq!(
            jvmtiCapabilities::of(&[CAN_TAG_OBJECTS]).words(),
            [1, 0, 0, 0]
        );
        assert_eq!(
            jvmtiCapabilities::of(&[CAN_GENERATE_SAMPLED_OBJECT_ALLOC_EVENTS]).words(),
            [0, 0x0000_0800, 0, 0]
        );
        // gcc, these nine set together -> 0xa4001801 0x00000809 0 0.
        let mut caps = jvmtiCapabilities::default();
        for bit in [
            CAN_TAG_OBJECTS,
            CAN_GET_SOURCE_FILE_NAME,
            CAN_GET_LINE_NUMBERS,
            CAN_GENERATE_ALL_CLASS_HOOK_EVENTS,
            CAN_GENERATE_VM_OBJECT_ALLOC_EVENTS,
            CAN_GENERATE_GARBAGE_COLLECTION_EVENTS,
            CAN_GENERATE_OBJECT_FREE_EVENTS,
            CAN_GET_CONSTANT_POOL,
            CAN_GENERATE_SAMPLED_OBJECT_ALLOC_EVENTS,
        ] {
            caps.set(bit);
        }
        assert_eq!(caps.words(), [0xa400_1801, 0x0000_0809, 0, 0]);
        assert!(caps.has(CAN_GENERATE_OBJECT_FREE_EVENTS));
        assert!(!caps.has(CAN_GENERATE_FIELD_MODIFICATION_EVENTS));
        assert_eq!(caps.iter_bits().count(), 9);
        caps.clear(CAN_GET_CONSTANT_POOL);
        assert!(!caps.has(CAN_GET_CONSTANT_POOL));
        assert_eq!(caps.words(), [0xa400_1801, 0x0000_0801, 0, 0]);
    }

    #[test]
    fn capability_set_algebra() {
        let need =
            jvmtiCapabilities::of(&[CAN_TAG_OBJECTS, CAN_GENERATE_SAMPLED_OBJECT_ALLOC_EVENTS]);
        let potential = jvmtiCapabilities::of(&[CAN_TAG_OBJECTS, CAN_GET_LINE_NUMBERS]);
        assert!(!potential.contains_all(&need));
        let missing = potential.missing(&need);
        assert_eq!(
            missing.iter_bits().collect::<Vec<_>>(),
            [CAN_GENERATE_SAMPLED_OBJECT_ALLOC_EVENTS]
        );
        assert!(need.contains_all(&jvmtiCapabilities::new()));
        assert_eq!(jvmtiCapabilities::from_words(need.words()), need);
    }

    #[test]
    fn structs_match_gcc() {
        // gcc: sizeof jvmtiFrameInfo 16, jvmtiLineNumberEntry 16,
        // jvmtiThreadInfo 32 (name 0, priority 8, is_daemon 12,
        // thread_group 16, context_class_loader 24), jvmtiThreadGroupInfo 24
        // (parent 0, name 8, max_priority 16, is_daemon 20).
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
        assert_eq!(size_of::<jvmtiThreadGroupInfo>(), 24);
        assert_eq!(offset_of!(jvmtiThreadGroupInfo, parent), 0);
        assert_eq!(offset_of!(jvmtiThreadGroupInfo, name), 8);
        assert_eq!(offset_of!(jvmtiThreadGroupInfo, max_priority), 16);
        assert_eq!(offset_of!(jvmtiThreadGroupInfo, is_daemon), 20);
        assert_eq!(size_of::<jvmtiAddrLocationMap>(), 16);
        assert_eq!(size_of::<jvmtiEnv>(), 8);
        assert_eq!(size_of::<jrawMonitorID>(), 8);
    }

    #[test]
    fn heap_walking_structs_match_gcc() {
        // gcc: sizeof jvmtiHeapReferenceInfo 64 (align 8);
        // jvmtiHeapReferenceInfoStackLocal 48 (thread_tag 0, thread_id 8,
        // depth 16, method 24, location 32, slot 40); JniLocal 32 (depth 16,
        // method 24); Field, Array, ConstantPool 4; Reserved 64;
        // jvmtiHeapCallbacks 128 (heap_reference_callback 8, reserved15
        // 120); sizeof(jvmtiHeapReferenceKind) 4.
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
        assert_eq!(size_of::<jvmtiHeapReferenceInfoArray>(), 4);
        assert_eq!(size_of::<jvmtiHeapReferenceInfoConstantPool>(), 4);
        assert_eq!(size_of::<jvmtiHeapReferenceInfoReserved>(), 64);
        assert_eq!(size_of::<jvmtiHeapCallbacks>(), 128);
        assert_eq!(offset_of!(jvmtiHeapCallbacks, heap_reference_callback), 8);
        assert_eq!(offset_of!(jvmtiHeapCallbacks, reserved), 40);
        assert_eq!(size_of::<jvmtiHeapReferenceKind>(), 4);
        assert_eq!(JVMTI_HEAP_REFERENCE_FIELD, 2);
        assert_eq!(JVMTI_HEAP_REFERENCE_STATIC_FIELD, 8);
        assert_eq!(JVMTI_HEAP_REFERENCE_SUPERCLASS, 10);
        assert_eq!(JVMTI_HEAP_REFERENCE_JNI_GLOBAL, 21);
        assert_eq!(JVMTI_HEAP_REFERENCE_OTHER, 27);
        assert_eq!((JVMTI_VISIT_OBJECTS, JVMTI_VISIT_ABORT), (0x100, 0x8000));
    }

    /// The typed callbacks accept functions with the signatures the agent
    /// will write; this only has to compile.
    #[test]
    fn callbacks_take_functions_of_the_c_signature() {
        unsafe extern "system" fn vm_init(_: *mut jvmtiEnv, _: *mut JNIEnv, _: jthread) {}
        unsafe extern "system" fn sampled(
            _: *mut jvmtiEnv,
            _: *mut JNIEnv,
            _: jthread,
            _: jobject,
            _: jclass,
            _: jlong,
        ) {
        }
        unsafe extern "system" fn object_free(_: *mut jvmtiEnv, _: jlong) {}
        unsafe extern "system" fn gc(_: *mut jvmtiEnv) {}
        unsafe extern "system" fn agent_thread(_: *mut jvmtiEnv, _: *mut JNIEnv, _: *mut c_void) {}
        let cbs = jvmtiEventCallbacks {
            VMInit: Some(vm_init),
            SampledObjectAlloc: Some(sampled),
            ObjectFree: Some(object_free),
            GarbageCollectionStart: Some(gc),
            GarbageCollectionFinish: Some(gc),
            ..Default::default()
        };
        assert!(cbs.VMInit.is_some() && cbs.VMDeath.is_none());
        let start: jvmtiStartFunction = Some(agent_thread);
        assert!(start.is_some());
        let table = jvmtiInterface_1::default();
        assert!(table.GetStackTrace.is_none() && table.reserved1.is_none());
    }
}
