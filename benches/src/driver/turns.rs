//! Where the OS may take a CPU from a job: anywhere (`anywhere`, a user-space program's lot), or
//! only between requests (`between-requests`, as the kernel never preempts a task that holds a
//! spinlock).
//!
//! ## Why
//!
//! The kernel's fio jobs run BFQ's sections with the scheduler lock held and interrupts off:
//! nothing preempts them there, and a waiter spinning in the queued spinlock cannot be preempted
//! either. With four jobs on two CPUs the OS scheduler switches jobs only between requests, and
//! the lock sees at most two contenders. The model's jobs are user-space threads: the OS may
//! preempt one while it holds the fair spinlock, and every waiter then spins until the holder is
//! scheduled again. Measured on this machine kind (issue 40, `notes/results/2026-12-04-softirq.md`),
//! four fair-spin jobs on two CPUs took 4.986 contended acquisitions per I/O where the kernel took
//! 1.522: the model measured the OS scheduler, not the lock.
//!
//! ## What it does
//!
//! With [`Preemption::BetweenRequests`] and more jobs than CPUs, the jobs take turns on the CPUs
//! ([`CpuTurns`]): a job runs only while it holds a turn, and at most as many turns as CPUs are
//! held, so no more jobs are runnable than there are CPUs and the OS has no reason to preempt one.
//! A job gives its turn up at its interrupt point (between requests, never with a lock held) once
//! its slice is over and another job waits, and whenever it is about to sleep for a completion;
//! a job that waits for a turn sleeps. Turns are granted in the order they were asked for (a
//! ticket each), as the OS's fair scheduler runs the task that has waited longest; a job that
//! gives its turn up and asks again queues behind the jobs already waiting.
//!
//! The slice is the kernel's: EEVDF's base slice of 0.75 ms scaled by 1 + log2 of the CPUs (at
//! most 8), 1.5 ms on two CPUs ([`slice_for`]). A job that sleeps for its completions gives its
//! turn up sooner, as a task blocking in `io_uring_enter` does.

use schedlab_core::sync::{AtomicBool, Ordering};
use serde::Serialize;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Where the OS may take a CPU from a job (`WorkloadConfig::preemption`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preemption {
    /// Anywhere, also with the scheduler lock held: a user-space program's lot.
    #[default]
    Anywhere,
    /// Only between requests: with more jobs than CPUs the jobs take turns on the CPUs
    /// ([`CpuTurns`]), as the kernel never preempts a task that holds a spinlock.
    BetweenRequests,
}

impl Preemption {
    pub const ALL: [Preemption; 2] = [Preemption::Anywhere, Preemption::BetweenRequests];

    pub fn name(self) -> &'static str {
        match self {
            Preemption::Anywhere => "anywhere",
            Preemption::BetweenRequests => "between-requests",
        }
    }

    /// Whether `jobs` jobs on `cpus` CPUs take turns.
    pub fn takes_turns(self, jobs: usize, cpus: usize) -> bool {
        self == Preemption::BetweenRequests && jobs > cpus
    }
}

/// EEVDF's base slice (`sysctl_sched_base_slice`, 0.75 ms) scaled as the kernel scales it by
/// default (`SCHED_TUNABLESCALING_LOG`: 1 + log2 of the online CPUs, at most 8).
pub fn slice_for(cpus: usize) -> Duration {
    let factor = 1 + (cpus.clamp(1, 8) as u32).ilog2();
    Duration::from_micros(750) * factor
}

/// How long a job waiting for a turn sleeps at most before it looks at the stop flag again.
const WAIT_LIMIT: Duration = Duration::from_millis(1);

/// The CPUs' turns: at most `cpus` held at once, granted in ticket order.
pub struct CpuTurns {
    state: Mutex<TurnState>,
    granted: Condvar,
    slice: Duration,
}

struct TurnState {
    cpus: usize,
    /// Turns held now.
    held: usize,
    /// The next ticket to hand out.
    next_ticket: u64,
    /// Tickets below this have been granted a turn.
    granted_below: u64,
}

impl TurnState {
    /// Grants turns to the oldest tickets while CPUs are free.
    fn grant(&mut self) -> bool {
        let mut any = false;
        while self.held < self.cpus && self.granted_below < self.next_ticket {
            self.granted_below += 1;
            self.held += 1;
            any = true;
        }
        any
    }

