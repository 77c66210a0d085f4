//! One cgroup per run, on cgroup v1 or v2, detected at run time.
//!
//! The cgroup is where the kernel keeps the numbers a verdict depends on: CPU time of every
//! thread of every process, peak memory, OOM kills and refused forks. Run cgroups live under a
//! `ulticode-sandbox` directory inside the supervisor's own cgroup, so a delegated subtree is
//! all the sandbox needs.

use std::ffi::CString;
use std::fs;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

const BASE_NAME: &str = "ulticode-sandbox";
const RUN_PREFIX: &str = "run-";
/// Mount data of the controller-less v1 hierarchy that exists only to carry `favordynmods`.
const FAVOR_DYNMODS_MOUNT: &str = "none,name=ulticode-favordynmods,favordynmods";

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CgroupVersion {
    V1,
    V2,
}

/// Where run cgroups are created, resolved once per supervisor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CgroupHierarchy {
    /// Per-controller base directories.
    V1 {
        memory: PathBuf,
        pids: PathBuf,
        cpuacct: PathBuf,
        /// The `cpu` controller, when mounted apart from `cpuacct`: a cgroup per run there
        /// makes the scheduler share CPU time between runs, not between their threads.
        cpu: Option<PathBuf>,
    },
    /// The unified base directory.
    V2 { base: PathBuf },
}

#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    #[error("no usable cgroup hierarchy: {0}")]
    Unavailable(String),
    #[error("cgroup {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("cgroup file {path} has unexpected content {content:?}")]
    Parse { path: PathBuf, content: String },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> CgroupError + '_ {
    move |source| CgroupError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// One line of `/proc/self/mountinfo` that mounts a cgroup filesystem.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CgroupMount {
    root: String,
    mount_point: PathBuf,
    v2: bool,
    /// v1 controllers named in the super options.
    controllers: Vec<String>,
}

fn parse_mountinfo(text: &str) -> Vec<CgroupMount> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let fields: Vec<&str> = left.split(' ').collect();
            let mut right = right.split(' ');
            let fstype = right.next()?;
            let _source = right.next()?;
            let super_options = right.next().unwrap_or("");
            let v2 = match fstype {
                "cgroup2" => true,
                "cgroup" => false,
                _ => return None,
            };
            Some(CgroupMount {
                root: unescape_mount_field(fields.get(3)?),
                mount_point: PathBuf::from(unescape_mount_field(fields.get(4)?)),
                v2,
                controllers: super_options.split(',').map(str::to_string).collect(),
            })
        })
        .collect()
}

/// mountinfo escapes space, tab, newline and backslash as octal.
fn unescape_mount_field(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|_| bytes[i] == b'\\')
            .and_then(|digits| std::str::from_utf8(digits).ok())
            .and_then(|digits| u8::from_str_radix(digits, 8).ok());
        if let Some(value) = octal {
            out.push(value);
            i += 4;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `/proc/self/cgroup`: (hierarchy id, controllers, path).
fn parse_proc_cgroup(text: &str) -> Vec<(String, Vec<String>, String)> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let id = parts.next()?.to_string();
            let controllers = parts.next()?;
            let path = parts.next()?.to_string();
            let controllers = controllers
                .split(',')
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect();
            Some((id, controllers, path))
        })
        .collect()
}

/// The host directory of `cgroup_path` under `mount`.
fn host_dir(mount: &CgroupMount, cgroup_path: &str) -> PathBuf {
    let relative = cgroup_path
        .strip_prefix(mount.root.as_str())
        .unwrap_or(cgroup_path)
        .trim_start_matches('/');
    if relative.is_empty() {
        mount.mount_point.clone()
    } else {
        mount.mount_point.join(relative)
    }
}

impl CgroupHierarchy {
    /// Detects the hierarchy of the calling process from procfs.
    pub fn detect() -> Result<Self, CgroupError> {
        let mountinfo = fs::read_to_string("/proc/self/mountinfo")
            .map_err(io_err(Path::new("/proc/self/mountinfo")))?;
        let own = fs::read_to_string("/proc/self/cgroup")
            .map_err(io_err(Path::new("/proc/self/cgroup")))?;
        Self::from_proc(&mountinfo, &own)
    }

