#!/usr/bin/env python3
"""The simulation's lock counters at two threads beside the measured lock statistics.

A build of `schedlab` with sim-counters.patch applied prints, per simulated point, acquisitions
per request, owner changes, contended acquisitions, parks and the FIFO hand-offs' interruption
stalls (SIM_COUNTERS set; SIM_OLD_INT set: the stall rule before 2026-12-05). This runs it on the
2026-12-05-predict-segments calibration in the near placement (the calibration's own transfer,
32 ns) and the far one (its topology-far.json, 160 ns), and sets the scheduler lock's measured
figures from the compare runs of the same day beside it (near: outside 0; far: outside 1000).
The simulation's counters are over every modelled lock (queue-lock: the queue lock too).

usage: counters.py COUNTERS_BIN SEGMENTS_DIR WORKDIR
"""
import json
import os
import re
import subprocess
import sys

binary, seg, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
cal = os.path.join(seg, "calibration.json")
near = os.path.join(work, "topology-near.json")
json.dump(json.load(open(cal))["machine"], open(near, "w"))
topos = {"near": near, "far": os.path.join(seg, "topology-far.json")}
pat = re.compile(r"kiops (\S+) acquisitions/request (\S+) owner-changes (\S+) % contended (\S+) % "
                 r"parks/request (\S+) hand-off stalls (\S+) % of the window")


def sim(lock, variant, outside, topo, old):
    env = dict(os.environ, SIM_COUNTERS="1")
    if old:
        env["SIM_OLD_INT"] = "1"
    p = subprocess.run([binary, "predict", "--calibration", cal, "--topology", topos[topo],
                        "--threads", "2", "--lock", lock, "--variants", variant,
                        "--outside-ns", str(outside)],
                       env=env, capture_output=True, text=True, check=True)
    return [float(x) for x in pat.search(p.stderr).groups()]


def measured(lock, variant, outside):
    d = json.load(open(os.path.join(seg, f"compare-{lock}-{outside}-2.json")))
    r = next(r for r in d["results"] if r["variant"] == variant)
    s = next(l for l in r["locks"] if l["name"] == "sched")
    a = s["acquisitions"]
    return r["kiops"]["median"], 100 * s["owner_changes"] / a, 100 * s["contentions"] / a


print("| lock | variant | outside ns | placement | measured KIOPS | owner changes | contended "
      "| rule | sim KIOPS | owner changes | contended | parks / request | hand-off stalls |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for lock in ["fair-spin", "parking-lot"]:
    for outside, topo in [(0, "near"), (1000, "far")]:
        for variant in ["sched-lock", "queue-lock", "epoch", "no-stats"]:
            mk, mo, mc = measured(lock, variant, outside)
            for old in [True, False]:
                k, acq, oc, ct, parks, stall = sim(lock, variant, outside, topo, old)
                rule = "before" if old else "after"
                print(f"| {lock} | {variant} | {outside} | {topo} | {mk:.0f} | {mo:.1f} % | "
                      f"{mc:.1f} % | {rule} | {k:.0f} | {oc:.1f} % | {ct:.1f} % | {parks:.3f} | "
                      f"{stall:.1f} % |")
