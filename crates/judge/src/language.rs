//! Programming languages: how to compile and run each one in the sandbox, and which ones this
//! machine really has.
//!
//! The defaults cover C, C++17, C++20, Python 3, PyPy 3, Java, JavaScript (Node), Rust and Go,
//! and the rest of the package format's language list (`catalog`).
//! A JSON file can replace or add entries. At start-up every configured language is probed by
//! running its version command *inside the sandbox* (with its own binds and profile): a
//! language is available only if that works, and an unavailable one carries the reason.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use sandbox::{Bind, Limits, Profile, RunSpec, Sandbox, Status};

/// How to build and run programs of one language.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LanguageConfig {
    /// Stable identifier (`cpp17`).
    pub id: String,
    /// Display name (`C++17 (GCC)`).
    pub name: String,
    /// File name the source is stored under in `/job` (`Main.java` for Java).
    pub source_file: String,
    /// Compile command, run in `/job` with the job directory writable; `None` for languages
    /// without a build step.
    #[serde(default)]
    pub compile: Option<Vec<String>>,
    /// The compile step only checks the source (its syntax) and makes nothing the run needs:
    /// running programs without judging may skip it (the run reports the same errors).
    #[serde(default)]
    pub compile_checks_only: bool,
    /// Run command. `{memory_mib}` is replaced by the memory limit of the run; `{entry}`,
    /// `{main_class}` and `{sources}` (here and in `compile`) by the program's files
    /// (see `program`).
    pub run: Vec<String>,
    /// Prints the version (first non-empty line of stdout or stderr).
    pub version: Vec<String>,
    pub profile: Profile,
    #[serde(default)]
    pub compile_limits: CompileLimits,
    /// Processes and threads a program may have (runtimes with thread pools need more).
    #[serde(default = "default_run_pids")]
    pub run_pids: u32,
    /// Memory the runtime itself needs on top of the problem's limit (the JVM's metaspace,
    /// code cache and threads), added to the cgroup limit.
    #[serde(default)]
    pub memory_overhead_mib: u64,
    /// Environment for compiling and running.
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// Toolchain directories outside `/usr`, bound read-only.
    #[serde(default)]
    pub binds: Vec<Bind>,
}

fn default_run_pids() -> u32 {
    16
}

/// Limits of a compilation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CompileLimits {
    pub cpu_time_ms: u64,
    pub memory_mib: u64,
    pub pids: u32,
    /// Compiler output kept for the user.
    pub output_bytes: u64,
}

impl Default for CompileLimits {
    fn default() -> Self {
        Self {
            cpu_time_ms: 30_000,
            memory_mib: 1024,
            pids: 64,
            output_bytes: 64 * 1024,
        }
    }
}

