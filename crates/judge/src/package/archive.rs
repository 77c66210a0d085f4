//! Packages as zip archives: how setters upload them and how workers fetch them. Unpacking
//! treats the archive as hostile: no paths outside the destination, no links, bounded size
//! and file count. Installation verifies the content hash before publishing a directory.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::{content_hash, PackageError, Problem};

/// Bounds on what an archive may unpack to.
#[derive(Debug, Clone, Copy)]
pub struct ArchiveLimits {
    pub max_total_bytes: u64,
    pub max_files: usize,
}

impl Default for ArchiveLimits {
    fn default() -> Self {
        Self {
            max_total_bytes: 512 << 20,
            max_files: 20_000,
        }
    }
}

fn archive_error(reason: impl Into<String>) -> PackageError {
    PackageError::new("<archive>", reason)
}

/// Unpacks `archive` into the empty directory `dest`.
pub fn unpack(archive: &[u8], dest: &Path, limits: ArchiveLimits) -> Result<(), PackageError> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(archive))
        .map_err(|e| archive_error(format!("not a zip archive: {e}")))?;
    if zip.len() > limits.max_files {
        return Err(archive_error(format!(
            "{} entries; at most {} are allowed",
            zip.len(),
            limits.max_files
        )));
    }
    let mut total = 0u64;
    for index in 0..zip.len() {
        let mut entry = zip
            .by_index(index)
            .map_err(|e| archive_error(format!("entry {index}: {e}")))?;
        let name = entry.name().to_string();
        let relative = entry
            .enclosed_name()
            .ok_or_else(|| PackageError::new(&name, "the path leaves the package"))?;
        if entry.is_symlink() {
            return Err(PackageError::new(
                &name,
                "links are not allowed in packages",
            ));
        }
        let target = dest.join(&relative);
        if entry.is_dir() {
            std::fs::create_dir_all(&target)
                .map_err(|e| PackageError::new(&name, e.to_string()))?;
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| PackageError::new(&name, e.to_string()))?;
        }
        let mut file =
            std::fs::File::create(&target).map_err(|e| PackageError::new(&name, e.to_string()))?;
        // Count what is actually inflated: the header's size may lie.
        let budget = limits.max_total_bytes - total;
        let written = std::io::copy(&mut (&mut entry).take(budget + 1), &mut file)
            .map_err(|e| PackageError::new(&name, e.to_string()))?;
        total += written;
        if total > limits.max_total_bytes {
            return Err(archive_error(format!(
                "unpacks to more than {} bytes",
                limits.max_total_bytes
            )));
        }
    }
    Ok(())
}

/// The package root inside an unpacked archive: the archive's root, or its only directory
/// (archives made by zipping a folder).
pub fn package_root(unpacked: &Path) -> Result<PathBuf, PackageError> {
    if unpacked.join("problem.yaml").is_file() {
        return Ok(unpacked.to_path_buf());
    }
    let entries: Vec<_> = std::fs::read_dir(unpacked)
        .map_err(|e| archive_error(e.to_string()))?
        .filter_map(Result::ok)
        .collect();
    match entries.as_slice() {
        [only] if only.path().join("problem.yaml").is_file() => Ok(only.path()),
        _ if crate::polygon::find_problem_xml(unpacked).is_ok() => Err(PackageError::new(
            "problem.xml",
            "a Polygon package: importing one runs its generators in a sandbox, which this server has none of (run `ulticode problem import` and upload the result)",
        )),
        _ => Err(PackageError::new(
            "problem.yaml",
            "missing: the archive must hold problem.yaml at its root or in its only folder",
        )),
    }
}

/// A validated upload: the loaded problem, its content hash, and the directory it lives in
/// (inside `workdir`).
pub struct Validated {
    pub problem: Problem,
    pub hash: String,
    pub root: PathBuf,
}

/// Unpacks and loads an uploaded archive; any fault names the file, key and reason.
pub fn validate(
    archive: &[u8],
    workdir: &Path,
    limits: ArchiveLimits,
) -> Result<Validated, PackageError> {
    unpack(archive, workdir, limits)?;
    let root = package_root(workdir)?;
    let problem = Problem::load(&root)?;
    let hash = content_hash(&root).map_err(|e| archive_error(e.to_string()))?;
    Ok(Validated {
        problem,
        hash,
        root,
    })
}

