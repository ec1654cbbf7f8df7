#!/usr/bin/env bash
# First overhead measurement of the agent against no agent and JFR's own
# allocation sampling, on a fixed amount of work (testdata KnownAllocations:
# THREADS threads each allocating MIB of int[1000]).
#
# Runs the configurations interleaved (A B C ... A B C ...) ROUNDS times, so
# machine noise hits them alike, and prints per configuration: the median
# wall time and its ratio to no agent, the median peak RSS, and the samples
# recorded. Usage: bench/overhead.sh [ROUNDS] [THREADS] [MIB]
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-5}
threads=${2:-4}
mib=${3:-1024}
agent=$PWD/target/release/libheapsampler.so
[ -f "$agent" ] || cargo build --release -p heapsampler-agent
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
javac -d "$work/classes" testdata/workloads/KnownAllocations.java

# name|JVM options (the recording file is $work/NAME-ROUND.jfr)
configs=(
  "none|"
  "jfr-default|-XX:StartFlightRecording=filename=FILE,settings=$PWD/testdata/jfc/allocation-sample-default.jfc"
  "jfr-unthrottled|-XX:StartFlightRecording=filename=FILE,settings=$PWD/testdata/jfc/allocation-sample-unthrottled.jfc"
  "heapsampler-512k|-agentpath:$agent=file=FILE,interval=512k,log=quiet"
  "heapsampler-512k-nolive|-agentpath:$agent=file=FILE,interval=512k,live=false,log=quiet"
  "heapsampler-32k|-agentpath:$agent=file=FILE,interval=32k,log=quiet"
  "heapsampler-4k|-agentpath:$agent=file=FILE,interval=4k,log=quiet"
)

for round in $(seq 1 "$rounds"); do
  for config in "${configs[@]}"; do
    name=${config%%|*}
    options=${config#*|}
    file=$work/$name-$round.jfr
    options=${options//FILE/$file}
    # shellcheck disable=SC2086 # options are several words on purpose
    /usr/bin/time -f "%e %M" -o "$work/$name-$round.time" \
      java -Xmx2g $options -cp "$work/classes" KnownAllocations "$threads" "$mib" > /dev/null
    samples=0
    if [ -f "$file" ]; then
      samples=$(jfr summary "$file" | awk '$1 == "jdk.ObjectAllocationSample" { print $2 }')
    fi
    echo "${samples:-0}" > "$work/$name-$round.samples"
  done
  echo "round $round of $rounds done" >&2
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
base=$(cat "$work"/none-*.time | cut -d' ' -f1 | median)
printf '%-26s %9s %8s %12s %10s\n' configuration "time (s)" "ratio" "peak RSS MB" samples
for config in "${configs[@]}"; do
  name=${config%%|*}
  time=$(cat "$work/$name"-*.time | cut -d' ' -f1 | median)
  rss=$(cat "$work/$name"-*.time | cut -d' ' -f2 | median)
  samples=$(cat "$work/$name"-*.samples | median)
  printf '%-26s %9.2f %8.3f %12.0f %10.0f\n' "$name" "$time" "$(echo "$time / $base" | bc -l)" "$(echo "$rss / 1024" | bc -l)" "$samples"
done
