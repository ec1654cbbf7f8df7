#!/usr/bin/env bash
# How long a checkout takes to build and to build its tests: from a clean
# target directory, `cargo build --release` (the README's build), then
# `cargo test --workspace --release --no-run` on top of it (the suite's
# build), then the same after touching one file of the converter's library
# (what an edit costs). Each checkout named is measured in turn, in a
# target directory of its own made empty first, so that two checkouts (a
# commit before a change and after it) compare in one run.
#
#   bench/build.sh CHECKOUT...                 # e.g. /tmp/before .
#   RUN_TESTS=1 bench/build.sh CHECKOUT...     # and the suite's run, timed
#   NO_CARRIED=1 bench/build.sh CHECKOUT...    # with HEAPSAMPLER_NO_CARRIED_AGENT=1
#
# Wall seconds and CPU seconds (user plus system, of cargo and all it ran)
# from GNU time, and the number of test executables. The target
# directories go to target/bench-build/ of this checkout and are removed
# after each checkout. Needs GNU time (/usr/bin/time); RUN_TESTS needs what
# the suite needs (README.md).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work="$root/target/bench-build"
mkdir -p "$work"
if [ ! -x /usr/bin/time ]; then
    echo "needs GNU time: apt-get install time" >&2
    exit 1
fi
if [ -n "${NO_CARRIED:-}" ]; then
    export HEAPSAMPLER_NO_CARRIED_AGENT=1
fi

# timed LABEL COMMAND...: one row, wall and CPU seconds.
timed() {
    local label=$1
    shift
    echo "running: $label" >&2
    local outcome=""
    /usr/bin/time -f '%e %U %S' -o "$work/time.txt" "$@" >"$work/log.txt" 2>&1 || {
        tail -20 "$work/log.txt" >&2
        if [ -z "${tolerate_failure:-}" ]; then
            exit 1
        fi
        outcome=" ($(grep -c '\.\.\. FAILED' "$work/log.txt" || true) failed)"
    }
    # GNU time writes a "Command exited" line first when the command fails.
    read -r wall user system < <(tail -1 "$work/time.txt")
    printf '| %s | %s%s | %.0f | %.0f |\n' "$checkout_name" "$label" "$outcome" "$wall" "$(awk -v u="$user" -v s="$system" 'BEGIN { print u + s }')"
}

echo "| checkout | step | wall s | CPU s |"
echo "|---|---|---|---|"
for checkout in "$@"; do
    checkout=$(cd "$checkout" && pwd)
    checkout_name="$(git -C "$checkout" rev-parse --short HEAD)"
    export CARGO_TARGET_DIR="$work/target"
    rm -rf "$CARGO_TARGET_DIR"
    cd "$checkout"
    timed "cargo build --release (clean)" cargo build --release
    timed "cargo test --workspace --release --no-run" cargo test --workspace --release --no-run
    binaries=$(grep -c "Executable" "$work/log.txt" || true)
    touch convert/src/lib.rs
    timed "the same after touching convert/src/lib.rs" cargo test --workspace --release --no-run
    if [ -n "${RUN_TESTS:-}" ]; then
        # A failing test still gives a time: the row says how many failed.
        tolerate_failure=1 timed "cargo test --workspace --release" cargo test --workspace --release --no-fail-fast
    fi
    echo "$checkout_name: $binaries test executables" >&2
    rm -rf "$CARGO_TARGET_DIR"
done
