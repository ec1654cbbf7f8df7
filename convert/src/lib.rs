//! The JFR reader behind the `heapsampler` command line.
//!
//! Being built: [`read`] has the bounds-checked cursor, chunk headers and
//! the metadata; constant pools, events and the commands come next.

pub mod read;
