//! The languages of the package format's language list beyond the core ones, with Debian's
//! toolchains (`scripts/install-toolchains.sh` installs them). Ids are the format's codes.
//! Each is probed at start-up like every language: one whose toolchain is missing is listed
//! as unavailable with the reason.

use sandbox::Profile;

use crate::language::{language, LanguageConfig};

/// A JVM language other than Java: its compiler (itself a JVM program, slow and hungry) and
/// `java` with the language's runtime library on the class path.
fn jvm(
    (id, name, file): (&str, &str, &str),
    compile: &[&str],
    class_path: &str,
    version: &[&str],
) -> LanguageConfig {
    let mut config = language(
        id,
        name,
        file,
        Some(compile),
        &[
            "/usr/bin/java",
            "-Xmx{memory_mib}m",
            "-Xss64m",
            "-XX:+UseSerialGC",
            "-XX:-UsePerfData",
            "-cp",
            class_path,
            "{main_class}",
        ],
        version,
        Profile::Jvm,
    );
    config.compile_limits.memory_mib = 2048;
    config.compile_limits.cpu_time_ms = 60_000;
    config.compile_limits.pids = 128;
    config.run_pids = 64;
    config.memory_overhead_mib = 256;
    config.env = vec![("HOME".into(), "/tmp".into())];
    config
}

