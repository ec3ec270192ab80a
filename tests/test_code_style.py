"""The project's own code: black-formatted and type-checked (as CI sees it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# black and mypy over the whole tree take half a minute.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


def _run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True
    )


def test_code_is_black_formatted() -> None:
    result = _run("black", "--check", "--quiet", "spam_transpile", "tests", "scripts")
    assert result.returncode == 0, result.stderr


def test_package_type_checks() -> None:
    result = _run("mypy", "--ignore-missing-imports", "spam_transpile")
    assert result.returncode == 0, result.stdout + result.stderr
