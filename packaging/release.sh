#!/usr/bin/env bash
# packaging/release.sh [TARGET...]
# packaging/release.sh --layout TARGET   print the archive's name and its executables' paths inside
#                                        it, building nothing (tests/suite/packaging.rs compares them
#                                        with the binstall templates)
#
# Builds static release executables for each TARGET (default x86_64-unknown-linux-musl) with the
# release profile and writes, per target, into dist/:
#   opsai-VERSION-TARGET.tar.gz         one top directory opsai-VERSION-TARGET/ holding opsai,
#                                       opsai-sandbox-helper, README.md, LICENSE, man/, completions/,
#                                       shell/ (widget scripts calling the `opsai` in PATH)
#   opsai-VERSION-TARGET.tar.gz.sha256  `sha256sum -c` format
# The names and layout are what `cargo binstall` expects (Cargo.toml, package.metadata.binstall).
# Needs the rustup target and, for musl, musl-gcc (Debian: `apt-get install musl-tools`) for the C
# parts (bundled SQLite, tree-sitter, aws-lc). Heavy: lto and one codegen unit; run it niced.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
[[ -n $version ]] || { echo "release.sh: no version in Cargo.toml" >&2; exit 1; }
executables=(opsai opsai-sandbox-helper)

# The one place the names are made: the build below and --layout both use it.
archive_name() { echo "opsai-$version-$1"; }

if [[ ${1:-} == --layout ]]; then
    (($# == 2)) || { echo "usage: $0 --layout TARGET" >&2; exit 2; }
    name=$(archive_name "$2")
    echo "$name.tar.gz"
    for exe in "${executables[@]}"; do echo "$name/$exe"; done
    exit 0
fi

targets=("$@")
((${#targets[@]})) || targets=(x86_64-unknown-linux-musl)
host=$(rustc -vV | sed -n 's/^host: //p')
# Reproducible archives: file times from the last commit, not from this build.
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

mkdir -p dist
for target in "${targets[@]}"; do
    echo "==> building $target"
    cargo build --release --locked --target "$target" --bins
    built=target/$target/release
    name=$(archive_name "$target")
    stage=target/dist-stage/$name
    rm -rf "${stage:?}"
    mkdir -p "$stage"
    for exe in "${executables[@]}"; do install -m 755 "$built/$exe" "$stage/"; done
    install -m 644 README.md LICENSE "$stage/"

    # Man pages, completions and scripts come from an opsai that runs here: this target's when it
    # is the host's architecture, else OPSAI_ASSETS_BIN (they do not depend on the architecture).
    assets_bin=${OPSAI_ASSETS_BIN:-}
    if [[ -z $assets_bin ]]; then
        if [[ ${target%%-*} == "${host%%-*}" ]]; then
            assets_bin=$built/opsai
        else
            echo "release.sh: $target does not run here; set OPSAI_ASSETS_BIN to a host opsai" >&2
            exit 1
        fi
    fi
    packaging/assets.sh "$assets_bin" "$stage" opsai

    # Static, or the tarball would not run on the machines it is for.
    if [[ $target == *-musl* ]] && ! file -L "$built/opsai" "$built/opsai-sandbox-helper" | grep -q 'static'; then
        echo "release.sh: $built/opsai is not statically linked:" >&2
        file -L "$built/opsai" >&2
        exit 1
    fi

    find "$stage" -exec touch -h -d "@$epoch" {} +
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
        -C target/dist-stage -cf - "$name" | gzip -n -9 >"dist/$name.tar.gz"
    (cd dist && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
    echo "==> dist/$name.tar.gz ($(du -h "dist/$name.tar.gz" | cut -f1))"
done
