#!/usr/bin/env python3
"""Folds sched:sched_switch events into off-CPU stacks weighted by microseconds off the CPU.

Input: `perf script -F comm,pid,tid,time,event,trace,ip,sym` of a system-wide recording
(`perf record -a -e sched:sched_switch --call-graph dwarf`). A switch-out of a thread of process
PID carries that thread's stack; its next switch-in (next_pid=TID, on any CPU) ends the interval.
The leaf frame says how it left: [sleep] (S: futex wait, nanosleep), [blocked] (D), [preempted]
(R: still runnable, waiting for a CPU).

Usage: perf script -F comm,pid,tid,time,event,trace,ip,sym -i offcpu.data | offcpu-fold.py PID
"""
import re
import sys

pid = sys.argv[1]
head = re.compile(r"^(.*?)\s+(\d+)/(\d+)\s+([\d.]+):\s+sched:sched_switch:\s+(.*)$")
field = re.compile(r"(\w+)=(\S+)")
how = {"S": "[sleep]", "D": "[blocked]", "R": "[preempted]", "R+": "[preempted]"}
pending = {}  # tid -> (switch-out time, folded stack)
totals = {}
event = None  # (time, fields, process id)
stack = []


def close_event():
    if event is None:
        return
    t, f, proc = event
    if proc == pid and f.get("prev_pid"):
        frames = [s for s in reversed(stack) if s]
        # Drop the thread-start frames above the workbench's own code, as `schedlab flamegraph` does.
        first = next((i for i, s in enumerate(frames) if s.startswith("schedlab")), 0)
        frames = frames[first:]
        frames.append(how.get(f.get("prev_state", "?"), "[" + f.get("prev_state", "?") + "]"))
        pending[f["prev_pid"]] = (t, ";".join(frames))
    start = pending.pop(f.get("next_pid"), None)
    if start is not None:
        totals[start[1]] = totals.get(start[1], 0.0) + (t - start[0]) * 1e6


for line in sys.stdin:
    m = head.match(line)
    if m:
        close_event()
        event = (float(m.group(4)), dict(field.findall(m.group(5))), m.group(2))
        stack = []
    elif line.strip() and event is not None:
        parts = line.strip().split(" ", 1)  # "address symbol"
        if len(parts) == 2 and parts[1] != "[unknown]":
            name = parts[1].removesuffix(" (inlined)").replace(";", ":")
            stack.append(name)
close_event()
for folded, us in sorted(totals.items()):
    if us >= 1:
        print(f"{folded} {int(us)}")
