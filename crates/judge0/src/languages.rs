//! Judge0's language ids for our languages: the id Judge0 CE 1.13.1 gives the same language
//! family (so clients that hard-code ids, or map names to ids by version as the official SDK
//! does, keep working), named with the version this machine really has.

use crate::ordered::Object;

/// One of our languages as Judge0 knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Language {
    pub id: u32,
    pub name: String,
    /// Our language id.
    pub ours: String,
    /// It has a compile step: Judge0 takes compiler options for it.
    pub compiled: bool,
    pub source_file: String,
    pub compile_cmd: Option<String>,
    pub run_cmd: String,
}

/// What the composition root knows of one of our available languages.
#[derive(Debug, Clone)]
pub struct Available {
    pub id: String,
    pub version: String,
    pub source_file: String,
    /// The compile command, when one makes the program (not a mere syntax check).
    pub compile: Option<Vec<String>>,
    pub run: Vec<String>,
}

/// Judge0 id, family name, our language id.
const FAMILIES: &[(u32, &str, &str)] = &[
    (46, "Bash", "bash"),
    (50, "C (GCC", "c"),
    (51, "C# (Mono", "csharp"),
    (52, "C++ (GCC", "cpp17"),
    (54, "C++ (GCC", "cpp20"),
    (55, "Common Lisp (SBCL", "lisp"),
    (56, "D (LDC", "d"),
    (57, "Elixir (", "elixir"),
    (58, "Erlang (OTP", "erlang"),
    (59, "Fortran (GFortran", "fortran"),
    (60, "Go (", "go"),
    (61, "Haskell (GHC", "haskell"),
    (62, "Java (OpenJDK", "java"),
    (63, "JavaScript (Node.js", "javascript"),
    (64, "Lua (", "lua"),
    (65, "OCaml (", "ocaml"),
    (67, "Pascal (FPC", "pascal"),
    (68, "PHP (", "php"),
    (69, "Prolog (SWI-Prolog", "prolog"),
    (71, "Python (", "python3"),
    (72, "Ruby (", "ruby"),
    (73, "Rust (", "rust"),
    (78, "Kotlin (", "kotlin"),
    (79, "Objective-C (GCC", "objectivec"),
    (81, "Scala (", "scala"),
];

/// Ids Judge0 gave older versions of a family we serve: accepted, not listed.
const ALIASES: &[(u32, u32)] = &[(48, 50), (49, 50), (53, 52)];

/// The multi-file program (`compile` and `run` scripts in `additional_files`).
pub const MULTI_FILE: u32 = 89;

/// Judge0 CE 1.13.1's archived languages (ids 1–42): listed by `/languages/all`, refused
/// as archived.
const ARCHIVED: &[&str] = &[
    "Bash (4.4)",
    "Bash (4.0)",
    "Basic (fbc 1.05.0)",
    "C (gcc 7.2.0)",
    "C (gcc 6.4.0)",
    "C (gcc 6.3.0)",
    "C (gcc 5.4.0)",
    "C (gcc 4.9.4)",
    "C (gcc 4.8.5)",
    "C++ (g++ 7.2.0)",
    "C++ (g++ 6.4.0)",
    "C++ (g++ 6.3.0)",
    "C++ (g++ 5.4.0)",
    "C++ (g++ 4.9.4)",
    "C++ (g++ 4.8.5)",
    "C# (mono 5.4.0.167)",
    "C# (mono 5.2.0.224)",
    "Clojure (1.8.0)",
    "Crystal (0.23.1)",
    "Elixir (1.5.1)",
    "Erlang (OTP 20.0)",
    "Go (1.9)",
    "Haskell (ghc 8.2.1)",
    "Haskell (ghc 8.0.2)",
    "Insect (5.0.0)",
    "Java (OpenJDK 9 with Eclipse OpenJ9)",
    "Java (OpenJDK 8)",
    "Java (OpenJDK 7)",
    "JavaScript (nodejs 8.5.0)",
    "JavaScript (nodejs 7.10.1)",
    "OCaml (4.05.0)",
    "Octave (4.2.0)",
    "Pascal (fpc 3.0.0)",
    "Python (3.6.0)",
    "Python (3.5.3)",
    "Python (2.7.9)",
    "Python (2.6.9)",
    "Ruby (2.4.0)",
    "Ruby (2.3.3)",
    "Ruby (2.2.6)",
    "Ruby (2.1.9)",
    "Rust (1.20.0)",
];

