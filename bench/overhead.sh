#!/usr/bin/env bash
# The agent's overhead side by side with JFR's own allocation sampling and
# the mode=floor floor, on fixed-work workloads (testdata/workloads), with
# interleaved rounds. The driver is bench/overhead.py; see --help.
#
#   bench/overhead.sh                          # the defaults: 11 to 25 minutes
#   bench/overhead.sh --rounds 1 --scale 0.2   # a quick smoke run
set -euo pipefail
exec python3 "$(dirname "$0")/overhead.py" "$@"
