#!/usr/bin/env bash
# packaging/check.sh — the heavy end-to-end check of every install path, run by hand before a
# release (not in CI: it builds the release executables, installs a .deb into this machine and
# needs cargo-deb, musl-gcc and root). It prints the figures docs/install.md quotes.
#
#   1. `cargo package --locked`: the packaged crate builds on its own (what `cargo install opsai`
#      compiles).
#   2. packaging/release.sh: static musl tarball + checksum; unpacked into a temporary directory,
#      the checksum verifies, both executables are static, `opsai --version` runs and
#      `opsai sandbox --status` finds the helper beside it.
#   3. packaging/deb.sh: the .deb's contents and control, `dpkg -i`, the installed files work,
#      `dpkg -r` removes them.
#   4. `cargo install --path . --locked` puts both executables in bin.
#   5. when cargo-binstall is installed: it installs both from the tarball, served on loopback.
# Set SKIP_PACKAGE=1 to leave out step 1 and SKIP_DEB=1 for step 3.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

target=x86_64-unknown-linux-musl
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
name=opsai-$version-$target
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OPSAI_HOME=$work/home

step() { printf '\n==> %s\n' "$*"; }
fail() { echo "check.sh: FAILED: $*" >&2; exit 1; }
# Wall-clock seconds of a command, to stdout; its own output goes to stderr.
seconds() {
    local start end
    start=$(date +%s.%N)
    "$@" >&2
    end=$(date +%s.%N)
    echo "$end - $start" | bc
}

if [[ -z ${SKIP_PACKAGE:-} ]]; then
    step "cargo package --locked (builds the packaged crate)"
    t=$(seconds cargo package --locked --allow-dirty)
    echo "figure: cargo package build ${t}s; $(du -h "target/package/opsai-$version.crate" | cut -f1) crate"
fi

step "packaging/release.sh $target"
t=$(seconds packaging/release.sh "$target")
echo "figure: release build ${t}s (incremental when target/ already holds it)"

