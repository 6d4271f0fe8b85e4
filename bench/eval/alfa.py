"""NL2SH-ALFA's tasks and test filesystems, read from an unpacked `icalfa` package (issue 22).

The package is never copied into the repository: `setup.sh` unpacks it into the cache and this
module reads it there. A directory in the same layout (`icalfa/assets/datasets/nl2bash_fs_N.json`
and `icalfa/assets/docker/setup_nl2b_fs_N.sh`) can stand in for it, which is how the CI test feeds
the harness synthetic tasks.
"""

import hashlib
import json
import os
from dataclasses import dataclass

DIFFICULTY = {0: "easy", 1: "medium", 2: "hard"}


@dataclass
class Task:
    id: int  # the global index icalfa's `submit_command` takes (file 1's tasks first, then 2, ...)
    fs: int  # which test filesystem (1..5)
    nl: str
    refs: list  # gold, then gold2 when present
    difficulty: str


def assets_dir(root):
    """The `assets` directory under an unpacked icalfa (or a stand-in laid out the same way)."""
    for base, dirs, _files in os.walk(root):
        if "datasets" in dirs and "docker" in dirs:
            return base
    raise SystemExit(f"no icalfa assets (datasets/ and docker/) under {root}; run bench/eval/setup.sh")


def filesystems(assets):
    """The filesystem numbers that have a task file, in order."""
    found = []
    for n in range(1, 10):
        if os.path.exists(os.path.join(assets, "datasets", f"nl2bash_fs_{n}.json")):
            found.append(n)
    return found


def setup_script(assets, fs):
    return os.path.join(assets, "docker", f"setup_nl2b_fs_{fs}.sh")


def shell_for(fs):
    """icalfa runs filesystem 5 in Alpine with /bin/sh, the others in Ubuntu with /bin/bash."""
    return "/bin/sh" if fs == 5 else "/bin/bash"


def load(assets):
    tasks = []
    for fs in filesystems(assets):
        with open(os.path.join(assets, "datasets", f"nl2bash_fs_{fs}.json"), encoding="utf-8") as f:
            rows = json.load(f)
        for row in rows:
            refs = [row["gold"]] + ([row["gold2"]] if row.get("gold2") else [])
            tasks.append(
                Task(
                    id=len(tasks),
                    fs=fs,
                    nl=row["query"],
                    refs=refs,
                    difficulty=DIFFICULTY.get(row.get("difficulty"), "unknown"),
                )
            )
    return tasks


def fingerprint(assets):
    """A short hash of the task files and setup scripts, so caches of different data never mix."""
    h = hashlib.sha256()
    for fs in filesystems(assets):
        for path in (os.path.join(assets, "datasets", f"nl2bash_fs_{fs}.json"), setup_script(assets, fs)):
            if os.path.exists(path):
                with open(path, "rb") as f:
                    h.update(f.read())
    return h.hexdigest()[:16]
