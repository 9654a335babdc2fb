//! The two lock kinds under study, as a value chosen at run time: what the command line and the
//! reports call them. Their implementations are in `lock.rs`.

use std::fmt;

/// Which lock implementation a [`Lock`] uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LockKind {
    /// FIFO ticket spinlock (kernel-like).
    FairSpin,
    /// parking_lot's adaptive, unfair mutex.
    ParkingLot,
}

impl LockKind {
    /// Both kinds, in report order.
    pub const ALL: [LockKind; 2] = [LockKind::FairSpin, LockKind::ParkingLot];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            LockKind::FairSpin => "fair-spin",
            LockKind::ParkingLot => "parking-lot",
        }
    }

    /// Parses a command-line name.
    pub fn from_name(name: &str) -> Option<LockKind> {
        LockKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for LockKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_kind_names_round_trip() {
        for k in LockKind::ALL {
            assert_eq!(LockKind::from_name(k.name()), Some(k));
        }
        assert_eq!(LockKind::from_name("mcs"), None);
    }
}
