//! Where a dispatched request completes: on the thread that dispatched it (`inline`, null_blk
//! with `irqmode=0`, the seeds' device) or in a completion context (`context`: a softirq-like
//! context per CPU fed by the device, as the kernel completes a loop device's or a real disk's
//! requests in the block softirq or ksoftirqd of whichever CPU the device's worker ran on, not in
//! the submitter).
//!
//! With completion contexts a job hands each request it dispatched to the device
//! ([`Issuer::issue`]); the request completes in the next CPU's context: the scheduler's finish
//! path and its lock site, the owner's credit and the completion's half of the outside work. A
//! context whose CPU runs a job is served by that job at its interrupt points, between lock sites
//! ([`Issuer::serve`]), as a softirq runs in whatever task its CPU runs but never inside a section
//! with interrupts off; a context whose CPU runs no job has a thread of its own ([`context_loop`]),
//! as ksoftirqd runs on an idle CPU. A job that has its whole queue depth in flight and nothing to
//! dispatch or complete sleeps until one of its own requests completes or its context is given
//! one ([`Wakers`]), as fio waits in `io_uring_enter`, so that it does not spin on a CPU a context
//! needs.
//!
//! One job contends with the other CPU's context at the scheduler lock, as the kernel's single fio
//! job contends with ksoftirqd (issue 40: 0.344 contended acquisitions per I/O at completion with
//! one job, where the inline model had none); two jobs on two CPUs complete each other's requests
//! and never share a CPU with a context thread.

