#!/usr/bin/env bash
# Peak RSS, wall time and GC pauses of a workload of short-lived 2 MiB arrays
# (G1 humongous objects): no agent, the agent with liveness tracking, and
# without. Interleaved ROUNDS times. Usage: bench/liveness-rss.sh [ROUNDS] [MIB]
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-3}
mib=${2:-20000}
agent=$PWD/target/release/libheapsampler.so
[ -f "$agent" ] || cargo build --release -p heapsampler-agent
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
javac -d "$work/classes" testdata/workloads/Scenarios.java

printf '%-12s %8s %12s %10s\n' liveness "time (s)" "peak RSS MB" "GC pauses"
for round in $(seq 1 "$rounds"); do
  for live in none true false; do
    options=()
    [ "$live" = none ] || options=("-agentpath:$agent=file=$work/h.jfr,live=$live,log=quiet")
    /usr/bin/time -f "%e %M" -o "$work/time" java -Xmx4g -XX:+UseG1GC "${options[@]}" \
      -Xlog:gc:file="$work/gc.log" -cp "$work/classes" Scenarios humongous "$mib" > /dev/null
    read -r seconds kb < "$work/time"
    printf '%-12s %8.2f %12.0f %10d\n' "$live" "$seconds" "$((kb / 1024))" "$(grep -c Pause "$work/gc.log")"
  done
done
