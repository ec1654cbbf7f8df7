#!/usr/bin/env bash
# What the collection before the exit's live set costs a JVM's exit, per
# collector: the collection the agent forced (its own measure, from its
# log=debug line "forced a collection for the live set in N ms": under G1,
# Parallel and Serial at VMDeath, under ZGC and Shenandoah in its shutdown
# hook), the JVM's whole wall time with the agent's default (collect=true)
# and with collect=false, and that time's difference, medians over ROUNDS
# interleaved rounds. Two programs: LiveAtExit 8 64 (8 MiB kept, 64 MiB of
# garbage: a small live set) and HeapGraph 0.5 (a graph of maps, lists and
# boxed numbers filling half of the 1 GiB heap: a large live set to mark).
# Usage: bench/exit-collection.sh [ROUNDS]
#   JAVA17=/path/to/java (default: java on PATH), JAVA25=/path/to/java
#   (default: Temurin 25's; left out if missing)
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-5}
agent=$PWD/target/release/libheapsampler.so
[ -f "$agent" ] || cargo build --release -p heapsampler-agent-cdylib
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
javac -d "$work/classes" testdata/workloads/LiveAtExit.java testdata/workloads/HeapGraph.java

java17=${JAVA17:-java}
java25=${JAVA25:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
collectors=(
  "17 g1 -XX:+UseG1GC"
  "17 zgc -XX:+UseZGC"
  "17 shenandoah -XX:+UseShenandoahGC"
)
if [ -x "$java25" ]; then
  collectors+=(
    "25 g1 -XX:+UseG1GC"
    "25 zgc-gen -XX:+UseZGC"
    "25 shenandoah-gen -XX:+UseShenandoahGC -XX:ShenandoahGCMode=generational"
  )
fi
programs=("LiveAtExit 8 64" "HeapGraph 0.5")

# One line a run: JDK collector program collect wall_s collection_ms
runs=$work/runs
for round in $(seq 1 "$rounds"); do
  for collector in "${collectors[@]}"; do
    read -r jdk name flags <<< "$collector"
    java=$java17
    [ "$jdk" = 25 ] && java=$java25
    for program in "${programs[@]}"; do
      for collect in true false; do
        # shellcheck disable=SC2086 # the flags are words
        /usr/bin/time -f "%e" -o "$work/time" "$java" -Xmx1g $flags \
          "-agentpath:$agent=file=$work/r.jfr,interval=512k,collect=$collect,log=debug" \
          -cp "$work/classes" $program > /dev/null 2> "$work/stderr" || {
          cat "$work/stderr" >&2
          exit 1
        }
        collection=$(sed -n 's/.*forced a collection for the live set in \([0-9.]*\) ms.*/\1/p' "$work/stderr")
        printf '%s %s %s %s %s %s\n' "$jdk" "$name" "${program%% *}" "$collect" \
          "$(cat "$work/time")" "${collection:--}" | tee -a "$runs"
      done
    done
  done
done

echo
echo "medians of $rounds rounds: JDK collector program | collection (ms) | wall collect=true (s) | wall collect=false (s) | difference (s)"
python3 - "$runs" <<'EOF'
import statistics, sys
from collections import defaultdict
runs = defaultdict(lambda: {"true": [], "false": [], "ms": []})
order = []
for line in open(sys.argv[1]):
    jdk, name, program, collect, wall, ms = line.split()
    key = (jdk, name, program)
    if key not in runs:
        order.append(key)
    runs[key][collect].append(float(wall))
    if ms != "-":
        runs[key]["ms"].append(float(ms))
for key in order:
    r = runs[key]
    ms = f"{statistics.median(r['ms']):.0f} ({min(r['ms']):.0f} to {max(r['ms']):.0f})" if r["ms"] else "none"
    on, off = statistics.median(r["true"]), statistics.median(r["false"])
    print(f"{' '.join(key)} | {ms} | {on:.2f} | {off:.2f} | {on - off:+.2f}")
EOF
