"""The execution judge (issue 22): run a command in a fresh copy of a task's test filesystem and
compare what it changed and printed with what a reference command changed and printed.

icalfa runs everything in a Docker container whose root holds the test filesystem (`/testbed`,
`/system`, `/workspace`, `/backup`, `/index.html`, ...), with `/` as the working directory, and
diffs the root with `git status` minus the system directories (its `docker.gitignore`). Here the
copy itself is bound as `/` in `bwrap --unshare-all --die-with-parent`, the host's `/usr` and
`/etc` are bound read-only over it, and the same system directories are left out of the
comparison. Stricter than `git status` on purpose: empty directories and permission bits count,
and every changed file's content is compared (icalfa hashes only names containing a dot).
"""

import atexit
import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass, field

# icalfa's docker.gitignore (plus lib64, which the host has and Ubuntu's image does not list).
IGNORED = {
    "bin", "boot", "dev", "etc", "home", "lib", "lib64", "media", "opt", "proc", "root", "run",
    "sbin", "srv", "sys", "usr", "var", ".dockerenv",
}
TIMEOUT = 10
OUTPUT_LIMIT = 1 << 20


@dataclass
class Outcome:
    stdout: str
    changes: dict = field(default_factory=dict)  # path -> (kind, mode, digest) or None (deleted)
    code: int = 0
    timed_out: bool = False

    def key(self):
        return (self.stdout.rstrip(), tuple(sorted(self.changes.items(), key=lambda kv: kv[0])))


def same(a, b):
    """Same changed paths, same contents and modes, same stdout with trailing whitespace stripped."""
    return a.key() == b.key()


# The device nodes bwrap's `--dev` binds from the host's /dev (major, minor).
DEVICE_NODES = {"null": (1, 3), "zero": (1, 5), "full": (1, 7), "random": (1, 8), "urandom": (1, 9), "tty": (5, 0)}
# Set by `private_devices`: a directory of nodes of the judge's own, bound over the host's.
PRIVATE_DEVICES = None


def private_devices(workdir):
    """Run as root, a command in the sandbox owns the host's device nodes that `--dev` binds in:
    a candidate's `chmod -R 755 /` left /dev/null unwritable for every other user of the machine
    (session 36). Root's sandboxes get nodes of their own instead, put back before each command:
    in the work directory, or in /var/tmp when that one is mounted `nodev` (a tmpfs /tmp)."""
    global PRIVATE_DEVICES
    if os.geteuid() != 0:
        return  # unprivileged: the sandbox's root is not the nodes' owner
    tried = []
    for parent in (workdir, "/var/tmp"):
        path = tempfile.mkdtemp(prefix="judge-dev-", dir=parent)
        try:
            for name, (major, minor) in DEVICE_NODES.items():
                os.mknod(os.path.join(path, name), 0o666 | stat.S_IFCHR, os.makedev(major, minor))
        except PermissionError:
            # Root of a user namespace (rootless containers): not the owner of the host's nodes.
            shutil.rmtree(path, ignore_errors=True)
            return
        try:
            with open(os.path.join(path, "null"), "wb") as f:
                f.write(b"x")
        except OSError as e:
            tried.append(f"{parent}: {e}")
            shutil.rmtree(path, ignore_errors=True)
            continue
        if parent != workdir:
            atexit.register(shutil.rmtree, path, True)
        PRIVATE_DEVICES = path
        return
    raise SystemExit("the judge's own device nodes cannot be used (" + "; ".join(tried) + "): set TMPDIR to a "
                     "directory on a filesystem mounted without nodev")


def reset_private_devices():
    for name in DEVICE_NODES:
        node = os.path.join(PRIVATE_DEVICES, name)
        os.chown(node, 0, 0)
        os.chmod(node, 0o666)


def host_system_args():
    """Bind the host's programs and configuration read-only into a sandbox whose root is a copy."""
    args = []
    for name in ("usr", "bin", "sbin", "lib", "lib64", "lib32", "libx32", "etc"):
        path = "/" + name
        if os.path.islink(path):
            continue  # the copy has the same symlink (make_root_mountpoints)
        if os.path.isdir(path):
            args += ["--ro-bind", path, path]
    # /sys read-only, as Docker gives it (lsblk, lsmem); /root is the copy's own (see build_template).
    args += ["--proc", "/proc", "--dev", "/dev", "--ro-bind", "/sys", "/sys"]
    if PRIVATE_DEVICES:
        reset_private_devices()
        for name in DEVICE_NODES:
            args += ["--dev-bind", os.path.join(PRIVATE_DEVICES, name), "/dev/" + name]
    for name in ("home", "var", "run", "opt"):
        args += ["--tmpfs", "/" + name]
    return args


def bwrap(root, argv, writable=True, share_net=False, binds=(), env=None, cwd="/"):
    """The bwrap command line running `argv` with `root` as `/`."""
    cmd = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session"]
    if share_net:
        cmd.append("--share-net")
    cmd += ["--bind" if writable else "--ro-bind", root, "/"]
    cmd += host_system_args()
    if not writable:
        cmd += ["--tmpfs", "/tmp"]
    for kind, src, dest in binds:
        cmd += [kind, src, dest]
    cmd += ["--chdir", cwd, "--clearenv"]
    base = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
            "USER": "root", "LANG": "C.UTF-8", "TERM": "dumb"}
    base.update(env or {})
    for k, v in base.items():
        cmd += ["--setenv", k, v]
    return cmd + ["--"] + list(argv)


