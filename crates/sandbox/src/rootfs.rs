//! The filesystem a sandboxed program sees: a tmpfs root made read-only, holding read-only binds
//! of the host's `/usr` (and the `/bin`, `/lib*` links into it), a curated `/etc`, a fresh
//! `/proc`, a minimal `/dev`, a capped writable `/tmp`, and the job directory.
//!
//! The plan is computed in the supervisor (pure data, unit-tested). The supervisor builds the
//! static part once, in a mount namespace whose root it already is (the template); each run's
//! init enters a private copy of that namespace and mounts only what is the run's own on top.

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::sources::HostSources;
use crate::spec::{RunSpec, JOB_MOUNT};

/// Top-level host entries mirrored into the sandbox (a symlink stays a symlink).
const HOST_TOP_LEVEL: &[&str] = &["usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"];

/// `/etc` entries the runtimes need; everything else in the host's `/etc` stays invisible.
const CURATED_ETC: &[&str] = &[
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "nsswitch.conf",
    // Toolchain configuration: LDC's, Nim's, Mono's, Racket's and PHP's (where their
    // libraries are).
    "ldc2.conf",
    "nim",
    "mono",
    "racket",
    "php",
];

/// `/etc` directories matched by prefix (per-version JDK, Python and Free Pascal
/// configuration).
const CURATED_ETC_PREFIXES: &[&str] = &["java-", "python3", "fpc"];

/// Device nodes bound from the host.
const DEVICES: &[&str] = &["null", "zero", "random", "urandom"];

pub(crate) const NOSUID_NODEV: libc::c_ulong = libc::MS_NOSUID | libc::MS_NODEV;
/// Flags of the template's own tmpfs mounts (the root and `/dev`) besides read-only.
const LOCKED_DOWN: libc::c_ulong = NOSUID_NODEV | libc::MS_NOEXEC;

/// One step of building the root. The template's paths are host paths under the staging root;
/// a run's are paths inside the template, once entered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MountOp {
    /// Stop mount events from propagating back to the host.
    MakePrivate,
    Tmpfs {
        target: CString,
        options: CString,
        flags: libc::c_ulong,
    },
    Dir(CString),
    File(CString),
    Symlink {
        target: CString,
        link: CString,
    },
    Write {
        path: CString,
        contents: Vec<u8>,
    },
    /// A read-only (or, for devices, writable) bind of a host path, resolved without
    /// following symlinks; its attributes apply to every submount too.
    Bind {
        source: CString,
        target: CString,
        writable: bool,
        extra_flags: libc::c_ulong,
    },
    /// Makes an already mounted tmpfs read-only.
    ReadOnly(CString),
    /// `pivot_root` into the staging root and detach the host tree; then make `/` read-only.
    Pivot(CString),
}

/// One step of a run's init on top of the template. Init runs in the supervisor's memory
/// (see [`crate::raw`]), so applying one makes raw calls only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunMount {
    /// Enters a private copy of the template's mount namespace (the descriptor): its root is
    /// the template, nothing of the host's tree is in it, and nothing mounted in the copy
    /// reaches the original or another run's copy.
    EnterTemplate(std::os::fd::RawFd),
    Proc(CString),
    Tmpfs {
        target: CString,
        options: CString,
        flags: libc::c_ulong,
    },
    /// Attaches a detached mount the supervisor made: a writable directory's tmpfs
    /// (`host: None`), or the detached, read-only copy of a host path's mount tree, opened with
    /// the caller's permissions (`host` only names it in messages).
    Attach {
        mount: std::os::fd::RawFd,
        host: Option<CString>,
        target: CString,
    },
    Chdir(CString),
}

fn cstring(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).expect("paths come from validated specs")
}

