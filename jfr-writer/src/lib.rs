//! A JFR (JDK Flight Recorder) binary encoder that any Rust program can use to
//! write recordings that JDK Mission Control and the JDK's `jfr` tool read.
//!
//! Not written yet: this crate is filled by the jfr-writer issue (chunks,
//! metadata, constant pools, events; see `shared/JFR-FORMAT.md`). It exposes
//! nothing until then, so nothing can depend on a writer that does not exist.
