//! The virtual-time simulation: where the idling decision is taken, what idling does on an SSD
//! and on a disk, weights under saturation, determinism and conservation. Runs are short (one or
//! two virtual seconds) so the file takes seconds even unoptimised.

use schedlab_benches::driver::workload::Rw;
use schedlab_benches::policy_sim::{
    bring_up, simulate_named, DeviceModel, IdlingDecision, SimConfig, SimResult, SliceIdleSource,
    SsdModel, BFQ_SLICE_IDLE_NS,
};
use schedlab_variants::no_stats::NoStats;

const S: u64 = 1_000_000_000;

fn ssd() -> DeviceModel {
    DeviceModel::from_name("ssd").unwrap()
}

fn hdd() -> DeviceModel {
    DeviceModel::from_name("hdd").unwrap()
}

fn run(cfg: &SimConfig) -> SimResult {
    let r = simulate_named("no-stats", cfg).unwrap();
    assert!(r.consistent, "end-of-run check failed: {:?}", r.requests);
    r
}

#[test]
fn deciding_at_init_gives_the_wrong_slice_idle_for_an_ssd() {
    // The first patch: decided at creation, when the unprobed queue still looks rotational.
    let at_init = bring_up::<NoStats>(ssd(), 1, IdlingDecision::Init, None);
    assert!(!at_init.device.rotational(), "the probe found a non-rotational device");
    assert_eq!(
        at_init.sched.slice_idle(),
        BFQ_SLICE_IDLE_NS,
        "yet the SSD idles: the decision came too early"
    );
    assert_eq!(at_init.source, SliceIdleSource::Init);
    // The fix: decided in the registered hook, after the probe.
    let registered = bring_up::<NoStats>(ssd(), 1, IdlingDecision::Registered, None);
    assert_eq!(registered.sched.slice_idle(), 0);
    assert_eq!(registered.source, SliceIdleSource::Registered);
    // A disk idles either way.
    for decision in [IdlingDecision::Init, IdlingDecision::Registered] {
        let disk = bring_up::<NoStats>(hdd(), 1, decision, None);
        assert!(disk.device.rotational());
        assert_eq!(disk.sched.slice_idle(), BFQ_SLICE_IDLE_NS, "{decision:?}");
    }
}

#[test]
fn the_init_time_decision_costs_the_ssd_what_idling_costs() {
    let base = SimConfig { runtime_ns: S, ..SimConfig::default() };
    let init = run(&SimConfig { decision: IdlingDecision::Init, ..base.clone() });
    let registered = run(&base);
    let idling = run(&SimConfig { slice_idle_ns: Some(BFQ_SLICE_IDLE_NS), ..base.clone() });
    assert_eq!((init.slice_idle_ns, registered.slice_idle_ns), (BFQ_SLICE_IDLE_NS, 0));
    assert_eq!(init.ios, idling.ios, "deciding at init is the same as idling");
    assert!(
        registered.iops > 2.0 * init.iops,
        "registered {} vs init {}",
        registered.iops,
        init.iops
    );
}

#[test]
fn an_explicit_slice_idle_overrides_the_registered_decision() {
    let up = bring_up::<NoStats>(ssd(), 1, IdlingDecision::Registered, Some(BFQ_SLICE_IDLE_NS));
    assert_eq!((up.sched.slice_idle(), up.source), (BFQ_SLICE_IDLE_NS, SliceIdleSource::Explicit));
    let up = bring_up::<NoStats>(hdd(), 1, IdlingDecision::Registered, Some(0));
    assert_eq!((up.sched.slice_idle(), up.source), (0, SliceIdleSource::Explicit));
}

#[test]
fn idling_on_an_ssd_caps_the_device_at_one_queue_s_depth() {
    let base = SimConfig { runtime_ns: S, ..SimConfig::default() };
    let on = run(&SimConfig { slice_idle_ns: Some(BFQ_SLICE_IDLE_NS), ..base.clone() });
    let off = run(&SimConfig { slice_idle_ns: Some(0), ..base.clone() });
    assert!(off.iops > 3.0 * on.iops, "off {} vs on {}", off.iops, on.iops);
    assert!(off.lat_avg_us < on.lat_avg_us);
    // With idling the in-service queue's 64 requests are most of what the device sees; without,
    // every unit is busy.
    assert!(on.device_mean_in_flight < 80.0, "{}", on.device_mean_in_flight);
    assert!(off.device_mean_in_flight > 250.0, "{}", off.device_mean_in_flight);
    // When one queue can fill the device, idling costs nothing.
    let narrow = |slice| SimConfig {
        device: DeviceModel::Ssd(SsdModel { units: 32, ..SsdModel::default() }),
        slice_idle_ns: Some(slice),
        ..base.clone()
    };
    assert_eq!(run(&narrow(BFQ_SLICE_IDLE_NS)).ios, run(&narrow(0)).ios);
}

