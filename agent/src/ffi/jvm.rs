//! The safe wrapper over the JVMTI function table: each call checks its
//! result, copies strings out and frees what the JVM allocated. JNI's is
//! [`super::jni`].

use std::ffi::{CStr, c_char, c_void};
use std::ptr;

use jni::sys::{jclass, jint, jlong, jmethodID, jobject};

use super::jni::{Jni, Vm};
use super::sys::*;

/// A JVMTI error code, with its name for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("JVMTI error {code} ({})", error_name(*.code).unwrap_or("see jvmti.h"))]
pub struct JvmtiError {
    /// The `jvmtiError` code.
    pub code: jvmtiError,
}

fn check(code: jvmtiError) -> Result<(), JvmtiError> {
    if code == JVMTI_ERROR_NONE {
        Ok(())
    } else {
        Err(JvmtiError { code })
    }
}

/// A JVMTI environment.
#[derive(Debug, Clone, Copy)]
pub struct Jvmti(*mut jvmtiEnv);

// SAFETY: a JVMTI environment may be used from any thread attached to the
// VM (and, for the functions the agent calls from GC callbacks, from the VM's
// own threads); the JVM synchronises internally.
unsafe impl Send for Jvmti {}
// SAFETY: as above: the environment is shared by design.
unsafe impl Sync for Jvmti {}

impl Jvmti {
    /// A new JVMTI environment of version 11 or later from `vm`, or the
    /// status `GetEnv` returned instead.
    pub fn new(vm: Vm) -> Result<Self, jint> {
        vm.env(JVMTI_VERSION_11).map(|env| Self(env.cast()))
    }

    fn table(&self) -> &jvmtiInterface_1 {
        // SAFETY: a valid environment points at its function table, which
        // lives as long as the environment.
        unsafe { &**self.0 }
    }

    /// Gives the environment (and its capabilities) back to the JVM.
    pub fn dispose(self) {
        // SAFETY: the environment is not used after this; callers drop it.
        unsafe { self.table().DisposeEnvironment(self.0) };
    }

    /// The capabilities this JVM could grant now.
    pub fn potential_capabilities(&self) -> Result<jvmtiCapabilities, JvmtiError> {
        let mut capabilities = jvmtiCapabilities::default();
        // SAFETY: writes into `capabilities`, a jvmtiCapabilities-sized struct.
        check(unsafe {
            self.table()
                .GetPotentialCapabilities(self.0, &mut capabilities)
        })?;
        Ok(capabilities)
    }

    /// Asks for capabilities.
    pub fn add_capabilities(&self, capabilities: &jvmtiCapabilities) -> Result<(), JvmtiError> {
        // SAFETY: reads the struct passed by reference.
        check(unsafe { self.table().AddCapabilities(self.0, capabilities) })
    }

    /// Installs the event callbacks.
    pub fn set_event_callbacks(&self, callbacks: &jvmtiEventCallbacks) -> Result<(), JvmtiError> {
        let size = std::mem::size_of::<jvmtiEventCallbacks>() as jint;
        // SAFETY: the JVM copies `size` bytes of the struct.
        check(unsafe { self.table().SetEventCallbacks(self.0, callbacks, size) })
    }

    /// Enables or disables an event, for every thread.
    pub fn set_event(&self, enable: bool, event: jvmtiEvent) -> Result<(), JvmtiError> {
        let mode = if enable { JVMTI_ENABLE } else { JVMTI_DISABLE };
        // SAFETY: a null thread means "all threads"; no variadic argument.
        check(unsafe {
            self.table()
                .SetEventNotificationMode(self.0, mode, event, ptr::null_mut())
        })
    }

    /// Enables or disables an event for one thread.
    pub fn set_thread_event(
        &self,
        enable: bool,
        event: jvmtiEvent,
        thread: jobject,
    ) -> Result<(), JvmtiError> {
        let mode = if enable { JVMTI_ENABLE } else { JVMTI_DISABLE };
        // SAFETY: `thread` is a live reference to a started thread; no
        // variadic argument.
        check(unsafe {
            self.table()
                .SetEventNotificationMode(self.0, mode, event, thread)
        })
    }

