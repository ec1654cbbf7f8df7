#!/usr/bin/env python3
"""The agent's overhead, side by side with JFR's own allocation sampling.

Runs each workload (a fixed amount of work: testdata/workloads) under each
configuration: no agent; JFR's jdk.ObjectAllocationSample alone at its
default throttle (150/s) and unthrottled; heapsampler at interval 512k and
32k; heapsampler live=false at 512k; and the floor, heapsampler mode=floor
(the JVM's sampling plus GetStackTrace, nothing recorded) at 512k and 32k.
On request, heapsampler mode=discard at 512k: the callback's whole work,
each sample handed to the writer and dropped unwritten, which tells what
handing samples over costs from what writing them costs.
Runs are interleaved: every round runs every workload under every
configuration in turn, so machine noise falls on all of them alike, and in
an order shuffled for each workload and round (the same on every run of
the benchmark), so that no configuration always follows the same other
one: a run that writes a large recording leaves the next one the disk's
write-back.

Every JVM gets the same fixed heap (-Xms = -Xmx, -XX:+AlwaysPreTouch; G1
unless --gc says otherwise), so peak RSS minus the no-agent run's is the
profiler's own memory, not a difference in heap sizing (unless --grow-heap).

Prints, per workload, a Markdown table: median wall time; overhead (the
median over rounds of the run's time over the same round's no-agent time,
minus one, with the range over rounds); overhead over the floor at the same
interval (percent points, and as a ratio of overheads); samples recorded per
second of wall time; file size; peak RSS and its excess over no agent.
Every run's figures go to results.csv in the output directory.

With --perf, every run is recorded with `perf record` (cpu-clock samples,
with call graphs; the agent is built with frame pointers for it) and the
tables give CPU seconds by thread group instead: the application's threads,
GC, JIT, the rest of the JVM (and JFR's threads), and heapsampler's writer
thread; the JVM's threads' time inside the agent's code is split out:
the stack walk (JVMTI GetStackTrace under the allocation callback, which
the floor pays too), and the rest ("callback": the allocation callback's
own work, and the agent's start on the main thread, which loads the
management interface's classes). The agent's own work (the writer, and
that rest) is so measured directly, and stays readable when the machine is
too busy for wall times to be.

Every run also logs its collections (-Xlog:gc), and a second table per
workload says what the collector did: the workload's own work time (its
"work: N ms" line, else wall time) as a ratio to no agent and to
heapsampler with liveness off, allocation stalls, young and major
collections, the heap after young collections, peak RSS, and the samples
heapsampler tracked for liveness. --java and --gc choose the JVM and the
collector (bench/zgc-liveness.sh runs Temurin 25 with generational ZGC),
--grow-heap lets the heap grow instead of fixing it, and --async-profiler
adds async-profiler's alloc=512k,live mode (ap-512k-live).

Run it as bench/overhead.sh (which calls this file); --help for options.
"""

import argparse
import csv
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

# name -> (source file, class, arguments at scale s)
WORKLOADS = {
    "binary-trees": ("BinaryTrees.java", "BinaryTrees",
                     lambda s: [max(1, round(9 * s)), 20]),
    "allocation-mix": ("AllocationMixFixed.java", "AllocationMixFixed",
                       lambda s: [max(1, round(54 * s)), 4]),
    "request-service": ("RequestService.java", "RequestService",
                        lambda s: [max(1, round(300 * s)), 4, 2]),
    "deep-recursion": ("DeepRecursion.java", "DeepRecursion",
                       lambda s: [max(1, round(1500 * s)), 2]),
    "chains": ("Chains.java", "Chains",
               lambda s: [max(1, round(20 * s)), 20000, 1, 0]),
    "chains-leak": ("Chains.java", "Chains",
                    lambda s: [max(1, round(20 * s)), 20000, 1, 10]),
}

# Run only when --workloads names them.
WORKLOADS_ON_REQUEST = {"chains", "chains-leak"}

# --gc name -> the JVM's options for that collector.
COLLECTORS = {
    "g1": ["-XX:+UseG1GC"],
    "zgc": ["-XX:+UseZGC"],  # generational from JDK 24 on
    "shenandoah-gen": ["-XX:+UseShenandoahGC", "-XX:ShenandoahGCMode=generational"],
    "parallel": ["-XX:+UseParallelGC"],
}

JFC = os.path.join(ROOT, "testdata", "jfc")

