"""Emit a lowered case as one ``if``/``elif`` test expression (source text).

Two shapes, chosen per case:

- *comprehension* (function and module scope, when the pattern needs
  temporaries): ``[0 for s in (subject,) for t in (expr,) if check ...
  if [(x := t)]]``. Every temporary is a comprehension variable, so none is
  left in ``locals()``; captures are assignment expressions, which PEP 572
  binds in the enclosing scope. The list is non-empty exactly when the
  pattern matched.
- *walrus chain* (class bodies, where assignment expressions may not appear
  in comprehensions, and patterns without temporaries):
  ``check and ((t := expr) is t) and ... and [(x := t)]``. Temporaries are
  removed by the caller.

Either way the test has no statement in it, so it fits on the case's line.
"""

from __future__ import annotations

import re
from typing import List, Tuple

from spam_transpile.ir import Alternatives, Check, Let, LoweredPattern, Step, Unpack
from spam_transpile.names import Names


def comprehension_test(pattern: LoweredPattern, root: str, subject: str, names: Names) -> str:
    clauses = [f"for {root} in ({subject},)"]
    clauses.extend(_clauses(pattern.steps, names))
    if pattern.captures:
        clauses.append(f"if {_captures(pattern.captures)}")
    return f"[0 {' '.join(clauses)}]"


def walrus_test(pattern: LoweredPattern, root: str, subject: str, names: Names) -> str:
    parts = _chain(pattern.steps, names)
    if pattern.captures:
        parts.append(_captures(pattern.captures))
    text = " and ".join(parts) if parts else f"[{root}]"
    # The root name is fresh, so a whole-word replacement cannot touch user text.
    return re.sub(rf"\b{re.escape(root)}\b", lambda _: subject, text)


def _captures(captures: Tuple[Tuple[str, str], ...]) -> str:
    return "[" + ", ".join(f"({name} := {value})" for name, value in captures) + "]"


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
        return f"if ({' or '.join(_branch_truth(b.steps, names) for b in step.branches)})"
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


def _chain(steps: Tuple[Step, ...], names: Names) -> List[str]:
    out: List[str] = []
    for step in steps:
        if isinstance(step, Let):
            out.append(f"(({step.temp} := {step.expr}) is {step.temp})")
        elif isinstance(step, Unpack):
            out.extend(_unpack_chain(step, names))
        elif isinstance(step, Check):
            out.append(f"({step.expr})")
        else:
            out.append(_alternatives_chain(step, names))
    return out


def _unpack_chain(step: Unpack, names: Names) -> List[str]:
    # Iterate once, exactly as ``a, *b, c = s`` does (same errors), inside a
    # comprehension whose variables vanish; then name each element.
    items = names.temp("items")
    elements = "(" + ", ".join(step.temps) + ",)"
    out = [
        f"(({items} := [{elements} for {_targets(step.temps, step.star)} in "
        f"({step.source},)][0]) is {items})"
    ]
    for i, temp in enumerate(step.temps):
        out.append(f"(({temp} := {items}[{i}]) is {temp})")
    return out


def _alternatives_chain(step: Alternatives, names: Names) -> str:
    branches = []
    for branch in step.branches:
        parts = _chain(branch.steps, names)
        if step.outputs:
            stores = ", ".join(f"({o} := {v})" for o, v in zip(step.outputs, branch.values))
            parts.append(f"[{stores}]")
        branches.append("(" + (" and ".join(parts) if parts else "True") + ")")
    return "(" + " or ".join(branches) + ")"


WALRUS_TARGET = re.compile(r"\((\w+) :=")


def stored_names(test: str, prefix: str) -> List[str]:
    """Temporaries a walrus chain stores (names starting with ``prefix``)."""
    seen: List[str] = []
    for name in WALRUS_TARGET.findall(test):
        if name.startswith(prefix) and name not in seen:
            seen.append(name)
    return seen