use schedlab_core::sync::{AtomicBool, AtomicUsize, Ordering};
use serde::Serialize;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Where a dispatched request completes (`--completion`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CompletionMode {
    /// On the dispatching thread, at once (null_blk `irqmode=0`: the seeds' device).
    #[default]
    Inline,
    /// In a completion context per CPU, fed by the device (a loop device, a disk).
    Context,
}

impl CompletionMode {
    pub const ALL: [CompletionMode; 2] = [CompletionMode::Inline, CompletionMode::Context];

    pub fn name(self) -> &'static str {
        match self {
            CompletionMode::Inline => "inline",
            CompletionMode::Context => "context",
        }
    }

    pub fn from_name(name: &str) -> Option<CompletionMode> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// How long a waiting job sleeps at most before it looks again (a lost wake-up costs this, never
/// a hang; the stop flag is read at least this often).
const WAIT_LIMIT: Duration = Duration::from_millis(1);

/// The jobs' sleeping places: a job that waits for a completion parks; the completion context that
/// credits one of its requests unparks it.
pub struct Wakers {
    slots: Vec<WakerSlot>,
}

struct WakerSlot {
    waiting: AtomicBool,
    thread: OnceLock<std::thread::Thread>,
}

impl Wakers {
    pub fn new(jobs: usize) -> Wakers {
        Wakers {
            slots: (0..jobs)
                .map(|_| WakerSlot { waiting: AtomicBool::new(false), thread: OnceLock::new() })
                .collect(),
        }
    }

    /// Called by job `index` on its own thread before it first waits.
    pub fn register(&self, index: usize) {
        let _ = self.slots[index].thread.set(std::thread::current());
    }

    /// Job `index` sleeps until [`Wakers::wake`] or [`WAIT_LIMIT`], unless `ready` already holds.
    /// The flag is raised before `ready` is read and the waker clears it before it unparks, and a
    /// park after an unpark returns at once: no wake-up between the check and the park is lost.
    pub fn wait(&self, index: usize, ready: impl Fn() -> bool) {
        let slot = &self.slots[index];
        slot.waiting.store(true, Ordering::SeqCst);
        if !ready() {
            std::thread::park_timeout(WAIT_LIMIT);
        }
        slot.waiting.store(false, Ordering::Relaxed);
    }

    /// Wakes job `index` if it waits. Read before it is written: a wake comes with every issue
    /// and completion, and a job that does not wait should not have its flag's line pulled away
    /// each time (the load is SeqCst, so the flag raised before a waiter's check is still seen).
    pub fn wake(&self, index: usize) {
        let slot = &self.slots[index];
        if slot.waiting.load(Ordering::SeqCst) && slot.waiting.swap(false, Ordering::SeqCst) {
            if let Some(t) = slot.thread.get() {
                t.unpark();
            }
        }
    }
}

/// One completion context: a CPU's block softirq.
struct Context<T> {
    /// Items issued to it and not yet taken.
    pending: AtomicUsize,
    /// Its receiving end when jobs serve it (the softirq of a CPU a job runs on); `None` when a
    /// thread of its own does ([`Device::new`] hands that thread the receiver).
    served_by_jobs: Option<Mutex<Receiver<T>>>,
    /// The jobs that serve it, woken when an item is issued to it.
    servers: Vec<usize>,
}

/// The device's side of the completion contexts: where jobs issue what they dispatched, and where
/// each completion is run.
///
/// There is a context per CPU, as the kernel has a block softirq per CPU. A softirq runs on its
/// CPU at the next point where interrupts are on, in whatever task runs there, and never inside a
/// section that holds the scheduler lock with interrupts off; on a CPU with nothing else to run
/// it runs in ksoftirqd (or the loop device's worker). So with `jobs ≥ contexts` every context is
/// served by the jobs (job `j` serves context `j % contexts`) at their interrupt points, between
/// one lock site and the next ([`Issuer::serve`]); with fewer jobs than CPUs, the contexts of the
/// idle CPUs get a thread of their own ([`context_loop`]). A completion context thread beside
/// every busy job would put more runnable threads than CPUs on the machine and let the scheduler
/// preempt a job while it holds a user-space spinning lock, which the kernel's softirq cannot do
/// (issue 40: the fair-spin model collapsed with two jobs and two context threads on two CPUs).
///
/// A request completes in the context after its dispatcher's (`(job + 1) % contexts`): the
/// device's worker runs on a CPU other than the submitter's, as a loop device's kworker and
/// ksoftirqd do when the submitting CPU is busy, so completions reach the scheduler lock from
/// another context than the submissions beside them, as in the kernel's profile.
pub struct Device<T> {
    senders: Vec<Sender<T>>,
    contexts: Arc<Vec<Context<T>>>,
}

impl<T: Send> Device<T> {
    /// A device with `contexts` completion contexts for `jobs` jobs, and the receiving end of each
    /// context that needs a thread of its own (index, receiver).
    pub fn new(contexts: usize, jobs: usize) -> (Device<T>, Vec<(usize, Receiver<T>)>) {
        let n = contexts.max(1);
        let mut senders = Vec::with_capacity(n);
        let mut own_threads = Vec::new();
        let mut list = Vec::with_capacity(n);
        for c in 0..n {
            let (tx, rx) = channel();
            senders.push(tx);
            let servers: Vec<usize> = (0..jobs).filter(|j| j % n == c).collect();
            let served_by_jobs = if servers.is_empty() {
                own_threads.push((c, rx));
                None
            } else {
                Some(Mutex::new(rx))
            };
            list.push(Context { pending: AtomicUsize::new(0), served_by_jobs, servers });
        }
        (Device { senders, contexts: Arc::new(list) }, own_threads)
    }

    /// The handle job `job` issues and serves through.
    pub fn issuer<'w>(&self, job: usize, wakers: &'w Wakers) -> Issuer<'w, T> {
        let n = self.senders.len();
        let target = (job + 1) % n;
        Issuer {
            job,
            target,
            sender: self.senders[target].clone(),
            contexts: Arc::clone(&self.contexts),
            wakers,
        }
    }

    /// Completes with `complete` what is left in the contexts the jobs serve, once every job has
    /// stopped (a context thread completes its own queue before it ends). Returns how many.
    pub fn drain_served(&self, mut complete: impl FnMut(T)) -> u64 {
        let mut n = 0;
        for context in self.contexts.iter() {
            if let Some(queue) = &context.served_by_jobs {
                let queue = queue.lock().unwrap_or_else(|e| e.into_inner());
                while let Ok(item) = queue.try_recv() {
                    context.pending.fetch_sub(1, Ordering::Relaxed);
                    complete(item);
                    n += 1;
                }
            }
        }
        n
    }
}

/// One job's way to the device and to the context it serves. Dropping every issuer (and the
/// [`Device`]) lets the context threads end once they have completed what is queued.
pub struct Issuer<'w, T> {
    job: usize,
    target: usize,
    sender: Sender<T>,
    contexts: Arc<Vec<Context<T>>>,
    wakers: &'w Wakers,
}

