//! Writable directories: a run never writes to the host's filesystem.
//!
//! A writable job directory or bind is a fresh tmpfs of the run (capped in bytes and inodes,
//! `nosuid,nodev`, owned by the run's uid), filled from the host directory before the run and
//! copied back after it. The host side of both copies uses the caller's permissions (see
//! `caller`): a run's tmpfs is filled only from files its caller could read, and the run's
//! files land only where its caller could write, owned by the caller. The copy back takes only
//! regular files and directories, with permission bits masked to `0777` (no setuid, setgid or
//! sticky bit survives), never a symlink, device, FIFO or socket, and at most as many bytes as
//! the tmpfs could hold (a sparse file cannot grow into a huge host file). The host directory
//! then holds exactly what the run left. Every walk goes descriptor by descriptor with
//! `O_NOFOLLOW`, so nothing a run created can redirect it.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::caller::Caller;
use crate::mountapi;
use crate::sys;

/// Deeper trees than this are not copied (a run could nest directories to exhaust the stack).
const MAX_DEPTH: usize = 64;

/// One writable directory of a run.
pub struct Scratch {
    host_path: PathBuf,
    /// The host directory, resolved without symlinks when the run was prepared.
    host: OwnedFd,
    /// The run's tmpfs (detached until init attaches it).
    mount: OwnedFd,
    cap_bytes: u64,
    caller: Caller,
}

#[derive(Debug, thiserror::Error)]
pub enum ScratchError {
    #[error("writable directory {path}: {what}: {source}")]
    Io {
        path: PathBuf,
        what: &'static str,
        source: io::Error,
    },
    #[error("the run left more than {0} bytes in a writable directory")]
    TooLarge(u64),
}

impl Scratch {
    /// Creates the tmpfs for `host_path` and copies the host directory into it. The caller
    /// must be able to read and write the host directory.
    pub fn create(
        host_path: &Path,
        cap_bytes: u64,
        cap_inodes: u64,
        uid: u32,
        caller: &Caller,
    ) -> Result<Self, ScratchError> {
        let io_error = |what: &'static str| {
            let path = host_path.to_path_buf();
            move |source| ScratchError::Io { path, what, source }
        };
        let c_path = CString::new(host_path.as_os_str().as_bytes())
            .map_err(|e| io_error("path")(io::Error::new(io::ErrorKind::InvalidInput, e)))?;
        let host = caller
            .act(|| {
                mountapi::open_no_symlinks(
                    libc::AT_FDCWD,
                    &c_path,
                    libc::O_RDONLY | libc::O_DIRECTORY,
                )
            })
            .map_err(io_error("open the host directory (symlinks are refused)"))?;
        caller
            .act(|| may_write(host.as_raw_fd()))
            .map_err(io_error("check that the caller may write it"))?;
        let text = |v: String| CString::new(v).expect("digits");
        let options = [
            (c"size", text(cap_bytes.to_string())),
            (c"nr_inodes", text(cap_inodes.to_string())),
            (c"mode", text("755".into())),
            (c"uid", text(uid.to_string())),
            (c"gid", text(uid.to_string())),
        ];
        let options: Vec<(&CStr, &CStr)> =
            options.iter().map(|(k, v)| (*k, v.as_c_str())).collect();
        let mount =
            mountapi::detached_tmpfs(&options, mountapi::ATTR_NOSUID | mountapi::ATTR_NODEV)
                .map_err(io_error("create its tmpfs"))?;
        let root = open_dir_at(mount.as_raw_fd(), c".").map_err(io_error("open its tmpfs"))?;
        let mut budget = Budget::new(cap_bytes);
        let sides = Sides {
            from: caller,
            to: &Caller::root(),
        };
        copy_tree(
            host.as_raw_fd(),
            root.as_raw_fd(),
            Some(uid),
            &sides,
            &mut budget,
            0,
        )
        .map_err(|e| match e {
            CopyError::Io(source) => io_error("copy the host directory in")(source),
            CopyError::TooLarge => ScratchError::Io {
                path: host_path.to_path_buf(),
                what: "copy the host directory in",
                source: io::Error::from_raw_os_error(libc::EFBIG),
            },
        })?;
        Ok(Self {
            host_path: host_path.to_path_buf(),
            host,
            mount,
            cap_bytes,
            caller: caller.clone(),
        })
    }

    /// The detached mount init attaches.
    pub fn mount_fd(&self) -> RawFd {
        self.mount.as_raw_fd()
    }

    /// Replaces the host directory's contents with what the run left (see the module doc).
    pub fn copy_back(&self) -> Result<(), ScratchError> {
        let io_error = |what: &'static str| {
            let path = self.host_path.clone();
            move |source| ScratchError::Io { path, what, source }
        };
        let root = open_dir_at(self.mount.as_raw_fd(), c".").map_err(io_error("open its tmpfs"))?;
        let host = self
            .caller
            .act(|| open_dir_at(self.host.as_raw_fd(), c"."))
            .map_err(io_error("open the host directory"))?;
        self.caller
            .act(|| clear_dir(host.as_raw_fd(), 0))
            .map_err(io_error("clear the host directory"))?;
        let mut budget = Budget::new(self.cap_bytes);
        let sides = Sides {
            from: &Caller::root(),
            to: &self.caller,
        };
        let copied = copy_tree(
            root.as_raw_fd(),
            host.as_raw_fd(),
            None,
            &sides,
            &mut budget,
            0,
        );
        copied.map_err(|e| match e {
            CopyError::Io(source) => io_error("copy the run's files back")(source),
            CopyError::TooLarge => ScratchError::TooLarge(self.cap_bytes),
        })
    }
}