pub(crate) fn more_languages() -> Vec<LanguageConfig> {
    let native = |id: &str, name: &str, file: &str, compile: &[&str], version: &[&str]| {
        language(
            id,
            name,
            file,
            Some(compile),
            &["/job/main"],
            version,
            Profile::Native,
        )
    };
    let mut csharp = language(
        "csharp",
        "C# (Mono)",
        "main.cs",
        Some(&[
            "/usr/bin/mcs",
            "-optimize+",
            "-out:/job/main.exe",
            "{sources}",
        ]),
        &["/usr/bin/mono", "/job/main.exe"],
        &["/usr/bin/mono", "--version"],
        Profile::Jvm,
    );
    csharp.run_pids = 64;
    csharp.compile_limits.pids = 64;
    csharp.memory_overhead_mib = 64;
    let d = native(
        "d",
        "D (LDC)",
        "main.d",
        &["/usr/bin/ldc2", "-O", "-of=/job/main", "{sources}"],
        &["/usr/bin/ldc2", "--version"],
    );
    let mut haskell = native(
        "haskell",
        "Haskell (GHC)",
        "main.hs",
        &[
            "/usr/bin/ghc",
            "-O2",
            "-outputdir",
            "/tmp/ghc",
            "-o",
            "/job/main",
            "{sources}",
        ],
        &["/usr/bin/ghc", "--version"],
    );
    haskell.compile_limits.memory_mib = 2048;
    haskell.env = vec![("HOME".into(), "/tmp".into())];
    // GHC's package database is a link from /usr/lib/ghc into /var/lib/ghc.
    haskell.binds = vec![sandbox::Bind::read_only("/var/lib/ghc", "/var/lib/ghc")];
    let kotlin = jvm(
        ("kotlin", "Kotlin", "main.kt"),
        &["/usr/bin/kotlinc", "-nowarn", "-d", "/job", "{sources}"],
        "/job:/usr/share/java/kotlin-stdlib.jar",
        &["/usr/bin/kotlinc", "-version"],
    );
    let scala = jvm(
        ("scala", "Scala", "main.scala"),
        &["/usr/bin/scalac", "-nowarn", "-d", "/job", "{sources}"],
        "/job:/usr/share/scala/lib/scala-library.jar",
        &["/usr/bin/scalac", "-version"],
    );
    let mut lisp = language(
        "lisp",
        "Common Lisp (SBCL)",
        "main.lisp",
        None,
        &["/usr/bin/sbcl", "--script", "{entry}"],
        &["/usr/bin/sbcl", "--version"],
        Profile::Native,
    );
    lisp.memory_overhead_mib = 64;
    let mut lua = language(
        "lua",
        "Lua",
        "main.lua",
        Some(&["/usr/bin/luac5.4", "-p", "{entry}"]),
        &["/usr/bin/lua5.4", "{entry}"],
        &["/usr/bin/lua5.4", "-v"],
        Profile::Native,
    );
    let mut nim = native(
        "nim",
        "Nim",
        "main.nim",
        &[
            "/usr/bin/nim",
            "compile",
            "-d:release",
            "--hints:off",
            "--nimcache:/tmp/nimcache",
            "-o:/job/main",
            "{entry}",
        ],
        &["/usr/bin/nim", "--version"],
    );
    nim.env = vec![("HOME".into(), "/tmp".into())];
    let objectivec = native(
        "objectivec",
        "Objective-C (GCC)",
        "main.m",
        &[
            "/usr/bin/gcc",
            "-x",
            "objective-c",
            "-O2",
            "-o",
            "/job/main",
            "{sources}",
            "-lobjc",
        ],
        // GCC without its Objective-C front end (Debian's gobjc) is no Objective-C compiler.
        &[
            "/bin/sh",
            "-c",
            "[ -x \"$(/usr/bin/gcc -print-prog-name=cc1obj)\" ] && exec /usr/bin/gcc --version",
        ],
    );
    let ocaml = native(
        "ocaml",
        "OCaml",
        "main.ml",
        &["/usr/bin/ocamlopt", "-o", "/job/main", "{sources}"],
        &["/usr/bin/ocamlopt", "-version"],
    );
    let pascal = native(
        "pascal",
        "Pascal (FPC)",
        "main.pas",
        &["/usr/bin/fpc", "-O2", "-v0", "-o/job/main", "{entry}"],
        &["/usr/bin/fpc", "-iV"],
    );
    let mut php = language(
        "php",
        "PHP",
        "main.php",
        Some(&["/usr/bin/php", "-l", "{entry}"]),
        &["/usr/bin/php", "{entry}"],
        &["/usr/bin/php", "--version"],
        Profile::Native,
    );
    let mut prolog = language(
        "prolog",
        "Prolog (SWI)",
        "main.pl",
        None,
        &[
            "/usr/bin/swipl",
            "-q",
            "-g",
            "main",
            "-t",
            "halt",
            "{entry}",
        ],
        &["/usr/bin/swipl", "--version"],
        Profile::Native,
    );
    prolog.run_pids = 32;
    let mut ruby = language(
        "ruby",
        "Ruby",
        "main.rb",
        Some(&["/usr/bin/ruby", "-c", "{entry}"]),
        &["/usr/bin/ruby", "{entry}"],
        &["/usr/bin/ruby", "--version"],
        Profile::Native,
    );
    let fortran = native(
        "fortran",
        "Fortran (GFortran)",
        "main.f90",
        &["/usr/bin/gfortran", "-O2", "-o", "/job/main", "{sources}"],
        &["/usr/bin/gfortran", "--version"],
    );
    let ada = native(
        "ada",
        "Ada (GNAT)",
        "main.adb",
        &[
            "/usr/bin/gnatmake",
            "-q",
            "-O2",
            "-o",
            "/job/main",
            "{entry}",
        ],
        &["/usr/bin/gnat", "--version"],
    );
    let mut erlang = language(
        "erlang",
        "Erlang",
        "main.erl",
        Some(&["/usr/bin/erlc", "-o", "/job", "{sources}"]),
        &[
            "/usr/bin/erl",
            "-noshell",
            "-s",
            "{main_class}",
            "main",
            "-s",
            "init",
            "stop",
        ],
        &[
            "/usr/bin/erl",
            "-noshell",
            "-eval",
            "io:fwrite(erlang:system_info(otp_release)), halt().",
        ],
        Profile::Jvm,
    );
    erlang.run_pids = 64;
    erlang.compile_limits.pids = 64;
    erlang.env = vec![("HOME".into(), "/tmp".into())];
    let mut elixir = language(
        "elixir",
        "Elixir",
        "main.ex",
        None,
        &["/usr/bin/elixir", "{entry}"],
        &["/usr/bin/elixir", "--version"],
        Profile::Jvm,
    );
    elixir.run_pids = 64;
    elixir.env = vec![("HOME".into(), "/tmp".into())];
    let mut racket = language(
        "racket",
        "Racket",
        "main.rkt",
        None,
        &["/usr/bin/racket", "{entry}"],
        &["/usr/bin/racket", "--version"],
        Profile::Native,
    );
    racket.memory_overhead_mib = 64;
    racket.env = vec![("HOME".into(), "/tmp".into())];
    let mut bash = language(
        "bash",
        "Bash",
        "main.sh",
        Some(&["/bin/bash", "-n", "{entry}"]),
        &["/bin/bash", "{entry}"],
        &["/bin/bash", "--version"],
        Profile::Native,
    );
    for checked in [&mut lua, &mut php, &mut ruby, &mut bash] {
        checked.compile_checks_only = true;
    }
    vec![
        csharp, d, haskell, kotlin, scala, lisp, lua, nim, objectivec, ocaml, pascal, php, prolog,
        ruby, fortran, ada, erlang, elixir, racket, bash,
    ]
}
