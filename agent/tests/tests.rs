//! The agent's integration tests, one binary (as ripgrep's are): one link
//! of the crate and its dependencies rather than one per file. Run one
//! file's with its module name as the filter, e.g.
//! `cargo test --release -p heapsampler-agent --test integration churn::`.
//!
//! - `callback`, `lifecycle`, `session`, `writer`: the allocation
//!   callback, the sessions' starts and stops, the session and the writer
//!   over fake VMs.
//! - `jvm`, `churn`, `watch`: the agent in real JVMs (`watch`: a late
//!   leak raised within a minute, under G1 and generational ZGC).

mod callback;
mod churn;
mod jvm;
mod lifecycle;
mod session;
mod watch;
mod writer;
