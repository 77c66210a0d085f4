//! A precompiled prelude for the C++ harness: `<bits/stdc++.h>` takes g++ about two seconds
//! to parse at `-O2`, more than the rest of a harness's compilation. The headers are compiled
//! once per compiler and flags — in the sandbox, like every compilation — into
//! `<cache>/pch/<key>/prelude.hpp.gch`, which later compilations get read-only at
//! `/opt/ulticode-pch` and load with `-include`. Only the system's headers go into it, never a
//! submission. Without it (the cache not writable, the build failed) compilations simply parse
//! the headers themselves.
//!
//! The cache directory is `$ULTICODE_CACHE_DIR` (default `/var/cache/ulticode`), else the
//! system's temporary directory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use sandbox::{Bind, RunSpec};
use sha2::{Digest, Sha256};

use crate::judging::Judge;
use crate::language::{Language, LanguageConfig};

/// Where compilations see the prelude.
const MOUNT: &str = "/opt/ulticode-pch";
const HEADER: &str = "#include <bits/stdc++.h>\n#include <cxxabi.h>\n#include <unistd.h>\n";

/// Preludes built (or found) by this process, by key; `None`: building failed, do not retry.
fn built() -> &'static Mutex<HashMap<String, Option<PathBuf>>> {
    static BUILT: OnceLock<Mutex<HashMap<String, Option<PathBuf>>>> = OnceLock::new();
    BUILT.get_or_init(Mutex::default)
}

fn cache_root() -> Option<PathBuf> {
    let preferred = std::env::var_os("ULTICODE_CACHE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/ulticode"));
    [preferred, std::env::temp_dir().join("ulticode-cache")]
        .into_iter()
        .map(|root| root.join("pch"))
        .find(|dir| std::fs::create_dir_all(dir).is_ok())
}

/// The compile command without its output and sources: the flags a prelude must share.
fn flags(config: &LanguageConfig) -> Option<Vec<String>> {
    let command = config.compile.as_ref()?;
    let mut out = Vec::new();
    let mut words = command.iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "-o" => {
                words.next();
            }
            w if w.contains('{') => {}
            _ => out.push(word.clone()),
        }
    }
    Some(out)
}

/// `config` compiling with the prelude of its compiler and flags, when one can be had.
pub(crate) fn with_prelude(judge: &Judge<'_>, language: &Language) -> LanguageConfig {
    let mut config = language.config.clone();
    let Some(flags) = flags(&config) else {
        return config;
    };
    let key: String = Sha256::digest(format!("{}\0{}", language.version, flags.join("\0")))
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect();
    let dir = {
        let mut built = built().lock().unwrap_or_else(|e| e.into_inner());
        match built.get(&key) {
            Some(found) => found.clone(),
            None => {
                // Held while building: one build per key in this process.
                let found = find_or_build(judge, language, &flags, &key);
                built.insert(key, found.clone());
                found
            }
        }
    };
    if let (Some(dir), Some(command)) = (dir, config.compile.as_mut()) {
        command.splice(
            1..1,
            ["-include".to_string(), format!("{MOUNT}/prelude.hpp")],
        );
        config.binds.push(Bind::read_only(dir, MOUNT));
    }
    config
}

fn find_or_build(
    judge: &Judge<'_>,
    language: &Language,
    flags: &[String],
    key: &str,
) -> Option<PathBuf> {
    let root = cache_root()?;
    let dir = root.join(key);
    if dir.join("prelude.hpp.gch").is_file() {
        return Some(dir);
    }
    let job = tempfile::Builder::new()
        .prefix("ulticode-pch-")
        .tempdir_in(&root)
        .ok()?;
    std::fs::write(job.path().join("prelude.hpp"), HEADER).ok()?;
    let (compiler, args) = flags.split_first()?;
    let mut args = args.to_vec();
    args.extend(
        [
            "-x",
            "c++-header",
            "-o",
            "/job/prelude.hpp.gch",
            "/job/prelude.hpp",
        ]
        .map(str::to_string),
    );
    let limits = crate::language::CompileLimits {
        cpu_time_ms: 120_000,
        memory_mib: 2048,
        ..language.config.compile_limits
    };
    let spec = RunSpec {
        args,
        env: language.config.env.clone(),
        binds: language.config.binds.clone(),
        ..RunSpec::new(compiler.clone())
            .job_dir(job.path(), true)
            .profile(language.config.profile)
            .limits(sandbox::Limits {
                // The prelude is about 100 MiB.
                tmp_bytes: 512 << 20,
                file_size_bytes: 512 << 20,
                ..limits.to_sandbox()
            })
    };
    let outcome = judge.sandbox().run(&spec).ok()?;
    if outcome.status != sandbox::Status::Ok || !job.path().join("prelude.hpp.gch").is_file() {
        return None;
    }
    let built = job.keep();
    set_readable(&built).ok()?;
    // Another process may have finished first: its prelude serves.
    match std::fs::rename(&built, &dir) {
        Ok(()) => Some(dir),
        Err(_) if dir.join("prelude.hpp.gch").is_file() => {
            let _ = std::fs::remove_dir_all(&built);
            Some(dir)
        }
        Err(_) => {
            let _ = std::fs::remove_dir_all(&built);
            None
        }
    }
}

/// Run identities read the prelude; nobody but root changes it.
fn set_readable(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))?;
    for entry in std::fs::read_dir(dir)? {
        std::fs::set_permissions(entry?.path(), std::fs::Permissions::from_mode(0o644))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prelude_shares_the_compilers_flags_but_not_its_files() {
        let config = crate::language::default_languages()
            .into_iter()
            .find(|c| c.id == "cpp17")
            .unwrap();
        assert_eq!(
            flags(&config).unwrap(),
            ["/usr/bin/g++", "-std=gnu++17", "-O2", "-pipe"]
        );
    }
}