/// Judge0's id for one of our languages (its family's id), whether or not it works here.
pub fn judge0_id(ours: &str) -> Option<u32> {
    if ours == "multi" {
        return Some(MULTI_FILE);
    }
    FAMILIES
        .iter()
        .find(|(_, _, id)| *id == ours)
        .map(|(id, _, _)| *id)
}

/// The version number in a version command's output (`gcc (Debian 12.2.0-14) 12.2.0` →
/// `12.2.0`, `go version go1.19.8 linux/amd64` → `1.19.8`).
pub fn version_number(text: &str) -> String {
    text.split_whitespace()
        .map(|word| {
            let start = word
                .find(|c: char| c.is_ascii_digit())
                .unwrap_or(word.len());
            let rest = &word[start..];
            let end = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            rest[..end].trim_end_matches('.')
        })
        .find(|number| number.contains('.'))
        .unwrap_or("")
        .to_string()
}

/// The languages this server offers, by Judge0 id.
#[derive(Debug, Clone, Default)]
pub struct Languages {
    active: Vec<Language>,
}

/// Why a language id cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Unknown,
    Archived,
}

impl Languages {
    /// Judge0's ids for `available` (our languages that work here), plus the multi-file
    /// program.
    pub fn new(available: &[Available]) -> Self {
        let mut active: Vec<Language> = FAMILIES
            .iter()
            .filter_map(|&(id, family, ours)| {
                let language = available.iter().find(|l| l.id == ours)?;
                let version = version_number(&language.version);
                let name = match (family.ends_with('('), ours) {
                    (_, "cpp20") => format!("{family} {version}, C++20)"),
                    (true, _) => format!("{family}{version})"),
                    (false, _) => format!("{family} {version})"),
                };
                Some(Language {
                    id,
                    name,
                    ours: ours.to_string(),
                    compiled: language.compile.is_some(),
                    source_file: language.source_file.clone(),
                    compile_cmd: language.compile.as_ref().map(|c| c.join(" ")),
                    run_cmd: language.run.join(" "),
                })
            })
            .collect();
        active.push(Language {
            id: MULTI_FILE,
            name: "Multi-file program".into(),
            ours: "multi".into(),
            compiled: false,
            source_file: String::new(),
            compile_cmd: None,
            run_cmd: "/bin/sh run".into(),
        });
        active.sort_by_key(|l| l.name.to_lowercase());
        Self { active }
    }

    /// The language of a Judge0 id.
    pub fn get(&self, id: i64) -> Result<&Language, Refusal> {
        let id = ALIASES
            .iter()
            .find(|(alias, _)| i64::from(*alias) == id)
            .map_or(id, |(_, to)| i64::from(*to));
        if let Some(language) = self.active.iter().find(|l| i64::from(l.id) == id) {
            return Ok(language);
        }
        if (1..=ARCHIVED.len() as i64).contains(&id) {
            return Err(Refusal::Archived);
        }
        Err(Refusal::Unknown)
    }

    /// Our language's Judge0 id (the execution backend's mapping).
    pub fn id_of(&self, ours: &str) -> Option<u32> {
        self.active.iter().find(|l| l.ours == ours).map(|l| l.id)
    }

    /// `GET /languages`.
    pub fn list(&self) -> String {
        crate::ordered::array(self.active.iter().map(|l| {
            Object::new()
                .with("id", l.id)
                .with("name", &l.name)
                .render()
        }))
    }

