//! The sampler: per-thread CPU-time timers sending `SIGPROF`, the serialised signal handler, and
//! the samples resolved to named frames (the module docs of `profile` say why).

use super::folded::Folded;
use crate::error::ExperimentError;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// Default sampling frequency, Hz: under the machine's 250 Hz tick (process CPU timers are checked
/// on ticks, so faster asks are coalesced), and not a divisor of it, so sampling does not lock
/// step with tick-driven activity.
pub const DEFAULT_FREQUENCY: i32 = 199;

/// Shared objects in which a sample is dropped rather than unwound.
pub const BLOCKLIST: [&str; 4] = ["libc", "libgcc", "pthread", "vdso"];

/// One pprof profiler per process.
pub(crate) static ONE_PROFILER: Mutex<()> = Mutex::new(());

/// Process CPU time (user + system, every thread, live or exited), seconds, from /proc/self/stat.
pub(crate) fn process_cpu_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start at field 3 (state); utime and
    // stime are fields 14 and 15, in clock ticks (USER_HZ, 100 on Linux).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}

/// Per-thread CPU-time timers delivering `SIGPROF` to their own thread (Linux).
///
/// A watcher thread lists `/proc/self/task` every few milliseconds and arms a timer for every
/// thread it has not armed yet (itself included), on that thread's CPU clock
/// (`(!tid << 3) | 6`, the encoding `pthread_getcpuclockid` uses: a per-thread, scheduler-precise
/// CPU clock), firing every 1/frequency s of that thread's CPU time with `SIGEV_THREAD_ID`
/// delivery to it. A thread that lives less than a scan leaves no sample.
pub struct ThreadTimers {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    watcher: Option<std::thread::JoinHandle<Vec<usize>>>,
}

impl std::fmt::Debug for ThreadTimers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadTimers").finish_non_exhaustive()
    }
}

/// How often the watcher looks for new threads.
pub(crate) const WATCH_EVERY: std::time::Duration = std::time::Duration::from_millis(5);

#[cfg(target_os = "linux")]
pub(crate) fn arm_thread_timer(tid: libc::pid_t, frequency: i32) -> Option<usize> {
    // The thread's CPU-time clock: CPUCLOCK_PERTHREAD_MASK (4) | CPUCLOCK_SCHED (2), tid in the
    // upper bits, complemented (what glibc's pthread_getcpuclockid computes).
    let clock = ((!tid) << 3) | 6;
    // SAFETY: all-zero is a valid `sigevent` (its union and padding included); the fields that
    // matter are set below.
    let mut event: libc::sigevent = unsafe { std::mem::zeroed() };
    event.sigev_notify = libc::SIGEV_THREAD_ID;
    event.sigev_signo = libc::SIGPROF;
    event.sigev_notify_thread_id = tid;
    let mut timer: libc::timer_t = std::ptr::null_mut();
    // SAFETY: `event` and `timer` are valid for the call; the kernel checks the clock and tid.
    if unsafe { libc::timer_create(clock, &mut event, &mut timer) } != 0 {
        return None;
    }
    let period_ns = 1_000_000_000 / frequency.max(1) as i64;
    let period =
        libc::timespec { tv_sec: period_ns / 1_000_000_000, tv_nsec: period_ns % 1_000_000_000 };
    let spec = libc::itimerspec { it_interval: period, it_value: period };
    // SAFETY: `timer` was just created; `spec` is valid for the call.
    if unsafe { libc::timer_settime(timer, 0, &spec, std::ptr::null_mut()) } != 0 {
        // SAFETY: `timer` was created above and is deleted once.
        unsafe { libc::timer_delete(timer) };
        return None;
    }
    Some(timer as usize)
}

