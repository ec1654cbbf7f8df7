//! Fuzzes the JFR reader: any bytes, read whole the way `heapsampler
//! summary` reads a file (container detection, every chunk, every event,
//! every value resolved through the pools), must give a result or an error,
//! never a panic, a hang or an allocation sized by a corrupt length; and an
//! error in a plain (uncompressed) input names an offset inside it.

#![no_main]

use jfr_reader::ReadError;
use jfr_reader::file::FileError;
use libfuzzer_sys::fuzz_target;

#[path = "../../reader/tests/read_all/mod.rs"]
mod read_all;

fuzz_target!(|data: &[u8]| {
    let result = read_all::read_all("fuzz.jfr", std::io::Cursor::new(data.to_vec()));
    if let Err(FileError::Malformed {
        source: ReadError::Malformed { offset, .. },
        ..
    }) = result
    {
        // Offsets in compressed input count the uncompressed bytes.
        if data.starts_with(b"FLR\0") {
            assert!(
                offset <= data.len() as u64,
                "offset {offset} past the input"
            );
        }
    }
});
