//! The agent's one JNI wrapper: the invocation interface ([`Vm`]) and a
//! thread's environment ([`Jni`]).
//!
//! Every function of the two tables the agent calls is declared once, in
//! `jni_functions!`, as a method named as in `jni.h` that panics naming
//! the function if the JVM left its slot null; the tests check each
//! declared slot against the JDK's `jni.h`. Above them, the safe calls:
//! one exception-clearing path ([`Jni::checked`], [`Jni::failed`]: a
//! pending exception is cleared and the answer is `None`, so a JVM without
//! a class or module the agent asks for gives no answer, never a crash),
//! and one frame of local references ([`LocalFrame`], and [`Jni::frame`]
//! over it).

#![allow(non_snake_case)]

use std::ffi::{CStr, c_char, c_void};
use std::ptr;

use jni::sys::{
    JNIEnv, JNIInvokeInterface_, JNINativeInterface_, JavaVM, JavaVMAttachArgs, jboolean, jclass,
    jfieldID, jint, jlong, jmethodID, jobject, jobjectArray, jsize, jstring, jvalue,
};

/// The JVM's invocation interface.
#[derive(Debug, Clone, Copy)]
pub struct Vm(*mut JavaVM);

// SAFETY: the JavaVM pointer is valid for the life of the JVM and its
// functions are callable from any thread.
unsafe impl Send for Vm {}
// SAFETY: as above.
unsafe impl Sync for Vm {}

/// A thread's JNI environment: valid on that thread only, so not `Send`.
#[derive(Debug, Clone, Copy)]
pub struct Jni(*mut JNIEnv);

/// Declares, for `$wrapper` (a pointer to a pointer to `$table`), a method
/// for each function of the table the agent calls, named as the table's
/// field (as in `jni.h`) with its C signature after the environment. The
/// `jni` crate's table gives each slot its type, so a signature that is
/// not the header's does not compile.
macro_rules! jni_functions {
    ($(
        $wrapper:ident: $table:ident {
            $( $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty; )*
        }
    )*) => {
        $(
            impl $wrapper {
                $(
                    #[doc = concat!("JNI `", stringify!($name), "`.")]
                    ///
                    /// # Safety
                    /// Called on a thread this environment is valid for, with
                    /// the arguments JNI asks for.
                    #[inline]
                    unsafe fn $name(self, $($arg: $ty),*) -> $ret {
                        // SAFETY: a valid environment points at its table.
                        let table: &$table = unsafe { &**self.0 };
                        let function = table.$name.unwrap_or_else(|| {
                            panic!(concat!("JNI has no ", stringify!($name)))
                        });
                        // SAFETY: the table's slot holds this function
                        // (the tests check the slot against jni.h); the
                        // caller keeps its contract.
                        unsafe { function(self.0, $($arg),*) }
                    }
                )*
            }
        )*

        /// The functions above: table, name, byte offset in the table.
        #[cfg(test)]
        const FUNCTIONS: &[(&str, &str, usize)] = &[$($(
            (
                stringify!($table),
                stringify!($name),
                std::mem::offset_of!($table, $name),
            ),
        )*)*];
    };
}

