#!/bin/bash
# Instructions per round trip, lock statistics off and on, for one variant (callgrind counts are
# repeatable where times are not). Usage: callgrind.sh VARIANT [roundtrip flags, e.g. --lock parking-lot]
#
# Plain: `roundtrip --iterations 20000` runs 2000 warm-up + 20000 timed round trips, all off.
# Lockstat: `roundtrip --lockstat --iterations 20000` runs 1000 warm-up + 41 windows of 1000
# (21 off, 20 on). Both are read as the inclusive count of the round-trip closure.
v=$1; shift
B=${SCHEDLAB:-target/release/schedlab}
incl() { valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$$.out $B roundtrip --variant $v --rounds 1 --iterations 20000 "$@" >/dev/null 2>&1; callgrind_annotate --inclusive=yes /tmp/cg.$$.out 2>/dev/null | grep "roundtrip::with_round_trips::{{closure}} \[" | head -1 | awk '{gsub(",","",$1); print $1}'; rm -f /tmp/cg.$$.out; }
p=$(incl "$@"); a=$(incl --lockstat "$@")
python3 -c "p=$p/22000; on=($a-22000*p)/20000; print('$v: plain %.0f instr/rt, lockstat %.0f instr/rt, +%.1f%%' % (p, on, 100*(on/p-1)))"