    /// Prefers v2 when its root delegates memory and pids; else v1 with memory, pids and cpuacct.
    fn from_proc(mountinfo: &str, own: &str) -> Result<Self, CgroupError> {
        let mounts = parse_mountinfo(mountinfo);
        let own = parse_proc_cgroup(own);
        let mut reasons = Vec::new();

        if let (Some(mount), Some((_, _, path))) = (
            mounts.iter().find(|m| m.v2),
            own.iter().find(|(id, c, _)| id == "0" && c.is_empty()),
        ) {
            let own_dir = host_dir(mount, path);
            let controllers =
                fs::read_to_string(own_dir.join("cgroup.controllers")).unwrap_or_default();
            let has = |name: &str| controllers.split_whitespace().any(|c| c == name);
            if has("memory") && has("pids") {
                return Ok(CgroupHierarchy::V2 {
                    base: own_dir.join(BASE_NAME),
                });
            }
            reasons.push(format!(
                "cgroup v2 at {} offers controllers [{}], needs memory and pids",
                own_dir.display(),
                controllers.trim()
            ));
        }

        let v1_dir = |controller: &str| -> Option<PathBuf> {
            let mount = mounts
                .iter()
                .find(|m| !m.v2 && m.controllers.iter().any(|c| c == controller))?;
            let (_, _, path) = own
                .iter()
                .find(|(_, controllers, _)| controllers.iter().any(|c| c == controller))?;
            Some(host_dir(mount, path).join(BASE_NAME))
        };
        match (v1_dir("memory"), v1_dir("pids"), v1_dir("cpuacct")) {
            (Some(memory), Some(pids), Some(cpuacct)) => Ok(CgroupHierarchy::V1 {
                cpu: v1_dir("cpu").filter(|cpu| *cpu != cpuacct),
                memory,
                pids,
                cpuacct,
            }),
            (memory, pids, cpuacct) => {
                let missing: Vec<&str> = [("memory", memory), ("pids", pids), ("cpuacct", cpuacct)]
                    .into_iter()
                    .filter(|(_, dir)| dir.is_none())
                    .map(|(name, _)| name)
                    .collect();
                reasons.push(format!(
                    "cgroup v1 controllers not mounted: {}",
                    missing.join(", ")
                ));
                Err(CgroupError::Unavailable(reasons.join("; ")))
            }
        }
    }

    pub fn version(&self) -> CgroupVersion {
        match self {
            CgroupHierarchy::V1 { .. } => CgroupVersion::V1,
            CgroupHierarchy::V2 { .. } => CgroupVersion::V2,
        }
    }

    /// v1: memory, pids, cpuacct, then cpu where mounted apart; v2: the one directory.
    fn base_dirs(&self) -> Vec<&Path> {
        match self {
            CgroupHierarchy::V1 {
                memory,
                pids,
                cpuacct,
                cpu,
            } => [Some(memory), Some(pids), Some(cpuacct), cpu.as_ref()]
                .into_iter()
                .flatten()
                .map(PathBuf::as_path)
                .collect(),
            CgroupHierarchy::V2 { base } => vec![base],
        }
    }

    /// Creates the base directories (and, on v2, delegates the controllers into them), lifts
    /// any limit found on them, and removes run cgroups left behind by supervisors that no
    /// longer exist.
    pub fn prepare(&self) -> Result<(), CgroupError> {
        if let CgroupHierarchy::V2 { base } = self {
            let parent = base.parent().expect("base has a parent");
            enable_controllers(parent)?;
            fs::create_dir_all(base).map_err(io_err(base))?;
            enable_controllers(base)?;
        }
        for base in self.base_dirs() {
            fs::create_dir_all(base).map_err(io_err(base))?;
            remove_stale_runs(base);
        }
        self.lift_base_limits()
    }

    /// Every run has its own limits; a limit on the base would be shared by all concurrent
    /// runs (a stray `memory.limit_in_bytes` there made parallel runs OOM far below their own
    /// limits), so the base gets none. Order matters on v1: memory+swap is raised first, as it
    /// may never be below the memory limit.
    fn lift_base_limits(&self) -> Result<(), CgroupError> {
        let lifts: Vec<(PathBuf, &str)> = match self {
            CgroupHierarchy::V1 { memory, pids, .. } => vec![
                (memory.join("memory.memsw.limit_in_bytes"), "-1"),
                (memory.join("memory.limit_in_bytes"), "-1"),
                (pids.join("pids.max"), "max"),
            ],
            CgroupHierarchy::V2 { base } => vec![
                (base.join("memory.swap.max"), "max"),
                (base.join("memory.max"), "max"),
                (base.join("pids.max"), "max"),
            ],
        };
        for (path, value) in lifts {
            if path.exists() {
                fs::write(&path, value).map_err(io_err(&path))?;
            }
        }
        Ok(())
    }