impl CompileLimits {
    pub fn to_sandbox(self) -> Limits {
        Limits {
            cpu_time_ms: self.cpu_time_ms,
            wall_time_ms: self.cpu_time_ms * 2 + 5_000,
            memory_bytes: self.memory_mib << 20,
            pids: self.pids,
            output_bytes: self.output_bytes,
            stderr_bytes: self.output_bytes,
            tmp_bytes: 256 << 20,
            tmp_inodes: 16_384,
            ..Limits::default()
        }
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

pub(crate) fn language(
    id: &str,
    name: &str,
    source_file: &str,
    compile: Option<&[&str]>,
    run: &[&str],
    version: &[&str],
    profile: Profile,
) -> LanguageConfig {
    LanguageConfig {
        id: id.into(),
        name: name.into(),
        source_file: source_file.into(),
        compile: compile.map(strings),
        compile_checks_only: false,
        run: strings(run),
        version: strings(version),
        profile,
        compile_limits: CompileLimits::default(),
        run_pids: default_run_pids(),
        memory_overhead_mib: 0,
        env: Vec::new(),
        binds: Vec::new(),
    }
}

/// The built-in languages. Rust's toolchain is found through `rustc --print sysroot` on the
/// host (rustup keeps it outside `/usr`) and bound at `/opt/rust`.
pub fn default_languages() -> Vec<LanguageConfig> {
    let gcc = |std: &str| {
        vec![
            "/usr/bin/gcc".to_string(),
            format!("-std={std}"),
            "-O2".into(),
            "-pipe".into(),
            "-o".into(),
            "/job/main".into(),
            "{sources}".into(),
            "-lm".into(),
        ]
    };
    let gpp = |std: &str| {
        vec![
            "/usr/bin/g++".to_string(),
            format!("-std={std}"),
            "-O2".into(),
            "-pipe".into(),
            "-o".into(),
            "/job/main".into(),
            "{sources}".into(),
        ]
    };
    let mut c = language(
        "c",
        "C (GCC)",
        "main.c",
        None,
        &["/job/main"],
        &["/usr/bin/gcc", "--version"],
        Profile::Native,
    );
    c.compile = Some(gcc("gnu17"));
    let mut cpp17 = language(
        "cpp17",
        "C++17 (G++)",
        "main.cpp",
        None,
        &["/job/main"],
        &["/usr/bin/g++", "--version"],
        Profile::Native,
    );
    cpp17.compile = Some(gpp("gnu++17"));
    let mut cpp20 = language(
        "cpp20",
        "C++20 (G++)",
        "main.cpp",
        None,
        &["/job/main"],
        &["/usr/bin/g++", "--version"],
        Profile::Native,
    );
    cpp20.compile = Some(gpp("gnu++20"));
    let py_check = "import py_compile, sys; py_compile.compile(sys.argv[1], cfile='/tmp/main.pyc', doraise=True)";
    let mut python3 = language(
        "python3",
        "Python 3",
        "main.py",
        Some(&["/usr/bin/python3", "-c", py_check, "{entry}"]),
        &["/usr/bin/python3", "-B", "{entry}"],
        &["/usr/bin/python3", "--version"],
        Profile::Python,
    );
    let mut pypy3 = language(
        "pypy3",
        "PyPy 3",
        "main.py",
        Some(&["/usr/bin/pypy3", "-c", py_check, "{entry}"]),
        &["/usr/bin/pypy3", "{entry}"],
        &["/usr/bin/pypy3", "--version"],
        Profile::Python,
    );
    python3.compile_checks_only = true;
    pypy3.compile_checks_only = true;
    let mut java = language(
        "java",
        "Java 17",
        "Main.java",
        Some(&[
            "/usr/bin/javac",
            "-J-Xss64m",
            "-encoding",
            "UTF-8",
            "-d",
            "/job",
            "{sources}",
        ]),
        &[
            "/usr/bin/java",
            "-Xmx{memory_mib}m",
            "-Xss64m",
            "-XX:+UseSerialGC",
            "-XX:-UsePerfData",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            "/job",
            "{main_class}",
        ],
        &["/usr/bin/java", "-version"],
        Profile::Jvm,
    );
    java.compile_limits.memory_mib = 2048;
    java.run_pids = 64;
    java.memory_overhead_mib = 256;
    let mut javascript = language(
        "javascript",
        "JavaScript (Node.js)",
        "main.js",
        Some(&["/usr/bin/node", "--check", "{entry}"]),
        &[
            "/usr/bin/node",
            "--max-old-space-size={memory_mib}",
            "--stack-size=65500",
            "{entry}",
        ],
        &["/usr/bin/node", "--version"],
        Profile::Node,
    );
    javascript.run_pids = 32;
    javascript.compile_checks_only = true;
    javascript.memory_overhead_mib = 64;
    let mut go = language(
        "go",
        "Go",
        "main.go",
        Some(&["/usr/bin/go", "build", "-o", "/job/main", "{sources}"]),
        &["/job/main"],
        &["/usr/bin/go", "version"],
        Profile::Native,
    );
    go.env = vec![
        ("GOCACHE".into(), "/tmp/gocache".into()),
        ("GOPATH".into(), "/tmp/gopath".into()),
        ("CGO_ENABLED".into(), "0".into()),
        ("GOFLAGS".into(), "-buildvcs=false".into()),
    ];
    go.compile_limits.pids = 128;
    go.run_pids = 64;
    let mut rust = language(
        "rust",
        "Rust",
        "main.rs",
        Some(&[
            "/opt/rust/bin/rustc",
            "--edition=2021",
            "-O",
            "-o",
            "/job/main",
            "{entry}",
        ]),
        &["/job/main"],
        &["/opt/rust/bin/rustc", "--version"],
        Profile::Native,
    );
    rust.binds = rust_sysroot()
        .map(|sysroot| vec![Bind::read_only(sysroot, "/opt/rust")])
        .unwrap_or_default();
    let mut all = vec![c, cpp17, cpp20, python3, pypy3, java, javascript, rust, go];
    all.extend(crate::catalog::more_languages());
    all
}

/// How a package's program given as POSIX `build`/`run` scripts is made and run: `build` (if
/// present) runs in the job directory, which is writable then, and `run` is the program. The
/// scripts may use `python3`, `cc` and `c++` (the format's promise), so they get the
/// interpreters' profile and room for compilers.
pub fn scripts_language() -> Language {
    let mut config = language(
        crate::package::SCRIPTS,
        "build/run scripts",
        "run",
        Some(&[
            "/bin/sh",
            "-c",
            "cd /job && if [ -f build ]; then chmod +x build && ./build; fi && chmod +x run",
        ]),
        &["/job/run"],
        &["/bin/sh", "-c", "echo POSIX sh"],
        Profile::Python,
    );
    config.compile_limits.pids = 128;
    config.run_pids = 64;
    Language {
        config,
        version: "POSIX sh".into(),
    }
}

/// The active Rust toolchain of the host (where rustup installed it).
fn rust_sysroot() -> Option<PathBuf> {
    let output = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    (output.status.success() && path.join("bin/rustc").is_file()).then_some(path)
}

/// A language that works here.
#[derive(Debug, Clone, Serialize)]
pub struct Language {
    #[serde(flatten)]
    pub config: LanguageConfig,
    /// What the version command printed.
    pub version: String,
}

/// A configured language that does not work here, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unavailable {
    pub id: String,
    pub name: String,
    pub reason: String,
}

/// The languages of this machine.
#[derive(Debug, Clone, Serialize)]
pub struct Languages {
    pub available: Vec<Language>,
    pub unavailable: Vec<Unavailable>,
}

impl Languages {
    /// Probes each configured language in the sandbox.
    pub fn detect(sandbox: &dyn Sandbox, configs: Vec<LanguageConfig>) -> Languages {
        let mut available = Vec::new();
        let mut unavailable = Vec::new();
        for config in configs {
            match probe(sandbox, &config) {
                Ok(version) => available.push(Language { config, version }),
                Err(reason) => unavailable.push(Unavailable {
                    id: config.id.clone(),
                    name: config.name.clone(),
                    reason,
                }),
            }
        }
        Languages {
            available,
            unavailable,
        }
    }