# name -> (description, JVM options with {file} and {agent}); in run order.
CONFIGS = {
    "none": ("no agent", []),
    "jfr-150/s": ("JFR jdk.ObjectAllocationSample, default throttle 150/s",
                  ["-XX:StartFlightRecording=filename={file},settings="
                   + os.path.join(JFC, "allocation-sample-default.jfc")]),
    "jfr-unthrottled": ("JFR jdk.ObjectAllocationSample, throttle off",
                        ["-XX:StartFlightRecording=filename={file},settings="
                         + os.path.join(JFC, "allocation-sample-unthrottled.jfc")]),
    "hs-512k": ("heapsampler interval=512k",
                ["-agentpath:{agent}=file={file},interval=512k,log=quiet"]),
    "hs-512k-nolive": ("heapsampler interval=512k live=false",
                       ["-agentpath:{agent}=file={file},interval=512k,live=false,log=quiet"]),
    "hs-32k": ("heapsampler interval=32k",
               ["-agentpath:{agent}=file={file},interval=32k,log=quiet"]),
    "hs-32k-nolive": ("heapsampler interval=32k live=false",
                      ["-agentpath:{agent}=file={file},interval=32k,live=false,log=quiet"]),
    "hs-512k-discard": ("heapsampler interval=512k mode=discard: handed over, not written",
                        ["-agentpath:{agent}=file={file},interval=512k,mode=discard,log=quiet"]),
    "floor-512k": ("floor: heapsampler mode=floor interval=512k",
                   ["-agentpath:{agent}=file={file},interval=512k,mode=floor,log=quiet"]),
    "floor-32k": ("floor: heapsampler mode=floor interval=32k",
                  ["-agentpath:{agent}=file={file},interval=32k,mode=floor,log=quiet"]),
    "hs-512k-all": ("heapsampler interval=512k live_rate=all: every sample tracked",
                    ["-agentpath:{agent}=file={file},interval=512k,live_rate=all,log=quiet"]),
    "hs-512k-r64": ("heapsampler interval=512k live_rate=64",
                    ["-agentpath:{agent}=file={file},interval=512k,live_rate=64,log=quiet"]),
    "hs-512k-r4": ("heapsampler interval=512k live_rate=4",
                   ["-agentpath:{agent}=file={file},interval=512k,live_rate=4,log=quiet"]),
    "base-512k": ("another build of heapsampler (--baseline) interval=512k",
                  ["-agentpath:{baseline}=file={file},interval=512k,log=quiet"]),
    "base-32k": ("another build of heapsampler (--baseline) interval=32k",
                 ["-agentpath:{baseline}=file={file},interval=32k,log=quiet"]),
    "ap-512k-live": ("async-profiler alloc=512k,live (--async-profiler)",
                     ["-agentpath:{async_profiler}=start,event=alloc,alloc=512k,live,file={file}"]),
}

# Run only when --configs names them.
ON_REQUEST = {"hs-512k-discard", "hs-512k-all", "hs-512k-r64", "hs-512k-r4", "base-512k", "base-32k",
              "ap-512k-live"}

# Which floor each configuration is compared with.
FLOOR_OF = {
    "jfr-150/s": "floor-512k",
    "jfr-unthrottled": "floor-512k",
    "hs-512k": "floor-512k",
    "hs-512k-nolive": "floor-512k",
    "hs-512k-discard": "floor-512k",
    "hs-32k": "floor-32k",
    "hs-32k-nolive": "floor-32k",
    "hs-512k-all": "floor-512k",
    "hs-512k-r64": "floor-512k",
    "hs-512k-r4": "floor-512k",
    "base-512k": "floor-512k",
    "base-32k": "floor-32k",
}


def log(message):
    print(message, file=sys.stderr, flush=True)


def run(command, **kwargs):
    log("+ " + " ".join(command))
    subprocess.run(command, check=True, **kwargs)