def make_root_mountpoints(root):
    """Create the directories bwrap mounts over, so a read-only copy can be the root too."""
    for name in ("usr", "etc", "proc", "dev", "sys", "root", "home", "var", "run", "opt", "tmp"):
        os.makedirs(os.path.join(root, name), exist_ok=True)
    for name in ("bin", "sbin", "lib", "lib64", "lib32", "libx32"):
        path = os.path.join(root, name)
        if os.path.exists("/" + name) and not os.path.lexists(path):
            if os.path.islink("/" + name):
                os.symlink(os.readlink("/" + name), path)
            else:
                os.makedirs(path, exist_ok=True)


def build_template(setup_script, dest):
    """Run one setup script once, as root of an empty directory: the filesystem every copy starts
    from. Like icalfa's Dockerfile, the script itself stays at `/` (tasks read it), the ignore list
    is `/.gitignore`, and root's home has the distribution's skeleton (`cat ~/.bashrc`)."""
    if os.path.exists(dest):
        remove(dest)
    os.makedirs(dest)
    make_root_mountpoints(dest)
    for name in (".bashrc", ".profile"):
        if os.path.exists(os.path.join("/etc/skel", name)):
            shutil.copy(os.path.join("/etc/skel", name), os.path.join(dest, "root", name))
    name = os.path.basename(setup_script)
    shutil.copy(setup_script, os.path.join(dest, name))
    os.chmod(os.path.join(dest, name), 0o755)
    ignore = os.path.join(os.path.dirname(setup_script), "docker.gitignore")
    if os.path.exists(ignore):
        shutil.copy(ignore, os.path.join(dest, ".gitignore"))
    proc = subprocess.run(bwrap(dest, ["/bin/bash", "/" + name]), capture_output=True, timeout=120)
    # Like icalfa's image build, a failing line in a setup script is not fatal (fs 3's BSD `date`).
    return proc.returncode, proc.stderr.decode("utf-8", "replace")


def snapshot(root):
    """path -> (kind, permission bits, content digest) for everything outside the ignored names."""
    out = {}
    for top in sorted(os.listdir(root)):
        if top in IGNORED:
            continue
        stack = [top]
        while stack:
            rel = stack.pop()
            path = os.path.join(root, rel)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", mode, "")
                try:
                    names = os.listdir(path)
                except OSError:
                    names = []
                stack += [os.path.join(rel, n) for n in names]
            elif stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", 0, os.readlink(path))
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("file", mode, digest(path))
            else:
                out[rel] = ("other", mode, "")
    return out


def digest(path):
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 16), b""):
                h.update(chunk)
    except OSError as e:
        return f"unreadable: {e.errno}"
    return h.hexdigest()


def diff(before, after):
    changes = {}
    for path, entry in after.items():
        if before.get(path) != entry:
            changes[path] = entry
    for path in before:
        if path not in after:
            changes[path] = None
    return changes


class Testbed:
    """The templates of one run (one per filesystem) and fresh copies of them."""

    def __init__(self, workdir, assets, fs_numbers, setup_script_of):
        self.workdir = workdir
        private_devices(workdir)
        self.templates = {}
        self.before = {}
        self.setup_errors = {}
        for fs in fs_numbers:
            dest = os.path.join(workdir, f"template-{fs}")
            _code, err = build_template(setup_script_of(assets, fs), dest)
            self.setup_errors[fs] = err
            self.templates[fs] = dest
            self.before[fs] = snapshot(dest)

    def copy(self, fs):
        dest = tempfile.mkdtemp(prefix=f"copy-{fs}-", dir=self.workdir)
        os.rmdir(dest)
        subprocess.run(["cp", "-a", self.templates[fs], dest], check=True)
        return dest

    def changes(self, fs, copy):
        return diff(self.before[fs], snapshot(copy))

    def run(self, fs, shell, command):
        """Run `command` with `shell -c` in a fresh copy under `timeout 10`; what it did."""
        copy = self.copy(fs)
        try:
            return run_in(copy, shell, command, self, fs)
        finally:
            remove(copy)


# The environment icalfa's Dockerfiles set (`ENV FILES=...` in image 1; tasks use "$FILES").
IMAGE_ENV = {1: {"FILES": "/testbed/hello.c /testbed/FooBar.html"}}


def run_in(copy, shell, command, testbed, fs):
    argv = ["timeout", "-k", "1", str(TIMEOUT)] + bwrap(copy, [shell, "-c", command], env=IMAGE_ENV.get(fs))
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT + 5)
        stdout, code = proc.stdout[:OUTPUT_LIMIT], proc.returncode
    except subprocess.TimeoutExpired as e:
        stdout, code = (e.stdout or b"")[:OUTPUT_LIMIT], 124
    return Outcome(
        stdout=stdout.decode("utf-8", "replace"),
        changes=testbed.changes(fs, copy),
        code=code,
        timed_out=code == 124,
    )


def remove(path):
    """Remove a copy even when a command left it unwritable (chmod 000 and the like)."""
    subprocess.run(["chmod", "-R", "u+rwX", path], stderr=subprocess.DEVNULL)
    shutil.rmtree(path, ignore_errors=True)
