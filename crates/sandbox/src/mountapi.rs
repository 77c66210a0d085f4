//! The descriptor-based mount API (`openat2`, `open_tree`, `move_mount`, `mount_setattr`,
//! `fsopen`/`fsconfig`/`fsmount`), which the libc crate declares only as syscall numbers.
//!
//! It lets the sandbox resolve a host path once, without following symlinks, and then work on
//! the resulting descriptor, and set attributes (read-only, nosuid, ...) on a whole mount tree
//! at once, submounts included.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::sys;

const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
const RESOLVE_NO_SYMLINKS: u64 = 0x04;

const OPEN_TREE_CLONE: u32 = 1;
const OPEN_TREE_CLOEXEC: u32 = libc::O_CLOEXEC as u32;
const AT_RECURSIVE: u32 = 0x8000;
pub(crate) const MOVE_MOUNT_F_EMPTY_PATH: u32 = 0x4;

const FSOPEN_CLOEXEC: u32 = 1;
const FSCONFIG_SET_STRING: u32 = 1;
const FSCONFIG_CMD_CREATE: u32 = 6;
const FSMOUNT_CLOEXEC: u32 = 1;

/// `MOUNT_ATTR_*` of `<linux/mount.h>`.
pub const ATTR_RDONLY: u64 = 0x1;
pub const ATTR_NOSUID: u64 = 0x2;
pub const ATTR_NODEV: u64 = 0x4;
pub const ATTR_NOEXEC: u64 = 0x8;

#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

fn fd_result(rc: libc::c_long) -> io::Result<OwnedFd> {
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor to us.
    Ok(unsafe { OwnedFd::from_raw_fd(rc as RawFd) })
}

/// Opens `path` (absolute, or relative to `dir`) without following any symlink or magic link
/// on the way: a path a run could have written can never redirect a host-side open.
pub fn open_no_symlinks(dir: RawFd, path: &CStr, flags: i32) -> io::Result<OwnedFd> {
    let how = OpenHow {
        flags: (flags | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: `path` is NUL-terminated and `how` is a valid open_how of the size passed.
    fd_result(unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir,
            path.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    })
}

/// A detached copy of the mount tree at `source` (with its submounts).
pub fn clone_tree(source: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: an empty NUL-terminated path relative to a descriptor we hold.
    fd_result(unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            source,
            c"".as_ptr(),
            OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | libc::AT_EMPTY_PATH as u32 | AT_RECURSIVE,
        )
    })
}

/// A detached copy of the mount tree at `source` with `attrs` set on every mount of it.
pub fn clone_tree_with_attrs(source: RawFd, attrs: u64) -> io::Result<OwnedFd> {
    let tree = clone_tree(source)?;
    set_attrs_recursively(tree.as_raw_fd(), attrs)?;
    Ok(tree)
}

/// Sets `attrs` on every mount of the tree `tree` (a detached or attached mount descriptor).
pub fn set_attrs_recursively(tree: RawFd, attrs: u64) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: attrs,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: an empty path relative to a descriptor we hold, and a valid mount_attr.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            tree,
            c"".as_ptr(),
            libc::AT_EMPTY_PATH as u32 | AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    sys::check(rc as libc::c_int).map(drop)
}

/// Attaches the detached mount `tree` at `target`.
pub fn attach(tree: RawFd, target: &CStr) -> io::Result<()> {
    // SAFETY: NUL-terminated paths; `tree` is a mount descriptor we hold.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree,
            c"".as_ptr(),
            libc::AT_FDCWD,
            target.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    sys::check(rc as libc::c_int).map(drop)
}

/// A new, detached tmpfs with the given options (`size`, `nr_inodes`, `mode`, `uid`, ...) and
/// mount attributes.
pub fn detached_tmpfs(options: &[(&CStr, &CStr)], attrs: u64) -> io::Result<OwnedFd> {
    // SAFETY: a NUL-terminated filesystem name.
    let context =
        fd_result(unsafe { libc::syscall(libc::SYS_fsopen, c"tmpfs".as_ptr(), FSOPEN_CLOEXEC) })?;
    let config = |cmd: u32, key: Option<&CStr>, value: Option<&CStr>| {
        let ptr = |s: Option<&CStr>| s.map_or(std::ptr::null(), CStr::as_ptr);
        // SAFETY: NUL-terminated strings or nulls, as each command expects.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_fsconfig,
                context.as_raw_fd(),
                cmd,
                ptr(key),
                ptr(value),
                0,
            )
        };
        sys::check(rc as libc::c_int).map(drop)
    };
    for (key, value) in options {
        config(FSCONFIG_SET_STRING, Some(key), Some(value))?;
    }
    config(FSCONFIG_CMD_CREATE, None, None)?;
    // SAFETY: a filesystem context descriptor we hold.
    fd_result(unsafe {
        libc::syscall(
            libc::SYS_fsmount,
            context.as_raw_fd(),
            FSMOUNT_CLOEXEC,
            attrs,
        )
    })
}