#[cfg(target_os = "linux")]
pub(crate) fn thread_ids() -> Vec<libc::pid_t> {
    std::fs::read_dir("/proc/self/task")
        .map(|dir| dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default()
}

impl ThreadTimers {
    /// Arms every thread of the process now, and every thread that appears until [`stop`].
    ///
    /// [`stop`]: ThreadTimers::stop
    pub fn start(frequency: i32) -> ThreadTimers {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let seen_stop = stop.clone();
        #[cfg(target_os = "linux")]
        let arm_new = move |armed: &mut std::collections::BTreeMap<libc::pid_t, usize>| {
            for tid in thread_ids() {
                if let std::collections::btree_map::Entry::Vacant(e) = armed.entry(tid) {
                    if let Some(timer) = arm_thread_timer(tid, frequency) {
                        e.insert(timer);
                    }
                }
            }
        };
        #[cfg(target_os = "linux")]
        let mut armed = std::collections::BTreeMap::new();
        #[cfg(target_os = "linux")]
        arm_new(&mut armed);
        let watcher = std::thread::Builder::new()
            .name("profile-timers".into())
            .spawn(move || {
                #[cfg(target_os = "linux")]
                {
                    while !seen_stop.load(Ordering::Relaxed) {
                        arm_new(&mut armed);
                        std::thread::sleep(WATCH_EVERY);
                    }
                    armed.into_values().collect()
                }
                #[cfg(not(target_os = "linux"))]
                {
                    let _ = (seen_stop, frequency);
                    Vec::new()
                }
            })
            .ok();
        ThreadTimers { stop, watcher }
    }

    /// Disarms and deletes every timer.
    pub fn stop(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let Some(watcher) = self.watcher.take() else { return };
        let timers = watcher.join().unwrap_or_default();
        #[cfg(target_os = "linux")]
        for timer in timers {
            // SAFETY: each timer was created by `arm_thread_timer` and is deleted once, here.
            unsafe { libc::timer_delete(timer as libc::timer_t) };
        }
        #[cfg(not(target_os = "linux"))]
        let _ = timers;
    }
}

impl Drop for ThreadTimers {
    fn drop(&mut self) {
        self.stop_now();
    }
}

/// pprof's `SIGPROF` handler, called by [`serialized_sigprof`] (0: none).
pub(crate) static PPROF_HANDLER: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);
/// `SIGPROF`s delivered while sampling (a diagnostic: samples = delivered − dropped by pprof).
pub(crate) static SIGNALS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// Samples interrupted inside a blocklisted object: not unwound (pprof would drop them), counted.
pub(crate) static BLOCKED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// Executable address ranges of the blocklisted objects ([`BLOCKLIST`]), read from
/// `/proc/self/maps` before the timers are armed; the handler only reads them.
pub(crate) static BLOCKED_RANGES: [(
    std::sync::atomic::AtomicUsize,
    std::sync::atomic::AtomicUsize,
); 32] = [const { (std::sync::atomic::AtomicUsize::new(0), std::sync::atomic::AtomicUsize::new(0)) };
    32];

/// Reads the blocklisted objects' executable ranges into [`BLOCKED_RANGES`].
pub(crate) fn load_blocked_ranges() {
    use std::sync::atomic::Ordering;
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let mut n = 0;
    for line in maps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (Some(range), Some(perms)) = (fields.first(), fields.get(1)) else { continue };
        let path = fields.get(5).copied().unwrap_or("");
        let name = path.rsplit('/').next().unwrap_or(path);
        if !perms.contains('x') || !BLOCKLIST.iter().any(|b| name.contains(b)) {
            continue;
        }
        let Some((lo, hi)) = range.split_once('-') else { continue };
        let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
        else {
            continue;
        };
        if n < BLOCKED_RANGES.len() {
            BLOCKED_RANGES[n].0.store(lo, Ordering::Relaxed);
            BLOCKED_RANGES[n].1.store(hi, Ordering::Relaxed);
            n += 1;
        }
    }
    for r in &BLOCKED_RANGES[n..] {
        r.0.store(0, Ordering::Relaxed);
        r.1.store(0, Ordering::Relaxed);
    }
}

/// Whether the interrupted instruction of `context` lies in a blocklisted object.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub(crate) fn interrupted_in_blocklisted(context: *mut libc::c_void) -> bool {
    use std::sync::atomic::Ordering;
    if context.is_null() {
        return false;
    }
    // SAFETY: for an SA_SIGINFO handler the third argument is the kernel's `ucontext_t` of the
    // interrupted thread, valid for the handler's duration.
    let ip = unsafe {
        (*(context as *const libc::ucontext_t)).uc_mcontext.gregs[libc::REG_RIP as usize]
    } as usize;
    BLOCKED_RANGES.iter().any(|(lo, hi)| {
        let (lo, hi) = (lo.load(Ordering::Relaxed), hi.load(Ordering::Relaxed));
        lo <= ip && ip < hi
    })
}

