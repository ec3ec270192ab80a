"""CPython 3.10's test_patma, lowered by spam_transpile, must pass on 3.9 to 3.6.

One pytest test per test_patma method and target interpreter, e.g.
``test_patma[3.9-TestPatma.test_patma_042]``. The lowering and the run on each
target happen once per session (see tests/patma_split.py); each test then
reports its own outcome.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import patma_split
from interpreters import require_interpreter

TARGETS = ("3.9", "3.8", "3.7", "3.6")


# Computed at collection time: the parametrize ids must exist before any run.
UNAVAILABLE: patma_split.PatmaUnavailable | None = None
try:
    _TEXT = patma_split.load_test_patma().text
    METHODS = patma_split.split_methods(_TEXT)
except patma_split.PatmaUnavailable as exc:
    _TEXT, METHODS, UNAVAILABLE = "", [], exc


def _needs_38(method: patma_split.TestMethod) -> bool:
    """The test's own code uses ``:=``, which 3.7 cannot run (and we refuse)."""
    lines = _TEXT.splitlines()[method.first_line - 1 : method.last_line]
    return any(":=" in line for line in lines)


def _marks(version: str, method: patma_split.TestMethod) -> list:
    if version in ("3.7", "3.6") and _needs_38(method):
        return [pytest.mark.skip(reason="the test itself uses assignment expressions")]
    return []


class SuiteRuns:
    """Lowers and runs the suite once per target, on first use, limited to the
    tests this session selected (so `-k test_patma_042` stays quick)."""

    def __init__(
        self, tmp_path_factory: pytest.TempPathFactory, selected: set[tuple[str, str]]
    ) -> None:
        self._tmp_path_factory = tmp_path_factory
        self._selected = selected
        self._runs: dict[str, patma_split.SuiteRun] = {}

    def get(self, version: str) -> patma_split.SuiteRun:
        if version not in self._runs:
            python = require_interpreter(version)
            workdir: Path = self._tmp_path_factory.mktemp(f"patma-{version}")
            only = [test_id for v, test_id in self._selected if v == version]
            self._runs[version] = patma_split.run_suite(
                python, patma_split.SpamTranspiler(version), workdir, only=only
            )
        return self._runs[version]


def _selected(session: pytest.Session) -> set[tuple[str, str]]:
    """(version, test id) of every test_patma item left after -k/deselection."""
    selected = set()
    for item in session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if isinstance(params.get("method"), patma_split.TestMethod):
            selected.add((params["version"], params["method"].test_id))
    return selected


@pytest.fixture(scope="session")
def suite_runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> SuiteRuns:
    return SuiteRuns(tmp_path_factory, _selected(request.session))


if METHODS:

    @pytest.mark.slow
    @pytest.mark.parametrize(
        ("version", "method"),
        [
            pytest.param(
                version,
                method,
                id=f"{version}-{method.test_id}",
                marks=_marks(version, method),
            )
            for version in TARGETS
            for method in METHODS
        ],
    )
    def test_patma(
        suite_runs: SuiteRuns, version: str, method: patma_split.TestMethod
    ) -> None:
        run = suite_runs.get(version)
        outcome = run.outcomes.get(method.test_id)
        if outcome is None:
            pytest.fail(f"{method.test_id} was not run (not selected at start)")
        if outcome.status == "skip":
            pytest.skip(outcome.detail)
        if not outcome.ok:
            pytest.fail(patma_split.failure_report(run, method), pytrace=False)

    def test_patma_method_count() -> None:
        # A changed 3.10 stdlib must be noticed, not silently run differently.
        assert len(METHODS) == patma_split.EXPECTED_METHOD_COUNT

else:

    @pytest.mark.slow
    def test_patma() -> None:
        assert UNAVAILABLE is not None
        if UNAVAILABLE.interpreter_missing:
            require_interpreter(patma_split.ORACLE_VERSION)  # skips or fails
        pytest.fail(f"cannot read test_patma.py: {UNAVAILABLE}", pytrace=False)