jni_functions! {
    Vm: JNIInvokeInterface_ {
        DetachCurrentThread() -> jint;
        GetEnv(penv: *mut *mut c_void, version: jint) -> jint;
        AttachCurrentThreadAsDaemon(penv: *mut *mut c_void, args: *mut c_void) -> jint;
    }
    Jni: JNINativeInterface_ {
        GetVersion() -> jint;
        FindClass(name: *const c_char) -> jclass;
        GetSuperclass(sub: jclass) -> jclass;
        IsAssignableFrom(sub: jclass, sup: jclass) -> jboolean;
        ExceptionClear() -> ();
        PushLocalFrame(capacity: jint) -> jint;
        PopLocalFrame(result: jobject) -> jobject;
        NewGlobalRef(object: jobject) -> jobject;
        DeleteGlobalRef(global: jobject) -> ();
        DeleteLocalRef(local: jobject) -> ();
        IsSameObject(a: jobject, b: jobject) -> jboolean;
        NewLocalRef(object: jobject) -> jobject;
        NewObjectA(class: jclass, method: jmethodID, args: *const jvalue) -> jobject;
        GetObjectClass(object: jobject) -> jclass;
        IsInstanceOf(object: jobject, class: jclass) -> jboolean;
        GetMethodID(class: jclass, name: *const c_char, signature: *const c_char) -> jmethodID;
        CallObjectMethodA(object: jobject, method: jmethodID, args: *const jvalue) -> jobject;
        CallBooleanMethodA(object: jobject, method: jmethodID, args: *const jvalue) -> jboolean;
        CallIntMethodA(object: jobject, method: jmethodID, args: *const jvalue) -> jint;
        CallLongMethodA(object: jobject, method: jmethodID, args: *const jvalue) -> jlong;
        CallVoidMethodA(object: jobject, method: jmethodID, args: *const jvalue) -> ();
        GetFieldID(class: jclass, name: *const c_char, signature: *const c_char) -> jfieldID;
        GetObjectField(object: jobject, field: jfieldID) -> jobject;
        GetStaticMethodID(
            class: jclass,
            name: *const c_char,
            signature: *const c_char
        ) -> jmethodID;
        CallStaticObjectMethodA(class: jclass, method: jmethodID, args: *const jvalue) -> jobject;
        GetStaticFieldID(
            class: jclass,
            name: *const c_char,
            signature: *const c_char
        ) -> jfieldID;
        GetStaticObjectField(class: jclass, field: jfieldID) -> jobject;
        NewStringUTF(text: *const c_char) -> jstring;
        GetStringUTFChars(string: jstring, is_copy: *mut jboolean) -> *const c_char;
        ReleaseStringUTFChars(string: jstring, chars: *const c_char) -> ();
        GetArrayLength(array: jobject) -> jsize;
        NewObjectArray(length: jsize, class: jclass, element: jobject) -> jobjectArray;
        NewLongArray(length: jsize) -> jobject;
        GetLongArrayRegion(array: jobject, start: jsize, length: jsize, buffer: *mut jlong) -> ();
        SetLongArrayRegion(
            array: jobject,
            start: jsize,
            length: jsize,
            buffer: *const jlong
        ) -> ();
        NewWeakGlobalRef(object: jobject) -> jobject;
        DeleteWeakGlobalRef(weak: jobject) -> ();
        ExceptionCheck() -> jboolean;
    }
}

impl Vm {
    /// Wraps the pointer the JVM passes to `Agent_OnLoad`.
    pub fn new(vm: *mut JavaVM) -> Self {
        Self(vm)
    }

    /// The environment `GetEnv` gives for the interface `version` (the
    /// calling thread's JNI environment, if it is attached; a new JVMTI
    /// environment), or the status it returned instead.
    pub fn env(self, version: jint) -> Result<*mut c_void, jint> {
        let mut env: *mut c_void = ptr::null_mut();
        // SAFETY: `self.0` is the JavaVM the JVM handed us; GetEnv writes an
        // environment pointer into `env` and returns a status.
        let status = unsafe { self.GetEnv(&mut env, version) };
        if status == jni::sys::JNI_OK && !env.is_null() {
            Ok(env)
        } else {
            Err(status)
        }
    }

    /// The calling thread's JNI environment, if it is attached.
    pub fn jni(self) -> Option<Jni> {
        self.env(jni::sys::JNI_VERSION_1_8)
            .ok()
            .map(|env| Jni(env.cast()))
    }

    /// Attaches the calling (non-Java) thread as a daemon named `name`.
    pub fn attach_daemon(self, name: &CStr) -> Option<Jni> {
        let mut env: *mut c_void = ptr::null_mut();
        let mut args = JavaVMAttachArgs {
            version: jni::sys::JNI_VERSION_1_8,
            name: name.as_ptr() as *mut c_char,
            group: ptr::null_mut(),
        };
        // SAFETY: the VM is live (the agent attaches after VMInit); `args`
        // outlives the call and `env` receives the thread's JNIEnv.
        let status = unsafe {
            self.AttachCurrentThreadAsDaemon(&mut env, (&mut args as *mut JavaVMAttachArgs).cast())
        };
        (status == jni::sys::JNI_OK && !env.is_null()).then(|| Jni(env.cast()))
    }

    /// Detaches the calling thread.
    pub fn detach(self) {
        // SAFETY: called by a thread that `attach_daemon` attached.
        unsafe { self.DetachCurrentThread() };
    }
}

/// The JNI version of JDK 19, the first with virtual threads (a preview
/// then) and `IsVirtualThread`.
pub const JNI_VERSION_19: jint = 0x0013_0000;

/// A frame of local references, popped when dropped: every local
/// reference made meanwhile is freed at once.
pub struct LocalFrame(Jni);

