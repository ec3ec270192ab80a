"""A call or a path a case reads more than once, read once into a variable.

The helper's read of a class pattern's fields (``_spam.attrs(...)``) and a
path from the subject (``event.get("request")`` in a mapping check and in
each lookup under it) are stored where first read, in a function that
never reads its own frame (:mod:`.quiet_captures`); PEP 634 leaves how
often they are read open.
"""

from __future__ import annotations

import ast
import re
from typing import Callable, Dict, FrozenSet, List, Optional, Set, Tuple

from spam_transpile.lowering.emit import case_test, walrus_binder
from spam_transpile.lowering.early_binding import place_at_first_read
from spam_transpile.lowering.ir import (
    All,
    AnyOf,
    Cond,
    LoweredPattern,
    Value,
    tests_in,
)
from spam_transpile.lowering.names import TEMP_PREFIX, Names

__all__ = ["read_calls_once", "read_paths_once"]


def read_calls_once(
    pattern: LoweredPattern,
    prefix: str,
    new_name: Callable[[str], str],
    named: Dict[str, str],
) -> LoweredPattern:
    """``pattern`` with each call starting with ``prefix`` that it makes
    more than once (the helper's read of a class pattern's fields) stored
    in a variable where it is first made, and read from it after that.
    ``named``: call -> variable, for the match statement's cases to share
    names (each case stores its own before reading it); ``new_name`` names
    a call the first time."""
    if not any(prefix in test.expr for test in tests_in(pattern.cond)):
        return pattern  # most patterns: no such call to make at all
    calls = lambda text: _repeated_calls(prefix, text)  # noqa: E731
    return _read_once(pattern, calls, new_name, named)


def read_paths_once(
    pattern: LoweredPattern,
    heads: FrozenSet[str],
    new_name: Callable[[str], str],
    named: Dict[str, str],
) -> LoweredPattern:
    """As :func:`read_calls_once`, for paths from the subject a case reads
    more than once (``event.get("request")`` in its mapping check and in
    each lookup under it); PEP 634 leaves how often they are read open."""
    return _read_once(
        pattern, lambda text: _repeated_paths(text, heads), new_name, named
    )


def _read_once(
    pattern: LoweredPattern,
    repeated: Callable[[str], List[str]],
    new_name: Callable[[str], str],
    named: Dict[str, str],
) -> LoweredPattern:
    cond = pattern.cond
    parts: List[Cond] = list(cond.parts) if isinstance(cond, All) else [cond]
    bindings: List[Tuple[str, Value]] = list(pattern.bindings)
    tried: Set[str] = set()
    while True:
        text = case_test(
            LoweredPattern(All(tuple(parts)), tuple(bindings)), walrus_binder()
        )
        found = [t for t in repeated(text) if t not in tried]
        if not found:
            break
        read = found[0]  # the shortest: an inner one first
        tried.add(read)
        given: List[str] = []

        def name_of(read: str = read) -> str:
            given.append(named.get(read) or new_name(read))
            return given[-1]

        placed = place_at_first_read(name_of, read, parts, bindings)
        if placed is not None:
            named[read] = given[-1]
            parts, bindings = placed
    parts = [
        (
            _alternatives_read_once(part, repeated, new_name, named)
            if isinstance(part, AnyOf)
            else part
        )
        for part in parts
    ]
    new_cond: Cond = All(tuple(parts)) if isinstance(cond, All) else parts[0]
    return LoweredPattern(new_cond, tuple(bindings))


def _alternatives_read_once(
    cond: AnyOf,
    repeated: Callable[[str], List[str]],
    new_name: Callable[[str], str],
    named: Dict[str, str],
) -> AnyOf:
    """``cond`` with what each alternative reads more than once (with the
    values it stores) read once within it: an alternative runs only where
    those before it failed, so it stores its own temporaries before it
    reads them (``case Assign(targets=[t]) | AugAssign(t, _, _)`` reads
    ``targets`` once)."""
    alternatives: List[Cond] = []
    stores: List[Tuple[Tuple[str, Value], ...]] = []
    for index, alternative in enumerate(cond.alternatives):
        own = cond.stores[index] if cond.stores else ()
        done = _read_once(LoweredPattern(alternative, own), repeated, new_name, named)
        alternatives.append(done.cond)
        stores.append(done.bindings)
    return AnyOf(tuple(alternatives), tuple(stores) if cond.stores else ())


