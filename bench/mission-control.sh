#!/usr/bin/env bash
# Mission Control's Automated Analysis on heapsampler's recordings and on
# the JDK's own, of the same workload: one row per recording, the rules'
# verdicts counted as `../shared/jmc/jmc-check` prints them (Mission
# Control's own parser and rules, headless), and the Memory Leak page's
# count of old-object events against the objects they describe.
#
# The workload is the bundled `Scenarios paced 3 32 leak` (96 MiB over 3 s
# of wall time, 8 MiB a second kept in a static list, System.gc() at the
# end), in a 256 MiB G1 heap, under JDK 17 (the PATH's java) and Temurin 25
# when it is installed. Files go to target/bench-mission-control/.
#
#   bench/mission-control.sh
#
# Needs java, javac, cargo and Mission Control's jmc-check, named by
# HEAPSAMPLER_JMC_CHECK (else ../shared/jmc beside the checkout, as in CI).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work="$root/target/bench-mission-control"
jmc="${HEAPSAMPLER_JMC_CHECK:-$root/../shared/jmc/jmc-check}"
jdk25=/usr/lib/jvm/temurin-25-jdk-amd64
mkdir -p "$work/classes"
(cd "$root" && cargo build --release --quiet -p heapsampler-cli -p heapsampler-agent-cdylib)
heapsampler="$root/target/release/heapsampler"
javac -d "$work/classes" "$root/testdata/workloads/Scenarios.java"
workload=(-Xmx256m -XX:+UseG1GC -cp "$work/classes" Scenarios paced 3 32)

# heapsampler's recordings: NAME JAVA_HOME FLAGS...
record() {
    local name=$1 home=$2
    shift 2
    PATH="$home/bin:$PATH" "$heapsampler" record -o "$work/$name.jfr" "$@" \
        -- java "${workload[@]}" leak >/dev/null 2>&1
}
# The JDK's own: NAME JAVA_HOME OPTIONS (of -XX:StartFlightRecording)
jdk_record() {
    local name=$1 home=$2 options=$3
    "$home/bin/java" "-XX:StartFlightRecording:filename=$work/$name.jfr,$options" \
        "${workload[@]}" leak >/dev/null 2>&1
}

java_home=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
record hs-default "$java_home"
record hs-roots "$java_home" --roots
record hs-rotated "$java_home" --chunk-age 1s
jdk_record jdk-profile "$java_home" settings=profile
jdk_record jdk-roots "$java_home" settings=profile,path-to-gc-roots=true
names=(hs-default hs-roots hs-rotated jdk-profile jdk-roots)
if [ -x "$jdk25/bin/java" ]; then
    record hs25-default "$jdk25"
    jdk_record jdk25-profile "$jdk25" settings=profile
    names+=(hs25-default jdk25-profile)
fi

echo "| recording | rules ok / info / warning / n/a / exceptions | old-object events / leak objects |"
echo "|---|---|---|"
for name in "${names[@]}"; do
    file="$work/$name.jfr"
    "$jmc" -v "$file" >"$work/$name.rules.txt" 2>&1 || true
    "$jmc" --leaks "$file" 1 >"$work/$name.leaks.txt" 2>&1 || true
    counts=$(sed -n 's/^RESULT: .*rules: \([0-9]*\) ok, \([0-9]*\) info, \([0-9]*\) warning, \([0-9]*\) n\/a, \([0-9]*\) exceptions.*/\1 \/ \2 \/ \3 \/ \4 \/ \5/p' "$work/$name.rules.txt")
    events=$(sed -n 's/^OldObjectSample events=\([0-9]*\).*/\1/p' "$work/$name.leaks.txt")
    objects=$(sed -n 's/^model: leakObjects=\([0-9]*\).*/\1/p' "$work/$name.leaks.txt")
    echo "| $name | ${counts:-unreadable} | ${events:-0} / ${objects:-0} |"
done
echo "(each file's verdicts: $work/NAME.rules.txt; its leak model: NAME.leaks.txt)"
