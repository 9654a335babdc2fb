//! `schedlab kernel --inject`'s parsers and statistics on bpftrace outputs recorded from a real
//! run on this machine kind (Linux 6.18, bpftrace 0.17; a loop device over a tmpfs file under
//! BFQ, 2 jobs of 4 KiB random reads at iodepth 32 through io_uring, 60 cycles per cost of
//! 0, 500, 1000 and 2000 ns; `fixtures/kernel/README.md`). The expected figures were counted from
//! the raw files by a separate script (Python, reading the JSON lines), not by these parsers.

use schedlab_benches::experiment::kernel::inject::{self, PhaseKind};

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/kernel/inject-2jobs")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_lock_search_finds_bfqs_one_lock() {
    assert_eq!(inject::parse_lock_addrs(&fixture("lock.json")).unwrap(), [0xffff88841dbb54b8]);
}

#[test]
fn the_verification_sees_the_lock_held_inside_and_not_outside_and_calibrates_the_loop() {
    let v = inject::parse_verification(&fixture("verify.json"), &[0xffff88841dbb54b8]).unwrap();
    assert_eq!(
        (v.inside_hits, v.inside_held, v.outside_hits, v.outside_held),
        (281_595, 281_595, 287_323, 253)
    );
    assert_eq!(
        (v.cal_loop_ns, v.cal_empty_ns, v.cal_loop_avg_ns, v.cal_empty_avg_ns),
        (2193, 30, 2252, 42)
    );
    assert!((v.ns_per_iter() - 2163.0 / 2000.0).abs() < 1e-12);
    assert_eq!(v.check(), Ok(()));
    // The same figures with the sites the other way round are refused.
    let swapped = inject::Verification {
        inside_held: v.outside_held,
        outside_held: v.inside_held,
        ..v.clone()
    };
    assert!(swapped.check().unwrap_err().message.contains("not inside the lock"));
    // A candidate never held inside is not chosen over the held one.
    let two =
        inject::parse_verification(&fixture("verify.json"), &[0xffff88841dbb54b8, 0x1234]).unwrap();
    assert_eq!(two.lock_addr, 0xffff88841dbb54b8);
}

#[test]
fn the_phases_are_accounted_per_cycle_and_cost() {
    let phases = inject::parse_phases(&fixture("phases.json")).unwrap();
    assert_eq!(phases.len(), 720);
    assert_eq!(phases.iter().filter(|p| p.kind == PhaseKind::Nothing).count(), 240);
    // Cycle 0 (cost 0): nothing first; cycle 4 (cost 0 again): the order swapped.
    assert_eq!(
        [phases[0].kind, phases[1].kind, phases[2].kind],
        [PhaseKind::Nothing, PhaseKind::Inside, PhaseKind::Outside]
    );
    assert_eq!(
        [phases[12].kind, phases[13].kind, phases[14].kind],
        [PhaseKind::Nothing, PhaseKind::Outside, PhaseKind::Inside]
    );
    let cycles = inject::cycles(&phases);
    assert_eq!(cycles.len(), 240);
    let costs = inject::kernel_costs(&[0, 500, 1000, 2000], &[0, 462, 925, 1849], &cycles);
    // (cycles, inside I/Os, outside I/Os, pooled inside ÷ outside), from the separate count.
    let want = [(60, 1.036586), (60, 1.028342), (60, 0.967232), (60, 1.001201)];
    for (c, (n, ratio)) in costs.iter().zip(want) {
        assert_eq!(c.cycles, n);
        let r = c.ratio.unwrap();
        assert!((r.value - ratio).abs() < 1e-6, "{} ns: {r:?}", c.cost_ns);
        assert!(r.lo < r.value && r.value < r.hi, "{r:?}");
    }
    assert!(
        (costs[3].iops_nothing - 80393.567).abs() < 1e-3
            && (costs[3].iops_inside - 59957.808).abs() < 1e-3
    );
    // Under a load of 13-15 on 2 CPUs this run could not tell inside from outside at 2 µs.
    assert!(!costs[3].ratio.unwrap().excludes(1.0));
}
