"""Helpers for the kill and race tests: real ``spam-transpile`` processes.

A run is started in its own session, so a test can SIGKILL it together
with its workers, and may carry a stopping point
(:mod:`spam_transpile.files.testhooks`): the test waits for the run to
reach it, then kills it or changes files under it, instead of guessing
at timings.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from spam_transpile.files.testhooks import ENV as HOOK_ENV
from spam_transpile.files.write import is_temporary_name

ROOT = Path(__file__).resolve().parent.parent
#: how long a test waits for a run to get somewhere before it gives up; only
#: ever reached when something is broken, so it is generous
PATIENCE = 120.0


def source(number: int, functions: int = 1) -> str:
    """A module with ``functions`` match statements, distinct per ``number``."""
    parts = [f'"""Module {number}."""\nimport sys\n']
    for index in range(functions):
        parts.append(
            f"\n\ndef f{number}_{index}(value):\n"
            "    match value:\n"
            "        case [a, b]:\n"
            f"            return a + b + {number}\n"
            '        case {"key": found}:\n'
            "            return found\n"
            "        case _:\n"
            "            return None\n"
        )
    return "".join(parts)


def plain(number: int) -> str:
    """A module without match statements."""
    return f"import re\nmatch = re.match('a', 'a')\nVALUE = {number}\n"


def make_tree(root: Path, files: Dict[str, bytes]) -> Path:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def snapshot(root: Path) -> Dict[str, bytes]:
    """relative path -> bytes of every file under ``root``."""
    if not root.exists():
        return {}
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def temporaries(root: Path) -> List[str]:
    """Our temporary files under ``root``, relative."""
    return sorted(
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if is_temporary_name(path.name)
    )


def environment(
    cache: Path, hook: Optional[Dict[str, object]] = None
) -> Dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), SPAM_TRANSPILE_CACHE_DIR=str(cache))
    env.pop(HOOK_ENV, None)
    if hook is not None:
        env[HOOK_ENV] = json.dumps(hook)
    return env


def start(
    args: Sequence[str], *, cwd: Path, cache: Path, hook: Optional[Dict[str, object]]
) -> "subprocess.Popen[bytes]":
    return subprocess.Popen(
        [sys.executable, "-m", "spam_transpile", *args],
        cwd=cwd,
        env=environment(cache, hook),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # killed as a group, workers included
    )


def run(
    args: Sequence[str], *, cwd: Path, cache: Path
) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(
        [sys.executable, "-m", "spam_transpile", *args],
        cwd=cwd,
        env=environment(cache),
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )


def wait_for(
    path: Path, process: "subprocess.Popen[bytes]", *, patience: float = PATIENCE
) -> bool:
    """True once ``path`` exists; False if the run ended without creating it."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        if path.exists():
            return True
        if process.poll() is not None:
            return path.exists()
        time.sleep(0.005)
    kill(process)
    raise AssertionError(f"the run never got to {path.name}")


def kill(process: "subprocess.Popen[bytes]") -> None:
    """SIGKILL the run and its workers, as the system would."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # already gone
    process.communicate()