#[test]
fn idling_keeps_sequential_readers_streaming_on_the_disk() {
    let base = SimConfig {
        device: hdd(),
        jobs: 4,
        iodepth: 1,
        rw: Rw::Read,
        runtime_ns: 2 * S,
        ..SimConfig::default()
    };
    let registered = run(&base);
    assert_eq!(registered.slice_idle_ns, BFQ_SLICE_IDLE_NS, "the disk keeps BFQ's default");
    let off = run(&SimConfig { slice_idle_ns: Some(0), ..base.clone() });
    assert!(registered.iops > 20.0 * off.iops, "idling {} vs not {}", registered.iops, off.iops);
    // Every reader progresses.
    assert!(
        registered.per_job_iops.iter().all(|&x| x > 0.2 * registered.iops / 4.0),
        "{:?}",
        registered.per_job_iops
    );
    // Alone on the disk, a reader streams either way: idling is neutral.
    let alone = |slice| run(&SimConfig { jobs: 1, slice_idle_ns: Some(slice), ..base.clone() }).ios;
    assert_eq!(alone(BFQ_SLICE_IDLE_NS), alone(0));
    // A reader that thinks longer than slice_idle is waited for in vain: the timer fires, and
    // the wait costs more than the seeks it was meant to save.
    let slow = run(&SimConfig { think_ns: 20_000_000, ..base.clone() });
    assert!(slow.idle_timer_fired > 10, "{}", slow.idle_timer_fired);
    let slow_off = run(&SimConfig { think_ns: 20_000_000, slice_idle_ns: Some(0), ..base.clone() });
    assert!(slow.iops < slow_off.iops, "idling {} vs not {}", slow.iops, slow_off.iops);
}

#[test]
fn three_saturated_groups_share_the_device_one_two_three() {
    // 3 groups x 2 jobs x 128 outstanding = 768 requests for the SSD's 256 units: the device is
    // the bottleneck and every group always has requests waiting in the scheduler.
    for seed in [1, 2] {
        let cfg = SimConfig {
            jobs: 6,
            iodepth: 128,
            groups: 3,
            weights: vec![100, 200, 300],
            runtime_ns: S,
            seed,
            ..SimConfig::default()
        };
        let r = run(&cfg);
        assert_eq!(r.slice_idle_ns, 0);
        assert!(r.device_mean_in_flight > 255.0, "not saturated: {}", r.device_mean_in_flight);
        assert!(r.ios > 20_000, "too few I/Os to judge: {}", r.ios);
        let unit = r.groups[0].bytes as f64;
        let got: Vec<f64> = r.groups.iter().map(|g| g.bytes as f64 / unit).collect();
        for ((g, got), want) in r.groups.iter().zip(&got).zip([1.0, 2.0, 3.0]) {
            assert_eq!(g.jobs, 2);
            assert!(
                (got / want - 1.0).abs() < 0.05,
                "seed {seed}: weights 100:200:300 got {got:?}"
            );
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_result() {
    for device in [ssd(), hdd()] {
        let cfg = SimConfig {
            device,
            jobs: 4,
            iodepth: 8,
            runtime_ns: S / 2,
            seed: 42,
            ..SimConfig::default()
        };
        let a = format!("{:?}", run(&cfg));
        let b = format!("{:?}", run(&cfg));
        assert_eq!(a, b);
        let c = format!("{:?}", run(&SimConfig { seed: 43, ..cfg }));
        assert_ne!(a, c, "the seed changes the offsets and service times");
    }
}

#[test]
fn every_variant_conserves_requests_on_every_device() {
    for v in schedlab_variants::ALL {
        for (device, think_ns) in [(DeviceModel::Null, 100_000), (ssd(), 0), (hdd(), 0)] {
            for rw in [Rw::RandRead, Rw::Write] {
                let cfg = SimConfig {
                    device: device.clone(),
                    jobs: 3,
                    iodepth: 4,
                    rw,
                    think_ns,
                    groups: 2,
                    weights: vec![100, 300],
                    runtime_ns: S / 5,
                    ..SimConfig::default()
                };
                let r = simulate_named(v.name, &cfg).unwrap();
                assert!(r.consistent, "{} {:?} {rw:?}: {:?}", v.name, device.name(), r.requests);
                let c = r.requests;
                assert_eq!(c.inserted, c.completed + c.merged);
                assert!(r.ios > 0 && r.ios <= c.inserted);
                if rw == Rw::Write && device != DeviceModel::Null {
                    // Sequential writes queued behind each other merge.
                    assert!(c.merged > 0, "{} {:?}: no merges", v.name, device.name());
                }
            }
        }
    }
}

#[test]
fn bad_parameters_are_refused_with_one_line() {
    let bad = [
        SimConfig { jobs: 0, ..SimConfig::default() },
        SimConfig { iodepth: 0, ..SimConfig::default() },
        SimConfig { runtime_ns: 0, ..SimConfig::default() },
        SimConfig { bs_sectors: 0, ..SimConfig::default() },
        SimConfig { weights: vec![0], ..SimConfig::default() },
        SimConfig { device: DeviceModel::Null, ..SimConfig::default() },
        SimConfig {
            device: DeviceModel::Ssd(SsdModel { units: 0, ..SsdModel::default() }),
            ..SimConfig::default()
        },
    ];
    for cfg in bad {
        let refused = simulate_named("no-stats", &cfg).unwrap_err();
        let msg = &refused.message;
        assert!(!msg.is_empty() && !msg.contains('\n'), "{msg}");
        assert_eq!(refused.kind, schedlab_benches::error::ErrorKind::BadInput, "{msg}");
    }
    let unknown = simulate_named("nonsense", &SimConfig::default()).unwrap_err();
    assert!(unknown.message.contains("unknown variant"), "{unknown}");
}
