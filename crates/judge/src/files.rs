//! Directory copies for the judge's own staging (never for untrusted programs' use: the
//! sandbox sees only what it mounts).

use std::path::Path;

/// Copies the regular files and directories below `from` into `to` (created if missing),
/// replacing files of the same name. Symbolic links are followed, as a package's authors meant.
pub fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let source = entry.path();
        let target = to.join(entry.file_name());
        if source.is_dir() {
            copy_tree(&source, &target)?;
        } else {
            std::fs::copy(&source, &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_nested_files_over_existing_ones() {
        let from = tempfile::tempdir().unwrap();
        let to = tempfile::tempdir().unwrap();
        std::fs::create_dir(from.path().join("sub")).unwrap();
        std::fs::write(from.path().join("sub/a.txt"), "new").unwrap();
        std::fs::write(from.path().join("b"), "b").unwrap();
        std::fs::create_dir(to.path().join("sub")).unwrap();
        std::fs::write(to.path().join("sub/a.txt"), "old").unwrap();
        copy_tree(from.path(), to.path()).unwrap();
        assert_eq!(std::fs::read(to.path().join("sub/a.txt")).unwrap(), b"new");
        assert_eq!(std::fs::read(to.path().join("b")).unwrap(), b"b");
    }
}
