#!/usr/bin/env bash
# Fleet fan-out wall time (issue 24): one read-only command on 50 hosts, opsai's fan-out against
# `ansible all -i INV -m command -a CMD -f 16` and `parallel-ssh` (Debian's pssh), in the same run.
#
#   bench/fleet.sh                 # 5 runs of each, medians
#   RUNS=9 HOSTS=50 SERVERS=2 bench/fleet.sh
#   FLEET_BIN=path/to/built/fleet bench/fleet.sh   # skip the release build
#
# The 50 hosts are aliases (`Host h01` … `h50`, `HostName 127.0.0.1`, `Port …`) of SERVERS real
# sshd on loopback, with generated host and user keys and strict host-key checking; every tool gets
# the same ssh_config. Each run is a whole process, timed with $EPOCHREALTIME:
# - opsai: `cargo bench --bench fleet` built once (benches/fleet.rs: `fleet::fanout` with forks 16);
#   cold = a fresh control directory (no master: each host connects), warm = masters up from a
#   previous process (what a turn's second command finds);
# - ansible: default settings, `-f 16`, its own ControlPersist; cold = a fresh control path dir,
#   warm = the same dir after a priming run;
# - parallel-ssh: `-p 16`; it opens a new connection per host every time (no masters), so cold and
#   warm are the same thing for it.
# Target (issue 24): opsai ≤ 1/3 of Ansible's time and ≤ 1.2× parallel-ssh's.
# Prints the figures; it does not rewrite BENCHMARKS.md. Needs root (sshd), ansible-core and pssh.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNS=${RUNS:-5}
HOSTS=${HOSTS:-50}
SERVERS=${SERVERS:-2}
FORKS=16
CMD=${CMD:-uname -a}

for tool in ansible parallel-ssh /usr/sbin/sshd ssh-keygen python3; do
    command -v "$tool" >/dev/null || {
        echo "bench/fleet.sh: $tool is not installed (apt-get install ansible-core pssh openssh-server)" >&2
        exit 2
    }
done

