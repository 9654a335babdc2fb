//! The run driver: ONE run of a workload on one variant ([`workload`]) on this host ([`host`]), its re-runs while other
//! processes disturb it ([`noise`]), the lock round trip ([`roundtrip`]), a run's CPU profile
//! ([`profile`]) and one run made by a schedlab executable as a child process ([`child`]).
//! Imports the files and the bottom (statistics, errors) only.

pub mod child;
pub mod completion;
pub mod forced;
pub mod host;
pub mod noise;
pub mod profile;
pub mod roundtrip;
pub mod stopped;
pub mod turns;
pub mod workload;
