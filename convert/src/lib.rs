//! The JFR reader behind the `heapsampler` command line.
//!
//! Being built: [`read`] reads chunks (metadata, constant pools, events);
//! whole files, CSV and the commands come next.

pub mod read;
