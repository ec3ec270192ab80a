"""The readable layout reads a declared field where the body reads its capture.

``case BinOp(op, left, right): return apply(op, evaluate(left), ...)`` on a
frozen dataclass is written as a person writes it: ``return apply(expr.op,
evaluate(expr.left), ...)``, with no ``op, left, right = expr.op, ...`` line
first. So is a capture of the subject itself: ``case str(text): return
text.strip()`` becomes ``return value.strip()``.

The body reads the value again where it read the capture, so this is done
only where nothing can tell the difference:

- the value is the subject, or a chain of fields no instance can rebind (a
  frozen dataclass's, a ``NamedTuple``'s: :attr:`.KnownClass.immutable`)
  read from it; the subject is a local name of the function's, the user's
  (not a temporary of ours), which no nested scope rebinds and neither the
  case's guard nor its body binds;
- the capture is no variable anything else sees: in a function that does
  not read its frame, read only in this case (the other cases that capture
  it bind it first), not ``global`` or ``nonlocal``
  (:func:`.guard_values.used_only_where_captured`); the body never binds or
  deletes it, and reads it at most :data:`MOST_READS` times, each in the
  function's own scope (a list, set or dict comprehension runs there and
  then; a generator expression only its first iterable);
- the guard, if any, already reads the value where it is (:mod:`.guard_values`),
  and the body holds no match statement (its code is lowered text by now).

A class that redefines a declared field as a property, or an object whose
frozen field is set with ``object.__setattr__``, could read differently
(README, Known limits: declarations are trusted).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import (
    Callable,
    Collection,
    Dict,
    FrozenSet,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
)

import libcst as cst

from spam_transpile.lowering.facts import KnownClass
from spam_transpile.lowering.guard_values import (
    GuardReadingValues,
    Substitute,
    used_only_where_captured,
)
from spam_transpile.lowering.ir import LoweredPattern
from spam_transpile.lowering.runtime import MATCH_SELF_TYPES
from spam_transpile.lowering.scopes import bound_in, stable_locals
from spam_transpile.syntax.cstwalk import children, descendants

__all__ = [
    "MOST_READS",
    "ClassLookup",
    "Reader",
    "case_inlined",
    "field_paths",
    "inline_in",
    "inlined_captures",
    "without_captures",
    "without_inlined",
]

#: a capture read more often than this keeps its name: the name then says
#: more than the repeated ``subject.field``
MOST_READS = 3


@dataclass(frozen=True)
class ClassLookup:
    """What the module knows of the classes its patterns name."""

    known: Callable[[cst.BaseExpression], Optional[KnownClass]]
    #: how the module spells a builtin (a name it rebinds is not one)
    builtin: Callable[[str], str]


@dataclass(frozen=True)
class Reader:
    """How the cases of one match statement read the subject, and what is
    known of the classes they name."""

    function: cst.FunctionDef
    original: cst.Match
    #: the user's local name the cases read the subject by (None for a
    #: temporary of ours)
    subject: Optional[str]
    #: for a tuple subject, those of its elements (None for ours)
    elements: Optional[Sequence[Optional[str]]]
    classes: ClassLookup
    #: the function's locals no nested scope rebinds (one walk per match)
    stable: FrozenSet[str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "stable", stable_locals(self.function))


def inlined_captures(
    reader: Reader,
    lowered: Sequence[LoweredPattern],
    guards: Mapping[int, GuardReadingValues],
) -> Dict[int, Dict[str, str]]:
    """Per case of the match, the captures its body reads as the values
    they hold, each with the text it reads instead."""
    found: Dict[int, Dict[str, str]] = {}
    for index, (case, pattern) in enumerate(zip(reader.original.cases, lowered)):
        plan = guards.get(index)
        if case.guard is not None and plan is None:
            continue  # its captures are stored before the guard runs
        stored = plan.stored if plan is not None else ()
        chosen = case_inlined(reader, case, case.pattern, pattern, stored)
        if chosen:
            found[index] = chosen
    return found


def case_inlined(
    reader: Reader,
    case: cst.MatchCase,
    spelled: cst.MatchPattern,
    pattern: LoweredPattern,
    stored: Sequence[str] = (),
) -> Dict[str, str]:
    """The captures ``case`` (of the match, in the function) binds where
    ``spelled`` (its pattern, or one alternative of it), lowered as
    ``pattern``, matched, that its body reads as the values they hold;
    ``stored``: those its guard needs stored."""
    if any(isinstance(node, cst.Match) for node in descendants(case.body)):
        return {}
    stable = reader.stable
    values = {name: value for name, value in pattern.bindings}
    rebound = bound_in(case.body) | (bound_in(case.guard) if case.guard else set())
    chosen: Dict[str, str] = {}
    found = _subject_paths(spelled, reader.subject, reader.elements, reader.classes)
    for name, path in found.items():
        root = path.split(".", 1)[0]
        if (
            values.get(name) != path
            or name in stored
            or name in rebound
            or root not in stable
            or root in rebound
        ):
            continue
        reads = _reads_in_own_scope(case.body, name)
        if reads is None or reads > MOST_READS:
            continue
        if used_only_where_captured(
            reader.function, reader.original, frozenset({name})
        ):
            chosen[name] = path
    return chosen


def without_inlined(
    lowered: Sequence[LoweredPattern], inlined: Mapping[int, Mapping[str, str]]
) -> List[LoweredPattern]:
    """The cases with no assignment of the captures their bodies inline."""
    return [
        without_captures(pattern, inlined[i]) if i in inlined else pattern
        for i, pattern in enumerate(lowered)
    ]


def without_captures(pattern: LoweredPattern, names: Collection[str]) -> LoweredPattern:
    """``pattern`` assigning none of ``names``."""
    kept = tuple((n, v) for n, v in pattern.bindings if n not in names)
    return LoweredPattern(pattern.cond, kept)


def inline_in(body: cst.BaseSuite, values: Mapping[str, str]) -> cst.BaseSuite:
    """``body`` reading ``values`` where it read the captures."""
    return body.visit(Substitute(dict(values)))  # type: ignore[return-value]


def _subject_paths(
    pattern: cst.MatchPattern,
    subject: Optional[str],
    elements: Optional[Sequence[Optional[str]]],
    classes: ClassLookup,
) -> Dict[str, str]:
    """The captures of ``pattern`` that hold the subject (or an element of
    a tuple subject) or a chain of immutable fields of it, each with the
    text that reads it."""
    if elements is None:
        return field_paths(pattern, subject, classes)
    if not isinstance(pattern, cst.MatchSequence) or len(pattern.patterns) != len(
        elements
    ):
        return {}
    found: Dict[str, str] = {}
    for element, name in zip(pattern.patterns, elements):
        if isinstance(element, cst.MatchStar):
            return {}
        found.update(field_paths(element.value, name, classes))
    return found


def field_paths(
    pattern: cst.MatchPattern, path: Optional[str], classes: ClassLookup
) -> Dict[str, str]:
    """The captures of ``pattern``, matched against what ``path`` reads
    (None: what no text reads again), that hold that value or a chain of
    immutable fields of it."""
    if path is None:
        return {}
    if isinstance(pattern, cst.MatchAs):
        inner = pattern.pattern
        found = {} if inner is None else field_paths(inner, path, classes)
        if pattern.name is not None:
            found[pattern.name.value] = path
        return found
    if isinstance(pattern, cst.MatchOr):
        options = [field_paths(o.pattern, path, classes) for o in pattern.patterns]
        return {
            name: read
            for name, read in options[0].items()
            if all(option.get(name) == read for option in options[1:])
        }
    if isinstance(pattern, cst.MatchClass):
        return _class_field_paths(pattern, path, classes)
    return {}


def _class_field_paths(
    pattern: cst.MatchClass, path: str, classes: ClassLookup
) -> Dict[str, str]:
    positional = [arg.value for arg in pattern.patterns]
    cls = pattern.cls
    if (
        isinstance(cls, cst.Name)
        and cls.value in MATCH_SELF_TYPES
        and classes.builtin(cls.value) == cls.value
    ):
        # ``str(text)`` captures the subject itself
        if len(positional) == 1:
            return field_paths(positional[0], path, classes)
        return {}
    known = classes.known(cls)
    if known is None or not known.immutable:
        return {}
    named = list(zip(known.match_args or (), positional))
    if len(named) < len(positional):
        return {}
    named += [(kw.key.value, kw.pattern) for kw in pattern.kwds]
    found: Dict[str, str] = {}
    for attribute, inner in named:
        if attribute in known.immutable:
            found.update(field_paths(inner, f"{path}.{attribute}", classes))
    return found


def _reads_in_own_scope(body: cst.CSTNode, name: str) -> Optional[int]:
    """How many times ``body`` reads the variable ``name``, where each read
    is in the function's own scope (see the module's docstring); None where
    one is not, or a nested scope names it at all."""
    reads = 0
    for node, own in _names(body, True):
        if node.value != name:
            continue
        if not own:
            return None
        reads += 1
    return reads


def _names(node: cst.CSTNode, own: bool) -> Iterator[Tuple[cst.Name, bool]]:
    """The variable names within ``node`` (not ``obj.attribute`` nor
    ``keyword=``), each with whether it is in the function's own scope."""
    if isinstance(node, cst.Name):
        yield node, own
        return
    if isinstance(node, cst.Attribute):
        yield from _names(node.value, own)
        return
    if isinstance(node, cst.Arg):
        yield from _names(node.value, own)
        return
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        for child in children(node):
            yield from _names(child, False)
        return
    if isinstance(node, cst.GeneratorExp):
        # its first iterable is read where the expression stands; the rest
        # runs whenever the generator is advanced
        first = node.for_in.iter
        yield from _names(first, own)
        read_first = {id(first)} | {id(child) for child in descendants(first)}
        for child in descendants(node):
            if id(child) not in read_first and isinstance(child, cst.Name):
                yield child, False
        return
    if isinstance(node, cst.CompFor):
        # a comprehension's own variable: no read of the function's
        for target in descendants(node.target):
            if isinstance(target, cst.Name):
                yield target, False
        parts: List[cst.CSTNode] = [node.iter, *node.ifs]
        if node.inner_for_in is not None:
            parts.append(node.inner_for_in)
        for part in parts:
            yield from _names(part, own)
        return
    for child in children(node):
        yield from _names(child, own)
