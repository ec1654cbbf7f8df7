#!/usr/bin/env bash
# `heapsampler convert` (CSV) against the JDK's `jfr print --json` and
# `jfr print` on one recording of at least 200 MB: wall time, CPU time and
# peak memory (maximum resident set size, from GNU time) of each, and the
# ratios. Also `heapsampler summary` (the reader alone), the convert on one
# thread (it uses every core by default), a convert of a single copy of
# the recording, to show that memory does not grow with the file, and the
# allocation samples as a pprof heap profile, as OpenTelemetry profiles
# and as a Parquet table. And the allocation samples four ways, in turn,
# FOLD_RUNS times each (default 5): as CSV to /dev/null, as folded stacks
# (`convert --format collapsed`), as a flame graph (`heapsampler flame`)
# and as `heapsampler top`'s table, each against the CSV, which reads the
# same events: on that recording and on one with the TLAB events too (see
# samples_ways below).
#
# The recording is a real JDK 17 one (settings=profile plus JFR's own
# allocation sampling unthrottled) of the bundled allocation workload,
# repeated chunk after chunk until it is large enough: a JFR file is a
# sequence of self-contained chunks, so every tool reads the copies as it
# reads the original. Nothing is committed; it all goes to target/.
#
#   bench/convert.sh              # 30 s recording, >= 200 MB file
#   bench/convert.sh 10 50        # a quicker run: 10 s recording, >= 50 MB
#   CONVERT_RUNS=9 bench/convert.sh  # the main convert 9 times (default 5)
#   SAMPLES_ONLY=1 bench/convert.sh  # the samples four ways alone
#   HEAPSAMPLER=OLD/heapsampler bench/convert.sh  # another build's binary
#
# Needs java and jfr (JDK 17), cargo, and GNU time (/usr/bin/time; Debian
# package `time`). jfr's output goes to /dev/null; ours goes to real files
# (it is CSV in a folder per run), so the comparison favours the JDK a
# little.
set -euo pipefail

seconds=${1:-30}
target_mb=${2:-200}
root=$(cd "$(dirname "$0")/.." && pwd)
work="$root/target/bench-convert"
mkdir -p "$work"
# Another build's binary, to measure it the same way (the default: this
# tree's, built first).
heapsampler=${HEAPSAMPLER:-$root/target/release/heapsampler}

if [ ! -x /usr/bin/time ]; then
    echo "needs GNU time: apt-get install time" >&2
    exit 1
fi
(cd "$root" && cargo build --release -q -p heapsampler-cli --bin heapsampler)

