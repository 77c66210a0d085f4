//! Programs run without judging, with the knobs an execution API exposes: compiler options,
//! command-line arguments, files beside the source, stderr merged into stdout, stack,
//! process and file-size limits, several runs. Building and running are separate, so a
//! caller may run one build many times (a batch that repeats a source compiles it once).

use std::io::{Read, Seek, SeekFrom};

use sandbox::{Limits, PassedFds, RunOutcome, Stderr, Stdin, Stdout};

use crate::judging::{Abort, Compilation, Compiled, Judge, JudgeError};
use crate::language::{Language, LanguageConfig};
use crate::program::ProgramFiles;

/// The language id of a program given as `compile` (optional) and `run` scripts.
pub const MULTI_FILE: &str = "multi";

/// How to build a program beyond its source.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildOptions {
    /// Words added to the compile command, before the sources.
    pub compiler_options: Vec<String>,
    /// Files put beside the source (from an archive: [`unzip`]).
    pub files: Vec<(String, Vec<u8>)>,
    /// Skip a compile step that only checks the source: the run reports its errors, one
    /// sandbox start sooner.
    pub skip_checks: bool,
}

/// How to run a built program once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOptions {
    /// CPU time the program may use (more is a time limit exceeded).
    pub cpu_time_ms: u64,
    /// CPU time past the limit before the program is killed.
    pub cpu_extra_ms: u64,
    pub wall_time_ms: u64,
    pub memory_kib: u64,
    pub stack_kib: Option<u64>,
    /// Processes and threads; at least what the language's runtime needs.
    pub processes: Option<u32>,
    /// The most bytes of stdout and of stderr kept; more ends the run (`output_limit`).
    pub output_bytes: u64,
    /// Largest file the program may write (`RLIMIT_FSIZE`); `None`: the sandbox's default.
    pub file_size_bytes: Option<u64>,
    pub arguments: Vec<String>,
    /// One file for both streams, in the order they were written.
    pub redirect_stderr: bool,
}

/// What one run gave: the sandbox's outcome (with stdout and stderr in it).
pub type Ran = RunOutcome;

/// The program language of `id`, with the multi-file programs' scripts language.
fn language_of<'l>(
    judge: &'l Judge<'_>,
    id: &str,
    scripts: &'l mut Option<Language>,
) -> Result<&'l Language, JudgeError> {
    if id == MULTI_FILE {
        return Ok(scripts.insert(multi_file_language()));
    }
    judge
        .languages()
        .get(id)
        .ok_or_else(|| JudgeError::Language(judge.languages().why_not(id)))
}

/// A program of `compile` and `run` scripts (POSIX sh).
fn multi_file_language() -> Language {
    let mut config = crate::language::scripts_language().config;
    config.id = MULTI_FILE.into();
    config.name = "Multi-file program".into();
    config.compile = Some(
        [
            "/bin/sh",
            "-c",
            "cd /job && if [ -f compile ]; then /bin/sh ./compile; fi",
        ]
        .map(str::to_string)
        .to_vec(),
    );
    config.run = ["/bin/sh", "/job/run"].map(str::to_string).to_vec();
    Language {
        config,
        version: "POSIX sh".into(),
    }
}

/// `config` with `options` before its sources (`{sources}` or `{entry}`).
fn with_compiler_options(config: &LanguageConfig, options: &[String]) -> LanguageConfig {
    let mut config = config.clone();
    if let Some(command) = config.compile.as_mut() {
        let at = command
            .iter()
            .position(|w| w.contains('{'))
            .unwrap_or(command.len());
        command.splice(at..at, options.iter().cloned());
    }
    config
}

impl<'a> Judge<'a> {
    /// Builds `source` in `language_id` (compiling it in the sandbox when the language has a
    /// compile step).
    pub fn build(
        &self,
        language_id: &str,
        source: &[u8],
        options: &BuildOptions,
    ) -> Result<Compilation, JudgeError> {
        let mut scripts = None;
        let language = language_of(self, language_id, &mut scripts)?;
        let mut files = if language_id == MULTI_FILE {
            ProgramFiles {
                files: Vec::new(),
                entry: "run".into(),
                main_class: "run".into(),
            }
        } else {
            ProgramFiles::single(&language.config, source)
        };
        // Files beside the source never replace it.
        let extra: Vec<_> = options
            .files
            .iter()
            .filter(|(name, _)| !files.files.iter().any(|(n, _)| n == name))
            .cloned()
            .collect();
        files.files.extend(extra);
        let mut config = with_compiler_options(&language.config, &options.compiler_options);
        if options.skip_checks && config.compile_checks_only {
            config.compile = None;
        }
        let language = Language {
            config,
            version: language.version.clone(),
        };
        self.compile(&language, &files, language.config.compile_limits)
    }

