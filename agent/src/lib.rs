//! `libheapsampler.so`, the JVMTI agent that turns the JVM's sampled
//! allocations (JEP 331) into a JFR recording.
//!
//! Not written yet: the agent issue fills this crate. Until then the library
//! exports no `Agent_OnLoad`, so a JVM given `-agentpath:` to it refuses to
//! start with "Could not find Agent_OnLoad function" rather than running
//! without recording anything.