/// Whether the caller (in effect now) may create and remove entries in `dir`.
fn may_write(dir: RawFd) -> io::Result<()> {
    // SAFETY: an empty path relative to a descriptor we hold. AT_EACCESS checks with the
    // effective (here: filesystem) ids in force, not the real ones.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_faccessat2,
            dir,
            c"".as_ptr(),
            libc::W_OK | libc::X_OK,
            libc::AT_EACCESS | libc::AT_EMPTY_PATH,
        )
    };
    sys::check(rc as libc::c_int).map(drop)
}

/// Whose permissions each side of a copy uses.
struct Sides<'a> {
    from: &'a Caller,
    to: &'a Caller,
}

struct Budget {
    left: u64,
}

impl Budget {
    fn new(bytes: u64) -> Self {
        Self { left: bytes }
    }

    fn spend(&mut self, bytes: u64) -> Result<(), CopyError> {
        self.left = self.left.checked_sub(bytes).ok_or(CopyError::TooLarge)?;
        Ok(())
    }
}

enum CopyError {
    Io(io::Error),
    TooLarge,
}

impl From<io::Error> for CopyError {
    fn from(e: io::Error) -> Self {
        CopyError::Io(e)
    }
}

fn open_dir_at(dir: RawFd, name: &CStr) -> io::Result<OwnedFd> {
    open_at(
        dir,
        name,
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
        0,
    )
}

