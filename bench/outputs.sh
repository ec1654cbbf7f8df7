#!/usr/bin/env bash
# Every output of one `heapsampler` executable over a fixed set of
# recordings, each in a file of its own, so that two builds compare with
# `diff -r`: a reshaping of the code must leave every byte as it was.
#
#   bench/outputs.sh CORPUS OUT [HEAPSAMPLER]
#   bench/outputs.sh target/outputs/corpus target/outputs/before OLD/heapsampler
#   bench/outputs.sh target/outputs/corpus target/outputs/after
#   diff -r target/outputs/before target/outputs/after && echo identical
#
# CORPUS is made on the first use (and kept): recordings of the bundled
# workloads by this tree's agent under G1 (liveness, roots, old objects,
# several chunks), under Temurin 25's generational ZGC, the demo's, two
# for `diff`, the JDK's own recording with its TLAB events, and a
# truncated one (errors are outputs too). Recordings
# differ from run to run, so they are made once and both builds read the
# same files. HEAPSAMPLER defaults to this tree's release build. Every
# output is written as the command line writes it, from inside CORPUS with
# relative paths (Parquet and the report name the recording as given).
#
# Needs java, javac and jfr (JDK 17) on PATH; Temurin 25 for the ZGC one
# (left out with a line where missing).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:?usage: bench/outputs.sh CORPUS OUT [HEAPSAMPLER]}
out=${2:?usage: bench/outputs.sh CORPUS OUT [HEAPSAMPLER]}
heapsampler=${3:-$root/target/release/heapsampler}
heapsampler=$(cd "$(dirname "$heapsampler")" && pwd)/$(basename "$heapsampler")
temurin=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java

if [ ! -f "$corpus/.complete" ]; then
    echo "making the corpus in $corpus" >&2
    mkdir -p "$corpus/classes"
    javac -d "$corpus/classes" "$root"/testdata/workloads/{Leaks,AllocationMix,GcRoots}.java
    cp="$corpus/classes"
    record() {
        local name=$1
        shift
        echo "recording $name" >&2
        timeout 300 "$heapsampler" record -o "$corpus/$name.jfr" "$@" >/dev/null
    }
    record leaks-g1 --interval 64k --roots --old-objects 32 --chunk-size 4m -- \
        java -Xmx512m -Xmn16m -XX:+UseG1GC -cp "$cp" Leaks 20 leak-a 512 cache 16
    record leaks-parallel --interval 128k -- \
        java -Xmx512m -Xmn16m -XX:+UseParallelGC -cp "$cp" Leaks 10 leak-b 256
    if [ -x "$temurin" ]; then
        record leaks-zgc --interval 64k -- \
            "$temurin" -Xmx512m -XX:+UseZGC -cp "$cp" Leaks 15 leak-a 512 chains 20
    else
        echo "no Temurin 25 at $temurin: no generational ZGC recording" >&2
    fi
    record mix-a --interval 32k --depth 16 -- java -cp "$cp" AllocationMix 3 4
    record mix-b --interval 32k --no-live -- java -cp "$cp" AllocationMix 3 2
    record roots --roots -- java -cp "$cp" GcRoots 4
    echo "recording the demo" >&2
    timeout 300 "$heapsampler" demo --dir "$corpus/demo" --seconds 10 >/dev/null
    cp "$corpus"/demo/*.jfr "$corpus/demo.jfr"
    rm -rf "$corpus/demo"
    echo "recording the JDK's own" >&2
    timeout 300 java -XX:StartFlightRecording:settings=profile,filename="$corpus/jdk.jfr" \
        -cp "$cp" AllocationMix 3 2 >/dev/null
    # Bad input: the errors are outputs too.
    head -c 300000 "$corpus/leaks-g1.jfr" >"$corpus/truncated.jfr"
    touch "$corpus/.complete"
fi

rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$corpus"
# each NAME COMMAND...: the command's standard output and error (OUT for
# where the outputs go, which differs between the builds compared), and
# its exit code, into NAME.
each() {
    local name=$1
    shift
    local code=0
    "$heapsampler" "$@" >"$out/$name.out" 2>"$out/$name.err" || code=$?
    sed -i "s#$out#OUT#g" "$out/$name.out" "$out/$name.err"
    echo "$code" >"$out/$name.code"
}
for file in *.jfr; do
    r=${file%.jfr}
    echo "writing the outputs of $file" >&2
    each "$r.summary" summary "$file"
    for by in site app-site class thread; do
        each "$r.top-$by" top --by "$by" -n 50 "$file"
        each "$r.top-live-$by" top --live --by "$by" -n 50 "$file"
        each "$r.leaks-$by" leaks --by "$by" "$file"
    done
    each "$r.top-min-gcs" top --live --min-gcs 2 "$file"
    each "$r.report" report "$file" -o "$out/$r.html"
    each "$r.flame" flame "$file" -o "$out/$r.svg"
    each "$r.flame-live" flame --live "$file" -o "$out/$r.live.svg"
    each "$r.flame-samples" flame --samples --depth 8 "$file" -o "$out/$r.samples.svg"
    each "$r.csv" convert "$file" -o "$out/$r-csv"
    each "$r.csv-samples" convert "$file" --events jdk.ObjectAllocationSample -o "$out/$r.samples.csv"
    each "$r.collapsed" convert "$file" --format collapsed -o "$out/$r.collapsed"
    each "$r.collapsed-filtered" convert "$file" --format collapsed --from 1s --to 3s \
        --thread '^(worker|main)' --no-class-frame --stack-depth 8 -o "$out/$r.filtered.collapsed"
    each "$r.pprof" convert "$file" --format pprof -o "$out/$r.pb.gz"
    each "$r.otlp" convert "$file" --format otlp -o "$out/$r.otlp.pb"
    each "$r.parquet" convert "$file" --format parquet -o "$out/$r.parquet"
done
each diff-mix diff mix-a.jfr mix-b.jfr
each diff-mix-class diff --by class mix-a.jfr mix-b.jfr
each diff-leaks-live diff --live leaks-g1.jfr leaks-parallel.jfr
echo "wrote $(find "$out" -type f | wc -l) files to $out" >&2