impl LocalFrame {
    /// Pushes a frame with room for `capacity` references; `None` if the
    /// JVM has no memory for it (its `OutOfMemoryError` cleared).
    pub fn push(jni: Jni, capacity: jint) -> Option<Self> {
        // SAFETY: PushLocalFrame takes a capacity and fails (with an
        // OutOfMemoryError pending, cleared) or pushes a frame.
        if unsafe { jni.PushLocalFrame(capacity) } != 0 {
            jni.failed();
            return None;
        }
        Some(Self(jni))
    }
}

impl Drop for LocalFrame {
    fn drop(&mut self) {
        // SAFETY: pops the frame `push` pushed; no reference is kept.
        unsafe { self.0.PopLocalFrame(ptr::null_mut()) };
    }
}

impl Jni {
    /// Wraps the environment a callback receives.
    pub fn from_raw(env: *mut JNIEnv) -> Self {
        Self(env)
    }

    /// Clears a pending exception; whether there was one.
    pub fn failed(self) -> bool {
        // SAFETY: ExceptionCheck and ExceptionClear may be called with an
        // exception pending.
        unsafe {
            let pending = self.ExceptionCheck() != 0;
            if pending {
                self.ExceptionClear();
            }
            pending
        }
    }

    /// `value`, unless the call that gave it threw or gave null.
    pub fn checked<T>(self, value: *mut T) -> Option<*mut T> {
        (!self.failed() && !value.is_null()).then_some(value)
    }

    /// Runs `body` in a [`LocalFrame`] of `capacity` references, which is
    /// popped after it, freeing every local reference made in it.
    pub fn frame<T>(self, capacity: jint, body: impl FnOnce() -> Option<T>) -> Option<T> {
        let _frame = LocalFrame::push(self, capacity)?;
        body()
    }

    /// The JNI version the JVM implements (`0x0015_0000` for JNI 21).
    pub fn version(self) -> jint {
        // SAFETY: GetVersion takes only the environment.
        unsafe { self.GetVersion() }
    }

    /// Whether `thread` is a virtual thread. Only on a JVM whose
    /// [`version`](Self::version) is at least [`JNI_VERSION_19`]: older
    /// tables end before the function.
    pub fn is_virtual_thread(self, thread: jobject) -> bool {
        type IsVirtualThread = unsafe extern "system" fn(*mut JNIEnv, jobject) -> jboolean;
        // SAFETY: a valid JNIEnv points at its function table.
        let table: &JNINativeInterface_ = unsafe { &**self.0 };
        // `IsVirtualThread` (JNI 19) follows `GetModule` (JNI 9), the last
        // function the `jni` crate's table knows, as in `jni.h`.
        let get_module: *const Option<IsVirtualThread> =
            std::ptr::from_ref(&table.GetModule).cast();
        // SAFETY: on a JNI 19 or later table (the caller checks the
        // version) the next slot is `IsVirtualThread`, same size and
        // nullable function pointer as every slot; `thread` is a live
        // reference on this thread.
        unsafe {
            let is_virtual =
                (*get_module.add(1)).unwrap_or_else(|| panic!("JNI has no IsVirtualThread"));
            is_virtual(self.0, thread) != 0
        }
    }

    /// A weak global reference: does not keep the object alive.
    pub fn new_weak_global_ref(self, object: jobject) -> jobject {
        // SAFETY: `object` is a live reference on this thread.
        unsafe { self.NewWeakGlobalRef(object) }
    }

    /// Deletes a weak global reference.
    pub fn delete_weak_global_ref(self, object: jobject) {
        if !object.is_null() {
            // SAFETY: `object` is a weak global reference not yet deleted.
            unsafe { self.DeleteWeakGlobalRef(object) }
        }
    }

    /// A local reference to what a (weak) reference points at; null if the
    /// object was collected.
    pub fn new_local_ref(self, object: jobject) -> jobject {
        // SAFETY: `object` is a live or weak reference.
        unsafe { self.NewLocalRef(object) }
    }

    /// Deletes a local reference.
    pub fn delete_local_ref(self, object: jobject) {
        if !object.is_null() {
            // SAFETY: `object` is a local reference of this thread.
            unsafe { self.DeleteLocalRef(object) }
        }
    }

    /// A global reference to what `object` refers to.
    pub fn global(self, object: jobject) -> Option<jobject> {
        // SAFETY: `object` is a live reference.
        let global = unsafe { self.NewGlobalRef(object) };
        self.checked(global)
    }

