//! Compiled programs by content, on disk: a rejudge, or a second run of the same source,
//! takes the job directory the compiler left instead of compiling again.
//!
//! The key hashes everything the compilation depends on — the language and its toolchain's
//! version, the expanded compile command, the environment, the limits and every file's name
//! and bytes — so different sources never share an entry. Only successful compilations are
//! kept (a failure under load may not repeat). Entries are written to a temporary name and
//! renamed into place, so a reader never sees half of one; the cache stays under its byte
//! bound by evicting the least recently used entries.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::language::{CompileLimits, Language};
use crate::program::ProgramFiles;

/// The compiler's output of an entry (the rest of the entry is the job directory, `files/`).
const OUTPUT: &str = "output";
const FILES: &str = "files";

/// A bounded on-disk cache of compiled job directories. Share one per process.
#[derive(Debug)]
pub struct CompileCache {
    root: PathBuf,
    max_bytes: u64,
    /// Bytes held, as counted when opened plus what was stored since.
    held: Mutex<u64>,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// Hits and misses since the cache was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheCounts {
    pub hits: u64,
    pub misses: u64,
}

impl CompileCache {
    /// Opens (creating) the cache at `root`, holding at most `max_bytes`.
    pub fn open(root: impl Into<PathBuf>, max_bytes: u64) -> io::Result<Self> {
        let root = root.into();
        std::fs::create_dir_all(&root)?;
        std::fs::set_permissions(&root, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
        // Leftovers of an interrupted store are never entries.
        for entry in std::fs::read_dir(&root)? {
            let entry = entry?;
            if entry.file_name().to_string_lossy().starts_with(".tmp-") {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        let held = entries(&root)?.iter().map(|e| e.bytes).sum();
        Ok(Self {
            root,
            max_bytes,
            held: Mutex::new(held),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        })
    }

    pub fn counts(&self) -> CacheCounts {
        CacheCounts {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
        }
    }

    /// The key of compiling `program` in `language` with `command` under `limits`.
    pub fn key(
        language: &Language,
        command: &[String],
        program: &ProgramFiles,
        limits: &CompileLimits,
    ) -> String {
        let mut hash = Sha256::new();
        let mut part = |bytes: &[u8]| {
            hash.update((bytes.len() as u64).to_le_bytes());
            hash.update(bytes);
        };
        part(language.config.id.as_bytes());
        part(language.version.as_bytes());
        for word in command {
            part(word.as_bytes());
        }
        part(b"env");
        for (name, value) in &language.config.env {
            part(name.as_bytes());
            part(value.as_bytes());
        }
        part(
            format!(
                "{} {} {} {}",
                limits.cpu_time_ms, limits.memory_mib, limits.pids, limits.output_bytes
            )
            .as_bytes(),
        );
        part(b"files");
        for (name, bytes) in &program.files {
            part(name.as_bytes());
            part(bytes);
        }
        hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// A fresh copy of entry `key`'s job directory and the compiler's output, if kept.
    pub fn take(&self, key: &str) -> io::Result<Option<(tempfile::TempDir, String)>> {
        let entry = self.root.join(key);
        let output = match std::fs::read_to_string(entry.join(OUTPUT)) {
            Ok(output) => output,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        let dir = crate::workdir::dir("ulticode-job-")?;
        copy_tree(&entry.join(FILES), dir.path())?;
        // Recently used: the eviction order.
        let _ = std::fs::File::open(&entry).and_then(|f| f.set_modified(SystemTime::now()));
        self.hits.fetch_add(1, Ordering::Relaxed);
        Ok(Some((dir, output)))
    }

    /// Keeps a copy of `dir` (a successful compilation's job directory) and its `output`.
    pub fn put(&self, key: &str, dir: &Path, output: &str) -> io::Result<()> {
        let entry = self.root.join(key);
        if entry.exists() {
            return Ok(());
        }
        let staging = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempdir_in(&self.root)?;
        let bytes = copy_tree(dir, &staging.path().join(FILES))? + output.len() as u64;
        std::fs::write(staging.path().join(OUTPUT), output)?;
        match std::fs::rename(staging.path(), &entry) {
            Ok(()) => {
                // The directory is the entry now: nothing left to remove.
                let _ = staging.keep();
            }
            // Another compilation of the same key got there first.
            Err(_) if entry.exists() => return Ok(()),
            Err(e) => return Err(e),
        }
        let over = {
            let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
            *held += bytes;
            *held > self.max_bytes
        };
        if over {
            self.evict()?;
        }
        Ok(())
    }

    /// Removes the least recently used entries until the cache holds 90% of its bound.
    fn evict(&self) -> io::Result<()> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let mut all = entries(&self.root)?;
        all.sort_by_key(|e| e.used);
        *held = all.iter().map(|e| e.bytes).sum();
        let target = self.max_bytes / 10 * 9;
        for entry in all {
            if *held <= target {
                break;
            }
            if std::fs::remove_dir_all(&entry.path).is_ok() {
                *held = held.saturating_sub(entry.bytes);
            }
        }
        Ok(())
    }
}

struct Entry {
    path: PathBuf,
    bytes: u64,
    used: SystemTime,
}

fn entries(root: &Path) -> io::Result<Vec<Entry>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(root)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        found.push(Entry {
            bytes: tree_bytes(&path)?,
            used: entry.metadata()?.modified()?,
            path,
        });
    }
    Ok(found)
}

fn tree_bytes(path: &Path) -> io::Result<u64> {
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.is_dir() {
        return Ok(meta.len());
    }
    let mut total = 0;
    for entry in std::fs::read_dir(path)? {
        total += tree_bytes(&entry?.path())?;
    }
    Ok(total)
}

/// Copies regular files and directories (never a symlink: a compiler's job directory has
/// none worth keeping) from `from` into `to`; returns the bytes copied.
fn copy_tree(from: &Path, to: &Path) -> io::Result<u64> {
    std::fs::create_dir_all(to)?;
    std::fs::set_permissions(to, std::fs::metadata(from)?.permissions())?;
    let mut total = 0;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            total += copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            total += std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn an_entry_comes_back_as_a_fresh_copy_with_its_output() {
        let root = tempfile::tempdir().unwrap();
        let cache = CompileCache::open(root.path().join("cache"), 1 << 20).unwrap();
        assert!(cache.take("k").unwrap().is_none());
        let compiled = job(&[("main.c", "int main(){}"), ("out/main", "ELF")]);
        cache.put("k", compiled.path(), "a warning").unwrap();
        let (copy, output) = cache.take("k").unwrap().unwrap();
        assert_eq!(output, "a warning");
        assert_eq!(
            std::fs::read_to_string(copy.path().join("out/main")).unwrap(),
            "ELF"
        );
        std::fs::write(copy.path().join("out/main"), "changed").unwrap();
        let (again, _) = cache.take("k").unwrap().unwrap();
        assert_eq!(
            std::fs::read_to_string(again.path().join("out/main")).unwrap(),
            "ELF",
            "a user of a copy never changes the entry"
        );
        assert_eq!(cache.counts(), CacheCounts { hits: 2, misses: 1 });
    }

    #[test]
    fn the_least_recently_used_entries_go_past_the_bound() {
        let root = tempfile::tempdir().unwrap();
        let cache = CompileCache::open(root.path(), 2_500).unwrap();
        let kilobyte = "x".repeat(1000);
        for key in ["a", "b"] {
            cache.put(key, job(&[("f", &kilobyte)]).path(), "").unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // `a` is used again, so `b` is the oldest when `c` pushes the cache over its bound.
        cache.take("a").unwrap().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        cache.put("c", job(&[("f", &kilobyte)]).path(), "").unwrap();
        assert!(cache.take("a").unwrap().is_some());
        assert!(cache.take("b").unwrap().is_none());
        assert!(cache.take("c").unwrap().is_some());
        // A reopened cache counts what it holds.
        drop(cache);
        let reopened = CompileCache::open(root.path(), 2_500).unwrap();
        assert_eq!(*reopened.held.lock().unwrap(), 2_000);
    }

    #[test]
    fn every_input_of_a_compilation_is_in_its_key() {
        let config = crate::language::default_languages()
            .into_iter()
            .find(|c| c.id == "c")
            .unwrap();
        let language = Language {
            config,
            version: "gcc 12".into(),
        };
        let program = |source: &str| ProgramFiles {
            files: vec![("main.c".into(), source.as_bytes().to_vec())],
            entry: "main.c".into(),
            main_class: "main".into(),
        };
        let command = vec!["gcc".to_string(), "-O2".into()];
        let limits = CompileLimits::default();
        let base = CompileCache::key(&language, &command, &program("a"), &limits);
        assert_eq!(
            base,
            CompileCache::key(&language, &command, &program("a"), &limits)
        );
        assert_ne!(
            base,
            CompileCache::key(&language, &command, &program("b"), &limits)
        );
        let other_flags = vec!["gcc".to_string(), "-O0".into()];
        assert_ne!(
            base,
            CompileCache::key(&language, &other_flags, &program("a"), &limits)
        );
        let newer = Language {
            version: "gcc 13".into(),
            ..language.clone()
        };
        assert_ne!(
            base,
            CompileCache::key(&newer, &command, &program("a"), &limits)
        );
        let tighter = CompileLimits {
            cpu_time_ms: 1000,
            ..limits
        };
        assert_ne!(
            base,
            CompileCache::key(&language, &command, &program("a"), &tighter)
        );
    }
}
