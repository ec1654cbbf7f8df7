//! The sampling core of heapsampler: everything about heap sampling that can be
//! reasoned about and tested without a JVM.
//!
//! - [`sampling`]: the unbiased weight of a sample of the JVM's Poisson byte
//!   sampler and, with the `simulation` feature, a model of that sampler
//!   (exponential distances between samples).
//! - [`estimate`]: the estimated bytes and objects of a group of samples, the
//!   unbiased estimates of their variances and their 95% intervals.
//! - [`growth`]: a group's estimated live bytes after each collection, kept as a
//!   difference array, and the test of whether they grow (leak suspects).
//! - [`watch`]: every site's live bytes after each collection, kept in
//!   bounded memory while the program runs, and tested again and again for
//!   growth: the leak suspects of an agent left on for days.
//! - [`rate_limit`]: an adaptive sampling interval that bounds samples per second.
//! - [`ring`]: a bounded multi-producer, single-consumer ring buffer of
//!   variable-size records in which a full buffer makes producers wait: it never
//!   drops a record.
//! - [`options`]: the agent's option string (`interval=512k,live=true,...`),
//!   parsed and checked without a JVM, so that the command line checks it too.
//! - [`liveness`]: the table of sampled objects still tracked, swept after each
//!   garbage collection to learn which of them died.
//! - [`tracking`]: which samples' liveness is tracked: a share aimed at a
//!   number a second, and a cap on those tracked since a major collection.
//! - [`announcement`]: the system properties by which the agent that records
//!   in a JVM says so, for the command line to find it.
//!
//! The agent (`heapsampler-agent`) connects these to JVMTI; any Rust program can
//! use them to sample its own allocations.

pub mod announcement;
pub mod estimate;
pub mod growth;
pub mod liveness;
pub mod options;
pub mod rate_limit;
pub mod ring;
pub mod sampling;
pub mod tracking;
pub mod watch;