    fn waiting(&self) -> u64 {
        self.next_ticket - self.granted_below
    }
}

impl CpuTurns {
    /// Turns for `cpus` CPUs with the kernel's slice for that many.
    pub fn new(cpus: usize) -> CpuTurns {
        CpuTurns::with_slice(cpus, slice_for(cpus))
    }

    /// The turns `jobs` jobs take on `cpus` CPUs under `preemption`, if they take any.
    pub fn when_needed(preemption: Preemption, jobs: usize, cpus: usize) -> Option<CpuTurns> {
        preemption.takes_turns(jobs, cpus).then(|| CpuTurns::new(cpus))
    }

    pub fn with_slice(cpus: usize, slice: Duration) -> CpuTurns {
        let state = TurnState { cpus: cpus.max(1), held: 0, next_ticket: 0, granted_below: 0 };
        CpuTurns { state: Mutex::new(state), granted: Condvar::new(), slice }
    }

    /// Waits for a turn (sleeping), unless `stop` is raised first: then the job goes on without
    /// one, to stop (its ticket, granted later, is handed back at once by whoever finds it).
    pub fn take<'t>(&'t self, stop: &AtomicBool) -> Turn<'t> {
        let mut turn = Turn { turns: self, held: false, since: Instant::now() };
        turn.retake(stop);
        turn
    }

    /// Jobs waiting for a turn now.
    pub fn waiting(&self) -> u64 {
        self.lock().waiting()
    }

    /// Turns held now.
    pub fn held(&self) -> usize {
        self.lock().held
    }

    /// The state; a job that panicked holding it left it consistent (each change is one step).
    fn lock(&self) -> MutexGuard<'_, TurnState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sleeps until a turn may have been granted, at most [`WAIT_LIMIT`].
    fn wait<'g>(&self, state: MutexGuard<'g, TurnState>) -> MutexGuard<'g, TurnState> {
        match self.granted.wait_timeout(state, WAIT_LIMIT) {
            Ok((state, _)) => state,
            Err(e) => e.into_inner().0,
        }
    }

    fn release(&self) {
        let mut state = self.lock();
        state.held -= 1;
        if state.grant() {
            self.granted.notify_all();
        }
    }
}

/// One job's turn on a CPU (or its place in the queue for one). Dropping it gives it up.
pub struct Turn<'t> {
    turns: &'t CpuTurns,
    held: bool,
    since: Instant,
}

