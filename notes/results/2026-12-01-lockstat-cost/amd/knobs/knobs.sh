#!/bin/bash
# usage: knobs.sh LOCK OUT reps knobs...
lock=$1; out=$2; reps=$3; shift 3
for r in $(seq $reps); do
 for k in "$@"; do
  SCHEDLAB_LSX=$k /tmp/exp/schedlab-lsx compare --lock $lock --variants ${VARS:-sched-lock,debug-off,no-stats} --rounds ${ROUNDS:-2} $EXTRA > /tmp/exp/k-$k-$r.txt 2>&1
  sed -n '/^What the lock statistics cost/,/^NOTE/p' /tmp/exp/k-$k-$r.txt | awk -v k=$k -v r=$r -v l=$lock '$2==l {print r, k, $1, $3, $5, $6}' >> $out
 done
done
