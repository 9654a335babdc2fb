#!/usr/bin/env python3
"""Tables of run.sh's outputs: per simulated input, each variant's predicted KIOPS and the
scheduler lock's owner changes per acquisition; then the measured run beside the unchanged
prediction. Only the standard library."""
import glob
import json
import os
import statistics
import sys

d = sys.argv[1]


def owner_share(locks, name="sched"):
    for l in locks:
        if l.get("lock", l.get("class", l.get("name"))) == name:
            return l["owner_changes"] / max(1, l["acquisitions"])
    return None


runs = {}
for f in sorted(glob.glob(f"{d}/sim/*.out.json")):
    name = os.path.basename(f)[: -len(".out.json")]
    p = json.load(open(f))["predictions"]
    runs[name] = {x["variant"]: (x["kiops"], owner_share(x["lock_owners"])) for x in p
                  if x["threads"] == 2}
variants = list(next(iter(runs.values())).keys())
print("## The simulation, one input changed at a time (fair-spin, 2 threads, 1000 ns outside)")
print()
print("KIOPS / the scheduler lock's owner changes per acquisition. `topology-NNN-on|off`: the"
      " transfer set to NNN ns, interruptions on or off; `calibration-lines-SSS`: every"
      " two-process line count × SSS/100 (transfer 154 ns, interruptions on).")
print()
print("| input | " + " | ".join(variants) + " |")
print("| --- |" + " --- |" * len(variants))
for name, r in runs.items():
    print(f"| {name} | " + " | ".join(
        f"{r[v][0]:.0f} / {r[v][1]:.2f}" if v in r else "-" for v in variants) + " |")
print()
cmp = f"{d}/compare.json"
if os.path.exists(cmp):
    c = json.load(open(cmp))
    base = runs.get("topology-154-on", {})
    print("## Measured (compare, lock statistics on) beside the unchanged model (154 ns, interruptions on)")
    print()
    print("| variant | measured KIOPS (median of rounds) | owner changes per acquisition |"
          " contended per acquisition | model KIOPS | model owner changes |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in c["results"]:
        v = r["variant"]
        sched = next(l for l in r["locks"] if l.get("class", l.get("lock", l.get("name"))) == "sched")
        k = r["kiops"]["median"]
        oc = sched["owner_changes"] / sched["acquisitions"]
        ct = sched["contentions"] / sched["acquisitions"]
        m = base.get(v)
        print(f"| {v} | {k:.0f} (range {min(r['kiops']['runs']):.0f}–{max(r['kiops']['runs']):.0f}) |"
              f" {oc:.2f} | {ct:.2f} | " + (f"{m[0]:.0f} | {m[1]:.2f} |" if m else "- | - |"))
    pl = c.get("placement")
    if pl:
        print()
        print("placement:", json.dumps(pl)[:400])
