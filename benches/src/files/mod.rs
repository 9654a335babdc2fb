//! Files: every output file written safely, the traces read back, and the provenance every report
//! carries. No measurement at all; imports nothing of the crate.

pub mod output;
pub mod provenance;
pub mod trace_check;