impl Turn<'_> {
    /// Whether the job holds a CPU now.
    pub fn is_held(&self) -> bool {
        self.held
    }

    /// The job's interrupt point (between requests, no lock held): once its slice is over and
    /// another job waits, it gives its turn up and queues for the next.
    pub fn interrupt_point(&mut self, stop: &AtomicBool) {
        if self.held && self.since.elapsed() >= self.turns.slice && self.turns.waiting() > 0 {
            self.give_up();
            self.retake(stop);
        }
    }

    /// The job is about to sleep: its CPU goes to the next job waiting.
    pub fn give_up(&mut self) {
        if std::mem::take(&mut self.held) {
            self.turns.release();
        }
    }

    /// The job woke up: it queues for a turn and sleeps until it has one (or `stop`).
    pub fn retake(&mut self, stop: &AtomicBool) {
        if self.held {
            return;
        }
        let turns = self.turns;
        let mut state = turns.lock();
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        if state.grant() {
            turns.granted.notify_all();
        }
        // The stop flag first: a job told to stop goes, turn granted or not.
        while !stop.load(Ordering::Relaxed) {
            if ticket < state.granted_below {
                self.held = true;
                self.since = Instant::now();
                return;
            }
            state = turns.wait(state);
        }
        drop(state);
        self.leave_queue(ticket);
    }

    /// While stopping: the job goes on to stop without a turn, but its ticket stays in the queue
    /// and will be granted in its order. So it waits until it is (every holder gives its turn up
    /// when it stops, so this is short) and gives that turn straight back, so that the jobs
    /// behind it are not kept waiting for a job that left.
    fn leave_queue(&mut self, ticket: u64) {
        let turns = self.turns;
        let mut state = turns.lock();
        while ticket >= state.granted_below {
            state = turns.wait(state);
        }
        drop(state);
        turns.release();
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.give_up();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    /// Waits (sleeping) until `n` jobs queue for a turn: the tests order their threads by the
    /// queue's state, never by time.
    fn until_waiting(turns: &CpuTurns, n: u64) {
        while turns.waiting() < n {
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    #[test]
    fn the_slice_is_the_kernels_base_slice_scaled_by_log2_of_the_cpus() {
        assert_eq!(slice_for(1), Duration::from_micros(750));
        assert_eq!(slice_for(2), Duration::from_micros(1500));
        assert_eq!(slice_for(4), Duration::from_micros(2250));
        assert_eq!(slice_for(64), Duration::from_micros(3000), "scaled for at most 8 CPUs");
        assert!(!Preemption::BetweenRequests.takes_turns(2, 2), "no more jobs than CPUs: no turns");
        assert!(Preemption::BetweenRequests.takes_turns(3, 2));
        assert!(!Preemption::Anywhere.takes_turns(64, 2));
    }

    /// Six jobs on two CPUs' turns, each giving up at every interrupt point (a zero slice) and
    /// sleeping now and then: no more than two ever run at once, and every job runs.
    #[test]
    fn no_more_jobs_hold_turns_than_there_are_cpus() {
        let turns = CpuTurns::with_slice(2, Duration::ZERO);
        let (running, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let stop = AtomicBool::new(false);
        let rounds: Vec<usize> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..6)
                .map(|j| {
                    let (turns, running, most, stop) = (&turns, &running, &most, &stop);
                    s.spawn(move || {
                        let mut turn = turns.take(stop);
                        for i in 0..300 {
                            turn.interrupt_point(stop);
                            assert!(turn.is_held());
                            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(now, Ordering::SeqCst);
                            std::hint::black_box((0..50).sum::<u64>());
                            running.fetch_sub(1, Ordering::SeqCst);
                            if (i + j) % 17 == 0 {
                                turn.give_up();
                                std::thread::yield_now();
                                turn.retake(stop);
                            }
                        }
                        300
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(rounds, vec![300; 6]);
        assert!(
            most.load(Ordering::SeqCst) <= 2,
            "{} jobs ran at once on 2 CPUs' turns",
            most.load(Ordering::SeqCst)
        );
        assert_eq!(turns.held(), 0, "every turn was given back");
    }

    /// One CPU: B and then C queue while A runs; A's turn goes to B, then C, and A, asking again
    /// after giving its turn up, comes last.
    #[test]
    fn turns_are_granted_in_the_order_they_were_asked_for() {
        let turns = Arc::new(CpuTurns::with_slice(1, Duration::ZERO));
        let order = Arc::new(Mutex::new(Vec::new()));
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let mut a = turns.take(&stop);
            let spawn = |name: &'static str| {
                let (turns, order, stop) = (Arc::clone(&turns), Arc::clone(&order), &stop);
                s.spawn(move || {
                    let turn = turns.take(stop);
                    order.lock().unwrap().push(name);
                    drop(turn);
                })
            };
            let b = spawn("B");
            until_waiting(&turns, 1);
            let c = spawn("C");
            until_waiting(&turns, 2);
            a.interrupt_point(&stop);
            order.lock().unwrap().push("A");
            drop(a);
            b.join().unwrap();
            c.join().unwrap();
        });
        assert_eq!(*order.lock().unwrap(), vec!["B", "C", "A"]);
        assert_eq!(turns.held(), 0);
    }

    /// A job told to stop while it waits for a turn goes on without one, and the turn its ticket
    /// is granted later is handed back, not kept.
    #[test]
    fn a_job_stopped_while_it_waits_leaves_without_keeping_a_turn() {
        let turns = CpuTurns::with_slice(1, Duration::ZERO);
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let a = turns.take(&stop);
            let b = s.spawn(|| turns.take(&stop).is_held());
            until_waiting(&turns, 1);
            stop.store(true, Ordering::Relaxed);
            drop(a);
            assert!(!b.join().unwrap(), "a stopped job has no turn");
        });
        assert_eq!((turns.held(), turns.waiting()), (0, 0));
    }
}
