//! The package's validators: the output validator (`output_validator/`, or one program in the
//! legacy `output_validators/`) and the input validators (`input_validators/`), each a single
//! file or a directory. A directory may instead carry POSIX `build`/`run` scripts (always
//! run inside the sandbox); `.ctd` files are checktestdata scripts.

use std::path::{Path, PathBuf};

use super::{language_of, PackageError, PackageWarning};

/// The language id of programs given as `build`/`run` scripts.
pub const SCRIPTS: &str = "build-run";

/// The source of the package's output validator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidatorSource {
    /// The directory the program's files are in (absolute).
    pub dir: PathBuf,
    /// Every file of the program (absolute): the one file, or the directory's.
    pub files: Vec<PathBuf>,
    /// The files that are compiled (absolute), all of one language; empty for scripts.
    pub sources: Vec<PathBuf>,
    /// A language id, or [`SCRIPTS`].
    pub language: String,
    /// testlib convention (`checker input output answer`, exit 0/1/2/3/7) instead of the ICPC
    /// one (`validator input answer feedback_dir < output`, exit 42/43); chosen when the
    /// source includes `testlib.h` or is named `check.*` / `checker.*` (Polygon's names).
    pub testlib: bool,
}

/// One input validator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputValidator {
    /// Its name: the file's stem or the directory's name (what `input_validator_args` maps).
    pub name: String,
    pub kind: InputValidatorKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputValidatorKind {
    /// A checktestdata script (exit 0: valid).
    Checktestdata(PathBuf),
    /// A program (exit 42: valid, 43: invalid).
    Program(ValidatorSource),
}

/// Reads one program of the package (a file or a directory).
fn program(package: &Path, path: &Path) -> Result<ValidatorSource, PackageError> {
    let relative = |p: &Path| p.strip_prefix(package).unwrap_or(p).to_path_buf();
    let (dir, files) = if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| PackageError::new(relative(path), e.to_string()))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        (path.to_path_buf(), files)
    } else {
        let parent = path.parent().unwrap_or(package).to_path_buf();
        (parent, vec![path.to_path_buf()])
    };
    let named = |name: &str| {
        files
            .iter()
            .any(|f| f.file_name().is_some_and(|n| n == name))
    };
    if path.is_dir() && (named("build") || named("run")) {
        return Ok(ValidatorSource {
            dir,
            files,
            sources: Vec::new(),
            language: SCRIPTS.into(),
            testlib: false,
        });
    }
    let mut sources = Vec::new();
    let mut languages = Vec::new();
    for file in &files {
        if let Some(language) = language_of(file) {
            sources.push(file.clone());
            if !languages.contains(&language) {
                languages.push(language);
            }
        }
    }
    let language = match languages.as_slice() {
        [one] => one.to_string(),
        // C and C++ sources together build one C++ program.
        [a, b] if [*a, *b].contains(&"c") && [*a, *b].contains(&"cpp17") => "cpp17".into(),
        [] => {
            return Err(PackageError::new(
                relative(path),
                "no source file (.c, .cpp, .py, ...) and no build/run scripts",
            ))
        }
        _ => {
            return Err(PackageError::new(
                relative(path),
                format!("sources in several languages: {languages:?}"),
            ))
        }
    };
    let testlib = sources.iter().any(|s| {
        let named = matches!(
            s.file_stem().and_then(|n| n.to_str()),
            Some("check" | "checker")
        );
        named || std::fs::read_to_string(s).is_ok_and(|text| text.contains("testlib.h"))
    });
    Ok(ValidatorSource {
        dir,
        files,
        sources,
        language,
        testlib,
    })
}

/// The programs directly in a directory (files and subdirectories, hidden ones skipped).
fn programs_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// `static_validator/` (2025-09), a program like the output validator.
pub(super) fn find_static_validator(dir: &Path) -> Result<Option<ValidatorSource>, PackageError> {
    let path = dir.join("static_validator");
    if path.is_dir() {
        program(dir, &path).map(Some)
    } else {
        Ok(None)
    }
}

pub(super) fn find_output_validator(dir: &Path) -> Result<Option<ValidatorSource>, PackageError> {
    let mut candidates = programs_in(&dir.join("output_validators"));
    // Helper files beside a single-file validator are not programs of their own.
    if candidates
        .iter()
        .any(|p| p.is_file() && language_of(p).is_some())
    {
        candidates.retain(|p| p.is_dir() || language_of(p).is_some());
        if candidates.iter().filter(|p| p.is_file()).count() > 1
            && candidates.iter().all(|p| p.is_file())
        {
            // Several source files directly in output_validators/: one program.
            return program(dir, &dir.join("output_validators")).map(Some);
        }
    }
    let current = dir.join("output_validator");
    if current.is_dir() {
        candidates.push(current);
    }
    let relative = |p: &Path| p.strip_prefix(dir).unwrap_or(p).to_path_buf();
    match candidates.as_slice() {
        [] => Ok(None),
        [one] => program(dir, one).map(Some),
        many => Err(PackageError::new(
            "output_validators",
            format!(
                "more than one output validator: {}",
                many.iter()
                    .map(|p| relative(p).display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

pub(super) fn find_input_validators(
    dir: &Path,
    warnings: &mut Vec<PackageWarning>,
) -> Result<Vec<InputValidator>, PackageError> {
    let mut found = Vec::new();
    for path in programs_in(&dir.join("input_validators")) {
        let name = path
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        if path.extension().is_some_and(|e| e == "ctd") {
            found.push(InputValidator {
                name,
                kind: InputValidatorKind::Checktestdata(path),
            });
        } else if path.is_dir() || language_of(&path).is_some() {
            found.push(InputValidator {
                name,
                kind: InputValidatorKind::Program(program(dir, &path)?),
            });
        } else if path
            .extension()
            .is_none_or(|e| !matches!(e.to_str(), Some("h" | "hpp")))
        {
            warnings.push(PackageError::new(
                path.strip_prefix(dir).unwrap_or(&path),
                "not an input validator this judge can run (skipped)",
            ));
        }
    }
    Ok(found)
}

/// `data/invalid_input/` (2025-09) and its subdirectories: inputs that must be rejected.
pub(super) fn invalid_inputs(dir: &Path) -> Vec<PathBuf> {
    inputs_below(&dir.join("data/invalid_input"))
}

/// The `.in` files below `dir`, in path order.
fn inputs_below(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for path in programs_in(dir) {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "in") {
                out.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(dir, &mut found);
    found
}

/// `data/valid_output/` and `data/invalid_output/` (2025-09): `tc.in`, `tc.ans` and a
/// `tc.out` the output validator must accept, or reject. `true` marks the valid ones.
pub(super) fn output_cases(dir: &Path) -> Vec<(PathBuf, bool)> {
    let mut found: Vec<(PathBuf, bool)> = inputs_below(&dir.join("data/valid_output"))
        .into_iter()
        .map(|input| (input, true))
        .collect();
    found.extend(
        inputs_below(&dir.join("data/invalid_output"))
            .into_iter()
            .map(|input| (input, false)),
    );
    found
}
