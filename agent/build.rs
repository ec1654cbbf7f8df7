//! Tells the build scripts of the packages that depend on this one where
//! its sources are, as `DEP_HEAPSAMPLER_AGENT_ROOT` (Cargo passes a `links`
//! package's metadata on so): heapsampler-cli's builds the agent library
//! from them, whether they are this repository's or a published package's.

fn main() {
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("Cargo sets CARGO_MANIFEST_DIR");
    println!("cargo::metadata=root={root}");
    println!("cargo::rerun-if-changed=build.rs");
}
