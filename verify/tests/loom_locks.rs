//! The project's own locks under loom (`schedlab_verify::locks`): every property of the ticket lock
//! and the measuring wrapper, and the negative controls loom must reject (each ordering weakened
//! through a named core fault, broken raw locks); each model in its own process.
#![cfg(loom)]

schedlab_verify::for_each_lock_model!(schedlab_verify::control_tests);
