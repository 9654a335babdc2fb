#!/usr/bin/env python3
"""What the probe's hand-off does to issue 41's points: the calibration of
2026-12-05-predict-order predicted at 1 and 2 threads on its own machine profile, with
transfer.handoff_extra_ns 0 and with the probe's far figure (far-convoy-point.txt, or the first
argument), each two-thread
point set beside the median of the validation's repetitions that ran in the calibration's
placement. Only the standard library; runs ./target/release/schedlab. Usage (project root):
python3 notes/results/2026-12-05-phases/workload.py"""
import copy
import json
import re
import statistics
import subprocess
import sys

d = "notes/results/2026-12-05-phases"
order = "notes/results/2026-12-05-predict-order"
# The extra in force where the calibration ran (far: far-convoy-point.txt), or given.
if len(sys.argv) > 1:
    extra = float(sys.argv[1])
else:
    text = open(f"{d}/far-convoy-point.txt").read()
    extra = float(re.search(r"far_handoff_extra_ns=(\d+)", text)[1])
cal = json.load(open(f"{order}/calibration.json"))
preds = {}
for x in (0.0, extra):
    t = copy.deepcopy(cal["machine"])
    t["transfer"]["handoff_extra_ns"] = x
    t["name"] = f"the calibration's machine, hand-off extra {x:.0f} ns"
    topo = f"{d}/workload-topology-{x:.0f}.json"
    json.dump(t, open(topo, "w"), indent=1)
    out = f"{d}/workload-predict-{x:.0f}.json"
    subprocess.run(["./target/release/schedlab", "predict", "--calibration", f"{order}/calibration.json",
                    "--topology", topo, "--threads", "1,2", "--lock", "fair-spin",
                    "--outside-list", "0,1000", "--json", out],
                   check=True, capture_output=True)
    preds[x] = {(p["variant"], p["outside_ns"], p["threads"]): p["kiops"]
                for p in json.load(open(out))["predictions"]}
print(f"hand-off extra from the probe: {extra:.0f} ns")
print()
print("| outside (ns) | variant | measured, far (median, n) | predicted, extra 0 | error | "
      f"predicted, extra {extra:.0f} | error |")
print("| --- | --- | --- | --- | --- | --- | --- |")
rows = json.load(open(f"{order}/validate.json"))["validation"]["rows"]
errs = {0.0: [], extra: []}
for r in rows:
    if r["threads"] != 2 or r["lock"] != "fair-spin":
        continue
    reps = [x["kiops"] for x in r["repetitions"] if x["placement"] == "as-calibrated"]
    if not reps:
        continue
    m = statistics.median(reps)
    k = (r["variant"], r["outside_ns"], 2)
    e0 = 100 * (preds[0.0][k] / m - 1)
    e1 = 100 * (preds[extra][k] / m - 1)
    errs[0.0].append(abs(e0))
    errs[extra].append(abs(e1))
    print(f"| {r['outside_ns']} | {r['variant']} | {m:.0f} ({len(reps)}) | {preds[0.0][k]:.0f} | "
          f"{e0:+.0f} % | {preds[extra][k]:.0f} | {e1:+.0f} % |")
print()
for x, e in errs.items():
    print(f"extra {x:.0f} ns: median |error| {statistics.median(e):.0f} %, max {max(e):.0f} %")
one = [abs(100 * (preds[extra][k] / preds[0.0][k] - 1)) for k in preds[0.0] if k[2] == 1]
print(f"one thread: the extra moves no prediction by more than {max(one):.2f} %")
