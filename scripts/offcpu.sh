#!/usr/bin/env bash
# Off-CPU flamegraph of one schedlab command: where its threads leave the CPU (futex waits of a
# parked lock, yields, preemption) and for how long, from the scheduler's sched_switch tracepoint.
# pprof (`schedlab flamegraph`) sees on-CPU time only; this is the other half (notes/flamegraphs.md).
#
#   scripts/offcpu.sh OUT_DIR [schedlab arguments...]
#   scripts/offcpu.sh target/offcpu run --variant sched-lock --threads 3 --lock parking-lot --duration 1
#
# Needs perf (Debian: apt-get install linux-perf; libc6-dbg lets it unwind out of libc's futex and
# sched_yield wrappers), root or kernel.perf_event_paranoid <= -1 (it records system-wide, -a, to
# see each thread's switch back in), and python3. Writes OUT_DIR/offcpu.folded and offcpu.svg; the
# counts are microseconds off the CPU. The recording (OUT_DIR/offcpu.data, deleted at the end
# unless OFFCPU_KEEP_DATA=1) is large: 8 KiB of stack per switch, several hundred MB a second with
# a parking lock under contention, and perf script takes about 20 s to unwind a second of it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/offcpu.sh OUT_DIR [schedlab arguments...]}
shift
[ $# -gt 0 ] || set -- run --variant sched-lock --threads 3 --lock parking-lot --duration 1
command -v perf >/dev/null || { echo "perf not found (Debian: apt-get install linux-perf)" >&2; exit 1; }
cargo build --release --quiet
mkdir -p "$out"
bin=target/release/schedlab
# Only switches out of or into a schedlab thread: the rest of the machine is noise here.
# The shell writes its pid and execs schedlab, which keeps it: the fold keeps that process only
# (other schedlab processes on the machine pass the comm filter too).
perf record -q -a -e sched:sched_switch --filter 'prev_comm == "schedlab" || next_comm == "schedlab"' \
  --call-graph dwarf,8192 -o "$out/offcpu.data" -- sh -c 'echo $$ > "$0"; exec "$@"' "$out/pid" "$bin" "$@"
pid=$(cat "$out/pid")
perf script -i "$out/offcpu.data" -F comm,pid,tid,time,event,trace,ip,sym 2>/dev/null \
  | python3 scripts/offcpu-fold.py "$pid" > "$out/offcpu.folded"
"$bin" flamegraph --folded "$out/offcpu.folded" --title "off-CPU: schedlab $*" --count-name us --out "$out"
[ -n "${OFFCPU_KEEP_DATA:-}" ] || rm -f "$out/offcpu.data" "$out/pid"
