#!/usr/bin/env bash
# Reproduces the tables of notes/results/2026-11-29-idling.md: every `schedlab simulate` run of
# that note, its JSON (with provenance) kept under the output folder, one markdown row per run.
# Usage: bash scripts/idling.sh [OUTPUT_DIR]   (default: notes/results/2026-11-29-idling)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
B=target/release/schedlab
OUT=${1:-notes/results/2026-11-29-idling}
mkdir -p "$OUT"

header() {
  echo
  echo "| run | slice_idle | IOPS | avg lat (ms) | stddev (ms) | p99 (ms) | bw (KiB/s) | on device (mean) | idle timer fired | real s |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
}

# row NAME ARGS...: runs `schedlab simulate ARGS --json OUT/NAME.json` and prints its row.
row() {
  local name=$1
  shift
  "$B" simulate "$@" --json "$OUT/$name.json" >/dev/null
  jq -r --arg n "$name" '
    def r(k): (. * pow(10; k) | round) / pow(10; k);
    "| \($n) | \(.slice_idle_ns / 1e6) ms (\(.slice_idle_source)) | \(.iops | round) | \(.lat_avg_us / 1e3 | r(3)) | \(.lat_stddev_us / 1e3 | r(3)) | \(.lat_p99_us / 1e3 | r(1)) | \(.bw_kib_s | round) | \(.device_mean_in_flight | r(1)) | \(.idle_timer_fired) | \(.provenance.wall_s | r(3)) |"
  ' "$OUT/$name.json"
}

SSD=(--device ssd --jobs 10 --iodepth 64 --rw randread --bs 4k --runtime 10)

echo "## SSD, the seed's fio job (10 jobs x iodepth 64, randread 4k, 10 virtual s)"
header
for seed in 1 2 3; do
  row "ssd-on-seed$seed" "${SSD[@]}" --slice-idle 8ms --seed "$seed"
  row "ssd-off-seed$seed" "${SSD[@]}" --slice-idle 0 --seed "$seed"
done
row ssd-registered-seed1 "${SSD[@]}" --seed 1
row ssd-init-seed1 "${SSD[@]}" --idle-decision init --seed 1

echo
echo "## SSD parallelism sweep (seed 1)"
header
for p in 16 32 64 128 256 512; do
  row "ssd-p$p-on" "${SSD[@]}" --parallelism "$p" --slice-idle 8ms --seed 1
  row "ssd-p$p-off" "${SSD[@]}" --parallelism "$p" --slice-idle 0 --seed 1
done

HDD=(--device hdd --iodepth 1 --bs 4k --runtime 10 --seed 1)
echo
echo "## HDD (7200 rpm model), iodepth 1, 10 virtual s, seed 1"
header
row hdd-seq4-on "${HDD[@]}" --jobs 4 --rw read
row hdd-seq4-off "${HDD[@]}" --jobs 4 --rw read --slice-idle 0
row hdd-seq1-on "${HDD[@]}" --jobs 1 --rw read
row hdd-seq1-off "${HDD[@]}" --jobs 1 --rw read --slice-idle 0
row hdd-seq4-think2ms-on "${HDD[@]}" --jobs 4 --rw read --think 2ms
row hdd-seq4-think2ms-off "${HDD[@]}" --jobs 4 --rw read --think 2ms --slice-idle 0
row hdd-seq4-think20ms-on "${HDD[@]}" --jobs 4 --rw read --think 20ms
row hdd-seq4-think20ms-off "${HDD[@]}" --jobs 4 --rw read --think 20ms --slice-idle 0
row hdd-rand4-on "${HDD[@]}" --jobs 4 --rw randread
row hdd-rand4-off "${HDD[@]}" --jobs 4 --rw randread --slice-idle 0

echo
echo "## Weights 100/200/300, 3 groups x 2 jobs x iodepth 128, SSD, 10 virtual s, seed 1"
echo
echo "| run | slice_idle | IOPS | group shares (bytes) | ratio to the first |"
echo "| --- | --- | ---: | --- | --- |"
for si in 0 8ms; do
  name="weights-$si"
  "$B" simulate --device ssd --jobs 6 --iodepth 128 --groups 3 --weights 100,200,300 --runtime 10 --seed 1 \
    --slice-idle "$si" --json "$OUT/$name.json" >/dev/null
  jq -r --arg n "$name" '
    def r(k): (. * pow(10; k) | round) / pow(10; k);
    "| \($n) | \(.slice_idle_ns / 1e6) ms | \(.iops | round) | \([.groups[].share | r(4)] | join(" / ")) | \(.groups[0].bytes as $u | [.groups[].bytes / $u | r(3)] | join(" : ")) |"
  ' "$OUT/$name.json"
done

echo
jq -r '"provenance: commit \(.provenance.commit) | \(.provenance.rustc) | \(.provenance.cpus) CPUs (\(.provenance.cpu_model)) | \(.provenance.os) | \(.provenance.profile) | \(.provenance.date)"' "$OUT/ssd-on-seed1.json"
