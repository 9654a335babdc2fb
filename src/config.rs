//! From a command's options to its experiment's configuration
//! (`schedlab_benches::experiment::options`), the same way for every command: the translation
//! gets the stop flag and the path registry's input check, and what it says has no effect is
//! printed as warnings (also when it refuses).

use crate::paths::check_input;
use crate::signals::INTERRUPT;
use schedlab_benches::experiment::options::Context;
use schedlab_benches::experiment::ExperimentError;

/// Builds a configuration with `build` (see the module documentation).
pub fn from_options<T>(
    build: impl FnOnce(&mut Context) -> Result<T, ExperimentError>,
) -> Result<T, ExperimentError> {
    let mut cx = Context::new(&INTERRUPT, &check_input);
    let built = build(&mut cx);
    for warning in cx.warnings {
        crate::out::warning(warning);
    }
    built
}
