#!/usr/bin/env bash
# The agent's memory over a long recording: the Soak workload (stacks that
# never repeat, short-lived virtual threads on JDK 21+) with and without the
# agent, side by side, their RSS read every 10 s. The agent records at 32k
# with liveness on, in 1-minute chunks. The heap is fixed and touched at
# start (-Xms = -Xmx, AlwaysPreTouch), so the difference of the two RSS is
# the agent's own memory: its pools and caches, the ring, JNI references.
#
# Usage: bench/soak.sh [MINUTES] [THREADS_PER_SECOND]
#   (JAVA=/path/to/java; default: Temurin 25 if installed, else java;
#    AGENT=/path/to/libheapsampler.so; default: this checkout's release build;
#    OPTIONS=agent options; default: interval=32k,chunk_age=1m;
#    KEEP=file: keep the recording there, e.g. to read the pools' sizes in
#    its heapsampler.AgentStatistics events)
# Defaults: 30 minutes, 556 threads/s (a million threads in 30 minutes).
# Prints one line per minute and a summary: the agent's memory at 5 minutes,
# its range after, and its peak.
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=${1:-30}
threads=${2:-556}
seconds=$((minutes * 60))
agent=${AGENT:-$PWD/target/release/libheapsampler.so}
[ -f "$agent" ] || cargo build --release -p heapsampler-agent-cdylib
java=${JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
[ -x "$java" ] || java=java
javac=$(dirname "$(command -v "$java")")/javac
work=$(mktemp -d)
# Stops the JVMs if the script is interrupted; with none left, kill's
# failure must not end the trap (set -e) before the work directory goes.
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
"$javac" -d "$work/classes" testdata/workloads/Soak.java

# 2 workers x 2000 paths/s of 0.5-1.5 KiB, and each thread 8 paths: about
# 10 MB/s, 300 samples/s at 32k, nearly every stack new.
run() {
  exec "$java" -Xms256m -Xmx256m -XX:+AlwaysPreTouch "$@" -cp "$work/classes" \
    Soak "$seconds" 2000 "$threads" 8
}
run > "$work/base.out" &
base=$!
options=${OPTIONS:-interval=32k,chunk_age=1m}
run "-agentpath:$agent=file=$work/soak.jfr,$options,log=quiet" > "$work/agent.out" &
with=$!

rss() { awk '/VmRSS/ { print int($2 / 1024) }' "/proc/$1/status" 2>/dev/null || echo 0; }
printf '%7s %12s %12s %10s\n' minute "no agent MB" "agent MB" "agent's MB"
: > "$work/diff"
for ((t = 10; t <= seconds; t += 10)); do
  sleep 10
  b=$(rss $base) a=$(rss $with)
  [ "$b" -gt 0 ] && [ "$a" -gt 0 ] || break
  echo "$t $((a - b))" >> "$work/diff"
  if ((t % 60 == 0)); then
    printf '%7d %12d %12d %10d\n' $((t / 60)) "$b" "$a" $((a - b))
  fi
done
wait $base $with
cat "$work/agent.out"
awk -v from=300 '
  { if ($1 <= from) at5 = $2; else { if (n++ == 0 || $2 < lo) lo = $2; if ($2 > hi) hi = $2 }
    if ($2 > peak) peak = $2 }
  END { printf "agent memory: %d MB at 5 min; after, %d to %d MB (range %d MB); peak %d MB\n",
        at5, lo, hi, hi - lo, peak }' "$work/diff"
ls -l "$work/soak.jfr" | awk '{ printf "recording: %.0f MB\n", $5 / 1e6 }'
jfr summary "$work/soak.jfr" | grep -E 'Chunks|ObjectAllocationSample'
if [ -n "${KEEP:-}" ]; then
  mv "$work/soak.jfr" "$KEEP"
fi
