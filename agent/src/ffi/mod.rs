//! The agent's only contact with the JVM, and every `unsafe` block of the
//! agent: raw JVMTI declarations (`sys`), the safe wrappers over the JVMTI
//! and JNI function tables (`jvm`, `jni`), the exported entry points and
//! event callbacks (`agent`), which convert what the JVM hands them and
//! forward it into [`crate::callback`], [`crate::lifecycle`] and the
//! running [`crate::session`], holding none of their logic, the sessions'
//! state that they and the writer thread share (`sessions`: the lifecycle,
//! each thread's cache, the JVMTI environment), the writer thread
//! (`writer_thread`), the management interface (`management`) and the heap
//! walk (`heap_walk`): the JVMTI and JNI implementations of the safe
//! modules' VM traits. They import one another one way: `agent` uses
//! `writer_thread`, and both use `sessions`.

pub mod agent;
pub(crate) mod alloc;
pub mod heap_walk;
pub mod jni;
pub mod jvm;
pub mod management;
mod sessions;
pub mod sys;
mod writer_thread;