    /// Deletes a global reference.
    pub fn delete_global(self, global: jobject) {
        // SAFETY: `global` is a global reference not deleted yet.
        unsafe { self.DeleteGlobalRef(global) };
    }

    /// Whether two references are to the same object (null is the same as
    /// a cleared weak reference).
    pub fn is_same_object(self, a: jobject, b: jobject) -> bool {
        // SAFETY: both are live or weak references, or null.
        unsafe { self.IsSameObject(a, b) != 0 }
    }

    /// Whether a weak reference's object was collected.
    pub fn is_cleared(self, weak: jobject) -> bool {
        self.is_same_object(weak, ptr::null_mut())
    }

    /// Whether `object` is an instance of `class`.
    pub fn is_instance(self, object: jobject, class: jclass) -> bool {
        // SAFETY: `object` and `class` are live references.
        unsafe { self.IsInstanceOf(object, class) != 0 }
    }

    /// A class by its internal name: a local reference.
    pub fn class(self, name: &CStr) -> Option<jclass> {
        // SAFETY: FindClass takes a NUL-terminated name; a missing class
        // leaves NoClassDefFoundError pending, cleared by `checked`.
        let class = unsafe { self.FindClass(name.as_ptr()) };
        self.checked(class)
    }

    /// The class of `object`: a local reference.
    pub fn class_of(self, object: jobject) -> Option<jclass> {
        // SAFETY: `object` is a live, non-null reference.
        let class = unsafe { self.GetObjectClass(object) };
        self.checked(class)
    }

    /// A class's superclass: a local reference, null for `java.lang.Object`,
    /// an interface or a primitive type.
    pub fn superclass(self, class: jclass) -> jclass {
        // SAFETY: `class` is a live class reference.
        unsafe { self.GetSuperclass(class) }
    }

    /// Whether `class` is `superclass` or a subclass of it (or implements it).
    pub fn is_assignable_from(self, class: jclass, superclass: jclass) -> bool {
        // SAFETY: both are live class references.
        unsafe { self.IsAssignableFrom(class, superclass) != 0 }
    }

    /// An object method of `class`.
    pub fn method(self, class: jclass, name: &CStr, signature: &CStr) -> Option<jmethodID> {
        // SAFETY: `class` is a live class reference; the strings are
        // NUL-terminated; a missing method leaves NoSuchMethodError pending.
        let method = unsafe { self.GetMethodID(class, name.as_ptr(), signature.as_ptr()) };
        self.checked(method)
    }

    /// A static method of `class`.
    pub fn static_method(self, class: jclass, name: &CStr, signature: &CStr) -> Option<jmethodID> {
        // SAFETY: as for `method`, for a static method.
        let method = unsafe { self.GetStaticMethodID(class, name.as_ptr(), signature.as_ptr()) };
        self.checked(method)
    }

    /// An object field of `class`.
    pub fn field(self, class: jclass, name: &CStr, signature: &CStr) -> Option<jfieldID> {
        // SAFETY: `class` is a live class reference; the strings are
        // NUL-terminated; a missing field leaves NoSuchFieldError pending.
        let field = unsafe { self.GetFieldID(class, name.as_ptr(), signature.as_ptr()) };
        self.checked(field)
    }

    /// A static object field's value: a local reference.
    pub fn static_field(self, class: jclass, name: &CStr, signature: &CStr) -> Option<jobject> {
        // SAFETY: `class` is a live class reference; the strings are
        // NUL-terminated.
        let field = unsafe { self.GetStaticFieldID(class, name.as_ptr(), signature.as_ptr()) };
        let field = self.checked(field)?;
        // SAFETY: `field` is a static field of `class`, read with the type
        // its signature names (an object).
        let value = unsafe { self.GetStaticObjectField(class, field) };
        self.checked(value)
    }

    /// An object field's value: a local reference, `None` if null.
    pub fn object_field(self, object: jobject, field: jfieldID) -> Option<jobject> {
        // SAFETY: `object` is a live reference of a class that has `field`,
        // a field of an object type.
        let value = unsafe { self.GetObjectField(object, field) };
        self.checked(value)
    }

    /// Calls an object method of `object` returning an object: a local
    /// reference, `None` if it threw or returned null.
    pub fn object(self, object: jobject, method: jmethodID, args: &[jvalue]) -> Option<jobject> {
        // SAFETY: `object` is a live reference of a class that has
        // `method`, and `args` match the method's signature (each caller
        // passes the arguments its signature names).
        let value = unsafe { self.CallObjectMethodA(object, method, args.as_ptr()) };
        self.checked(value)
    }

