//! `heapsampler convert --format otlp`, read by upstream's own definitions:
//! the Python package `opentelemetry-proto` decodes the request, and its
//! totals, stacks, attributes, resource and times are those of the
//! recording (`heapsampler top`, `top --live`). Without that package these
//! tests are skipped, unless CI=true. Also: the messages' Rust code is what
//! prost-build makes of `convert/proto/otlp/`.

use heapsampler_test_support as support;

use std::path::Path;

/// Set to write convert/proto/otlp/'s Rust again from its .proto files,
/// instead of checking it.
const REGENERATE: &str = "HEAPSAMPLER_REGENERATE_PROTO";

/// The packages of the request and what it imports: one generated file each.
const PACKAGES: [&str; 4] = [
    "opentelemetry.proto.collector.profiles.v1development",
    "opentelemetry.proto.profiles.v1development",
    "opentelemetry.proto.common.v1",
    "opentelemetry.proto.resource.v1",
];

#[test]
fn the_otlp_code_is_what_prost_build_makes_of_the_protos() {
    let proto = Path::new(env!("CARGO_MANIFEST_DIR")).join("proto/otlp");
    let out = support::temp_dir("convert_otlp_proto");
    let files = protox::compile(
        ["opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"],
        [&proto],
    )
    .unwrap();
    prost_build::Config::new()
        .out_dir(&out)
        .compile_fds(files)
        .unwrap();
    for package in PACKAGES {
        let name = format!("{package}.rs");
        let committed = proto.join(&name);
        let generated = std::fs::read_to_string(out.join(&name)).unwrap();
        if std::env::var_os(REGENERATE).is_some() {
            std::fs::write(&committed, &generated).unwrap();
        }
        assert!(
            std::fs::read_to_string(&committed).unwrap_or_default() == generated,
            "{} is not what prost-build makes of convert/proto/otlp/: write it again with \
             `{REGENERATE}=1 cargo test --release -p heapsampler-convert --test otlp`",
            committed.display()
        );
    }
}
