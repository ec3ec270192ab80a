"""Lower a mapping pattern: the kind check, then one ``get`` per key, in
the order ``match_keys`` in CPython's ceval.c looks them up."""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

import libcst as cst
from spam_transpile.lowering.scopes import capture_names_of
from spam_transpile.lowering.ir import RestCopy, Cond, Test, all_of

if TYPE_CHECKING:
    from spam_transpile.lowering.lower import Lowering
from spam_transpile.lowering.paths import (
    Bindings,
    Lowered,
    Subject,
    atom,
    kind_test,
    len_test,
    tuple_display,
)
from spam_transpile.lowering.subpatterns import (
    is_literal_key,
    literal_test,
    may_raise,
    needs_sentinel,
    rejects_none,
)


def lower_mapping(low: Lowering, p: cst.MatchMapping, v: Subject) -> Lowered:
    tests: List[Cond] = [kind_test(low, v, "mapping")]
    elements = list(p.elements)
    dynamic = not all(is_literal_key(e.key) for e in elements)
    if dynamic:
        # CPython checks ``len(s) >= #keys`` before its duplicate-key check,
        # so a short mapping never raises. With literal keys only, the
        # lookups decide alone (PEP 634 leaves len() calls unspecified).
        tests.append(len_test(low, v, ">=", len(elements)))
    keys = [low.expr(element.key) for element in elements]
    missing = "" if low.readable else low.helper("MISSING")
    get = f"{atom(v.text)}.get"
    bindings: Bindings = []
    values: List[Tuple[cst.MatchMappingElement, Subject]] = []
    #: per value read: where its key's ``in`` test stands, where its class
    #: check may take the key's place (:func:`_checked_by_get`)
    by_get: Dict[int, int] = {}
    for i, (key, element) in enumerate(zip(keys, elements)):
        if dynamic and i:
            # match_keys() in ceval.c checks each key against the earlier
            # ones just before looking it up (ValueError on a repeat).
            earlier = "".join(f"{k}, " for k in keys[:i])
            tests.append(
                Test(f"{low.helper('fresh')}({key}, ({earlier}))", "raise", v.text)
            )
        # CPython looks every key up, then matches the sub-patterns. Folding
        # this key's lookup into its sub-pattern's test moves that test before
        # the later duplicate-key checks and the lookup after the earlier
        # sub-patterns: only where none of those can raise.
        # (Kept where the sub-pattern is on a line of its own: its check
        # then sits on that line, and only a ``get`` that raises, which
        # CPython calls on the mapping's line, is reported there.)
        fold = not (dynamic and i < len(elements) - 1) and not may_raise(
            low, [e.pattern for e in elements[:i]]
        )
        read = f"{get}({key}, {missing})"
        literal = (
            literal_test(low, element.pattern, read, f"{get}({key})")
            if fold and not (low.readable and needs_sentinel(element.pattern))
            else None
        )
        if literal is not None:
            # The sentinel equals no literal: one test checks both.
            tests.append(literal)
            continue
        if fold and not low.readable and rejects_none(low, element.pattern):
            # ``get`` returns None for a missing key, which the sub-pattern
            # rejects as it would reject the missing key.
            values.append((element, Subject(f"{get}({key})", missing_reads_none=True)))
        elif low.readable:
            # As a person writes it: ``in``, then the item (CPython calls
            # ``get``: README, Known limits).
            if _may_check_by_get(low, element) and fold:
                by_get[len(values)] = len(tests)
            tests.append(Test(f"{key} in {v.text}", "key", v.text, key))
            values.append((element, Subject(f"{atom(v.text)}[{key}]")))
        else:
            tests.append(Test(f"{read} is not {missing}", "key", v.text, key))
            values.append((element, Subject(f"{get}({key})")))
    for at, (element, value) in enumerate(values):
        cond, inner = low.lower(element.pattern, value)
        checked = (
            _checked_by_get(low, cond, value, get, element) if at in by_get else None
        )
        if checked is not None:
            tests[by_get[at]] = checked
        else:
            tests.append(cond)
        bindings.extend(inner)
    if p.rest is not None:
        listed = tuple_display(keys)
        rest: str
        if low.readable and not dynamic:
            # ``dict(v)`` without the keys, as CPython makes it; a literal
            # key needs no name the comprehension cannot see (in a class
            # body), whose first iterable is read where the match is.
            copy = f"{low.b('dict')}({v.text})"
            size = f"{low.b('len')}({v.text})" if _distinct_strings(keys) else ""
            rest = RestCopy.of(_rest_without(copy, listed), copy, tuple(keys), size)
        else:
            rest = f"{low.helper('rest')}({v.text}, {listed})"
        bindings.append((p.rest.value, rest))
    return all_of(*tests), bindings


def _may_check_by_get(low: Lowering, element: cst.MatchMappingElement) -> bool:
    """Where the mapping's values are typed ``Any``, the sub-pattern rejects
    None, and its captures are its case's own (see lower.untyped_mappings)."""
    untyped = low.untyped_mappings
    if untyped is None or not rejects_none(low, element.pattern):
        return False
    return not untyped & set(capture_names_of(element.pattern))


def _checked_by_get(
    low: Lowering,
    cond: Cond,
    value: Subject,
    get: str,
    element: cst.MatchMappingElement,
) -> Optional[Test]:
    """``isinstance(event.get("name"), str)`` for ``"name" in event`` and
    ``isinstance(event["name"], str)``, where the sub-pattern is that one
    class check and rejects None (a missing key reads None): CPython
    calls ``get`` too. Only where the mapping's values are typed ``Any``
    (``low.untyped_mappings``): a type checker narrows ``event["name"]``
    on the check, not a call; the captures still read ``event["name"]``."""
    if not (isinstance(cond, Test) and cond.kind == "isinstance") or cond.readable:
        return None
    if cond.path != value.text or not cond.expr.startswith(f"{low.b('isinstance')}("):
        return None
    key = low.expr(element.key)
    text = f"{low.b('isinstance')}({get}({key}), {cond.fact})"
    return Test(text, "isinstance", value.text, cond.fact)


def _distinct_strings(keys: Sequence[str]) -> bool:
    """Whether the key texts are string literals, no two equal."""
    values = []
    for key in keys:
        try:
            values.append(ast.literal_eval(key))
        except (ValueError, SyntaxError):
            return False
    return all(isinstance(v, str) for v in values) and len(set(values)) == len(values)


def _rest_without(copy: str, listed: str) -> str:
    """A ``**rest`` capture in the readable layout: ``copy`` (``dict(v)``,
    as CPython makes it) without the pattern's keys, in a comprehension
    whose variables shadow no name ``copy`` or the keys read."""
    if listed == "()":
        return copy
    used = set(re.findall(r"[A-Za-z_]\w*", copy + listed))
    key, value = next(
        pair
        for pair in (("key", "value"), ("k", "v"), ("key_", "value_"))
        if not used & set(pair)
    )
    return (
        f"{{{key}: {value} for {key}, {value} in {copy}.items()"
        f" if {key} not in {listed}}}"
    )