impl<T> Issuer<'_, T> {
    /// Hands a dispatched request to its completion context and wakes the jobs that serve it.
    /// `Err` gives it back when the context has gone (its thread panicked): the caller completes
    /// it itself.
    pub fn issue(&self, item: T) -> Result<(), T> {
        let context = &self.contexts[self.target];
        context.pending.fetch_add(1, Ordering::SeqCst);
        if let Err(e) = self.sender.send(item) {
            context.pending.fetch_sub(1, Ordering::SeqCst);
            return Err(e.0);
        }
        for &job in &context.servers {
            self.wakers.wake(job);
        }
        Ok(())
    }

    /// The job's interrupt point: runs the completions queued to the context it serves (none
    /// when another job of the same context is running them). Called between lock sites, never
    /// with the scheduler lock held. Returns how many it completed.
    pub fn serve(&self, complete: impl FnMut(T)) -> u64 {
        serve_context(self.own_context(), complete)
    }

    /// The context this job serves.
    fn own_context(&self) -> &Context<T> {
        &self.contexts[self.job % self.contexts.len()]
    }

    /// The job is about to sleep, so its CPU is about to be idle: like a CPU with nothing to run,
    /// it runs the completions queued to any context the jobs serve (the loop device's worker is
    /// an unbound kworker and completes on whichever CPU it ran), then sleeps only if none is
    /// left. Without this two jobs at iodepth 1 would each wait for the other to wake up and
    /// complete its one request. Returns how many it completed.
    pub fn serve_before_idle(&self, mut complete: impl FnMut(T)) -> u64 {
        self.contexts.iter().map(|context| serve_context(context, &mut complete)).sum()
    }

    /// Whether the context this job serves has completions waiting (a job does not sleep then;
    /// another context's items wake that context's jobs, and a job that looked at them with
    /// [`Issuer::serve_before_idle`] and found them taken does not spin on them).
    pub fn has_pending(&self) -> bool {
        let context = self.own_context();
        context.served_by_jobs.is_some() && context.pending.load(Ordering::SeqCst) > 0
    }
}

/// Runs the completions queued to `context` if jobs serve it and no other job is running them.
fn serve_context<T>(context: &Context<T>, mut complete: impl FnMut(T)) -> u64 {
    let Some(queue) = &context.served_by_jobs else { return 0 };
    if context.pending.load(Ordering::SeqCst) == 0 {
        return 0;
    }
    let Ok(queue) = queue.try_lock() else { return 0 };
    let mut n = 0;
    while let Ok(item) = queue.try_recv() {
        context.pending.fetch_sub(1, Ordering::SeqCst);
        complete(item);
        n += 1;
    }
    n
}

