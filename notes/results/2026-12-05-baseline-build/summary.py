#!/usr/bin/env python3
"""Each run's `builds` changes (compare --baseline EXE): ratio, change, 95 % interval, verdict."""
import json
import sys

for path in sys.argv[1:]:
    d = json.load(open(path))
    b = d["builds"]
    changes = b["changes"]
    verdicts = {}
    for c in changes:
        verdicts[str(c.get("verdict"))] = verdicts.get(str(c.get("verdict")), 0) + 1
    print(f"## {path}: {changes[0].get('rounds')} paired rounds; verdicts {verdicts}")
    print()
    print("| ratio | lock | change | 95 % interval | verdict |")
    print("| --- | --- | --- | --- | --- |")
    for c in changes:
        i = c.get("interval") or {}
        lo, hi = i.get("lo"), i.get("hi")
        iv = f"[{100 * lo:+.1f}, {100 * hi:+.1f}] %" if lo is not None else "none"
        print(f"| {c['ratio']} | {c.get('lock')} | {100 * c['change']:+.1f} % | {iv} | {c.get('verdict')} |")
    print()
