#!/usr/bin/env bash
# Two builds of `heapsampler`, A and B, converting the same recording in one
# run, alternating (A B, then B A, ...): the median wall and CPU time of
# each, their ratio, and whether their outputs are byte for byte the same.
# For a change to the converter: the comparison the machine's noise allows,
# since both builds see the same load.
#
#   bench/convert-ab.sh OLD/heapsampler target/release/heapsampler
#   bench/convert-ab.sh A B RECORDING.jfr     # another recording
#   ROUNDS=9 bench/convert-ab.sh A B          # more rounds (default 5)
#   ARGS="--format collapsed" bench/convert-ab.sh A B   # another conversion
#   COMMAND=flame bench/convert-ab.sh A B      # another command that reads a
#                                              # recording and writes -o OUT
#   COMMAND=top OUTPUT=stdout bench/convert-ab.sh A B   # one that prints
#                                              # (its standard output compared)
#
# The default recording is bench/convert.sh's (run it once first), and the
# default conversion is its main one: every event type to CSV. Needs GNU
# time (/usr/bin/time; Debian package `time`).
set -euo pipefail

a=$(readlink -f "$1")
b=$(readlink -f "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
work="$root/target/bench-convert"
recording=${3:-$(ls "$work"/big-*.jfr 2>/dev/null | head -1)}
rounds=${ROUNDS:-5}
command=${COMMAND:-convert}
read -r -a args <<<"${ARGS:-}"
if [ ! -s "$recording" ]; then
    echo "no recording: run bench/convert.sh first, or name one" >&2
    exit 1
fi
if [ ! -x /usr/bin/time ]; then
    echo "needs GNU time: apt-get install time" >&2
    exit 1
fi
echo "recording: $recording ($(stat -c %s "$recording") bytes); $command ${args[*]:-}" >&2
cat "$recording" >/dev/null # in the page cache for both alike

# convert NAME BINARY OUT: one conversion into OUT, timed; prints "wall cpu".
convert() {
    rm -rf "$3"
    if [ "${OUTPUT:-}" = stdout ]; then
        /usr/bin/time -f '%e %U %S' -o "$work/ab-time.txt" "$2" "$command" "$recording" \
            "${args[@]}" >"$3"
    else
        /usr/bin/time -f '%e %U %S' -o "$work/ab-time.txt" "$2" "$command" "$recording" \
            "${args[@]}" -o "$3"
    fi
    awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$work/ab-time.txt"
}

declare -a a_wall a_cpu b_wall b_cpu
# A warm-up of each, not counted: the first CSV written fills the page cache.
convert a "$a" "$work/ab-a" >/dev/null
convert b "$b" "$work/ab-b" >/dev/null
if diff -r "$work/ab-a" "$work/ab-b" >/dev/null; then
    same="byte for byte the same"
else
    same="DIFFERENT (diff -r $work/ab-a $work/ab-b)"
fi
for round in $(seq "$rounds"); do
    for side in $([ $((round % 2)) -eq 1 ] && echo a b || echo b a); do
        bin=$([ "$side" = a ] && echo "$a" || echo "$b")
        read -r wall cpu < <(convert "$side" "$bin" "$work/ab-$side")
        echo "round $round $side: $wall s wall, $cpu s CPU" >&2
        if [ "$side" = a ]; then a_wall+=("$wall") a_cpu+=("$cpu"); else b_wall+=("$wall") b_cpu+=("$cpu"); fi
    done
done
rm -rf "$work/ab-a" "$work/ab-b"

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
aw=$(median "${a_wall[@]}") ac=$(median "${a_cpu[@]}")
bw=$(median "${b_wall[@]}") bc=$(median "${b_cpu[@]}")
echo
echo "| build | median wall s | median CPU s |"
echo "|---|---|---|"
echo "| A: $a | $aw | $ac |"
echo "| B: $b | $bw | $bc |"
echo
awk -v aw="$aw" -v bw="$bw" -v ac="$ac" -v bc="$bc" -v n="$rounds" \
    'BEGIN { printf "B / A over %d rounds: %.3f wall, %.3f CPU\n", n, bw / aw, bc / ac }'
echo "outputs: $same"
