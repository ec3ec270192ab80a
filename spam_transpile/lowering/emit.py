"""Emit a lowered case as one ``if``/``elif`` test expression (source text).

Two shapes, chosen per case by the transformer:

- *comprehension*: ``[0 for s in (subject,) for t in (expr,) if check ...
  if [store(x, t)]]``. Every temporary is a comprehension variable, so none
  is left in ``locals()``; the list is non-empty exactly when the pattern
  matched. Used in functions (and at module level on 3.8+).
- *chain*: ``check and let(t, expr) and ... and [store(x, t)]``, for class
  bodies (where ``:=`` may not appear in a comprehension), module level
  before 3.8, and patterns that need no temporary. The transformer removes
  the temporaries a chain stores.

How a name is stored is the :class:`Binder`'s business: ``x := v`` on 3.8+;
before 3.8, a write to the namespace dict in module and class bodies, and in
functions a write to the variable's cell (``x`` made local, and so a cell, by
an annotation on the match line).

Either way the test has no statement in it, so it fits on the case's line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, List, Tuple

from spam_transpile.lowering.ir import (
    Alternatives,
    Check,
    Let,
    LoweredPattern,
    Step,
    Unpack,
)
from spam_transpile.lowering.names import Names


@dataclass
class Binder:
    #: expression storing ``value`` in user name ``name`` (its value unused)
    store: Callable[[str, str], str]
    #: truthy expression storing ``value`` in temporary ``temp`` (chains only)
    let: Callable[[str, str], str]
    #: temporaries stored so far (chains only), for the transformer to remove
    stored: List[str] = field(default_factory=list)


def walrus_binder() -> Binder:
    return Binder(
        store=lambda name, value: f"({name} := {value})",
        let=lambda temp, value: f"(({temp} := {value}) is {temp})",
    )


def function_walrus_binder(
    names: Names,
    globals_: frozenset,
    nonlocals: frozenset,
    mangle: Callable[[str], str],
) -> Binder:
    """``:=`` in a function, except for names it declares global or nonlocal.

    CPython's compiler cannot bind a ``global``/``nonlocal`` name that is
    class-private (mangled) with ``:=`` inside a comprehension ("no binding
    for nonlocal"), so such names are stored as before 3.8: global ones
    through ``globals()``, nonlocal ones through their cell.
    """
    walrus = walrus_binder()
    older = cell_binder(names, (3, 7), globals_, mangle)

    def store(name: str, value: str) -> str:
        if name in globals_ or (name in nonlocals and mangle(name) != name):
            return older.store(name, value)
        return walrus.store(name, value)

    return Binder(store=store, let=walrus.let)


def namespace_binder(namespace: str, mangle: Callable[[str], str]) -> Binder:
    """Stores through ``namespace`` (``locals()`` of a module or class body)."""
    return Binder(
        store=lambda name, value: f"{namespace}.__setitem__({mangle(name)!r}, {value})",
        let=lambda temp, value: f"[{namespace}.__setitem__({temp!r}, {value})]",
    )


def cell_binder(
    names: Names,
    target: Tuple[int, int],
    globals_: frozenset,
    mangle: Callable[[str], str],
) -> Binder:
    """Stores into a function's local (cell) variables without ``:=``.

    ``(lambda: x).__closure__[0]`` is the function's own cell for ``x``;
    3.7 made ``cell_contents`` writable, 3.6 needs the C API's PyCell_Set.
    Names the function declares global go through ``globals()``.
    """

    def store(name: str, value: str) -> str:
        if name in globals_:
            # The dict needs the name as stored: ``__x`` in a class is private.
            return (
                f"{names.builtin('globals')}().__setitem__({mangle(name)!r}, {value})"
            )
        cell = f"(lambda: {name}).__closure__[0]"
        if target >= (3, 7):
            return f"{names.builtin('setattr')}({cell}, 'cell_contents', {value})"
        ctypes = f"{names.builtin('__import__')}('ctypes')"
        return (
            f"{ctypes}.pythonapi.PyCell_Set({ctypes}.py_object({cell}), "
            f"{ctypes}.py_object({value}))"
        )

    return Binder(store=store, let=_no_chain_temps)


def _no_chain_temps(
    temp: str, value: str
) -> str:  # pragma: no cover - guarded by callers
    raise AssertionError("function chains never need temporaries")


def comprehension_test(
    pattern: LoweredPattern, root: str, subject: str, names: Names, binder: Binder
) -> str:
    # Checks before the first temporary need no comprehension: testing them
    # first, in the enclosing scope, keeps a failing case from paying for a
    # comprehension it would leave at once (the same checks, in the same order).
    steps = list(pattern.steps)
    leading: List[str] = []
    while steps and isinstance(steps[0], Check):
        check = steps.pop(0)
        assert isinstance(check, Check)
        leading.append(f"({_with_subject(check.expr, root, subject)})")
    clauses = [f"for {root} in ({subject},)"]
    clauses.extend(_clauses(tuple(steps), names))
    if pattern.captures:
        clauses.append(f"if {_captures(pattern.captures, binder)}")
    return " and ".join([*leading, f"[0 {' '.join(clauses)}]"])


def _with_subject(text: str, root: str, subject: str) -> str:
    # The root name is fresh, so a whole-word replacement cannot touch user text.
    return re.sub(rf"\b{re.escape(root)}\b", lambda _: subject, text)


def chain_test(
    pattern: LoweredPattern, root: str, subject: str, names: Names, binder: Binder
) -> str:
    parts = _chain(pattern.steps, names, binder)
    if pattern.captures:
        parts.append(_captures(pattern.captures, binder))
    text = " and ".join(parts) if parts else f"[{root}]"
    return _with_subject(text, root, subject)


def _captures(captures: Tuple[Tuple[str, str], ...], binder: Binder) -> str:
    return "[" + ", ".join(binder.store(name, value) for name, value in captures) + "]"


def _targets(temps: Tuple[str, ...], star: "int | None") -> str:
    parts = [("*" + t) if i == star else t for i, t in enumerate(temps)]
    text = ", ".join(parts)
    return text + "," if len(parts) == 1 else text


def _clauses(steps: Tuple[Step, ...], names: Names) -> List[str]:
    out: List[str] = []
    for step in steps:
        if isinstance(step, Let):
            out.append(f"for {step.temp} in ({step.expr},)")
        elif isinstance(step, Unpack):
            out.append(f"for {_targets(step.temps, step.star)} in ({step.source},)")
        elif isinstance(step, Check):
            out.append(f"if {step.expr}")
        else:
            out.append(_alternatives_clause(step, names))
    return out


def _alternatives_clause(step: Alternatives, names: Names) -> str:
    if not step.outputs:
        return (
            f"if ({' or '.join(_branch_truth(b.steps, names) for b in step.branches)})"
        )
    lists = []
    for branch in step.branches:
        values = "(" + ", ".join(branch.values) + ",)"
        if not branch.steps:
            lists.append(f"[{values}]")
            continue
        clauses = " ".join(_clauses(branch.steps, names))
        lists.append(f"[{values} for {names.temp('z')} in (0,) {clauses}]")
    targets = "(" + ", ".join(step.outputs) + ",)"
    return f"for {targets} in ({' or '.join(lists)} or ())"


def _branch_truth(steps: Tuple[Step, ...], names: Names) -> str:
    if not steps:
        return "True"
    if all(isinstance(s, Check) for s in steps):
        return "(" + " and ".join(s.expr for s in steps) + ")"  # type: ignore[union-attr]
    return f"[0 for {names.temp('z')} in (0,) {' '.join(_clauses(steps, names))}]"


def _let(binder: Binder, temp: str, value: str) -> str:
    binder.stored.append(temp)
    return binder.let(temp, value)


def _chain(steps: Tuple[Step, ...], names: Names, binder: Binder) -> List[str]:
    out: List[str] = []
    for step in steps:
        if isinstance(step, Let):
            out.append(_let(binder, step.temp, step.expr))
        elif isinstance(step, Unpack):
            out.extend(_unpack_chain(step, names, binder))
        elif isinstance(step, Check):
            out.append(f"({step.expr})")
        else:
            out.append(_alternatives_chain(step, names, binder))
    return out


def _unpack_chain(step: Unpack, names: Names, binder: Binder) -> List[str]:
    # Iterate once, exactly as ``a, *b, c = s`` does (same errors), inside a
    # comprehension whose variables vanish; then name each element.
    items = names.temp("items")
    elements = "(" + ", ".join(step.temps) + ",)"
    unpacked = (
        f"[{elements} for {_targets(step.temps, step.star)} in ({step.source},)][0]"
    )
    out = [_let(binder, items, unpacked)]
    for i, temp in enumerate(step.temps):
        out.append(_let(binder, temp, f"{items}[{i}]"))
    return out


def _alternatives_chain(step: Alternatives, names: Names, binder: Binder) -> str:
    branches = []
    for branch in step.branches:
        parts = _chain(branch.steps, names, binder)
        if step.outputs:
            stores = ", ".join(
                _let(binder, o, v) for o, v in zip(step.outputs, branch.values)
            )
            parts.append(f"[{stores}]")
        branches.append("(" + (" and ".join(parts) if parts else "True") + ")")
    return "(" + " or ".join(branches) + ")"
