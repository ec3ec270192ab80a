"""Git repositories for the pre-commit and README tests: a committed snapshot
of this checkout (as pre-commit or pip clones it) and a user's module with a
match statement, with what it returns."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parent.parent

WITH_MATCH = """\
def describe(value):
    match value:
        case [x, y]:
            return f"pair {x} {y}"
        case {"name": name}:
            return f"named {name}"
        case _:
            return "other"
"""


def git(*args: str, cwd: Path) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="spam tests",
        GIT_AUTHOR_EMAIL="tests@example.invalid",
        GIT_COMMITTER_NAME="spam tests",
        GIT_COMMITTER_EMAIL="tests@example.invalid",
    )
    proc = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60, env=env
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def commit_snapshot(snapshot: Path) -> str:
    """Copy the working tree's tracked files into ``snapshot``, commit them
    in a new git repository there, and return the commit."""
    for name in _checkout_files():
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            target = snapshot / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    git("init", "-q", cwd=snapshot)
    git("add", "-A", cwd=snapshot)
    git("commit", "-q", "-m", "snapshot of the working tree", cwd=snapshot)
    return git("rev-parse", "HEAD", cwd=snapshot).strip()


def _checkout_files() -> List[str]:
    try:
        listing = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            timeout=60,
            check=True,
        ).stdout
        return [name for name in listing.decode().split("\0") if name]
    except (OSError, subprocess.SubprocessError):
        # Not a git checkout (an unpacked sdist): take everything but caches.
        skip = {".git", "__pycache__", ".pytest_cache", ".ci-venv", ".benchmarks"}
        return [
            path.relative_to(ROOT).as_posix()
            for path in ROOT.rglob("*")
            if path.is_file() and not skip.intersection(path.relative_to(ROOT).parts)
        ]


def behaviour(source: str) -> List[str]:
    namespace: Dict[str, object] = {}
    exec(compile(source, "<hooked>", "exec"), namespace)
    describe = namespace["describe"]
    return [describe(v) for v in ([1, 2], {"name": "n"}, 3, "ab")]  # type: ignore[operator]
