#!/usr/bin/env python3
"""Summary of one `schedlab predict --validate --json` file: issue 41's four figures, and the
variants' order per group judged both ways: pair by pair on paired intervals (the validation's
verdict since a650c66) and by the medians' ranks place for place (the rule before). The control:
with every prediction reversed, the pair rule must call wrong every group it orders at all.
Only the standard library."""
import json
import statistics
import sys

v = json.load(open(sys.argv[1]))["validation"]
rows = v["rows"]

print("| threads | points | median \\|error\\| | max \\|error\\| | within 15 % (median) | no interval |")
print("| --- | --- | --- | --- | --- | --- |")
for t in sorted({r["threads"] for r in rows}):
    errs = [abs(r["error_pct"]) for r in rows if r["threads"] == t and r["error_pct"] is not None]
    none = sum(1 for r in rows if r["threads"] == t and r["measured_interval"] is None)
    print(f"| {t} | {len(errs)} | {statistics.median(errs):.1f} % | {max(errs):.1f} % | "
          f"{sum(e <= 15 for e in errs)} | {none} |")
print()
print("| lock | outside (ns) | threads | agree | disagree | within noise | no interval | "
      "verdict | medians' ranks | reversed prediction |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
right = wrong = ranks = reversed_wrong = 0
for o in v["orderings"]:
    # Reversing every prediction swaps agree and disagree, pair for pair.
    rev = "wrong" if o["pairs_agree"] > 0 else ("not-judged" if o["pairs_disagree"] == 0 else "?")
    if o["pairs_agree"] == 0 and o["pairs_disagree"] > 0:
        rev = "not-judged" if o["pairs_no_interval"] > 0 else "right"
    right += o["verdict"] == "right"
    wrong += o["verdict"] == "wrong"
    ranks += bool(o["same"])
    reversed_wrong += rev == "wrong"
    print(f"| {o['lock']} | {o['outside_ns']} | {o['threads']} | {o['pairs_agree']} | "
          f"{o['pairs_disagree']} | {o['pairs_within_noise']} | {o['pairs_no_interval']} | "
          f"{o['verdict']} | {'same' if o['same'] else 'different'} | {rev} |")
n = len(v["orderings"])
print()
print(f"order right in {right} of {n} groups, wrong in {wrong} (pair rule); the medians' ranks "
      f"the same in {ranks} of {n}; with every prediction reversed, {reversed_wrong} of {n} wrong")
print(f"median |error| {v['median_abs_error_pct']:.1f} %, max {v['max_abs_error_pct']:.1f} %")
print()
print("basis:", v["error_basis"])