/// The part of the root shared by every run of a supervisor, scanned from the host once.
#[derive(Debug, Clone)]
pub struct RootfsLayout {
    staging: PathBuf,
    top_level: Vec<HostEntry>,
    etc: Vec<HostEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostEntry {
    Symlink { name: PathBuf, target: PathBuf },
    Dir(PathBuf),
    File(PathBuf),
}

fn scan(host_dir: &Path, name: &Path) -> Option<HostEntry> {
    let path = host_dir.join(name);
    let meta = fs::symlink_metadata(&path).ok()?;
    Some(if meta.file_type().is_symlink() {
        HostEntry::Symlink {
            name: name.to_path_buf(),
            target: fs::read_link(&path).ok()?,
        }
    } else if meta.is_dir() {
        HostEntry::Dir(name.to_path_buf())
    } else {
        HostEntry::File(name.to_path_buf())
    })
}

impl RootfsLayout {
    /// Scans the host. `staging` is an empty directory each run mounts its root tmpfs on.
    pub fn scan_host(staging: PathBuf) -> Self {
        let top_level = HOST_TOP_LEVEL
            .iter()
            .filter_map(|name| scan(Path::new("/"), Path::new(name)))
            .collect();
        let mut etc_names: Vec<PathBuf> = CURATED_ETC.iter().map(PathBuf::from).collect();
        if let Ok(entries) = fs::read_dir("/etc") {
            for entry in entries.flatten() {
                let name = entry.file_name();
                let text = name.to_string_lossy();
                if CURATED_ETC_PREFIXES.iter().any(|p| text.starts_with(p)) {
                    etc_names.push(PathBuf::from(name));
                }
            }
        }
        etc_names.sort();
        let etc = etc_names
            .iter()
            .filter_map(|name| scan(Path::new("/etc"), name))
            .collect();
        Self {
            staging,
            top_level,
            etc,
        }
    }

    /// Operations that build the read-only template every run of a supervisor starts from:
    /// a tmpfs root holding the host binds, `/etc`, `/dev`, and empty `/proc`, `/tmp`, `/job`.
    pub fn template_ops(&self, uid: u32, gid: u32) -> Vec<MountOp> {
        let root = &self.staging;
        let at = |inside: &str| cstring(&root.join(inside));
        let mut ops = vec![MountOp::Tmpfs {
            target: cstring(root),
            options: c"size=1m,nr_inodes=4096,mode=755".into(),
            flags: NOSUID_NODEV,
        }];
        let mirror = |ops: &mut Vec<MountOp>, host_parent: &Path, entry: &HostEntry| {
            let inside = |name: &Path| root.join(host_parent.strip_prefix("/").unwrap()).join(name);
            match entry {
                HostEntry::Symlink { name, target } => ops.push(MountOp::Symlink {
                    target: cstring(target),
                    link: cstring(&inside(name)),
                }),
                HostEntry::Dir(name) | HostEntry::File(name) => {
                    let target = cstring(&inside(name));
                    ops.push(if matches!(entry, HostEntry::Dir(_)) {
                        MountOp::Dir(target.clone())
                    } else {
                        MountOp::File(target.clone())
                    });
                    ops.push(MountOp::Bind {
                        source: cstring(&host_parent.join(name)),
                        target,
                        writable: false,
                        extra_flags: NOSUID_NODEV,
                    });
                }
            }
        };
        for entry in &self.top_level {
            mirror(&mut ops, Path::new("/"), entry);
        }
        ops.push(MountOp::Dir(at("etc")));
        for entry in &self.etc {
            mirror(&mut ops, Path::new("/etc"), entry);
        }
        ops.extend(self.identity_ops(uid, gid));

        ops.push(MountOp::Dir(at("dev")));
        ops.push(MountOp::Tmpfs {
            target: at("dev"),
            options: c"size=64k,nr_inodes=64,mode=755".into(),
            flags: libc::MS_NOSUID | libc::MS_NOEXEC,
        });
        for device in DEVICES {
            let target = at(&format!("dev/{device}"));
            ops.push(MountOp::File(target.clone()));
            ops.push(MountOp::Bind {
                source: cstring(&Path::new("/dev").join(device)),
                target,
                writable: true,
                extra_flags: libc::MS_NOSUID | libc::MS_NOEXEC,
            });
        }
        for (name, target) in [
            ("fd", "/proc/self/fd"),
            ("stdin", "/proc/self/fd/0"),
            ("stdout", "/proc/self/fd/1"),
            ("stderr", "/proc/self/fd/2"),
        ] {
            ops.push(MountOp::Symlink {
                target: CString::new(target).unwrap(),
                link: at(&format!("dev/{name}")),
            });
        }
        ops.push(MountOp::ReadOnly(at("dev")));
        for dir in ["proc", "tmp", JOB_MOUNT.trim_start_matches('/')] {
            ops.push(MountOp::Dir(at(dir)));
        }
        ops.push(MountOp::ReadOnly(cstring(root)));
        ops
    }

