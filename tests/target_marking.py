"""The ``targets`` marker: which tests start another CPython (3.6-3.13).

Every test that runs code on another interpreter looks it up through
tests/interpreters.py (``require_interpreter`` or ``find_interpreter``): in its
own body, in a helper it calls or in a fixture it uses. tests/conftest.py marks
such tests ``targets`` at collection: :func:`item_uses_interpreters` reads the
code of the test and of its fixtures, following the functions, classes and
modules of tests/ that code names. So a new test gets the marker without
anyone adding it.

What reading the code cannot see (a script of scripts/, loaded at run time,
that looks interpreters up itself) is caught when the test runs:
:class:`LookupGuard` fails a test without the marker at its first lookup, and
the fix is an explicit ``@pytest.mark.targets`` on it.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys
import types
from pathlib import Path
from typing import Any, Callable, Dict, Hashable, Iterator, Optional, Set

import pytest

TESTS_DIR = Path(__file__).resolve().parent
LOOKUPS = frozenset({"require_interpreter", "find_interpreter"})
INTERPRETERS_MODULE = "interpreters"
MARKER = "targets"

# Results of whole walks (see _uses); a function's answer never changes.
_KNOWN: Dict[Any, bool] = {}


@functools.lru_cache(maxsize=None)
def _in_tests(filename: Optional[str]) -> bool:
    """Whether ``filename`` is a module of tests/ (not of a subfolder)."""
    if not filename:
        return False
    try:
        return Path(filename).resolve().parent == TESTS_DIR
    except (OSError, ValueError):
        return False


def _stem(filename: str) -> str:
    return Path(filename).stem


def _is_lookup(value: Any) -> bool:
    code = getattr(value, "__code__", None)
    return (
        getattr(value, "__name__", None) in LOOKUPS
        and code is not None
        and _in_tests(code.co_filename)
        and _stem(code.co_filename) == INTERPRETERS_MODULE
    )


def _names(code: types.CodeType) -> Set[str]:
    """The global, attribute and imported module names used by ``code`` and
    by the code nested in it (inner functions, lambdas, comprehensions)."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


_TESTS_STEMS = frozenset(path.stem for path in TESTS_DIR.glob("*.py"))


@functools.lru_cache(maxsize=None)
def _tests_module(name: str) -> Optional[types.ModuleType]:
    """The module of tests/ that ``import name`` in a function body gives
    (imported now if need be), or None when ``name`` names no such module."""
    stem = name[len("tests.") :] if name.startswith("tests.") else name
    if stem not in _TESTS_STEMS:
        return None
    try:
        return importlib.import_module(name)
    except Exception:  # the test itself will report it
        return None


def _referenced(function: types.FunctionType, names: Set[str]) -> Iterator[Any]:
    """What ``function`` can reach: its globals among ``names``, the modules of
    tests/ it imports in its body, its closure and its default values."""
    namespace = function.__globals__
    for name in sorted(names):  # the same walk every run
        if name in namespace:
            yield namespace[name]
        else:
            module = _tests_module(name)
            if module is not None:
                yield module
    for cell in function.__closure__ or ():
        try:
            yield cell.cell_contents
        except ValueError:  # an empty cell
            pass
    yield from function.__defaults__ or ()
    yield from (function.__kwdefaults__ or {}).values()


def _unwrap(value: Any) -> Any:
    try:
        return _unwrapped(value)
    except Exception:  # an object with a strange __getattr__: not code
        return value


def _unwrapped(value: Any) -> Any:
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    elif isinstance(value, functools.partial):
        value = value.func
    if inspect.ismethod(value):
        value = value.__func__
    # hypothesis' @given keeps the test it wraps here
    inner = getattr(getattr(value, "hypothesis", None), "inner_test", None)
    if inner is not None:
        value = inner
    try:
        return inspect.unwrap(value)  # functools.wraps, lru_cache
    except ValueError:
        return value


