#!/usr/bin/env python3
"""Writes the simulation's inputs for run.sh into DIR/sim/: the topology of the calibration with
its transfer set to 33, 60, 100 and 154 ns, each with and without the measured interruptions;
and the calibration with every two-process line count scaled by 0.1, 0.25, 0.5 and 0.75. Only the
standard library."""
import copy
import json
import os
import sys

d = sys.argv[1]
os.makedirs(f"{d}/sim", exist_ok=True)
cal = json.load(open(f"{d}/calibration.json"))
for ns in (33, 60, 100, 154):
    for interrupted in (True, False):
        t = copy.deepcopy(cal["machine"])
        t["transfer"]["core_ns"] = t["transfer"]["sibling_ns"] = float(ns)
        if not interrupted:
            t["interruptions"]["rate_per_s"] = 0.0
        t["name"] = f"calibration's machine, transfer {ns} ns, interruptions {'on' if interrupted else 'off'}"
        tag = "on" if interrupted else "off"
        json.dump(t, open(f"{d}/sim/topology-{ns:03d}-{tag}.json", "w"), indent=1)
for scale in (0.1, 0.25, 0.5, 0.75):
    c = copy.deepcopy(cal)
    for v in c["calibrations"]:
        for call in v["pair"]:
            for s in call["segments"]:
                s["lines"] *= scale
    json.dump(c, open(f"{d}/sim/calibration-lines-{int(scale * 100):03d}.json", "w"))