    /// Writes the identity files (`passwd`, `group`, ...) for the given uid and gid.
    fn identity_ops(&self, uid: u32, gid: u32) -> Vec<MountOp> {
        generated_etc(uid, gid)
            .into_iter()
            .map(|(name, contents)| MountOp::Write {
                path: cstring(&self.staging.join("etc").join(name)),
                contents,
            })
            .collect()
    }

    /// Mountpoints the spec's binds need that the template lacks, shallowest first.
    pub fn missing_mountpoints(&self, spec: &RunSpec, sources: &HostSources) -> Vec<Mountpoint> {
        let mut missing = Vec::new();
        for (bind, is_dir) in spec.binds.iter().zip(sources.bind_kinds(spec)) {
            let inside = self.inside(&bind.target);
            let ancestors: Vec<&Path> = bind.target.ancestors().collect();
            for ancestor in ancestors.into_iter().rev().skip(1) {
                let path = self.inside(ancestor);
                if fs::symlink_metadata(&path).is_ok()
                    || missing.iter().any(|m: &Mountpoint| m.path == path)
                {
                    continue;
                }
                let dir = path != inside || is_dir;
                missing.push(Mountpoint { path, dir });
            }
        }
        missing
    }

    fn inside(&self, path: &Path) -> PathBuf {
        self.staging.join(path.strip_prefix("/").unwrap_or(path))
    }

    /// Operations a run performs in its own mount namespace, a copy of the template's
    /// (`template`). `scratch` holds the detached tmpfs of each writable directory, in the
    /// order of [`RunSpec::writable_dirs`], and `sources` each read-only host path, opened.
    pub fn run_ops(
        spec: &RunSpec,
        template: std::os::fd::RawFd,
        scratch: &[std::os::fd::RawFd],
        sources: &[std::os::fd::RawFd],
    ) -> Vec<RunMount> {
        let mut ops = vec![
            RunMount::EnterTemplate(template),
            RunMount::Proc(c"/proc".into()),
            RunMount::Tmpfs {
                target: c"/tmp".into(),
                options: CString::new(format!(
                    "size={},nr_inodes={},mode=1777",
                    spec.limits.tmp_bytes, spec.limits.tmp_inodes
                ))
                .unwrap(),
                flags: NOSUID_NODEV,
            },
        ];
        let (mut scratch, mut sources) = (scratch.iter(), sources.iter());
        for (host, target, writable) in spec.host_dirs() {
            let target = cstring(target);
            let attach = if writable {
                scratch.next().map(|&mount| RunMount::Attach {
                    mount,
                    host: None,
                    target,
                })
            } else {
                sources.next().map(|&mount| RunMount::Attach {
                    mount,
                    host: Some(cstring(host)),
                    target,
                })
            };
            ops.push(attach.expect("one mount or source per host path"));
        }
        ops.push(RunMount::Chdir(cstring(&spec.effective_cwd())));
        ops
    }
}

/// A path created in the template so a bind has somewhere to land.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mountpoint {
    pub path: PathBuf,
    pub dir: bool,
}

