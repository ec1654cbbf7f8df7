#!/usr/bin/env bash
# The cost of roots=true (the walk to GC roots at the end of a recording):
# the JVM's pause for the walk, the whole walk's time, and the peak memory it
# adds, on heaps of HEAPS (default "1g 4g") filled to 70% with a long-lived
# graph of maps, lists and small objects (testdata/workloads/HeapGraph.java).
# Per heap and round, interleaved: the agent without roots (the baseline for
# peak RSS), with roots=true and its default time budget, and with
# roots_time=1h (a walk only the object limit stops).
# Usage: bench/roots-pause.sh [ROUNDS] [HEAPS]   (JAVA=/path/to/java to pick a JDK)
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-3}
heaps=${2:-"1g 4g"}
agent=$PWD/target/release/libheapsampler.so
[ -f "$agent" ] || cargo build --release -p heapsampler-agent-cdylib
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
javac -d "$work/classes" testdata/workloads/HeapGraph.java

java=${JAVA:-java}
printf '%-4s %-8s %8s %9s %10s %9s %12s %10s %9s %8s  %s\n' heap roots "wall s" "peak MB" "found" "walk ms" "JVM pause ms" "visited" "tagged" "nodes MB" "stopped"
for round in $(seq 1 "$rounds"); do
  for heap in $heaps; do
    for roots in off default 1h; do
      case $roots in
        off) extra="" ;;
        default) extra=",roots=true" ;;
        1h) extra=",roots=true,roots_time=1h" ;;
      esac
      /usr/bin/time -f "%e %M" -o "$work/time" "$java" -Xmx"$heap" \
        -agentpath:"$agent"=file="$work/h.jfr"$extra \
        -cp "$work/classes" HeapGraph 0.7 > /dev/null 2> "$work/err"
      read -r seconds kb < "$work/time"
      # heapsampler: paths to roots: F of N objects in T ms, V objects visited (the walk
      # paused the JVM P ms: R references, G objects tagged, M MiB of nodes; STOP; ...)
      line=$(grep 'paths to roots:' "$work/err" || true)
      if [ -n "$line" ]; then
        found=$(sed -E 's/.*roots: ([0-9]+) of ([0-9]+) objects.*/\1\/\2/' <<< "$line")
        total=$(sed -E 's/.* objects in ([0-9]+) ms.*/\1/' <<< "$line")
        pause=$(sed -E 's/.*paused the JVM ([0-9]+) ms.*/\1/' <<< "$line")
        visited=$(sed -E 's/.* ms, ([0-9]+) objects visited.*/\1/' <<< "$line")
        tagged=$(sed -E 's/.* ([0-9]+) objects tagged.*/\1/' <<< "$line")
        nodes=$(sed -E 's/.* ([0-9.]+) MiB of nodes.*/\1/' <<< "$line")
        stop=$(sed -E 's/.*MiB of nodes; ([^;]+);.*/\1/' <<< "$line")
      else
        found=- total=- pause=- visited=- tagged=- nodes=- stop=-
      fi
      printf '%-4s %-8s %8.1f %9d %10s %9s %12s %10s %9s %8s  %s\n' "$heap" "$roots" "$seconds" \
        "$((kb / 1024))" "$found" "$total" "$pause" "$visited" "$tagged" "$nodes" "$stop"
    done
  done
done
