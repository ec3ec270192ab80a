"""The intermediate form one ``case`` is lowered to, before any code is emitted.

A pattern becomes a *condition* and a list of *bindings*:

- a condition is a tree of ``Test`` leaves (one boolean expression each,
  over Python source text), ``All`` (every part holds, tested left to right)
  and ``AnyOf`` (an or-pattern: the first alternative that holds);
- a binding names a user variable and the expression that reads its value
  once the whole condition held. Inside an or-pattern the value depends on
  which alternative matched: a ``Choice`` picks it by testing the
  alternatives again.

Expressions are *paths* from the subject (``s[0].x``, ``s.get('k')``) that
may be read again: PEP 634 leaves how often and in which order items,
attributes and lengths are read unspecified, so the lowering needs no
temporaries for them and nothing is left in ``locals()``. Captures are not
tests: CPython stores them only once the whole pattern has matched, so the
emitters store every binding after the condition (but where no code can tell
the difference: early_binding stores one where its value is first read).

Each ``Test`` carries a ``kind`` the emitters and the shared-facts pass use
(``"kind"`` for a sequence/mapping check, ``"len"``, ``"eq"``, ...), and for
``kind``/``len`` tests on the match subject itself the fact they state.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Iterator, Optional, Tuple, Union


@dataclass(frozen=True)
class Test:
    #: a boolean expression; the pattern fails where it is falsy
    expr: str
    #: what it checks: "kind", "len", "eq", "is", "isinstance", "attr", "key", "raise"
    kind: str = "eq"
    #: the path it checks (the subject text for tests on the subject)
    path: str = ""
    #: for kind tests: "sequence" or "mapping"; for len tests: ("==" | ">=", n);
    #: for ``v in (lit, ...)``: ("one of", the literals' texts); for ``v ==
    #: literal``: ("literal", its kind); for ``v is None``: "None"
    fact: object = None
    #: how the readable layout spells it, when not as ``expr``
    readable: str = ""
    #: keep-lines, a case header over several lines: the line (counted from
    #: the ``case`` line) of the sub-pattern whose check this is, where
    #: CPython 3.10 runs it; None where the header is one line. Not part
    #: of what the test is: passes compare tests without it.
    line: Optional[int] = field(default=None, compare=False)
    #: compares a local variable with a constant (a shared fact), as cheap
    #: as reading a flag
    cheap: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class All:
    parts: Tuple["Cond", ...]


@dataclass(frozen=True)
class AnyOf:
    alternatives: Tuple["Cond", ...]
    #: bindings stored by each alternative as soon as it matched; only for
    #: the last check of a pattern, where nothing can fail after it
    stores: Tuple[Tuple[Tuple[str, "Value"], ...], ...] = ()


Cond = Union[Test, All, AnyOf]

#: the ``fact`` of a ``v in (lit, ...)`` test is ``(ONE_OF, literal texts)``
ONE_OF = "one of"
#: the ``fact`` of ``v == literal`` is ``(LITERAL, "number" | "text" | "bytes")``;
#: that of ``v is None`` the singleton's name
LITERAL = "literal"

TRUE = All(())


@dataclass(frozen=True)
class Choice:
    #: (condition, value) per alternative; the first whose condition holds
    options: Tuple[Tuple[Cond, "Value"], ...]


class RestCopy(str):
    """Readable layout: a ``**rest`` capture's value, spelled as one
    expression (``{k: v for k, v in dict(event).items() if k not in
    ("type",)}``), that a statement may spell as ``rest = dict(event)``
    then ``del rest["type"]``: what CPython does (copy, then delete the
    keys the pattern named)."""

    #: the copy (``dict(event)``)
    copy: str
    #: the literal keys it goes without
    keys: Tuple[str, ...]
    #: the mapping's size (``len(event)``), where the keys are distinct
    #: strings: the copy is empty exactly when it is ``len(keys)``
    size: str

    @classmethod
    def of(
        cls, text: str, copy: str, keys: Tuple[str, ...], size: str = ""
    ) -> "RestCopy":
        value = cls(text)
        value.copy, value.keys, value.size = copy, keys, size
        return value


Value = Union[str, Choice]


@dataclass(frozen=True)
class LoweredPattern:
    cond: Cond
    #: (user name, value), stored once the whole condition held
    bindings: Tuple[Tuple[str, Value], ...]


def all_of(*conds: Cond) -> Cond:
    """``All`` of ``conds``, flattened, without trivially true parts."""
    parts: list = []
    for cond in conds:
        if isinstance(cond, All):
            parts.extend(cond.parts)
        else:
            parts.append(cond)
    return parts[0] if len(parts) == 1 else All(tuple(parts))


def placed(cond: Cond, line: int) -> Cond:
    """``cond`` with its tests not placed yet placed on ``line`` (the
    lowering of a sub-pattern places its own tests first)."""
    if isinstance(cond, Test):
        return replace(cond, line=line) if cond.line is None else cond
    if isinstance(cond, All):
        return All(tuple(placed(part, line) for part in cond.parts))
    alternatives = tuple(placed(a, line) for a in cond.alternatives)
    return AnyOf(alternatives, cond.stores)


def is_true(cond: Cond) -> bool:
    return isinstance(cond, All) and not cond.parts


def is_kind_test(cond: Cond, path: str, fact: object = None) -> bool:
    """A sequence/mapping check on ``path`` (of that ``fact``, if given)."""
    return (
        isinstance(cond, Test)
        and cond.kind == "kind"
        and cond.path == path
        and (fact is None or cond.fact == fact)
    )


def is_length_test(cond: Cond, path: str) -> bool:
    return isinstance(cond, Test) and cond.kind == "len" and cond.path == path


def starts_with_length(cond: Cond, path: str) -> bool:
    """``cond`` tests ``path``'s length first (in every alternative)."""
    if isinstance(cond, AnyOf):
        return all(starts_with_length(a, path) for a in cond.alternatives)
    if isinstance(cond, All):
        return bool(cond.parts) and starts_with_length(cond.parts[0], path)
    return is_length_test(cond, path)