    pub fn get(&self, id: &str) -> Option<&Language> {
        self.available.iter().find(|l| l.config.id == id)
    }

    /// Why `id` cannot be used: unavailable here, or not configured at all.
    pub fn why_not(&self, id: &str) -> String {
        match self.unavailable.iter().find(|u| u.id == id) {
            Some(u) => format!("{} is unavailable: {}", u.name, u.reason),
            None => {
                let known: Vec<&str> = self
                    .available
                    .iter()
                    .map(|l| l.config.id.as_str())
                    .collect();
                format!("unknown language {id:?}; available: {}", known.join(", "))
            }
        }
    }
}

/// Reads a language file: a JSON list of entries that replace built-ins with the same id or
/// add new ones.
pub fn load_overrides(
    path: &Path,
    mut configs: Vec<LanguageConfig>,
) -> Result<Vec<LanguageConfig>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let overrides: Vec<LanguageConfig> =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    for entry in overrides {
        match configs.iter_mut().find(|c| c.id == entry.id) {
            Some(existing) => *existing = entry,
            None => configs.push(entry),
        }
    }
    Ok(configs)
}

/// Maps a program path inside the sandbox to the host path that provides it.
fn host_path(config: &LanguageConfig, inside: &Path) -> PathBuf {
    for bind in &config.binds {
        if let Ok(rest) = inside.strip_prefix(&bind.target) {
            return bind.source.join(rest);
        }
    }
    inside.to_path_buf()
}

