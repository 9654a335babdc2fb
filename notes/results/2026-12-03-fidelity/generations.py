#!/usr/bin/env python3
"""The seeds' ratios of `schedlab compare` JSON files, grouped by kernel profile: per ratio and
profile, each file's median over rounds (and its rounds' range). Usage: generations.py *.json"""
import json, sys
from collections import defaultdict

rows = defaultdict(list)  # (ratio name, seed) -> [(profile, file, median, min, max)]
for path in sys.argv[1:]:
    d = json.load(open(path))
    profile = d["config"]["workload"].get("kernel", "?")
    for r in d["ratios"]:
        for b in r["by_lock"]:
            m = b["measured"]
            rows[(r["name"], r["seed"], b["lock"])].append((profile, path.rsplit("/", 1)[-1], m["median"], m["min"], m["max"]))
for (name, seed, lock), v in rows.items():
    print(f"{name} (seeds: {seed if seed is not None else 'goal'}; {lock})")
    for profile in ("bare", "4.12", "6.18"):
        cells = [f"{med:.3f} [{lo:.3f}, {hi:.3f}]" for p, _, med, lo, hi in sorted(v, key=lambda x: x[1]) if p == profile]
        if cells:
            print(f"  {profile:<5} " + "   ".join(cells))

# Pooled: every round of every file of a profile (the files are interleaved repetitions).
print("\npooled over every round of every file: median [25th, 75th percentile] (rounds)")
pooled = defaultdict(list)
for path in sys.argv[1:]:
    d = json.load(open(path))
    profile = d["config"]["workload"].get("kernel", "?")
    for r in d["ratios"]:
        for b in r["by_lock"]:
            pooled[(r["name"], r["seed"], b["lock"], profile)] += b["measured"]["runs"]

def q(v, p):
    v = sorted(v)
    k = (len(v) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)

for (name, seed, lock) in rows:
    cells = []
    for profile in ("bare", "4.12", "6.18"):
        v = pooled.get((name, seed, lock, profile))
        if v:
            cells.append(f"{profile} {q(v, .5):.3f} [{q(v, .25):.3f}, {q(v, .75):.3f}] ({len(v)})")
    print(f"  {name:<28} seeds {str(seed if seed is not None else 'goal'):<5} " + "   ".join(cells))
