#!/usr/bin/env bash
# What liveness tracking costs under a collector (issue 45): on Temurin 25,
# generational ZGC by default, 1 GiB of heap left to grow (so that peak RSS
# shows the heap used), 5 interleaved rounds of three workloads of young
# garbage (chains of 20,000 nodes, binary trees, a request service), with no
# agent, heapsampler live=false and heapsampler's defaults; with
# ASYNC_PROFILER=path/libasyncProfiler.so, async-profiler alloc=512k,live too.
# Prints bench/overhead.py's tables and, per workload, the collector's: work
# time ratios, allocation stalls, collections, heap after young collections,
# peak RSS, samples tracked. Later options override these (--gc g1,
# --configs ..., --rounds 1 --scale 0.2 for a smoke run); see
# bench/overhead.sh --help.
#
#   bench/zgc-liveness.sh                              # about 25 minutes
#   bench/zgc-liveness.sh --gc shenandoah-gen
#   bench/zgc-liveness.sh --workloads chains,request-service \
#       --configs none,hs-512k-nolive,hs-512k,hs-512k-all,hs-512k-r64,hs-512k-r4
set -euo pipefail
java=${JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
configs=none,hs-512k-nolive,hs-512k
extra=()
if [ -n "${ASYNC_PROFILER:-}" ]; then
    configs+=,ap-512k-live
    extra=(--async-profiler "$ASYNC_PROFILER")
fi
exec python3 "$(dirname "$0")/overhead.py" --java "$java" --gc zgc --grow-heap --heap 1g \
    --rounds 5 --workloads chains,binary-trees,request-service --configs "$configs" \
    "${extra[@]}" "$@"
