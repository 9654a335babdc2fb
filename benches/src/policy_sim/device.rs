//! The simulated devices: how long a request takes, how many may be in service at once, and the
//! rotational flag that is known only once the device has been probed.
//!
//! | model | requests in service | service time |
//! | --- | --- | --- |
//! | `null` | 1 | 0 (completion inline, as null_blk with `irqmode=0 completion_nsec=0`) |
//! | `ssd` | `units` at once (no device-internal queue: the driver takes a request only when a unit is free) | lognormal (`median_ns`, `sigma`) plus size / `transfer_mib_s` |
//! | `hdd` | 1 | command overhead + seek (grows with the square root of the distance) + rotational latency + size / media rate; a request that starts where the last one ended pays neither seek nor rotation |
//!
//! All randomness comes from one seeded generator per device, so a run is a pure function of its
//! configuration and seed.

use crate::error::ExperimentError;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

/// Sectors of every simulated device (1 TiB of 512-byte sectors).
pub const CAPACITY_SECTORS: u64 = 1 << 31;

const NS_PER_S: f64 = 1e9;
const MIB: f64 = 1024.0 * 1024.0;

/// An SSD: `units` requests in service at once (flash dies, or the back end of a network
/// volume), each taking a lognormally distributed time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SsdModel {
    /// Requests in service at once; also the driver's queue depth (tags).
    pub units: usize,
    /// Median of the per-request access time, ns.
    pub median_ns: u64,
    /// Standard deviation of the access time's logarithm (the spread of the tail).
    pub sigma: f64,
    /// Per-unit transfer rate, MiB/s (adds size / rate to each request).
    pub transfer_mib_s: f64,
}

impl Default for SsdModel {
    /// The model notes/results/2026-11-29-idling.md reports on: a network-attached SSD volume.
    fn default() -> Self {
        SsdModel { units: 256, median_ns: 4_000_000, sigma: 0.5, transfer_mib_s: 200.0 }
    }
}

/// A 7200 rpm SATA disk, one request at a time (no NCQ reordering).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HddModel {
    pub rpm: u32,
    /// Seek to the adjacent track, ns.
    pub track_to_track_ns: u64,
    /// Seek across the whole disk, ns.
    pub full_stroke_ns: u64,
    /// Media transfer rate, MiB/s.
    pub media_mib_s: f64,
    /// Per-command controller overhead, ns.
    pub overhead_ns: u64,
    /// Sectors per track: a forward gap shorter than this is skipped while the platter turns
    /// (no seek, no random rotational wait).
    pub track_sectors: u64,
}

impl Default for HddModel {
    fn default() -> Self {
        HddModel {
            rpm: 7200,
            track_to_track_ns: 800_000,
            full_stroke_ns: 16_000_000,
            media_mib_s: 150.0,
            overhead_ns: 50_000,
            track_sectors: 2048,
        }
    }
}

/// Which device, with its parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum DeviceModel {
    Null,
    Ssd(SsdModel),
    Hdd(HddModel),
}

