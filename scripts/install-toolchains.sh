#!/usr/bin/env bash
# Installs the language toolchains judged here from Debian's packages (the package format's
# language list, as far as Debian has it). Idempotent: installs only what is missing.
set -euo pipefail

PACKAGES=(
    gcc g++ gobjc gfortran gnat             # C, C++, Objective-C, Fortran, Ada
    default-jdk-headless kotlin scala       # Java, Kotlin, Scala
    golang-go                               # Go (Rust is the machine's rustup toolchain)
    pypy3 python3                           # PyPy 3, Python 3
    mono-mcs mono-runtime                   # C#
    ldc                                     # D
    ghc                                     # Haskell
    ocaml-nox                               # OCaml
    fpc                                     # Pascal
    php-cli ruby lua5.4                     # PHP, Ruby, Lua
    nim                                     # Nim
    sbcl                                    # Common Lisp
    swi-prolog-nox                          # Prolog
    erlang-nox elixir                       # Erlang, Elixir
    racket                                  # Racket
    nodejs bash                             # JavaScript, Bash
    pandoc                                  # LaTeX statements, converted for display
)

missing=()
for package in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done
if [ "${#missing[@]}" -eq 0 ]; then
    exit 0
fi
echo "installing toolchains: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null || true
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