    /// Calls a static method of `class` returning an object: `None` if it
    /// threw or returned null.
    pub fn static_object(
        self,
        class: jclass,
        method: jmethodID,
        args: &[jvalue],
    ) -> Option<jobject> {
        self.static_object_or_null(class, method, args)
            .and_then(|value| self.checked(value))
    }

    /// As [`static_object`](Self::static_object), for a method that may
    /// return null: `None` only if it threw.
    pub fn static_object_or_null(
        self,
        class: jclass,
        method: jmethodID,
        args: &[jvalue],
    ) -> Option<jobject> {
        // SAFETY: `method` is a static method of `class`, and `args`
        // match its signature.
        let value = unsafe { self.CallStaticObjectMethodA(class, method, args.as_ptr()) };
        (!self.failed()).then_some(value)
    }

    /// A new object of `class` made by its constructor `init` with `args`
    /// (which match its signature): a local reference.
    pub fn new_object(self, class: jclass, init: jmethodID, args: &[jvalue]) -> Option<jobject> {
        // SAFETY: `init` is a constructor of `class`, a live, concrete
        // class reference, and `args` match its signature.
        let object = unsafe { self.NewObjectA(class, init, args.as_ptr()) };
        self.checked(object)
    }

    /// Calls a method of `object` returning nothing; `None` if it threw.
    pub fn void(self, object: jobject, method: jmethodID, args: &[jvalue]) -> Option<()> {
        // SAFETY: `object` is a live reference of a class that has
        // `method`, and `args` match the method's signature.
        unsafe { self.CallVoidMethodA(object, method, args.as_ptr()) };
        (!self.failed()).then_some(())
    }

    /// Calls a method of `object` returning a `boolean` with `args` (which
    /// match its signature).
    pub fn boolean(self, object: jobject, method: jmethodID, args: &[jvalue]) -> Option<bool> {
        // SAFETY: `object` is a live reference of a class that has
        // `method`, a method returning boolean, and `args` match its
        // signature.
        let value = unsafe { self.CallBooleanMethodA(object, method, args.as_ptr()) };
        (!self.failed()).then_some(value != 0)
    }

    /// Calls a no-argument method of `object` returning an `int`.
    pub fn int(self, object: jobject, method: jmethodID) -> Option<i32> {
        let args: [jvalue; 0] = [];
        // SAFETY: `object` is a live reference of a class that has
        // `method`, a no-argument method returning int.
        let value = unsafe { self.CallIntMethodA(object, method, args.as_ptr()) };
        (!self.failed()).then_some(value)
    }

    /// Calls a no-argument method of `object` returning a `long`.
    pub fn long(self, object: jobject, method: jmethodID) -> Option<i64> {
        let args: [jvalue; 0] = [];
        // SAFETY: as for `int`, for a method returning long.
        let value = unsafe { self.CallLongMethodA(object, method, args.as_ptr()) };
        (!self.failed()).then_some(value)
    }

    /// A new array of `length` elements of `class`, each `element`: a
    /// local reference.
    pub fn array_of(self, length: jint, class: jclass, element: jobject) -> Option<jobject> {
        // SAFETY: `class` and `element` are live references, `element` an
        // instance of `class` (or null).
        let array = unsafe { self.NewObjectArray(length, class, element) };
        self.checked(array)
    }

    /// The length of an array.
    pub fn length(self, array: jobject) -> Option<jint> {
        // SAFETY: `array` is a live array reference.
        let length = unsafe { self.GetArrayLength(array) };
        (!self.failed()).then_some(length)
    }

    /// The length of the array a weak reference points at; `None` if it
    /// was collected. The caller knows the object is an array.
    pub fn array_length(self, weak: jobject) -> Option<i32> {
        let local = self.new_local_ref(weak);
        if local.is_null() {
            return None;
        }
        let length = self.length(local);
        self.delete_local_ref(local);
        length
    }

    /// A new `long[]` holding `values`: a local reference.
    pub fn long_array(self, values: &[i64]) -> Option<jobject> {
        let length = jint::try_from(values.len()).ok()?;
        // SAFETY: NewLongArray makes an array of `length` longs (or fails
        // with an OutOfMemoryError pending, cleared by `checked`).
        let array = self.checked(unsafe { self.NewLongArray(length) })?;
        // SAFETY: copies `length` longs into the array from `values`.
        unsafe { self.SetLongArrayRegion(array, 0, length, values.as_ptr()) };
        (!self.failed()).then_some(array)
    }

