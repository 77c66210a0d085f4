//! Compiled programs by content, on disk: a rejudge, or a second run of the same source,
//! takes the job directory the compiler left instead of compiling again.
//!
//! The key hashes everything the compilation depends on — the language and its toolchain's
//! version, the expanded compile command, the environment, the limits and every file's name
//! and bytes — so different sources never share an entry. Only successful compilations are
//! kept (a failure under load may not repeat). An entry is one file (the compiler's output
//! and the job directory's tree, see [`pack`]): written under a temporary name and renamed
//! into place, so a reader never sees half of one, and one inode per compilation (a
//! directory tree of them, five inodes on a disk filesystem, was ~0.8% of a contest burst's
//! CPU time). The cache stays under its byte bound by evicting the least recently used
//! entries.

use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::language::{CompileLimits, Language};
use crate::program::ProgramFiles;

/// What every entry starts with: the format's name and version.
const MAGIC: &[u8] = b"ulticode compile cache 2\n";

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
        // Leftovers of an interrupted store, and directories (entries of an earlier format),
        // are never entries.
        for entry in std::fs::read_dir(&root)? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                std::fs::remove_dir_all(entry.path())?;
            } else if entry.file_name().to_string_lossy().starts_with(".tmp-") {
                std::fs::remove_file(entry.path())?;
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
        let packed = match std::fs::read(&entry) {
            Ok(packed) => packed,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        let dir = crate::workdir::dir("ulticode-job-")?;
        let output = unpack(&packed, dir.path())?;
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
        let packed = pack(dir, output)?;
        let mut staging = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempfile_in(&self.root)?;
        staging.write_all(&packed)?;
        // Another compilation of the same key may get there first: the same bytes.
        staging.persist(&entry).map_err(|e| e.error)?;
        let over = {
            let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
            *held += packed.len() as u64;
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
            if std::fs::remove_file(&entry.path).is_ok() {
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
        let meta = entry.metadata()?;
        found.push(Entry {
            bytes: meta.len(),
            used: meta.modified()?,
            path: entry.path(),
        });
    }
    Ok(found)
}

/// An entry's bytes: [`MAGIC`], the compiler's output, then the job directory's regular
/// files and directories (never a symlink: a compiler's job directory has none worth
/// keeping), each as kind (`d` or `f`), permission bits, relative path and, for a file, its
/// bytes; lengths as little-endian u64, the directory itself first with an empty path.
fn pack(dir: &Path, output: &str) -> io::Result<Vec<u8>> {
    fn put(packed: &mut Vec<u8>, bytes: &[u8]) {
        packed.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        packed.extend_from_slice(bytes);
    }
    fn walk(packed: &mut Vec<u8>, dir: &Path, relative: &str) -> io::Result<()> {
        packed.push(b'd');
        packed.extend_from_slice(&mode(&std::fs::metadata(dir)?).to_le_bytes());
        put(packed, relative.as_bytes());
        let mut children: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
        children.sort_by_key(|child| child.file_name());
        for child in children {
            let name = child.file_name();
            let Some(name) = name.to_str() else {
                return Err(io::Error::other(format!("{name:?} is not UTF-8")));
            };
            let path = if relative.is_empty() {
                name.to_string()
            } else {
                format!("{relative}/{name}")
            };
            let kind = child.file_type()?;
            if kind.is_dir() {
                walk(packed, &child.path(), &path)?;
            } else if kind.is_file() {
                packed.push(b'f');
                packed.extend_from_slice(&mode(&child.metadata()?).to_le_bytes());
                put(packed, path.as_bytes());
                put(packed, &std::fs::read(child.path())?);
            }
        }
        Ok(())
    }
    let mut packed = MAGIC.to_vec();
    put(&mut packed, output.as_bytes());
    walk(&mut packed, dir, "")?;
    Ok(packed)
}

fn mode(meta: &std::fs::Metadata) -> u32 {
    std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777
}

/// Writes the job directory of `packed` (see [`pack`]) into the empty directory `into`;
/// returns the compiler's output. A malformed entry (a path that is not a plain relative
/// one, a length past the end) is an error, never a file outside `into`.
fn unpack(packed: &[u8], into: &Path) -> io::Result<String> {
    let malformed = |what: &str| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("compile cache entry: {what}"),
        )
    };
    let mut rest = packed
        .strip_prefix(MAGIC)
        .ok_or_else(|| malformed("not of this format"))?;
    let mut take = |n: usize| -> io::Result<&[u8]> {
        if rest.len() < n {
            return Err(malformed("truncated"));
        }
        let (taken, left) = rest.split_at(n);
        rest = left;
        Ok(taken)
    };
    fn number(bytes: &[u8]) -> u64 {
        let mut word = [0u8; 8];
        word[..bytes.len()].copy_from_slice(bytes);
        u64::from_le_bytes(word)
    }
    let length = number(take(8)?) as usize;
    let output =
        String::from_utf8(take(length)?.to_vec()).map_err(|_| malformed("output is not UTF-8"))?;
    // Directories get their permissions last, once nothing more is written in them.
    let mut directories = Vec::new();
    let mut first = true;
    loop {
        let kind = match take(1) {
            Ok(kind) => kind[0],
            Err(_) if !first => break,
            Err(e) => return Err(e),
        };
        let permissions = std::fs::Permissions::from_mode(number(take(4)?) as u32 & 0o777);
        let length = number(take(8)?) as usize;
        let relative =
            std::str::from_utf8(take(length)?).map_err(|_| malformed("a path is not UTF-8"))?;
        let plain = relative
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
        if first != relative.is_empty() || (!first && !plain) {
            return Err(malformed("a path that is not plain and relative"));
        }
        let path = into.join(relative);
        match kind {
            b'd' => {
                if !first {
                    std::fs::create_dir(&path)?;
                }
                directories.push((path, permissions));
            }
            b'f' => {
                let length = number(take(8)?) as usize;
                std::fs::write(&path, take(length)?)?;
                std::fs::set_permissions(&path, permissions)?;
            }
            _ => return Err(malformed("an unknown kind of file")),
        }
        first = false;
    }
    for (path, permissions) in directories.into_iter().rev() {
        std::fs::set_permissions(path, permissions)?;
    }
    Ok(output)
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
        let on_disk: u64 = ["a", "c"]
            .iter()
            .map(|key| std::fs::metadata(root.path().join(key)).unwrap().len())
            .sum();
        let reopened = CompileCache::open(root.path(), 2_500).unwrap();
        assert_eq!(*reopened.held.lock().unwrap(), on_disk);
    }

    #[test]
    fn an_entry_keeps_the_tree_and_its_permissions() {
        let root = tempfile::tempdir().unwrap();
        let cache = CompileCache::open(root.path(), 1 << 20).unwrap();
        let compiled = job(&[
            ("main.py", "print(1)"),
            ("lib/a/b.txt", "b"),
            ("lib/empty/.keep", ""),
        ]);
        std::fs::create_dir(compiled.path().join("bare")).unwrap();
        let executable = compiled.path().join("lib/a/b.txt");
        std::fs::set_permissions(&executable, std::fs::Permissions::from_mode(0o751)).unwrap();
        std::fs::set_permissions(
            compiled.path().join("lib"),
            std::fs::Permissions::from_mode(0o555),
        )
        .unwrap();
        std::os::unix::fs::symlink("/etc/passwd", compiled.path().join("link")).unwrap();
        cache.put("k", compiled.path(), "ok").unwrap();
        let (copy, output) = cache.take("k").unwrap().unwrap();
        assert_eq!(output, "ok");
        let mode = |path: &str| mode(&std::fs::metadata(copy.path().join(path)).unwrap());
        assert_eq!(mode("lib/a/b.txt"), 0o751);
        assert_eq!(mode("lib"), 0o555);
        assert!(copy.path().join("bare").is_dir());
        assert_eq!(
            std::fs::read_to_string(copy.path().join("lib/empty/.keep")).unwrap(),
            ""
        );
        assert!(
            !copy.path().join("link").exists(),
            "symlinks are never kept"
        );
        std::fs::set_permissions(
            copy.path().join("lib"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        std::fs::set_permissions(
            compiled.path().join("lib"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }

    #[test]
    fn a_malformed_entry_writes_nothing_outside_its_directory() {
        let into = tempfile::tempdir().unwrap();
        let target = into.path().join("inside");
        std::fs::create_dir(&target).unwrap();
        let escaping = |path: &str| {
            let mut packed = MAGIC.to_vec();
            packed.extend_from_slice(&0u64.to_le_bytes());
            packed.push(b'd');
            packed.extend_from_slice(&0o755u32.to_le_bytes());
            packed.extend_from_slice(&0u64.to_le_bytes());
            packed.push(b'f');
            packed.extend_from_slice(&0o644u32.to_le_bytes());
            packed.extend_from_slice(&(path.len() as u64).to_le_bytes());
            packed.extend_from_slice(path.as_bytes());
            packed.extend_from_slice(&1u64.to_le_bytes());
            packed.push(b'x');
            packed
        };
        for path in ["../escaped", "/tmp/escaped", "a/../../escaped", "", "a//b"] {
            let err = unpack(&escaping(path), &target).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{path:?}");
        }
        assert!(!into.path().join("escaped").exists());
        let mut truncated = escaping("ok");
        truncated.pop();
        assert!(unpack(&truncated, &target).is_err());
        assert!(unpack(b"something else", &target).is_err());
    }

    #[test]
    fn entries_of_the_earlier_format_are_removed_when_opened() {
        let root = tempfile::tempdir().unwrap();
        let old = job(&[("files/main", "ELF"), ("output", "")]);
        std::fs::rename(old.path(), root.path().join("abc")).unwrap();
        std::fs::write(root.path().join(".tmp-interrupted"), "half").unwrap();
        let cache = CompileCache::open(root.path(), 1 << 20).unwrap();
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
        assert!(cache.take("abc").unwrap().is_none());
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
