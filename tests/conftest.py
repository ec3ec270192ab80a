"""Make test helpers importable both as `tests.interpreters` and as
`interpreters` (the style difftest, patma_split and their users use), under any
pytest import mode and from scripts; mark the tests that start another
interpreter `targets` (see tests/target_marking.py).
"""

import sys
from pathlib import Path

import pytest

_TESTS_DIR = Path(__file__).resolve().parent
for _path in (str(_TESTS_DIR.parent), str(_TESTS_DIR)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import tests.interpreters  # noqa: E402
from tests import target_marking  # noqa: E402

# One module under both names: one cache of found interpreters, one lookup check.
sys.modules.setdefault("interpreters", tests.interpreters)

_GUARD = target_marking.LookupGuard()


def pytest_configure(config: pytest.Config) -> None:
    tests.interpreters.lookup_check = _GUARD.check


def pytest_unconfigure(config: pytest.Config) -> None:
    tests.interpreters.lookup_check = None


def pytest_itemcollected(item: pytest.Item) -> None:
    # Before -m selects: `-m "not targets"` sees the marker.
    if target_marking.item_uses_interpreters(item):
        item.add_marker(target_marking.MARKER)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> None:
    _GUARD.start(item)


def pytest_runtest_logfinish() -> None:
    _GUARD.stop()
