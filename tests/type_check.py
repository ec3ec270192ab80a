"""Type-check lowered output with mypy, for tests that promise mypy-clean
readable code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def assert_mypy_clean(out: str, tmp_path: Path) -> None:
    """mypy (3.10 settings, the oldest it accepts) finds nothing in ``out``."""
    pytest.importorskip("mypy")
    (tmp_path / "out.py").write_text(out)
    report = subprocess.run(
        [sys.executable, "-m", "mypy", "--python-version", "3.10", "out.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert report.returncode == 0, report.stdout
