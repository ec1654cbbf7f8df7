//! The outputs: what events and figures are written as. Each writes into
//! a writer it is given, or one made when asked ([`Outputs`]); the paths
//! are the command line's.

pub mod convert;
pub mod csv;
pub mod flame;
pub mod human;
pub mod otlp;
pub mod parquet;
pub mod pprof;
pub mod report;
pub mod text;

use std::io::Write;

use crate::error::CsvError;

/// Where a conversion writes: each output made when the conversion is
/// ready to write into it, so that a conversion that fails first, or finds
/// nothing to write, leaves nothing behind. CSV asks for one per event
/// type with rows, by the type's name; the other formats for their one
/// output, by [`Format::name`](convert::Format::name): Parquet before its
/// first row, the others once the recording is read.
pub trait Outputs: Send {
    /// The output named `name`.
    fn create(&mut self, name: &str) -> Result<Box<dyn Write + Send>, CsvError>;
}
