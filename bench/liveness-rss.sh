#!/usr/bin/env bash
# Peak RSS, wall time and GC pauses of a workload of short-lived 2 MiB arrays
# (G1 humongous objects): no agent; the agent with liveness tracking as it
# is by default (humongous objects not tracked); tracking every object
# (live_max=none, what a weak reference per sample costs G1); and without
# liveness. Interleaved ROUNDS times.
# Usage: bench/liveness-rss.sh [ROUNDS] [MIB]   (JAVA=/path/to/java to pick a JDK)
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-3}
mib=${2:-20000}
agent=$PWD/target/release/libheapsampler.so
[ -f "$agent" ] || cargo build --release -p heapsampler-agent-cdylib
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
javac -d "$work/classes" testdata/workloads/Scenarios.java

java=${JAVA:-java}
printf '%-14s %8s %12s %10s\n' liveness "time (s)" "peak RSS MB" "GC pauses"
for round in $(seq 1 "$rounds"); do
  for live in no-agent true all false; do
    options=()
    case $live in
      no-agent) ;;
      all) options=("-agentpath:$agent=file=$work/h.jfr,live=true,live_max=none,log=quiet") ;;
      *) options=("-agentpath:$agent=file=$work/h.jfr,live=$live,log=quiet") ;;
    esac
    /usr/bin/time -f "%e %M" -o "$work/time" "$java" -Xmx4g -XX:+UseG1GC "${options[@]}" \
      -Xlog:gc:file="$work/gc.log" -cp "$work/classes" Scenarios humongous "$mib" > /dev/null
    read -r seconds kb < "$work/time"
    printf '%-14s %8.2f %12.0f %10d\n' "$live" "$seconds" "$((kb / 1024))" "$(grep -c Pause "$work/gc.log")"
  done
done
