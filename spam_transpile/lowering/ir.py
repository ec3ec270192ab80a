"""The intermediate form one ``case`` is lowered to, before any code is emitted.

A case becomes a flat list of steps, run in order, each over Python source
text (expressions are kept as text: they are pasted, never evaluated here):

- ``Let`` evaluates an expression once and names the result (a temporary),
- ``Unpack`` iterates a sequence once into temporaries, as ``a, *b, c = s``,
- ``Check`` continues only while its expression is truthy,
- ``Alternatives`` is an or-pattern: the first branch whose steps all pass
  supplies the values of the names the or-pattern captures.

Captures are not steps: CPython stores them only once the whole pattern has
matched, so they are collected apart and emitted after the last step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple, Union


@dataclass(frozen=True)
class Let:
    #: the temporary's name
    temp: str
    #: the expression whose value it holds
    expr: str


@dataclass(frozen=True)
class Unpack:
    #: the sequence to iterate (a name or temporary)
    source: str
    #: one temporary per element, in order
    temps: Tuple[str, ...]
    #: index in ``temps`` of the starred element (a list), if any
    star: Union[int, None]


@dataclass(frozen=True)
class Check:
    #: a boolean expression; the pattern fails where it is falsy
    expr: str


@dataclass(frozen=True)
class Branch:
    #: steps of this alternative
    steps: Tuple["Step", ...]
    #: the value of each captured name, in ``Alternatives.outputs`` order
    values: Tuple[str, ...]


@dataclass(frozen=True)
class Alternatives:
    branches: Tuple[Branch, ...]
    #: temporaries that receive the winning branch's ``values``
    outputs: Tuple[str, ...]


Step = Union[Let, Unpack, Check, Alternatives]


@dataclass(frozen=True)
class LoweredPattern:
    steps: Tuple[Step, ...]
    #: (user name, expression holding its value), stored after all steps pass
    captures: Tuple[Tuple[str, str], ...]


def introduces_temps(steps: Tuple[Step, ...]) -> bool:
    """True if emitting ``steps`` needs a temporary name."""
    for step in steps:
        if isinstance(step, (Let, Unpack)):
            return True
        if isinstance(step, Alternatives):
            if step.outputs or any(introduces_temps(b.steps) for b in step.branches):
                return True
    return False


def dump(pattern: LoweredPattern) -> str:
    """A stable text form, one step a line, for tests and debugging."""
    lines: list[str] = []
    _dump_steps(pattern.steps, lines, "")
    for name, expr in pattern.captures:
        lines.append(f"bind {name} = {expr}")
    return "\n".join(lines)


def _dump_steps(steps: Tuple[Step, ...], lines: list[str], indent: str) -> None:
    for step in steps:
        if isinstance(step, Let):
            lines.append(f"{indent}let {step.temp} = {step.expr}")
        elif isinstance(step, Unpack):
            targets = [
                ("*" + t) if i == step.star else t for i, t in enumerate(step.temps)
            ]
            lines.append(f"{indent}unpack {', '.join(targets)} = {step.source}")
        elif isinstance(step, Check):
            lines.append(f"{indent}check {step.expr}")
        else:
            lines.append(f"{indent}first of -> {', '.join(step.outputs) or '()'}")
            for branch in step.branches:
                lines.append(f"{indent}  branch -> ({', '.join(branch.values)})")
                _dump_steps(branch.steps, lines, indent + "    ")
