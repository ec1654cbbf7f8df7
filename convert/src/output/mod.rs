//! The outputs: what the events and analyses are written as.

pub mod csv;
pub mod flame;
pub mod human;
pub mod pprof;
