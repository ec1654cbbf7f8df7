//! Fuzzes the reader and the CSV flattening behind `heapsampler convert`:
//! every event of every chunk written as a CSV row (to memory), which
//! follows every pooled reference the way the CSV shows it (stack traces,
//! threads, classes). Any bytes must give rows or an error, never a panic,
//! a hang (a loop of references) or a stack overflow (a chain of them).

#![no_main]

use heapsampler_convert::export::Flattener;
use heapsampler_convert::read::chunk::Chunk;
use heapsampler_convert::read::file::RecordingFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(mut file) = RecordingFile::from_reader("fuzz.jfr", std::io::Cursor::new(data.to_vec()))
    else {
        return;
    };
    while let Ok(Some(raw)) = file.next_chunk() {
        let Ok(chunk) = Chunk::read(&raw.bytes, raw.offset) else {
            return;
        };
        let flattener = Flattener::new(&chunk, 64);
        let mut writer = csv::Writer::from_writer(Vec::new());
        for event in chunk.events() {
            let Ok(event) = event else {
                return;
            };
            let _ = flattener.write_row(&event, &mut writer);
            // The other way cells are made (`top`, filters): one String each.
            std::hint::black_box(flattener.row(&event));
        }
    }
});
