//! Fuzzes what `heapsampler convert`, `top` and `summary` run on a file:
//! every chunk's CSV rows made by `output::csv::chunk_rows` (the event decoder's
//! plans, every pooled value flattened as the CSV shows it), with and
//! without a filter; folded stacks; and `top` and `summary` over the whole
//! input. Any bytes must give output or an error, never a panic, a hang (a
//! loop of references) or a stack overflow (a chain of them).

#![no_main]

use heapsampler_cli::analysis::fold::FoldedStacks;
use heapsampler_cli::analysis::summary::summarize;
use heapsampler_cli::analysis::top::{GroupBy, Grouping, Groups, Query};
use heapsampler_cli::model::filter::{ChunkFilter, Filter, parse_regex};
use heapsampler_cli::output::csv::{Buffers, chunk_rows};
use heapsampler_cli::pipeline::Pipeline;
use jfr_reader::chunk::Chunk;
use jfr_reader::file::RecordingFile;
use libfuzzer_sys::fuzz_target;

fn recording(data: &[u8]) -> Option<RecordingFile> {
    RecordingFile::from_reader("fuzz.jfr", std::io::Cursor::new(data.to_vec())).ok()
}

fuzz_target!(|data: &[u8]| {
    // libFuzzer runs one input at a time: the pipeline's threads would
    // only cost it.
    let one_thread = Pipeline::on(1);
    let everything = Filter::default();
    let some = Filter {
        thread: parse_regex("1").ok(),
        class: parse_regex("[a-z]").ok(),
        ..Filter::default()
    };
    if let Some(mut file) = recording(data) {
        let buffers = Buffers::default();
        let mut stacks = FoldedStacks::new();
        while let Ok(Some(raw)) = file.next_chunk() {
            let Ok(chunk) = Chunk::read(&raw.bytes, raw.offset) else {
                break;
            };
            let window = some.window(chunk.header.start_nanos);
            for filter in [&everything, &some] {
                let chunk_filter = ChunkFilter::new(filter, window, &chunk);
                let filter = (!filter.is_empty()).then_some(&chunk_filter);
                let mut emit = |piece| {
                    std::hint::black_box(piece);
                    Ok(())
                };
                let _ = chunk_rows(&chunk, 64, &|_| true, filter, &buffers, &mut emit);
            }
            let filter = ChunkFilter::new(&everything, window, &chunk);
            let _ = stacks.add_chunk(&chunk, 64, &|_| true, &filter);
        }
        std::hint::black_box(stacks.len());
    }
    for by in [GroupBy::Site, GroupBy::AppSite, GroupBy::Class, GroupBy::Thread] {
        for live in [false, true] {
            if let Some(file) = recording(data) {
                let query = Query {
                    by,
                    live,
                    min_gcs: 0,
                };
                let ran =
                    one_thread.run(file, &Grouping::new(query), Groups::new(query), &mut |_| {});
                let _ = std::hint::black_box(ran.map(|ran| ran.merged.table()));
            }
        }
    }
    if let Some(file) = recording(data) {
        let _ = std::hint::black_box(summarize(file, &one_thread));
    }
});
