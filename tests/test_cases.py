"""Golden files: fixtures/cases/NAME.py lowers to NAME.out.py (absent = unchanged).

Each case is also a program: it must print the same thing run natively on
CPython 3.10 and, transpiled, on CPython 3.9 and 3.8.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from spam_transpile import transpile
from tests.interpreters import require_interpreter

CASES = Path(__file__).resolve().parent.parent / "fixtures" / "cases"
SOURCES = sorted(p for p in CASES.glob("*.py") if not p.name.endswith(".out.py"))


def _expected(source: Path) -> str:
    out = source.with_name(source.stem + ".out.py")
    return (
        out.read_text(encoding="utf-8") if out.exists() else source.read_text("utf-8")
    )


@pytest.mark.parametrize("source", SOURCES, ids=[p.stem for p in SOURCES])
def test_golden_output(source: Path) -> None:
    text = source.read_text(encoding="utf-8")
    assert transpile(text, filename=str(source)) == _expected(source)


@pytest.mark.parametrize("source", SOURCES, ids=[p.stem for p in SOURCES])
def test_second_pass_changes_nothing(source: Path) -> None:
    once = transpile(source.read_text(encoding="utf-8"), filename=str(source))
    assert transpile(once, filename=str(source)) == once


def _run(python: str, path: Path) -> tuple:
    proc = subprocess.run(
        [python, str(path)], capture_output=True, text=True, timeout=60, cwd=path.parent
    )
    return (
        proc.returncode,
        proc.stdout,
        proc.stderr.splitlines()[-1:] if proc.stderr else [],
    )


def _needs(source: Path) -> str:
    """The oldest Python the case's own (non-match) code runs on."""
    text = source.read_text(encoding="utf-8")
    if ":=" in text:
        return "3.8"
    if "dataclass" in text or "asyncio.run" in text:
        return "3.7"
    return "3.6"


@pytest.mark.slow
@pytest.mark.parametrize("target", ["3.9", "3.8", "3.7", "3.6"])
@pytest.mark.parametrize("source", SOURCES, ids=[p.stem for p in SOURCES])
def test_runs_like_cpython_310(source: Path, target: str, tmp_path: Path) -> None:
    if tuple(map(int, target.split("."))) < tuple(map(int, _needs(source).split("."))):
        pytest.skip(f"the case's own code needs Python {_needs(source)}")
    native = require_interpreter("3.10")
    old = require_interpreter(target)
    lowered = tmp_path / source.name
    lowered.write_text(
        transpile(source.read_text(encoding="utf-8"), target=target), encoding="utf-8"
    )
    assert _run(old, lowered) == _run(native, source)
