//! The outputs: what events and figures are written as. Each writes into
//! a writer it is given; the paths are the command line's.

pub mod convert;
pub mod csv;
pub mod flame;
pub mod human;
pub mod otlp;
pub mod parquet;
pub mod pprof;
pub mod report;
pub mod text;