    /// The elements of a `long[]`.
    pub fn longs(self, array: jobject) -> Option<Vec<i64>> {
        let length = self.length(array)?.max(0);
        let mut values = vec![0i64; length as usize];
        // SAFETY: `array` is a live long[] reference of `length` elements,
        // copied into a buffer of that length.
        unsafe { self.GetLongArrayRegion(array, 0, length, values.as_mut_ptr()) };
        (!self.failed()).then_some(values)
    }

    /// A Java string's text.
    pub fn text(self, string: jobject) -> Option<String> {
        // SAFETY: `string` is a live java.lang.String reference; the
        // characters are copied out and released.
        unsafe {
            let chars = self.GetStringUTFChars(string, ptr::null_mut());
            if chars.is_null() {
                // Out of memory, with an error pending.
                self.failed();
                return None;
            }
            let text = CStr::from_ptr(chars).to_string_lossy().into_owned();
            self.ReleaseStringUTFChars(string, chars);
            Some(text)
        }
    }

    /// A new Java string: a local reference.
    pub fn string(self, text: &CStr) -> Option<jobject> {
        // SAFETY: NewStringUTF copies a NUL-terminated string.
        let string = unsafe { self.NewStringUTF(text.as_ptr()) };
        self.checked(string)
    }

    /// The text of a `String` field of `object` (no Java code runs);
    /// `None` if it is null.
    pub fn string_field(self, object: jobject, field: jfieldID) -> Option<String> {
        let string = self.object_field(object, field)?;
        let text = self.text(string);
        self.delete_local_ref(string);
        text
    }

    /// `java.lang.ClassLoader`'s `name` field (JDK 9 and later): what
    /// `getName()` returns and HotSpot's recordings name a loader by
    /// (`app`, `platform`). `None` if the JVM has no such field. Valid for
    /// the JVM's life: the bootstrap loader's classes are never unloaded.
    pub fn class_loader_name_field(self) -> Option<jfieldID> {
        let class = self.class(c"java/lang/ClassLoader")?;
        let field = self.field(class, c"name", c"Ljava/lang/String;");
        self.delete_local_ref(class);
        field
    }

    /// `thread.getId()`, or -1 if the call fails.
    pub fn thread_id(self, thread: jobject) -> i64 {
        let Some(class) = self.class(c"java/lang/Thread") else {
            return -1;
        };
        let id = self
            .method(class, c"getId", c"()J")
            .and_then(|method| self.long(thread, method))
            .unwrap_or(-1);
        self.delete_local_ref(class);
        id
    }
}

#[cfg(test)]
mod tests {
    //! Every function declared above against the JDK's own `jni.h`, read
    //! from the JDK on `PATH`: its slot in the `jni` crate's table is its
    //! place among the header's table's members.

    use super::FUNCTIONS;
    use std::path::PathBuf;

    use heapsampler_test_support as support;

    /// The members of `struct NAME {...}` in `jni.h`, in order: `reserved0`,
    /// ..., `GetVersion`, ...
    fn members(header: &str, name: &str) -> Vec<String> {
        let start = header
            .find(&format!("struct {name} {{"))
            .unwrap_or_else(|| panic!("no struct {name}"));
        let body = &header[start..];
        let body = &body[body.find('{').expect("the struct's start") + 1..];
        let body = &body[..body.find("};").expect("the struct's end")];
        body.split(';')
            .filter_map(|member| {
                let member = member.trim();
                match member.split_once("JNICALL *") {
                    Some((_, rest)) => rest.split(')').next(),
                    None => member.strip_prefix("void *"),
                }
            })
            .map(|name| name.trim().to_owned())
            .collect()
    }

    #[test]
    fn functions_are_in_the_headers_slots() {
        let java = support::on_path("java").expect("a JDK on PATH");
        let java = std::fs::canonicalize(&java).unwrap_or(java);
        let home: PathBuf = java.ancestors().nth(2).expect("JDK/bin/java").into();
        let path = home.join("include/jni.h");
        let header = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {} ({e})", path.display()));
        let pointer = size_of::<*const ()>();
        for &(table, name, offset) in FUNCTIONS {
            let members = members(&header, table);
            assert!(members.len() > 200 || table != "JNINativeInterface_");
            let slot = members.iter().position(|member| member == name);
            assert_eq!(slot, Some(offset / pointer), "{table}.{name}");
        }
    }
}