def opens_with_sequence_check(cond: Cond, path: str) -> bool:
    """``cond`` opens with a sequence check on ``path``: once it holds, the
    values of its bindings are read from a sequence."""
    first = cond.parts[0] if isinstance(cond, All) and cond.parts else cond
    return is_kind_test(first, path, "sequence")


def opens_with_sequence_length(cond: Cond, path: str) -> bool:
    """``cond`` opens with a sequence check on ``path`` and its length: where
    CPython takes the length of any sequence."""
    parts = cond.parts if isinstance(cond, All) else (cond,)
    return (
        len(parts) >= 2
        and is_kind_test(parts[0], path, "sequence")
        and is_length_test(parts[1], path)
    )


def map_tests(cond: Cond, change: Callable[[Test], Test]) -> Cond:
    """``cond`` with each ``Test`` leaf replaced by ``change(test)``
    (an or-pattern's stores kept as they are)."""
    if isinstance(cond, Test):
        return change(cond)
    if isinstance(cond, All):
        return All(tuple(map_tests(part, change) for part in cond.parts))
    alternatives = tuple(map_tests(a, change) for a in cond.alternatives)
    return AnyOf(alternatives, cond.stores)


def tests_in(cond: Cond) -> Iterator[Test]:
    """The ``Test`` leaves of ``cond``, in text order."""
    if isinstance(cond, Test):
        yield cond
    else:
        for part in cond.parts if isinstance(cond, All) else cond.alternatives:
            yield from tests_in(part)


def dump(pattern: LoweredPattern) -> str:
    """A stable text form, for tests and debugging."""
    lines: list[str] = []
    _dump_cond(pattern.cond, lines, "")
    for name, value in pattern.bindings:
        lines.append(f"bind {name} = {_dump_value(value)}")
    return "\n".join(lines)


def _dump_cond(cond: Cond, lines: list, indent: str) -> None:
    if isinstance(cond, Test):
        lines.append(f"{indent}{cond.kind} {cond.expr}")
    elif isinstance(cond, All):
        for part in cond.parts:
            _dump_cond(part, lines, indent)
    else:
        lines.append(f"{indent}any of")
        for i, alternative in enumerate(cond.alternatives):
            lines.append(f"{indent}  alternative")
            _dump_cond(alternative, lines, indent + "    ")
            for name, value in cond.stores[i] if cond.stores else ():
                lines.append(f"{indent}    store {name} = {_dump_value(value)}")


def _dump_value(value: Value) -> str:
    if isinstance(value, str):
        return value
    return "choice(" + ", ".join(_dump_value(v) for _, v in value.options) + ")"
