//! A program's files as they go into its job directory, and what the placeholders of a
//! language's commands stand for there:
//!
//! - `{sources}`: every file of the program in the language (`/job/a.c /job/b.c`; headers and
//!   data files are not passed), one argument each;
//! - `{entry}`: the file that starts the program (`/job/__main__.py`);
//! - `{main_class}`: for Java, the class whose `main` runs (the file's public class, not
//!   assumed to be `Main`).
//!
//! A single source is stored under the language's `source_file` (`main.cpp`), except a Java
//! source, which must be stored under its public class's name. A directory program (the
//! format's multi-file submissions and validators) keeps its file names; its entry point is
//! the one named by `submissions.yaml`, else the language's default (`__main__.py`,
//! `main.js`, the class with `main`), else its only source file.

use crate::language::LanguageConfig;
use crate::package::language_of;

/// The files of one program and its entry point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramFiles {
    pub files: Vec<(String, Vec<u8>)>,
    /// The file name `{entry}` stands for.
    pub entry: String,
    /// What `{main_class}` stands for.
    pub main_class: String,
}

/// The package format's code of a language (`cpp` for `cpp17` and `cpp20`, `python3` for
/// `pypy3` too): languages with one code take the same files.
pub fn language_code(id: &str) -> &str {
    match id {
        "cpp17" | "cpp20" => "cpp",
        "pypy3" => "python3",
        other => other,
    }
}

/// This judge's language for a language code of the format (`cpp` → `cpp17`).
pub fn language_for_code(code: &str) -> &str {
    match code {
        "cpp" => "cpp17",
        other => other,
    }
}

fn is_source_of(config: &LanguageConfig, name: &str) -> bool {
    language_of(std::path::Path::new(name))
        .is_some_and(|id| language_code(id) == language_code(&config.id))
}

/// The class a Java source declares public, else the one with `main`, else `Main`.
pub fn java_main_class(source: &str) -> String {
    let class_after = |line: &str| -> Option<String> {
        let mut words = line.split(|c: char| c.is_whitespace() || c == '{');
        words.by_ref().find(|w| *w == "class")?;
        let name: String = words
            .find(|w| !w.is_empty())?
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
            .collect();
        (!name.is_empty()).then_some(name)
    };
    let code: Vec<&str> = source
        .lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect();
    let public = code.iter().find_map(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.contains(&"public") && words.contains(&"class") {
            class_after(line)
        } else {
            None
        }
    });
    public
        .or_else(|| {
            // The last class declared before `static void main`.
            let main = code.iter().position(|l| l.contains("static void main"))?;
            code[..=main].iter().rev().find_map(|l| class_after(l))
        })
        .unwrap_or_else(|| "Main".into())
}

/// The identifier after the first `keyword` that starts a declaration (`object Main`,
/// `procedure Sum is`), outside `--` and `//` comments.
fn declared_after(source: &str, keyword: &str) -> Option<String> {
    source.lines().find_map(|line| {
        let code = line.split("--").next()?.split("//").next()?;
        let mut words = code.split_whitespace();
        words.by_ref().find(|w| w.eq_ignore_ascii_case(keyword))?;
        let name: String = words
            .next()?
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        (!name.is_empty()).then_some(name)
    })
}

impl ProgramFiles {
    /// One source file.
    pub fn single(config: &LanguageConfig, source: &[u8]) -> Self {
        let text = String::from_utf8_lossy(source);
        // Languages whose file name must follow the code's own unit name.
        let named = |file: String, main_class: String| Self {
            files: vec![(file.clone(), source.to_vec())],
            entry: file,
            main_class,
        };
        match language_code(&config.id) {
            "java" => {
                let class = java_main_class(&text);
                return named(format!("{class}.java"), class);
            }
            "scala" => {
                let object = declared_after(&text, "object").unwrap_or_else(|| "Main".into());
                return named(format!("{object}.scala"), object);
            }
            "erlang" => {
                let module = text
                    .split_once("-module(")
                    .and_then(|(_, rest)| rest.split_once(')'))
                    .map(|(name, _)| name.trim().to_string())
                    .unwrap_or_else(|| "main".into());
                return named(format!("{module}.erl"), module);
            }
            "ada" => {
                let unit = declared_after(&text, "procedure")
                    .unwrap_or_else(|| "main".into())
                    .to_lowercase();
                return named(format!("{unit}.adb"), unit);
            }
            // kotlinc names the class of `main.kt`'s top-level functions `MainKt`.
            "kotlin" => return named(config.source_file.clone(), "MainKt".into()),
            _ => {}
        }
        Self {
            files: vec![(config.source_file.clone(), source.to_vec())],
            entry: config.source_file.clone(),
            main_class: stem(&config.source_file),
        }
    }

    /// A directory program: its files (name, bytes) and the entry point it names, if any.
    pub fn directory(
        config: &LanguageConfig,
        mut files: Vec<(String, Vec<u8>)>,
        entrypoint: Option<&str>,
    ) -> Result<Self, String> {
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let sources: Vec<&(String, Vec<u8>)> = files
            .iter()
            .filter(|(n, _)| is_source_of(config, n))
            .collect();
        if sources.is_empty() {
            return Err(format!("no {} source file", config.name));
        }
        let has = |name: &str| files.iter().any(|(n, _)| n == name);
        let (entry, main_class) = if language_code(&config.id) == "java" {
            let class = match entrypoint {
                Some(class) => class.trim_end_matches(".java").to_string(),
                None => sources
                    .iter()
                    .find(|(_, bytes)| String::from_utf8_lossy(bytes).contains("static void main"))
                    .map(|(_, bytes)| java_main_class(&String::from_utf8_lossy(bytes)))
                    .unwrap_or_else(|| "Main".into()),
            };
            (format!("{class}.java"), class)
        } else {
            let entry = match entrypoint {
                Some(entry) if has(entry) => entry.to_string(),
                Some(entry) => {
                    return Err(format!("the entry point {entry} is not in the program"))
                }
                None => {
                    let default = match language_code(&config.id) {
                        "python3" => Some("__main__.py"),
                        "javascript" => Some("main.js"),
                        "rust" => Some("main.rs"),
                        _ => None,
                    };
                    match default.filter(|d| has(d)) {
                        Some(default) => default.to_string(),
                        None if sources.len() == 1 => sources[0].0.clone(),
                        // Compiled languages build from all their sources; the first names
                        // the program.
                        None if builds_all_sources(config) => sources[0].0.clone(),
                        None => {
                            return Err(format!(
                            "several {} files and no entry point (name one in submissions.yaml)",
                            config.name
                        ))
                        }
                    }
                }
            };
            let main_class = stem(&entry);
            (entry, main_class)
        };
        Ok(Self {
            files,
            entry,
            main_class,
        })
    }

