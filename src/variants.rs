//! `schedlab variants`: the registered stats variants, one a line: the name, a tab, a one-line
//! summary.

use crate::logging;
use schedlab_benches::experiment::ExperimentError;

pub fn cmd(log: logging::Start) -> Result<(), ExperimentError> {
    let _logging = log.logs()?;
    for v in schedlab_variants::ALL {
        outln!("{}\t{}", v.name, v.summary);
    }
    Ok(())
}
