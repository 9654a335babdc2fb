//! The run driver: ONE run of a workload on one variant ([`workload`]) on this host ([`host`]), its re-runs while other
//! processes disturb it ([`noise`]), the lock round trip ([`roundtrip`]) and a run's CPU profile
//! ([`profile`]). Imports the files and the bottom (statistics, errors) only.

pub mod completion;
pub mod forced;
pub mod host;
pub mod noise;
pub mod profile;
pub mod roundtrip;
pub mod stopped;
pub mod turns;
pub mod workload;
