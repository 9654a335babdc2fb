#!/usr/bin/env bash
# Whether this machine can run `schedlab kernel` (and its tests on the real kernel): prints
# "ready", or why not, and exits 0 or 1. Used by scripts/test.sh.
set -u
why() { echo "$1"; exit 1; }
[ "$(id -u)" = 0 ] || why "not root"
for tool in fio perf bpftrace losetup; do
  command -v "$tool" >/dev/null 2>&1 || why "$tool not installed (Debian: apt-get install fio linux-perf bpftrace)"
done
losetup -f >/dev/null 2>&1 || why "no free loop device"
grep -qw bfq /sys/block/loop*/queue/scheduler 2>/dev/null || grep -q '^bfq ' /proc/modules 2>/dev/null || why "no BFQ in this kernel"
grep -qE ' cgroup .*blkio| cgroup2 ' /proc/mounts || why "no cgroup hierarchy with the I/O controller"
[ -e /sys/kernel/tracing/events/lock/contention_begin ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
[ -e /sys/kernel/tracing/events/lock/contention_begin ] || why "no lock:contention_begin tracepoint"
echo ready
