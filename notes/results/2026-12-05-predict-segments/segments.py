#!/usr/bin/env python3
"""Predicted beside measured, segment by segment (issue 41, item 1).

    python3 segments.py DIR [PREDICT.json]

DIR holds predict.json (`schedlab predict --json`) and compare-LOCK-OUTSIDE-THREADS.json
(`schedlab compare --json`, lock statistics on). Per request and per job, in ns (they add up to
threads / throughput):

- predicted: the simulation's breakdown: hold, hand-off + wait, outside;
- measured: hold = the holds of every lock class not taken inside another (a class nested in
  `sched` is part of sched's hold), wait = their contended waits, both from the instrumented
  windows and divided by the requests of those windows; outside = the cycle less both, where
  the cycle is threads / KIOPS of the same windows.

The error of each segment is predicted - measured; its share is that over the cycle's error.
"""
import json
import os
import sys


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return (xs[n // 2] + xs[(n - 1) // 2]) / 2 if n else float("nan")


def measured(path):
    d = json.load(open(path))
    duration = d["config"]["workload"]["duration"]
    duration = duration["secs"] + duration["nanos"] / 1e9 if isinstance(duration, dict) else duration
    out = {}
    for r in d["results"]:
        if not r.get("locks") or not r.get("lockstat_s"):
            continue
        runs = r["kiops"]["runs"] if isinstance(r["kiops"], dict) else []
        total_s = len(runs) * duration
        if not total_s:
            continue
        # The requests of the instrumented windows, as a share of the run's time.
        requests_on = r["requests"] * r["lockstat_s"] / total_s
        top = [l for l in r["locks"] if not l.get("inside")]
        hold = sum(l["hold_ns"]["total"] for l in top) / requests_on
        wait = sum(l["wait_ns"]["total"] for l in top) / requests_on
        kiops = r["requests"] / total_s / 1e3
        cycle = r["threads"] * 1e6 / kiops
        out[r["variant"]] = dict(kiops=kiops, cycle=cycle, hold=hold, wait=wait,
                                 outside=cycle - hold - wait, rounds=len(runs))
    return d, out


def main(folder, predicted="predict.json"):
    p = json.load(open(os.path.join(folder, predicted)))
    rows = []
    for name in sorted(os.listdir(folder)):
        if not (name.startswith("compare-") and name.endswith(".json")):
            continue
        lock, outside, threads = name[len("compare-"):-len(".json")].rsplit("-", 2)
        d, m = measured(os.path.join(folder, name))
        probes = [x for r in d["placement"]["runs"] for x in (r["before_ns"], r["after_ns"]) if x]
        probe = sorted(probes)[len(probes) // 2] if probes else float("nan")
        for variant, mv in m.items():
            pred = [x for x in p["predictions"] if x["variant"] == variant and x["lock"] == lock
                    and x["outside_ns"] == int(outside) and x["threads"] == int(threads)
                    and x["insert"] == "direct" and x["inject"]["ns"] == 0]
            if not pred:
                continue
            b = pred[0]["breakdown"]
            pv = dict(kiops=pred[0]["kiops"], hold=b["hold_ns"], wait=b["handoff_ns"] + b["wait_ns"],
                      outside=b["outside_ns"])
            pv["cycle"] = pv["hold"] + pv["wait"] + pv["outside"]
            rows.append((lock, int(outside), int(threads), variant, pv, mv, probe))
    print("| lock | outside | threads | probe ns | variant | KIOPS pred / meas (err) | cycle ns | "
          "hold ns | hand-off + wait ns | outside ns | the error's largest segment |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    errors = {}
    for lock, outside, threads, variant, pv, mv, probe in sorted(rows):
        err = pv["kiops"] / mv["kiops"] - 1
        d_cycle = pv["cycle"] - mv["cycle"]
        segs = {s: pv[s] - mv[s] for s in ("hold", "wait", "outside")}
        big = max(segs, key=lambda s: abs(segs[s]))
        share = f"{big} {segs[big]:+.0f} ns" + (f" ({segs[big] / d_cycle:.0%} of the cycle's {d_cycle:+.0f})"
                                                 if abs(d_cycle) > 1 else "")
        cell = lambda s: f"{pv[s]:.0f} / {mv[s]:.0f}"
        errors.setdefault((threads, probe > 100), []).append(abs(err))
        print(f"| {lock} | {outside} | {threads} | {probe:.0f} | {variant} | {pv['kiops']:.0f} / {mv['kiops']:.0f} "
              f"({err:+.0%}) | {cell('cycle')} | {cell('hold')} | {cell('wait')} | {cell('outside')} | {share} |")
    print()
    for (threads, far), e in sorted(errors.items()):
        place = "far (probe > 100 ns)" if far else "near"
        print(f"- {threads} thread(s), runs in the {place} placement: median |KIOPS error| "
              f"{median(e):.0%} over {len(e)} points, max {max(e):.0%}")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3) or not os.path.isdir(sys.argv[1]):
        print("usage: segments.py DIR [PREDICT.json] (predict.json and compare-*.json in DIR)",
              file=sys.stderr)
        sys.exit(2)
    main(*sys.argv[1:])
