//! The JFR reader behind the `heapsampler` command line.
//!
//! Not written yet: the converter issue fills this crate with a streaming,
//! metadata-driven reader of any JFR recording.
