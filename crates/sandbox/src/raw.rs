//! System calls made without the C library, for a run's init and program.
//!
//! Both run in the supervisor's own memory (`CLONE_VM`) while the supervisor goes on, so they
//! must not touch anything the C library keeps per thread: `errno`, the allocator's caches,
//! stdio locks. These calls return the kernel's answer as it is, an [`Errno`] for a failure,
//! and neither allocate nor panic.

use std::arch::asm;
use std::ffi::{c_int, c_void};

/// A failed call's error number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Errno(pub i32);

impl From<Errno> for std::io::Error {
    fn from(errno: Errno) -> Self {
        std::io::Error::from_raw_os_error(errno.0)
    }
}

/// One system call with up to six arguments (unused ones zero).
///
/// # Safety
/// The arguments must be valid for the call `nr`: pointers point where the kernel will read or
/// write, descriptors are the caller's.
#[inline]
pub unsafe fn syscall(nr: libc::c_long, args: [usize; 6]) -> Result<usize, Errno> {
    let ret: isize;
    // SAFETY: the x86-64 system call convention: number in rax, arguments in rdi, rsi, rdx,
    // r10, r8, r9; the kernel clobbers rcx and r11 and touches no user stack.
    unsafe {
        asm!(
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") args[0],
            in("rsi") args[1],
            in("rdx") args[2],
            in("r10") args[3],
            in("r8") args[4],
            in("r9") args[5],
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    if (-4095..0).contains(&ret) {
        Err(Errno(ret.unsigned_abs() as i32))
    } else {
        Ok(ret as usize)
    }
}

/// The entry of a process started by [`clone_on_stack`]; its return value is its exit status.
pub type Entry = extern "C" fn(*mut c_void) -> c_int;

/// `clone(flags)` with the child running `entry(arg)` on `stack_top` and exiting with its
/// return value; the parent gets the child's pid.
///
/// # Safety
/// `stack_top` is the 16-byte aligned end of a mapping that stays mapped, and is used by
/// nothing else, until the child has exited (or, with `CLONE_VFORK`, exec'd). With `CLONE_VM`
/// the child shares this process's memory: `entry` must keep to these raw calls (no
/// allocation, no `errno`, no thread-local state) and never unwind.
pub unsafe fn clone_on_stack(
    flags: libc::c_ulong,
    stack_top: usize,
    entry: Entry,
    arg: *mut c_void,
) -> Result<libc::pid_t, Errno> {
    let ret: isize;
    // SAFETY: the child returns from `syscall` with rax = 0 on the new stack and only calls
    // `entry` from there (r12 and r13 survive the call), then exits; it never touches the
    // parent's frames. The stack top is aligned, so `entry` starts with the ABI's alignment.
    unsafe {
        asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "mov rdi, r13",
            "call r12",
            "mov edi, eax",
            "mov eax, {exit}",
            "syscall",
            "ud2",
            "2:",
            exit = const libc::SYS_exit,
            inlateout("rax") libc::SYS_clone as isize => ret,
            in("rdi") flags,
            in("rsi") stack_top,
            in("rdx") 0usize,
            in("r10") 0usize,
            in("r8") 0usize,
            in("r12") entry as usize,
            in("r13") arg as usize,
            lateout("rcx") _,
            lateout("r11") _,
        );
    }
    if ret < 0 {
        Err(Errno(ret.unsigned_abs() as i32))
    } else {
        Ok(ret as libc::pid_t)
    }
}

/// Ends the calling process (its thread group) at once.
pub fn exit(status: c_int) -> ! {
    // SAFETY: exit_group has no memory preconditions and does not return.
    unsafe {
        let _ = syscall(libc::SYS_exit_group, [status as usize, 0, 0, 0, 0, 0]);
    }
    // The call cannot return; should it, nothing here may go on.
    loop {
        std::hint::spin_loop();
    }
}

/// `write(2)` of all of `bytes`, retried on `EINTR`.
pub fn write_all(fd: c_int, mut bytes: &[u8]) -> Result<(), Errno> {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is valid for its length.
        let written = unsafe {
            syscall(
                libc::SYS_write,
                [fd as usize, bytes.as_ptr() as usize, bytes.len(), 0, 0, 0],
            )
        };
        match written {
            Ok(0) => return Err(Errno(libc::EIO)),
            Ok(n) => bytes = bytes.get(n..).unwrap_or_default(),
            Err(Errno(libc::EINTR)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// `read(2)`, retried on `EINTR`.
pub fn read(fd: c_int, buf: &mut [u8]) -> Result<usize, Errno> {
    loop {
        // SAFETY: `buf` is valid for writes of its length.
        let got = unsafe {
            syscall(
                libc::SYS_read,
                [fd as usize, buf.as_mut_ptr() as usize, buf.len(), 0, 0, 0],
            )
        };
        match got {
            Err(Errno(libc::EINTR)) => {}
            other => return other,
        }
    }
}

pub fn close(fd: c_int) {
    // SAFETY: closing a descriptor of the calling process.
    let _ = unsafe { syscall(libc::SYS_close, [fd as usize, 0, 0, 0, 0, 0]) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_answer_their_result_or_the_kernels_error_number() {
        // SAFETY: getpid has no arguments; close of a descriptor that cannot be open.
        unsafe {
            assert_eq!(
                syscall(libc::SYS_getpid, [0; 6]),
                Ok(std::process::id() as usize)
            );
            assert_eq!(
                syscall(libc::SYS_close, [-1i32 as usize, 0, 0, 0, 0, 0]),
                Err(Errno(libc::EBADF))
            );
        }
        let mut buf = [0u8; 1];
        assert_eq!(read(-1, &mut buf), Err(Errno(libc::EBADF)));
    }

    #[test]
    fn a_cloned_child_runs_its_entry_on_its_stack_and_exits_with_its_answer() {
        extern "C" fn entry(arg: *mut c_void) -> c_int {
            // SAFETY: `arg` is the byte the parent passed; the parent waits (CLONE_VFORK).
            let value = unsafe { *(arg as *const u8) };
            c_int::from(value) + 1
        }
        let mut stack = vec![0u8; 64 * 1024];
        let top = (stack.as_mut_ptr() as usize + stack.len()) & !15;
        let mut value = 41u8;
        // SAFETY: the stack outlives the child, which only reads `value` before exiting and
        // runs while this thread is suspended (CLONE_VFORK).
        let pid = unsafe {
            clone_on_stack(
                (libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD) as libc::c_ulong,
                top,
                entry,
                (&mut value as *mut u8).cast(),
            )
        }
        .unwrap();
        let mut status = 0;
        // SAFETY: waiting for the child just made.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status));
        assert_eq!(libc::WEXITSTATUS(status), 42);
    }
}
