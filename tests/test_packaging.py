"""What installing spam-transpile brings: everything every command needs.

``--in-place`` and the pre-commit hook write the readable layout, which
black lays out: black is a dependency, not an extra, so the README's plain
``pip install`` gives a working ``--in-place``."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _metadata(tmp_path: Path) -> str:
    """The METADATA of this checkout's wheel, as hatchling builds it."""
    pytest.importorskip("hatchling")
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", tmp_path],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    [wheel] = tmp_path.glob("spam_transpile-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return archive.read(name).decode("utf-8")


@pytest.mark.slow
def test_black_comes_with_every_install(tmp_path: Path) -> None:
    lines = _metadata(tmp_path).splitlines()
    requires = [line for line in lines if line.startswith("Requires-Dist: black")]
    # Unconditional: no ``; extra == ...`` marker (the test extra pins its own).
    assert [line for line in requires if ";" not in line] == [
        "Requires-Dist: black>=23.11"
    ]
    # The extra that used to bring black still installs, without a warning.
    assert "Provides-Extra: readable" in lines
