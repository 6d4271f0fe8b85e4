#!/usr/bin/env bash
# The sandbox's cost per command (bench/sandbox.py) for the two builds users get, side by side, as
# root and as a user (nobody), interleaved so that both see the same machine:
#
#   glibc  target/release/           `cargo install`, `cargo build --release` (dynamically linked)
#   static target/x86_64-unknown-linux-musl/release/   the release tarballs and the .deb
#
# The helper that applies the sandbox is exec'd once per command; a static musl executable starts
# in about a quarter of the time a dynamically linked glibc one needs (no loader, no relocations),
# which is most of the difference.
#
#   bench/sandbox-builds.sh [RUNS] [ROUNDS]     # default 300 runs per figure, 3 rounds
#
# Needs root (the user rows run through setpriv); builds what is missing (the static build needs
# `rustup target add x86_64-unknown-linux-musl` and musl-gcc: `apt-get install musl-tools`).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-300}
ROUNDS=${2:-3}
MUSL=x86_64-unknown-linux-musl
TARGET=${CARGO_TARGET_DIR:-target}

[[ $(id -u) == 0 ]] || { echo "bench/sandbox-builds.sh: run as root (the user rows use setpriv)" >&2; exit 2; }
cargo build --release --locked --quiet
builds=("glibc $TARGET/release")
if rustup target list --installed 2>/dev/null | grep -qx "$MUSL" && command -v musl-gcc >/dev/null; then
    cargo build --release --locked --quiet --target "$MUSL"
    builds+=("static $TARGET/$MUSL/release")
else
    echo "bench/sandbox-builds.sh: no static build (rustup target add $MUSL; apt-get install musl-tools)" >&2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root-home" "$work/root-wd" "$work/user-home" "$work/user-wd"
chown 65534:65534 "$work/user-home" "$work/user-wd"
chmod 755 "$work"

# `added=` of one `opsai sandbox --bench` run: the median sandboxed minus the median plain spawn.
added() {
    local who=$1 bin=$2 line
    if [[ $who == root ]]; then
        line=$(cd "$work/root-wd" && OPSAI_HOME="$work/root-home" "$bin" sandbox --bench "$RUNS" -- /bin/sh -c true </dev/null 2>/dev/null)
    else
        line=$(cd "$work/user-wd" && OPSAI_HOME="$work/user-home" setpriv --reuid=65534 --regid=65534 --clear-groups \
            "$bin" sandbox --bench "$RUNS" -- /bin/sh -c true </dev/null 2>/dev/null)
    fi
    sed -n 's/.* added=\([0-9.-]*\) .*/\1/p' <<<"$line"
}

declare -A results
for ((round = 1; round <= ROUNDS; round++)); do
    for build in "${builds[@]}"; do
        read -r name dir <<<"$build"
        for who in root user; do
            value=$(added "$who" "$(realpath "$dir")/opsai")
            results[$name-$who]+="${value:-n/a} "
            echo "round $round: $name as $who: added ${value:-n/a} ms" >&2
        done
    done
done

median() { tr ' ' '\n' | grep -v '^$' | grep -v n/a | sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "n/a"}'; }
echo "| build | as root: added ms (rounds) | median | as a user: added ms (rounds) | median |"
echo "|---|---|---|---|---|"
for build in "${builds[@]}"; do
    read -r name _ <<<"$build"
    r=${results[$name-root]}
    u=${results[$name-user]}
    echo "| $name | ${r% } | $(median <<<"$r") | ${u% } | $(median <<<"$u") |"
    echo "BENCH sandbox_added_ms build=$name root_median=$(median <<<"$r") user_median=$(median <<<"$u")"
done
