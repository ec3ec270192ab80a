"""scripts/bench.py (the benchmark suite of issue 8), quick and on tiny workloads.

Times are not asserted: CI machines are shared and noisy, and tiny workloads
measure nothing. What is checked is what a broken lowering or a broken
benchmark would change: native ``match``, the lowered code in both layouts
and the hand-written version compute the same checksum on every interpreter,
and the report prints all its tables.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from interpreters import require_interpreter
from tests.script_loader import load_script

ROOT = Path(__file__).resolve().parent.parent
RUNNER = ROOT / "scripts" / "bench.py"
PROGRAMS = sorted(
    p.stem for p in (ROOT / "scripts" / "bench" / "fixtures").glob("*.py")
)


def _load_runner() -> ModuleType:
    return load_script(RUNNER, "bench_runner")


def test_every_program_has_a_hand_written_version() -> None:
    assert len(PROGRAMS) >= 6
    for name in PROGRAMS:
        source = (ROOT / "scripts" / "bench" / "fixtures" / f"{name}.py").read_text()
        hand = (ROOT / "scripts" / "bench" / "hand" / f"{name}.py").read_text()
        matches = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Match)]
        assert matches, f"{name}: no match statement"
        hand_tree = ast.parse(hand)
        assert not any(isinstance(n, ast.Match) for n in ast.walk(hand_tree)), name


@pytest.mark.slow
def test_quick_run_checksums_agree() -> None:
    env = dict(os.environ)
    for version in ("3.9", "3.10", "3.11"):
        # The runner looks interpreters up as the tests do; pin the same ones.
        env["SPAM_TRANSPILE_PYTHON_" + version.replace(".", "_")] = require_interpreter(
            version
        )
    result = subprocess.run(
        [sys.executable, str(RUNNER), "--quick", "--repeat", "1", "--scale", "0.01"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    report = result.stdout + result.stderr
    assert result.returncode == 0, report[-6000:]
    assert "checksums agree" in result.stdout
    for title in (
        "Run time",
        "Time ÷ native 3.10",
        "Output size",
        "Module load",
        "Transpile speed",
        "Goals of issues 8 and 20",
    ):
        assert title in result.stdout, title
    for column in ("native 3.11", "lowered 3.9", "readable 3.10", "hand 3.9"):
        assert column in result.stdout, column
    for name in PROGRAMS:
        assert f"\n{name} " in result.stdout, name


def test_markdown_tables_and_geomean() -> None:
    runner = _load_runner()
    table = runner.render("T", ["program", "x"], [["a", "1.00"]], True)
    assert table.splitlines()[2:] == [
        "| program | x |",
        "| --- | ---: |",
        "| a | 1.00 |",
    ]
    assert abs(runner.geomean([0.5, 2.0]) - 1.0) < 1e-12
    assert runner.geomean([]) is None