#[cfg(all(target_os = "linux", not(target_arch = "x86_64")))]
pub(crate) fn interrupted_in_blocklisted(_context: *mut libc::c_void) -> bool {
    false
}

/// The frame under which samples taken inside libc, libgcc, libpthread or the vDSO are counted:
/// they are not unwound (that can deadlock), but their CPU time is in the table.
pub const NOT_UNWOUND: &str = "[in libc, libgcc, libpthread or the vDSO: not unwound]";

/// Set while one thread runs pprof's handler.
pub(crate) static HANDLER_BUSY: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Runs pprof's handler one thread at a time. pprof's handler unwinds while holding its profiler
/// with `try_write`, and drops the sample of any other thread whose signal arrives meanwhile;
/// with per-thread timers on CPUs whose ticks are aligned, two threads' timers often expire on
/// the same tick, and that dropped about a third of the samples at two threads. Here the second
/// thread waits (spins: both are on CPUs, and an unwind takes tens of microseconds) for the first.
/// Async-signal-safe: atomics and `spin_loop` only; `SIGPROF` is blocked in its own handler, so a
/// thread never waits for itself.
#[cfg(target_os = "linux")]
extern "C" fn serialized_sigprof(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    use std::sync::atomic::Ordering;
    SIGNALS.fetch_add(1, Ordering::Relaxed);
    while HANDLER_BUSY
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        std::hint::spin_loop();
    }
    let handler = PPROF_HANDLER.load(Ordering::Relaxed);
    if handler != 0 {
        // SAFETY: the value is the `sa_sigaction` of pprof's SA_SIGINFO action, read back from the
        // kernel by `serialize_pprof_handler`: a function of exactly this signature.
        let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(handler) };
        // A timer that expired again before its signal was taken counts the extra expiries as
        // its overrun (the thread's CPU clock is checked on ticks, and a thread that runs in short
        // slices between yields can miss a check): each stands for a period of CPU time spent
        // here too, so the stack is recorded once per expiry (at most 8 times).
        let expiries = 1 + timer_overrun(info).min(8);
        if interrupted_in_blocklisted(context) {
            BLOCKED.fetch_add(expiries as u64, Ordering::Relaxed);
        } else {
            for _ in 0..expiries {
                handler(signal, info, context);
            }
        }
    }
    HANDLER_BUSY.store(false, Ordering::Release);
}

/// The overrun of a POSIX timer's signal (0 for any other signal).
#[cfg(target_os = "linux")]
pub(crate) fn timer_overrun(info: *const libc::siginfo_t) -> u32 {
    if info.is_null() {
        return 0;
    }
    // SAFETY: `info` is the kernel's siginfo for this signal. For `si_code == SI_TIMER` the union
    // after the three leading ints (and their padding, at offset 16 on 64-bit Linux) is
    // `{ int si_tid; int si_overrun; sigval_t si_sigval; }` (include/uapi/asm-generic/siginfo.h).
    unsafe {
        if (*info).si_code != libc::SI_TIMER {
            return 0;
        }
        let overrun = (info as *const u8).add(20).cast::<i32>().read_unaligned();
        overrun.max(0) as u32
    }
}

/// Puts [`serialized_sigprof`] in front of pprof's handler; returns pprof's action, to restore.
#[cfg(target_os = "linux")]
pub(crate) fn serialize_pprof_handler() -> Option<libc::sigaction> {
    // SAFETY: all-zero is a valid `sigaction` to be filled in by the kernel.
    let mut pprof: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: reads the current action into `pprof`, a valid `sigaction`.
    if unsafe { libc::sigaction(libc::SIGPROF, std::ptr::null(), &mut pprof) } != 0
        || pprof.sa_flags & libc::SA_SIGINFO == 0
    {
        return None;
    }
    PPROF_HANDLER.store(pprof.sa_sigaction, std::sync::atomic::Ordering::Relaxed);
    let mut ours = pprof;
    ours.sa_sigaction = serialized_sigprof as *const () as usize;
    // SAFETY: installs a valid SA_SIGINFO action with pprof's mask and flags.
    if unsafe { libc::sigaction(libc::SIGPROF, &ours, std::ptr::null_mut()) } != 0 {
        return None;
    }
    Some(pprof)
}

