"""Real code nobody on the project wrote: a small part of scripts/realworld.py.

pycparser 3.0's sdist (from PyPI, pinned by sha256) holds 15 match statements
(token types, characters, class patterns on its C AST) and 134 tests. Its
tests must have the same outcome, test by test, on the lowered copy (both
layouts) as natively, on the same interpreter. When PyPI cannot be reached the
test is skipped, unless SPAM_TRANSPILE_REQUIRE_TARGETS is set (CI): then that
is a failure, as a missing interpreter is in tests/interpreters.py.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.interpreters import REQUIRE_ENV, require_interpreter, targets_required
from tests.script_loader import load_script

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "realworld.py"


def _load_script() -> ModuleType:
    return load_script(SCRIPT, "realworld")


@pytest.mark.slow
def test_pycparser_tests_pass_lowered_as_natively(tmp_path: Path) -> None:
    realworld = _load_script()
    (project,) = [p for p in realworld.load_projects() if p.name == "pycparser"]
    version = project.pythons[0]
    require_interpreter(version)
    result = realworld.run_project(
        project, tmp_path, realworld.LAYOUTS, [version], log=lambda _m: None
    )
    if result.unreachable:
        reason = f"PyPI not reachable: {result.error}"
        if targets_required():
            pytest.fail(f"{reason}; {REQUIRE_ENV} is set, so this is an error")
        pytest.skip(reason)
    assert result.error == ""
    (row,) = result.rows
    assert row.matches == 15
    # The native run is the oracle; it must have run the tests at all.
    assert row.runs[realworld.NATIVE].counts()["passed"] > 100
    for layout in realworld.LAYOUTS:
        assert row.diffs[layout] == [], layout


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.test_a" name="test_ok" time="0.1"/>
<testcase classname="tests.test_a" name="test_skip"><skipped message="no"/></testcase>
<testcase classname="tests.test_a" name="test_torn"><error message="teardown"/></testcase>
<testcase classname="tests.test_a" name="test_torn"><failure message="x"/></testcase>
<testcase classname="tests.test_a" name="test_bad"><failure message="y"/></testcase>
</testsuite></testsuites>
"""


def test_junit_reports_read_test_by_test(tmp_path: Path) -> None:
    realworld = _load_script()
    report = tmp_path / "report.xml"
    report.write_text(JUNIT)
    assert realworld.read_junit(report) == {
        "tests.test_a::test_ok": "passed",
        "tests.test_a::test_skip": "skipped",
        # Reported twice (an error, then a failure): the worse counts, not the last.
        "tests.test_a::test_torn": "error",
        "tests.test_a::test_bad": "failed",
    }


def test_differences_are_per_test_not_per_count() -> None:
    realworld = _load_script()
    native = realworld.Outcomes({"a": "passed", "b": "failed", "c": "passed"})
    # The same counts (2 passed, 1 failed), other tests: still a difference.
    lowered = realworld.Outcomes({"a": "failed", "b": "passed", "d": "passed"})
    assert realworld.differences(native, lowered) == [
        "a: native passed, lowered failed",
        "b: native failed, lowered passed",
        "c: native passed, lowered absent",
        "d: native absent, lowered passed",
    ]
    crashed = realworld.Outcomes(crashed="pytest exit 4")
    assert realworld.differences(native, crashed) == ["run crashed: pytest exit 4"]
    assert realworld.differences(native, native) == []
