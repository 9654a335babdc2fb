#!/bin/sh
# Issue 42's check on this machine, quiet: three default `schedlab compare` runs in a row, then
# one against the first as its --baseline, and one against all three. Usage: sh run.sh OUT [BIN]
# (BIN default: target/release/schedlab of the repository). Writes into the folder OUT here.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?give the output folder}
bin=${2:-$here/../../../target/release/schedlab}
mkdir -p "$here/$out" && cd "$here/$out"
{ date -u; uname -r; nproc; grep -m1 'model name' /proc/cpuinfo; rustc --version; "$bin" --version;
  git -C "$here" rev-parse --short HEAD; } > provenance.txt 2>&1
for i in 1 2 3; do
  uptime >> provenance.txt
  "$bin" compare --json run$i.json > run$i.txt 2> run$i.err; echo "rc $?" >> run$i.txt
done
uptime >> provenance.txt
"$bin" compare --json run4.json --baseline run1.json > run4.txt 2> run4.err; echo "rc $?" >> run4.txt
"$bin" compare --json run5.json --baseline run1.json --baseline run2.json --baseline run3.json \
  > run5.txt 2> run5.err; echo "rc $?" >> run5.txt
uptime >> provenance.txt
python3 ../summary.py run1.json run2.json run3.json run4.json run5.json > summary.md
