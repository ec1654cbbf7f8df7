#!/usr/bin/env python3
"""Two builds of the agent, A and B, on the same workloads, alternating
(A B, then B A, ...), each run recorded with perf: the CPU seconds of the
writer thread and of the allocation callback (its stack walk apart), by
the thread groups of bench/overhead.py --perf. For a change to the agent,
the two builds' own work in one run, where a wall-time harness would need
far more rounds to see it.

Build each agent with frame pointers, so that perf's call graphs find the
callback:

    RUSTFLAGS="-C force-frame-pointers=yes" CARGO_TARGET_DIR=target/frame-pointers \\
        cargo build --release -p heapsampler-agent-cdylib

(and the same in a worktree of the other commit, into another target
directory), then:

    bench/ab.py --a OLD/libheapsampler.so --b target/frame-pointers/release/libheapsampler.so
"""

import argparse
import importlib.util
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The harness's workloads, thread groups and perf settings: one definition.
_spec = importlib.util.spec_from_file_location("overhead", os.path.join(ROOT, "bench", "overhead.py"))
overhead = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(overhead)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--a", required=True, help="the first agent library")
    parser.add_argument("--b", required=True, help="the second agent library")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each build per workload (default 3)")
    parser.add_argument("--config", default="hs-32k",
                        choices=[c for c in overhead.CONFIGS if c.startswith("hs-")],
                        help="the configuration of bench/overhead.py to run both builds in (default hs-32k)")
    parser.add_argument("--heap", default="1g", help="the fixed heap, -Xms = -Xmx (default 1g)")
    parser.add_argument("--java", default="java", help="the java to run (default: java on PATH)")
    parser.add_argument("--gc", default="g1", choices=sorted(overhead.COLLECTORS),
                        help="the collector (default g1)")
    parser.add_argument("--workloads", default="binary-trees,deep-recursion",
                        help="comma-separated, from bench/overhead.py's (default binary-trees,deep-recursion)")
    parser.add_argument("--perf-hz", type=int, default=overhead.PERF_HZ,
                        help=f"perf's samples per CPU second (default {overhead.PERF_HZ}; "
                        "9999 to tell builds apart at 512k, where a run's agent work is "
                        "tens of milliseconds)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="heapsampler-ab-") as work:
        classes = os.path.join(work, "classes")
        workloads = args.workloads.split(",")
        sources = [os.path.join(ROOT, "testdata", "workloads", overhead.WORKLOADS[w][0]) for w in workloads]
        subprocess.run(["javac", "-d", classes] + sources, check=True)
        # What overhead.command reads of its arguments.
        run_args = argparse.Namespace(heap=args.heap, scale=1.0, agent_options=None, java=args.java,
                                      gc=args.gc, grow_heap=False, async_profiler=None)
        results = {}
        for round_ in range(args.rounds):
            for name in workloads:
                order = ["a", "b"] if round_ % 2 == 0 else ["b", "a"]
                for build in order:
                    agent = os.path.abspath(getattr(args, build))
                    data = os.path.join(work, "perf.data")
                    java = overhead.command(run_args, name, args.config, agent, classes,
                                            os.path.join(work, "recording.jfr"),
                                            os.path.join(work, "gc.log"))
                    cmd = overhead.perf_record(data, args.perf_hz) + java
                    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                    groups = overhead.perf_groups(data, args.perf_hz, agent)
                    results.setdefault((name, build), []).append(groups)
                    groups["total"] = sum(groups.values())
                    print(f"{name} {build}: writer {groups['writer']:.3f} s, callback {groups['callback']:.3f} s, "
                          f"stack walk {groups['stack_walk']:.3f} s, process {groups['total']:.3f} s", flush=True)
        print()
        print("| workload | build | writer s | callback (without the stack walk) s | stack walk s | process s |")
        print("|---|---|---|---|---|---|")
        for (name, build), runs in sorted(results.items()):
            cells = []
            for group in ("writer", "callback", "stack_walk", "total"):
                values = sorted(r[group] for r in runs)
                cells.append(f"{statistics.median(values):.3f} ({values[0]:.3f} to {values[-1]:.3f})")
            print(f"| {name} | {build} | " + " | ".join(cells) + " |")
        print(f"\nCPU seconds, medians over {args.rounds} runs each (range), {args.config}; "
              "process: every thread of the JVM")


if __name__ == "__main__":
    main()