    /// Every live platform thread: local references the caller deletes.
    pub fn all_threads(&self) -> Result<Vec<jobject>, JvmtiError> {
        let (mut count, mut threads): (jint, *mut jthread) = (0, ptr::null_mut());
        // SAFETY: the JVM writes a count and an array it allocated.
        check(unsafe { self.table().GetAllThreads(self.0, &mut count, &mut threads) })?;
        let list = if threads.is_null() || count <= 0 {
            Vec::new()
        } else {
            // SAFETY: the JVM returned `count` thread references at `threads`.
            unsafe { std::slice::from_raw_parts(threads, count as usize) }.to_vec()
        };
        self.deallocate(threads.cast());
        Ok(list)
    }

    /// Sets the mean sampling interval in bytes (0: every allocation).
    pub fn set_heap_sampling_interval(&self, interval: jint) -> Result<(), JvmtiError> {
        // SAFETY: takes a plain integer.
        check(unsafe { self.table().SetHeapSamplingInterval(self.0, interval) })
    }

    /// The current thread's stack, top first, into `frames`; returns how
    /// many frames were written.
    #[inline]
    pub fn current_stack(&self, frames: &mut [jvmtiFrameInfo]) -> Result<usize, JvmtiError> {
        let mut count: jint = 0;
        // SAFETY: a null thread is the current thread; the JVM writes at
        // most `frames.len()` entries and the count.
        check(unsafe {
            self.table().GetStackTrace(
                self.0,
                ptr::null_mut(),
                0,
                frames.len() as jint,
                frames.as_mut_ptr(),
                &mut count,
            )
        })?;
        Ok(count.max(0) as usize)
    }

    /// The current thread: a local reference the caller deletes.
    pub fn current_thread(&self) -> Result<jobject, JvmtiError> {
        let mut thread: jthread = ptr::null_mut();
        // SAFETY: the JVM writes one thread reference.
        check(unsafe { self.table().GetCurrentThread(self.0, &mut thread) })?;
        Ok(thread)
    }

    /// Forces a garbage collection and returns when it is over (JVMTI
    /// `ForceGarbageCollection`, live phase only). Weak references to
    /// objects it found unreachable are cleared then.
    pub fn force_garbage_collection(&self) -> Result<(), JvmtiError> {
        // SAFETY: takes no argument.
        check(unsafe { self.table().ForceGarbageCollection(self.0) })
    }

    /// The tag of an object (0: none).
    #[inline]
    pub fn tag(&self, object: jobject) -> Result<jlong, JvmtiError> {
        let mut tag: jlong = 0;
        // SAFETY: `object` is a live reference the caller holds.
        check(unsafe { self.table().GetTag(self.0, object, &mut tag) })?;
        Ok(tag)
    }

    /// Tags an object.
    pub fn set_tag(&self, object: jobject, tag: jlong) -> Result<(), JvmtiError> {
        // SAFETY: `object` is a live reference the caller holds.
        check(unsafe { self.table().SetTag(self.0, object, tag) })
    }

    /// Copies a JVM-allocated C string out and frees it.
    fn take_string(&self, text: *mut c_char) -> String {
        if text.is_null() {
            return String::new();
        }
        // SAFETY: the JVM returned a NUL-terminated modified-UTF-8 string.
        let owned = unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned();
        self.deallocate(text.cast());
        owned
    }

    fn deallocate(&self, memory: *mut u8) {
        if !memory.is_null() {
            // SAFETY: `memory` was allocated by this JVMTI environment.
            unsafe { self.table().Deallocate(self.0, memory.cast()) };
        }
    }

