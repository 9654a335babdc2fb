#!/usr/bin/env python3
"""Within-round ratios of `schedlab kernel` JSON files (each ratio from runs of the same round),
median and range, kernel beside model. Usage: ratios.py check.json [more.json ...]"""
import json, statistics, sys

def fmt(v):
    return f"{statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f})" if v else "-"

for path in sys.argv[1:]:
    d = json.load(open(path))
    k = {r["config"]: {x["round"]: x["iops"] for x in r["runs"]} for r in d["kernel"]}
    m = {(r["entry"], r["groups"]): r["kiops"]["runs"] for r in d["model"]}
    kr = lambda a, b: [k[a][i] / k[b][i] for i in k.get(a, {}) if i in k.get(b, {})]
    mr = lambda a, b: [x / y for x, y in zip(m.get(a, []), m.get(b, []))]
    g = d["config"]["groups"]
    print(f"== {path} (model lock {d['config']['model_lock']}, outside {d['model_outside_ns']} ns)")
    print(" bfq/none          kernel", fmt(kr("bfq", "none")), "  model rstat+lists/none", fmt(mr(("rstat+lists", 0), ("none", 0))))
    print(" bfq/mq-deadline   kernel", fmt(kr("bfq", "mq-deadline")), "  model rstat+lists/no-stats+lists", fmt(mr(("rstat+lists", 0), ("no-stats+lists", 0))))
    print(" mq-deadline/none  kernel", fmt(kr("mq-deadline", "none")), "  model no-stats+lists/none", fmt(mr(("no-stats+lists", 0), ("none", 0))))
    print(" bfq-groups/bfq    kernel", fmt(kr("bfq-groups", "bfq")), f"  model rstat+lists {g}g/0g", fmt(mr(("rstat+lists", g), ("rstat+lists", 0))))
    print(" debug-off/rstat   model (lists, 0 groups)", fmt(mr(("debug-off+lists", 0), ("rstat+lists", 0))))
