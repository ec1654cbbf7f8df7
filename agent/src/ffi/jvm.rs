//! Safe wrappers over the JVMTI and JNI function tables: each call checks
//! its result, copies strings out and frees what the JVM allocated.

use std::ffi::{CStr, c_char, c_void};
use std::ptr;

use jni::sys::{
    JNIEnv, JavaVM, jboolean, jclass, jfieldID, jint, jlong, jmethodID, jobject, jvalue,
};

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

/// The JVM's invocation interface.
#[derive(Debug, Clone, Copy)]
pub struct Vm(*mut JavaVM);

// SAFETY: the JavaVM pointer is valid for the life of the JVM and its
// functions are callable from any thread.
unsafe impl Send for Vm {}
// SAFETY: as above.
unsafe impl Sync for Vm {}

impl Vm {
    /// Wraps the pointer the JVM passes to `Agent_OnLoad`.
    pub fn new(vm: *mut JavaVM) -> Self {
        Self(vm)
    }

    /// A JVMTI environment of version 11 or later.
    pub fn jvmti(self) -> Result<Jvmti, jint> {
        let mut env: *mut c_void = ptr::null_mut();
        // SAFETY: `self.0` is the JavaVM the JVM handed us; GetEnv writes an
        // environment pointer into `env` and returns a status.
        let status =
            unsafe { ((**self.0).GetEnv.expect("GetEnv"))(self.0, &mut env, JVMTI_VERSION_11) };
        if status == jni::sys::JNI_OK && !env.is_null() {
            Ok(Jvmti(env.cast()))
        } else {
            Err(status)
        }
    }

    /// The calling thread's JNI environment, if it is attached.
    pub fn jni(self) -> Option<Jni> {
        let mut env: *mut c_void = ptr::null_mut();
        // SAFETY: GetEnv writes the calling thread's JNIEnv, if attached.
        let status = unsafe {
            ((**self.0).GetEnv.expect("GetEnv"))(self.0, &mut env, jni::sys::JNI_VERSION_1_8)
        };
        (status == jni::sys::JNI_OK && !env.is_null()).then(|| Jni(env.cast()))
    }

    /// Attaches the calling (non-Java) thread as a daemon named `name`.
    pub fn attach_daemon(self, name: &CStr) -> Option<Jni> {
        let mut env: *mut c_void = ptr::null_mut();
        let mut args = jni::sys::JavaVMAttachArgs {
            version: jni::sys::JNI_VERSION_1_8,
            name: name.as_ptr() as *mut c_char,
            group: ptr::null_mut(),
        };
        // SAFETY: the VM is live (the agent attaches after VMInit); `args`
        // outlives the call and `env` receives the thread's JNIEnv.
        let status = unsafe {
            ((**self.0)
                .AttachCurrentThreadAsDaemon
                .expect("AttachCurrentThreadAsDaemon"))(
                self.0,
                &mut env,
                (&mut args as *mut jni::sys::JavaVMAttachArgs).cast(),
            )
        };
        (status == jni::sys::JNI_OK && !env.is_null()).then(|| Jni(env.cast()))
    }

    /// Detaches the calling thread.
    pub fn detach(self) {
        // SAFETY: called by a thread that `attach_daemon` attached.
        unsafe { ((**self.0).DetachCurrentThread.expect("DetachCurrentThread"))(self.0) };
    }
}

impl Jvmti {
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

/// The JNI version of JDK 19, the first with virtual threads (a preview
/// then) and `IsVirtualThread`.
pub const JNI_VERSION_19: jint = 0x0013_0000;

/// A thread's JNI environment: valid on that thread only, so not `Send`.
#[derive(Debug, Clone, Copy)]
pub struct Jni(*mut JNIEnv);

impl Jni {
    /// Wraps the environment a callback receives.
    pub fn from_raw(env: *mut JNIEnv) -> Self {
        Self(env)
    }

    /// The environment, for the calls `super::management` makes.
    pub fn raw(self) -> *mut JNIEnv {
        self.0
    }

    fn table(&self) -> &jni::sys::JNINativeInterface_ {
        // SAFETY: a valid JNIEnv points at its function table.
        unsafe { &**self.0 }
    }

    /// The JNI version the JVM implements (`0x0015_0000` for JNI 21).
    pub fn version(self) -> jint {
        // SAFETY: GetVersion takes only the environment.
        unsafe { (self.table().GetVersion.expect("GetVersion"))(self.0) }
    }

