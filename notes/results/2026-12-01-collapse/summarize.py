#!/usr/bin/env python3
"""Tables for ../2026-12-01-collapse.md from raw/*.json (written by run.sh).

Ratios are taken within one repetition (same load, same lock, runs a few seconds apart):
KIOPS at n jobs / KIOPS at 1 job; then median and min-max over the repetitions."""
import glob, json, os, re, statistics

here = os.path.dirname(os.path.abspath(__file__))
runs = {}
for path in glob.glob(os.path.join(here, "raw", "*.json")):
    m = re.match(r"(quiet|loaded)-(fair-spin|parking-lot)-t(\d+)-r(\d+)\.json", os.path.basename(path))
    if not m:
        continue
    load, lock, t, rep = m.group(1), m.group(2), int(m.group(3)), int(m.group(4))
    with open(path) as f:
        runs[(load, lock, t, rep)] = json.load(f)

def spread(values):
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"

def spread2(values):
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"

any_run = next(iter(runs.values()))
p = any_run["provenance"]
reps = sorted({k[3] for k in runs})
print(f"commit {p['commit']} | {p['rustc']} | {p['cpus']} CPUs ({p['cpu_model']}) | {p['profile']} | {len(reps)} repetitions\n")
for load in ["quiet", "loaded"]:
    print(f"### {load}\n")
    print("| lock | jobs | KIOPS median (min-max) | x 1 job, same repetition: median (min-max) | slowest job KIOPS median | other processes' CPUs median (max) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for lock in ["fair-spin", "parking-lot"]:
        for t in [1, 2, 4, 8, 16]:
            ks, ratios, slow, others = [], [], [], []
            for rep in reps:
                r = runs.get((load, lock, t, rep))
                base = runs.get((load, lock, 1, rep))
                if not r:
                    continue
                ks.append(r["kiops"])
                slow.append(min(r["per_thread_kiops"]))
                if r.get("other_cpus") is not None:
                    others.append(r["other_cpus"])
                if base and base["kiops"] > 0:
                    ratios.append(r["kiops"] / base["kiops"])
            if not ks:
                continue
            o = f"{statistics.median(others):.2f} ({max(others):.2f})" if others else "-"
            print(f"| {lock} | {t} | {spread(ks)} | {spread2(ratios)} | {statistics.median(slow):.2f} | {o} |")
    print()
