"""Lower an or-pattern: ``v in (...)`` for int, str and bytes literals,
else the alternatives after their shared checks, with the captures chosen
by the alternative that matched."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

import libcst as cst
from spam_transpile.lowering.ir import (
    ONE_OF,
    TRUE,
    All,
    AnyOf,
    Choice,
    Cond,
    Test,
    Value,
    all_of,
    is_true,
    map_tests,
    tests_in,
)
from spam_transpile.lowering.scopes import capture_names_of

if TYPE_CHECKING:
    from spam_transpile.lowering.lower import Lowering
from spam_transpile.lowering.paths import Bindings, Lowered, Subject, atom, operand
from spam_transpile.lowering.subpatterns import is_number_or_text


def lower_or(low: Lowering, p: cst.MatchOr, v: Subject) -> Lowered:
    literals = [e.pattern for e in p.patterns]
    if all(
        isinstance(e, cst.MatchValue) and _in_is_exact(e.value) for e in literals
    ) and not any(low.apart(e) for e in literals):
        # ``v in (lit, ...)`` tests ``lit is v or lit == v``; CPython tests
        # ``v == lit``. For int, str and bytes literals both give the same
        # answer from the same calls, whatever ``v`` is: those types compare
        # equal only to instances of their own type (an identical object
        # among them), and answer NotImplemented to anything else, which
        # lets ``v``'s own ``__eq__`` decide; a subclass of theirs has its
        # ``__eq__`` called first either way (its reflected method goes
        # first). A float literal is not so: ``1.0 == v`` answers for an int
        # subclass ``v`` without calling its ``__eq__`` (3.9+), so float
        # alternatives are compared one by one below, subject on the left.
        values = tuple(
            operand(low, e.value) for e in literals if isinstance(e, cst.MatchValue)
        )
        text = ", ".join(values)
        test = Test(f"{atom(v.text)} in ({text})", "eq", v.text, (ONE_OF, values))
        return test, []
    lowered = [low.lower(element.pattern, v) for element in p.patterns]
    merged = _one_isinstance(low, lowered, v)
    if merged is not None and all(b == lowered[0][1] for _, b in lowered):
        return merged, list(lowered[0][1])
    # Every alternative binds the same names (checked by validate), except
    # one that always raises (``int(a, b)``) and so never gets to bind.
    names: List[str] = []
    for _, bindings in lowered:
        names += [name for name, _ in bindings if name not in names]
    # CPython stores an or-pattern's captures in the order the first
    # alternative names them, whichever alternative matched (observable
    # where the namespace keeps order: an Enum body's members).
    order: List[str] = capture_names_of(p.patterns[0].pattern)
    names.sort(key=lambda name: order.index(name) if name in order else len(order))
    alternatives = tuple(cond for cond, _ in lowered)
    if any(is_true(cond) for cond in alternatives):
        # An irrefutable alternative: later ones are never tried.
        first = next(i for i, cond in enumerate(alternatives) if is_true(cond))
        lowered = lowered[: first + 1]
        alternatives = alternatives[: first + 1]
    prefix, rests = _common_prefix(alternatives)
    whole = False  # (each alternative written whole: line_fit.py)
    if prefix and _wide_rests(low, rests):
        low.factored_wide = True
        if low.unfactor_wide:
            prefix, rests, whole = [], list(alternatives), True
    if any(is_true(rest) for rest in rests):
        # Once the shared checks held, an alternative with nothing more to
        # check matches: later ones are never tried.
        first = next(i for i, rest in enumerate(rests) if is_true(rest))
        rests, lowered = rests[: first + 1], lowered[: first + 1]
    suffix: List[Cond] = []
    if merged is None and not whole and _bound_alike(lowered, names):
        suffix, rests = _common_suffix(rests)
    if merged is not None:
        # (captures that differ are still chosen by class, below)
        cond: Cond = merged
    elif len(rests) == 1:
        cond = all_of(*prefix, rests[0], *suffix)
    else:
        cond = all_of(*prefix, AnyOf(tuple(rests)), *suffix)
    out: Bindings = []
    for name in names:
        # The bindings are read once the whole pattern matched, so the
        # shared checks held: the choice tests only what differs.
        options = tuple(
            (rest, dict(bindings).get(name, "None"))
            for rest, (_, bindings) in zip(rests, lowered)
        )
        # A type checker reads a value by what the alternative that matched
        # narrowed: one read for all would lose that (``node.value`` of a
        # ``Return(value=AST())`` or of an ``Expr``).
        keep_all = low.typed and any(
            isinstance(value, str) and _reads_into(value, path)
            for test, value in options
            for path in _classes_checked(test)
        )
        # An option reading what the last one reads need not be tested.
        while (
            not keep_all
            and len(options) > 1
            and _value_key(options[-2][1]) == _value_key(options[-1][1])
        ):
            options = options[:-2] + options[-1:]
        keys = {_value_key(value) for _, value in options}
        # The same path in every alternative needs no choice.
        if len(keys) == 1 and not keep_all:
            out.append((name, options[0][1]))
        else:
            out.append((name, Choice(options)))
    return cond, out


def narrows(options: Sequence[Tuple[Cond, Value]]) -> bool:
    """Whether a type checker reads each value of a choice as the
    alternative that matched narrowed it. Each option but the last is
    narrowed by its own test (``x if test else ...``); the last, written as
    the ``else``, only by what the earlier tests leave: so its value must
    not read into what its own test checks the class of, unless each
    earlier test checks one class only (``x.values if isinstance(x,
    BoolOp) else x.elts``, under ``if isinstance(x, (BoolOp, List)):``)."""
    test, value = options[-1]
    if not isinstance(value, str):
        return False
    if not any(_reads_into(value, path) for path in _classes_checked(test)):
        return True
    return all(isinstance(t, Test) and t.kind == "isinstance" for t, _ in options[:-1])


def _classes_checked(cond: Cond) -> List[str]:
    return [t.path for t in tests_in(cond) if t.kind == "isinstance"]


def _reads_into(value: str, path: str) -> bool:
    """``value`` is ``path`` or reads an attribute or item of it."""
    return value == path or value.startswith((path + ".", path + "["))


def _wide_rests(low: Lowering, rests: Sequence[Cond]) -> bool:
    """Whether an alternative, after the checks the others share with it,
    is wider than the readable layout writes one at its limit: each is then
    written whole, which black splits (line_fit.py)."""
    from spam_transpile.lowering.emit import render_cond

    width = low.alternative_width
    return width is not None and any(
        len(render_cond(rest, readable=True)) > width for rest in rests
    )


def _bound_alike(lowered: Sequence[Lowered], names: Sequence[str]) -> bool:
    """Every alternative binds each name to the same value: none is
    chosen by which alternative matched."""
    return all(
        len({_value_key(dict(bindings).get(name, "None")) for _, bindings in lowered})
        == 1
        for name in names
    )


def _common_suffix(rests: Sequence[Cond]) -> Tuple[List[Cond], List[Cond]]:
    """The checks every alternative ends with (each keeping one of its
    own), and what each has before them: ``["add", a, b] | ["add", a, b,
    _]`` is ``(len(v) == 3 or len(v) == 4) and v[0] == "add"``. Once one
    alternative's own checks held, the shared ones answer for the others
    too: the same reads of the same subject (PEP 634 leaves how often a
    pattern reads an item or compares to the implementation)."""
    parts = [list(r.parts) if isinstance(r, All) else [r] for r in rests]
    suffix: List[Cond] = []
    while (
        all(len(p) > 1 and isinstance(p[-1], Test) for p in parts)
        and len({p[-1].expr for p in parts}) == 1  # type: ignore[union-attr]
    ):
        suffix.insert(0, parts[0][-1])
        for p in parts:
            p.pop()
    return suffix, [all_of(*p) for p in parts]


def _common_prefix(alternatives: Sequence[Cond]) -> Tuple[List[Cond], List[Cond]]:
    """The checks every alternative starts with, and what each has after them."""
    parts = [list(a.parts) if isinstance(a, All) else [a] for a in alternatives]
    prefix: List[Cond] = []
    while (
        all(p and isinstance(p[0], Test) for p in parts)
        and len({p[0].expr for p in parts}) == 1  # type: ignore[union-attr]
    ):
        prefix.append(parts[0][0])
        for p in parts:
            p.pop(0)
    return prefix, [all_of(*p) if p else TRUE for p in parts]


# Choices longer than this (rendered) are stored by the alternatives instead.
_LONG_CHOICES = 160


def stores_in_last_alternatives(
    cond: Cond, bindings: Bindings, typed: bool = False
) -> Lowered:
    """An or-pattern checked last stores its captures as each alternative
    matches (nothing can fail after it), instead of choosing the values by
    testing the alternatives again: shorter and faster for big ones, and
    (``typed``) where a type checker would not narrow the choice's options
    as the alternatives did."""
    from spam_transpile.lowering.emit import render_value

    parts = list(cond.parts) if isinstance(cond, All) else [cond]
    last = parts[-1] if parts else None
    if not isinstance(last, AnyOf) or last.stores:
        return cond, bindings
    chosen = [
        (name, value)
        for name, value in bindings
        if isinstance(value, Choice) and _per_alternative(value, last.alternatives)
    ]
    long = sum(len(render_value(_measured(v))) for _, v in chosen) >= _LONG_CHOICES
    followed = all(narrows(value.options) for _, value in chosen)  # type: ignore
    if not chosen or not (long or typed and not followed):
        return cond, bindings
    if chosen != bindings[: len(chosen)]:
        # Stored first, they would come before captures CPython stores
        # before them (``(g, ([a, b] | (b, a)))``).
        return cond, bindings
    stores = tuple(
        tuple(
            (name, _option(value, i)) for name, value in chosen  # type: ignore[arg-type]
        )
        for i in range(len(last.alternatives))
    )
    parts[-1] = AnyOf(last.alternatives, stores)
    kept = [(name, value) for name, value in bindings if (name, value) not in chosen]
    return all_of(*parts), kept


def _measured(value: Value) -> Value:
    """``value`` with each sequence check spelled with one exact type, as
    when :data:`_LONG_CHOICES` was chosen: how big a choice is should not
    change with how many exact types a check names first."""
    if isinstance(value, str):
        return value

    def short(test: Test) -> Test:
        if test.kind != "kind" or test.fact != "sequence":
            return test
        return replace(
            test, expr=f"type({test.path}) is list or kind({test.path}) == 1"
        )

    return Choice(
        tuple((map_tests(cond, short), _measured(v)) for cond, v in value.options)
    )


def _per_alternative(choice: Choice, alternatives: Tuple[Cond, ...]) -> bool:
    """Whether ``choice`` tests the ``alternatives`` in order; its last option
    may stand for the last few (``lower_or`` merges options reading the same
    value)."""
    conds = tuple(c for c, _ in choice.options)
    return (
        len(conds) <= len(alternatives)
        and conds[:-1] == alternatives[: len(conds) - 1]
        and conds[-1] == alternatives[-1]
    )


def _option(choice: Choice, alternative: int) -> Value:
    return choice.options[min(alternative, len(choice.options) - 1)][1]


def _in_is_exact(node: cst.BaseExpression) -> bool:
    """An int, str or bytes literal (see ``lower_or``)."""
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
        return isinstance(node, cst.Integer)
    return isinstance(node, cst.Integer) or (
        is_number_or_text(node) and not isinstance(node, cst.Float)
    )


def _value_key(value: Value) -> str:
    return value if isinstance(value, str) else repr(value)


def _one_isinstance(
    low: Lowering, lowered: Sequence[Lowered], v: Subject
) -> Optional[Cond]:
    """Readable layout: ``int() | float()`` as ``isinstance(v, (int,
    float))``, as a person writes it; only for classes named as they are
    (none checked at run time, which CPython does only when it gets there)
    and alternatives that test nothing more (what they capture may differ:
    ``ast.List(elts=x) | ast.Tuple(elts=x)``)."""
    if not low.readable or len(lowered) < 2:
        return None
    classes: List[str] = []
    for cond, bindings in lowered:
        if (
            not isinstance(cond, Test)
            or cond.kind != "isinstance"
            or cond.path != v.text
            or not isinstance(cond.fact, str)
            or not cond.fact.replace(".", "").replace("_", "").isalnum()
        ):
            return None
        classes.append(cond.fact)
    text = f"{low.b('isinstance')}({v.text}, ({', '.join(classes)}))"
    return Test(text, "isinstance", v.text, f"({', '.join(classes)})")