fn open_at(dir: RawFd, name: &CStr, flags: i32, mode: libc::mode_t) -> io::Result<OwnedFd> {
    // SAFETY: a NUL-terminated name relative to a directory descriptor we hold.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_CLOEXEC, mode) };
    sys::check(fd)?;
    // SAFETY: the descriptor was just returned to us.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// An entry of a directory and how it looks (never following a symlink).
struct Entry {
    name: CString,
    stat: libc::stat,
}

/// The entries of `dir` (without `.` and `..`).
fn entries(dir: RawFd) -> io::Result<Vec<Entry>> {
    // fdopendir takes ownership of its descriptor: give it a copy of ours.
    let copy = open_dir_at(dir, c".")?;
    // SAFETY: a directory descriptor we own; fdopendir owns it from here on.
    let stream = unsafe { libc::fdopendir(copy.as_raw_fd()) };
    if stream.is_null() {
        return Err(io::Error::last_os_error());
    }
    std::mem::forget(copy);
    let mut names = Vec::new();
    loop {
        // SAFETY: `stream` is a live directory stream.
        let entry = unsafe { libc::readdir(stream) };
        if entry.is_null() {
            break;
        }
        // SAFETY: d_name is NUL-terminated within the entry.
        let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
        if name != c"." && name != c".." {
            names.push(name.to_owned());
        }
    }
    // SAFETY: closing the stream we opened.
    unsafe { libc::closedir(stream) };
    names
        .into_iter()
        .map(|name| {
            // SAFETY: an all-zero stat is valid; fstatat fills it.
            let mut stat: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: NUL-terminated name, valid out-pointer.
            sys::check(unsafe {
                libc::fstatat(dir, name.as_ptr(), &mut stat, libc::AT_SYMLINK_NOFOLLOW)
            })?;
            Ok(Entry { name, stat })
        })
        .collect()
}

fn kind(stat: &libc::stat) -> libc::mode_t {
    stat.st_mode & libc::S_IFMT
}

/// Copies regular files and directories from `from` into `to`; anything else is skipped.
/// `owner` chowns the copies (copy-in); without it they belong to whoever `sides.to` is
/// (copy-back).
fn copy_tree(
    from: RawFd,
    to: RawFd,
    owner: Option<u32>,
    sides: &Sides<'_>,
    budget: &mut Budget,
    depth: usize,
) -> Result<(), CopyError> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    for entry in sides.from.act(|| entries(from))? {
        let mode = entry.stat.st_mode & 0o777;
        match kind(&entry.stat) {
            libc::S_IFDIR => {
                let source = sides.from.act(|| open_dir_at(from, &entry.name))?;
                let target = sides.to.act(|| {
                    // SAFETY: NUL-terminated name relative to a directory descriptor we hold.
                    sys::check(unsafe { libc::mkdirat(to, entry.name.as_ptr(), 0o700) })?;
                    let target = open_dir_at(to, &entry.name)?;
                    finish(target.as_raw_fd(), owner, mode)?;
                    Ok(target)
                })?;
                copy_tree(
                    source.as_raw_fd(),
                    target.as_raw_fd(),
                    owner,
                    sides,
                    budget,
                    depth + 1,
                )?;
            }
            libc::S_IFREG => {
                budget.spend(entry.stat.st_size.max(0) as u64)?;
                let source = sides
                    .from
                    .act(|| open_at(from, &entry.name, libc::O_RDONLY | libc::O_NOFOLLOW, 0))?;
                let target = sides.to.act(|| {
                    open_at(
                        to,
                        &entry.name,
                        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
                        0o600,
                    )
                })?;
                copy_bytes(
                    source.as_raw_fd(),
                    target.as_raw_fd(),
                    entry.stat.st_size as u64,
                )?;
                sides.to.act(|| finish(target.as_raw_fd(), owner, mode))?;
            }
            _ => {}
        }
    }
    Ok(())
}

fn finish(fd: RawFd, owner: Option<u32>, mode: libc::mode_t) -> io::Result<()> {
    if let Some(uid) = owner {
        // SAFETY: fchown on a descriptor we hold.
        sys::check(unsafe { libc::fchown(fd, uid, uid) })?;
    }
    // SAFETY: fchmod on a descriptor we hold; the mode has no setuid/setgid/sticky bits.
    sys::check(unsafe { libc::fchmod(fd, mode) }).map(drop)
}

/// Copies at most `len` bytes (the size seen when the copy was budgeted).
fn copy_bytes(from: RawFd, to: RawFd, len: u64) -> io::Result<()> {
    let mut left = len;
    let mut buf = vec![0u8; 64 * 1024];
    while left > 0 {
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = match sys::read(from, &mut buf[..want])? {
            Some(0) => break,
            Some(n) => n,
            None => continue,
        };
        sys::write_all(to, &buf[..n])?;
        left -= n as u64;
    }
    Ok(())
}

/// Removes everything inside `dir`.
fn clear_dir(dir: RawFd, depth: usize) -> io::Result<()> {
    for entry in entries(dir)? {
        let is_dir = kind(&entry.stat) == libc::S_IFDIR;
        if is_dir && depth < MAX_DEPTH {
            let inner = open_dir_at(dir, &entry.name)?;
            clear_dir(inner.as_raw_fd(), depth + 1)?;
        }
        let flags = if is_dir { libc::AT_REMOVEDIR } else { 0 };
        // SAFETY: NUL-terminated name relative to a directory descriptor we hold.
        sys::check(unsafe { libc::unlinkat(dir, entry.name.as_ptr(), flags) })?;
    }
    Ok(())
}
