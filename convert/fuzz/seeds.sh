#!/usr/bin/env bash
# Makes the fuzz target's seed corpus in convert/fuzz/seeds/ (not committed:
# a few MB of recordings): real JDK 17 recordings, one written by jfr-writer,
# the recordings the test suite left in target/tmp (jfr-writer's and the
# agent's, multi-chunk, truncated, zstd), and compressed copies.
# Usage: convert/fuzz/seeds.sh   (from anywhere; needs java and cargo)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seeds="$here/seeds"
mkdir -p "$seeds"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# JDK recordings of an idle JVM: profile and default settings (~200 KB each).
java "-XX:StartFlightRecording:filename=$seeds/jdk-profile.jfr,settings=profile" -version 2>/dev/null
java "-XX:StartFlightRecording:filename=$seeds/jdk-default.jfr" -version 2>/dev/null
# The same from every other JDK release on the machine (Temurin 25 beside
# JDK 17 here): newer JDKs declare more types and fields.
major() { "$1" -version 2>&1 | head -n 1 | sed -E 's/[^"]*"([0-9]+).*/\1/'; }
seen=" $(major java) "
for java in /usr/lib/jvm/*/bin/java; do
    release=$(major "$java")
    case "$seen" in *" $release "*) continue ;; esac
    seen="$seen$release "
    "$java" "-XX:StartFlightRecording:filename=$seeds/jdk$release-profile.jfr,settings=profile" \
        -version >/dev/null 2>&1
    "$java" "-XX:StartFlightRecording:filename=$seeds/jdk$release-default.jfr" -version >/dev/null 2>&1
done
# One written by jfr-writer: a custom event with every primitive type.
(cd "$root" && cargo run -q --release -p jfr-writer --example custom_event -- "$seeds/jfr-writer-custom.jfr" >/dev/null)
# What the test suite wrote (run `cargo test --release` first for more), up
# to 512 KB each: the fuzzer is faster on small inputs.
if [ -d "$root/target/tmp" ]; then
    find "$root/target/tmp" -type f \( -name '*.jfr' -o -name '*.jfr.zst' \) -size -512k |
        while read -r file; do
            cp "$file" "$seeds/suite-$(echo "${file#"$root"/target/tmp/}" | tr '/' '_')"
        done
fi
# Compressed copies of the smallest JDK-free seed and of a JDK one.
gzip -c "$seeds/jfr-writer-custom.jfr" >"$seeds/jfr-writer-custom.jfr.gz"
gzip -c "$seeds/jdk-default.jfr" >"$seeds/jdk-default.jfr.gz"
ls "$seeds" | wc -l | xargs echo "seeds:"
du -sh "$seeds"