    /// Lets run processes join their cgroups without waiting for an RCU grace period.
    ///
    /// Joining a cgroup takes the kernel's global threadgroup lock for writing, and by default
    /// that waits for a grace period: 7–15 ms for one run in twenty on the 2-CPU CI machine,
    /// with the CPU idle meanwhile. A cgroup hierarchy mounted with `favordynmods`
    /// (Linux ≥ 6.0) switches the lock, for as long as that hierarchy exists, to a mode whose
    /// writers never wait, at a small cost to every fork and exit. On v1 a named hierarchy
    /// without controllers carries the option without touching the host's own hierarchies;
    /// it is mounted at `mountpoint` in the caller's private mount namespace, so it goes away
    /// with the last supervisor (meanwhile every process's `/proc/<pid>/cgroup` lists it, at
    /// its root). On v2 the option belongs to the host's one mount, which the sandbox leaves
    /// as configured.
    pub fn favor_dynamic_changes(&self, mountpoint: &Path) -> Result<(), CgroupError> {
        if let CgroupHierarchy::V2 { .. } = self {
            return Ok(());
        }
        let failed = |source| CgroupError::Io {
            path: mountpoint.to_path_buf(),
            source,
        };
        fs::create_dir_all(mountpoint).map_err(failed)?;
        let target = CString::new(mountpoint.as_os_str().as_encoded_bytes())
            .map_err(|e| failed(io::Error::new(io::ErrorKind::InvalidInput, e)))?;
        let data = CString::new(FAVOR_DYNMODS_MOUNT).expect("no NUL");
        // SAFETY: NUL-terminated strings that outlive the call.
        let rc = unsafe {
            libc::mount(
                c"cgroup".as_ptr(),
                target.as_ptr(),
                c"cgroup".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                data.as_ptr().cast(),
            )
        };
        if rc != 0 {
            return Err(failed(io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Creates the (empty, unlimited) cgroup of one run; [`RunCgroup::set_limits`] arms it.
    pub fn create_run(&self, name: &str) -> Result<RunCgroup, CgroupError> {
        let name = format!("{RUN_PREFIX}{name}");
        let mut created = RunCgroup {
            version: self.version(),
            dirs: Vec::new(),
            procs: Vec::new(),
            memory_limit: None,
            pids_limit: None,
            baseline: Counters::default(),
            settled: false,
        };
        for base in self.base_dirs() {
            let path = base.join(&name);
            match fs::create_dir(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    created.remove();
                    return Err(io_err(&path)(e));
                }
            }
            match RunDir::open(path) {
                Ok(dir) => created.dirs.push(dir),
                Err(e) => {
                    created.remove();
                    return Err(e);
                }
            }
        }
        Ok(created)
    }
}

/// Writes `+memory +pids` (and `+cpu` where the parent offers it) into `dir`'s subtree
/// control unless already delegated.
fn enable_controllers(dir: &Path) -> Result<(), CgroupError> {
    let path = dir.join("cgroup.subtree_control");
    let current = fs::read_to_string(&path).unwrap_or_default();
    let offered = fs::read_to_string(dir.join("cgroup.controllers")).unwrap_or_default();
    let optional = ["cpu"]
        .into_iter()
        .filter(|c| offered.split_whitespace().any(|o| o == *c));
    for controller in ["memory", "pids"].into_iter().chain(optional) {
        if current.split_whitespace().any(|c| c == controller) {
            continue;
        }
        fs::write(&path, format!("+{controller}")).map_err(|source| {
            let hint = if source.raw_os_error() == Some(libc::EBUSY) {
                " (cgroup v2 forbids controllers on a cgroup that holds processes: run ulticode \
                 in a delegated cgroup whose processes live in a leaf)"
            } else {
                ""
            };
            CgroupError::Io {
                path: path.clone(),
                source: io::Error::new(source.kind(), format!("{source}{hint}")),
            }
        })?;
    }
    Ok(())
}

/// Removes `run-<pid>-<n>` cgroups whose supervisor `<pid>` is gone.
fn remove_stale_runs(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(RUN_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = fs::remove_dir(entry.path());
        }
    }
}

/// What the kernel counted for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CgroupStats {
    pub cpu_time_us: u64,
    pub peak_memory_bytes: u64,
    pub oom_kills: u64,
    /// The tree's memory reached its limit (peak at the limit, or the kernel counted limit
    /// hits): it ran there reclaiming, even if nothing was OOM-killed.
    pub memory_limit_reached: bool,
    pub fork_refusals: u64,
}

/// The cgroup (one directory per v1 controller, or one v2 directory) of a run: on v1, of one
/// supervisor's runs in turn (see [`RunCgroup::reuse`]).
#[derive(Debug)]
pub struct RunCgroup {
    version: CgroupVersion,
    /// v1: memory, pids, cpuacct; v2: the one directory.
    dirs: Vec<RunDir>,
    /// Each directory's `cgroup.procs`, open for writing (once, at the first run).
    procs: Vec<OwnedFd>,
    /// The memory limit `set_limits` armed (v1 compares the peak with it).
    memory_limit: Option<u64>,
    pids_limit: Option<u32>,
    /// What the kernel had counted before the current run: the counters that cannot be reset
    /// are read relative to it.
    baseline: Counters,
    /// The last run's counters were read after its processes were all gone, so they are final
    /// and the cgroup may serve another run.
    settled: bool,
}

/// Raw cumulative counters of a run cgroup.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counters {
    cpu_time_us: u64,
    /// Page cache still charged when the run started (files the previous runs read first):
    /// not the run's own. (The rest of what is charged then is transient, kernel objects an
    /// RCU grace period has not freed yet and per-CPU charge batches the kernel may hand back
    /// mid-run; subtracting it could count less than the run used.)
    memory_bytes: u64,
    limit_hits: u64,
    oom_kills: u64,
    fork_refusals: u64,
}

