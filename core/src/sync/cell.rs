//! `std`'s `UnsafeCell` with the access API of loom's (tokio's pattern): `with` for shared access,
//! `with_mut` for exclusive access. The real build and shuttle use this one; under loom the
//! model backend's wraps loom's cell, whose accesses loom checks for races.

/// An `UnsafeCell` accessed through closures, so that loom can check every access for races.
#[derive(Debug)]
pub struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

impl<T> UnsafeCell<T> {
    pub fn new(value: T) -> Self {
        UnsafeCell(std::cell::UnsafeCell::new(value))
    }

    /// Runs `f` with a shared pointer to the contents. Dereferencing it is the caller's promise
    /// that no `with_mut` runs at the same time.
    #[inline]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Runs `f` with an exclusive pointer to the contents. Dereferencing it is the caller's
    /// promise that no other access runs at the same time.
    #[inline]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}
