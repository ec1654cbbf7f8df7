//! The JFR reader behind the `heapsampler` command line.
//!
//! - [`read`]: recordings read chunk by chunk, by their own metadata.
//! - [`summary`]: `heapsampler summary`.
//!
//! CSV conversion and the other commands come next.

pub mod read;
pub mod summary;
