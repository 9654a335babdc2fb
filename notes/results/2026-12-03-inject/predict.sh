#!/usr/bin/env bash
# Issue 32 item 4: what `predict` says for the seeds' 8 threads (and this machine's 2) with a known
# cost inside or outside the scheduler lock, for `mainline` on the 6.18 profile (the model of this
# kernel). Calibrates `mainline` once on this machine (quiet), then simulates each cost and site
# from that calibration on the seeds' i7-4850HQ topology. Writes calibration.json, predict.csv
# (cost_ns, at, threads, kiops) and one JSON per run into this script's folder/predict/.
set -euo pipefail
out=$(dirname "$0")/predict
mkdir -p "$out"
bin=target/release/schedlab
common=(--variants mainline --kernel 6.18 --insert direct --lock fair-spin --topology notes/topology/i7-4850hq.json --threads 2,8)
"$bin" predict "${common[@]}" --save-calibration "$out/calibration.json" --json "$out/cal-run.json" > /dev/null
echo "cost_ns,at,threads,kiops" > "$out/predict.csv"
for cost in 0 50 100 200 500 1000 2000; do
  for at in inside outside; do
    "$bin" predict "${common[@]}" --calibration "$out/calibration.json" --inject-ns "$cost" --at "$at" --json "$out/$cost-$at.json" > /dev/null
    python3 - "$out/$cost-$at.json" "$cost" "$at" >> "$out/predict.csv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["predictions"]:
    print(f"{sys.argv[2]},{sys.argv[3]},{p['threads']},{p['kiops']:.3f}")
PY
  done
done
cat "$out/predict.csv"