WORK=$(mktemp -d /tmp/opsai-fleet-bench.XXXXXX)
SSHD_PIDS=()
cleanup() {
    # Our masters (asked to exit, each by its socket), then the servers' per-connection children
    # (by their parent's id: that also ends Ansible's masters), then the servers.
    local pids=() sock
    for sock in "$WORK"/cp-*/* "$WORK"/acp-*/*; do
        [[ -S $sock ]] || continue
        ssh -o ControlPath="$sock" -O exit placeholder >/dev/null 2>&1 &
        pids+=($!)
    done
    ((${#pids[@]} == 0)) || wait "${pids[@]}"
    for pid in "${SSHD_PIDS[@]}"; do
        pkill -P "$pid" 2>/dev/null || true
        kill "$pid" 2>/dev/null || true
    done
    rm -rf "$WORK"
}
NAMES=()
trap cleanup EXIT

if [[ -n ${FLEET_BIN:-} ]]; then
    BIN=$FLEET_BIN # an already built benches/fleet.rs (a debug build to try the script)
else
    echo "==> cargo bench --bench fleet --no-run"
    BIN=$(cargo bench --locked --bench fleet --no-run --message-format=json 2>/dev/null |
        python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "fleet" and m.get("executable"):
        print(m["executable"])')
fi
[[ -x $BIN ]] || { echo "bench/fleet.sh: the fleet bench did not build" >&2; exit 1; }

echo "==> $SERVERS sshd on 127.0.0.1, $HOSTS host aliases"
mkdir -p /run/sshd
ssh-keygen -q -t ed25519 -N '' -f "$WORK/user_key"
cp "$WORK/user_key.pub" "$WORK/authorized_keys"
PORTS=()
: >"$WORK/known_hosts"
for s in $(seq 1 "$SERVERS"); do
    ssh-keygen -q -t ed25519 -N '' -f "$WORK/host_key_$s"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    cat >"$WORK/sshd_config_$s" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $WORK/host_key_$s
AuthorizedKeysFile $WORK/authorized_keys
PidFile $WORK/sshd_$s.pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
LogLevel ERROR
MaxSessions 200
MaxStartups 200
UseDNS no
PrintMotd no
PrintLastLog no
SetEnv SHLVL=1
EOF
    /usr/sbin/sshd -D -e -f "$WORK/sshd_config_$s" </dev/null >/dev/null 2>"$WORK/sshd_$s.log" &
    SSHD_PIDS+=($!)
    PORTS+=("$port")
    echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$WORK/host_key_$s.pub")" >>"$WORK/known_hosts"
done
for port in "${PORTS[@]}"; do
    for _ in $(seq 1 200); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.05
    done
done
USER_NAME=$(id -un)
: >"$WORK/ssh_config"
: >"$WORK/hosts"
printf '[fleet]\n' >"$WORK/inventory.ini"
for i in $(seq 1 "$HOSTS"); do
    name=$(printf 'h%02d' "$i")
    NAMES+=("$name")
    port=${PORTS[$(((i - 1) % SERVERS))]}
    cat >>"$WORK/ssh_config" <<EOF
Host $name
  HostName 127.0.0.1
  Port $port
  User $USER_NAME
  IdentityFile $WORK/user_key
  IdentitiesOnly yes
  UserKnownHostsFile $WORK/known_hosts
  StrictHostKeyChecking yes
  BatchMode yes

EOF
    echo "$name" >>"$WORK/hosts"
    echo "$name" >>"$WORK/inventory.ini"
done
printf '[fleet:vars]\nansible_python_interpreter=/usr/bin/python3\n' >>"$WORK/inventory.ini"
HOST_LIST=$(IFS=,; echo "${NAMES[*]}")

# Ansible: its defaults, the same ssh_config through its ssh arguments, its own temp dirs.
export ANSIBLE_SSH_ARGS="-F $WORK/ssh_config -o ControlMaster=auto -o ControlPersist=60s"
export ANSIBLE_LOCAL_TEMP=$WORK/ansible-local ANSIBLE_REMOTE_TEMP=$WORK/ansible-remote
export ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0

opsai_run() { "$BIN" --ssh-config "$WORK/ssh_config" --control "$1" --forks "$FORKS" --hosts "$HOST_LIST" -- "$CMD"; }
ansible_run() {
    ANSIBLE_SSH_CONTROL_PATH_DIR=$1 ansible all -i "$WORK/inventory.ini" -m command -a "$CMD" -f "$FORKS"
}
pssh_run() { parallel-ssh -h "$WORK/hosts" -p "$FORKS" -t 60 -x "-F $WORK/ssh_config" -i "$CMD"; }

# Milliseconds of one run of "$@"; a failed run stops the benchmark (its output is shown).
time_ms() {
    local start end
    start=$EPOCHREALTIME
    if ! "$@" >"$WORK/last.out" 2>&1; then
        echo "bench/fleet.sh: failed: $*" >&2
        tail -n 30 "$WORK/last.out" >&2
        exit 1
    fi
    end=$EPOCHREALTIME
    python3 -c "print(round(($end - $start) * 1000))"
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

declare -A T
for r in $(seq 1 "$RUNS"); do
    T[opsai_cold]+=" $(time_ms opsai_run "$WORK/cp-cold-$r")"
    T[ansible_cold]+=" $(time_ms ansible_run "$WORK/acp-cold-$r")"
    T[pssh]+=" $(time_ms pssh_run)"
done
time_ms opsai_run "$WORK/cp-warm" >/dev/null
time_ms ansible_run "$WORK/acp-warm" >/dev/null
for r in $(seq 1 "$RUNS"); do
    T[opsai_warm]+=" $(time_ms opsai_run "$WORK/cp-warm")"
    T[ansible_warm]+=" $(time_ms ansible_run "$WORK/acp-warm")"
done
# The model's view of the last opsai run, to show it ran everywhere.
opsai_run "$WORK/cp-warm" | head -n 3

declare -A M
for key in opsai_cold opsai_warm ansible_cold ansible_warm pssh; do
    # shellcheck disable=SC2086
    M[$key]=$(median ${T[$key]})
    printf '%-13s runs(ms):%s  median %s ms\n' "$key" "${T[$key]}" "${M[$key]}"
done
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
echo
echo "fleet fan-out, $HOSTS hosts ($SERVERS loopback sshd), \`$CMD\`, forks $FORKS, medians of $RUNS (ms):"
echo "| | opsai | ansible | parallel-ssh | opsai/ansible (≤ 0.33) | opsai/pssh (≤ 1.2) |"
echo "|---|---|---|---|---|---|"
echo "| cold | ${M[opsai_cold]} | ${M[ansible_cold]} | ${M[pssh]} | $(ratio "${M[opsai_cold]}" "${M[ansible_cold]}") | $(ratio "${M[opsai_cold]}" "${M[pssh]}") |"
echo "| warm | ${M[opsai_warm]} | ${M[ansible_warm]} | ${M[pssh]} | $(ratio "${M[opsai_warm]}" "${M[ansible_warm]}") | $(ratio "${M[opsai_warm]}" "${M[pssh]}") |"