impl DeviceModel {
    /// The device names the CLI accepts.
    pub const NAMES: [&'static str; 3] = ["null", "ssd", "hdd"];

    /// The model called `name`, with default parameters.
    pub fn from_name(name: &str) -> Option<DeviceModel> {
        match name {
            "null" => Some(DeviceModel::Null),
            "ssd" => Some(DeviceModel::Ssd(SsdModel::default())),
            "hdd" => Some(DeviceModel::Hdd(HddModel::default())),
            _ => None,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            DeviceModel::Null => "null",
            DeviceModel::Ssd(_) => "ssd",
            DeviceModel::Hdd(_) => "hdd",
        }
    }

    /// What the probe finds (`blk_queue_nonrot` after the driver set it).
    fn probed_rotational(&self) -> bool {
        matches!(self, DeviceModel::Hdd(_))
    }

    /// The driver's queue depth: how many requests may be on the device at once.
    pub fn queue_depth(&self) -> usize {
        match self {
            DeviceModel::Null | DeviceModel::Hdd(_) => 1,
            DeviceModel::Ssd(m) => m.units,
        }
    }

    /// Checks the parameters; the message is one line for the user.
    pub fn validate(&self) -> Result<(), ExperimentError> {
        match self {
            DeviceModel::Null => Ok(()),
            DeviceModel::Ssd(m) => {
                if !(1..=65_536).contains(&m.units) {
                    let units = m.units;
                    let message = format!("SSD parallelism must be 1..=65536, got {units}");
                    return Err(ExperimentError::bad_input(message));
                }
                if m.median_ns == 0
                    || !(m.sigma.is_finite() && m.sigma >= 0.0)
                    || !(m.transfer_mib_s.is_finite() && m.transfer_mib_s > 0.0)
                {
                    let message = "SSD service time must be positive, with a finite spread >= 0";
                    return Err(ExperimentError::bad_input(message));
                }
                Ok(())
            }
            DeviceModel::Hdd(m) => {
                if m.rpm == 0
                    || !(m.media_mib_s.is_finite() && m.media_mib_s > 0.0)
                    || m.full_stroke_ns < m.track_to_track_ns
                {
                    let message =
                        "HDD parameters must be positive, with full stroke >= track to track";
                    return Err(ExperimentError::bad_input(message));
                }
                Ok(())
            }
        }
    }
}

/// A device instance: its model, its rotational flag (set by [`Device::probe`]), what it is
/// serving, and its random stream.
pub struct Device {
    model: DeviceModel,
    /// `QUEUE_FLAG_NONROT`: clear when the queue is allocated, set by the driver's probe.
    nonrot: bool,
    probed: bool,
    in_flight: usize,
    /// Where the last request ended (the head, for the disk).
    head: u64,
    rng: SmallRng,
}

impl Device {
    /// A device as the block layer first sees it: not probed, so rotational (the default of a
    /// freshly allocated request queue).
    pub fn new(model: DeviceModel, seed: u64) -> Self {
        Device {
            model,
            nonrot: false,
            probed: false,
            in_flight: 0,
            head: 0,
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// The driver probes the device and sets the rotational flag (sd_revalidate_disk).
    pub fn probe(&mut self) {
        self.nonrot = !self.model.probed_rotational();
        self.probed = true;
    }

    pub fn probed(&self) -> bool {
        self.probed
    }

    /// `!blk_queue_nonrot(q)`: what a scheduler reading the flag now would see.
    pub fn rotational(&self) -> bool {
        !self.nonrot
    }

    pub fn model(&self) -> &DeviceModel {
        &self.model
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Whether the driver would take another request now.
    pub fn can_accept(&self) -> bool {
        self.in_flight < self.model.queue_depth()
    }

    /// Starts a request at `now`; returns when it completes.
    pub fn start(&mut self, now: u64, sector: u64, sectors: u32) -> u64 {
        debug_assert!(self.can_accept());
        self.in_flight += 1;
        let bytes = sectors as f64 * 512.0;
        let service = match &self.model {
            DeviceModel::Null => 0,
            DeviceModel::Ssd(m) => {
                let access = m.median_ns as f64 * (m.sigma * standard_normal(&mut self.rng)).exp();
                (access + bytes / (m.transfer_mib_s * MIB) * NS_PER_S) as u64
            }
            DeviceModel::Hdd(m) => {
                let transfer = bytes / (m.media_mib_s * MIB) * NS_PER_S;
                let revolution = 60.0 * NS_PER_S / m.rpm as f64;
                let positioning = if sector == self.head {
                    0.0 // sequential: the head is there, the sector is coming under it
                } else if sector > self.head && sector - self.head < m.track_sectors {
                    // A short forward gap on the same track: wait for it to pass under the head.
                    (sector - self.head) as f64 * 512.0 / (m.media_mib_s * MIB) * NS_PER_S
                } else {
                    let distance = sector.abs_diff(self.head) as f64 / CAPACITY_SECTORS as f64;
                    let seek = m.track_to_track_ns as f64
                        + (m.full_stroke_ns - m.track_to_track_ns) as f64
                            * distance.min(1.0).sqrt();
                    seek + self.rng.random::<f64>() * revolution
                };
                (m.overhead_ns as f64 + positioning + transfer) as u64
            }
        };
        self.head = sector + sectors as u64;
        now + service
    }

    /// A request left the device.
    pub fn finish(&mut self) {
        debug_assert!(self.in_flight > 0);
        self.in_flight -= 1;
    }
}

/// A standard normal deviate (Box–Muller; one of the pair is discarded to keep the stream simple).
fn standard_normal(rng: &mut SmallRng) -> f64 {
    let u1 = 1.0 - rng.random::<f64>(); // (0, 1]: ln is finite
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_is_rotational_until_probed() {
        let mut d = Device::new(DeviceModel::from_name("ssd").unwrap(), 1);
        assert!(d.rotational() && !d.probed());
        d.probe();
        assert!(!d.rotational());
        let mut h = Device::new(DeviceModel::from_name("hdd").unwrap(), 1);
        h.probe();
        assert!(h.rotational());
    }

    #[test]
    fn the_disk_is_much_faster_sequential_than_random() {
        let mut d = Device::new(DeviceModel::from_name("hdd").unwrap(), 3);
        d.probe();
        // 200 sequential requests from the head's position, then 200 scattered ones.
        let mut t = 0;
        for i in 0..200u64 {
            t = d.start(t, i * 8, 8);
            d.finish();
        }
        let seq = t;
        for i in 0..200u64 {
            t = d.start(t, (i * 7_919_113 + 104_729) % (CAPACITY_SECTORS / 8) * 8, 8);
            d.finish();
        }
        let rnd = t - seq;
        assert!(rnd > 50 * seq, "random {rnd} ns vs sequential {seq} ns");
    }

    #[test]
    fn the_ssd_median_is_near_its_parameter() {
        let m = SsdModel { transfer_mib_s: 1e12, ..SsdModel::default() };
        let mut d = Device::new(DeviceModel::Ssd(m.clone()), 5);
        let mut v: Vec<u64> = (0..10_001)
            .map(|_| {
                let t = d.start(0, 0, 8);
                d.finish();
                t
            })
            .collect();
        v.sort_unstable();
        let median = v[5000] as f64;
        assert!((median / m.median_ns as f64 - 1.0).abs() < 0.05, "median {median}");
    }
}