/// One directory of a run cgroup, kept open: its files are opened relative to it, a one-name
/// lookup instead of a walk down the whole cgroupfs path on every read of every run. Files it
/// reads stay open too (the directory serves many runs), each read one `pread` from the start.
#[derive(Debug)]
struct RunDir {
    path: PathBuf,
    fd: OwnedFd,
    readers: std::cell::RefCell<Vec<(&'static str, fs::File)>>,
}

impl RunDir {
    fn open(path: PathBuf) -> Result<Self, CgroupError> {
        let fd = open_at(libc::AT_FDCWD, &path, libc::O_PATH | libc::O_DIRECTORY)
            .map_err(io_err(&path))?;
        Ok(Self {
            path,
            fd,
            readers: Default::default(),
        })
    }

    fn open_file(&self, name: &str, flags: libc::c_int) -> Result<fs::File, CgroupError> {
        open_at(self.fd.as_raw_fd(), Path::new(name), flags)
            .map(fs::File::from)
            .map_err(|source| CgroupError::Io {
                path: self.path.join(name),
                source,
            })
    }

    /// Writes `value` into `name`, creating it only where plain directories stand in for
    /// cgroupfs (tests); cgroupfs refuses to create files, so a missing one stays an error.
    fn write(&self, name: &str, value: &str) -> Result<(), CgroupError> {
        let mut file = self.open_file(name, libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC)?;
        file.write_all(value.as_bytes())
            .map_err(io_err(&self.path.join(name)))
    }