/// The live template: built in the supervisor's private mount namespace, and the root of a
/// namespace of its own that every run copies.
pub struct Template {
    layout: RootfsLayout,
    /// The mount namespace whose root is the template (the host's tree detached): made once,
    /// so a run copies a small tree and never pivots or detaches the host's (a detach waits
    /// for an RCU grace period, ~0.1 ms and up to ~1 ms with every CPU busy).
    namespace: std::os::fd::OwnedFd,
}

impl Template {
    /// Moves the calling process into a mount namespace of its own (receiving, never sending,
    /// host mount events) and builds the template there.
    pub fn build(layout: RootfsLayout, uid: u32, gid: u32) -> Result<Self, String> {
        // SAFETY: unshare and mount with constant arguments.
        unsafe {
            if libc::unshare(libc::CLONE_NEWNS) != 0 {
                return Err(format!(
                    "unshare the supervisor's mount namespace: {}",
                    io::Error::last_os_error()
                ));
            }
        }
        mount(
            None,
            &c"/".into(),
            None,
            libc::MS_REC | libc::MS_SLAVE,
            None,
        )
        .map_err(|e| format!("make the supervisor's mounts slaves: {e}"))?;
        for op in layout.template_ops(uid, gid) {
            op.apply().map_err(|e| format!("{}: {e}", op.describe()))?;
        }
        let namespace = rooted_namespace(&layout.staging)
            .map_err(|e| format!("make the template's mount namespace: {e}"))?;
        Ok(Self { layout, namespace })
    }

    /// Makes the template ready for `spec` and returns the run's own operations.
    ///
    /// Mountpoints created for binds stay in the template for the supervisor's lifetime (as
    /// empty directories or files): bind targets are chosen by the judge, not by programs, so
    /// they form a small fixed set, and keeping them spares every later run two remounts.
    pub fn prepare(
        &mut self,
        spec: &RunSpec,
        scratch: &[std::os::fd::RawFd],
        sources: &HostSources,
    ) -> Result<Vec<RunMount>, String> {
        let missing = self.layout.missing_mountpoints(spec, sources);
        if !missing.is_empty() {
            self.writable(|_| {
                for point in &missing {
                    let made = if point.dir {
                        fs::create_dir(&point.path)
                    } else {
                        fs::File::create(&point.path).map(drop)
                    };
                    made.map_err(|e| {
                        format!(
                            "create the bind mountpoint {} (binds may only land in the \
                             sandbox's own directories, not inside a read-only bind): {e}",
                            point.path.display()
                        )
                    })?;
                }
                Ok(())
            })?;
        }
        Ok(RootfsLayout::run_ops(
            spec,
            std::os::fd::AsRawFd::as_raw_fd(&self.namespace),
            scratch,
            &sources.fds(),
        ))
    }

    /// Runs `change` with the template root remounted writable.
    fn writable(
        &self,
        change: impl FnOnce(&RootfsLayout) -> Result<(), String>,
    ) -> Result<(), String> {
        let root = cstring(&self.layout.staging);
        let remount = |read_only: libc::c_ulong| {
            mount(
                None,
                &root,
                None,
                libc::MS_REMOUNT | libc::MS_BIND | LOCKED_DOWN | read_only,
                None,
            )
            .map_err(|e| format!("remount the sandbox template: {e}"))
        };
        remount(0)?;
        let result = change(&self.layout);
        remount(libc::MS_RDONLY)?;
        result
    }
}

