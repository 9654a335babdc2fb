#!/usr/bin/env python3
"""Issue 41 items 1-2: the recorded validation (2026-12-05-predict-placement/validate.json)
predicted again by two builds of `schedlab predict`, each run held against the prediction for
the placement it ran in, as `predict --validate` does.

validate.json keeps, per point, its runs and how many ran in each placement, not which run ran
where; the assignment is recovered as the one that reproduces the recorded predicted median and
error from the OLD build's two predictions (calibration's transfer, the other placement's). A
point no assignment reproduces, or whose reproducing assignments disagree under the new build, is
reported, not guessed. Standard library only.

usage: repredict.py VALIDATE_JSON OLD_BIN NEW_BIN WORKDIR
"""
import itertools
import json
import os
import statistics
import subprocess
import sys

validate_path, old_bin, new_bin, work = sys.argv[1:5]
v = json.load(open(validate_path))
val = v["validation"]
os.makedirs(work, exist_ok=True)

cal_topo = v["topology"]
other_topo = json.loads(json.dumps(cal_topo))
other_ns = val["other_placement_transfer_ns"]
other_topo["transfer"]["core_ns"] = other_ns
other_topo["transfer"]["sibling_ns"] = other_ns
calib = os.path.join(os.path.dirname(validate_path), "calibration.json")


def predict(binary, topo, tag):
    tpath = os.path.join(work, f"topology-{tag}.json")
    json.dump(topo, open(tpath, "w"))
    out = os.path.join(work, f"predict-{tag}.json")
    subprocess.run([binary, "predict", "--calibration", calib, "--topology", tpath,
                    "--threads", "1,2", "--lock", "both", "--outside-list", "0,1000",
                    "--seed", str(v["seed"]), "--json", out],
                   check=True, stdout=open(os.path.join(work, f"predict-{tag}.txt"), "w"))
    table = {}
    for p in json.load(open(out))["predictions"]:
        table[(p["variant"], p["lock"], p["insert"], p["outside_ns"], p["threads"])] = p["kiops"]
    return table


old = {"cal": predict(old_bin, cal_topo, "old-cal"), "other": predict(old_bin, other_topo, "old-other")}
new = {"cal": predict(new_bin, cal_topo, "new-cal"), "other": predict(new_bin, other_topo, "new-other")}

# The old build must give the recorded predictions at the calibration's transfer.
for p in v["predictions"]:
    k = (p["variant"], p["lock"], p["insert"], p["outside_ns"], p["threads"])
    assert abs(old["cal"][k] - p["kiops"]) < 1e-6 * p["kiops"], (k, old["cal"][k], p["kiops"])


def point(runs, labels, table, key):
    pairs = [(k, table[l][key]) for k, l in zip(runs, labels) if l != "moved"]
    errs = [100 * (p - k) / k for k, p in pairs if k > 0]
    return statistics.median(p for _, p in pairs), statistics.median(errs)


rows = []
for r in val["rows"]:
    key = (r["variant"], r["lock"], r["insert"], r["outside_ns"], r["threads"])
    runs = r["measured"]["runs"] + r.get("left_out_kiops", [])
    pl = r["placement"]
    base = ["cal"] * pl["as_calibrated"] + ["other"] * pl["other"] + ["moved"] * pl["moved"]
    fits = set()
    for labels in set(itertools.permutations(base)):
        kept = [k for k, l in zip(runs, labels) if l != "moved"]
        if sorted(kept) != sorted(r["measured"]["runs"]):
            continue
        pred, err = point(runs, labels, old, key)
        if abs(pred - r["predicted"]) < 1e-6 * pred and abs(err - r["error_pct"]) < 1e-6:
            fits.add(point(runs, labels, new, key) + (labels,))
    if not fits:
        rows.append((r, key, None, None, "no assignment reproduces the recorded point"))
        continue
    # Where several assignments reproduce the record, the one whose new error is largest in
    # size (the least favourable to the new build), with the others' range.
    p, e, labels = max(fits, key=lambda f: (abs(f[1]), f[2]))
    errs = sorted({round(f[1], 1) for f in fits})
    note = "".join(l[0] for l in labels)
    if len(errs) > 1:
        note += f" (other assignments: {', '.join(f'{x:+.1f} %' for x in errs)})"
    rows.append((r, key, p, e, note))

print(f"transfer: calibration {val['calibration_transfer_ns']:.1f} ns, other placement "
      f"{other_ns:.1f} ns; the old build reproduces all {len(v['predictions'])} recorded "
      "predictions at the calibration's transfer")
print()
print("| threads | outside ns | lock | points | old median \\|error\\| | new median \\|error\\| "
      "| old max | new max | old within 15 % | new within 15 % |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
groups = {}
for r, key, p, e, _ in rows:
    if e is None:
        continue
    for g in [(r["threads"], "all", "both"), (r["threads"], r["outside_ns"], r["lock"])]:
        groups.setdefault(g, []).append((abs(r["error_pct"]), abs(e)))
for g in sorted(groups, key=lambda g: (g[0], str(g[1]), g[2])):
    o = [a for a, _ in groups[g]]
    n = [b for _, b in groups[g]]
    print(f"| {g[0]} | {g[1]} | {g[2]} | {len(o)} | {statistics.median(o):.1f} % | "
          f"{statistics.median(n):.1f} % | {max(o):.1f} % | {max(n):.1f} % | "
          f"{sum(x <= 15 for x in o)} | {sum(x <= 15 for x in n)} |")
print()
print("| variant | lock | outside | threads | measured | old predicted | old error | new predicted "
      "| new error | runs (c: as calibrated, o: other, m: moved) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for r, key, p, e, note in rows:
    newp = "—" if p is None else f"{p:.0f}"
    newe = "—" if e is None else f"{e:+.1f} %"
    print(f"| {r['variant']} | {r['lock']} | {r['outside_ns']} | {r['threads']} | "
          f"{r['measured']['median']:.0f} | {r['predicted']:.0f} | {r['error_pct']:+.1f} % | "
          f"{newp} | {newe} | {note} |")