def parse_args():
    parser = argparse.ArgumentParser(
        prog="bench/overhead.sh",
        description="Measure heapsampler's overhead against no agent, JFR's own "
        "allocation sampling and the mode=floor floor, on fixed-work Java "
        "workloads, interleaved over several rounds. With the defaults it "
        "takes about 11 minutes on 2 quiet cores, 20 or more on busy ones.",
        epilog="Workloads: " + ", ".join(WORKLOADS) + ". Configurations: "
        + ", ".join(CONFIGS) + " (" + ", ".join(sorted(ON_REQUEST))
        + " only when --configs names it). Example (a quick smoke run): "
        "bench/overhead.sh --rounds 1 --scale 0.2",
    )
    parser.add_argument("--rounds", type=int, default=3,
                        help="interleaved rounds (default 3)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="work per workload, relative to the default sizes "
                        "(4 to 7 s each without an agent on 2 quiet cores; default 1.0)")
    parser.add_argument("--workloads",
                        default=",".join(w for w in WORKLOADS if w not in WORKLOADS_ON_REQUEST),
                        help="comma-separated subset of the workloads")
    parser.add_argument("--configs", default=",".join(c for c in CONFIGS if c not in ON_REQUEST),
                        help="comma-separated subset of the configurations "
                        "(none is always run: it is the base)")
    parser.add_argument("--heap", default="1g",
                        help="the fixed heap, -Xms = -Xmx (default 1g)")
    parser.add_argument("--grow-heap", action="store_true",
                        help="give only -Xmx (--heap), without -Xms and AlwaysPreTouch: the heap "
                        "grows as the collector needs, and peak RSS includes what it used")
    parser.add_argument("--java", default="java",
                        help="the java to run (its javac compiles the workloads and its jfr "
                        "reads the agent's counters; default: java on PATH)")
    parser.add_argument("--gc", default="g1", choices=sorted(COLLECTORS),
                        help="the collector (default g1; zgc is generational from JDK 24 on)")
    parser.add_argument("--async-profiler", metavar="SO",
                        help="async-profiler's libasyncProfiler.so, for the ap-512k-live configuration")
    parser.add_argument("--baseline", metavar="SO",
                        help="another build's libheapsampler.so (main's, say), for the base-512k and "
                        "base-32k configurations: two builds interleaved in one run")
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds a run may take before it is killed and counted as failed "
                        "(default 600)")
    parser.add_argument("--agent-options", default="",
                        help="more heapsampler options for every heapsampler and floor "
                        "configuration, comma-separated (e.g. depth=8)")
    parser.add_argument("--out", help="keep results.csv, the workloads' output "
                        "and (with --keep) the recordings here (default: a "
                        "temporary directory, removed at the end)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the recordings (else each is deleted once counted)")
    parser.add_argument("--no-build", action="store_true",
                        help="use target/release as it is, without cargo build")
    parser.add_argument("--perf", action="store_true",
                        help="record every run with perf (cpu-clock, --perf-hz, call graphs) "
                        "and report where the CPU time went, by thread group (the "
                        "application's threads, and in them heapsampler's allocation "
                        "callback; GC, JIT, the rest of the JVM and JFR, heapsampler's "
                        "writer), instead of wall times: less disturbed by a busy machine")
    parser.add_argument("--perf-hz", type=int, default=PERF_HZ,
                        help=f"perf's samples per CPU second with --perf (default {PERF_HZ}). "
                        "A sample stands for 1/HZ s: at 999 Hz, 1 ms, which is 0.1 µs a "
                        "sample of request-service's 9,500 at 512k; 9999 resolves the 512k "
                        "rows ten times finer, at some cost to every run's caches")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the commands of the first round and stop")
    parser.add_argument("--from-results", metavar="CSV",
                        help="run nothing: print the tables of an earlier run's results.csv "
                        "(with --perf if it was a --perf run; --workloads and --configs "
                        "choose the rows, as for a run)")
    args = parser.parse_args()
    args.workloads = [w for w in args.workloads.split(",") if w]
    args.configs = [c for c in args.configs.split(",") if c]
    for w in args.workloads:
        if w not in WORKLOADS:
            parser.error(f"unknown workload {w!r}")
    for c in args.configs:
        if c not in CONFIGS:
            parser.error(f"unknown configuration {c!r}")
    if "none" not in args.configs:
        args.configs.insert(0, "none")
    args.configs = [c for c in CONFIGS if c in args.configs]  # run order
    if "ap-512k-live" in args.configs and not args.async_profiler:
        parser.error("ap-512k-live needs --async-profiler")
    if args.async_profiler:
        args.async_profiler = os.path.abspath(args.async_profiler)
    if any(c.startswith("base-") for c in args.configs) and not args.baseline:
        parser.error("base-512k and base-32k need --baseline")
    if args.baseline:
        args.baseline = os.path.abspath(args.baseline)
    if args.rounds < 1 or args.scale <= 0 or args.perf_hz < 1:
        parser.error("--rounds, --scale and --perf-hz must be positive")
    return args


def prepare(args, work):
    """Builds the agent and the CLI, snapshots them, compiles the workloads."""
    # With --perf, an agent with frame pointers, so that perf's call graphs
    # can tell the callback's frames; in a target directory of its own.
    agent_target = os.path.join(ROOT, "target", "frame-pointers" if args.perf else "")
    if not args.no_build:
        run(["cargo", "build", "--release", "-p", "heapsampler-agent-cdylib",
             "-p", "heapsampler-cli"], cwd=ROOT)
        if args.perf:
            run(["cargo", "build", "--release", "-p", "heapsampler-agent-cdylib"], cwd=ROOT,
                env=dict(os.environ, CARGO_TARGET_DIR=agent_target,
                         RUSTFLAGS="-C force-frame-pointers=yes"))
    # Copies, so that a rebuild during the run does not change what is measured.
    agent = os.path.join(work, "libheapsampler.so")
    cli = os.path.join(work, "heapsampler")
    shutil.copy2(os.path.join(agent_target, "release", "libheapsampler.so"), agent)
    shutil.copy2(os.path.join(ROOT, "target", "release", "heapsampler"), cli)
    classes = os.path.join(work, "classes")
    sources = sorted({os.path.join(ROOT, "testdata", "workloads", WORKLOADS[w][0])
                      for w in args.workloads})
    run([jdk_tool(args.java, "javac"), "-d", classes] + sources)
    return agent, cli, classes


def jdk_tool(java, tool):
    """The JDK tool `tool` (javac, jfr) of the same JDK as `java`."""
    if os.sep not in java:
        return tool
    return os.path.join(os.path.dirname(java), tool)


def built_from():
    """The commit the agent was built from, and whether its sources differed."""
    def git(*args):
        return subprocess.run(["git", "-C", ROOT] + list(args), capture_output=True,
                              text=True).stdout.strip()
    commit = git("log", "-1", "--format=%h %s") or "unknown commit"
    dirty = git("status", "--porcelain", "--", "agent", "core", "jfr-writer")
    return commit + (" (with uncommitted changes to the agent's crates)" if dirty else "")


def floor_accepted(java, agent, work):
    probe = subprocess.run(
        [java, f"-agentpath:{agent}=file={work}/probe.jfr,mode=floor,log=quiet", "-version"],
        capture_output=True, text=True)
    return probe.returncode == 0