    /// Like [`RunDir::write`] for a file the kernel may not have (swap accounting off), which
    /// is then left alone.
    fn write_if_present(&self, name: &str, value: &str) -> Result<(), CgroupError> {
        match self.open_file(name, libc::O_WRONLY | libc::O_TRUNC) {
            Ok(mut file) => file
                .write_all(value.as_bytes())
                .map_err(io_err(&self.path.join(name))),
            Err(CgroupError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    fn read(&self, name: &'static str) -> Result<String, CgroupError> {
        use std::os::unix::fs::FileExt;
        let mut readers = self.readers.borrow_mut();
        let index = match readers.iter().position(|(open, _)| *open == name) {
            Some(index) => index,
            None => {
                readers.push((name, self.open_file(name, libc::O_RDONLY)?));
                readers.len() - 1
            }
        };
        let file = &readers[index].1;
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let n = file
                .read_at(&mut chunk, bytes.len() as u64)
                .map_err(io_err(&self.path.join(name)))?;
            bytes.extend_from_slice(&chunk[..n]);
            // A cgroup file is generated whole: a read that does not fill the buffer got the
            // rest of it.
            if n < chunk.len() {
                break;
            }
        }
        String::from_utf8(bytes).map_err(|e| CgroupError::Parse {
            path: self.path.join(name),
            content: String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    fn read_u64(&self, name: &'static str) -> Result<u64, CgroupError> {
        let text = self.read(name)?;
        text.trim().parse().map_err(|_| CgroupError::Parse {
            path: self.path.join(name),
            content: text,
        })
    }

    /// Reads `key value` from a flat-keyed cgroup file; a missing key counts as 0.
    fn keyed_value(&self, name: &'static str, key: &str) -> Result<u64, CgroupError> {
        self.value_in(name, &self.read(name)?, key)
    }

    /// `key`'s value in `text`, read from `name`; a missing key counts as 0.
    fn value_in(&self, name: &str, text: &str, key: &str) -> Result<u64, CgroupError> {
        for line in text.lines() {
            let mut parts = line.split_whitespace();
            if parts.next() == Some(key) {
                return parts.next().and_then(|v| v.parse().ok()).ok_or_else(|| {
                    CgroupError::Parse {
                        path: self.path.join(name),
                        content: text.to_string(),
                    }
                });
            }
        }
        Ok(0)
    }
}

fn open_at(dir: RawFd, path: &Path, flags: libc::c_int) -> io::Result<OwnedFd> {
    let path = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: a NUL-terminated path; the returned descriptor is owned from here on.
    let fd = unsafe { libc::openat(dir, path.as_ptr(), flags | libc::O_CLOEXEC, 0o644) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

impl RunCgroup {
    /// v1 keeps each controller in its own directory; v2 has the one.
    fn dir(&self, index_v1: usize) -> &RunDir {
        match self.version {
            CgroupVersion::V1 => &self.dirs[index_v1],
            CgroupVersion::V2 => &self.dirs[0],
        }
    }

    /// Applies the memory (swap included) and pids limits (on a reused cgroup, only where they
    /// differ from the last run's).
    pub fn set_limits(&mut self, memory_bytes: u64, pids: u32) -> Result<(), CgroupError> {
        if self.memory_limit == Some(memory_bytes) && self.pids_limit == Some(pids) {
            return Ok(());
        }
        // Not armed until every write below succeeded (a failure leaves the cgroup unusable).
        let previous = self.memory_limit.take();
        self.pids_limit = None;
        let memory = memory_bytes.to_string();
        match self.version {
            CgroupVersion::V1 => {
                // Swap is off when memory+swap may not exceed memory. The kernel keeps memory
                // at or below memory+swap at every step, so a raise writes memory+swap first.
                let dir = self.dir(0);
                let memory_alone = || dir.write("memory.limit_in_bytes", &memory);
                let with_swap = || dir.write_if_present("memory.memsw.limit_in_bytes", &memory);
                if previous.is_some_and(|previous| previous < memory_bytes) {
                    with_swap()?;
                    memory_alone()?;
                } else {
                    memory_alone()?;
                    with_swap()?;
                }
                if previous.is_none() {
                    dir.write("memory.swappiness", "0")?;
                }
                self.dir(1).write("pids.max", &pids.to_string())?;
            }
            CgroupVersion::V2 => {
                self.dir(0).write("memory.max", &memory)?;
                self.dir(0).write_if_present("memory.swap.max", "0")?;
                // One OOM kills the whole run, never half of it.
                self.dir(0).write("memory.oom.group", "1")?;
                self.dir(0).write("pids.max", &pids.to_string())?;
            }
        }
        self.memory_limit = Some(memory_bytes);
        self.pids_limit = Some(pids);
        Ok(())
    }

    /// The `cgroup.procs` files, open for writing: a process writes `0` into each to join
    /// this run's cgroup.
    pub fn procs(&mut self) -> Result<Vec<RawFd>, CgroupError> {
        if self.procs.is_empty() {
            self.procs = self
                .dirs
                .iter()
                .map(|dir| {
                    dir.open_file("cgroup.procs", libc::O_WRONLY)
                        .map(OwnedFd::from)
                })
                .collect::<Result<_, _>>()?;
        }
        Ok(self.procs.iter().map(AsRawFd::as_raw_fd).collect())
    }

    /// Whether [`RunCgroup::reuse`] may be called: v1 (whose peak can be reset), after a run
    /// whose processes were all gone when its counters were read.
    pub fn reusable(&self) -> bool {
        self.version == CgroupVersion::V1 && self.settled
    }

    /// Readies a settled v1 cgroup for the next run: its peak is reset (to what is still
    /// charged), the page cache still charged becomes the memory baseline, and the last run's
    /// final counters become the baseline of the others. Nothing is left of the last run's
    /// limits that the next `set_limits` does not set again, and no process can be left in it:
    /// the last run's were all reaped before its counters were read.
    ///
    /// Tmpfs pages the last run wrote (its `/tmp`, its writable directories) stay charged
    /// until its mount namespace is gone; `settle` waits for that, and is called only when
    /// there are such pages, so the baseline never counts memory freed mid-run.
    pub fn reuse(&mut self, settle: impl FnOnce()) -> Result<(), CgroupError> {
        debug_assert!(self.reusable());
        self.settled = false;
        let memory = self.dir(0);
        let mut stat = memory.read("memory.stat")?;
        if memory.value_in("memory.stat", &stat, "shmem")? > 0 {
            settle();
            stat = memory.read("memory.stat")?;
        }
        memory.write("memory.max_usage_in_bytes", "0")?;
        self.baseline.memory_bytes = memory.value_in("memory.stat", &stat, "cache")?;
        Ok(())
    }

    fn raw_cpu_time_us(&self) -> Result<u64, CgroupError> {
        match self.version {
            CgroupVersion::V1 => Ok(self.dir(2).read_u64("cpuacct.usage")? / 1_000),
            CgroupVersion::V2 => self.dir(0).keyed_value("cpu.stat", "usage_usec"),
        }
    }

    /// CPU time of the whole tree so far, in microseconds.
    pub fn cpu_time_us(&self) -> Result<u64, CgroupError> {
        Ok(self
            .raw_cpu_time_us()?
            .saturating_sub(self.baseline.cpu_time_us))
    }

    /// The processes in the run's cgroup (their pids in the supervisor's namespace).
    pub fn processes(&self) -> Result<Vec<libc::pid_t>, CgroupError> {
        Ok(self
            .dir(0)
            .read("cgroup.procs")?
            .lines()
            .filter_map(|line| line.trim().parse().ok())
            .collect())
    }

    /// Peak memory of the whole tree so far, beyond what was charged when the run started.
    pub fn peak_memory_bytes(&self) -> Result<u64, CgroupError> {
        let peak = match self.version {
            CgroupVersion::V1 => self.dir(0).read_u64("memory.max_usage_in_bytes")?,
            CgroupVersion::V2 => self.dir(0).read_u64("memory.peak")?,
        };
        Ok(peak.saturating_sub(self.baseline.memory_bytes))
    }

    /// What the kernel counted for the run. Called once its processes are all gone, so the
    /// counters are final: a v1 cgroup becomes [`RunCgroup::reusable`].
    pub fn stats(&mut self) -> Result<CgroupStats, CgroupError> {
        let raw_cpu_time_us = self.raw_cpu_time_us()?;
        let cpu_time_us = raw_cpu_time_us.saturating_sub(self.baseline.cpu_time_us);
        let memory = self.dir(0);
        Ok(match self.version {
            CgroupVersion::V1 => {
                // v1 kernels do not reliably count limit hits in `memory.failcnt` when the
                // memory+swap limit equals the memory limit, so the peak decides too.
                let peak = memory.read_u64("memory.max_usage_in_bytes")?;
                let limit = match self.memory_limit {
                    Some(limit) => limit,
                    None => memory.read_u64("memory.limit_in_bytes")?,
                };
                let counted = Counters {
                    cpu_time_us: raw_cpu_time_us,
                    memory_bytes: self.baseline.memory_bytes,
                    limit_hits: memory.read_u64("memory.failcnt")?,
                    oom_kills: memory.keyed_value("memory.oom_control", "oom_kill")?,
                    fork_refusals: self.dir(1).keyed_value("pids.events", "max")?,
                };
                let since = |now: u64, before: u64| now.saturating_sub(before);
                let stats = CgroupStats {
                    cpu_time_us,
                    peak_memory_bytes: since(peak, self.baseline.memory_bytes),
                    oom_kills: since(counted.oom_kills, self.baseline.oom_kills),
                    memory_limit_reached: since(counted.limit_hits, self.baseline.limit_hits) > 0
                        || peak >= limit,
                    fork_refusals: since(counted.fork_refusals, self.baseline.fork_refusals),
                };
                self.baseline = counted;
                self.settled = true;
                stats
            }
            CgroupVersion::V2 => {
                let events = |key| memory.keyed_value("memory.events", key);
                CgroupStats {
                    cpu_time_us,
                    peak_memory_bytes: memory.read_u64("memory.peak")?,
                    oom_kills: events("oom_kill")?,
                    memory_limit_reached: events("max")? > 0,
                    fork_refusals: memory.keyed_value("pids.events", "max")?,
                }
            }
        })
    }

    /// Removes the directories. The run's processes are all dead by now; a busy directory is
    /// retried briefly because the kernel releases exited tasks asynchronously.
    pub fn remove(&self) {
        for dir in &self.dirs {
            for _ in 0..100 {
                match fs::remove_dir(&dir.path) {
                    Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                        std::thread::sleep(std::time::Duration::from_micros(200))
                    }
                    _ => break,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const THIS_MACHINE_MOUNTINFO: &str = "\
30 25 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755
31 30 0:27 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
32 30 0:28 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
33 30 0:29 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
34 30 0:30 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
35 30 0:31 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const THIS_MACHINE_CGROUP: &str = "\
8:pids:/
4:memory:/process_api/abc
2:cpuacct:/
1:cpu:/
0::/
";

    #[test]
    fn v1_is_chosen_when_v2_has_no_controllers() {
        // The v2 mount's cgroup.controllers does not exist at this fake path, so it offers none.
        let got = CgroupHierarchy::from_proc(
            &THIS_MACHINE_MOUNTINFO.replace("/sys/fs/cgroup/unified", "/nonexistent/unified"),
            THIS_MACHINE_CGROUP,
        )
        .unwrap();
        assert_eq!(
            got,
            CgroupHierarchy::V1 {
                memory: "/sys/fs/cgroup/memory/process_api/abc/ulticode-sandbox".into(),
                pids: "/sys/fs/cgroup/pids/ulticode-sandbox".into(),
                cpuacct: "/sys/fs/cgroup/cpuacct/ulticode-sandbox".into(),
                cpu: Some("/sys/fs/cgroup/cpu/ulticode-sandbox".into()),
            }
        );
    }

    #[test]
    fn co_mounted_and_rooted_v1_mounts_resolve() {
        let mountinfo = "\
40 30 0:40 /docker/x /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct
41 30 0:41 /docker/x /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
42 30 0:42 /docker/x /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids
";
        let own = "3:cpu,cpuacct:/docker/x/job\n2:memory:/docker/x\n1:pids:/docker/x\n";
        let got = CgroupHierarchy::from_proc(mountinfo, own).unwrap();
        assert_eq!(
            got,
            CgroupHierarchy::V1 {
                memory: "/sys/fs/cgroup/memory/ulticode-sandbox".into(),
                pids: "/sys/fs/cgroup/pids/ulticode-sandbox".into(),
                cpuacct: "/sys/fs/cgroup/cpu,cpuacct/job/ulticode-sandbox".into(),
                cpu: None,
            }
        );
    }

    #[test]
    fn missing_controllers_are_named() {
        let err = CgroupHierarchy::from_proc(
            "33 30 0:29 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
            "4:memory:/\n",
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("pids, cpuacct"), "{text}");
    }

    #[test]
    fn mountinfo_escapes_are_decoded() {
        assert_eq!(unescape_mount_field(r"/a\040b"), "/a b");
        assert_eq!(unescape_mount_field("/plain"), "/plain");
    }

    /// A fake cgroup2 tree: the v2 code path, end to end, against plain files.
    #[test]
    fn v2_path_against_a_fake_cgroupfs() {
        let root = tempfile::tempdir().unwrap();
        let own = root.path().join("system.slice/judge.service");
        fs::create_dir_all(&own).unwrap();
        fs::write(own.join("cgroup.controllers"), "cpu io memory pids\n").unwrap();
        fs::write(own.join("cgroup.subtree_control"), "").unwrap();
        let mountinfo = format!(
            "35 30 0:31 / {} rw,relatime - cgroup2 cgroup2 rw\n",
            root.path().display()
        );
        let hierarchy =
            CgroupHierarchy::from_proc(&mountinfo, "0::/system.slice/judge.service\n").unwrap();
        let base = own.join("ulticode-sandbox");
        assert_eq!(hierarchy, CgroupHierarchy::V2 { base: base.clone() });

        hierarchy.prepare().unwrap();
        assert_eq!(
            fs::read_to_string(own.join("cgroup.subtree_control")).unwrap(),
            "+cpu",
            "the last controller written (a fake file keeps only the last write; cpu is \
             delegated because the parent offers it)"
        );
        // A stale run of a dead supervisor is removed; a live one's is kept.
        let stale = base.join("run-999999999-1");
        let live = base.join(format!("run-{}-1", std::process::id()));
        fs::create_dir_all(&stale).unwrap();
        fs::create_dir_all(&live).unwrap();
        hierarchy.prepare().unwrap();
        assert!(!stale.exists());
        assert!(live.exists());

        let mut run = hierarchy.create_run("7-1").unwrap();
        run.set_limits(64 << 20, 32).unwrap();
        let dir = base.join("run-7-1");
        assert_eq!(
            fs::read_to_string(dir.join("memory.max")).unwrap(),
            "67108864"
        );
        assert_eq!(fs::read_to_string(dir.join("pids.max")).unwrap(), "32");
        assert_eq!(
            fs::read_to_string(dir.join("memory.oom.group")).unwrap(),
            "1"
        );
        fs::write(dir.join("cgroup.procs"), "").unwrap();
        assert_eq!(run.procs().unwrap().len(), 1);

        fs::write(
            dir.join("cpu.stat"),
            "usage_usec 512345\nuser_usec 500000\n",
        )
        .unwrap();
        fs::write(dir.join("memory.peak"), "104857600\n").unwrap();
        fs::write(
            dir.join("memory.events"),
            "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 1\n",
        )
        .unwrap();
        fs::write(dir.join("pids.events"), "max 4\n").unwrap();
        assert_eq!(
            run.stats().unwrap(),
            CgroupStats {
                cpu_time_us: 512_345,
                peak_memory_bytes: 104_857_600,
                oom_kills: 1,
                memory_limit_reached: true,
                fork_refusals: 4,
            }
        );
    }

    #[test]
    fn preparing_lifts_limits_left_on_the_base() {
        let root = tempfile::tempdir().unwrap();
        let hierarchy = CgroupHierarchy::V1 {
            memory: root.path().join("memory"),
            pids: root.path().join("pids"),
            cpuacct: root.path().join("cpuacct"),
            cpu: None,
        };
        for dir in ["memory", "pids"] {
            fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        let limit = root.path().join("memory/memory.limit_in_bytes");
        let memsw = root.path().join("memory/memory.memsw.limit_in_bytes");
        let pids = root.path().join("pids/pids.max");
        fs::write(&limit, "268435456").unwrap();
        fs::write(&memsw, "268435456").unwrap();
        fs::write(&pids, "64").unwrap();
        hierarchy.prepare().unwrap();
        assert_eq!(fs::read_to_string(&limit).unwrap(), "-1");
        assert_eq!(fs::read_to_string(&memsw).unwrap(), "-1");
        assert_eq!(fs::read_to_string(&pids).unwrap(), "max");
    }

    #[test]
    fn swap_is_limited_only_where_the_kernel_accounts_it() {
        let root = tempfile::tempdir().unwrap();
        let hierarchy = CgroupHierarchy::V1 {
            memory: root.path().join("memory"),
            pids: root.path().join("pids"),
            cpuacct: root.path().join("cpuacct"),
            cpu: None,
        };
        hierarchy.prepare().unwrap();
        let memsw = |run: &str| {
            root.path()
                .join(format!("memory/run-{run}/memory.memsw.limit_in_bytes"))
        };

        hierarchy
            .create_run("1-1")
            .unwrap()
            .set_limits(64 << 20, 8)
            .unwrap();
        assert!(
            !memsw("1-1").exists(),
            "no swap accounting: nothing is created"
        );

        let mut accounted = hierarchy.create_run("1-2").unwrap();
        fs::write(memsw("1-2"), "9223372036854771712").unwrap();
        accounted.set_limits(64 << 20, 8).unwrap();
        assert_eq!(fs::read_to_string(memsw("1-2")).unwrap(), "67108864");
    }

    /// A v1 hierarchy of plain directories with run `1-1` made and armed (128 MiB, 16 pids).
    fn fake_v1_run() -> (tempfile::TempDir, RunCgroup) {
        let root = tempfile::tempdir().unwrap();
        let hierarchy = CgroupHierarchy::V1 {
            memory: root.path().join("memory"),
            pids: root.path().join("pids"),
            cpuacct: root.path().join("cpuacct"),
            cpu: None,
        };
        hierarchy.prepare().unwrap();
        let mut run = hierarchy.create_run("1-1").unwrap();
        run.set_limits(128 << 20, 16).unwrap();
        (root, run)
    }

    #[test]
    fn v1_stats_parse_from_their_files() {
        let (root, mut run) = fake_v1_run();
        let memory = root.path().join("memory/run-1-1");
        assert_eq!(
            fs::read_to_string(memory.join("memory.limit_in_bytes")).unwrap(),
            "134217728"
        );
        fs::write(
            root.path().join("cpuacct/run-1-1/cpuacct.usage"),
            "2500000000\n",
        )
        .unwrap();
        fs::write(memory.join("memory.max_usage_in_bytes"), "1048576\n").unwrap();
        fs::write(
            memory.join("memory.oom_control"),
            "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
        )
        .unwrap();
        fs::write(memory.join("memory.failcnt"), "0\n").unwrap();
        fs::write(root.path().join("pids/run-1-1/pids.events"), "max 0\n").unwrap();
        assert_eq!(
            run.stats().unwrap(),
            CgroupStats {
                cpu_time_us: 2_500_000,
                peak_memory_bytes: 1_048_576,
                oom_kills: 2,
                memory_limit_reached: false,
                fork_refusals: 0,
            }
        );
        // A peak at the limit means the tree ran at it, whatever failcnt says.
        fs::write(memory.join("memory.max_usage_in_bytes"), "134217728\n").unwrap();
        assert!(run.stats().unwrap().memory_limit_reached);
    }

    /// A reused cgroup reports each run's own: the final counters of the last run are its
    /// baseline, and the page cache left charged (once the last run's tmpfs is gone) is not
    /// counted in the peak.
    #[test]
    fn a_reused_v1_cgroup_counts_only_each_runs_own() {
        let (root, mut run) = fake_v1_run();
        let memory = root.path().join("memory/run-1-1");
        let write = |path: std::path::PathBuf, text: &str| fs::write(path, text).unwrap();
        let counters = |cpu_ns: &str, peak: &str, oom_kills: &str, refusals: &str| {
            write(root.path().join("cpuacct/run-1-1/cpuacct.usage"), cpu_ns);
            write(memory.join("memory.max_usage_in_bytes"), peak);
            write(
                memory.join("memory.oom_control"),
                &format!("oom_kill_disable 0\nunder_oom 0\noom_kill {oom_kills}\n"),
            );
            write(memory.join("memory.failcnt"), "0\n");
            write(
                root.path().join("pids/run-1-1/pids.events"),
                &format!("max {refusals}\n"),
            );
        };
        assert!(!run.reusable(), "no run's counters were read yet");
        counters("2500000000\n", "10485760\n", "1", "3");
        run.stats().unwrap();
        assert!(run.reusable());

        // The last run left 8 MiB in its /tmp: the reset waits until its namespace is gone.
        write(
            memory.join("memory.stat"),
            "cache 9437184\nrss 0\nshmem 8388608\n",
        );
        let mut settled = false;
        run.reuse(|| {
            settled = true;
            write(
                memory.join("memory.stat"),
                "cache 1048576\nrss 0\nshmem 0\n",
            );
        })
        .unwrap();
        assert!(settled);
        assert!(
            !run.reusable(),
            "a reused cgroup waits for its run's counters"
        );
        assert_eq!(
            fs::read_to_string(memory.join("memory.max_usage_in_bytes")).unwrap(),
            "0",
            "the peak is reset"
        );
        counters("3000000000\n", "3145728\n", "1", "4");
        assert_eq!(
            run.stats().unwrap(),
            CgroupStats {
                cpu_time_us: 500_000,
                peak_memory_bytes: 2 << 20,
                oom_kills: 0,
                memory_limit_reached: false,
                fork_refusals: 1,
            }
        );
        // Nothing in tmpfs: nothing to wait for.
        run.reuse(|| panic!("waited for nothing")).unwrap();
        // Limits are armed again only where they change.
        write(memory.join("memory.limit_in_bytes"), "untouched");
        run.set_limits(128 << 20, 16).unwrap();
        assert_eq!(
            fs::read_to_string(memory.join("memory.limit_in_bytes")).unwrap(),
            "untouched"
        );
        run.set_limits(256 << 20, 16).unwrap();
        assert_eq!(
            fs::read_to_string(memory.join("memory.limit_in_bytes")).unwrap(),
            "268435456"
        );
    }
}
