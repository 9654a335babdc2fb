#!/usr/bin/env python3
"""Summary of one `schedlab predict --validate --json` file (issue 41's check).

For each thread count: the median and largest |error|, the points within 15 %, the variants'
order per group; once as the validation judged it (each run against the prediction for the
placement it ran in) and once with every run against the calibration's prediction alone (the
rule before d5a7c4d), from the same runs. Only the standard library; nothing assumed.
"""
import json
import statistics
import sys

v = json.load(open(sys.argv[1]))
val = v["validation"]
preds = {}
for p in v["predictions"]:
    preds[(p["variant"], p["lock"], p["insert"], p["outside_ns"], p["threads"])] = p["kiops"]


def old_error(row):
    p = preds.get((row["variant"], row["lock"], row["insert"], row["outside_ns"], row["threads"]))
    runs = [k for k in row["measured"]["runs"] if k > 0]
    if p is None or not runs:
        return None
    return statistics.median(100 * (p - k) / k for k in runs)


def order_same(rows, predicted):
    groups = {}
    for r in rows:
        groups.setdefault((r["lock"], r["insert"], r["outside_ns"], r["threads"]), []).append(r)
    out = {}
    for g, rs in groups.items():
        rs = [r for r in rs if r["measured"]["median"] and r["measured"]["median"] > 0]
        m = [r["variant"] for r in sorted(rs, key=lambda r: -r["measured"]["median"])]
        p = [r["variant"] for r in sorted(rs, key=predicted)]
        out[g] = m == p
    return out


print(f"transfer: calibration {val.get('calibration_transfer_ns')}, other placement "
      f"{val.get('other_placement_transfer_ns')} ns")
print()
print("| threads | rule | points | median \\|error\\| | max \\|error\\| | within 15 % | order right |")
print("| --- | --- | --- | --- | --- | --- | --- |")
rows = val["rows"]
old_pred = lambda r: -preds.get((r["variant"], r["lock"], r["insert"], r["outside_ns"], r["threads"]), 0)
new_pred = lambda r: -(r["predicted"] or 0)
for t in sorted({r["threads"] for r in rows}):
    rs = [r for r in rows if r["threads"] == t]
    for rule, err, pred in [("own placement", lambda r: r["error_pct"], new_pred),
                            ("calibration only", old_error, old_pred)]:
        e = [abs(err(r)) for r in rs if err(r) is not None]
        orders = order_same(rs, pred)
        print(f"| {t} | {rule} | {len(e)} | {statistics.median(e):.1f} % | {max(e):.1f} % | "
              f"{sum(x <= 15 for x in e)} | {sum(orders.values())} of {len(orders)} |")
print()
print("| variant | lock | outside | threads | measured | predicted | error | far runs | moved |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for r in rows:
    pl = r["placement"]
    print(f"| {r['variant']} | {r['lock']} | {r['outside_ns']} | {r['threads']} | "
          f"{r['measured']['median']:.0f} | {r['predicted']:.0f} | {r['error_pct']:+.1f} % | "
          f"{pl['other']} | {pl['moved']} |")