# A path from a name: lookups under constant keys, constant indexes and
# attributes (a value pattern's dotted name is one too), not a method.
_STEP = r"""(?:\.get\((?:"[^"\\]*"|'[^'\\]*'|-?\d+|None|True|False)\)|\[-?\d+\]|\.[A-Za-z_]\w*(?![\w(]))"""
_PATH = re.compile(rf"(?<![\w.])[A-Za-z_]\w*{_STEP}+")
_STEPS = re.compile(_STEP)
_HEAD = re.compile(r"[A-Za-z_]\w*")


def _repeated_paths(text: str, heads: FrozenSet[str]) -> List[str]:
    """Paths from the subject read more than once in ``text`` (each step of
    a longer path counts as a read of the shorter one), shortest first.
    ``heads``: the subject's names; a temporary of the lowering's is one too
    (not the helper, nor a value pattern's dotted name, looked up anew)."""
    counts: Dict[str, int] = {}
    for found in _PATH.finditer(text):
        whole = found.group()
        head = _HEAD.match(whole)
        assert head is not None
        name = head.group()
        if name not in heads and not name.startswith(TEMP_PREFIX):
            continue
        for step in _STEPS.finditer(whole, head.end()):
            prefix = whole[: step.end()]
            counts[prefix] = counts.get(prefix, 0) + 1
    return sorted((p for p, n in counts.items() if n > 1), key=len)


def _repeated_calls(prefix: str, text: str) -> List[str]:
    """Calls starting with ``prefix`` made more than once in ``text``,
    shortest first."""
    counts: Dict[str, int] = {}
    start = text.find(prefix)
    while start != -1:
        call = _call_at(text, start + len(prefix))
        if call is not None:
            whole = prefix + call
            counts[whole] = counts.get(whole, 0) + 1
        start = text.find(prefix, start + 1)
    return sorted((c for c, n in counts.items() if n > 1), key=len)


def _call_at(text: str, start: int) -> Optional[str]:
    """The arguments and closing parenthesis of a call whose arguments start
    at ``start`` (string literals skipped whole), or None."""
    depth, index = 1, start
    while index < len(text):
        char = text[index]
        if char in "'\"":
            quote = (
                text[index : index + 3] if text[index : index + 3] == char * 3 else char
            )
            end = _closing(text, index + len(quote), quote)
            if end is None:
                return None
            index = end + len(quote)
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return text[start : index + 1]
        index += 1
    return None


def _closing(text: str, index: int, quote: str) -> Optional[int]:
    """Where the string literal ending with ``quote`` ends, from ``index``."""
    while index < len(text):
        if text[index] == "\\":
            index += 2
        elif text.startswith(quote, index):
            return index
        else:
            index += 1
    return None


def fields_read_once(
    pattern: LoweredPattern, helper: str, names: Names, named: Dict[str, str]
) -> LoweredPattern:
    """The readable layout: the helper's read of a class pattern's fields
    (for a class whose ``__match_args__`` only the running program knows)
    made once per case, into a variable named after the class:
    ``(point_fields := _spam.attrs(shape, Point, 2, ())) is not None``,
    then ``x, y = point_fields[0], point_fields[1]``. ``named``: as
    :func:`read_calls_once`."""

    def new_name(call: str) -> str:
        node = ast.parse(call, mode="eval").body
        cls = node.args[1]  # type: ignore[attr-defined]
        word = cls.attr if isinstance(cls, ast.Attribute) else getattr(cls, "id", "")
        snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", word).lower() or "class"
        return names.readable(f"{snake}_fields")

    return read_calls_once(pattern, f"{helper}.attrs(", new_name, named)
