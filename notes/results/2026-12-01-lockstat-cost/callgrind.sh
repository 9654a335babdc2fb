#!/bin/bash
# instructions per round trip inside the round-trip closure (inclusive), plain vs lockstat
v=$1; shift
B=${SCHEDLAB:-target/release/schedlab}
incl() { valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$$.out $B roundtrip --variant $v --rounds 1 --iterations 20000 "$@" >/dev/null 2>&1; callgrind_annotate --inclusive=yes /tmp/cg.$$.out 2>/dev/null | grep "roundtrip::measure_until.*{{closure}}" | grep -v "{{closure}}::" | head -1 | awk '{gsub(",","",$1); print $1}'; rm -f /tmp/cg.$$.out; }
p=$(incl "$@"); a=$(incl --lockstat "$@")
python3 -c "p=$p/22000; a=$a/22000; l=a-p; print('$v: plain %.0f instr/rt, lockstat %.0f instr/rt, +%.1f%%' % (p, l, 100*(l/p-1)))"