def command(args, workload, config, agent, classes, file, gc_log):
    _, main_class, sizes = WORKLOADS[workload]
    options = [o.format(file=file, agent=agent, async_profiler=args.async_profiler,
                        baseline=getattr(args, "baseline", None))
               for o in CONFIGS[config][1]]
    if args.agent_options:
        options = [o + "," + args.agent_options if o.startswith("-agentpath:" + agent) else o
                   for o in options]
    heap = ([f"-Xmx{args.heap}"] if args.grow_heap
            else [f"-Xms{args.heap}", f"-Xmx{args.heap}", "-XX:+AlwaysPreTouch"])
    return ([args.java] + COLLECTORS[args.gc] + heap + [f"-Xlog:gc:file={gc_log}"] + options
            + ["-cp", classes, main_class] + [str(a) for a in sizes(args.scale)])


PERF_HZ = 999
GROUPS = ("app", "stack_walk", "callback", "gc", "jit", "jvm", "writer")


def group_of(comm):
    """The thread group of a thread, by its (15-character) name."""
    if comm.startswith("heapsampler"):
        return "writer"
    if comm.startswith(("GC Thread", "G1 ")):
        return "gc"
    if comm.startswith(("C1 Compiler", "C2 Compiler")):
        return "jit"
    if comm.startswith(("VM ", "JFR", "Service Thread", "Monitor Deflati", "Signal Dispatch",
                        "Finalizer", "Reference Handl", "Common-Cleaner", "Notification Th",
                        "Sweeper thread", "Attach Listener")):
        return "jvm"
    return "app"  # the workload's threads, and "java", the main thread


def perf_record(perf_data, hz):
    """The command prefix that records a run with perf: cpu-clock samples
    at hz per CPU second, with call graphs."""
    return ["perf", "record", "-q", "-g", "-F", str(hz), "-o", perf_data, "--"]


def perf_groups(perf_data, hz, agent):
    """CPU seconds per thread group in a perf recording of cpu-clock samples
    with call graphs. A sample of a thread other than the writer with a
    frame in the agent's library (at path `agent`) counts as "stack_walk"
    under JVMTI GetStackTrace, as "callback" otherwise: the allocation
    callback's own work, the agent's other callbacks, and its start
    (`Agent_OnLoad`, `VMInit`) on the main thread, which the floor and
    heapsampler both pay, but not alike (with liveness on the start loads
    the management interface's classes, which the writer loads
    otherwise)."""
    out = subprocess.run(["perf", "script", "-F", "comm,ip,sym,dso", "-i", perf_data],
                         capture_output=True, text=True).stdout
    seconds = dict.fromkeys(GROUPS, 0.0)
    in_agent = f"({os.path.abspath(agent)})"
    # A sample: its thread's name on a line, its frames indented below,
    # then an empty line.
    for sample in out.split("\n\n"):
        lines = sample.strip("\n").split("\n")
        if not lines or not lines[0].strip():
            continue
        group = group_of(lines[0].strip())
        frames = "\n".join(lines[1:])
        if group != "writer" and in_agent in frames:
            group = "stack_walk" if "GetStackTrace" in frames else "callback"
        seconds[group] += 1 / hz
    return seconds


def measure(cmd, stdout_path, timeout, perf_data=None, perf_hz=PERF_HZ):
    """Runs cmd, killed after `timeout` s; returns (exit status, wall s,
    user+sys s, peak RSS KiB)."""
    if perf_data:
        cmd = perf_record(perf_data, perf_hz) + cmd
    with open(stdout_path, "w") as out:
        start = time.monotonic()
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        deadline = threading.Timer(timeout, process.kill)
        deadline.start()
        _, status, usage = os.wait4(process.pid, 0)
        deadline.cancel()
        wall = time.monotonic() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def recorded(cli, file):
    """(samples, event types) of a recording, by heapsampler summary."""
    if not os.path.exists(file):
        return None, []
    text = subprocess.run([cli, "summary", file], capture_output=True, text=True).stdout
    counts = dict(re.findall(r"^\s+([\w.]+)\s+(\d+)\s+\d+\s*$", text, re.M))
    # async-profiler's alloc mode writes the JDK's TLAB events.
    samples = sum(int(counts.get(t, 0)) for t in ("jdk.ObjectAllocationSample",
                                                   "jdk.ObjectAllocationInNewTLAB",
                                                   "jdk.ObjectAllocationOutsideTLAB"))
    agent = re.search(r"heapsampler agent: (\d+) samples", text)
    if samples == 0 and agent:  # mode=floor: counted, not written
        samples = int(agent.group(1))
    return samples, sorted(counts)


def tracked(java, file):
    """(samples tracked for liveness, the most tracked at once at a flush)
    of a heapsampler recording, from its agent's counters
    (heapsampler.AgentStatistics: drawnSamples, or before it samples less
    untrackedObjects; trackedObjects) as the JDK's jfr reads them; (None,
    None) without them."""
    if not os.path.exists(file):
        return None, None
    text = subprocess.run([jdk_tool(java, "jfr"), "print", "--events",
                           "heapsampler.AgentStatistics", file],
                          capture_output=True, text=True).stdout

    def values(field):
        return [int(v) for v in re.findall(rf"^\s+{field} = (\d+)\s*$", text, re.M)]

    samples, untracked, now = values("samples"), values("untrackedObjects"), values("trackedObjects")
    drawn = values("drawnSamples")
    if drawn:
        return drawn[-1], max(now, default=0)
    if not samples or not untracked:
        return None, None
    return samples[-1] - untracked[-1], max(now, default=0)


