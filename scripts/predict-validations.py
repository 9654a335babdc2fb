#!/usr/bin/env python3
"""Two readings of `schedlab predict --validate --json` files (notes/results/2026-12-01-predict-validation.md).

  repeat V1.json V2.json ...
      How far the *measured* medians of the same points move between validations, and how wide
      each point's run range is within one: can a 15 % goal be judged at all on this machine?
  seeds VALIDATION.json CALIBRATION.json TOPOLOGY.json [TOPOLOGY.json ...]
      The prediction from one calibration on each topology profile, with seeds 1, 2 and 3, beside
      the validation's measured medians: the error of the median seed and the spread between seeds
      (does the simulation's answer depend on its seed?). Runs ./target/release/schedlab.

Only the standard library; the figures are read from the JSON files, nothing is assumed.
"""
import json
import statistics
import subprocess
import sys
import tempfile

GOAL_PCT = 15.0


def key(row):
    return (row["variant"], row["lock"], row["outside_ns"], row["threads"])


def order(k):
    return (k[3], k[1], k[2], k[0])


def measured(path):
    with open(path) as f:
        return {key(r): r["measured"] for r in json.load(f)["validation"]["rows"]}


def repeat(paths):
    sets = [measured(p) for p in paths]
    keys = sorted(set.intersection(*(set(s) for s in sets)), key=order)
    names = [p.split("/")[-1][:20] for p in paths]
    print("%-11s %-11s %5s %2s " % ("variant", "lock", "out", "t") + " ".join("%20s" % n for n in names) + "  across  within(max)")
    counts = {}
    for k in keys:
        medians = [s[k]["median"] for s in sets]
        across = (max(medians) - min(medians)) / statistics.median(medians) * 100
        within = max((s[k]["max"] - s[k]["min"]) / s[k]["median"] * 100 for s in sets)
        c = counts.setdefault(k[3], [0, 0, 0])
        c[0] += 1
        c[1] += across > GOAL_PCT
        c[2] += within > GOAL_PCT
        print("%-11s %-11s %5d %2d " % k + " ".join("%20.0f" % m for m in medians) + "  %5.1f%%  %5.1f%%" % (across, within))
    for threads, (n, a, w) in sorted(counts.items()):
        print(f"{threads} thread(s): {n} points; the measured median moves more than {GOAL_PCT:.0f} % across the validations at {a}; "
              f"the runs of one validation span more than {GOAL_PCT:.0f} % at {w}")


def seeds(validation, calibration, topologies):
    meas = {k: m["median"] for k, m in measured(validation).items()}
    predicted = {}
    with tempfile.TemporaryDirectory() as tmp:
        for t, topo in enumerate(topologies):
            for seed in (1, 2, 3):
                out = f"{tmp}/p-{t}-{seed}.json"
                subprocess.run(
                    ["./target/release/schedlab", "predict", "--calibration", calibration, "--topology", topo,
                     "--threads", "1,2", "--outside-list", "0,1000", "--lock", "both", "--seed", str(seed), "--json", out],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                with open(out) as f:
                    for p in json.load(f)["predictions"]:
                        predicted.setdefault((t, key(p)), []).append(p["kiops"])
    keys = sorted(meas, key=order)
    print("%-11s %-11s %5s %2s %7s" % ("variant", "lock", "out", "t", "meas") + "".join("  | %-29s" % ("seeds 1-3, " + topo.split("/")[-1])[:29] for topo in topologies))
    summary = {t: [] for t in range(len(topologies))}
    for k in keys:
        line = "%-11s %-11s %5d %2d %7.0f" % (k + (meas[k],))
        for t in range(len(topologies)):
            v = predicted[(t, k)]
            errors = [(x - meas[k]) / meas[k] * 100 for x in v]
            summary[t].append((k[3], abs(statistics.median(errors)), max(errors) - min(errors)))
            line += "  | %5.0f %5.0f %5.0f %+7.1f%%" % (v[0], v[1], v[2], statistics.median(errors))
        print(line)
    for t, topo in enumerate(topologies):
        s = summary[t]
        one = [e for th, e, _ in s if th == 1]
        two = [e for th, e, _ in s if th == 2]
        spread = [sp for th, _, sp in s if th == 2]
        print(f"{topo}: within {GOAL_PCT:.0f} %: {sum(e <= GOAL_PCT for _, e, _ in s)}/{len(s)}; 1 thread median |error| {statistics.median(one):.1f} % "
              f"(max {max(one):.1f}); 2 threads median {statistics.median(two):.1f} % (max {max(two):.1f}); "
              f"2-thread spread between seeds, points: median {statistics.median(spread):.1f}, max {max(spread):.1f}")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "repeat":
        repeat(sys.argv[2:])
    elif len(sys.argv) >= 5 and sys.argv[1] == "seeds":
        seeds(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