    /// Runs a built program once on `stdin`.
    pub fn run_built(
        &self,
        program: &Compiled,
        stdin: Vec<u8>,
        options: &RunOptions,
        abort: &Abort,
    ) -> Result<Ran, JudgeError> {
        let config = &program.language().config;
        let memory_mib = options.memory_kib.div_ceil(1024);
        let limits = Limits {
            cpu_time_ms: options.cpu_time_ms + options.cpu_extra_ms,
            wall_time_ms: options.wall_time_ms,
            memory_bytes: (memory_mib + program.memory_overhead_mib()) << 20,
            pids: options.processes.unwrap_or(0).max(config.run_pids),
            output_bytes: options.output_bytes,
            stderr_bytes: options.output_bytes,
            stack_bytes: options.stack_kib.map(|kib| (kib << 10).max(64 << 10)),
            file_size_bytes: options
                .file_size_bytes
                .unwrap_or(Limits::default().file_size_bytes),
            ..Limits::default()
        };
        let spec = program
            .spec(memory_mib, &options.arguments, limits)
            .stdin(Stdin::Bytes(stdin));
        if !options.redirect_stderr {
            return abort
                .run(self.sandbox(), &spec, PassedFds::default())
                .map_err(|e| JudgeError::Language(format!("invalid run: {e}")));
        }
        // Both streams into one file of the judge's: their bytes in the order written.
        let mut merged = crate::workdir::file()?;
        let spec = spec.stdout(Stdout::Passed).stderr(Stderr::Passed);
        let fds = PassedFds {
            stdin: None,
            stdout: Some(merged.try_clone()?.into()),
            stderr: Some(merged.try_clone()?.into()),
        };
        let mut outcome = abort
            .run(self.sandbox(), &spec, fds)
            .map_err(|e| JudgeError::Language(format!("invalid run: {e}")))?;
        merged.seek(SeekFrom::Start(0))?;
        merged
            .take(options.output_bytes)
            .read_to_end(&mut outcome.stdout)?;
        Ok(outcome)
    }
}

/// Why an archive of files could not be unpacked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("additional files: {0}")]
pub struct ArchiveError(pub String);

/// The files of a zip archive (directories flattened into relative paths), at most
/// `max_bytes` in all; a path that leaves the directory, or a link, is refused.
pub fn unzip(bytes: &[u8], max_bytes: u64) -> Result<Vec<(String, Vec<u8>)>, ArchiveError> {
    let bad = |e: &dyn std::fmt::Display| ArchiveError(e.to_string());
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| bad(&e))?;
    let mut files = Vec::new();
    let mut total = 0u64;
    for index in 0..archive.len() {
        let mut entry = archive.by_index(index).map_err(|e| bad(&e))?;
        if entry.is_dir() {
            continue;
        }
        if entry.is_symlink() {
            return Err(ArchiveError(format!("{} is a link", entry.name())));
        }
        let name = entry
            .enclosed_name()
            .ok_or_else(|| ArchiveError(format!("{} leaves the directory", entry.name())))?
            .to_string_lossy()
            .into_owned();
        let mut data = Vec::new();
        (&mut entry)
            .take(max_bytes.saturating_sub(total) + 1)
            .read_to_end(&mut data)
            .map_err(|e| bad(&e))?;
        total += data.len() as u64;
        if total > max_bytes {
            return Err(ArchiveError(format!(
                "more than {} KiB unpacked",
                max_bytes >> 10
            )));
        }
        files.push((name, data));
    }
    Ok(files)
}

/// Whether `output` is `expected` once each line loses its trailing whitespace and the
/// trailing blank lines are dropped (leading whitespace counts).
pub fn lines_match(expected: &[u8], output: &[u8]) -> bool {
    fn normal(text: &[u8]) -> Vec<&[u8]> {
        let trim = |line: &[u8]| -> usize {
            line.iter()
                .rposition(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c | 0))
                .map_or(0, |i| i + 1)
        };
        let mut lines: Vec<&[u8]> = text.split(|b| *b == b'\n').map(|l| &l[..trim(l)]).collect();
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        lines
    }
    normal(expected) == normal(output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_match_without_trailing_whitespace() {
        for (expected, output, matches) in [
            ("3\n", "3", true),
            ("3", "3 \n", true),
            ("3", "3\r\n\n\n", true),
            ("a\nb", "a  \nb\t\n", true),
            ("3", " 3", false),
            ("a\n\nb", "a\nb", false),
            ("", "", true),
            ("", "\n \n", true),
            ("1", "2", false),
        ] {
            assert_eq!(
                lines_match(expected.as_bytes(), output.as_bytes()),
                matches,
                "{expected:?} {output:?}"
            );
        }
    }

    #[test]
    fn compiler_options_go_before_the_sources() {
        let config = crate::language::default_languages()
            .into_iter()
            .find(|c| c.id == "go")
            .unwrap();
        let changed = with_compiler_options(&config, &["-gcflags=-N".into()]);
        assert_eq!(
            changed.compile.unwrap(),
            [
                "/usr/bin/go",
                "build",
                "-o",
                "/job/main",
                "-gcflags=-N",
                "{sources}"
            ]
        );
    }

    #[test]
    fn archives_unpack_within_their_cap_and_directory() {
        use std::io::Write;
        let mut buffer = std::io::Cursor::new(Vec::new());
        {
            let mut zip = zip::ZipWriter::new(&mut buffer);
            let options = zip::write::SimpleFileOptions::default();
            zip.start_file("run", options).unwrap();
            zip.write_all(b"echo hi\n").unwrap();
            zip.add_directory("lib/", options).unwrap();
            zip.start_file("lib/data.txt", options).unwrap();
            zip.write_all(&[b'x'; 100]).unwrap();
            zip.finish().unwrap();
        }
        let bytes = buffer.into_inner();
        let files = unzip(&bytes, 1024).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(files[1].0, "lib/data.txt");
        assert!(unzip(&bytes, 50).unwrap_err().0.contains("more than"));
        assert!(unzip(b"not a zip", 1024).is_err());
    }
}
