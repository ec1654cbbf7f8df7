//! What a refresh of `heapsampler watch` costs: follows a recording as the
//! view does ([`Follow`]), refreshing it `--count` times, and prints each
//! refresh's wall time and what it found. The first reads every chunk; the
//! next ones read the chunks ended since and the last chunk again
//! (BENCHMARKS.md, "watch: a refresh").
//!
//! ```sh
//! cargo build --release -p heapsampler-cli --examples
//! target/release/examples/follow /tmp/tw/big.jfr --count 5
//! ```

use std::time::Instant;

use heapsampler_cli::analysis::follow::Follow;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: follow FILE [--count N]")?;
    let count = match (args.next().as_deref(), args.next()) {
        (Some("--count"), Some(n)) => n.parse()?,
        (None, _) => 3,
        _ => return Err("usage: follow FILE [--count N]".into()),
    };
    let mut follow = Follow::new(&path);
    for refresh in 1..=count {
        let started = Instant::now();
        let followed = follow.refresh()?;
        let sites = followed.watch.judged.as_ref().map_or(0, |j| j.sites.len());
        println!(
            "refresh {refresh}: {:.3} s, {} collections, {} heap figures, {sites} sites judged, \
             {} raised",
            started.elapsed().as_secs_f64(),
            followed.collections,
            followed.heap.len(),
            followed.watch.raised.len(),
        );
    }
    Ok(())
}
