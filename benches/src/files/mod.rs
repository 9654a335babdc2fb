//! Files: every output file written safely, every input read with a bound, the traces read back,
//! and the provenance every report carries. No measurement at all; imports only the bottom stage
//! (the error type, the statistics).

pub mod input;
pub mod lock;
pub mod output;
pub mod provenance;
pub mod stop;
pub mod trace_check;
