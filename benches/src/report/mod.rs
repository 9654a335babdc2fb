//! Reports: the text tables and the charts of the experiments' results. Renders what the
//! experiments return; runs nothing.

pub mod chart;
pub mod charts;
pub mod compare;
pub mod contract;
pub mod html;
pub mod inject;
pub mod kernel;
#[cfg(any(test, feature = "fixtures"))]
pub mod kernel_fixture;
pub mod locks;
pub mod outcome;
pub mod pages;
pub mod predict;
pub mod roundtrip;
pub mod run;
pub mod simulate;
pub mod sweep;
pub mod table;
