#!/usr/bin/env python3
"""The held-out anchors of `schedlab predict` (issue 41, item 4): published ratio, predicted ratio
and the error, for every anchor of notes/anchors.json.

  python3 scripts/predict-anchors.py [ANCHORS.json] [--json OUT.json]
  python3 scripts/predict-anchors.py [ANCHORS.json] --repeat DIR

For each anchor the model can represent, one `schedlab predict` from the anchor's calibration and
topology profile (deterministic: same files and seed, same figures) predicts the before and after
entries at the anchor's jobs, lock kind and outside work; the ratio is after / before, the error
(predicted - published) / published. Anchors the model cannot represent are listed with the
reason. Nothing is fitted to the anchors: every input is read from the files the anchor names.

--repeat DIR predicts every anchor again from each other calibration of the same entries in DIR
(`calibration-KERNEL-N.json`, N = 2, 3, ...: KERNEL the anchor's kernel profile) and prints, per
anchor, the predicted ratio of each calibration, their range, and whether the published ratio lies
inside it: how far the prediction moves between calibrations of this machine. Its last column
keeps the calibrations whose two entries' lines were counted in the quiet placement: each entry's
probed transfer (the divisor of its lines, `transfer_ns`) at most twice the least line transfer
any calibration of the set measured for its machine (a probe preempted or made across the host's
far placement reads several times more, and the lines it divides come out that much fewer).

The binary is $SCHEDLAB_BIN (default target/release/schedlab); each prediction runs under
`nice -n 10`. Only the standard library.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
USAGE = "usage: predict-anchors.py [ANCHORS.json] [--json OUT.json | --repeat DIR]"


def fail(message):
    print("predict-anchors.py: " + message, file=sys.stderr)
    sys.exit(2)


def arguments(argv):
    anchors, out, repeat = os.path.join(ROOT, "notes/anchors.json"), None, None
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        if arg == "--json" and rest:
            out = rest.pop(0)
        elif arg == "--repeat" and rest:
            repeat = rest.pop(0)
        elif arg.startswith("-"):
            fail("bad option %s (%s)" % (arg, USAGE))
        else:
            anchors = arg
    return anchors, out, repeat


def check_kernel(anchor, calibration):
    """Fails unless every entry the anchor uses is in `calibration`, measured with its kernel."""
    m = anchor["model"]
    with open(calibration) as f:
        entries = json.load(f)["calibrations"]
    for side in (m["before"], m["after"]):
        key = (side["variant"], m["lock"], side["insert"])
        found = [c for c in entries if (c["variant"], c["lock"], c["insert"]) == key]
        if not found:
            fail("%s has no calibration of %s on %s (%s)" % ((calibration,) + key))
        if found[0].get("kernel") != m["kernel"]:
            fail("%s: %s was calibrated with kernel profile %s, the anchor names %s"
                 % (anchor["name"], calibration, found[0].get("kernel"), m["kernel"]))


def predict(binary, anchor, calibration):
    """(before KIOPS, after KIOPS, provenance) of `anchor`'s model, from one `schedlab predict`."""
    m = anchor["model"]
    check_kernel(anchor, calibration)
    sides = (m["before"], m["after"])
    inserts = sorted({s["insert"] for s in sides})
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "p.json")
        cmd = ["nice", "-n", "10", binary, "predict",
               "--calibration", calibration, "--topology", os.path.join(ROOT, m["topology"]),
               "--lock", m["lock"], "--insert", inserts[0] if len(inserts) == 1 else "both",
               "--variants", ",".join(sorted({s["variant"] for s in sides})),
               "--threads", str(m["jobs"]), "--outside-list", str(m["outside_ns"]), "--json", out]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            fail("%s: %s exited %d: %s"
                 % (anchor["name"], " ".join(cmd[3:]), run.returncode, run.stderr.strip()))
        with open(out) as f:
            report = json.load(f)
    report = report.get("report", report)

    def kiops(side):
        want = (side["variant"], side["insert"], m["lock"], m["jobs"])
        for p in report["predictions"]:
            if (p["variant"], p["insert"], p["lock"], p["threads"]) == want:
                return p["kiops"]
        fail("%s: no predicted point for %s (%s)"
             % (anchor["name"], side["variant"], side["insert"]))

    return kiops(m["before"]), kiops(m["after"]), report["provenance"]


def entry(side):
    if side["insert"] == "direct":
        return side["variant"]
    return "%s+%s" % (side["variant"], side["insert"])