    /// A class's signature: `Ljava/lang/String;`, `[I`.
    pub fn class_signature(&self, class: jclass) -> Result<String, JvmtiError> {
        let mut signature: *mut c_char = ptr::null_mut();
        // SAFETY: `class` is a live reference; the JVM allocates the string.
        check(unsafe {
            self.table()
                .GetClassSignature(self.0, class, &mut signature, ptr::null_mut())
        })?;
        Ok(self.take_string(signature))
    }

    /// The loader that defined a class: a local reference the caller
    /// deletes, or null for the bootstrap loader (JVMTI gives it no object).
    pub fn class_loader(&self, class: jclass) -> Result<jobject, JvmtiError> {
        let mut loader: jobject = ptr::null_mut();
        // SAFETY: `class` is a live reference; the JVM writes a local
        // reference or null.
        check(unsafe { self.table().GetClassLoader(self.0, class, &mut loader) })?;
        Ok(loader)
    }

    /// A method's name and descriptor.
    pub fn method_name(&self, method: jmethodID) -> Result<(String, String), JvmtiError> {
        let (mut name, mut signature): (*mut c_char, *mut c_char) =
            (ptr::null_mut(), ptr::null_mut());
        // SAFETY: the JVM validates the method id and allocates the strings.
        check(unsafe {
            self.table()
                .GetMethodName(self.0, method, &mut name, &mut signature, ptr::null_mut())
        })?;
        Ok((self.take_string(name), self.take_string(signature)))
    }

    /// The class declaring a method: a JNI local reference the caller deletes.
    pub fn method_declaring_class(&self, method: jmethodID) -> Result<jclass, JvmtiError> {
        let mut class: jclass = ptr::null_mut();
        // SAFETY: the JVM validates the method id and writes a local reference.
        check(unsafe {
            self.table()
                .GetMethodDeclaringClass(self.0, method, &mut class)
        })?;
        Ok(class)
    }

    /// A method's access modifiers.
    pub fn method_modifiers(&self, method: jmethodID) -> Result<jint, JvmtiError> {
        let mut modifiers: jint = 0;
        // SAFETY: the JVM validates the method id.
        check(unsafe {
            self.table()
                .GetMethodModifiers(self.0, method, &mut modifiers)
        })?;
        Ok(modifiers)
    }

    /// A method's line number table: (first bytecode index, line); empty
    /// for native methods and classes compiled without line numbers.
    pub fn line_numbers(&self, method: jmethodID) -> Result<Vec<(i64, i32)>, JvmtiError> {
        let (mut count, mut table): (jint, *mut jvmtiLineNumberEntry) = (0, ptr::null_mut());
        // SAFETY: the JVM validates the method id and allocates the table.
        let code = unsafe {
            self.table()
                .GetLineNumberTable(self.0, method, &mut count, &mut table)
        };
        if code == JVMTI_ERROR_ABSENT_INFORMATION || code == JVMTI_ERROR_NATIVE_METHOD {
            return Ok(Vec::new());
        }
        check(code)?;
        let lines = if table.is_null() || count <= 0 {
            Vec::new()
        } else {
            // SAFETY: the JVM returned `count` entries at `table`.
            unsafe { std::slice::from_raw_parts(table, count as usize) }
                .iter()
                .map(|entry| (entry.start_location, entry.line_number))
                .collect()
        };
        self.deallocate(table.cast());
        Ok(lines)
    }

    /// Whether a method is native.
    pub fn is_method_native(&self, method: jmethodID) -> Result<bool, JvmtiError> {
        let mut native = 0;
        // SAFETY: the JVM validates the method id.
        check(unsafe { self.table().IsMethodNative(self.0, method, &mut native) })?;
        Ok(native != 0)
    }

    /// Every loaded class: local references the caller deletes.
    pub fn loaded_classes(&self) -> Result<Vec<jclass>, JvmtiError> {
        let (mut count, mut classes): (jint, *mut jclass) = (0, ptr::null_mut());
        // SAFETY: the JVM writes a count and an array it allocated.
        check(unsafe {
            self.table()
                .GetLoadedClasses(self.0, &mut count, &mut classes)
        })?;
        Ok(self.take_array(classes, count))
    }

