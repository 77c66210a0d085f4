//! Where judging makes its short-lived files and directories: a submission's job directory, a
//! test's private copy of it, a validator's feedback directory, a multi-pass test's inputs, a
//! function run's cases.
//!
//! They live for one submission or one test, and a contest burst makes and removes dozens a
//! second. On a disk filesystem each costs an inode allocation and journal or writeback work
//! (ext4's search for a free inode that was not recently deleted was ~1.3% of all CPU time in
//! `ulticode bench burst`, in the server and in the supervisors copying compilations back); on a
//! memory filesystem it is a page allocation. So they go to a tmpfs when the host has one:
//! `ULTICODE_JOB_DIR` when set, else `/dev/shm` when it is a tmpfs this process may write in,
//! else the system's temporary directory. Problem packages and the compile cache, which are
//! large or meant to outlive the process, stay on disk.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Names the directory judging's short-lived files go to (see the module docs).
pub const JOB_DIR_VARIABLE: &str = "ULTICODE_JOB_DIR";

/// The shared memory filesystem most Linux hosts mount.
const SHARED_MEMORY: &str = "/dev/shm";

/// The directory short-lived judging files are made in, chosen once per process.
pub fn root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        choose(
            std::env::var_os(JOB_DIR_VARIABLE).map(PathBuf::from),
            Path::new(SHARED_MEMORY),
        )
    })
}

/// `configured` if given; else `shared_memory` when it is a writable tmpfs; else the system's
/// temporary directory. A configured directory is used as given: a mistake in it shows as the
/// first job directory's error, never as a silent fallback to a disk.
fn choose(configured: Option<PathBuf>, shared_memory: &Path) -> PathBuf {
    if let Some(dir) = configured {
        return dir;
    }
    match writable_tmpfs(shared_memory) {
        Some(dir) => dir,
        None => std::env::temp_dir(),
    }
}

/// `dir` with its symbolic links resolved (the sandbox opens job directories without following
/// any), when it is a tmpfs this process can write in.
fn writable_tmpfs(dir: &Path) -> Option<PathBuf> {
    let dir = dir.canonicalize().ok()?;
    let path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: an all-zero statfs is a valid out-parameter; the path is NUL-terminated.
    let mut stats: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above; the call fills `stats`.
    if unsafe { libc::statfs(path.as_ptr(), &mut stats) } != 0 {
        return None;
    }
    // SAFETY: the path is NUL-terminated.
    let writable = unsafe { libc::access(path.as_ptr(), libc::W_OK | libc::X_OK) } == 0;
    (stats.f_type == libc::TMPFS_MAGIC && writable).then_some(dir)
}

/// A fresh directory named `<prefix><random>`, removed when dropped.
pub fn dir(prefix: &str) -> io::Result<tempfile::TempDir> {
    tempfile::Builder::new().prefix(prefix).tempdir_in(root())
}

/// A fresh named file `<prefix><random>`, removed when dropped.
pub fn named_file(prefix: &str) -> io::Result<tempfile::NamedTempFile> {
    tempfile::Builder::new().prefix(prefix).tempfile_in(root())
}

/// A fresh unnamed file, gone when closed.
pub fn file() -> io::Result<std::fs::File> {
    tempfile::tempfile_in(root())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_directory_is_used_as_given() {
        let configured = PathBuf::from("/nonexistent/jobs");
        assert_eq!(
            choose(Some(configured.clone()), Path::new("/dev/shm")),
            configured
        );
    }

    #[test]
    fn a_directory_on_disk_is_not_taken_for_memory() {
        // The crate's own directory is on the build's disk, never a tmpfs here.
        let on_disk = Path::new(env!("CARGO_MANIFEST_DIR"));
        if writable_tmpfs(on_disk).is_some() {
            println!("UNAVAILABLE disk-backed-dir: the checkout itself is on a tmpfs");
            return;
        }
        assert_eq!(choose(None, on_disk), std::env::temp_dir());
        assert_eq!(
            choose(None, Path::new("/nonexistent")),
            std::env::temp_dir()
        );
    }

    #[test]
    fn a_writable_tmpfs_is_chosen() {
        let Some(shm) = writable_tmpfs(Path::new(SHARED_MEMORY)) else {
            println!("UNAVAILABLE shared-memory-tmpfs: {SHARED_MEMORY} is not a writable tmpfs");
            return;
        };
        assert_eq!(choose(None, Path::new(SHARED_MEMORY)), shm);
    }
}