/// A mount namespace whose root is `staging` and which holds nothing of the host's tree: a
/// child of this (single-threaded) process copies the namespace, pivots into `staging` and
/// detaches the rest, and stays until the namespace is opened.
fn rooted_namespace(staging: &Path) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let pipe = || -> io::Result<(OwnedFd, OwnedFd)> {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors.
        check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
        // SAFETY: both were just opened and are owned by nobody else.
        Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
    };
    let (report_read, report_write) = pipe()?;
    let (release_read, release_write) = pipe()?;
    let root = cstring(staging);
    // SAFETY: this process is single-threaded, so the child may run ordinary code; it never
    // returns from this function (it ends in `_exit`).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        drop((report_read, release_write));
        // SAFETY: unshare with a flag constant.
        let made = check(unsafe { libc::unshare(libc::CLONE_NEWNS) })
            .and_then(|()| MountOp::MakePrivate.apply())
            .and_then(|()| MountOp::Pivot(root).apply());
        let message = match made {
            Ok(()) => String::new(),
            Err(e) => e.to_string(),
        };
        let _ = crate::sys::write_all(report_write.as_raw_fd(), message.as_bytes());
        drop(report_write);
        let mut byte = [0u8; 1];
        // Blocks until the parent has opened the namespace (and closed its end).
        let _ = crate::sys::read(release_read.as_raw_fd(), &mut byte);
        // SAFETY: terminating the process is always sound.
        unsafe { libc::_exit(0) }
    }
    drop((report_write, release_read));
    let message = crate::sys::read_to_end(report_read.as_raw_fd());
    let opened = match message {
        Ok(message) if message.is_empty() => {
            fs::File::open(format!("/proc/{pid}/ns/mnt")).map(OwnedFd::from)
        }
        Ok(message) => Err(io::Error::other(
            String::from_utf8_lossy(&message).into_owned(),
        )),
        Err(e) => Err(e),
    };
    drop(release_write);
    crate::sys::wait_pid(pid)?;
    opened
}

/// Identity files written fresh for each run: the program's uid has a name, nothing more.
fn generated_etc(uid: u32, gid: u32) -> Vec<(&'static str, Vec<u8>)> {
    vec![
        (
            "passwd",
            format!(
                "root:x:0:0:root:/root:/usr/sbin/nologin\n\
                 runner:x:{uid}:{gid}:runner:/tmp:/usr/sbin/nologin\n\
                 nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
            )
            .into_bytes(),
        ),
        (
            "group",
            format!("root:x:0:\nrunner:x:{gid}:\nnogroup:x:65534:\n").into_bytes(),
        ),
        ("hosts", b"127.0.0.1 localhost\n::1 localhost\n".to_vec()),
        ("hostname", b"ulticode\n".to_vec()),
    ]
}

