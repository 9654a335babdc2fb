"""Issue 42's check from compare --json reports: python3 summary.py run1.json run2.json run3.json
[run4.json ...]. The first three are the three default runs in a row; any after them ran with
--baseline. Prints markdown: each ratio's interval in each of the three and whether every two
overlap, each run's A/A floor, every verdict beside the interval it was taken on, each run's
placement, and the baseline verdicts."""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def ratios(d):
    """(name, lock) -> (median, lo, hi, verdict or None, threshold or None) of every ratio."""
    out = {}
    for r in d["results"]:
        if r["variant"] == "sched-lock" or not r.get("vs_sched_lock"):
            continue
        i = r.get("vs_sched_lock_interval")
        out[(r["variant"] + " ÷ sched-lock", r["lock"])] = (
            r["vs_sched_lock"]["median"], i and i["lo"], i and i["hi"], None, None)
    for s in d["ratios"]:
        for b in s["by_lock"]:
            i = b.get("interval")
            out[(f'{s["numerator"]} ÷ {s["denominator"]} ({s["name"]})', b["lock"])] = (
                b["measured"]["median"], i and i["lo"], i and i["hi"], b.get("meets_goal"),
                s.get("goal_at_least"))
    return out


def fmt(v):
    return "-" if v is None else f"{v:.2f}"


def main(files):
    reports = [load(f) for f in files]
    three = reports[:3]
    print("## Placement of each run\n")
    print("| run | reported | reported ns | rounds kept | rounds left out (moved / other placement) |")
    print("| --- | --- | --- | --- | --- |")
    for f, d in zip(files, reports):
        p = d["placement"]
        moved = len(p["rounds_run_again"]) + len(p["rounds_moved_left_out"])
        ns = p.get("reported_ns")
        print(f'| {f} | {p["reported"]} | {"-" if ns is None else f"{ns:.0f}"} | '
              f'{d["rounds_completed"]} | {moved} / {len(p["rounds_left_out"])} |')
    print("\n## Every ratio in the three runs: median [95 % interval]\n")
    names = list(ratios(three[0]).keys())
    print("| ratio | lock | " + " | ".join(files[:3]) + " | every two overlap |")
    print("| --- | --- | " + " | ".join("---" for _ in three) + " | --- |")
    all_overlap = True
    for key in names:
        cells, ivs = [], []
        for d in three:
            m, lo, hi, _, _ = ratios(d).get(key, (None, None, None, None, None))
            cells.append(f"{fmt(m)} [{fmt(lo)}, {fmt(hi)}]")
            ivs.append((lo, hi))
        known = [iv for iv in ivs if iv[0] is not None]
        ok = len(known) == 3 and max(lo for lo, _ in known) <= min(hi for _, hi in known)
        pairwise = len(known) == 3 and all(
            a[0] <= b[1] and b[0] <= a[1] for a in known for b in known)
        all_overlap &= pairwise
        print(f"| {key[0]} | {key[1]} | " + " | ".join(cells) +
              f" | {'yes' if pairwise else 'NO'}{' (all three share a point)' if ok else ''} |")
    print(f"\nEvery ratio's three intervals overlap two by two: **{'yes' if all_overlap else 'no'}**.\n")
    print("## The A/A floor\n")
    print("| run | A/A median | 95 % interval | covers 1 |")
    print("| --- | --- | --- | --- |")
    for f, d in zip(files, reports):
        for n in d["noise_floor"]:
            i = n.get("interval")
            covers = i is not None and i["lo"] <= 1.0 <= i["hi"]
            print(f'| {f} | {n["ratio"]["median"]:.3f} | [{fmt(i and i["lo"])}, {fmt(i and i["hi"])}] '
                  f'| {"yes" if covers else "NO"} |')
    print("\n## Verdicts beside their intervals (a verdict on a straddling interval is a defect)\n")
    print("| run | ratio | interval | threshold | verdict | consistent |")
    print("| --- | --- | --- | --- | --- | --- |")
    for f, d in zip(files, reports):
        for key, (m, lo, hi, verdict, goal) in ratios(d).items():
            if verdict is None or goal is None:
                continue
            straddles = lo is None or (lo < goal <= hi)
            ok = (verdict == "inconclusive") == straddles or verdict == "not-judged"
            print(f"| {f} | {key[0]} | [{fmt(lo)}, {fmt(hi)}] | {goal} | {verdict} | {'yes' if ok else 'NO'} |")
        for r in d["results"]:
            v, i = r.get("lockstat_overhead_verdict"), r.get("lockstat_overhead_interval")
            if v is None or i is None:
                continue
            straddles = i["lo"] < 5.0 <= i["hi"]
            ok = (v == "inconclusive") == straddles
            print(f'| {f} | lock statistics cost, {r["variant"]} | [{i["lo"]:.1f}, {i["hi"]:.1f}] % '
                  f'| ≤ 5 % | {v} | {"yes" if ok else "NO"} |')
    for f, d in zip(files[3:], reports[3:]):
        b = d.get("baseline")
        if not b:
            continue
        print(f"\n## {f} against --baseline {', '.join([b['file']] + b['more_files'])}\n")
        print(f'Placement: baseline {fmt(b.get("placement_ns"))} ns, this run '
              f'{fmt(b.get("current_placement_ns"))} ns; left out: {b.get("placement_left_out") or "none"}; '
              f'not judged: {b.get("not_judged") or "-"}\n')
        print("| ratio | then | now | change % | 95 % interval % | floor % | verdict |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for c in b["changes"]:
            i, fl = c.get("interval"), c.get("between_run_floor")
            iv = "-" if i is None else f'[{100 * i["lo"]:+.1f}, {100 * i["hi"]:+.1f}]'
            none = "not judged: placement" if b.get("not_judged") else "none: no interval"
            print(f'| {c["ratio"]} | {c["baseline"]:.2f} | {c["current"]:.2f} | {100 * c["change"]:+.1f} '
                  f'| {iv} | {"-" if fl is None else f"{100 * fl:.1f}"} | {c["verdict"] or none} |')


if __name__ == "__main__":
    main(sys.argv[1:])
