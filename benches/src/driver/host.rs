//! The host a run runs on: the CPUs this process may use, pinning a thread to one, and the CPU
//! accounting of this process and of the machine (`getrusage`, `/proc/stat`, `/proc/loadavg`).

/// CPU accounting at one moment: this process's CPU seconds, and the machine's busy and steal
/// seconds (all CPUs) from `/proc/stat`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CpuSample {
    process_s: f64,
    machine_busy_s: f64,
    steal_s: f64,
}

pub(crate) fn cpu_sample() -> Option<CpuSample> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: all-zero is a valid `rusage`; getrusage fills it for this process.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `usage` is a valid, writable `rusage` for the whole call.
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
            return None;
        }
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        let process_s = tv(usage.ru_utime) + tv(usage.ru_stime);
        let (machine_busy_s, steal_s) = machine_busy_steal_s()?;
        Some(CpuSample { process_s, machine_busy_s, steal_s })
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// The machine's busy and steal CPU seconds so far, all CPUs (`/proc/stat`'s first line).
pub(crate) fn machine_busy_steal_s() -> Option<(f64, f64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let fields: Vec<f64> =
        stat.lines().next()?.split_whitespace().skip(1).filter_map(|f| f.parse().ok()).collect();
    if fields.len() < 8 {
        return None;
    }
    // SAFETY: sysconf has no memory-safety preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    // user nice system idle iowait irq softirq steal [guest guest_nice: already in user]
    let busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6];
    Some((busy / hz, fields[7] / hz))
}

/// A run's CPU figures from its two samples over `secs` of `threads` jobs: this process's busy
/// percent of the jobs' time, other processes' CPUs, steal CPUs (see `workload::RunResult`).
pub(crate) fn cpu_figures(
    cpu: Option<(CpuSample, CpuSample)>,
    secs: f64,
    threads: usize,
) -> (Option<f64>, Option<f64>, Option<f64>) {
    let process_cpu_s = cpu.map(|(a, b)| b.process_s - a.process_s);
    let cpu_busy_pct = process_cpu_s.map(|p| 100.0 * p / (secs * threads as f64));
    // Other processes cannot have used more CPUs than the machine has: an estimate above that
    // (two clocks of coarse resolution over a window of a few ticks) is no figure, and is left
    // unmeasured (`None`: `workload::disturbed` then does not judge the run), not clamped.
    let online = online_cpus() as f64;
    let other_cpus = cpu
        .zip(process_cpu_s)
        .map(|((a, b), p)| ((b.machine_busy_s - a.machine_busy_s - p) / secs).max(0.0))
        .filter(|others| others.is_finite() && *others <= online + OTHERS_TOLERANCE_CPUS);
    let steal_cpus = cpu.map(|(a, b)| (b.steal_s - a.steal_s) / secs);
    (cpu_busy_pct, other_cpus, steal_cpus)
}

#[cfg(test)]
mod bound_tests {
    use super::*;

    fn sample(process_s: f64, machine_busy_s: f64) -> CpuSample {
        CpuSample { process_s, machine_busy_s, steal_s: 0.0 }
    }

    #[test]
    fn other_processes_beyond_the_machines_cpus_are_no_figure() {
        let cpus = online_cpus() as f64;
        // 0.5 s of others' CPU over 1 s: a figure.
        let (_, others, _) = cpu_figures(Some((sample(0.0, 0.0), sample(1.0, 1.5))), 1.0, 1);
        assert_eq!(others, Some(0.5));
        // 142.7 CPUs' worth on this machine: refused, not clamped to its CPU count.
        let busy = 1.0 + 142.7 * 0.05;
        let (_, others, _) = cpu_figures(Some((sample(0.0, 0.0), sample(1.0, busy))), 0.05, 1);
        assert!(
            142.7 > cpus + OTHERS_TOLERANCE_CPUS,
            "a machine with 143 CPUs cannot run this check"
        );
        assert_eq!(others, None);
    }

    #[test]
    fn the_running_count_is_the_fourth_field_of_loadavg() {
        assert_eq!(running_in_loadavg("0.71 1.61 1.95 3/174 4354\n"), Some(3));
        assert_eq!(running_in_loadavg("0.71 1.61 1.95"), None);
        assert_eq!(running_in_loadavg("0.71 1.61 1.95 x/174 4354"), None);
        // This process's reading thread is runnable in every reading: never a negative count.
        assert!(other_runnable_threads().is_some_and(|n| n < 1 << 20));
    }
}

/// How far above the machine's CPU count an estimate of other processes' CPUs may go and still
/// be read as a figure (the tick counters of /proc/stat advance in whole ticks).
const OTHERS_TOLERANCE_CPUS: f64 = 0.5;

/// The machine's online CPUs (all of them, not only this process's affinity).
pub fn online_cpus() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n > 0 {
        n as usize
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// The CPUs this process may run on, in order (Linux: the affinity mask; elsewhere 0..n).
pub fn allowed_cpus() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `cpu_set_t` is plain data for which all-zero is a valid (empty) set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: pid 0 is the calling thread; the size and pointer describe `set`, which lives
        // for the whole call.
        let rc =
            unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if rc == 0 {
            // SAFETY: `set` was filled by the kernel; CPU_ISSET only reads it, with an index
            // below CPU_SETSIZE.
            let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
                .collect();
            if !cpus.is_empty() {
                return cpus;
            }
        }
    }
    (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect()
}

/// Threads of other processes runnable now: the running count of `/proc/loadavg` less the
/// thread that reads it, the median of [`LOAD_SAMPLES`] readings 10 ms apart. One reading is an
/// instant: on a quiet machine it caught kernel workers and the previous command's exiting
/// threads, and said "4 other runnable threads" (notes/results/2026-12-04-placement.md); a
/// process that keeps a CPU busy is runnable in most readings. `None` where that file is
/// missing.
pub fn other_runnable_threads() -> Option<usize> {
    let mut readings = Vec::with_capacity(LOAD_SAMPLES);
    for i in 0..LOAD_SAMPLES {
        if i > 0 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        readings.push(running_in_loadavg(&std::fs::read_to_string("/proc/loadavg").ok()?)?);
    }
    readings.sort_unstable();
    Some(readings[readings.len() / 2].saturating_sub(1))
}

/// Readings of the runnable count behind [`other_runnable_threads`] (an odd number: the median
/// is one of them).
pub const LOAD_SAMPLES: usize = 11;

/// The running count of a `/proc/loadavg` line ("0.71 1.61 1.95 3/174 4354": 3).
fn running_in_loadavg(text: &str) -> Option<usize> {
    text.split_whitespace().nth(3)?.split('/').next()?.parse().ok()
}

/// Pins the calling thread to `cpu`; false if the OS refused (or on non-Linux systems).
pub fn pin_current_thread(cpu: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        if cpu >= libc::CPU_SETSIZE as usize {
            return false;
        }
        // SAFETY: all-zero is a valid empty `cpu_set_t`.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `cpu` is below CPU_SETSIZE (checked above); CPU_SET writes inside `set`.
        unsafe { libc::CPU_SET(cpu, &mut set) };
        // SAFETY: pid 0 is the calling thread; size and pointer describe `set`.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpu;
        false
    }
}
