"""Find real CPython interpreters to run transpiled code on (and 3.10+ oracles).

Lookup order for version X.Y: the environment variable ``SPAM_TRANSPILE_PYTHON_X_Y``
(e.g. ``SPAM_TRANSPILE_PYTHON_3_9=/usr/bin/python3.9``), then ``pythonX.Y`` on
PATH, then ``$(pyenv root)/versions/X.Y*/bin/pythonX.Y``. A missing interpreter
is a pytest skip with the reason, unless ``SPAM_TRANSPILE_REQUIRE_TARGETS`` is set
to a non-empty value other than ``0`` (CI sets it): then it is a failure.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable, Optional

import pytest

REQUIRE_ENV = "SPAM_TRANSPILE_REQUIRE_TARGETS"

# Called with the version at every lookup. Under pytest, tests/conftest.py sets
# it to fail a test that looks an interpreter up without the `targets` marker
# (see tests/target_marking.py).
lookup_check: Optional[Callable[[str], None]] = None


def _note_lookup(version: str) -> None:
    if lookup_check is not None:
        lookup_check(version)


def _env_name(version: str) -> str:
    return "SPAM_TRANSPILE_PYTHON_" + version.replace(".", "_")


def _pyenv_root() -> Path | None:
    root = os.environ.get("PYENV_ROOT")
    if root:
        return Path(root)
    exe = shutil.which("pyenv")
    if exe:
        try:
            out = subprocess.run(
                [exe, "root"], capture_output=True, text=True, timeout=20, check=True
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None
        return Path(out) if out else None
    default = Path.home() / ".pyenv"
    return default if default.is_dir() else None


def _reports_version(exe: str, version: str) -> bool:
    try:
        out = subprocess.run(
            [exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return False
    return out == version


def find_interpreter(version: str) -> str | None:
    """Return the path of a CPython ``version`` ("3.9") interpreter, or None."""
    _note_lookup(version)
    return _find_interpreter(version)


@functools.lru_cache(maxsize=None)
def _find_interpreter(version: str) -> str | None:
    candidates: list[str] = []
    from_env = os.environ.get(_env_name(version))
    if from_env:
        candidates.append(from_env)
    on_path = shutil.which(f"python{version}")
    if on_path:
        candidates.append(on_path)
    root = _pyenv_root()
    if root is not None:
        for folder in sorted((root / "versions").glob(f"{version}*"), reverse=True):
            exe = folder / "bin" / f"python{version}"
            if exe.exists():
                candidates.append(str(exe))
    for exe in candidates:
        # pyenv shims on PATH may point at another version; ask the binary.
        if _reports_version(exe, version):
            return exe
    return None


def targets_required() -> bool:
    return os.environ.get(REQUIRE_ENV, "") not in ("", "0")


def require_interpreter(version: str) -> str:
    """The interpreter for ``version``, or skip (fail under CI) with the reason."""
    _note_lookup(version)
    exe = _find_interpreter(version)
    if exe is None:
        reason = (
            f"CPython {version} not found (looked at ${_env_name(version)}, "
            f"python{version} on PATH, pyenv versions)"
        )
        if targets_required():
            pytest.fail(f"{reason}; {REQUIRE_ENV} is set, so this is an error")
        pytest.skip(reason)
    return exe