/// The `MOUNT_ATTR_*` equivalents of a bind's extra `MS_*` flags.
pub(crate) fn mount_attrs(flags: libc::c_ulong) -> u64 {
    [
        (libc::MS_NOSUID, crate::mountapi::ATTR_NOSUID),
        (libc::MS_NODEV, crate::mountapi::ATTR_NODEV),
        (libc::MS_NOEXEC, crate::mountapi::ATTR_NOEXEC),
    ]
    .into_iter()
    .filter(|(flag, _)| flags & flag != 0)
    .map(|(_, attr)| attr)
    .fold(0, |all, attr| all | attr)
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn mount(
    source: Option<&CString>,
    target: &CString,
    fstype: Option<&std::ffi::CStr>,
    flags: libc::c_ulong,
    data: Option<&CString>,
) -> io::Result<()> {
    let ptr = |s: Option<&std::ffi::CStr>| s.map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: every pointer is null or a NUL-terminated string that outlives the call.
    check(unsafe {
        libc::mount(
            ptr(source.map(|s| s.as_c_str())),
            target.as_ptr(),
            ptr(fstype),
            flags,
            ptr(data.map(|s| s.as_c_str())).cast(),
        )
    })
}

impl MountOp {
    /// Performs the operation, in the supervisor (the template) or its one-off helper.
    pub fn apply(&self) -> io::Result<()> {
        match self {
            MountOp::MakePrivate => mount(
                None,
                &c"/".into(),
                None,
                libc::MS_REC | libc::MS_PRIVATE,
                None,
            ),
            MountOp::Tmpfs {
                target,
                options,
                flags,
            } => mount(
                Some(&c"tmpfs".into()),
                target,
                Some(c"tmpfs"),
                *flags,
                Some(options),
            ),
            MountOp::Dir(path) => {
                // SAFETY: `path` is NUL-terminated.
                let rc = unsafe { libc::mkdir(path.as_ptr(), 0o755) };
                match check(rc) {
                    Err(e) if e.raw_os_error() == Some(libc::EEXIST) => Ok(()),
                    other => other,
                }
            }
            MountOp::File(path) => {
                // SAFETY: `path` is NUL-terminated; the descriptor is closed right away.
                let fd = unsafe {
                    libc::open(
                        path.as_ptr(),
                        libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                        0o644,
                    )
                };
                if fd < 0 {
                    return Err(io::Error::last_os_error());
                }
                // SAFETY: `fd` was just opened.
                unsafe { libc::close(fd) };
                Ok(())
            }
            MountOp::Symlink { target, link } => {
                // SAFETY: both strings are NUL-terminated.
                check(unsafe { libc::symlink(target.as_ptr(), link.as_ptr()) })
            }
            MountOp::Write { path, contents } => {
                let path = Path::new(std::ffi::OsStr::from_bytes(path.as_bytes()));
                fs::write(path, contents)
            }
            MountOp::Bind {
                source,
                target,
                writable,
                extra_flags,
            } => {
                let step = |what: &str| {
                    let what = what.to_string();
                    move |e: io::Error| io::Error::new(e.kind(), format!("{what}: {e}"))
                };
                let source =
                    crate::mountapi::open_no_symlinks(libc::AT_FDCWD, source, libc::O_PATH)
                        .map_err(step("open the source (symlinks are refused)"))?;
                let mut attrs = mount_attrs(*extra_flags);
                if !writable {
                    attrs |= crate::mountapi::ATTR_RDONLY;
                }
                let source = std::os::fd::AsRawFd::as_raw_fd(&source);
                let tree = crate::mountapi::clone_tree_with_attrs(source, attrs)
                    .map_err(step("copy its mount tree with its attributes"))?;
                let tree = std::os::fd::AsRawFd::as_raw_fd(&tree);
                crate::mountapi::attach(tree, target).map_err(step("attach it"))
            }
            MountOp::ReadOnly(target) => mount(
                None,
                target,
                None,
                libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | LOCKED_DOWN,
                None,
            ),
            MountOp::Pivot(root) => {
                // SAFETY: NUL-terminated paths; pivot_root(".", ".") stacks the old root under
                // the new one, and the detach below removes it from this namespace.
                unsafe {
                    check(libc::chdir(root.as_ptr()))?;
                    check(
                        libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) as i32,
                    )?;
                    check(libc::umount2(c".".as_ptr(), libc::MNT_DETACH))?;
                    check(libc::chdir(c"/".as_ptr()))?;
                }
                mount(
                    None,
                    &c"/".into(),
                    None,
                    libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | NOSUID_NODEV,
                    None,
                )
            }
        }
    }

    /// A human description for configuration errors.
    pub fn describe(&self) -> String {
        let show = |c: &CString| c.to_string_lossy().into_owned();
        match self {
            MountOp::MakePrivate => "make / private".into(),
            MountOp::Tmpfs {
                target, options, ..
            } => {
                format!("mount tmpfs ({}) on {}", show(options), show(target))
            }
            MountOp::Dir(p) => format!("mkdir {}", show(p)),
            MountOp::File(p) => format!("create {}", show(p)),
            MountOp::Symlink { target, link } => {
                format!("symlink {} -> {}", show(link), show(target))
            }
            MountOp::Write { path, .. } => format!("write {}", show(path)),
            MountOp::Bind {
                source,
                target,
                writable,
                ..
            } => format!(
                "bind {} on {} ({})",
                show(source),
                show(target),
                if *writable { "rw" } else { "ro" }
            ),
            MountOp::ReadOnly(p) => format!("remount {} read-only", show(p)),
            MountOp::Pivot(p) => format!("pivot_root into {}", show(p)),
        }
    }
}

