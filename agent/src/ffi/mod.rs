//! The agent's only contact with the JVM: raw JVMTI declarations, safe
//! wrappers over the JVMTI and JNI function tables, and the exported entry
//! points and event callbacks, which forward what the JVM reports into the
//! running [`crate::session`] and hold nothing of its logic. Every `unsafe`
//! block of the agent lives here.

pub mod agent;
pub(crate) mod alloc;
pub mod heap_walk;
pub mod jvm;
pub mod management;
pub mod sys;
