"""No false rejections on real code: CPython's own standard library.

CI checks every stdlib file that may hold a match statement (the full tree is
``scripts/stdlib_check.py``'s job): each must transpile, files without match
statements must come back byte-identical, and outputs must compile on the
interpreter the tree belongs to. Files refused for syntax CPython 3.10 cannot
compile either (PEP 701 f-strings in 3.12+) are right to be refused.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

import pytest

from tests.interpreters import require_interpreter
from tests.script_loader import load_script

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "stdlib_check.py"


def _load_script() -> ModuleType:
    return load_script(SCRIPT, "stdlib_check")


@pytest.mark.parametrize("version", ["3.11", "3.12", "3.13"])
def test_stdlib_files_that_may_hold_match_statements(version: str) -> None:
    python = require_interpreter(version)
    counts = _load_script().check_tree(
        python, only_match=True, jobs=os.cpu_count() or 1
    )
    assert counts.problems == []
    assert counts.with_match > 0, "expected the stdlib to use match statements"
    assert counts.files == (
        counts.with_match + counts.identical + counts.refused_newer_syntax
    )