# run NAME COMMAND...: time one run, print a table row.
declare -A wall cpu_time
run() {
    local name=$1
    shift
    echo "running: $name" >&2
    /usr/bin/time -v -o "$work/time.txt" "$@"
    local elapsed cpu rss
    elapsed=$(awk -F': ' '/Elapsed \(wall clock\)/ {
        n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$work/time.txt")
    cpu=$(awk -F': ' '/User time/ {u = $2} /System time/ {s = $2} END {print u + s}' "$work/time.txt")
    rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$work/time.txt")
    wall[$name]=$elapsed
    cpu_time[$name]=$cpu
    printf '| %s | %.2f | %.2f | %s |\n' "$name" "$elapsed" "$cpu" "$rss"
}

# median NAME [RUNS]: sets the wall and CPU times of NAME to the medians of
# the RUNS (default: $runs) runs "NAME, run N", and says what the wall
# times ranged over.
median() {
    local key sorted count=${2:-$runs}
    for key in wall cpu_time; do
        local -n times=$key
        sorted=$(for n in $(seq 1 "$count"); do echo "${times["$1, run $n"]}"; done | sort -g)
        times[$1]=$(echo "$sorted" | awk '{ v[NR] = $1 }
            END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
        if [ "$key" = wall ]; then
            echo "$1: median of $count runs ${times[$1]} s wall," \
                "from $(echo "$sorted" | head -1) to $(echo "$sorted" | tail -1) s"
        fi
    done
}

# The allocation samples of RECORDING (called LABEL in the tables) four
# ways, in turn, FOLD_RUNS times each (default 5), so that the machine's
# load falls on all alike: as CSV to /dev/null (`--events
# jdk.ObjectAllocationSample`: the same events read, no file written), as
# folded stacks, as a flame graph and as `top`'s table. Each run is set
# against the CSV's run of its round: the table gives the medians, and the
# median and range of those ratios, which hold better than the medians'
# when the machine is busy. Targets, wall time against the CSV's: folded
# stacks and the flame graph 1.0x or less (they read the same events and
# add up a few thousand lines where the CSV writes a row per event), `top`
# 1.0x or less (it adds up per site too).
samples_ways() {
    local recording=$1 label=$2 n name csv way
    local fold_runs=${FOLD_RUNS:-5}
    csv="CSV of the samples ($label)"
    local ways=("collapsed ($label)" "flame ($label)" "top ($label)")
    echo
    echo "| run | wall s | CPU s | peak RSS MiB |"
    echo "|---|---|---|---|"
    for n in $(seq 1 "$fold_runs"); do
        run "$csv, run $n" "$heapsampler" convert "$recording" \
            --events jdk.ObjectAllocationSample -o /dev/null
        run "${ways[0]}, run $n" "$heapsampler" convert "$recording" --format collapsed \
            -o "$work/samples.collapsed"
        run "${ways[1]}, run $n" sh -c '"$1" flame "$2" -o "$3" 2>/dev/null' sh "$heapsampler" \
            "$recording" "$work/samples.svg"
        run "${ways[2]}, run $n" sh -c '"$1" top "$2" >/dev/null' sh "$heapsampler" "$recording"
    done
    rm -f "$work/samples.collapsed" "$work/samples.svg"
    echo
    for name in "$csv" "${ways[@]}"; do median "$name" "$fold_runs"; done
    echo
    echo "| $label, medians of $fold_runs | wall s | CPU s | wall / CSV's, round by round:" \
        "median (range) | CPU / CSV's, likewise | target (wall) |"
    echo "|---|---|---|---|---|---|"
    echo "| \`convert --events jdk.ObjectAllocationSample -o /dev/null\` | ${wall[$csv]} |" \
        "${cpu_time[$csv]} | 1.00x | 1.00x | |"
    for way in "${ways[@]}"; do
        echo "| $way | ${wall[$way]} | ${cpu_time[$way]} | $(ratios wall "$way" "$csv") |" \
            "$(ratios cpu_time "$way" "$csv") | 1.0x or less |"
    done
}

# ratios TIMES WAY CSV: the median and range of the round-by-round ratios
# of WAY's TIMES (wall or cpu_time) to CSV's.
ratios() {
    local -n times=$1
    for n in $(seq 1 "${FOLD_RUNS:-5}"); do
        awk -v a="${times["$2, run $n"]}" -v b="${times["$3, run $n"]}" \
            'BEGIN { printf "%.3f\n", a / b }'
    done | sort -g | awk '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%.2fx (%.2f to %.2f)", m, v[1], v[NR] }'
}

# The samples four ways on a recording with the TLAB events beside the
# samples, as a user's was (issue 46): TLAB_SECONDS (default 11) of
# AllocationMix under JDK 17 with 4 KiB TLABs (-XX:TLABSize=4k
# -XX:-ResizeTLAB: a new TLAB, and its event, every 4 KiB or so),
# settings=profile, unthrottled sampling and the TLAB events: 42 to 47 MB
# here, 1.4 to 1.5 M samples and as many TLAB events. Folded stacks, flame graphs and top fold or sum
# the samples and leave the TLAB events out, as they record the same
# allocations; the CSV of the samples skips them.
tlab_runs() {
    local tlab_seconds=${TLAB_SECONDS:-11}
    local tlab="$work/tlab-${tlab_seconds}s.jfr"
    if [ ! -s "$tlab" ]; then
        echo "recording ${tlab_seconds} s of AllocationMix with 4 KiB TLABs and the TLAB events..." >&2
        java -XX:TLABSize=4k -XX:MinTLABSize=2k -XX:-ResizeTLAB \
            "-XX:StartFlightRecording=filename=$tlab,settings=profile,settings=$root/testdata/jfc/allocation-sample-unthrottled.jfc,settings=$root/testdata/jfc/allocation-tlab.jfc" \
            "$root/testdata/workloads/AllocationMix.java" "$tlab_seconds" 2 >/dev/null 2>&1
    fi
    echo "TLAB recording: $tlab, $(stat -c %s "$tlab") bytes" >&2
    cat "$tlab" >/dev/null # in the page cache for every run alike
    samples_ways "$tlab" "with the TLAB events, $((($(stat -c %s "$tlab") + 500000) / 1000000)) MB"
}

# The leak analysis and the report, against `top`, on an agent recording
# (the one above is the JDK's, without liveness): AGENT_MB (default 200) of
# testdata/workloads/AllocationMix.java recorded by heapsampler at a 16 KiB
# interval, its samples' lifetimes and collections all real (not copies).
# Targets: `leaks` and `report` use every core, as `flame` does, and take no
# more memory than `top`. AGENT_ONLY=1 runs this part alone.
agent_runs() {
    agent_mb=${AGENT_MB:-200}
    agent="$work/agent-${agent_mb}mb.jfr"
    if [ ! -s "$agent" ]; then
        echo "recording AllocationMix under the agent until the file reaches $agent_mb MB..." >&2
        mkdir -p "$work/classes"
        javac -d "$work/classes" "$root/testdata/workloads/AllocationMix.java"
        # About 3.3 MB a second at 16k on these machines: a margin of time,
        # then cut at the size (the agent keeps its newest chunks within it).
        "$heapsampler" record --interval 16k --max-size "${agent_mb}m" -o "$agent" -- \
            java -cp "$work/classes" AllocationMix $((agent_mb / 3 + 10)) 2 >/dev/null 2>&1
    fi
    echo "agent recording: $agent, $(stat -c %s "$agent") bytes" >&2
    echo
    echo "| on the agent recording | wall s | CPU s | peak RSS MiB |"
    echo "|---|---|---|---|"
    run "heapsampler top" sh -c '"$1" top "$2" >/dev/null' sh "$heapsampler" "$agent"
    run "heapsampler top --live" sh -c '"$1" top "$2" --live >/dev/null' sh "$heapsampler" "$agent"
    run "heapsampler leaks" sh -c '"$1" leaks "$2" >/dev/null' sh "$heapsampler" "$agent"
    # On one core (the pipeline uses as many threads as it may run on).
    run "heapsampler leaks, one core" sh -c 'taskset -c 0 "$1" leaks "$2" >/dev/null' sh \
        "$heapsampler" "$agent"
    run "heapsampler report" sh -c '"$1" report "$2" -o "$3" 2>/dev/null' sh "$heapsampler" "$agent" \
        "$work/agent.html"
    run "heapsampler flame" sh -c '"$1" flame "$2" -o "$3" 2>/dev/null' sh "$heapsampler" "$agent" \
        "$work/agent.svg"
    rm -f "$work/agent.html" "$work/agent.svg"
}
if [ -n "${AGENT_ONLY:-}" ]; then
    echo "cores: $(nproc); before: $(uptime)" >&2
    agent_runs
    echo "after: $(uptime)" >&2
    exit 0
fi

base="$work/base-${seconds}s.jfr"
if [ ! -s "$base" ]; then
    echo "recording ${seconds} s of testdata/workloads/AllocationMix.java (2 threads)..." >&2
    java "-XX:StartFlightRecording=filename=$base,settings=profile,settings=$root/testdata/jfc/allocation-sample-unthrottled.jfc" \
        "$root/testdata/workloads/AllocationMix.java" "$seconds" 2 >/dev/null 2>&1
fi
big="$work/big-${seconds}s-${target_mb}mb.jfr"
if [ ! -s "$big" ]; then
    base_bytes=$(stat -c %s "$base")
    copies=$(((target_mb * 1000000 + base_bytes - 1) / base_bytes))
    for _ in $(seq "$copies"); do cat "$base"; done >"$big"
fi
big_bytes=$(stat -c %s "$big")
chunks=$("$heapsampler" summary "$big" | awk '/Chunks:/ {print $2}')
echo "recording: $big" >&2
echo "  $big_bytes bytes, $chunks chunks; one copy: $(stat -c %s "$base") bytes" >&2
cat "$big" >/dev/null # in the page cache for every run alike
big_label="$((big_bytes / 1000000)) MB"
if [ -n "${SAMPLES_ONLY:-}" ]; then
    echo "cores: $(nproc); before: $(uptime)" >&2
    samples_ways "$big" "$big_label"
    tlab_runs
    echo "after: $(uptime)" >&2
    exit 0
fi

rm -rf "$work/csv-all" "$work/samples.csv" "$work/one-copy"
# Other work on the machine shows in the times: say how busy it was.
echo "cores: $(nproc); before: $(uptime)" >&2
echo
echo "| run | wall s | CPU s | peak RSS MiB |"
echo "|---|---|---|---|"
run "heapsampler summary" sh -c '"$1" summary "$2" >/dev/null' sh "$heapsampler" "$big"
# The main figure is the median of several runs of the convert, half
# before the JDK's runs and half after: it takes about a second, and the
# kernel's share of it (writing the CSV into the page cache) moves by half
# from one run to the next on these machines.
all="heapsampler convert (all events)"
runs=${CONVERT_RUNS:-5}
convert_all() { # convert_all N: run N of the main convert
    run "$all, run $1" "$heapsampler" convert "$big" -o "$work/csv-all"
    csv_bytes=$(du -sb "$work/csv-all" | cut -f1)
    rm -rf "$work/csv-all"
}
# One convert first that is shown but not counted, as hyperfine's warm-up
# runs are not: the first time some 2 GB of CSV go into the page cache, the
# kernel takes pages this virtual machine has not touched for a while, and
# copying into them costs three to five times the system time of the runs
# after it (a convert right after `echo 3 > /proc/sys/vm/drop_caches`:
# 5.2 s, 4.3 s of it system time, 45% of the CPU in the kernel's copy).
run "$all, warm-up (not counted)" "$heapsampler" convert "$big" -o "$work/csv-all"
rm -rf "$work/csv-all"
for n in $(seq 1 $(((runs + 1) / 2))); do convert_all "$n"; done
# The same on one thread: chunks are converted on every core by default.
run "heapsampler convert (all events), --threads 1" \
    "$heapsampler" convert "$big" --threads 1 -o "$work/csv-all"
rm -rf "$work/csv-all"
# jfr print (text and --json) shows 5 frames of each stack unless told
# otherwise; convert keeps 64. The same depth, for the same work:
run "heapsampler convert (all events), --stack-depth 5" \
    "$heapsampler" convert "$big" --stack-depth 5 -o "$work/csv-all"
rm -rf "$work/csv-all"
run "heapsampler convert --events jdk.ObjectAllocationSample" \
    "$heapsampler" convert "$big" --events jdk.ObjectAllocationSample -o "$work/samples.csv"
rm -f "$work/samples.csv"
# The same samples as a pprof heap profile (aggregated, on every core), and
# their CSV with no file written, the reading it is compared with.
run "heapsampler convert --events jdk.ObjectAllocationSample -o /dev/null" \
    "$heapsampler" convert "$big" --events jdk.ObjectAllocationSample -o /dev/null
run "heapsampler convert --format pprof" \
    "$heapsampler" convert "$big" --format pprof -o "$work/heap.pb.gz"
rm -f "$work/heap.pb.gz"
# The same as an OpenTelemetry profiles export: target within 2x the CSV's
# wall time above.
run "heapsampler convert --format otlp" \
    "$heapsampler" convert "$big" --format otlp -o "$work/heap.otlp.pb"
rm -f "$work/heap.otlp.pb"
# The same samples as a Parquet table: target within 2x the CSV's wall
# time above.
run "heapsampler convert --format parquet" \
    "$heapsampler" convert "$big" --format parquet -o "$work/samples.parquet"
rm -f "$work/samples.parquet"
run "heapsampler convert (all events), one copy" "$heapsampler" convert "$base" -o "$work/one-copy"
rm -rf "$work/one-copy"
run "jfr print --json" sh -c 'jfr print --json "$1" >/dev/null' sh "$big"
run "jfr print" sh -c 'jfr print "$1" >/dev/null' sh "$big"
for n in $(seq $(((runs + 1) / 2 + 1)) "$runs"); do convert_all "$n"; done

run "heapsampler convert --format collapsed, --threads 1" "$heapsampler" convert "$big" \
    --format collapsed --threads 1 -o "$work/big.collapsed"
rm -f "$work/big.collapsed"
# The leak analysis and the report on the JDK's recording (no liveness:
# they read its collections, allocations and flame graph), against top.
run "heapsampler top (the JDK's recording)" sh -c '"$1" top "$2" >/dev/null' sh "$heapsampler" "$big"
run "heapsampler leaks (the JDK's recording)" sh -c '"$1" leaks "$2" >/dev/null' sh "$heapsampler" \
    "$big"
run "heapsampler report (the JDK's recording)" sh -c '"$1" report "$2" -o "$3" 2>/dev/null' sh \
    "$heapsampler" "$big" "$work/big.html"
rm -f "$work/big.html"

echo "after: $(uptime)" >&2

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
echo
median "$all"
samples="heapsampler convert --events jdk.ObjectAllocationSample"
shallow="heapsampler convert (all events), --stack-depth 5"
echo
echo "CSV written by the all-events convert: $csv_bytes bytes"
echo
echo "| ratio | wall | CPU | target |"
echo "|---|---|---|---|"
for jdk in "jfr print --json" "jfr print"; do
    for ours in "$all" "$shallow" "$samples"; do
        target=""
        if [ "$ours" = "$all" ]; then
            target=$([ "$jdk" = "jfr print" ] && echo 20x || echo 100x)
        fi
        echo "| $jdk / $ours | $(ratio "${wall[$jdk]}" "${wall[$ours]}")x |" \
            "$(ratio "${cpu_time[$jdk]}" "${cpu_time[$ours]}")x | $target |"
    done
done

samples_ways "$big" "$big_label"
tlab_runs
agent_runs
