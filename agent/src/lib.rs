//! `libheapsampler.so`, the JVMTI agent that turns the JVM's sampled
//! allocations (JEP 331) into a JFR recording.
//!
//! ```text
//! java -agentpath:/path/libheapsampler.so=file=alloc.jfr,interval=512k -jar app.jar
//! ```
//!
//! - [`callback`]: the allocation callback's logic over a
//!   [`callback::CallbackVm`]: the record a sample makes, the keys of its
//!   thread and class, and the class references retired by epoch
//!   ([`callback::Keys`], shared with the writer thread).
//! - `site_classes`: the allocation callback's per-thread guess of an
//!   allocation site's class, which saves a JVMTI call a sample.
//! - [`record`]: what the allocation callback hands the writer thread.
//! - [`tracking`]: which samples' liveness a session tracks: the collector
//!   and its mode, read at the session's start ([`tracking::StartVm`]).
//! - [`session`]: one recording session in safe code: what the callbacks and
//!   the writer thread share (counters, the interval in force, the session's
//!   own collections) and the writer thread's loop (ring draining, rate
//!   limit, flushes, collections, the end), over a [`session::SessionVm`].
//! - [`lifecycle`]: when sessions start and stop, in safe code: which one
//!   runs, what an attach asks for (start, stop, `dump=`, or why none),
//!   and the one stop path, over a [`lifecycle::LifecycleVm`].
//! - [`writer`]: turning one record or one collection into events, behind
//!   the [`writer::Vm`] trait; `fingerprints`, its map from a stack's
//!   fingerprint to the stack it pooled.
//! - [`environment`]: what the JVM runs on (processors, memory, flags,
//!   system properties, environment) from `/proc`, the process and the JVM
//!   ([`environment::EnvironmentVm`]), and why it shut down.
//! - [`heap`]: the heap's context (GC, heap summary, JVM and class loading
//!   events) from the JVM's management interface ([`heap::HeapVm`]).
//! - [`threads`]: the bytes each thread allocated, as the JVM counts them
//!   ([`threads::ThreadsVm`]), in `jdk.ThreadAllocationStatistics`.
//! - [`roots`]: paths from GC roots to live sampled objects (`roots=true`),
//!   from the heap walk a [`roots::RootsVm`] makes.
//! - `signature`: class signatures and the names made of them.
//! - `ffi`: everything that touches the JVM (and every `unsafe` block): the
//!   entry points and JVMTI callbacks, which convert what the JVM hands them
//!   and forward it to the modules above, the sessions' state they share
//!   with the writer thread, the JVMTI and JNI implementations of their VM
//!   traits, and the one wrapper of each function table.
//! - [`Allocator`]: the allocator libheapsampler.so installs (from `ffi`).
//!
//! The modules in brackets are public: they are the agent's safe core,
//! which the fake-VM tests (`tests/`, one integration binary) and the
//! writer's benchmark (`benches/writer.rs`) drive through its VM traits, as
//! `ffi` drives it in a JVM. The others (and `ffi`) are private: nothing
//! outside the crate needs them.
//!
//! Everything outside `ffi` knows the JVM only through those traits, so it
//! is tested with a fake VM (`tests/callback.rs`, `tests/lifecycle.rs`,
//! `tests/session.rs`, `tests/writer.rs`). The modules import one another
//! one way: `writer` uses `heap`, `environment`, `threads`, `roots`,
//! `record`, `fingerprints` and `signature`; `session` uses `writer` and
//! `tracking`; `callback` and `lifecycle` use `session` (and `lifecycle`
//! `tracking`); none uses `ffi`.

mod ffi;

pub use ffi::alloc::Allocator;
pub mod callback;
pub mod environment;
mod fingerprints;
pub mod heap;
pub mod lifecycle;
pub mod record;
pub mod roots;
pub mod session;
mod signature;
mod site_classes;
pub mod threads;
pub mod tracking;
pub mod writer;