    /// `GET /languages/all`: ours and Judge0's archived ones.
    pub fn all(&self) -> String {
        let active = self.active.iter().map(|l| (l.id, l.name.clone(), false));
        let archived = ARCHIVED
            .iter()
            .enumerate()
            .map(|(i, name)| (i as u32 + 1, name.to_string(), true));
        let mut all: Vec<(u32, String, bool)> = active.chain(archived).collect();
        all.sort_by_key(|(_, name, _)| name.to_lowercase());
        crate::ordered::array(all.into_iter().map(|(id, name, archived)| {
            Object::new()
                .with("id", id)
                .with("name", name)
                .with("is_archived", archived)
                .render()
        }))
    }

    /// `GET /languages/{id}`; `None` for an id Judge0 never had.
    pub fn detail(&self, id: i64) -> Option<String> {
        if let Ok(l) = self.get(id) {
            return Some(
                Object::new()
                    .with("id", l.id)
                    .with("name", &l.name)
                    .with("is_archived", false)
                    .with(
                        "source_file",
                        (!l.source_file.is_empty()).then_some(&l.source_file),
                    )
                    .with("compile_cmd", &l.compile_cmd)
                    .with("run_cmd", (l.id != MULTI_FILE).then_some(&l.run_cmd))
                    .render(),
            );
        }
        let name = ARCHIVED.get(usize::try_from(id).ok()?.checked_sub(1)?)?;
        Some(
            Object::new()
                .with("id", id)
                .with("name", name)
                .with("is_archived", true)
                .with("source_file", None::<String>)
                .with("compile_cmd", None::<String>)
                .with("run_cmd", None::<String>)
                .render(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_version_commands() {
        for (text, version) in [
            ("gcc (Debian 12.2.0-14) 12.2.0", "12.2.0"),
            ("Python 3.11.2", "3.11.2"),
            ("openjdk version \"17.0.13\" 2024-10-15", "17.0.13"),
            ("v20.20.2", "20.20.2"),
            ("go version go1.19.8 linux/amd64", "1.19.8"),
            ("rustc 1.95.0 (59807616e 2026-04-14)", "1.95.0"),
            (
                "GNU bash, version 5.2.15(1)-release (x86_64-pc-linux-gnu)",
                "5.2.15",
            ),
            (
                "ruby 3.1.2p20 (2022-04-12 revision 4491bb740a) [x86_64-linux-gnu]",
                "3.1.2",
            ),
        ] {
            assert_eq!(version_number(text), version, "{text}");
        }
    }

    fn available(id: &str, version: &str) -> Available {
        Available {
            id: id.into(),
            version: version.into(),
            source_file: "main.x".into(),
            compile: None,
            run: vec!["/job/main".into()],
        }
    }

    #[test]
    fn ids_follow_judge0_families_with_our_versions() {
        let languages = Languages::new(&[
            available("python3", "Python 3.11.2"),
            available("c", "gcc (Debian 12.2.0-14) 12.2.0"),
            available("cpp17", "g++ (Debian 12.2.0-14) 12.2.0"),
        ]);
        assert_eq!(languages.get(71).unwrap().name, "Python (3.11.2)");
        assert_eq!(languages.get(50).unwrap().name, "C (GCC 12.2.0)");
        assert_eq!(
            languages.get(48).unwrap().ours,
            "c",
            "an older GCC id is an alias"
        );
        assert_eq!(languages.get(4), Err(Refusal::Archived));
        assert_eq!(
            languages.get(62),
            Err(Refusal::Unknown),
            "Java is not available here"
        );
        assert_eq!(languages.get(9999), Err(Refusal::Unknown));
        assert_eq!(languages.id_of("python3"), Some(71));
        let list: serde_json::Value = serde_json::from_str(&languages.list()).unwrap();
        assert_eq!(list.as_array().unwrap().len(), 4, "{list}");
        let all: serde_json::Value = serde_json::from_str(&languages.all()).unwrap();
        assert_eq!(all.as_array().unwrap().len(), 4 + 42);
        assert!(languages
            .detail(3)
            .unwrap()
            .contains("\"is_archived\":true"));
        assert!(languages.detail(100).is_none());
    }
}