/// Puts pprof's own action back (before pprof stops and sets `SIGPROF` to ignored).
#[cfg(target_os = "linux")]
pub(crate) fn restore_pprof_handler(pprof: libc::sigaction) {
    // SAFETY: `pprof` is the action read back by `serialize_pprof_handler`.
    unsafe { libc::sigaction(libc::SIGPROF, &pprof, std::ptr::null_mut()) };
}

/// Turns the process-wide `ITIMER_PROF` off (pprof armed it; its handler stays installed).
pub(crate) fn disarm_process_timer() {
    #[cfg(target_os = "linux")]
    {
        let zero = libc::itimerval {
            it_interval: libc::timeval { tv_sec: 0, tv_usec: 0 },
            it_value: libc::timeval { tv_sec: 0, tv_usec: 0 },
        };
        // SAFETY: `zero` is a valid `itimerval`; the old value is not asked for.
        unsafe { libc::setitimer(libc::ITIMER_PROF, &zero, std::ptr::null_mut()) };
    }
}

/// A running profiler. [`Sampling::finish`] stops it and folds what it saw.
pub struct Sampling {
    // Dropped first: no timer fires once the profiler has stopped.
    timers: Option<ThreadTimers>,
    /// pprof's own `SIGPROF` action, put back before pprof stops.
    #[cfg(target_os = "linux")]
    pprof_action: Option<libc::sigaction>,
    // Dropped before `_one`: the profiler stops before the next caller may start one.
    guard: pprof::ProfilerGuard<'static>,
    _one: MutexGuard<'static, ()>,
    frequency: i32,
    started: Instant,
    cpu_start: Option<f64>,
}

impl std::fmt::Debug for Sampling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sampling").field("frequency", &self.frequency).finish_non_exhaustive()
    }
}

impl Sampling {
    /// Starts sampling the whole process at `frequency` Hz (waits for any other profiler in this
    /// process to finish first).
    pub fn start(frequency: i32) -> Result<Sampling, ExperimentError> {
        if !(1..=1000).contains(&frequency) {
            return Err(ExperimentError::run_failed(format!(
                "sampling frequency must be 1..=1000 Hz, got {frequency}"
            )));
        }
        // A panic while profiling poisons the mutex; the profiler itself was stopped by the
        // guard's drop during unwinding, so the next caller may go on.
        let one = ONE_PROFILER.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let guard = pprof::ProfilerGuardBuilder::default()
            .frequency(frequency)
            .blocklist(&BLOCKLIST)
            .build()
            .map_err(|e| ExperimentError::run_failed(format!("cannot start the profiler: {e}")))?;
        // pprof's handler stays; its process-wide timer goes, and every thread gets its own.
        disarm_process_timer();
        load_blocked_ranges();
        BLOCKED.store(0, std::sync::atomic::Ordering::Relaxed);
        #[cfg(target_os = "linux")]
        let pprof_action = serialize_pprof_handler();
        let cpu_start = process_cpu_s();
        let timers = Some(ThreadTimers::start(frequency));
        Ok(Sampling {
            timers,
            #[cfg(target_os = "linux")]
            pprof_action,
            guard,
            _one: one,
            frequency,
            started: Instant::now(),
            cpu_start,
        })
    }