# A collection's line with its heap before and after (-Xlog:gc): ZGC's
# "GC(3) Minor Collection (Allocation Rate) 756M(74%)->12M(1%) 0.006s",
# G1's and Parallel's "GC(3) Pause Young (Normal) (G1 Evacuation Pause)
# 100M->20M(1024M) 5.1ms", Shenandoah's phases "GC(3) Concurrent cleanup
# (Young) 875M->19M(995M) 0.257ms" (the last of a cycle is its end).
GC_LINE = re.compile(r"GC\((\d+)\) (.*?) (\d+)M(?:\(\d+%\))?->(\d+)M")


def collector_log(path):
    """What a run's -Xlog:gc says, as a dict: allocation stalls (ZGC's
    "Allocation Stall (thread) 1.2ms" lines: how many, and their ms in
    all), ZGC's relocation stalls; collections by kind (young: ZGC's
    minor, G1's and Parallel's young and mixed pauses, Shenandoah's young
    cycles; major: ZGC's major, full pauses, Shenandoah's old and global
    cycles; ZGC's majors aborted at the exit apart), degenerated or full
    pauses not asked for (not System.gc() or JVMTI's), and the median
    heap after a young collection, MB."""
    stalls, stall_ms, relocation_stalls, aborted = 0, 0.0, 0, 0
    last = {}  # collection id -> (description, heap after, MB) of its last line
    with open(path, errors="replace") as log:
        for line in log:
            stall = re.search(r"Allocation Stall \(.*\) ([\d.]+)ms", line)
            if stall:
                stalls += 1
                stall_ms += float(stall.group(1))
            elif "Relocation Stall" in line:
                relocation_stalls += 1
            elif re.search(r"GC\(\d+\) Major Collection .*Aborted", line):
                aborted += 1
            else:
                collection = GC_LINE.search(line)
                if collection:
                    last[int(collection.group(1))] = (collection.group(2), int(collection.group(4)))
    young_after, major, full = [], 0, 0
    for description, after in last.values():
        if "Degenerated" in description or ("Pause Full" in description and not re.search(
                r"System.gc|JvmtiEnv|Heap Dump|Diagnostic Command", description)):
            full += 1
        if re.search(r"Major Collection|Pause Full|\((Old|Global)\)", description):
            major += 1
        elif re.search(r"Minor Collection|Pause Young|\(Young\)", description):
            young_after.append(after)
    return dict(stalls=stalls, stall_ms=stall_ms, relocation_stalls=relocation_stalls,
                young=len(young_after), major=major, major_aborted=aborted, full=full,
                young_after_mb=median(young_after))


COLLECTOR_FIELDS = ("stalls", "stall_ms", "relocation_stalls", "young", "major", "major_aborted",
                    "full", "young_after_mb")


def java_version(java):
    """The JVM's version line (java -version's first), for the report."""
    text = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
    return text.splitlines()[0] if text else "unknown java"


def work_time(stdout_path):
    """The workload's own "work: N ms" line, in seconds; None without one."""
    with open(stdout_path, errors="replace") as out:
        found = re.findall(r"^work: (\d+) ms$", out.read(), re.M)
    return int(found[-1]) / 1000 if found else None


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, spec, missing="n/a"):
    return missing if value is None else format(value, spec)