def _module_file(value: Any) -> Optional[str]:
    module = sys.modules.get(getattr(value, "__module__", None) or "")
    return getattr(module, "__file__", None)


def _uses(value: Any, names: Set[str], seen: Dict[Hashable, Any]) -> bool:
    """Whether calling ``value`` may look up an interpreter. ``names`` are
    the names the code that reached ``value`` uses (to follow the attributes
    of a module); ``seen`` holds what this walk visited, by id (a module: by
    id and names)."""
    if isinstance(value, property):
        return any(_uses(f, names, seen) for f in (value.fget, value.fset, value.fdel))
    value = _unwrap(value)
    if _is_lookup(value):
        return True
    if isinstance(value, types.ModuleType):
        if not _in_tests(getattr(value, "__file__", None)):
            return False
        # What a module gives depends on the names asked for.
        key = (id(value), frozenset(names))
        if key in seen:
            return False
        seen[key] = value
        if _stem(value.__file__ or "") == INTERPRETERS_MODULE:
            return bool(names & LOOKUPS)
        # `import difftest` / `import tests.interpreters`: the attributes
        # the code names on a module of tests/.
        return any(
            _uses(getattr(value, name), names, seen)
            for name in sorted(names)
            if hasattr(value, name)
        )
    is_class = inspect.isclass(value)
    if is_class:
        if not _in_tests(_module_file(value)):
            return False
    elif not inspect.isfunction(value) or not _in_tests(value.__code__.co_filename):
        return False
    if id(value) in seen:
        return False
    seen[id(value)] = value
    known = _KNOWN.get(value)
    if known is not None:
        return known
    if is_class:
        return any(_uses(member, names, seen) for member in vars(value).values())
    own_names = _names(value.__code__)
    return any(_uses(found, own_names, seen) for found in _referenced(value, own_names))


def uses_interpreters(value: Any) -> bool:
    """Whether calling ``value`` (a test, a fixture, a helper) may look up
    another interpreter, as far as its code and the code of tests/ it names
    tell."""
    seen: Dict[Hashable, Any] = {}
    found = _uses(value, set(), seen)
    if found:
        root = seen.get(id(_unwrap(value)))
        if root is not None:
            _KNOWN[root] = True
    else:
        # Nothing this walk visited reaches a lookup either.
        for visited in seen.values():
            if not isinstance(visited, types.ModuleType):
                _KNOWN[visited] = False
    return found


def item_uses_interpreters(item: pytest.Item) -> bool:
    """Whether the test ``item`` or one of its fixtures may look up another
    interpreter."""
    function = getattr(item, "obj", None)
    if function is not None and uses_interpreters(function):
        return True
    fixture_info = getattr(item, "_fixtureinfo", None)
    for definitions in getattr(fixture_info, "name2fixturedefs", {}).values():
        for definition in definitions:
            if uses_interpreters(definition.func):
                return True
    return False


class LookupGuard:
    """Fails a test not marked ``targets`` at its first interpreter lookup.

    ``start(item)`` before the test's setup, ``stop()`` after its teardown;
    tests/interpreters.py calls :meth:`check` at every lookup. Lookups made
    outside a test (at collection) are not checked.
    """

    def __init__(self, fail: Callable[[str], Any] = pytest.fail) -> None:
        self._fail = fail
        self._item: Optional[pytest.Item] = None

    def start(self, item: pytest.Item) -> None:
        self._item = item

    def stop(self) -> None:
        self._item = None

    def check(self, version: str) -> None:
        item = self._item
        if item is None or item.get_closest_marker(MARKER) is not None:
            return
        self._fail(
            f"{item.nodeid} looks up CPython {version} but is not marked"
            f" `{MARKER}`, so `pytest -m 'not {MARKER}'` would run it: add"
            f" @pytest.mark.{MARKER} to it (tests/target_marking.py could not"
            " tell from its code)"
        )