fn probe(sandbox: &dyn Sandbox, config: &LanguageConfig) -> Result<String, String> {
    for bind in &config.binds {
        if !bind.source.exists() {
            return Err(format!(
                "toolchain directory {} not found",
                bind.source.display()
            ));
        }
    }
    let programs = config
        .compile
        .iter()
        .chain([&config.run, &config.version])
        .filter_map(|command| command.first())
        .filter(|program| program.starts_with('/') && !program.starts_with("/job/"));
    for program in programs {
        let host = host_path(config, Path::new(program));
        if !host.exists() {
            return Err(format!("{} not found", host.display()));
        }
    }
    let (program, args) = config
        .version
        .split_first()
        .ok_or_else(|| "no version command configured".to_string())?;
    let mut spec = RunSpec::new(program.clone())
        .args(args.iter().cloned())
        .profile(config.profile)
        .limits(config.compile_limits.to_sandbox());
    spec.binds = config.binds.clone();
    spec.env = config.env.clone();
    let outcome = sandbox.run(&spec).map_err(|e| e.to_string())?;
    let text = |bytes: &[u8]| {
        String::from_utf8_lossy(bytes)
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_string)
    };
    if outcome.status != Status::Ok {
        return Err(format!(
            "version check ended as {}: {}",
            outcome.status,
            text(&outcome.stderr)
                .or(outcome.message.clone())
                .unwrap_or_default()
        ));
    }
    text(&outcome.stdout)
        .or_else(|| text(&outcome.stderr))
        .ok_or_else(|| "version check printed nothing".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_cover_the_required_languages() {
        let ids: Vec<String> = default_languages().into_iter().map(|l| l.id).collect();
        for id in [
            "c",
            "cpp17",
            "cpp20",
            "python3",
            "pypy3",
            "java",
            "javascript",
            "rust",
            "go",
        ] {
            assert!(ids.contains(&id.to_string()), "{id} missing");
        }
    }

    #[test]
    fn overrides_replace_by_id_and_add_new_entries() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let mut changed = default_languages().remove(0);
        changed.name = "C (custom)".into();
        let mut added = changed.clone();
        added.id = "c99".into();
        std::fs::write(
            file.path(),
            serde_json::to_string(&vec![changed, added]).unwrap(),
        )
        .unwrap();
        let merged = load_overrides(file.path(), default_languages()).unwrap();
        assert_eq!(merged[0].name, "C (custom)");
        assert_eq!(merged.last().unwrap().id, "c99");
        assert_eq!(merged.len(), default_languages().len() + 1);

        std::fs::write(file.path(), "[{\"id\": 1}]").unwrap();
        assert!(load_overrides(file.path(), Vec::new())
            .unwrap_err()
            .contains("invalid type"));
    }

    #[test]
    fn programs_behind_binds_map_to_their_host_paths() {
        let mut config = default_languages().remove(0);
        config.binds = vec![Bind::read_only("/root/.rustup/toolchains/x", "/opt/rust")];
        assert_eq!(
            host_path(&config, Path::new("/opt/rust/bin/rustc")),
            Path::new("/root/.rustup/toolchains/x/bin/rustc")
        );
        assert_eq!(
            host_path(&config, Path::new("/usr/bin/gcc")),
            Path::new("/usr/bin/gcc")
        );
    }
}
