//! `libheapsampler.so`, the JVMTI agent that turns the JVM's sampled
//! allocations (JEP 331) into a JFR recording.
//!
//! Being built: the options are parsed and checked; the JVMTI entry points
//! come next. Until they exist the library exports no `Agent_OnLoad`, so a
//! JVM given `-agentpath:` to it refuses to start with "Could not find
//! Agent_OnLoad function" rather than running without recording anything.

pub mod options;
pub mod record;
pub mod writer;