    /// Adds files that are not the program's own (a package's `include/` directory), replacing
    /// the program's files of the same name.
    pub fn include(&mut self, extra: Vec<(String, Vec<u8>)>) {
        for (name, bytes) in extra {
            match self.files.iter_mut().find(|(n, _)| *n == name) {
                Some(file) => file.1 = bytes,
                None => self.files.push((name, bytes)),
            }
        }
    }

    /// A command with the placeholders filled in; `{sources}` becomes one word per file.
    pub fn expand(&self, config: &LanguageConfig, command: &[String]) -> Vec<String> {
        let mut words = Vec::with_capacity(command.len());
        for word in command {
            if word == "{sources}" {
                words.extend(
                    self.files
                        .iter()
                        .filter(|(n, _)| is_source_of(config, n))
                        .map(|(n, _)| format!("/job/{n}")),
                );
            } else {
                words.push(
                    word.replace("{entry}", &format!("/job/{}", self.entry))
                        .replace("{main_class}", &self.main_class),
                );
            }
        }
        words
    }
}

/// Whether the language's compiler takes every source (`{sources}`), so no file needs to be
/// named the entry point.
fn builds_all_sources(config: &LanguageConfig) -> bool {
    config
        .compile
        .as_ref()
        .is_some_and(|command| command.iter().any(|w| w == "{sources}"))
}

fn stem(name: &str) -> String {
    std::path::Path::new(name)
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::language::default_languages;

    fn config(id: &str) -> LanguageConfig {
        default_languages()
            .into_iter()
            .find(|c| c.id == id)
            .unwrap()
    }

    #[test]
    fn java_classes_are_found_in_the_source() {
        let cases = [
            (
                "public class Different {\n public static void main(String[] a) {}\n}",
                "Different",
            ),
            ("import java.util.*;\n\npublic final class Sum{ }", "Sum"),
            (
                "class Helper {}\nclass Solver {\n  public static void main(String[] a) {}\n}",
                "Solver",
            ),
            (
                "// public class Commented\nclass Main { static void main() {} }",
                "Main",
            ),
            ("", "Main"),
        ];
        for (source, expected) in cases {
            assert_eq!(java_main_class(source), expected, "{source}");
        }
        let program = ProgramFiles::single(&config("java"), b"public class Different {}");
        assert_eq!(program.files[0].0, "Different.java");
        assert_eq!(program.main_class, "Different");
    }

    #[test]
    fn placeholders_expand_to_the_programs_files() {
        let c = config("c");
        let program = ProgramFiles::directory(
            &c,
            vec![
                ("util.h".into(), vec![]),
                ("main.c".into(), vec![]),
                ("util.c".into(), vec![]),
            ],
            None,
        )
        .unwrap();
        let words = program.expand(
            &c,
            &[
                "gcc".into(),
                "{sources}".into(),
                "-o".into(),
                "{entry}".into(),
            ],
        );
        assert_eq!(
            words,
            ["gcc", "/job/main.c", "/job/util.c", "-o", "/job/main.c"]
        );
    }

    #[test]
    fn directory_entry_points_follow_the_language() {
        let python = config("python3");
        let files = |names: &[&str]| names.iter().map(|n| (n.to_string(), vec![])).collect();
        let main =
            ProgramFiles::directory(&python, files(&["util.py", "__main__.py"]), None).unwrap();
        assert_eq!(main.entry, "__main__.py");
        let named =
            ProgramFiles::directory(&python, files(&["main.py", "util.py"]), Some("main.py"))
                .unwrap();
        assert_eq!(named.entry, "main.py");
        let only =
            ProgramFiles::directory(&python, files(&["solve.py", "notes.txt"]), None).unwrap();
        assert_eq!(only.entry, "solve.py");
        let unclear = ProgramFiles::directory(&python, files(&["a.py", "b.py"]), None).unwrap_err();
        assert!(unclear.contains("no entry point"), "{unclear}");
        let missing = ProgramFiles::directory(&python, files(&["a.py"]), Some("b.py")).unwrap_err();
        assert!(missing.contains("b.py"), "{missing}");
        let none = ProgramFiles::directory(&python, files(&["a.cpp"]), None).unwrap_err();
        assert!(none.contains("no Python 3 source"), "{none}");
    }

    #[test]
    fn included_files_replace_the_programs_own() {
        let python = config("python3");
        let mut program = ProgramFiles::single(&python, b"import include");
        program.include(vec![
            ("include.py".into(), b"magic = 1".to_vec()),
            ("main.py".into(), b"driver".to_vec()),
        ]);
        assert_eq!(
            program.files,
            [
                ("main.py".to_string(), b"driver".to_vec()),
                ("include.py".to_string(), b"magic = 1".to_vec())
            ]
        );
    }
}