def report(args, rows):
    """The Markdown tables, from every run's row."""
    by = {}
    for row in rows:
        if row["status"] == 0:
            by.setdefault((row["workload"], row["config"]), []).append(row)
    out = []
    for workload in args.workloads:
        base = {r["round"]: r for r in by.get((workload, "none"), [])}
        if not base:
            continue
        _, _, sizes = WORKLOADS[workload]
        out.append(f"\n#### {workload} ({WORKLOADS[workload][1]} "
                   + " ".join(str(a) for a in sizes(args.scale)) + ")\n")
        out.append("| configuration | time (s) | overhead | over floor | CPU overhead | samples/s "
                   "| file MB | peak RSS MiB | RSS over none MiB |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for config in args.configs:
            runs = by.get((workload, config), [])
            if not runs:
                out.append(f"| {config} | failed or not run | | | | | | | |")
                continue
            ratios = [r["wall_s"] / base[r["round"]]["wall_s"] - 1 for r in runs if r["round"] in base]
            overhead = median(ratios)
            spread = (f" ({min(ratios) * 100:+.1f} to {max(ratios) * 100:+.1f})"
                      if len(ratios) > 1 else "")
            over_floor = ""
            floor = FLOOR_OF.get(config)
            floor_runs = {r["round"]: r for r in by.get((workload, floor), [])}
            if floor and floor_runs:
                points = median([(r["wall_s"] - floor_runs[r["round"]]["wall_s"]) / base[r["round"]]["wall_s"]
                                 for r in runs if r["round"] in floor_runs and r["round"] in base])
                floor_overhead = median([f["wall_s"] / base[f["round"]]["wall_s"] - 1
                                         for f in floor_runs.values() if f["round"] in base])
                ratio = (f", x{(overhead / floor_overhead):.2f}"
                         if config == "hs-32k" and floor_overhead and floor_overhead > 0.005 else "")
                cpu_points = median([(r["cpu_s"] - floor_runs[r["round"]]["cpu_s"]) / base[r["round"]]["cpu_s"]
                                     for r in runs if r["round"] in floor_runs and r["round"] in base])
                over_floor = f"{points * 100:+.1f} pt{ratio} (CPU {cpu_points * 100:+.1f})"
            rate = median([r["samples"] / r["wall_s"] for r in runs if r["samples"] is not None])
            size = median([r["file_bytes"] for r in runs if r["file_bytes"] is not None])
            rss = median([r["rss_kib"] for r in runs])
            cpu = median([r["cpu_s"] / base[r["round"]]["cpu_s"] - 1 for r in runs if r["round"] in base])
            rss_over = median([(r["rss_kib"] - base[r["round"]]["rss_kib"]) for r in runs if r["round"] in base])
            out.append("| {} | {:.2f} | {} | {} | {} | {} | {} | {:.0f} | {} |".format(
                config, median([r["wall_s"] for r in runs]),
                "base" if config == "none" else f"{overhead * 100:+.1f}%{spread}",
                over_floor,
                "" if config == "none" else f"{cpu * 100:+.1f}%",
                fmt(rate, ",.0f", ""),
                fmt(None if size is None else size / 1e6, ".1f", ""),
                rss / 1024, "" if config == "none" else f"{rss_over / 1024:+.0f}"))
    return "\n".join(out)


def report_perf(args, rows):
    """The Markdown tables of --perf: CPU seconds by thread group, and the
    agent's own work (its writer, and its allocation callback without the
    stack walk) as a share of the no-agent run's CPU time."""
    out = []
    for workload in args.workloads:
        by = {}
        for row in rows:
            if row["status"] == 0 and row["workload"] == workload:
                by.setdefault(row["config"], []).append(row)
        if "none" not in by:
            continue
        _, _, sizes = WORKLOADS[workload]
        out.append(f"\n#### {workload} ({WORKLOADS[workload][1]} "
                   + " ".join(str(a) for a in sizes(args.scale)) + "), CPU seconds by thread group\n")
        out.append("| configuration | all | app threads | callback: stack walk | callback: the rest "
                   "| GC | JIT | rest of JVM, JFR | writer | over none | CPU us per sample over none "
                   "| agent's own work (callback rest + writer) | own work over the floor's |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        medians = {config: {g: median([r["cpu_" + g] for r in runs]) for g in GROUPS}
                   for config, runs in by.items()}
        base = sum(medians["none"].values())

        def own(config):
            return medians[config]["callback"] + medians[config]["writer"]

        for config in args.configs:
            if config not in by:
                continue
            cpu = medians[config]
            total = sum(cpu.values())
            samples = median([r["samples"] for r in by[config] if r["samples"] is not None])
            over, per_sample, own_share, own_over = "", "", "", ""
            if config != "none":
                over = f"{total - base:+.2f}"
                if samples:
                    per_sample = f"{(total - base) / samples * 1e6:.1f}"
                own_share = f"{own(config):.2f} s, {100 * own(config) / base:.2f}%"
                floor = FLOOR_OF.get(config)
                if floor in by:
                    own_over = f"{100 * (own(config) - own(floor)) / base:+.2f} pt"
            out.append(f"| {config} | {total:.2f} | "
                       + " | ".join(f"{cpu[g]:.2f}" for g in GROUPS)
                       + f" | {over} | {per_sample} | {own_share} | {own_over} |")
    return "\n".join(out)


def report_per_sample(args, rows):
    """Issue 18's measure: the agent's own CPU (its work on the JVM's
    threads without the stack walk, and its writer) beyond the floor's at the same interval,
    per sample, from each round's pair of runs; the median over rounds.
    The rounds are shown too: on 2 cores they spread by more than the
    targets' margins."""
    out = ["\n#### The agent's own CPU a sample beyond the floor's\n",
           "| workload | configuration | samples | µs a sample (rounds) | callback's share "
           "| writer's share |",
           "|---|---|---|---|---|---|"]
    for workload in args.workloads:
        runs = {(r["config"], r["round"]): r for r in rows
                if r["status"] == 0 and r["workload"] == workload}
        for config in args.configs:
            floor = FLOOR_OF.get(config)
            if not config.startswith("hs-") or floor is None:
                continue
            pairs = [(hs, runs[(floor, round_)]) for (name, round_), hs in sorted(runs.items())
                     if name == config and (floor, round_) in runs and hs["samples"]]
            if not pairs:
                continue

            def beyond(group, hs, fl):
                return (hs["cpu_" + group] - fl["cpu_" + group]) / hs["samples"] * 1e6

            totals = [beyond("callback", hs, fl) + beyond("writer", hs, fl) for hs, fl in pairs]
            out.append(f"| {workload} | {config} | {median([hs['samples'] for hs, _ in pairs]):,.0f} "
                       f"| {median(totals):.2f} ({', '.join(f'{t:.2f}' for t in totals)}) "
                       f"| {median([beyond('callback', hs, fl) for hs, fl in pairs]):.2f} "
                       f"| {median([beyond('writer', hs, fl) for hs, fl in pairs]):.2f} |")
    if len(out) == 3:
        return ""
    out.append("\nµs a sample: per round, (callback's rest + writer) of the configuration minus "
               "the same of its floor, over the configuration's samples; the median over rounds "
               "(each round's figure in brackets). The shares are the medians of each part alone.")
    return "\n".join(out)


def report_collector(args, rows):
    """The Markdown tables of what the collector did, from each run's
    -Xlog:gc and the workload's own work time: the time ratios (to no
    agent, and to heapsampler with liveness off), allocation stalls,
    collections, the heap after young collections, peak RSS, and the
    samples tracked for liveness."""
    out = []
    for workload in args.workloads:
        runs = {}
        for row in rows:
            if row["status"] == 0 and row["workload"] == workload:
                runs.setdefault(row["config"], {})[row["round"]] = row
        if "none" not in runs:
            continue

        def time_of(row):
            return row["work_s"] if row.get("work_s") is not None else row["wall_s"]

        def ratio(config, base):
            ratios = [time_of(r) / time_of(runs[base][n]) for n, r in runs[config].items()
                      if n in runs.get(base, {})]
            if not ratios:
                return ""
            spread = f" ({min(ratios):.2f} to {max(ratios):.2f})" if len(ratios) > 1 else ""
            return f"{median(ratios):.3f}{spread}"

        worked = all(r.get("work_s") is not None for c in runs.values() for r in c.values())
        _, _, sizes = WORKLOADS[workload]
        out.append(f"\n#### {workload} ({WORKLOADS[workload][1]} "
                   + " ".join(str(a) for a in sizes(args.scale)) + f"), {args.gc}: the collector\n")
        out.append(f"| configuration | {'work' if worked else 'wall'} time (s) | to none "
                   "| to hs-512k-nolive | allocation stalls (ms) | young GCs | major GCs (aborted) "
                   "| full or degenerated | heap after young MB | peak RSS MiB | tracked/s "
                   "| most tracked at once |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for config in args.configs:
            if config not in runs:
                out.append(f"| {config} | failed or not run | | | | | | | | | | |")
                continue
            got = list(runs[config].values())

            def med(key, spec=".0f"):
                return fmt(median([r.get(key) for r in got]), spec, "")

            per_second = median([r["tracked"] / time_of(r) for r in got if r.get("tracked") is not None])
            out.append("| {} | {:.2f} | {} | {} | {} ({}) | {} | {} ({}) | {} | {} | {:.0f} | {} | {} |".format(
                config, median([time_of(r) for r in got]),
                "base" if config == "none" else ratio(config, "none"),
                ratio(config, "hs-512k-nolive") if config != "hs-512k-nolive" and "hs-512k-nolive" in runs else "",
                med("stalls"), med("stall_ms"), med("young"), med("major"), med("major_aborted"),
                med("full"), med("young_after_mb"), median([r["rss_kib"] for r in got]) / 1024,
                fmt(per_second, ",.0f", ""), med("tracked_peak", ",.0f")))
    if out:
        out.append("\nwork time: the workload's own (its \"work: N ms\" line), where every run "
                   "printed one, else wall time; ratios: median over rounds of the run's time over the same "
                   "round's base (range over rounds); every other column the median over rounds "
                   "of each run's figure (heap after young: each run's median; major GCs include "
                   "ZGC's 3 warm-up majors at 10, 20 and 30% of the heap)")
    return "\n".join(out)


def tables(args, rows):
    """The report of a run's rows: CPU by thread group and per sample for a
    --perf run, wall time and memory otherwise; and what the collector did."""
    main = report_perf(args, rows) + report_per_sample(args, rows) if args.perf else report(args, rows)
    return main + "\n" + report_collector(args, rows)


def read_results(path):
    """The rows of a results.csv, typed as a run makes them."""
    rows = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            typed = {}
            for key, value in row.items():
                if key in ("workload", "config"):
                    typed[key] = value
                elif key in ("round", "status", "samples", "file_bytes", "tracked", "tracked_peak",
                             "stalls", "relocation_stalls", "young", "major", "major_aborted",
                             "full"):
                    typed[key] = int(value) if value else None
                else:
                    typed[key] = float(value) if value else None
            rows.append(typed)
    return rows


def main():
    args = parse_args()
    if args.from_results:
        try:
            rows = read_results(args.from_results)
        except (OSError, ValueError, csv.Error) as error:
            sys.exit(f"bench/overhead.sh: cannot read {args.from_results}: {error}")
        if not rows:
            sys.exit(f"bench/overhead.sh: {args.from_results} has no runs")
        if args.perf and "cpu_writer" not in rows[0]:
            sys.exit(f"bench/overhead.sh: {args.from_results} is not from a --perf run: "
                     "leave --perf out")
        print(tables(args, rows))
        return
    temporary = args.out is None
    work = tempfile.mkdtemp(prefix="heapsampler-overhead-") if temporary else os.path.abspath(args.out)
    os.makedirs(work, exist_ok=True)
    try:
        agent, cli, classes = prepare(args, work)
        commit = built_from()
        if any(c.startswith("floor") for c in args.configs) and not floor_accepted(args.java, agent, work):
            log("the agent does not accept mode=floor yet: the floor configurations are left out")
            args.configs = [c for c in args.configs if not c.startswith("floor")]
        if args.dry_run:
            for workload in args.workloads:
                for config in args.configs:
                    print(" ".join(command(args, workload, config, agent, classes,
                                           os.path.join(work, "FILE.jfr"),
                                           os.path.join(work, "FILE.gc.log"))))
            return
        log(f"{args.rounds} rounds x {len(args.workloads)} workloads x {len(args.configs)} "
            f"configurations, heap {args.heap}, scale {args.scale}; working in {work}")
        rows = []
        types = {}
        started = time.monotonic()
        total = args.rounds * len(args.workloads) * len(args.configs)
        for round_ in range(1, args.rounds + 1):
            for workload in args.workloads:
                order = list(args.configs)
                random.Random(f"{workload} {round_}").shuffle(order)
                for config in order:
                    name = f"{workload}-{config.replace('/', '')}-{round_}"
                    file = os.path.join(work, name + ".jfr")
                    gc_log = os.path.join(work, name + ".gc.log")
                    cmd = command(args, workload, config, agent, classes, file, gc_log)
                    with open("/proc/loadavg") as f:
                        load = float(f.read().split()[0])
                    perf_data = os.path.join(work, name + ".perf") if args.perf else None
                    status, wall, cpu, rss = measure(cmd, os.path.join(work, name + ".out"),
                                                     args.timeout, perf_data, args.perf_hz)
                    groups = {}
                    if perf_data:
                        groups = {"cpu_" + g: s for g, s in perf_groups(perf_data, args.perf_hz, agent).items()}
                        if not args.keep:
                            os.remove(perf_data)
                    samples, seen = recorded(cli, file)
                    gc = collector_log(gc_log) if os.path.exists(gc_log) else {}
                    if os.path.exists(gc_log) and not args.keep:
                        os.remove(gc_log)
                    tracks = config.startswith("hs-") and not any(
                        "live=false" in o or "mode=" in o for o in CONFIGS[config][1])
                    live, peak = tracked(args.java, file) if tracks else (None, None)
                    if config != "none" and samples is None:
                        status = status or -1  # no recording: count the run as failed
                    types.setdefault(config, set()).update(seen)
                    size = os.path.getsize(file) if os.path.exists(file) else None
                    if os.path.exists(file) and not args.keep:
                        os.remove(file)
                    rows.append(dict(round=round_, workload=workload, config=config, status=status,
                                     wall_s=wall, cpu_s=cpu, rss_kib=rss, samples=samples,
                                     file_bytes=size, load_before=load,
                                     work_s=work_time(os.path.join(work, name + ".out")),
                                     tracked=live, tracked_peak=peak,
                                     **{k: gc.get(k) for k in COLLECTOR_FIELDS}, **groups))
                    done = len(rows)
                    eta = (time.monotonic() - started) / done * (total - done)
                    log(f"[{done}/{total}] round {round_} {workload} {config}: {wall:.2f} s, "
                        f"{rss / 1024:.0f} MiB, {samples if samples is not None else '-'} samples"
                        f"{'' if status == 0 else f', FAILED ({status}, see {name}.out)'}"
                        f" (load {load:.1f}; about {eta / 60:.0f} min left)")
        with open(os.path.join(work, "results.csv"), "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        loads = [r["load_before"] for r in rows]
        heap = (f"heap up to {args.heap} (-Xmx)" if args.grow_heap
                else f"heap {args.heap} fixed (-Xms = -Xmx, AlwaysPreTouch)")
        print(f"{args.rounds} interleaved rounds, {' '.join(COLLECTORS[args.gc])}, {heap}, "
              f"{java_version(args.java)}, scale {args.scale}"
              f"{f', agent options {args.agent_options}' if args.agent_options else ''}; "
              f"{(time.monotonic() - started) / 60:.0f} min; "
              f"1-minute load average before the runs: {min(loads):.1f} to {max(loads):.1f} "
              f"(median {statistics.median(loads):.1f}) on {os.cpu_count()} CPUs; "
              f"agent built at {commit}")
        print("overhead: median over rounds of wall time / the same round's no-agent wall time - 1 "
              "(range over rounds); over floor: median of (time - floor's time) / no-agent time, "
              "the floor at the same interval (512k for JFR), in percent points, for hs-32k "
              "overhead / floor's overhead, and the same points of CPU time; "
              "CPU overhead: as overhead, of user + system CPU time; "
              "samples/s: samples recorded (floor: taken) per second of wall time; "
              "RSS over none: median over rounds of peak RSS - the same round's no-agent peak RSS")
        print(tables(args, rows))
        for config, seen in sorted(types.items()):
            if seen:
                print(f"\nevent types in {config} recordings: {', '.join(sorted(seen))}", end="")
        print()
        if not temporary:
            log(f"every run's figures: {os.path.join(work, 'results.csv')}")
    finally:
        if temporary:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
