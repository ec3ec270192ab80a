"""Run a program natively on CPython 3.10 and its lowering on older CPythons.

Shared by the tests of the layouts (test_readable, test_early_binding,
test_literal_switch, test_transpile, test_hostile_input); every test that
calls :func:`assert_runs_like_native` starts other interpreters, so
tests/conftest.py marks it ``targets``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Sequence

from tests.interpreters import require_interpreter


def run(python: str, path: Path, cwd: Path) -> subprocess.CompletedProcess:
    code = (
        "import runpy, sys; sys.path.insert(0, %r); "
        "m = runpy.run_path(%r, run_name='__main__'); "
        "r = m.get('run'); print(r(m.get('WORKLOAD', 10) // 50 or 1) if r else '')"
    ) % (str(cwd), str(path))
    return subprocess.run(
        [python, "-c", code], capture_output=True, timeout=120, cwd=cwd
    )


def assert_runs_like_native(
    source: str, out: str, tmp_path: Path, versions: Sequence[str] = ("3.9",)
) -> bytes:
    """Run ``source`` on native 3.10 and ``out`` on each of ``versions``: the
    same exit status (0) and output; the output."""
    (tmp_path / "native.py").write_text(source, "utf-8")
    (tmp_path / "lowered.py").write_text(out, "utf-8")
    native = run(require_interpreter("3.10"), tmp_path / "native.py", tmp_path)
    for version in versions:
        ran = run(require_interpreter(version), tmp_path / "lowered.py", tmp_path)
        assert ran.returncode == native.returncode == 0, ran.stderr.decode()
        assert ran.stdout == native.stdout
    return native.stdout


# A program lowered by test_readable and test_early_binding: the fields of
# ``Pair`` are only known when it runs.
FIELDS_AT_RUN_TIME = """\
class Pair:
    # not a literal: only the running program knows the fields
    __match_args__ = tuple(["left", "right"])

    def __init__(self, left, right):
        self.left, self.right = left, right

    def __repr__(self):
        return f"Pair({self.left!r}, {self.right!r})"


def total(value):
    match value:
        case Pair(Pair(a, b), Pair(c, d)):
            return ("four", a, b, c, d)
        case Pair(Pair(a, b), c) if a:
            return ("three", a, b, c)
        case Pair(a, b):
            return ("two", a, b)
        case _:
            return "other"


for value in [
    Pair(Pair(1, 2), Pair(3, 4)),
    Pair(Pair(0, 2), 3),
    Pair(Pair(1, 2), 3),
    Pair(1, 2),
    (1, 2),
]:
    print(total(value))
match Pair(1, 2):
    case Pair(a, b):
        print(a, b)
print(sorted(n for n in globals() if n.endswith("_fields")))
"""