impl RunMount {
    /// Performs the step in a run's init: raw calls only, no allocation.
    pub fn apply(&self) -> Result<(), crate::raw::Errno> {
        use crate::raw::syscall;
        let ptr = |s: &std::ffi::CStr| s.as_ptr() as usize;
        let mount = |source: &std::ffi::CStr, target: &CString, flags, data: &std::ffi::CStr| {
            let args = [
                ptr(source),
                ptr(target),
                ptr(source),
                flags as usize,
                ptr(data),
                0,
            ];
            // SAFETY: NUL-terminated strings that outlive the call.
            unsafe { syscall(libc::SYS_mount, args) }.map(drop)
        };
        match self {
            RunMount::EnterTemplate(namespace) => {
                // SAFETY: setns on a namespace descriptor, unshare with a flag constant; init
                // shares no filesystem information with another process.
                unsafe {
                    let setns = [*namespace as usize, libc::CLONE_NEWNS as usize, 0, 0, 0, 0];
                    syscall(libc::SYS_setns, setns)?;
                    syscall(
                        libc::SYS_unshare,
                        [libc::CLONE_NEWNS as usize, 0, 0, 0, 0, 0],
                    )
                    .map(drop)
                }
            }
            RunMount::Proc(target) => mount(
                c"proc",
                target,
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                c"hidepid=2",
            ),
            RunMount::Tmpfs {
                target,
                options,
                flags,
            } => mount(c"tmpfs", target, *flags, options),
            RunMount::Attach { mount, target, .. } => {
                let args = [
                    *mount as usize,
                    ptr(c""),
                    libc::AT_FDCWD as usize,
                    ptr(target),
                    crate::mountapi::MOVE_MOUNT_F_EMPTY_PATH as usize,
                    0,
                ];
                // SAFETY: NUL-terminated paths; `mount` is a mount descriptor init inherited.
                unsafe { syscall(libc::SYS_move_mount, args) }.map(drop)
            }
            RunMount::Chdir(path) => {
                // SAFETY: `path` is NUL-terminated.
                unsafe { syscall(libc::SYS_chdir, [ptr(path), 0, 0, 0, 0, 0]) }.map(drop)
            }
        }
    }