/// A completion context thread's loop (the context of a CPU no job runs on): completes every item
/// it receives with `complete`, until every issuer has gone and its queue is empty (the jobs drop
/// theirs when they stop, so a context never outlives them and never leaves a request
/// uncompleted). Returns how many it completed.
pub fn context_loop<T>(queue: Receiver<T>, mut complete: impl FnMut(T)) -> u64 {
    let mut n = 0u64;
    for item in queue {
        complete(item);
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    /// Fewer jobs than CPUs: the idle CPUs' contexts have threads of their own, the busy ones'
    /// are served by their jobs; each request completes in the context after its dispatcher's.
    #[test]
    fn contexts_of_idle_cpus_get_threads_and_the_busy_ones_are_served_by_their_jobs() {
        let wakers = Wakers::new(2);
        // Four CPUs, two jobs: contexts 0 and 1 are served by jobs 0 and 1, 2 and 3 by threads.
        let (device, own_threads) = Device::<(usize, u64)>::new(4, 2);
        assert_eq!(own_threads.iter().map(|(c, _)| *c).collect::<Vec<_>>(), vec![2, 3]);
        let seen: Vec<AtomicU64> = (0..4).map(|_| AtomicU64::new(0)).collect();
        std::thread::scope(|s| {
            let handles: Vec<_> = own_threads
                .into_iter()
                .map(|(c, rx)| {
                    let seen = &seen;
                    s.spawn(move || {
                        context_loop(rx, |(dispatcher, _): (usize, u64)| {
                            assert_eq!(
                                (dispatcher + 1) % 4,
                                c,
                                "job {dispatcher}'s request completed in context {c}"
                            );
                            seen[c].fetch_add(1, Ordering::Relaxed);
                        })
                    })
                })
                .collect();
            // Job 0's requests go to context 1, which job 1 serves; job 1's to context 2 (a thread).
            let (job0, job1) = (device.issuer(0, &wakers), device.issuer(1, &wakers));
            for i in 0..100 {
                assert!(job0.issue((0, i)).is_ok());
                assert!(job1.issue((1, i)).is_ok());
            }
            assert!(!job0.has_pending(), "nothing was issued to context 0");
            assert!(job1.has_pending());
            assert_eq!(job0.serve(|_| panic!("context 0 has nothing")), 0);
            let served = job1.serve(|(dispatcher, _)| {
                assert_eq!(dispatcher, 0);
                seen[1].fetch_add(1, Ordering::Relaxed);
            });
            assert_eq!(served, 100);
            assert!(
                !job0.has_pending() && !job1.has_pending(),
                "the threads' contexts do not count"
            );
            drop((job0, job1));
            drop(device);
            let done: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
            assert_eq!(done, 100);
        });
        assert_eq!(
            seen.iter().map(|n| n.load(Ordering::Relaxed)).collect::<Vec<_>>(),
            vec![0, 100, 100, 0]
        );
    }

    /// As many jobs as CPUs or more: no thread of its own for any context; jobs sharing a context
    /// serve it by turns, and what is left when they stop is drained by the run.
    #[test]
    fn with_a_job_on_every_cpu_no_context_has_a_thread_and_leftovers_are_drained() {
        let wakers = Wakers::new(3);
        let (device, own_threads) = Device::<usize>::new(2, 3);
        assert!(own_threads.is_empty());
        // Jobs 0 and 2 serve context 0, job 1 context 1. Job 1 issues into context 0.
        let issuers: Vec<_> = (0..3).map(|j| device.issuer(j, &wakers)).collect();
        for _ in 0..10 {
            assert!(issuers[1].issue(1).is_ok());
        }
        assert!(issuers[0].has_pending() && issuers[2].has_pending() && !issuers[1].has_pending());
        assert_eq!(issuers[1].serve(|_| panic!("context 1 has nothing")), 0);
        assert_eq!(issuers[2].serve(|d| assert_eq!(d, 1)), 10);
        assert!(!issuers[0].has_pending());
        // Job 0 issues into context 1; about to sleep, job 2 runs them although it serves 0.
        for _ in 0..3 {
            assert!(issuers[0].issue(0).is_ok());
        }
        assert_eq!(issuers[2].serve(|_| panic!("context 0 has nothing")), 0);
        assert_eq!(issuers[2].serve_before_idle(|d| assert_eq!(d, 0)), 3);
        // Nobody serves these before the jobs stop.
        for _ in 0..5 {
            assert!(issuers[0].issue(0).is_ok());
        }
        drop(issuers);
        let mut left = Vec::new();
        assert_eq!(device.drain_served(|d| left.push(d)), 5);
        assert_eq!(left, vec![0; 5]);
    }

    #[test]
    fn a_waiting_job_is_woken_and_a_ready_one_does_not_sleep() {
        let wakers = Wakers::new(1);
        let ready = AtomicBool::new(false);
        std::thread::scope(|s| {
            let (wakers, ready) = (&wakers, &ready);
            let waiter = s.spawn(move || {
                wakers.register(0);
                // Waits (with its 1 ms limit) until the flag is up: the wake must let it see it.
                while !ready.load(Ordering::SeqCst) {
                    wakers.wait(0, || ready.load(Ordering::SeqCst));
                }
            });
            ready.store(true, Ordering::SeqCst);
            wakers.wake(0);
            waiter.join().unwrap();
        });
        // Ready before the wait: returns without parking (a park here would take WAIT_LIMIT, but
        // the test does not time it; it checks that the flag is left down).
        wakers.wait(0, || true);
        assert!(!wakers.slots[0].waiting.load(Ordering::SeqCst));
        assert_eq!(CompletionMode::from_name("context"), Some(CompletionMode::Context));
        assert_eq!(CompletionMode::from_name("softirq"), None);
    }
}
