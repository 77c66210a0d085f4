//! The stacks a run's init and program run on, and the inits still exiting on theirs.
//!
//! Init and the program share the supervisor's memory (see `child`), so their stacks are the
//! supervisor's: a stack serves a later run only once its init has been reaped, and the same
//! few mappings serve every run (their pages are faulted in once).

use std::io;
use std::ptr::NonNull;

use crate::sys;

/// One mapping: a guard page, the program's stack, a guard page, init's stack. A stack that
/// overflows faults on its guard page instead of writing into the other.
pub(super) struct RunStack {
    base: NonNull<u8>,
}

impl RunStack {
    const PAGE: usize = 4096;
    const STACK: usize = 128 * 1024;
    const LEN: usize = 2 * (Self::PAGE + Self::STACK);

    fn map() -> io::Result<Self> {
        // SAFETY: an anonymous private mapping of a constant size; checked below.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                Self::LEN,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let stack = Self {
            base: NonNull::new(map.cast()).ok_or_else(|| io::Error::other("mmap gave null"))?,
        };
        for guard in [0, Self::PAGE + Self::STACK] {
            // SAFETY: a page inside the mapping just made, which nothing uses yet.
            let rc = unsafe {
                libc::mprotect(
                    stack.base.as_ptr().add(guard).cast(),
                    Self::PAGE,
                    libc::PROT_NONE,
                )
            };
            sys::check(rc)?;
        }
        Ok(stack)
    }

    pub(super) fn program_top(&self) -> usize {
        self.base.as_ptr() as usize + Self::PAGE + Self::STACK
    }

    pub(super) fn init_top(&self) -> usize {
        self.base.as_ptr() as usize + Self::LEN
    }
}

impl Drop for RunStack {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping this value made; no process runs on it any more (a
        // stack is dropped only when its init has been reaped, or never ran).
        unsafe { libc::munmap(self.base.as_ptr().cast(), Self::LEN) };
    }
}

/// The supervisor's stacks: free ones, and those whose init reported and is still exiting.
#[derive(Default)]
pub(super) struct Inits {
    exiting: Vec<(libc::pid_t, RunStack)>,
    free: Vec<RunStack>,
}

impl Inits {
    /// A stack no process runs on.
    pub(super) fn stack(&mut self) -> io::Result<RunStack> {
        self.free.pop().map_or_else(RunStack::map, Ok)
    }

    /// A stack whose init has been waited for (or never started).
    pub(super) fn release(&mut self, stack: RunStack) {
        self.free.push(stack);
    }

    /// Init `pid` reported and exits in the background, on `stack`.
    pub(super) fn exiting(&mut self, pid: libc::pid_t, stack: RunStack) {
        self.exiting.push((pid, stack));
    }

    /// Reaps the inits that have exited.
    pub(super) fn reap_exited(&mut self) {
        let mut index = 0;
        while index < self.exiting.len() {
            if sys::try_reap(self.exiting[index].0) {
                let (_, stack) = self.exiting.swap_remove(index);
                self.free.push(stack);
            } else {
                index += 1;
            }
        }
    }

    /// Waits for every exiting init.
    pub(super) fn wait_all(&mut self) {
        for (pid, stack) in std::mem::take(&mut self.exiting) {
            let _ = sys::wait_pid(pid);
            self.free.push(stack);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_are_reused_only_once_their_init_is_reaped() {
        let mut inits = Inits::default();
        let first = inits.stack().unwrap();
        let (program, init) = (first.program_top(), first.init_top());
        assert_eq!(program % 16, 0);
        assert_eq!(init - program, RunStack::PAGE + RunStack::STACK);
        // SAFETY: a child that exits at once; it is reaped below.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: terminating the child.
            unsafe { libc::_exit(0) };
        }
        inits.exiting(pid, first);
        let second = inits.stack().unwrap();
        assert_ne!(
            second.init_top(),
            init,
            "a stack still in use was handed out"
        );
        inits.release(second);
        inits.wait_all();
        let reused: Vec<usize> = [inits.stack().unwrap(), inits.stack().unwrap()]
            .iter()
            .map(RunStack::init_top)
            .collect();
        assert!(reused.contains(&init));
    }
}
