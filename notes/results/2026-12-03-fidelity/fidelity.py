#!/usr/bin/env python3
"""The fidelity tables of `schedlab kernel` JSON files side by side: per point and figure, the
kernel's and the model's value and whether the model is within its band, one column per file;
then the elevator cost each run measured. Usage: fidelity.py check.json [more.json ...]"""
import json, sys

runs = [(p, json.load(open(p))) for p in sys.argv[1:]]

def fmt(v):
    return "-" if v is None else f"{v:.3f}"

def label(p):
    return f"{p['threads']} job(s) x iodepth {p['iodepth']} ({p['ioengine']})"

keys = []
for _, d in runs:
    for r in d["fidelity"]:
        k = (label(r["point"]), r["figure"])
        if k not in keys:
            keys.append(k)
print("columns: " + " | ".join(f"{p} (model lock {d['config']['model_lock']}, outside {d['model_outside_ns']} ns, elevator {d.get('model_elevator_ns', 0)} ns)" for p, d in runs))
last = None
for point, figure in keys:
    if point != last:
        print(f"\n{point}")
        last = point
    cells = []
    for _, d in runs:
        r = next((r for r in d["fidelity"] if label(r["point"]) == point and r["figure"] == figure), None)
        if r is None:
            cells.append("-")
            continue
        within = {True: "yes", False: "NO", None: "-"}[r["within"]]
        cells.append(f"k {fmt(r['kernel'])} m {fmt(r['model'])} {within}")
    print(f"  {figure:<46} " + " | ".join(f"{c:<26}" for c in cells))
print()
for p, d in runs:
    judged = [r for r in d["fidelity"] if r["within"] is not None]
    print(f"{p}: within their bands {sum(r['within'] for r in judged)} of {len(judged)} judged figures")
    points = [("main", d.get("elevator"))] + [(label(x["point"]), x.get("elevator")) for x in d.get("points", [])]
    for name, e in points:
        if not e:
            continue
        for s in ("bfq", "mq_deadline"):
            c = e.get(s)
            if c:
                print(f"  elevator {name} {s}: {c['elevator_us']:.2f} us per I/O ({c['extra_us']:.2f} over none, own {c['own_us']:.2f}; {e['basis']} CPU)")
