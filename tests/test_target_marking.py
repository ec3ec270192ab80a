"""The ``targets`` marker: tests/conftest.py marks every test that looks up
another interpreter (tests/target_marking.py reads its code), and fails one it
missed when it looks one up."""

from __future__ import annotations

import functools
import sys
from typing import Callable, Dict

import pytest

import interpreters
from like_native import assert_runs_like_native
from spam_transpile import transpile
from tests.target_marking import MARKER, LookupGuard, uses_interpreters

# Code to read, never to run. Kept in a table (the tests below name the table,
# not the functions) so that reading the tests themselves finds no lookup.
SAMPLES: Dict[str, Callable[..., object]] = {}


def sample(function: Callable[..., object]) -> Callable[..., object]:
    SAMPLES[function.__name__] = function
    return function


@sample
def calls_the_lookup() -> object:
    return interpreters.require_interpreter("3.9")


@sample
def imports_the_lookup_in_its_body() -> object:
    from tests.interpreters import find_interpreter

    return find_interpreter("3.9")


@sample
def calls_a_helper_of_another_module() -> object:
    return assert_runs_like_native("", "", None)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=None)
def _cached_lookup() -> object:
    return interpreters.find_interpreter("3.13")


@sample
def calls_a_cached_helper() -> object:
    return [_cached_lookup() for _ in range(2)]


class _Runner:
    def run(self) -> object:
        return interpreters.require_interpreter("3.8")


@sample
def uses_a_class_that_looks_up() -> object:
    return _Runner().run()


def _first_a_constant_of_a_module() -> object:
    return interpreters.REQUIRE_ENV


def _then_a_function_of_the_same_module() -> object:
    return interpreters.find_interpreter("3.9")


@sample
def uses_one_module_for_two_things() -> object:
    # Names are followed in sorted order: the module is met first for the
    # constant, and must be followed again for the function.
    return [_first_a_constant_of_a_module(), _then_a_function_of_the_same_module()]


@sample
def only_transpiles() -> object:
    return transpile("match x:\n    case 1:\n        pass\n")


@sample
def runs_this_interpreter() -> object:
    import subprocess

    return subprocess.run([sys.executable, "-c", "pass"])


@sample
def calls_only_code_without_lookups() -> object:
    return [only_transpiles(), runs_this_interpreter()]


@pytest.mark.parametrize(
    "name",
    [
        "calls_the_lookup",
        "imports_the_lookup_in_its_body",
        "calls_a_helper_of_another_module",
        "calls_a_cached_helper",
        "uses_a_class_that_looks_up",
        "uses_one_module_for_two_things",
    ],
)
def test_code_that_looks_up_an_interpreter_is_found(name: str) -> None:
    assert uses_interpreters(SAMPLES[name])


@pytest.mark.parametrize(
    "name",
    ["only_transpiles", "runs_this_interpreter", "calls_only_code_without_lookups"],
)
def test_code_without_lookups_is_not(name: str) -> None:
    assert not uses_interpreters(SAMPLES[name])


@pytest.fixture
def lookup() -> Callable[[str], str]:
    """Hands the lookup to the test, without calling it."""
    return interpreters.require_interpreter


def test_a_test_whose_fixture_looks_up_is_marked(
    lookup: Callable[[str], str], request: pytest.FixtureRequest
) -> None:
    assert request.node.get_closest_marker(MARKER) is not None


def test_a_test_that_looks_nothing_up_is_not_marked(
    request: pytest.FixtureRequest,
) -> None:
    assert request.node.get_closest_marker(MARKER) is None


def test_one_module_under_both_names() -> None:
    # One cache of interpreters and one lookup check, whichever name is used.
    assert sys.modules["interpreters"] is sys.modules["tests.interpreters"]


def test_a_lookup_the_reading_misses_fails_the_test() -> None:
    # Named in a way reading the code cannot follow (as a script loaded at
    # run time would): conftest's guard fails the test before any lookup.
    hidden = getattr(interpreters, "find_" + "interpreter")
    with pytest.raises(pytest.fail.Exception, match="not marked `targets`"):
        hidden("3.9")


class _Item:
    nodeid = "tests/test_x.py::test_y"

    def __init__(self, marked: bool) -> None:
        self.marked = marked

    def get_closest_marker(self, name: str) -> object:
        return object() if self.marked and name == MARKER else None


def test_the_guard_fails_only_unmarked_tests_while_they_run() -> None:
    failures = []
    guard = LookupGuard(fail=failures.append)
    guard.check("3.9")  # no test running (collection): not checked
    guard.start(_Item(marked=True))  # type: ignore[arg-type]
    guard.check("3.9")
    guard.stop()
    guard.start(_Item(marked=False))  # type: ignore[arg-type]
    guard.check("3.7")
    guard.stop()
    guard.check("3.9")
    assert len(failures) == 1
    assert "tests/test_x.py::test_y looks up CPython 3.7" in failures[0]
    assert "@pytest.mark.targets" in failures[0]