    /// Stops sampling and folds the stacks (every thread merged, root first).
    pub fn finish(mut self) -> Result<Folded, ExperimentError> {
        if let Some(timers) = self.timers.take() {
            timers.stop();
        }
        #[cfg(target_os = "linux")]
        if let Some(action) = self.pprof_action.take() {
            restore_pprof_handler(action);
        }
        let signals = SIGNALS.swap(0, std::sync::atomic::Ordering::Relaxed);
        let wall_s = self.started.elapsed().as_secs_f64();
        let cpu_s = match (self.cpu_start, process_cpu_s()) {
            (Some(a), Some(b)) => Some(b - a),
            _ => None,
        };
        // The report must be built before the guard drops: stopping clears the samples.
        let report =
            self.guard.report().build_unresolved().map_err(|e| {
                ExperimentError::run_failed(format!("cannot read the profile: {e}"))
            })?;
        drop(self.guard);
        let mut stacks = BTreeMap::new();
        for (frames, &count) in &report.data {
            if count <= 0 {
                continue;
            }
            let mut names = Vec::new();
            // Sampled frame first, out to the thread's start; within one frame the symbols run
            // from the innermost inlined function out, so both are reversed for a root-first stack.
            for symbols in resolve_sample(&frames.frames).iter().rev() {
                for (name, file) in symbols.iter().rev() {
                    names.push(frame_name(name, file.as_deref()));
                }
            }
            // Drop what runs before the workbench's own code (thread start, std's spawn closures):
            // a dozen frames of the same width at the root of every stack.
            if let Some(first) =
                names.iter().position(|n| n.starts_with("schedlab") || n.starts_with("<schedlab"))
            {
                names.drain(..first);
            }
            if names.is_empty() {
                names.push("[unknown]".to_string());
            }
            *stacks.entry(names.join(";")).or_insert(0) += count as u64;
        }
        let blocked = BLOCKED.swap(0, std::sync::atomic::Ordering::Relaxed);
        if blocked > 0 {
            *stacks.entry(NOT_UNWOUND.to_string()).or_insert(0) += blocked;
        }
        Ok(Folded { stacks, frequency: self.frequency, wall_s, cpu_s, signals: Some(signals) })
    }
}

/// One sample's frames as (symbol, source file) lists, sampled frame first.
///
/// pprof's own resolution looks every address up at `ip - 1`, right for a return address (it
/// lands in the call instruction) but wrong for the interrupted instruction itself: a sample on
/// the first instruction of a function was charged to the last bytes of whatever function lies
/// before it in the binary. Measured: `no-stats` profiles showed `emit<SchedLock>` →
/// `apply_locked` once in about ten runs, the tail of the function placed before no-stats'
/// `SchedState::expire`. So the frames below the signal handler are resolved here: the
/// interrupted one at its own address, the callers at `ip - 1`.
pub(crate) fn resolve_sample(
    frames: &[backtrace::Frame],
) -> Vec<Vec<(String, Option<std::path::PathBuf>)>> {
    // `backtrace::resolve(addr)` looks up `addr - 1` (its adjustment for return addresses).
    let symbols_at = |lookup: usize| {
        let mut symbols = Vec::new();
        backtrace::resolve((lookup + 1) as *mut std::ffi::c_void, |symbol| {
            let name = symbol.name().map_or_else(String::new, |n| n.to_string());
            symbols.push((name, symbol.filename().map(Path::to_path_buf)));
        });
        symbols
    };
    let resolved: Vec<_> =
        frames.iter().map(|f| symbols_at((f.ip() as usize).saturating_sub(1))).collect();
    // As pprof does: drop the handler's frames (pprof's, and the serializing one that calls it)
    // and the signal trampoline after them.
    let handler = resolved.iter().rposition(|symbols| {
        symbols.iter().any(|(name, _)| {
            name.contains("perf_signal_handler") || name.contains("serialized_sigprof")
        })
    });
    let mut out = Vec::new();
    for (i, symbols) in resolved.into_iter().enumerate() {
        let symbols = match handler {
            Some(h) if i <= h + 1 => continue,
            // The interrupted instruction: its own address.
            Some(h) if i == h + 2 => symbols_at(frames[i].ip() as usize),
            _ => symbols,
        };
        if !symbols.is_empty() {
            out.push(symbols);
        }
    }
    out
}

