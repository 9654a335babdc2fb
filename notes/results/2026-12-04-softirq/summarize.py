#!/usr/bin/env python3
"""The fidelity table of check.json as markdown (per point: kernel, model, null model, constant,
band, verdict), the count the issue asks for, and the injection runs' judged figures.
Usage: summarize.py DIR  (reads DIR/check.json and DIR/inject-*.json)"""
import json, sys, glob, os

d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__)

def num(v, digits=3):
    return "-" if v is None else f"{v:.{digits}f}"

def verdict(v):
    if isinstance(v, str): return v  # "not judged: disturbed" (the outcome's disturbed runs)
    k = v.get("kind")
    if k == "evidence": return "**evidence**"
    if k == "control-within": return f"within, {v.get('control')} too"
    if k == "outside": return "outside"
    if k == "fitted": return f"fitted ({v.get('input')})"
    if k == "not-judged": return f"not judged: {v.get('why')}"
    return k

def band(b):
    k = b.get("kind")
    if k == "within": return f"±{b['pct']:.0f} %"
    if k == "factor": return f"×{b['factor']} (±{b['floor']} below {b['floor']})"
    return k

check = json.load(open(os.path.join(d, "check.json")))
rows = check["fidelity"]
points = []
for r in rows:
    p = f"{r['point']['threads']}×{r['point']['iodepth']}"
    if p not in points: points.append(p)
for p in points:
    print(f"\n#### {p}\n")
    print("| figure | kernel | model | null model | constant | band | verdict |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        if f"{r['point']['threads']}×{r['point']['iodepth']}" != p: continue
        print(f"| {r['figure']} | {num(r['kernel'])} | {num(r['model'])} | {num(r['null_model'])} | {num(r['constant'])} | {band(r['band'])} | {verdict(r['verdict'])} |")
kinds = [r["verdict"]["kind"] if isinstance(r["verdict"], dict) else r["verdict"] for r in rows]
judged = [k for k in kinds if k in ("evidence", "control-within", "outside")]
print(f"\nall points: {len(rows)} figures; {kinds.count('fitted')} fitted; {kinds.count('not-judged')} not judged; "
      f"{len(judged)} judged, of which {kinds.count('evidence')} evidence (model within, null not), "
      f"{kinds.count('control-within')} within with a control, {kinds.count('outside')} outside")
sites = [r for r in rows if "contended acquisitions per I/O at" in r["figure"]]
for p in points:
    ev = [r["figure"].rsplit(" ", 1)[-1] for r in sites if f"{r['point']['threads']}×{r['point']['iodepth']}" == p and isinstance(r["verdict"], dict) and r["verdict"]["kind"] == "evidence"]
    print(f"{p}: per-site contention that is evidence: {len(ev)} of 5 ({', '.join(ev) or 'none'})")
for f in sorted(glob.glob(os.path.join(d, "inject-*.json"))):
    j = json.load(open(f))
    jd = j.get("judgement", {})
    print(f"\n#### {os.path.basename(f)}: {j['config']['threads']} jobs; model from {((j['inject'].get('model_from') or {}).get('file')) or 'its own calibration (no pads)'}\n")
    print("| figure | kernel | model | null model | band | verdict |")
    print("| --- | --- | --- | --- | --- | --- |")
    for x in jd.get("figures", []):
        slope = "slope" in x["figure"]
        fmt = (lambda v: "-" if v is None else f"{100*v:+.2f} %/µs") if slope else num
        print(f"| {x['figure']} | {fmt(x['kernel'])} | {fmt(x['model'])} | {fmt(x['null'])} | {x['band']} | {verdict(x['verdict'])} |")
    for row in j.get("side_by_side", []):
        k, m = row.get("kernel"), row.get("model")
        if k and m:
            print(f"\n- {row['cost_ns']} ns: kernel {k['value']:.3f} [{k['lo']:.3f}, {k['hi']:.3f}], model {m['value']:.3f} [{m['lo']:.3f}, {m['hi']:.3f}]", end="")
    print(f"\n\n{jd.get('evidence', 0)} of {jd.get('judged', 0)} judged figures are evidence")