step "the tarball, unpacked as a user would"
cp "dist/$name.tar.gz" "dist/$name.tar.gz.sha256" "$work/"
(cd "$work" && sha256sum -c "$name.tar.gz.sha256") || fail "checksum"
t=$(seconds bash -c "mkdir -p '$work/bin' && tar -xzf '$work/$name.tar.gz' -C '$work' &&
    install -m 755 '$work/$name/opsai' '$work/$name/opsai-sandbox-helper' '$work/bin/'")
echo "figure: install from the tarball ${t}s (unpack + copy; download not counted)"
tar -tzf "$work/$name.tar.gz" | sed 's/^/  /'
for exe in opsai opsai-sandbox-helper; do
    info=$(file -L "$work/bin/$exe")
    echo "$info"
    [[ $info == *static* ]] || fail "$exe is not static"
    # glibc's ldd says "statically linked" for a static PIE, "not a dynamic executable" otherwise.
    libs=$(ldd "$work/bin/$exe" 2>&1 || true)
    echo "ldd: $libs"
    [[ $libs == *"statically linked"* || $libs == *"not a dynamic executable"* ]] || fail "ldd lists libraries for $exe"
    echo "figure: $exe $(stat -c %s "$work/bin/$exe") bytes, static"
done
echo "figure: tarball $(stat -c %s "dist/$name.tar.gz") bytes"
"$work/bin/opsai" --version | grep -qx "opsai $version" || fail "opsai --version"
status=$("$work/bin/opsai" sandbox --status) || fail "sandbox --status: $status"
echo "$status" | grep -q "helper: $work/bin/opsai-sandbox-helper" || fail "the helper beside opsai is not used: $status"
echo "sandbox --status: available, helper beside opsai"

if [[ -z ${SKIP_DEB:-} ]]; then
    step "packaging/deb.sh"
    command -v cargo-deb >/dev/null || fail "cargo-deb is missing: cargo install cargo-deb --locked"
    deb=$(packaging/deb.sh "$target" | sed -n 's/^==> //p')
    dpkg-deb -I "$deb"
    dpkg-deb -c "$deb"
    echo "figure: .deb $(stat -c %s "$deb") bytes"
    dpkg -s opsai >/dev/null 2>&1 && fail "opsai is already installed with dpkg; remove it first"
    t=$(seconds dpkg -i "$deb")
    echo "figure: dpkg -i ${t}s"
    /usr/bin/opsai --version | grep -qx "opsai $version" || fail "/usr/bin/opsai --version"
    man -w opsai | grep -q '/usr/share/man/man1/opsai.1' || fail "man -w opsai"
    man -w opsai-config-show >/dev/null || fail "man -w opsai-config-show"
    for file in /usr/share/opsai/opsai.{zsh,bash,fish} /usr/share/bash-completion/completions/opsai \
        /usr/share/zsh/vendor-completions/_opsai /usr/share/fish/vendor_completions.d/opsai.fish; do
        [[ -s $file ]] || fail "$file is missing"
    done
    grep -q "'/usr/bin/opsai' widget" /usr/share/opsai/opsai.bash || fail "the bash widget does not call /usr/bin/opsai"
    bash -n /usr/share/opsai/opsai.bash || fail "bash -n opsai.bash"
    status=$(/usr/bin/opsai sandbox --status) || fail "sandbox --status: $status"
    echo "$status" | grep -q "helper: /usr/bin/opsai-sandbox-helper" || fail "the installed helper is not used: $status"
    echo "installed .deb: --version, man pages, completions, widget scripts, sandbox helper: ok"
    dpkg -r opsai
    [[ ! -e /usr/bin/opsai && ! -e /usr/share/opsai/opsai.zsh && ! -e /usr/share/man/man1/opsai.1.gz ]] ||
        fail "dpkg -r left files behind"
    echo "dpkg -r: removed"
fi

step "cargo install --path . --locked (into a temporary root)"
t=$(seconds cargo install --path . --locked --root "$work/cargo" --target "$target")
ls -l "$work/cargo/bin"
[[ -x $work/cargo/bin/opsai && -x $work/cargo/bin/opsai-sandbox-helper ]] || fail "cargo install did not install both"
status=$("$work/cargo/bin/opsai" sandbox --status) || fail "sandbox --status: $status"
echo "$status" | grep -q "helper: $work/cargo/bin/opsai-sandbox-helper" || fail "the installed helper is not used"
echo "figure: cargo install --path ${t}s (reuses target/; a fresh machine compiles everything, see the release build)"

if command -v cargo-binstall >/dev/null; then
    step "cargo binstall from the tarball, served on loopback over HTTPS"
    # `repository` is not set yet, so the URL's `{ repo }` is replaced by a loopback server; the
    # rest (file name, bin-dir, pkg-fmt) is Cargo.toml's. binstall downloads over HTTPS only: the
    # server has a throwaway self-signed certificate, given to binstall as a root. No fallback to
    # compiling or to quick-install.
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
        -addext subjectAltName=IP:127.0.0.1 -addext basicConstraints=critical,CA:FALSE \
        -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
    port_file=$work/port
    (cd dist && exec python3 -c 'import http.server, ssl, sys
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
tls.load_cert_chain(sys.argv[2], sys.argv[3])
server.socket = tls.wrap_socket(server.socket, server_side=True)
open(sys.argv[1], "w").write(str(server.server_address[1]))
server.serve_forever()' "$port_file" "$work/cert.pem" "$work/key.pem") >/dev/null 2>&1 &
    server=$!
    for _ in $(seq 50); do [[ -s $port_file ]] && break; sleep 0.1; done
    port=$(cat "$port_file")
    t=$(seconds cargo binstall --manifest-path . --no-confirm --root "$work/binstall" \
        --targets "$target" --disable-strategies quick-install,compile --root-certificates "$work/cert.pem" \
        --pkg-url "https://127.0.0.1:$port/{ name }-{ version }-{ target }.tar.gz" opsai)
    kill "$server"
    ls -l "$work/binstall/bin"
    [[ -x $work/binstall/bin/opsai && -x $work/binstall/bin/opsai-sandbox-helper ]] ||
        fail "cargo binstall did not install both"
    status=$("$work/binstall/bin/opsai" sandbox --status) || fail "sandbox --status: $status"
    echo "$status" | grep -q "helper: $work/binstall/bin/opsai-sandbox-helper" || fail "the helper is not used"
    echo "figure: cargo binstall ${t}s (loopback download)"
else
    echo "cargo-binstall is not installed: the binstall step is skipped"
fi

step "all checks passed"
