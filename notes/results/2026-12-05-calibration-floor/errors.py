#!/usr/bin/env python3
"""One-thread error of each calibration folder's median prediction against the measured medians
of a `predict --validate` JSON (the same measured figures for both folders). Only the standard
library. Usage: errors.py VALIDATE.json FOLDER [FOLDER ...]"""
import json
import statistics
import sys

rows = [r for r in json.load(open(sys.argv[1]))["validation"]["rows"] if r["threads"] == 1]
for folder in sys.argv[2:]:
    pred = {}
    i = 1
    while True:
        try:
            d = json.load(open(f"{folder}/predict-{i}.json"))
        except FileNotFoundError:
            break
        for p in d["predictions"]:
            pred.setdefault((p["lock"], p["outside_ns"], p["variant"]), []).append(p["kiops"])
        i += 1
    errs = []
    for r in rows:
        k = statistics.median(pred[(r["lock"], r["outside_ns"], r["variant"])])
        errs.append(100 * (k / r["measured"]["median"] - 1))
    a = [abs(e) for e in errs]
    print(f"{folder}: {i - 1} calibrations, {len(errs)} points, median |error| "
          f"{statistics.median(a):.1f} %, max {max(a):.1f} %, mean signed {statistics.mean(errs):+.1f} %")