    /// Copies an array the JVM allocated out and frees it.
    fn take_array<T: Copy>(&self, array: *mut T, count: jint) -> Vec<T> {
        let list = if array.is_null() || count <= 0 {
            Vec::new()
        } else {
            // SAFETY: the JVM returned `count` elements at `array`.
            unsafe { std::slice::from_raw_parts(array, count as usize) }.to_vec()
        };
        self.deallocate(array.cast());
        list
    }

    /// The fields a class declares, in the order JVMTI numbers them (its
    /// static fields included, inherited ones not).
    pub fn class_fields(&self, class: jclass) -> Result<Vec<jni::sys::jfieldID>, JvmtiError> {
        let (mut count, mut fields): (jint, *mut jni::sys::jfieldID) = (0, ptr::null_mut());
        // SAFETY: `class` is a live reference; the JVM writes a count and an
        // array it allocated.
        check(unsafe {
            self.table()
                .GetClassFields(self.0, class, &mut count, &mut fields)
        })?;
        Ok(self.take_array(fields, count))
    }

    /// The interfaces a class (or interface) declares it implements (or
    /// extends): local references the caller deletes.
    pub fn implemented_interfaces(&self, class: jclass) -> Result<Vec<jclass>, JvmtiError> {
        let (mut count, mut interfaces): (jint, *mut jclass) = (0, ptr::null_mut());
        // SAFETY: `class` is a live reference; the JVM writes a count and an
        // array of local references it allocated.
        check(unsafe {
            self.table()
                .GetImplementedInterfaces(self.0, class, &mut count, &mut interfaces)
        })?;
        Ok(self.take_array(interfaces, count))
    }

    /// Whether a class is an interface.
    pub fn is_interface(&self, class: jclass) -> Result<bool, JvmtiError> {
        let mut interface = 0;
        // SAFETY: `class` is a live reference.
        check(unsafe { self.table().IsInterface(self.0, class, &mut interface) })?;
        Ok(interface != 0)
    }

    /// A field's name and signature (`I`, `Ljava/lang/String;`).
    pub fn field_name(
        &self,
        class: jclass,
        field: jni::sys::jfieldID,
    ) -> Result<(String, String), JvmtiError> {
        let (mut name, mut signature): (*mut c_char, *mut c_char) =
            (ptr::null_mut(), ptr::null_mut());
        // SAFETY: `class` is a live reference and `field` one of its fields;
        // the JVM allocates the strings, and skips the null generic pointer.
        check(unsafe {
            self.table().GetFieldName(
                self.0,
                class,
                field,
                &mut name,
                &mut signature,
                ptr::null_mut(),
            )
        })?;
        Ok((self.take_string(name), self.take_string(signature)))
    }

    /// A field's access modifiers.
    pub fn field_modifiers(
        &self,
        class: jclass,
        field: jni::sys::jfieldID,
    ) -> Result<jint, JvmtiError> {
        let mut modifiers: jint = 0;
        // SAFETY: `class` is a live reference and `field` one of its fields.
        check(unsafe {
            self.table()
                .GetFieldModifiers(self.0, class, field, &mut modifiers)
        })?;
        Ok(modifiers)
    }

    /// Walks the heap from its roots (`FollowReferences` with no filter),
    /// calling `callbacks` with `user_data` on the VM thread, the JVM
    /// paused, until the walk ends or a callback aborts it. Needs
    /// `can_tag_objects`.
    ///
    /// # Safety
    /// The callbacks must be sound for `user_data`: each reads it as the
    /// type the caller passes, which lives and is not otherwise used until
    /// this returns.
    pub unsafe fn follow_references(
        &self,
        callbacks: &jvmtiHeapCallbacks,
        user_data: *mut c_void,
    ) -> Result<(), JvmtiError> {
        // SAFETY: no class filter and no initial object (null: the roots);
        // the callbacks and `user_data` are sound together (the caller's
        // contract), and the JVM calls them only while this call runs.
        check(unsafe {
            self.table().FollowReferences(
                self.0,
                0,
                ptr::null_mut(),
                ptr::null_mut(),
                callbacks,
                user_data,
            )
        })
    }

