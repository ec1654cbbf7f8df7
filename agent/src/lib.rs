//! `libheapsampler.so`, the JVMTI agent that turns the JVM's sampled
//! allocations (JEP 331) into a JFR recording.
//!
//! ```text
//! java -agentpath:/path/libheapsampler.so=file=alloc.jfr,interval=512k -jar app.jar
//! ```
//!
//! - [`record`]: what the allocation callback hands the writer thread.
//! - [`writer`]: the writer thread's work, behind a small [`writer::Vm`] trait.
//! - `ffi`: everything that touches the JVM (and every `unsafe` block).

mod ffi;
pub mod record;
pub mod writer;
