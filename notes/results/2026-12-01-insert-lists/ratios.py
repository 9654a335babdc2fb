"""Within-round ratios of each variant on the insertion lists to the same variant inserting
directly, from a `schedlab compare --insert both --json` file: median (min-max) over rounds.
Usage: python3 ratios.py compare-2t.json"""
import json
import statistics
import sys

d = json.load(open(sys.argv[1]))
by = {(r["variant"], r["lock"]): r for r in d["results"]}
print("| variant | lock | direct KIOPS | lists KIOPS | lists / direct, same round: median (min-max) | sched lock cont% direct -> lists |")
print("| --- | --- | ---: | ---: | --- | --- |")
for lock in d["config"]["locks"]:
    for v in d["config"]["variants"]:
        if "+" in v:
            continue
        a, b = by.get((v, lock)), by.get((v + "+lists", lock))
        if not a or not b:
            continue
        ratios = [y / x for x, y in zip(a["kiops"]["runs"], b["kiops"]["runs"])]
        cont = lambda r: next(l["contention_pct"] for l in r["locks"] if l["name"] == "sched")
        print(f"| {v} | {lock} | {a['kiops']['median']:.0f} | {b['kiops']['median']:.0f} | "
              f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) | "
              f"{cont(a):.1f} % -> {cont(b):.1f} % |")
