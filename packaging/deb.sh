#!/usr/bin/env bash
# packaging/deb.sh [TARGET]
#
# Builds the Debian package with cargo-deb (`cargo install cargo-deb --locked`) from the release
# executables of TARGET (default x86_64-unknown-linux-musl: static, so one .deb installs on any
# Debian or Ubuntu release of that architecture), after packaging/assets.sh has written
# target/assets/ (man pages, completions, widget scripts calling /usr/bin/opsai). Writes
# dist/opsai_VERSION-1_ARCH.deb and its .sha256. Builds the executables first when they are missing.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

target=${1:-x86_64-unknown-linux-musl}
built=target/$target/release
if [[ ! -x $built/opsai || ! -x $built/opsai-sandbox-helper ]]; then
    cargo build --release --locked --target "$target" --bins
fi
host=$(rustc -vV | sed -n 's/^host: //p')
assets_bin=${OPSAI_ASSETS_BIN:-$built/opsai}
if [[ -z ${OPSAI_ASSETS_BIN:-} && ${target%%-*} != "${host%%-*}" ]]; then
    echo "deb.sh: $target does not run here; set OPSAI_ASSETS_BIN to a host opsai" >&2
    exit 1
fi
packaging/assets.sh "$assets_bin" target/assets /usr/bin/opsai

mkdir -p dist
deb=$(cargo deb --no-build --locked --target "$target" --output dist/ | tail -n 1)
[[ -f $deb ]] || { echo "deb.sh: cargo deb printed no package path ($deb)" >&2; exit 1; }
(cd dist && sha256sum "$(basename "$deb")" >"$(basename "$deb").sha256")
echo "==> $deb"