/// The module path of a source file, from where it lies: `/rustc/<hash>/library/core/src/ptr/mod.rs`
/// → `core::ptr`, `.../registry/src/<index>/parking_lot-0.12.3/src/raw_mutex.rs` →
/// `parking_lot::raw_mutex`, `<workspace>/core/src/stats.rs` → `schedlab_core::stats`,
/// `<workspace>/variants/src/sched-lock.rs` → `schedlab_variants::sched_lock`.
pub(crate) fn module_of(file: &Path) -> Option<String> {
    let parts = |p: &Path| -> Vec<String> {
        p.iter().filter_map(|c| c.to_str()).map(str::to_string).collect()
    };
    // The workspace root: this crate's manifest directory's parent.
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    let (krate, rest) = if let Ok(rel) = file.strip_prefix(workspace) {
        let rel = parts(rel);
        match rel.as_slice() {
            [src, rest @ ..] if src == "src" => ("schedlab".to_string(), rest.to_vec()),
            [dir, src, rest @ ..] if src == "src" => (format!("schedlab_{dir}"), rest.to_vec()),
            _ => return None,
        }
    } else {
        let all = parts(file);
        let src = all.iter().rposition(|c| c == "src").filter(|&i| i > 0)?;
        let dir = &all[src - 1];
        let krate = if src >= 2 && all[src - 2] == "library" {
            dir.clone()
        } else {
            // A registry crate: `name-1.2.3`.
            match dir.rfind('-') {
                Some(i) if dir[i + 1..].starts_with(|c: char| c.is_ascii_digit()) => {
                    dir[..i].to_string()
                }
                _ => dir.clone(),
            }
        };
        (krate, all[src + 1..].to_vec())
    };
    let mut path = vec![krate.replace('-', "_")];
    for (i, part) in rest.iter().enumerate() {
        let part =
            if i + 1 == rest.len() { part.strip_suffix(".rs").unwrap_or(part) } else { part };
        if i + 1 == rest.len() && matches!(part, "lib" | "main" | "mod") {
            continue;
        }
        path.push(part.replace('-', "_"));
    }
    Some(path.join("::"))
}

/// A symbol as a flamegraph frame: demangled, no `::h<hash>` suffix, no `;` (the folded format's
/// separator). Inlined functions come out of line-tables-only debug info with their bare name
/// (`sum`); those get the module path of their source file (`schedlab_core::stats::sum`).
pub(crate) fn frame_name(name: &str, file: Option<&Path>) -> String {
    let name = name.trim();
    let name = match name.rfind("::h") {
        Some(i) if name.len() - i == 19 && name[i + 3..].bytes().all(|b| b.is_ascii_hexdigit()) => {
            &name[..i]
        }
        _ => name,
    };
    if name.is_empty() || name == "Unknown" {
        return "[unknown]".to_string();
    }
    let head = &name[..name.find('<').unwrap_or(name.len())];
    let qualified = name.starts_with('<') || head.contains("::");
    let name = match file.filter(|_| !qualified).and_then(module_of) {
        Some(module) => format!("{module}::{name}"),
        None => name.to_string(),
    };
    name.replace(';', ":")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn frame_names_get_their_module() {
        let ws = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        assert_eq!(
            frame_name("sum", Some(&ws.join("core/src/stats.rs"))),
            "schedlab_core::stats::sum"
        );
        assert_eq!(
            frame_name("route", Some(&ws.join("variants/src/no-stats.rs"))),
            "schedlab_variants::no_stats::route"
        );
        assert_eq!(
            frame_name("cmd", Some(&ws.join("src/flamegraph.rs"))),
            "schedlab::flamegraph::cmd"
        );
        let std_file = Path::new("/rustc/abc/library/core/src/sync/atomic.rs");
        assert_eq!(
            frame_name("fetch_add<u32>", Some(std_file)),
            "core::sync::atomic::fetch_add<u32>"
        );
        let reg =
            Path::new("/root/.cargo/registry/src/index.crates.io-1/lock_api-0.4.12/src/mutex.rs");
        assert_eq!(frame_name("lock<R, T>", Some(reg)), "lock_api::mutex::lock<R, T>");
        assert_eq!(frame_name("a::b::c::h0123456789abcdef", None), "a::b::c");
        assert_eq!(frame_name("<X as Y>::f", Some(std_file)), "<X as Y>::f");
        assert_eq!(frame_name("Unknown", None), "[unknown]");
    }
}