    /// A human description for configuration errors.
    pub fn describe(&self) -> String {
        let show = |c: &CString| c.to_string_lossy().into_owned();
        match self {
            RunMount::EnterTemplate(_) => "enter a copy of the template's mount namespace".into(),
            RunMount::Proc(p) => format!("mount proc on {}", show(p)),
            RunMount::Tmpfs {
                target, options, ..
            } => format!("mount tmpfs ({}) on {}", show(options), show(target)),
            RunMount::Attach {
                host: Some(host),
                target,
                ..
            } => format!("bind {} on {} (ro)", show(host), show(target)),
            RunMount::Attach { target, .. } => {
                format!("attach a writable directory's tmpfs on {}", show(target))
            }
            RunMount::Chdir(p) => format!("chdir {} (inside the sandbox)", show(p)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caller::Caller;
    use crate::spec::Bind;

    fn layout(staging: &Path) -> RootfsLayout {
        RootfsLayout {
            staging: staging.to_path_buf(),
            top_level: vec![
                HostEntry::Dir("usr".into()),
                HostEntry::Symlink {
                    name: "bin".into(),
                    target: "usr/bin".into(),
                },
            ],
            etc: vec![
                HostEntry::File("ld.so.cache".into()),
                HostEntry::Symlink {
                    name: "localtime".into(),
                    target: "/usr/share/zoneinfo/Etc/UTC".into(),
                },
            ],
        }
    }

    fn c(s: &str) -> CString {
        CString::new(s).unwrap()
    }

    #[test]
    fn template_is_a_read_only_root_with_binds_dev_and_empty_mountpoints() {
        let ops = layout(Path::new("/stage")).template_ops(1000, 1000);
        assert!(matches!(&ops[0], MountOp::Tmpfs { target, .. } if *target == c("/stage")));
        let has = |op: MountOp| assert!(ops.contains(&op), "missing {op:?}");
        has(MountOp::Bind {
            source: c("/usr"),
            target: c("/stage/usr"),
            writable: false,
            extra_flags: NOSUID_NODEV,
        });
        has(MountOp::Symlink {
            target: c("usr/bin"),
            link: c("/stage/bin"),
        });
        has(MountOp::Bind {
            source: c("/etc/ld.so.cache"),
            target: c("/stage/etc/ld.so.cache"),
            writable: false,
            extra_flags: NOSUID_NODEV,
        });
        has(MountOp::Bind {
            source: c("/dev/urandom"),
            target: c("/stage/dev/urandom"),
            writable: true,
            extra_flags: libc::MS_NOSUID | libc::MS_NOEXEC,
        });
        has(MountOp::ReadOnly(c("/stage/dev")));
        for dir in ["/stage/proc", "/stage/tmp", "/stage/job"] {
            has(MountOp::Dir(c(dir)));
        }
        assert!(ops
            .iter()
            .any(|op| matches!(op, MountOp::Write { path, contents }
            if *path == c("/stage/etc/passwd")
                && String::from_utf8_lossy(contents).contains("runner:x:1000:1000"))));
        // No host /etc entry beyond the curated ones.
        assert!(!ops.iter().any(|op| op.describe().contains("shadow")));
        assert_eq!(ops.last(), Some(&MountOp::ReadOnly(c("/stage"))));
    }

    #[test]
    fn a_run_enters_the_template_then_mounts_proc_tmp_job_and_binds_inside_it() {
        let job = tempfile::tempdir().unwrap();
        let spec = RunSpec::new("/job/a.out")
            .job_dir(job.path(), true)
            .bind(Bind::read_only("/opt/data", "/data/tests"))
            .bind(Bind {
                source: "/srv/feedback".into(),
                target: "/feedback".into(),
                writable: true,
            });
        // The writable job directory is the tmpfs the supervisor made, never a bind.
        let ops = RootfsLayout::run_ops(&spec, 5, &[7, 8], &[9]);
        assert_eq!(
            ops,
            vec![
                RunMount::EnterTemplate(5),
                RunMount::Proc(c("/proc")),
                RunMount::Tmpfs {
                    target: c("/tmp"),
                    options: c("size=67108864,nr_inodes=4096,mode=1777"),
                    flags: NOSUID_NODEV,
                },
                RunMount::Attach {
                    mount: 7,
                    host: None,
                    target: c("/job"),
                },
                RunMount::Attach {
                    mount: 9,
                    host: Some(c("/opt/data")),
                    target: c("/data/tests"),
                },
                RunMount::Attach {
                    mount: 8,
                    host: None,
                    target: c("/feedback"),
                },
                RunMount::Chdir(c("/job")),
            ]
        );
    }

    #[test]
    fn missing_mountpoints_are_listed_shallowest_first() {
        let staging = tempfile::tempdir().unwrap();
        fs::create_dir(staging.path().join("tmp")).unwrap();
        let data = tempfile::NamedTempFile::new().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let spec = RunSpec::new("/bin/true")
            .bind(Bind::read_only(data.path(), "/data/tests/1.in"))
            .bind(Bind::read_only(dir.path(), "/data/lib"))
            .bind(Bind::read_only(dir.path(), "/tmp"));
        let sources = HostSources::open(&spec, &Caller::root()).unwrap();
        let missing = layout(staging.path()).missing_mountpoints(&spec, &sources);
        let at = |p: &str| staging.path().join(p);
        assert_eq!(
            missing,
            vec![
                Mountpoint {
                    path: at("data"),
                    dir: true
                },
                Mountpoint {
                    path: at("data/tests"),
                    dir: true
                },
                Mountpoint {
                    path: at("data/tests/1.in"),
                    dir: false
                },
                Mountpoint {
                    path: at("data/lib"),
                    dir: true
                },
            ]
        );
    }
}