    /// Whether `thread` is a virtual thread. Only on a JVM whose
    /// [`version`](Self::version) is at least [`JNI_VERSION_19`]: older
    /// tables end before the function.
    pub fn is_virtual_thread(self, thread: jobject) -> bool {
        type IsVirtualThread = unsafe extern "system" fn(*mut JNIEnv, jobject) -> jboolean;
        let table = self.table();
        // `IsVirtualThread` (JNI 19) follows `GetModule` (JNI 9), the last
        // function the `jni` crate's table knows, as in `jni.h`.
        let get_module: *const Option<IsVirtualThread> =
            std::ptr::from_ref(&table.GetModule).cast();
        // SAFETY: on a JNI 19 or later table (the caller checks the
        // version) the next slot is `IsVirtualThread`, same size and
        // nullable function pointer as every slot; `thread` is a live
        // reference on this thread.
        unsafe {
            let is_virtual = (*get_module.add(1)).expect("IsVirtualThread");
            is_virtual(self.0, thread) != 0
        }
    }

    /// A weak global reference: does not keep the object alive.
    pub fn new_weak_global_ref(self, object: jobject) -> jobject {
        // SAFETY: `object` is a live reference on this thread.
        unsafe { (self.table().NewWeakGlobalRef.expect("NewWeakGlobalRef"))(self.0, object) }
    }

    /// Deletes a weak global reference.
    pub fn delete_weak_global_ref(self, object: jobject) {
        if !object.is_null() {
            // SAFETY: `object` is a weak global reference not yet deleted.
            unsafe {
                (self
                    .table()
                    .DeleteWeakGlobalRef
                    .expect("DeleteWeakGlobalRef"))(self.0, object)
            }
        }
    }

    /// A local reference to what a (weak) reference points at; null if the
    /// object was collected.
    pub fn new_local_ref(self, object: jobject) -> jobject {
        // SAFETY: `object` is a live or weak reference.
        unsafe { (self.table().NewLocalRef.expect("NewLocalRef"))(self.0, object) }
    }

    /// Deletes a local reference.
    pub fn delete_local_ref(self, object: jobject) {
        if !object.is_null() {
            // SAFETY: `object` is a local reference of this thread.
            unsafe { (self.table().DeleteLocalRef.expect("DeleteLocalRef"))(self.0, object) }
        }
    }

    /// The length of the array a weak reference points at; `None` if it
    /// was collected. The caller knows the object is an array.
    pub fn array_length(self, weak: jobject) -> Option<i32> {
        let local = self.new_local_ref(weak);
        if local.is_null() {
            return None;
        }
        // SAFETY: `local` is a live local reference to an array (the
        // caller's class signature says so).
        let length =
            unsafe { (self.table().GetArrayLength.expect("GetArrayLength"))(self.0, local) };
        self.delete_local_ref(local);
        Some(length)
    }

    /// A class's superclass: a local reference, null for `java.lang.Object`,
    /// an interface or a primitive type.
    pub fn superclass(self, class: jclass) -> jclass {
        // SAFETY: `class` is a live class reference.
        unsafe { (self.table().GetSuperclass.expect("GetSuperclass"))(self.0, class) }
    }

    /// Opens a frame of local references that [`Jni::pop_local_frame`]
    /// frees at once, with room for `capacity`; false if the JVM has no
    /// memory for it.
    pub fn push_local_frame(self, capacity: jint) -> bool {
        // SAFETY: a plain call; a failure leaves an OutOfMemoryError
        // pending, cleared here.
        unsafe {
            let table = self.table();
            if (table.PushLocalFrame.expect("PushLocalFrame"))(self.0, capacity) == 0 {
                return true;
            }
            (table.ExceptionClear.expect("ExceptionClear"))(self.0);
            false
        }
    }

    /// Closes the frame [`Jni::push_local_frame`] opened, deleting every
    /// local reference made since.
    pub fn pop_local_frame(self) {
        // SAFETY: called once per successful push_local_frame.
        unsafe { (self.table().PopLocalFrame.expect("PopLocalFrame"))(self.0, ptr::null_mut()) };
    }

    /// The class of a live object: a local reference.
    pub fn object_class(self, object: jobject) -> jclass {
        // SAFETY: `object` is a live, non-null reference.
        unsafe { (self.table().GetObjectClass.expect("GetObjectClass"))(self.0, object) }
    }