    /// A thread's name. `jni` deletes the local references the call returns.
    pub fn thread_name(&self, jni: Jni, thread: jobject) -> Result<String, JvmtiError> {
        let mut info = jvmtiThreadInfo::default();
        // SAFETY: `thread` is a live reference; the JVM fills `info`.
        check(unsafe { self.table().GetThreadInfo(self.0, thread, &mut info) })?;
        jni.delete_local_ref(info.thread_group);
        jni.delete_local_ref(info.context_class_loader);
        Ok(self.take_string(info.name))
    }

    /// The JVM's system properties as it started with them, in its order:
    /// JVMTI's `GetSystemProperties` for the keys and `GetSystemProperty`
    /// for each value (the initial one, not what Java code set since). A
    /// key whose value cannot be had is left out.
    pub fn system_properties(&self) -> Result<Vec<(String, String)>, JvmtiError> {
        let mut count: jint = 0;
        let mut keys: *mut *mut c_char = ptr::null_mut();
        // SAFETY: the JVM writes the count and allocates the array and
        // each key, all freed below.
        check(unsafe {
            self.table()
                .GetSystemProperties(self.0, &mut count, &mut keys)
        })?;
        let mut properties = Vec::with_capacity(count.max(0) as usize);
        for at in 0..count.max(0) as usize {
            // SAFETY: the array holds `count` key pointers.
            let key = unsafe { *keys.add(at) };
            if key.is_null() {
                continue;
            }
            let mut value: *mut c_char = ptr::null_mut();
            // SAFETY: `key` is a NUL-terminated key the JVM gave; it
            // allocates the value, freed by `take_string`.
            let found = check(unsafe { self.table().GetSystemProperty(self.0, key, &mut value) });
            let key = self.take_string(key);
            if found.is_ok() {
                properties.push((key, self.take_string(value)));
            }
        }
        self.deallocate(keys.cast());
        Ok(properties)
    }
}

/// The operating system's id of the calling thread.
pub fn os_thread_id() -> i64 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as i64 }
}

/// Gives the memory the C allocator holds free back to the operating
/// system. A session's small blocks (the writer's caches and pools; large
/// ones are mapped pages, see [`super::alloc`]) are freed at its stop into
/// the arenas of the threads that used them, where glibc keeps them: with
/// this, 100 attach/stop cycles grew the JVM's resident memory by about
/// 1 MiB, without it by about 10 (BENCHMARKS.md, "Attach and stop, again
/// and again").
pub fn release_free_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim has no preconditions; it takes each arena's lock
    // as malloc does.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The file this library was loaded from, as the JVM named it to the
/// dynamic loader (made absolute against the working directory, which a
/// JVM never changes): the file a second load must name to reach this copy.
pub fn library_path() -> Option<std::path::PathBuf> {
    let mut info = std::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    let address = library_path as *const libc::c_void;
    // SAFETY: dladdr reads the loader's tables for an address of this
    // library's code and fills `info`, which it may leave zeroed.
    let found = unsafe { libc::dladdr(address, info.as_mut_ptr()) } != 0;
    // SAFETY: zeroed, then filled by dladdr: valid either way.
    let info = unsafe { info.assume_init() };
    if !found || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated string the loader owns for as
    // long as the library stays loaded, which a JVM's agent does.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    use std::os::unix::ffi::OsStrExt as _;
    std::path::absolute(std::ffi::OsStr::from_bytes(name.to_bytes())).ok()
}