def median(values):
    values = sorted(values)
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def table(anchors, binary, json_out):
    # Printed once every anchor is predicted: a failure prints its one line and nothing else.
    rows, provenance, lines = [], None, []
    lines.append("| anchor | published (KIOPS) | published x | model: before -> after "
                 "| predicted (KIOPS, model) | predicted x | error |")
    lines.append("| --- | --- | ---: | --- | --- | ---: | ---: |")
    for anchor in anchors:
        pub, m = anchor["published"], anchor["model"]
        published = pub["after"] / pub["before"]
        row = {"name": anchor["name"], "published_before": pub["before"],
               "published_after": pub["after"], "published_ratio": published}
        figures = "%g -> %g | %.2f" % (pub["before"], pub["after"], published)
        if m is None:
            lines.append("| %s | %s | not represented | - | - | - |" % (anchor["name"], figures))
            row.update(predicted_ratio=None, error_pct=None, why_not=anchor["not_represented"])
            rows.append(row)
            continue
        before, after, provenance = predict(binary, anchor, os.path.join(ROOT, m["calibration"]))
        predicted = after / before
        error = (predicted - published) / published * 100.0
        pair = "%s -> %s, %d jobs, %s" % (entry(m["before"]), entry(m["after"]), m["jobs"],
                                          os.path.basename(m["topology"]))
        lines.append("| %s | %s | %s | %.0f -> %.0f | %.2f | %+.0f %% |"
                     % (anchor["name"], figures, pair, before, after, predicted, error))
        row.update(model=m, predicted_before=before, predicted_after=after,
                   predicted_ratio=predicted, error_pct=error,
                   partly_represented=anchor["not_represented"])
        rows.append(row)
    print("\n".join(lines))
    errors = [abs(r["error_pct"]) for r in rows if r["error_pct"] is not None]
    if errors:
        print("\n%d of %d anchors predicted; |error| median %.0f %%, largest %.0f %%"
              % (len(errors), len(rows), median(errors), max(errors)))
    if provenance:
        print("binary: commit %s, %s" % (provenance.get("commit"), provenance.get("rustc")))
    if json_out:
        with open(json_out, "w") as f:
            json.dump({"anchors": rows, "provenance": provenance}, f, indent=2)
            f.write("\n")


def probes(anchor, calibration):
    """(machine's transfer, before entry's probed transfer, after entry's), ns."""
    m = anchor["model"]
    with open(calibration) as f:
        data = json.load(f)
    by_entry = {(c["variant"], c["lock"], c["insert"]): c["transfer_ns"]
                for c in data["calibrations"]}
    sides = [by_entry[(s["variant"], m["lock"], s["insert"])] for s in (m["before"], m["after"])]
    return [data["machine"]["transfer"]["core_ns"]] + sides


def repeat(anchors, binary, directory):
    """Each anchor predicted from every calibration of its kernel profile in `directory`."""
    found = {}
    for path in sorted(glob.glob(os.path.join(directory, "calibration-*-*.json"))):
        match = re.match(r"calibration-(.+)-(\d+)\.json$", os.path.basename(path))
        if match:
            found.setdefault(match.group(1), []).append((int(match.group(2)), path))
    if not found:
        fail("%s holds no calibration-KERNEL-N.json" % directory)
    lines = ["| anchor | published x | the anchor's calibration | each other one | range "
             "| published inside | quiet-placement calibrations |",
             "| --- | ---: | ---: | --- | --- | --- | --- |"]
    for anchor in anchors:
        m = anchor["model"]
        if m is None:
            continue
        paths = [os.path.join(ROOT, m["calibration"])]
        paths += [p for _, p in sorted(found.get(m["kernel"], []))]
        ratios, read = [], []
        for path in paths:
            before, after, _ = predict(binary, anchor, path)
            ratios.append(after / before)
            read.append(probes(anchor, path))
        quiet = 2.0 * min(r[0] for r in read)
        kept = ["%.2f (#%d)" % (ratio, i + 1) for i, (ratio, r) in enumerate(zip(ratios, read))
                if max(r[1:]) <= quiet]
        pub = anchor["published"]["after"] / anchor["published"]["before"]
        inside = "yes" if min(ratios) <= pub <= max(ratios) else "no"
        lines.append("| %s | %.2f | %.2f | %s | %.2f-%.2f | %s | %s |"
                     % (anchor["name"], pub, ratios[0], " ".join("%.2f" % r for r in ratios[1:]),
                        min(ratios), max(ratios), inside, ", ".join(kept) or "none"))
    print("\n".join(lines))
    print("\n#1: the anchor's calibration; #N: %s/calibration-KERNEL-N.json" % directory)


def main(argv):
    anchors_path, json_out, repeat_dir = arguments(argv)
    binary = os.environ.get("SCHEDLAB_BIN", os.path.join(ROOT, "target/release/schedlab"))
    if json_out and not os.path.isdir(os.path.dirname(os.path.abspath(json_out))):
        fail("--json %s: no such directory" % json_out)
    with open(anchors_path) as f:
        anchors = json.load(f)["anchors"]
    if repeat_dir:
        repeat(anchors, binary, repeat_dir)
    else:
        table(anchors, binary, json_out)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except (OSError, ValueError, KeyError, TypeError) as e:
        # A file missing or not of the anchors' or a calibration's shape: one line, exit 2.
        fail("%s: %s" % (type(e).__name__, e))