    /// `java.lang.ClassLoader`'s `name` field (JDK 9 and later): what
    /// `getName()` returns and HotSpot's recordings name a loader by
    /// (`app`, `platform`). `None` if the JVM has no such field. Valid for
    /// the JVM's life: the bootstrap loader's classes are never unloaded.
    pub fn class_loader_name_field(self) -> Option<jfieldID> {
        // SAFETY: standard JNI lookups with NUL-terminated names; a missing
        // class or field leaves an error pending, cleared.
        unsafe {
            let table = self.table();
            let class =
                (table.FindClass.expect("FindClass"))(self.0, c"java/lang/ClassLoader".as_ptr());
            if class.is_null() {
                (table.ExceptionClear.expect("ExceptionClear"))(self.0);
                return None;
            }
            let field = (table.GetFieldID.expect("GetFieldID"))(
                self.0,
                class,
                c"name".as_ptr(),
                c"Ljava/lang/String;".as_ptr(),
            );
            if (table.ExceptionCheck.expect("ExceptionCheck"))(self.0) != 0 {
                (table.ExceptionClear.expect("ExceptionClear"))(self.0);
            }
            (table.DeleteLocalRef.expect("DeleteLocalRef"))(self.0, class);
            (!field.is_null()).then_some(field)
        }
    }

    /// The text of a `String` field of `object` (no Java code runs);
    /// `None` if it is null.
    pub fn string_field(self, object: jobject, field: jfieldID) -> Option<String> {
        // SAFETY: `object` is a live reference of a class that has `field`,
        // a field of type String; its characters are copied out and
        // released, and the local reference deleted.
        unsafe {
            let table = self.table();
            let string = (table.GetObjectField.expect("GetObjectField"))(self.0, object, field);
            if string.is_null() {
                return None;
            }
            let chars = (table.GetStringUTFChars.expect("GetStringUTFChars"))(
                self.0,
                string,
                ptr::null_mut(),
            );
            let text = if chars.is_null() {
                // Out of memory, with an error pending.
                (table.ExceptionClear.expect("ExceptionClear"))(self.0);
                None
            } else {
                let text = CStr::from_ptr(chars).to_string_lossy().into_owned();
                (table.ReleaseStringUTFChars.expect("ReleaseStringUTFChars"))(
                    self.0, string, chars,
                );
                Some(text)
            };
            (table.DeleteLocalRef.expect("DeleteLocalRef"))(self.0, string);
            text
        }
    }

    /// Whether `class` is `superclass` or a subclass of it (or implements it).
    pub fn is_assignable_from(self, class: jclass, superclass: jclass) -> bool {
        // SAFETY: both are live class references.
        unsafe {
            (self.table().IsAssignableFrom.expect("IsAssignableFrom"))(self.0, class, superclass)
                != 0
        }
    }

    /// Whether two references are to the same object (null is the same as
    /// a cleared weak reference).
    pub fn is_same_object(self, a: jobject, b: jobject) -> bool {
        // SAFETY: both are live or weak references, or null.
        unsafe { (self.table().IsSameObject.expect("IsSameObject"))(self.0, a, b) != 0 }
    }

    /// Whether a weak reference's object was collected.
    pub fn is_cleared(self, weak: jobject) -> bool {
        self.is_same_object(weak, ptr::null_mut())
    }

    /// `thread.getId()`, or -1 if the call fails.
    pub fn thread_id(self, thread: jobject) -> i64 {
        // SAFETY: standard JNI lookups and a call of a public no-argument
        // method on a live Thread reference; a pending exception is cleared.
        unsafe {
            let table = self.table();
            let class = (table.FindClass.expect("FindClass"))(self.0, c"java/lang/Thread".as_ptr());
            if class.is_null() {
                (table.ExceptionClear.expect("ExceptionClear"))(self.0);
                return -1;
            }
            let method = (table.GetMethodID.expect("GetMethodID"))(
                self.0,
                class,
                c"getId".as_ptr(),
                c"()J".as_ptr(),
            );
            let id = if method.is_null() {
                -1
            } else {
                let args: [jvalue; 0] = [];
                (table.CallLongMethodA.expect("CallLongMethodA"))(
                    self.0,
                    thread,
                    method,
                    args.as_ptr(),
                )
            };
            if (table.ExceptionCheck.expect("ExceptionCheck"))(self.0) != 0 {
                (table.ExceptionClear.expect("ExceptionClear"))(self.0);
            }
            (table.DeleteLocalRef.expect("DeleteLocalRef"))(self.0, class);
            id
        }
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