/// Zips a package directory (used to load packages from disk through the upload path).
pub fn pack(dir: &Path) -> std::io::Result<Vec<u8>> {
    fn walk(
        zip: &mut zip::ZipWriter<std::io::Cursor<Vec<u8>>>,
        root: &Path,
        dir: &Path,
    ) -> std::io::Result<()> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let path = entry.path();
            let name = path
                .strip_prefix(root)
                .expect("below the root")
                .to_string_lossy()
                .into_owned();
            let options = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated);
            if entry.file_type()?.is_dir() {
                zip.add_directory(name, options)?;
                walk(zip, root, &path)?;
            } else {
                zip.start_file(name, options)?;
                zip.write_all(&std::fs::read(&path)?)?;
            }
        }
        Ok(())
    }
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    walk(&mut zip, dir, dir)?;
    Ok(zip.finish()?.into_inner())
}

/// Unpacks `archive` as the package `hash` under `cache` (at `cache/<hash>`), verifying that
/// its content hash is `hash`; concurrent installers of one hash are harmless.
pub fn install(archive: &[u8], cache: &Path, hash: &str) -> Result<PathBuf, PackageError> {
    if hash.is_empty() || !hash.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(archive_error(format!("not a package hash: {hash:?}")));
    }
    let target = cache.join(hash);
    if target.join("problem.yaml").is_file() {
        return Ok(target);
    }
    std::fs::create_dir_all(cache).map_err(|e| archive_error(e.to_string()))?;
    let staging = tempfile::Builder::new()
        .prefix(".staging-")
        .tempdir_in(cache)
        .map_err(|e| archive_error(e.to_string()))?;
    unpack(archive, staging.path(), ArchiveLimits::default())?;
    let root = package_root(staging.path())?;
    let actual = content_hash(&root).map_err(|e| archive_error(e.to_string()))?;
    if actual != hash {
        return Err(archive_error(format!(
            "content hash {actual} does not match the requested {hash}"
        )));
    }
    if let Err(e) = std::fs::rename(&root, &target) {
        if !target.join("problem.yaml").is_file() {
            return Err(archive_error(format!("publishing the package: {e}")));
        }
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, bytes) in entries {
            zip.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    fn example() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/problems/aplusb")
    }

    #[test]
    fn a_packed_package_validates_and_installs_under_its_hash() {
        let archive = pack(&example()).unwrap();
        let work = tempfile::tempdir().unwrap();
        let validated = validate(&archive, work.path(), ArchiveLimits::default()).unwrap();
        assert_eq!(validated.hash, content_hash(&example()).unwrap());
        let cache = tempfile::tempdir().unwrap();
        let installed = install(&archive, cache.path(), &validated.hash).unwrap();
        assert_eq!(installed, cache.path().join(&validated.hash));
        assert_eq!(content_hash(&installed).unwrap(), validated.hash);
        assert_eq!(
            install(&archive, cache.path(), &validated.hash).unwrap(),
            installed,
            "idempotent"
        );
        let wrong = "0".repeat(64);
        assert!(install(&archive, cache.path(), &wrong).is_err());
        assert!(!cache.path().join(&wrong).exists());
    }

    #[test]
    fn hostile_or_broken_archives_are_refused_with_the_reason() {
        let cases: Vec<(&str, Vec<u8>, &str)> = vec![
            ("not a zip", b"hello".to_vec(), "not a zip archive"),
            (
                "path traversal",
                zip_of(&[("../evil", b"x")]),
                "leaves the package",
            ),
            (
                "no problem.yaml",
                zip_of(&[("data/secret/1.in", b"1")]),
                "problem.yaml",
            ),
            (
                "bad yaml",
                zip_of(&[("problem.yaml", b"name: [unclosed")]),
                "problem.yaml",
            ),
        ];
        for (name, archive, expected) in cases {
            let work = tempfile::tempdir().unwrap();
            let error = validate(&archive, work.path(), ArchiveLimits::default())
                .err()
                .unwrap_or_else(|| panic!("{name} was accepted"));
            assert!(error.to_string().contains(expected), "{name}: {error}");
        }
        let work = tempfile::tempdir().unwrap();
        let big = zip_of(&[("problem.yaml", &[b'a'; 4096])]);
        let limits = ArchiveLimits {
            max_total_bytes: 1000,
            max_files: 10,
        };
        let error = unpack(&big, work.path(), limits).unwrap_err();
        assert!(error.reason.contains("more than 1000 bytes"), "{error}");
    }
}
