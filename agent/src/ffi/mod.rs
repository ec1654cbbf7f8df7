//! The agent's only contact with the JVM: raw JVMTI declarations, the
//! safe wrappers over the JVMTI and JNI function tables (`jvm`, `jni`), and the exported entry
//! points and event callbacks, which convert what the JVM hands them and
//! forward it into [`crate::callback`] and the running [`crate::session`],
//! holding nothing of their logic: only the locks that order callbacks and
//! sessions, and the JVMTI and JNI implementations of the VM traits. Every
//! `unsafe` block of the agent lives here.

pub mod agent;
pub(crate) mod alloc;
pub mod heap_walk;
pub mod jni;
pub mod jvm;
pub mod management;
pub mod sys;
