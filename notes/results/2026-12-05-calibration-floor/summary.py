#!/usr/bin/env python3
"""Summary of N calibrations' one-thread predictions (run.sh): per point the spread of the
predicted KIOPS between calibrations, and per pair of variants in a group whether the N
calibrations put the pair on one side of 1. Beside it, the measured pair from a
`predict --validate` JSON: the median of the paired per-round ratios (same round, same placement)
with a 95 % percentile bootstrap interval of that median (2000 resamples, fixed seed; at least 6
rounds, as the tool's rule). Only the standard library."""
import itertools
import json
import random
import statistics
import sys

folder, n, validate = sys.argv[1], int(sys.argv[2]), sys.argv[3]
pred = {}  # (lock, outside, variant) -> [kiops per calibration]
transfers = []
for i in range(1, n + 1):
    d = json.load(open(f"{folder}/predict-{i}.json"))
    cal = json.load(open(f"{folder}/calibration-{i}.json"))
    transfers.append(cal["machine"]["transfer"]["core_ns"])
    for p in d["predictions"]:
        if p["threads"] == 1:
            pred.setdefault((p["lock"], p["outside_ns"], p["variant"]), []).append(p["kiops"])

rows = json.load(open(validate))["validation"]["rows"]
meas = {}
for r in rows:
    if r["threads"] == 1:
        meas[(r["lock"], r["outside_ns"], r["variant"])] = {
            (x["round"], x["placement"]): x["kiops"]
            for x in r["repetitions"] if x["placement"] != "moved"
        }


def interval(ratios):
    if len(ratios) < 6:
        return None
    rng = random.Random(1)
    meds = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
    return meds[49], meds[1949]


print(f"calibrations: {n}; their transfer (ping-pong) ns: "
      + ", ".join(f"{t:.0f}" for t in transfers))
print()
print("## Predicted KIOPS at one thread, between calibrations")
print()
print("| lock | outside (ns) | variant | median | min | max | (max − min) ÷ median |")
print("| --- | --- | --- | --- | --- | --- | --- |")
spreads = []
for (lock, out, var), v in sorted(pred.items()):
    s = (max(v) - min(v)) / statistics.median(v)
    spreads.append(s)
    print(f"| {lock} | {out} | {var} | {statistics.median(v):.0f} | {min(v):.0f} | {max(v):.0f} "
          f"| {100 * s:.1f} % |")
print()
print(f"spread between calibrations, over the points: median {100 * statistics.median(spreads):.1f} %,"
      f" max {100 * max(spreads):.1f} %")
print()
print("## Pairs: the calibrations' side of 1 against the measured pair")
print()
print("| lock | outside (ns) | a ÷ b | predicted a ÷ b (min–max over calibrations) | calibrations"
      " agree on a side | measured median [95 %] | measured orders it | verdict |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
tally = {}
groups = sorted({(l, o) for (l, o, _) in pred})
for lock, out in groups:
    variants = sorted(v for (l, o, v) in pred if (l, o) == (lock, out))
    for a, b in itertools.combinations(variants, 2):
        r = [x / y for x, y in zip(pred[(lock, out, a)], pred[(lock, out, b)])]
        side = "a faster" if min(r) > 1 else ("b faster" if max(r) < 1 else "split")
        ma, mb = meas.get((lock, out, a), {}), meas.get((lock, out, b), {})
        paired = [ma[k] / mb[k] for k in ma if k in mb]
        iv = interval(paired)
        if iv is None:
            mside, mtext = "no interval", "-"
        else:
            mside = "a faster" if iv[0] > 1 else ("b faster" if iv[1] < 1 else "within noise")
            mtext = f"{statistics.median(paired):.3f} [{iv[0]:.3f}, {iv[1]:.3f}]"
        if mside in ("a faster", "b faster"):
            verdict = ("model split" if side == "split"
                       else ("agree" if side == mside else "disagree"))
        else:
            verdict = "measurement does not order"
        tally[verdict] = tally.get(verdict, 0) + 1
        if verdict != "measurement does not order" and verdict != "agree" or side == "split":
            print(f"| {lock} | {out} | {a} ÷ {b} | {min(r):.3f}–{max(r):.3f} | {side} | {mtext} | "
                  f"{mside} | {verdict} |")
print()
print("(rows shown: every pair the calibrations split on, and every pair the measurement orders"
      " and the calibrations do not all agree with)")
print()
print("tally over all one-thread pairs: "
      + ", ".join(f"{k} {v}" for k, v in sorted(tally.items())))
