//! What the benchmarks of jfr-writer and of the agent share.

use std::io::{self, Seek, SeekFrom, Write};

/// Accepts and forgets every byte: a benchmark measures encoding, not
/// disks.
pub struct Discard(pub u64);

impl Write for Discard {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0 += bytes.len() as u64;
        Ok(bytes.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for Discard {
    fn seek(&mut self, position: SeekFrom) -> io::Result<u64> {
        Ok(match position {
            SeekFrom::Start(at) => at,
            _ => self.0,
        })
    }
}
