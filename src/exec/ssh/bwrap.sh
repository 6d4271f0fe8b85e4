# The remote bubblewrap sandbox (src/exec/ssh/sandbox.rs): POSIX sh, run as
#   sh -c THIS opsai-bwrap BWRAP PROFILE FILTER COMMAND
# BWRAP is bwrap's path, PROFILE `strict` or `tool`, FILTER the seccomp program as printf octal
# escapes, COMMAND the line for bash (sh where there is no bash). Built per command, because the
# homes, the secret files and the working directory are the remote host's, as they are now.
b=$1 p=$2 f=$3 c=$4
set -- --ro-bind / / --dev /dev --proc /proc
# Physical paths without a subshell each (forks are most of this script's cost).
cd -P . || exit 121
cwd=$PWD
home=
if [ -d "${HOME:-/nonexistent}" ]; then home=$(cd -P "$HOME" && pwd); fi
# A working directory the view closes would be an empty one: say so rather than run there.
inside() {
    case "$cwd/" in "$1"/*)
        echo "opsai sandbox: the working directory $cwd is inside $1, which the sandbox closes; the command was not run" >&2
        exit 121
        ;;
    esac
}
# Every home is closed (an empty tmpfs), except the one the working directory is in (and, for the
# tool profile, the user's own): there every hidden entry is closed, because that is where tools
# keep credentials, histories and state (`~/.ssh`, `~/.aws`, `~/.bash_history`, `~/.config`…).
for h in /root /home/* "$home"; do
    [ -n "$h" ] && [ -d "$h" ] || continue
    if [ -L "$h" ]; then h=$(cd -P "$h" 2>/dev/null && pwd) || continue; fi
    [ "$h" = / ] && continue
    open=
    case "$cwd/" in "$h"/*) open=1 ;; esac
    [ "$p" = tool ] && [ "$h" = "$home" ] && open=1
    if [ -z "$open" ]; then
        set -- "$@" --tmpfs "$h"
        continue
    fi
    for e in "$h"/.[!.]* "$h"/..?*; do
        [ -e "$e" ] || continue
        if [ "$p" = tool ]; then
            case "${e##*/}" in .kube | .docker | .aws | .azure | .config | .terraform.d) continue ;; esac
        fi
        inside "$e"
        if [ -d "$e" ]; then set -- "$@" --tmpfs "$e"; else set -- "$@" --ro-bind /dev/null "$e"; fi
    done
done
# System secrets, and secret-shaped files in and below the working directory (three levels).
set -f
nl='
'
found=
seen=
if [ "$cwd" != / ]; then
    found=$(find "$cwd" -xdev -maxdepth 3 \( -name .git -o -name node_modules -o -name target -o -name .venv -o -name venv \
        -o -name __pycache__ -o -name .cache -o -name .cargo -o -name .rustup -o -name .npm \) -prune -o \
        \( -name '.env*' -o -name '*.pem' -o -name '*.key' -o -name 'id_rsa*' -o -name 'id_dsa*' \
        -o -name 'id_ecdsa*' -o -name 'id_ed25519*' -o -name '*.tfstate' -o -name '*.tfstate.*' -o -name '*.p12' \
        -o -name '*.pfx' -o -name '*.jks' -o -name '*.keystore' -o -name 'credentials*' -o -name '*kubeconfig*' \
        -o -name 'master.key' -o -name '.netrc' -o -name '.pgpass' -o -name '*.ovpn' -o -name '*secret*' \) \
        ! -name '*.pub' -print 2>/dev/null)
fi
IFS=$nl
set +f
for e in /etc/shadow /etc/shadow- /etc/gshadow /etc/gshadow- /etc/ssh/ssh_host_*_key /etc/ssl/private \
    /etc/sudoers.d /run/secrets /var/run/secrets /etc/kubernetes/admin.conf /etc/kubernetes/pki \
    /var/lib/kubelet/pki /etc/ipsec.secrets /etc/NetworkManager/system-connections /etc/wireguard; do
    [ -e "$e" ] || continue
    # By its physical path, once: bwrap cannot mount over a path behind a symlink it has already
    # covered (`/var/run` is `/run`, so `/var/run/secrets` is `/run/secrets`), and fails the command.
    if [ -d "$e" ]; then e=$(cd -P "$e" 2>/dev/null && pwd) || continue
    else d=$(cd -P "${e%/*}/" 2>/dev/null && pwd) || continue; e=${d%/}/${e##*/}; fi
    case "$nl$seen$nl" in *"$nl$e$nl"*) continue ;; esac
    seen=$seen$nl$e
    inside "$e"
    if [ -d "$e" ]; then set -- "$@" --tmpfs "$e"; else set -- "$@" --ro-bind /dev/null "$e"; fi
done
set -f
for e in $found; do
    [ -e "$e" ] || continue
    inside "$e"
    if [ -d "$e" ]; then set -- "$@" --tmpfs "$e"; else set -- "$@" --ro-bind /dev/null "$e"; fi
done
set +f
unset IFS
set -- "$@" --unshare-all
# The tool profile keeps the network (kubectl, the docker daemon); after --unshare-all, or it is undone.
[ "$p" = tool ] && set -- "$@" --share-net
set -- "$@" --die-with-parent --new-session --cap-drop ALL --chdir "$cwd" --seccomp 4
if command -v bash >/dev/null 2>&1; then set -- "$@" -- bash --norc -c "$c"; else set -- "$@" -- sh -c "$c"; fi
# The filter reaches bwrap on descriptor 4; the command keeps this terminal on its stdin.
exec 5<&0
if [ "$p" = tool ]; then
    printf "$f" | {
        exec 4<&0 0<&5 5<&-
        exec "$b" "$@"
    }
else
    # Nothing of this session's environment but what a command needs to run and print.
    printf "$f" | {
        exec 4<&0 0<&5 5<&-
        exec env -i PATH="$PATH" HOME="${HOME:-/}" USER="${USER:-}" LOGNAME="${LOGNAME:-}" LANG="${LANG:-C}" \
            TERM="${TERM:-dumb}" TZ="${TZ:-}" SSH_CONNECTION="${SSH_CONNECTION:-}" PAGER=cat GIT_PAGER=cat GIT_TERMINAL_PROMPT=0 "$b" "$@"
    }
fi
